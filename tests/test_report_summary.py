"""The deciding reason first (issue 24, item 2): the banner, summary row and terminal headline of a
FAIL give the finding that made it FAIL, even with a SUSPECT finding from a test earlier in the
battery; findings are ordered FAIL, SUSPECT, INCONCLUSIVE, then the rest; multi-table summaries lead
with the tables that are not PASS and say identical PASS lines once, with the count and the list."""

from __future__ import annotations

import copy
import re

import pytest

from rngcert.battery.core import decide
from rngcert.battery.findings import order_findings, table_findings
from rngcert.cli._common import summary_text
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.report import text
from rngcert.report.writer import render_html
from rngcert.simulate.sources import generator, seed_sequence
from rngcert.simulate.wheel import simulate_spins, write_spin_log
from rngcert.stats.result import Requirement, TestResult

EU = load_wheel("european")
U = Requirement.UNIFORMITY
LABELS = list(EU.position_space().labels)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    p = tmp_path_factory.mktemp("s") / "fair.csv"
    write_spin_log(p, EU, simulate_spins(EU, 2000, generator("pcg64", seed_sequence(5))))
    # +300% declared: a thin fair table the summary tests need as PASS (the default +50% makes it INCONCLUSIVE)
    return certify_log([p], EU, seed=3, n_resamples=199, required_bias=3.0)


def _fail_with_suspect_beside():
    """A battery whose sector scan (earlier in battery order) is SUSPECT and whose first harmonic FAILs,
    as on the live-dealer table bitcasino-2."""
    arc = {"group": 0, "start": 1, "length": 14, "positions": list(range(1, 15)), "observed": 474.0, "expected": 552.8,
           "relative_excess": -0.1426}
    res = [TestResult("pocket_chisquare", U, 30.0, 36, 0.6, 1461, "asymptotic", {})]
    res += [TestResult("sector_scan", U, 4.25, None, 0.0045, 1461, "monte-carlo, R=9999", {"best_arc": arc})]
    res += [TestResult("first_harmonic", U, 17.0, 2, 1.7e-4, 1461, "asymptotic", {"amplitude": 0.154, "phase_pockets": 24.1})]
    res += [TestResult(f"filler_{i}", U, 1.0, 1, 0.5, 1461, "asymptotic", {}) for i in range(8)]
    out = decide(res, alpha=0.01, suspect_level=0.05)
    assert out.verdict == "FAIL" and out.rejected == ["first_harmonic"] and "sector_scan" in out.suspect_rejected
    return out.to_dict()


def test_fail_banner_gives_the_fail_finding_not_the_suspect_one(single):
    bd = _fail_with_suspect_beside()
    keys, steps = table_findings(bd, n=1461, labels=LABELS, power={})
    assert [k.split(":")[0] for k in keys] == ["FAIL", "SUSPECT"], keys
    assert "lean smoothly towards pocket" in keys[0]
    assert [x["name"] for x in text.flagged(bd)][:2] == ["first_harmonic", "sector_scan"]  # page one's test table, FAIL first
    r = copy.deepcopy(single.report)
    t = r["tables"][0]
    t.update(battery=bd, key_findings=keys, next_steps=steps)
    r["verdict"] = "FAIL"
    assert text.headline(t).startswith("FAIL: results lean")
    html = render_html(r, [[]])
    banner = re.search(r'<div class="banner FAIL" id="verdict">(.*?)</div>', html, re.S).group(1)
    assert "FAIL: results lean" in banner and "SUSPECT" not in banner, banner
    page1 = html[: html.index('id="summary"')]
    assert page1.index("FAIL: results lean") < page1.index("SUSPECT: the 14 neighbouring")
    term = summary_text(r)
    assert term.splitlines()[-1].startswith("VERDICT: FAIL — Results lean"), term  # (the verdict word once)
    kf = term[term.index("key findings:"):]
    assert kf.index("FAIL: results lean") < kf.index("SUSPECT: the 14")


