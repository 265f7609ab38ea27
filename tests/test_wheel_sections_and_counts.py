"""A money-wheel file with both ``sections`` and ``[segment_counts]``: the counts were ignored without a
word (a file saying G is on 2 sections while its arrangement has 1 was certified as the arrangement)."""

from pathlib import Path

import pytest

from rngcert.equipment import wheel as W
from rngcert.errors import EquipmentError

PACKAGED = Path(W.__file__).parent / "data" / "money-wheel-52.toml"
COUNTS = {"A": 24, "B": 12, "C": 8, "D": 4, "E": 2, "F": 1, "G": 1}


def _lab(tmp_path, counts: dict) -> Path:
    text = PACKAGED.read_text(encoding="utf-8").replace('id = "money-wheel-52"', 'id = "lab-m"')
    text += "\n[segment_counts]\n" + "".join(f"{s} = {c}\n" for s, c in counts.items())
    f = tmp_path / "lab-m.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_counts_that_contradict_the_sections_are_refused(tmp_path, cli):
    f = _lab(tmp_path, COUNTS | {"G": 2})
    with pytest.raises(EquipmentError, match=r"lab-m\.toml: segment_counts.*G.*2.*sections.*1"):
        W.load_wheel(f)
    res = cli("equipment", f)
    assert res.exit_code == 4 and "segment_counts" in res.output


def test_counts_that_agree_with_the_sections_are_accepted(tmp_path):
    w = W.load_wheel(_lab(tmp_path, COUNTS))
    assert dict(zip(w.symbols, w.symbol_counts)) == COUNTS and w.k == 52
