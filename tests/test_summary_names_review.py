"""The terminal's list of tables cuts a table id longer than its column with "…": it printed the first 36 characters
bare, so the live-dealer log's "(unnamed slingshot, added 2021-05-19)" read "(unnamed slingshot, added 2021-05-19",
a name no table has, with nothing to say it was cut."""

from __future__ import annotations

import numpy as np

LONG = "(unnamed slingshot, added 2021-05-19)"


def test_a_long_table_id_is_cut_with_an_ellipsis(tmp_path, cli):
    x = np.random.default_rng(1).integers(0, 37, 400)
    rows = [f"{LONG if i < 200 else 'short'},{v}" for i, v in enumerate(x)]
    log = tmp_path / "two.csv"
    log.write_text('table,result\n' + "\n".join(f'"{r.rsplit(",", 1)[0]}",{r.rsplit(",", 1)[1]}' for r in rows) + "\n", encoding="utf-8")
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--out", str(tmp_path / "r"))
    assert r.exit_code == 11, r.output
    listed = r.stdout.split("tables (2):\n", 1)[1].splitlines()[:2]
    assert any(ln.startswith("  (unnamed slingshot, added…") for ln in listed), listed
    assert not any(ln.startswith("  (unnamed slingshot, added 2021-05-19 ") for ln in listed), listed
    assert any(ln.startswith("  short ") for ln in listed), listed
