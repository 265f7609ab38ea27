"""A pay table priced on a wheel of another kind, or Roulette Rage on a wheel whose red and black counts
differ, is refused with the file, the wheel and the reason (it said 'outcome probabilities sum to 0.0,
not 1', or priced Rage with the red share for runs of both colours)."""

import re
from pathlib import Path

import pytest

from rngcert.equipment import paytables as pt
from rngcert.equipment import wheel as W
from rngcert.errors import EquipmentError


@pytest.mark.parametrize("game, wheel", [("money-wheel", "european"), ("roulette", "money-wheel-52")])
def test_pay_table_on_a_wheel_of_another_kind(cli, game, wheel):
    res = cli("house-edge", game, "-e", wheel)
    assert res.exit_code == 4 and f"{wheel!r}" in res.output and "sum to" not in res.output


def test_rage_on_a_wheel_with_unequal_red_and_black_is_refused(tmp_path):
    text = (Path(W.__file__).parent / "data" / "european.toml").read_text(encoding="utf-8").replace('id = "european"', 'id = "lab-17"')
    text = re.sub(r'red = \[\s*"1", ', "red = [", text)  # 17 red, 19 black
    f = tmp_path / "lab-17.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(EquipmentError, match=r"lab-17.*17 red.*19 black"):
        pt.house_edges(pt.load_paytable("roulette-rage-minimum-odds"), W.load_wheel(f))
