"""Under a standard other than rngcert-default the HTML's per-table "SUSPECT rule here", its calibration sentence and
the verdict-rule legend are the battery's own rule, and say so. Under West Virginia's standard (each named test at
99%: a fair wheel FAILs about 6% of the time, as its own summary says) the report stated, unqualified, "at most 5% of
fair sources are SUSPECT or FAIL" and "FAIL: some test rejects after the family-wise correction (weighted Holm)"
beside a verdict that no such rule decided."""

from __future__ import annotations

import re

import pytest

WV = "west-virginia-29-22B-909"


def _html(cli, tmp_path, *extra) -> str:
    log = tmp_path / "s.csv"
    if not log.exists():
        assert cli("simulate", "wheel", "--spins", "400", "--seed", "3", "--out", str(log)).exit_code == 0
    out = tmp_path / ("r" + str(len(list(tmp_path.iterdir()))))
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--out", str(out), *extra)
    assert r.exit_code in (0, 10, 11, 12), r.output
    (folder,) = list(out.iterdir())
    return re.sub(r"\s+", " ", (folder / "report.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("standard", [WV, "edge"])
def test_the_battery_rule_is_labelled_under_another_standard(tmp_path, cli, standard):
    h = _html(cli, tmp_path, "--standard", standard)
    own = f"(the verdict under standard {standard} follows its clauses, page one)"
    assert f"SUSPECT rule of the battery's own verdict here {own}: weighted Holm" in h
    assert "SUSPECT rule here:" not in h
    assert f"<b>Calibration.</b> Of the battery's own verdict, not the verdict under standard {standard}: " in h
    assert f"<th>rule of the battery's own verdict {own}</th>" in h


def test_the_default_report_is_unchanged(tmp_path, cli):
    h = _html(cli, tmp_path)
    assert "SUSPECT rule here: weighted Holm" in h and "<th>rule</th>" in h
    assert "<b>Calibration.</b> Of the battery" not in h
