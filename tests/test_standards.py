"""Certification standards as data (issue 23): packaged and lab TOML standards, per-clause results,
the power gate of PASS, the SUSPECT level that must be looser than alpha, the calibration that
belongs to its run, and the two lines (statistical finding, practical edge)."""

from __future__ import annotations

import json

import pytest

from rngcert.battery.standard import StandardError, evaluate, load_standard, packaged, parse_standard
from rngcert.battery.wheel import WHEEL, battery_fingerprint, calibration, calibration_line, run_fingerprint
from rngcert.cli import EXIT
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

EU = load_wheel("european")
PACKAGED = ("rngcert-default", "uniformity", "edge", "maryland-comar-36.05.02.17F", "west-virginia-29-22B-909", "new-mexico-15.1.7.13")
WHEEL_STANDARDS = ("rngcert-default", "uniformity", "edge", "west-virginia-29-22B-909", "new-mexico-15.1.7.13")


def log_file(tmp_path, n, bias=WheelBias(), seed=1, name="sim.csv", table="SIM-1", **kw):
    sim = simulate_spins(EU, n, stream(seed, "test-standards"), bias=bias, **kw)
    p = tmp_path / name
    write_spin_log(p, EU, sim, table=table)
    return p


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("std")
    return {"fair": log_file(d, 20000, seed=2, name="fair.csv"),
            "biased": log_file(d, 20000, bias=WheelBias(pockets=((17, 1.35),)), seed=3, name="biased.csv")}


def results(report) -> dict:
    return {c["id"]: c["result"] for c in report["standard"]["results"] if c["for_equipment"]}


def test_every_packaged_standard_loads_and_cites_its_source():
    assert set(PACKAGED) <= set(packaged())
    for name in PACKAGED:
        s = load_standard(name)
        assert s.id == name and s.reference and s.rule and s.clauses
        assert all(c.reference for c in s.clauses)
    assert "(COMAR) 36.05.02.17 F" in load_standard("maryland-comar-36.05.02.17F").reference
    assert "29-22B-909" in load_standard("west-virginia-29-22B-909").reference


@pytest.mark.parametrize("name", WHEEL_STANDARDS)
def test_per_clause_result_on_a_fair_and_a_planted_bias_log(logs, name):
    fair = certify_log([logs["fair"]], EU, seed=1, n_resamples=199, figures=False, standard=name).report
    biased = certify_log([logs["biased"]], EU, seed=1, n_resamples=199, figures=False, standard=name).report
    rf, rb = results(fair), results(biased)
    assert fair["standard"]["id"] == name and rf and rb
    # fair: no FAIL clause is broken (a per-test standard may rarely see a finding; not at this seed)
    fail_clauses = [c["id"] for c in fair["standard"]["results"] if c["for_equipment"] and c["rejection"] == "FAIL"]
    assert all(rf[c] == "met" for c in fail_clauses), rf
    assert fair["verdict"] in ("PASS", "SUSPECT")
    # planted bias of +35% on pocket 17: the clause that decides is not met and the verdict FAILs
    assert biased["verdict"] == "FAIL", rb
    assert any(v == "not met" for v in rb.values())
    expected_decider = {"rngcert-default": "statistics", "uniformity": "U1", "edge": "E1", "west-virginia-29-22B-909": "chi-square",
                        "new-mexico-15.1.7.13": "chi-square"}[name]
    assert rb[expected_decider] == "not met"
    t = biased["tables"][0]["battery"]
    assert t["two_lines"]["statistical"].startswith("Statistical finding:")
    assert t["two_lines"]["practical_edge"].startswith("Practical edge: best bet")


def test_the_default_standard_keeps_the_battery_verdict(logs):
    for key in ("fair", "biased"):
        rep = certify_log([logs[key]], EU, seed=1, n_resamples=199, figures=False).report
        assert rep["standard"]["id"] == "rngcert-default"
        assert "battery_verdict" not in rep["tables"][0]["battery"]  # the clauses restate the battery's own rule


def test_edge_standard_fails_only_on_a_demonstrated_edge():
    """The same rejections, two standards: a statistical rejection without a demonstrated edge is a
    finding under 'edge', a FAIL under 'uniformity' (evaluated on one battery, no data needed)."""
    battery = {"verdict": "FAIL", "alpha": 0.01, "tests": [
        {"name": "pocket_chisquare", "applicable": True, "pvalue": 1e-6, "holm_weight": 2.0},
        {"name": "runs_colour", "applicable": True, "pvalue": 0.4, "holm_weight": 1.0}]}
    no_edge = lambda lv: {"demonstrated": False, "bet": "straight-up 17"}  # noqa: E731
    edge = evaluate(load_standard("edge"), "wheel", battery, alpha=0.01, edge=no_edge)
    uni = evaluate(load_standard("uniformity"), "wheel", battery, alpha=0.01, edge=no_edge)
    assert edge["verdict"] == "SUSPECT" and uni["verdict"] == "FAIL"
    yes = evaluate(load_standard("edge"), "wheel", battery, alpha=0.01, edge=lambda lv: {"demonstrated": True, "bet": "straight-up 17"})
    assert yes["verdict"] == "FAIL"


