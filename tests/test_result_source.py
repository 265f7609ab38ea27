"""Live result feeds with a second result source (issue 25 item 4): the ARO-001 file certifies end
to end with its 527 rounds, and a camera that fails or disagrees is a data-integrity finding with
counts, never a result."""

import json

import numpy as np
import pytest
from _support import shared_path

from rngcert.collect.feed import detect_feed, feed_definitions, load_feed
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.pipeline.certify_wheel import certify_log

EU = load_wheel("european")
ARO = shared_path("data", "wheel-controller-serial", "live-table-ARO-001-results.log")
HEAD = ("# Serial Port vs IDP Detection Result Comparison Log\n"
        "# Format: [TIMESTAMP] ROUND_ID | SERIAL_RESULT | IDP_RESULT | MATCH_STATUS | NOTES\n")


def _line(i, serial, idp, status="MISMATCH"):
    return f"[2025-11-18 14:{i // 60:02d}:{i % 60:02d}.319] ARO-001-{i:08x}-92d7-43a9-aa7b-53b0e92ae33f | SERIAL: {serial} | IDP: {idp} | {status} | note\n"


def test_the_feed_is_described_by_data_and_detected():
    fd = load_feed("serial-idp-compare")
    assert fd in feed_definitions() and fd.secondary == ["camera"] and fd.source_name("result") == "wheel"
    assert detect_feed(HEAD.encode()) is fd and detect_feed(_line(1, 5, "['5']").encode()) is fd
    assert detect_feed(b"spin_id,result\n1,5\n") is None
    with pytest.raises(InputError):
        load_feed("no-such-feed")


def test_camera_disagreements_and_missing_readings_are_counted(tmp_path):
    rows = [_line(i, i % 37, f"['{i % 37}']", "MATCH") for i in range(200)]
    rows[10] = _line(10, 10, "['11']")  # disagrees
    rows[20] = _line(20, 20, "DETECTION_FAILED")
    rows[30] = _line(30, 30, "['']")
    rows[40] = _line(40, 3, "['x']")  # not a pocket
    rows.insert(50, "garbage line\n")
    p = tmp_path / "feed.log"
    p.write_text(HEAD + "".join(rows))
    log = read_spin_log(p, EU)
    assert log.sources[0].format == "feed:serial-idp-compare" and log.sources[0].accepted == 200
    assert [(r.line, r.reason) for r in log.rejected] == [(53, "not a line of the serial-idp-compare feed")]
    t = log.tables["ARO-001"]
    (c,) = t.source_comparison
    assert (c["rounds"], c["read"], c["agree"], c["disagree"], c["unreadable"]) == (200, 198, 196, 1, 1)
    assert c["no_reading"] == {"detection failed": 1, "empty reading": 1}
    assert c["first_disagreements"] == [{"line": 13, "round": "ARO-001-0000000a-92d7-43a9-aa7b-53b0e92ae33f", "result": "10", "reading": "11"}]
    assert EU.position_space().labels[t.outcomes[10]] == "10"  # the wheel's result is the result
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    tab = cert.report["tables"][0]
    f = [x for x in tab["integrity"]["findings"] if x["name"] == "second_source_camera"]
    assert f and "disagreed in 1" in f[0]["text"] and "line 13: wheel 10, camera 11" in f[0]["text"]
    assert any(k.startswith("Data integrity (not a wheel fault): Second result source") for k in tab["key_findings"])


@pytest.mark.skipif(not ARO.exists(), reason="the shared ARO-001 file is not on this machine")
def test_aro_001_certifies_with_exactly_527_rounds_and_an_honest_verdict(tmp_path):
    cert = certify_log([ARO], EU, seed=1, n_resamples=199, figures=False, required_bias=0.5)
    s = cert.report["inputs"][0]
    assert (s["rows"], s["accepted"], s["void"], s["rejected"]) == (527, 527, 0, 0)
    (tab,) = cert.report["tables"]
    assert tab["table"] == "ARO-001" and tab["n"] == 527
    assert cert.verdict == "INCONCLUSIVE" and any("spins are needed" in r for r in tab["battery"]["reasons"])
    c = tab["integrity"]["findings"][-1]["evidence"]
    assert (c["rounds"], c["read"], c["disagree"]) == (527, 0, 0) and c["no_reading"] == {"empty reading": 360, "detection failed": 167}
    json.dumps(cert.report)  # the report serialises
    # without --min-bias the default standard's +50% applies: 527 spins cannot carry it either (issue 23)
    plain = certify_log([ARO], EU, seed=1, n_resamples=199, figures=False)
    assert plain.verdict == "INCONCLUSIVE" and any("spins are needed" in r for r in plain.report["tables"][0]["battery"]["reasons"])


# ----------------------------------------------------------------------------- a result_source column
SMALL = """spin_id,table,result_source,result
1,T1,wheel,5
1,T1,camera,5
2,T1,wheel,17
2,T1,camera,18
3,T1,wheel,0
3,T1,camera,banana
4,T1,wheel,32
5,T1,camera,7
6,T1,,9
6,T1,display,9
"""


