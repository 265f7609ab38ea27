"""A roulette pay table's ``zero`` pockets (rule 3.3 b: half back on zero for even-money bets) must be
the zero(s) of the wheel it is priced on; a table naming a numbered pocket as its zero was priced
silently (black 1/74 with half back on 5, red 1/37 losing whole on the real zero)."""

from fractions import Fraction
from pathlib import Path

import pytest

from rngcert.equipment import paytables as pt
from rngcert.errors import EquipmentError

PACKAGED = Path(pt.__file__).parent / "paytables" / "roulette-single-zero.toml"


def _lab_table(tmp_path, zero: str) -> Path:
    text = PACKAGED.read_text(encoding="utf-8").replace('id = "roulette-single-zero"', 'id = "lab-zero"')
    text = text.replace('zero = ["0"]', f"zero = {zero}")
    f = tmp_path / "lab.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_zero_that_is_not_the_wheels_zero_is_refused(tmp_path, cli):
    f = _lab_table(tmp_path, '["5"]')
    with pytest.raises(EquipmentError, match=r"lab\.toml.*zero.*'5'.*green"):
        pt.house_edges(pt.load_paytable(f))
    res = cli("house-edge", "roulette", "-p", f)
    assert res.exit_code == 4 and "zero" in res.output and "'5'" in res.output


def test_the_wheels_own_zero_is_priced(tmp_path):
    edges = pt.house_edges(pt.load_paytable(_lab_table(tmp_path, '["0"]')))
    assert edges["red"] == Fraction(1, 74) and edges["straight-up"] == Fraction(1, 37)
