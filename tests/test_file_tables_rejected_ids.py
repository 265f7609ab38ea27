"""A row the reader cannot split, in a file without a table column, counts its spin id in that file's table, named as
the file's table is when two files share a name (``d1/log``, ``d2/log``): the two rules together."""

from __future__ import annotations

import pytest
from _support import compact_read

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel


def _log(path, bad_line: int | None, n: int = 200, skip=()):
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["spin_id,result"]
    for i in range(1, n + 1):
        if i in skip:
            continue
        rows.append(f"{i},5,extra" if i == bad_line else f"{i},{(i * 7) % 37}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("exact", [False, True], ids=["compact", "exact"])
def test_unsplit_row_id_present_in_its_own_same_name_table(tmp_path, monkeypatch, exact):
    a = _log(tmp_path / "d1" / "log.csv", bad_line=100)  # spin 100 present (its row rejected: 3 fields)
    b = _log(tmp_path / "d2" / "log.csv", bad_line=None, skip={100})  # spin 100 missing: a real gap
    with compact_read(monkeypatch, exact=exact):
        log = read_spin_log([a, b], load_wheel("european"))
    assert sorted(log.tables) == ["d1/log", "d2/log"]
    assert not any("missing" in n for n in log.tables["d1/log"].notes), log.tables["d1/log"].notes
    assert any("1 spin_id(s) missing between 1 and 200" in n for n in log.tables["d2/log"].notes), log.tables["d2/log"].notes