def test_order_findings_deciding_reason_first():
    keys = ["No test rejects: fine.", "SUSPECT: b.", "Data integrity (not a wheel fault): c.", "FAIL: a."]
    assert order_findings(keys, "FAIL") == ["FAIL: a.", "SUSPECT: b.", "Data integrity (not a wheel fault): c.", "No test rejects: fine."]
    keys = ["Would be FAIL, but these data cannot carry a verdict: a.", "No verdict: too few spins."]
    assert order_findings(keys, "INCONCLUSIVE")[0] == "No verdict: too few spins."


def test_multi_table_summary_one_fail_among_many_pass(single):
    """18 tables, one FAIL (the last in report order): the terminal and page one lead with it and
    say the 17 identical PASS lines once, with the count and every name."""
    r = copy.deepcopy(single.report)
    fair = r["tables"][0]
    assert fair["battery"]["verdict"] == "PASS"
    names = [f"T{i:02d}" for i in range(1, 19)]
    r["tables"] = []
    for nm in names[:-1]:
        t = copy.deepcopy(fair)
        t["table"] = nm
        r["tables"].append(t)
    bad = copy.deepcopy(fair)
    bd = _fail_with_suspect_beside()
    keys, steps = table_findings(bd, n=1461, labels=LABELS, power={})
    bad.update(table="T18", battery=bd, key_findings=keys, next_steps=steps)
    r["tables"].append(bad)
    r["verdict"] = "FAIL"
    term = summary_text(r).splitlines()
    assert not any("more in the report" in ln for ln in term)
    i = next(k for k, ln in enumerate(term) if ln.startswith("tables (18):"))
    assert term[i + 1].split()[0] == "T18" and "FAIL" in term[i + 1]
    assert term[i + 2].lstrip().startswith("17 tables PASS") and term[i + 3].split() == [n + "," for n in names[:16]] + [names[16]]
    kf = term.index("key findings:")
    bullets = [ln for ln in term[kf + 1:] if ln.startswith("  - ")]  # a long finding wraps onto indented lines
    assert bullets[0].startswith("  - T18: FAIL: results lean") and bullets[1].startswith("  - T18: SUSPECT")
    assert bullets[2].startswith("  - 17 tables (T01, T02")
    assert term[-1].startswith("VERDICT: FAIL — FAIL is the worst of 18 tables (T18)") and "T18: FAIL: results lean" in term[-1]
    html = render_html(r, [[]] * 18)
    page1 = html[: html.index('<h2>Verdict policy</h2>')]
    items = re.findall(r"<li>(.*?)</li>", page1[page1.index("Key findings"):page1.index("Next steps")], re.S)
    assert len(items) == 3 and "T18" in items[0] and "FAIL: results lean" in items[0]
    assert items[2].startswith("<b>17 tables</b> (T01, T02,") and "T17)" in items[2]
    steps_html = re.findall(r"<li>(.*?)</li>", page1[page1.index("Next steps"):], re.S)
    assert len(steps_html) == 2 and "T18" in steps_html[0]
    summary = html[html.index('id="summary"'):]
    rows = re.findall(r'<tr><td><a href="#t(\d+)">(.*?)</a>', summary)
    assert rows[0][1] == "T18"  # the FAIL row leads the summary table


def _page1(html: str) -> str:
    return html[: html.index("<h2>Verdict policy</h2>")]


@pytest.mark.slow  # about 3.5 s: the 15 SP 800-22 tests on 3 sequences of 100,000 bits
def test_sp800_22_fail_on_a_biased_dump_says_the_share_of_ones():
    """A dump with 50.5% ones: page one and the terminal say '50.50% ones', not only 'monobit proportion'."""
    import numpy as np

    from rngcert.pipeline.certify_bits import certify_streams

    m, n = 3, 100_000
    x = np.zeros(m * n, dtype=np.uint8)
    x[: int(0.505 * m * n)] = 1
    np.random.default_rng(7).shuffle(x)
    r = certify_streams(x.reshape(m, n), source={"path": "dump.bin", "format": "binary", "sha256": "0" * 64, "bits_in_file": m * n},
                        processes=1, figures=False).report
    assert r["verdict"] == "FAIL"
    t = r["tables"][0]
    assert t["key_findings"][0].startswith("FAIL: the bits are 50.50% ones (151,500 of 300,000") and "biased towards ones" in t["key_findings"][0]
    assert t["next_steps"] and "entropy source" in t["next_steps"][0]
    page1 = _page1(render_html(r, [[]]))
    assert "<h2>Key findings</h2>" in page1 and "50.50% ones" in page1 and "<h2>Next steps</h2>" in page1
    assert "50.50% ones" in summary_text(r).splitlines()[-1]