def test_maryland_clause_on_a_shuffler_sample():
    std = load_standard("maryland-comar-36.05.02.17F")
    ok = {"verdict": "PASS", "tests": [{"name": "position_chisquare", "applicable": True, "pvalue": 0.2}]}
    bad = {"verdict": "PASS", "tests": [{"name": "position_chisquare", "applicable": True, "pvalue": 0.03}]}
    assert evaluate(std, "shoe:machine", ok, alpha=0.01)["verdict"] == "PASS"
    r = evaluate(std, "shoe:machine", bad, alpha=0.01)  # 0.03 < 0.05: the regulation's 95% level, per test
    assert r["verdict"] == "FAIL" and r["clauses"][0]["result"] == "not met"
    none = {"verdict": "INCONCLUSIVE", "tests": [{"name": "position_chisquare", "applicable": False}]}
    assert evaluate(std, "shoe:manual", none, alpha=0.01)["clauses"][0]["result"] == "not applicable"


def test_a_standard_that_does_not_apply_is_a_usage_error(tmp_path, cli, logs):
    r = cli("certify", logs["fair"], "--standard", "maryland-comar-36.05.02.17F", "--out", tmp_path)
    assert r.exit_code == 2 and "does not apply to `rngcert certify`" in r.output
    r = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 1000, "--standard", "edge", "--out", tmp_path)
    assert r.exit_code == 2 and "no clause for bits" in r.output
    r = cli("watch", logs["fair"], "--standard", "edge", "--no-record")
    assert r.exit_code == 2 and "does not apply to `rngcert watch`" in r.output