def test_result_source_rows_are_compared_not_used(tmp_path):
    p = tmp_path / "src.csv"
    p.write_text(SMALL)
    log = read_spin_log(p, EU)
    s = log.sources[0]
    assert (s.rows, s.accepted, s.rejected, s.second_source) == (10, 5, 5, 5)
    t = log.tables["T1"]
    assert [EU.position_space().labels[v] for v in t.outcomes] == ["5", "17", "0", "32", "9"]  # the wheel's rows only
    why = {r.line: r.reason for r in log.rejected}
    assert why[5] == "second result source 'camera': read 18 where the wheel shows 17 (line 4); the wheel's result is used"
    assert "not an outcome of this wheel" in why[7] and "no wheel row for this spin_id" in why[9] and "agrees with the wheel" in why[11]
    cam, disp = sorted(t.source_comparison, key=lambda c: c["source"])
    assert (cam["rounds"], cam["read"], cam["agree"], cam["disagree"], cam["unreadable"], cam["without_wheel_result"]) == (5, 3, 1, 1, 1, 1)
    assert cam["first_disagreements"] == [{"line": 5, "round": "2", "result": "17", "reading": "18"}]
    assert (disp["read"], disp["agree"], disp["no_reading"]) == (1, 1, {"no row from this source": 4})
    jl = tmp_path / "src.jsonl"
    rows = [dict(zip(["spin_id", "table", "result_source", "result"], ln.split(","))) for ln in SMALL.splitlines()[1:]]
    jl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    tj = read_spin_log(jl, EU).tables["T1"]
    assert np.array_equal(tj.outcomes, t.outcomes) and sorted(c["disagree"] for c in tj.source_comparison) == [0, 1]
    (tmp_path / "noid.csv").write_text("result_source,result\nwheel,5\ncamera,5\n")
    with pytest.raises(InputError, match="no spin_id column"):
        read_spin_log(tmp_path / "noid.csv", EU)


def test_a_camera_beside_every_spin_is_not_unreadable_data_and_its_disagreements_are_a_finding(tmp_path):
    rng = np.random.default_rng(4)
    n = 1500
    x = rng.integers(0, 37, n)
    cam = x.copy()
    wrong = rng.choice(n, 30, replace=False)
    cam[wrong] = (cam[wrong] + 1) % 37
    lab = EU.position_space().labels
    lines = ["spin_id,result_source,result"] + [f"{i + 1},{src},{lab[v]}" for i in range(n) for src, v in (("wheel", x[i]), ("camera", cam[i]))]
    p = tmp_path / "two.csv"
    p.write_text("\n".join(lines) + "\n")
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    tab = cert.report["tables"][0]
    assert tab["n"] == n and cert.report["inputs"][0]["second_source"] == n
    assert not any("could not be read" in r for r in tab["battery"]["reasons"])  # half the rows are the camera's: not unreadable
    (f,) = [x for x in tab["integrity"]["findings"] if x["name"] == "second_source_camera"]
    assert (f["evidence"]["agree"], f["evidence"]["disagree"]) == (n - 30, 30) and "disagreed in 30" in f["text"]
    # the wheel's results are fair: the camera's errors are not a wheel fault (1,500 spins cannot carry the default +50%:
    # INCONCLUSIVE for power alone, never for the camera)
    assert cert.verdict in ("PASS", "SUSPECT", "INCONCLUSIVE") and all("spins are needed" in r or r.startswith("low power")
                                                                       for r in cert.outcomes[0].reasons if cert.verdict == "INCONCLUSIVE")


def test_a_lab_describes_its_own_feed_in_toml(tmp_path):
    feed = tmp_path / "my-feed.toml"
    feed.write_text("""id = "my-display-feed"
description = "round results with the table display's reading"
detect = '^ROUND '
line = '^ROUND (?P<spin_id>\\d+) (?P<timestamp>\\S+) wheel=(?P<result>\\S*) display=(?P<display>\\S*)$'
[sources.result]
name = "wheel"
[sources.display]
name = "display"
what = "the table's result display"
no_reading = { "-" = "display off" }
""")
    log = tmp_path / "rounds.txt"
    log.write_text("ROUND 1 2026-01-01T00:00:00Z wheel=5 display=5\nROUND 2 2026-01-01T00:01:00Z wheel=17 display=-\n"
                   "ROUND 3 2026-01-01T00:02:00Z wheel=0 display=26\nnoise\n")
    rl = read_spin_log(log, EU, fmt=f"feed:{feed}")
    t = rl.tables["rounds"]
    assert t.n == 3 and [r.line for r in rl.rejected] == [4]
    (c,) = t.source_comparison
    assert (c["source"], c["read"], c["agree"], c["disagree"], c["no_reading"]) == ("display", 2, 1, 1, {"display off": 1})
    with pytest.raises(InputError):
        read_spin_log(log, EU, fmt="feed:nope")