def test_shoe_report_page_one_has_key_findings_and_next_steps():
    """An unshuffled shoe (after = before) FAILs under the uniform standard: page one says why and what to do."""
    import numpy as np

    from rngcert.pipeline.certify_shuffle import certify_shoes

    rng = np.random.default_rng(3)
    before = np.stack([rng.permutation(52) for _ in range(60)]).astype(np.int16)
    after = before.copy()
    after[:, :26] = before[:, 26:]  # a cut, nothing more
    after[:, 26:] = before[:, :26]
    cert = certify_shoes(before, after, decks=1, game=None, subject="cut only", equipment={"id": "test", "name": "a cut", "kind": "shuffle"},
                         inputs=[], seed=1, figures=False, n_resamples=199)
    r = cert.report
    assert r["verdict"] == "FAIL"
    t = r["tables"][0]
    assert t["key_findings"][0].startswith("FAIL: ") and t["next_steps"][0].startswith("Do not use the procedure")
    page1 = _page1(render_html(r, [[]]))
    assert "<h2>Key findings</h2>" in page1 and "<h2>Next steps</h2>" in page1 and "FAIL: " in page1


def test_shoe_findings_name_the_assumed_parameters():
    from rngcert.battery.plain import shoe_findings

    sec = {"table": "steady state", "n": 500, "battery": {"verdict": "PASS", "reasons": [], "tests": []},
           "trackers": [{"name": "baccarat_sequence", "edge": -0.01, "ci95": [-0.02, 0.0], "threshold": 0.0, "beats_threshold": False}]}
    keys, steps = shoe_findings(sec, assumed=["wash intensity", "clump size"])
    assert keys[0].startswith("No test rejects") and "-1.00% of the stake" in keys[0]
    assert any("2 assumed parameter(s) (wash intensity, clump size)" in k for k in keys)
    assert any(s.startswith("Measure the assumed parameters") for s in steps)


def test_shoe_certificate_says_how_many_parameters_are_assumed_and_where(single):
    r = copy.deepcopy(single.report)
    r["parameters"] = [{"name": "decks", "label": "decks", "value": 8, "status": "rule"},
                       {"name": "steps[1].intensity", "label": "wash intensity", "value": 0.15, "status": "assumed"},
                       {"name": "deal.pickup", "label": "pickup order", "value": "banker-first", "status": "assumed"}]
    cert = render_html(r, [[]], certificate=True)
    block = cert[cert.index('id="certificate"'): cert.index("</section>")]
    assert "rests on 2 assumed parameters</b> (wash intensity, pickup order)" in block
    assert "what is measured, what is assumed" in block
    assert "Unit under test:" in block and "not stated in the data" in block and "--subject" in block


def test_audit_all_overview_leads_with_the_fail(single):
    from rngcert.cli._common import audit_overview

    fair = single.report["tables"][0]
    tables = []
    for i in range(1, 12):
        t = copy.deepcopy(fair)
        t["table"] = f"A{i:02d}"
        tables.append(t)
    bd = _fail_with_suspect_beside()
    keys, steps = table_findings(bd, n=1461, labels=LABELS, power={})
    tables[7].update(battery=bd, key_findings=keys, next_steps=steps)
    lines = audit_overview(tables)
    assert lines[0] == "audit of 11 tables: FAIL (1 FAIL, 10 PASS)"
    assert lines[1].startswith("  A08: FAIL — Results lean") and "SUSPECT" not in lines[1]
    assert lines[2].startswith("  10 tables PASS: ") and lines[3].split(", ")[0].strip() == "A01" and "A08" not in lines[3]


