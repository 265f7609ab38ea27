"""The data period is printed with its zone. report.json's ``period`` holds UTC times (a timestamp without a zone
read as UTC, as a note says) written without an offset, and the terminal and the HTML printed them so: "period:
2026-01-01T00:00:00 to 2026-01-10T06:12:40" of a log whose every timestamp ends in Z reads as local time."""

from __future__ import annotations

import json


def test_the_period_says_utc(tmp_path, cli):
    log = tmp_path / "s.csv"
    assert cli("simulate", "wheel", "--spins", "300", "--seed", "1", "--out", str(log)).exit_code == 0
    assert log.read_text(encoding="utf-8").splitlines()[1].split(",")[1] == "2026-01-01T00:00:00Z"
    out = tmp_path / "r"
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--out", str(out))
    (folder,) = list(out.iterdir())
    period = json.loads((folder / "report.json").read_text(encoding="utf-8"))["period"]
    assert period == {"first": "2026-01-01T00:00:00", "last": "2026-01-01T03:19:20"}
    assert "  period: 2026-01-01T00:00:00 to 2026-01-01T03:19:20 (UTC)\n" in r.stdout
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "<th>period</th><td>2026-01-01T00:00:00 to 2026-01-01T03:19:20 (UTC)</td>" in html
    assert "<th>period</th><td>2026-01-01T00:00:00 to 2026-01-01T03:19:20</td>" not in html
