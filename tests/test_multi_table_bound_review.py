"""A multi-table certify's note states each table's chance of a false FAIL under the report's standard. Under West
Virginia's (six tests each at 0.01, per test) it said "each table's verdict controls its own family-wise error at alpha
= 0.01 ... with 17 fair tables the chance that at least one is FAIL is up to 16%" (the live-dealer log): the bound is
0.06 a table, up to 65% over 17 (``audit --all``'s group statement already used it)."""

from __future__ import annotations

import json

import numpy as np


def _notes(cli, tmp_path, *extra) -> list[str]:
    x = np.random.default_rng(2).integers(0, 37, 800)
    log = tmp_path / "two.csv"
    log.write_text("table,result\n" + "".join(f"{'A' if i < 400 else 'B'},{v}\n" for i, v in enumerate(x)), encoding="utf-8")
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--json", "--out", str(tmp_path / ("r" + "".join(extra))), *extra)
    return [n for n in json.loads(r.stdout)["notes"] if "tables certified separately" in n]


def test_the_multi_table_bound_is_the_standard_one(tmp_path, cli):
    (n,) = _notes(cli, tmp_path)
    assert "each table's verdict controls its own family-wise error at alpha = 0.01" in n and "is up to 2%" in n, n
    (n,) = _notes(cli, tmp_path, "--standard", "west-virginia-29-22B-909")
    assert "under standard west-virginia-29-22B-909 a fair table's verdict is FAIL with probability up to 0.06" in n, n
    assert "with 2 fair tables the chance that at least one is FAIL is up to 12%" in n, n
