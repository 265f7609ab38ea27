"""A table on which no test of the battery could run (every row void) said "Statistical finding: no test rejects
family-wise at alpha = 0.01", "all 0 applicable test(s) without anomalies" and "0 applicable tests without anomalies":
sentences that read as if tests had run and found nothing. It now says that no test could run."""

from __future__ import annotations

import json


def test_a_table_without_a_test_says_none_ran(tmp_path, cli):
    log = tmp_path / "voids.csv"
    log.write_text("result,void\n17,true\n5,true\n", encoding="utf-8")
    out = tmp_path / "r"
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--out", str(out))
    assert r.exit_code == 11, r.output
    assert "    no test could run; 23 not applicable" in r.stdout
    assert "no test rejects" not in r.stdout and "all 0 applicable" not in r.stdout
    (folder,) = list(out.iterdir())
    b = json.loads((folder / "report.json").read_text(encoding="utf-8"))["tables"][0]["battery"]
    assert b["tests_applicable"] == 0
    assert b["two_lines"]["statistical"] == "Statistical finding: none: no test of the battery could run on these data (see the reasons)."
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "No test could run; 23 not applicable" in html and "0 applicable tests without anomalies" not in html
    assert "no test rejects family-wise" not in html