def test_thin_wheel_log_is_power_gated_inconclusive_with_the_spins_needed(tmp_path, cli):
    thin = log_file(tmp_path, 600, seed=5, name="thin.csv", table="thin")
    cert = certify_log([thin], EU, seed=1, n_resamples=199, figures=False)
    b = cert.report["tables"][0]["battery"]
    assert cert.verdict == "INCONCLUSIVE"
    assert any("declared minimum bias of +50%" in r and "spins are needed" in r for r in b["reasons"])
    assert b["power"]["spins_needed_for_required_bias"] > 600
    assert cert.report["certified"]["declared"]["declared minimum bias"] == "+50% on one pocket (standard rngcert-default)"
    # a multi-table summary flags the thin table (INCONCLUSIVE, with its reason) beside a table with enough spins
    big = log_file(tmp_path, 8000, seed=6, name="big.csv", table="big")
    r = cli("certify", thin, big, "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "r")
    assert r.exit_code == EXIT["INCONCLUSIVE"]
    line = next(ln for ln in r.output.splitlines() if ln.strip().startswith("thin"))
    assert "INCONCLUSIVE" in line and "minimum bias" in line
    # a lab may declare a larger minimum effect: the same thin table then carries a verdict
    assert certify_log([thin], EU, seed=1, n_resamples=199, figures=False, required_bias=3.0).verdict in ("PASS", "SUSPECT")


def test_suspect_level_must_be_looser_than_alpha(tmp_path, cli, logs):
    own = tmp_path / "fixed.toml"
    own.write_text((load_standard("uniformity").path and _packaged_text("uniformity")).replace('suspect_level = "5*alpha"', "suspect_level = 0.05")
                   .replace('id = "uniformity"', 'id = "lab-fixed"'))  # a lab's file has its own id
    r = cli("certify", logs["fair"], "--alpha", 0.1, "--standard", own, "--out", tmp_path)
    assert r.exit_code == 2 and "must be looser than alpha" in r.output
    r = cli("certify", logs["fair"], "--alpha", 0.25, "--out", tmp_path)  # the default's 5*alpha = 1.25
    assert r.exit_code == 2 and "SUSPECT level" in r.output
    rep = certify_log([logs["fair"]], EU, seed=1, n_resamples=199, figures=False, alpha=0.02).report
    assert rep["policy"]["suspect_level"] == pytest.approx(0.1) and rep["standard"]["suspect_level"] == pytest.approx(0.1)


def _packaged_text(name: str) -> str:
    from importlib import resources

    return (resources.files("rngcert.battery") / "standards" / f"{name}.toml").read_text(encoding="utf-8")


def test_a_labs_own_standard_file(tmp_path, cli, logs):
    own = tmp_path / "lab-7.toml"
    own.write_text("""
id = "lab-7"
title = "Lab 7 house rule"
reference = "Lab 7 quality manual, section 4.2"
summary = "FAIL when the pocket chi-square or the sector scan rejects at 0.001, each on its own."
rule = "Two named tests decide."
suspect_level = "5*alpha"
[minimum_effect]
wheel_single_pocket_bias = 0.4
[[clause]]
id = "4.2a"
title = "Pocket frequencies and sectors"
applies_to = ["wheel"]
tests = ["pocket_chisquare", "sector_scan"]
level = 0.001
correction = "per-test"
rejection = "FAIL"
reference = "Lab 7 manual 4.2(a)"
""")
    r = cli("certify", logs["biased"], "--standard", own, "--seed", 1, "--resamples", 1999, "--no-plots", "--out", tmp_path / "r", "--json")
    d = json.loads(r.output)
    assert d["standard"]["id"] == "lab-7" and not d["standard"]["packaged"] and d["standard"]["source"] == str(own)
    assert d["standard"]["results"][0]["result"] == "not met" and r.exit_code == EXIT["FAIL"]
    assert d["certified"]["declared"]["declared minimum bias"] == "+40% on one pocket (standard lab-7)"
    html = next((tmp_path / "r").glob("*/report.html")).read_text()
    assert "Standard: Lab 7 house rule" in html and "4.2a: Pocket frequencies and sectors" in html and "not met" in html
    assert d["rerun"]["standard"] == str(own)


@pytest.mark.parametrize("text, key, why", [
    ("id = [", "", "not valid TOML"),
    ('id = "x"\ntitle = "t"\nreference = "r"\nsummary = "s"\nrule = "r"\ncolour = 1\n[[clause]]\n', "colour", "unknown key"),
    ('id = "x"\ntitle = "t"\nreference = "r"\nsummary = "s"\nrule = "r"\n[[clause]]\nid = "a"\ntitle = "a"\nreference = "r"\n'
     'applies_to = ["wheel"]\ntests = ["pocket_chi"]\nlevel = 0.01\ncorrection = "per-test"\nrejection = "FAIL"\n', "clause[0].tests", "unknown test 'pocket_chi'"),
    ('id = "x"\ntitle = "t"\nreference = "r"\nsummary = "s"\nrule = "r"\n[[clause]]\nid = "a"\ntitle = "a"\nreference = "r"\n'
     'applies_to = ["wheel"]\ntests = ["pocket_chisquare"]\nlevel = 1.5\ncorrection = "per-test"\nrejection = "FAIL"\n', "clause[0].level", "a number in (0, 1)"),
    ('id = "x"\ntitle = "t"\nreference = "r"\nsummary = "s"\nrule = "r"\nsuspect_level = "0.5*alpha"\n[[clause]]\n', "suspect_level", "must be above 1"),
    ('id = "x"\ntitle = "t"\nreference = "r"\nsummary = "s"\nrule = "r"\n[[clause]]\nid = "a"\ntitle = "a"\nreference = "r"\n'
     'applies_to = ["wheel"]\ntests = ["*"]\nlevel = "alpha"\ncorrection = "bonferroni"\nrejection = "FAIL"\n', "clause[0].correction", "one of per-test"),
])
def test_invalid_standard_files_name_file_key_and_reason(tmp_path, cli, logs, text, key, why):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(StandardError) as e:
        parse_standard(text, str(p))
    msg = str(e.value)
    assert msg.startswith(str(p)) and why in msg and (not key or f"key {key!r}" in msg)
    r = cli("certify", logs["fair"], "--standard", p, "--out", tmp_path)
    assert r.exit_code == 4 and str(p) in r.output  # like an equipment error
    r = cli("certify", logs["fair"], "--standard", "no-such-standard", "--out", tmp_path)
    assert r.exit_code == 4 and "packaged standards are" in r.output


# ----------------------------------------------------------------------------- calibration fingerprint
def test_calibration_belongs_to_the_current_battery():
    """Fails when the wheel battery's specs (names, weights, needs, parameters) change and the
    calibration (rngcert/battery/calibration.json) was not re-measured: re-run
    benchmarks/calibrate_verdict.py --write-package."""
    cal = calibration()["wheel"]
    assert cal, "no calibration measured"
    for n, entry in cal.items():
        assert entry["fingerprint"]["battery"] == battery_fingerprint(WHEEL), (
            f"calibration at {n} spins was measured on another battery: re-measure it (benchmarks/calibrate_verdict.py --write-package)")


def test_calibration_is_printed_only_for_its_configuration(tmp_path, cli):
    # measured (benchmarks/calibrate_verdict.py): 4 dealers, release pockets and alternating rotor direction, as the
    # bundled log, and plain logs, both at the default R = 9,999
    fp = run_fingerprint(alpha=0.01, suspect_level=0.05, n_resamples=9999, dealers=True, release=True, direction=True)
    assert calibration_line(20000, fp)["calibrated"]
    for change, word in ((dict(n_resamples=1999), "Monte Carlo replicates"), (dict(alpha=0.02, suspect_level=0.1), "alpha"),
                         (dict(dealers=False), "dealer ids"), (dict(direction=False), "rotor directions")):
        other = {**fp, **change}
        c = calibration_line(20000, other)
        assert not c["calibrated"] and c["statement"].startswith("Not calibrated for this configuration") and word in c["statement"]
    # end to end: a plain log (no dealers, no release pockets) at R = 199, a configuration never measured
    p = log_file(tmp_path, 20000, seed=8)
    r = cli("certify", p, "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "r")
    assert r.exit_code in (0, 10), r.output
    html = next((tmp_path / "r").glob("*/report.html")).read_text()
    assert "not calibrated for this configuration" in html.lower() and "Measured on 1,000" not in html


# ----------------------------------------------------------------------------- shoes and bits
def test_maryland_and_the_default_on_shuffler_procedures(tmp_path, cli):
    """Per-clause results on shoes: an ideal machine shuffle meets COMAR 36.05.02.17 F's chi-square at
    95%; two riffles do not. The practical edge line names the trackers (none for a game-less machine)."""
    from test_cli_shuffle import IDEAL, TWO_RIFFLES

    ideal, bad = tmp_path / "ideal.toml", tmp_path / "two.toml"
    ideal.write_text(IDEAL)
    bad.write_text(TWO_RIFFLES)
    md = "maryland-comar-36.05.02.17F"
    # seed 3: at 95% per sample, each of the two samples (steady state, first shoe) of a fair machine fails 5% of the time
    r = cli("shuffle", "certify", ideal, "--shoes", 1000, "--seed", 3, "--no-plots", "--json", "--out", tmp_path / "r", "--standard", md)
    d = json.loads(r.output)
    assert d["standard"]["id"] == md and d["standard"]["results"][0]["result"] == "met" and r.exit_code == EXIT["PASS"]
    two = d["tables"][0]["battery"]["two_lines"]
    assert two["statistical"].startswith("Statistical finding:") and two["practical_edge"].startswith("Practical edge:")
    r = cli("shuffle", "certify", bad, "--shoes", 300, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r", "--standard", md)
    d = json.loads(r.output)
    assert d["standard"]["results"][0]["result"] == "not met" and r.exit_code == EXIT["FAIL"]
    r = cli("shuffle", "certify", bad, "--shoes", 300, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(r.output)
    assert d["standard"]["id"] == "rngcert-default" and d["standard"]["kind"] == "shoe:machine"
    assert {c["id"]: c["result"] for c in d["standard"]["results"]}["statistics"] == "not met"


def test_bits_carry_the_standard_and_no_practical_edge(tmp_path, cli):
    r = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 20000, "--seed", 1, "--no-plots", "--json", "--out", tmp_path, "--standard", "uniformity")
    d = json.loads(r.output)
    assert d["standard"]["id"] == "uniformity" and d["standard"]["kind"] == "bits"
    assert d["tables"][0]["battery"]["two_lines"]["practical_edge"].startswith("Practical edge: not applicable")
    assert r.exit_code == EXIT[d["verdict"]]


def test_every_packaged_standard_names_only_battery_tests():
    """Packaged standards are loaded without the test-name check (it imports every battery); this is that check."""
    from importlib import resources

    from rngcert.battery.standard import packaged, parse_standard

    for name in packaged():
        text = (resources.files("rngcert.battery") / "standards" / f"{name}.toml").read_text(encoding="utf-8")
        assert parse_standard(text, name, packaged_file=False).id == name


def test_inconclusive_battery_with_every_clause_met_says_why_c22():
    """c22/c02: the battery is INCONCLUSIVE (a power gate, tests that could not run) while every clause that
    ran is met: the standard's reason and its terminal line must say so, not list only 'met' clauses."""
    from rngcert.battery.standard import summarise
    from rngcert.pipeline.standards import terminal_lines

    std = load_standard("maryland-comar-36.05.02.17F")
    gate = "too few shoes (20; about 44,477 needed) to exclude the minimum tracker edge"
    b = {"verdict": "INCONCLUSIVE", "reasons": [gate], "tests": [{"name": "position_chisquare", "applicable": True, "pvalue": 0.2}]}
    ev = evaluate(std, "shoe:machine", b, alpha=0.01)
    assert ev["verdict"] == "INCONCLUSIVE" and all(c["result"] != "inconclusive" for c in ev["clauses"])
    assert gate in ev["reasons"][0]
    s = summarise(std, [{"table": "T", "verdict": ev["verdict"], "clauses": ev["clauses"]}], alpha=0.01, kind="shoe:machine")
    line = terminal_lines({"standard": s, "tables": []})[0]
    assert line.startswith(f"standard: {std.id}: INCONCLUSIVE") and "battery INCONCLUSIVE" in line
    assert "the clauses met do not make a PASS" in line


def test_inconclusive_with_no_clause_judged_does_not_speak_of_clauses_met():
    """Trial (break2): the settings-session capture (0 spins, 1 void) printed "clauses: edge not applicable ·
    statistics not applicable · looser-level not applicable · battery INCONCLUSIVE (the clauses met do not
    make a PASS ...)": no clause was met."""
    from rngcert.pipeline.standards import terminal_lines

    s = {"id": "rngcert-default", "verdict": "INCONCLUSIVE",
         "results": [{"id": c, "result": "not applicable"} for c in ("edge", "statistics", "looser-level")]}
    line = terminal_lines({"standard": s, "tables": []})[0]
    assert "battery INCONCLUSIVE (no clause could be judged: see the reasons)" in line
    assert "clauses met" not in line


def test_findings_and_steps_restated_when_the_standard_changes_a_fail():
    """A dealer signature under --standard edge: the battery FAILs, the standard says SUSPECT. The report
    said "FAIL: dealer D3 ..." and "Take the wheel out of play" beside the verdict SUSPECT."""
    from rngcert.pipeline.standards import _restate, _restate_steps

    keys = ["FAIL: dealer D3, cw: the ball landed 36-38 pockets past the release pocket.", "No test rejects: x."]
    steps = ["Take the wheel out of play until it has been inspected; after repair, re-test with the number of spins stated above."]
    out = _restate(keys, "FAIL", "SUSPECT", "edge")
    assert out[0].startswith("SUSPECT under standard edge") and "dealer D3" in out[0] and not any(k.startswith("FAIL") for k in out)
    assert _restate(keys, "FAIL", "INCONCLUSIVE", "x")[0].startswith("Would be FAIL")
    assert _restate(keys, "FAIL", "FAIL", "x") == keys
    st = _restate_steps(steps, "SUSPECT", "edge")
    assert st[0].startswith("Not a failure under standard edge") and not any("out of play" in s for s in st)
    assert _restate_steps(steps, "FAIL", "edge") == steps


def test_apply_standard_restates_each_tests_sentence_and_grade():
    from rngcert.pipeline.standards import apply_standard

    t = {"name": "dealer_signature", "applicable": True, "pvalue": 1e-6, "holm_weight": 1.0, "grade": "FAIL (rejected by Holm)",
         "plain": "FAIL: dealer D3, cw: the ball landed 36-38 pockets past the release pocket.", "rejected_familywise": True}
    rep = {"verdict": "FAIL", "tables": [{"table": "T", "n": 20000, "key_findings": [t["plain"]],
                                           "next_steps": ["Take the wheel out of play until it has been inspected."],
                                           "battery": {"verdict": "FAIL", "reasons": [], "alpha": 0.01, "tests": [t]}}]}
    apply_standard(rep, "edge", kind="wheel", alpha=0.01)
    tab = rep["tables"][0]
    assert rep["verdict"] == "SUSPECT" and tab["battery"]["battery_verdict"] == "FAIL"
    x = tab["battery"]["tests"][0]
    assert x["grade"].startswith("rejected by Holm (not a FAIL") and x["plain"].startswith("SUSPECT under standard edge")
    assert not any(k.startswith("FAIL") for k in tab["key_findings"]) and "out of play" not in " ".join(tab["next_steps"])


def test_policy_text_of_pass_matches_the_power_gate():
    """The PASS rule printed in every report said 'with low power, PASS means no evidence', while a sample too
    small for the declared minimum effect is INCONCLUSIVE (DESIGN §4)."""
    from rngcert.battery import POLICY_TEXT

    assert "low power, PASS" not in POLICY_TEXT["PASS"] and "INCONCLUSIVE" in POLICY_TEXT["PASS"]