def test_bits_findings_for_every_verdict():
    from rngcert.battery.plain import bits_findings

    row = {"name": "nist_runs", "m": 100, "passes": 93, "proportion_ok": False, "uniformity_ok": True}
    sec = {"battery": {"verdict": "SUSPECT", "reasons": [], "tests": []}, "two_level": {"rows": [row]}}
    keys, steps = bits_findings(sec, ones=50_010_000, bits=100_000_000)
    assert keys[0].startswith("SUSPECT: SP 800-22's rules flag runs (93 of 100 sequences pass)") and "Possible causes" in keys[0]
    assert keys[1].startswith("The bits are 50.01% ones (50,010,000 of 100,000,000")  # within the fair range: said, not blamed
    assert steps[0].startswith("Not a failure")
    sec = {"battery": {"verdict": "PASS", "reasons": [], "tests": []}, "two_level": {"rows": []}}
    keys, steps = bits_findings(sec, ones=500, bits=1000)
    assert keys[0].startswith("No test rejects") and "50.00% ones" in keys[1] and steps[0].startswith("Keep testing")
    sec = {"battery": {"verdict": "INCONCLUSIVE", "reasons": ["the stream is too short for nist_rank"], "tests": []}}
    keys, steps = bits_findings(sec)
    assert keys == ["No verdict: the stream is too short for nist_rank."] and steps[0].startswith("Supply a dump")
    zeros = {"battery": {"verdict": "FAIL", "reasons": [], "tests": []}, "two_level": {"rows": []}}
    assert "biased towards zeros" in bits_findings(zeros, ones=4_800, bits=10_000)[0][0]


def test_order_findings_integrity_note_never_the_deciding_reason_c18():
    """c18: a data-integrity note (timestamps against the spin-id order) that did not decide the verdict
    must not stand in the VERDICT line in place of the reason that did."""
    note = "Data integrity (not a wheel fault): the timestamps go back 1 time(s) against the spin-id order."
    keys = [note, "No verdict: 400 spins cannot carry a verdict."]
    assert order_findings(keys, "INCONCLUSIVE")[0] == "No verdict: 400 spins cannot carry a verdict."
    keys = ["No test rejects: the spins are consistent with a fair wheel.", note]
    assert order_findings(keys, "PASS")[0].startswith("No test rejects")
    assert order_findings([note, keys[0]], "PASS")[0].startswith("No test rejects")


def test_shoe_pass_without_trackers_does_not_claim_a_tracker_result_c21():
    """c21 (--decks 1, no game): no tracker ran, so the PASS sentence must not say that none beats the threshold."""
    from rngcert.battery.plain import shoe_findings

    sec = {"table": "all shoes", "n": 20, "battery": {"verdict": "PASS", "reasons": [], "tests": []}, "trackers": []}
    keys, _ = shoe_findings(sec)
    assert keys[0].startswith("No test rejects after Holm in 20 shoes (no tracker ran")
    assert "no tracker beats" not in keys[0]


def test_strongest_rejection_leads_the_findings():
    """A planted direction bias (p = 1e-51) stood behind a lag-9 serial correlation (p = 0.0025) in the VERDICT line,
    because findings followed the battery's test order."""
    bd = {"verdict": "FAIL", "reasons": [], "tests": [
        {"name": "serial_correlation", "applicable": True, "pvalue": 0.0025, "pvalue_holm": 0.03, "rejected_familywise": True,
         "details": {}},
        {"name": "direction_homogeneity", "applicable": True, "pvalue": 2.5e-51, "pvalue_holm": 6e-50, "rejected_familywise": True,
         "details": {"direction": "cw", "outcome": 2, "observed_in_direction": 344, "expected_in_direction": 266}}]}
    keys, _ = table_findings(bd, n=20000, labels=[str(i) for i in range(37)], power={})
    assert keys[0].startswith("FAIL: in cw spins pocket 2 came up 344"), keys
