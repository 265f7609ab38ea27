"""Verdicts a lab can defend (issue 14): precedence, the designed family, SUSPECT, the power of the
verdict, data integrity and findings in words. Cases c03, c04, c14, c15 of ../shared/cases."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import has_shared, shared_file

from rngcert.battery.core import Spec, decide, run_battery
from rngcert.battery.wheel import WHEEL, WHEEL_0_1, WheelData
from rngcert.cli import EXIT, EXIT_INPUT
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log
from rngcert.stats.integrity import boundary_repeats, duplicated_blocks, time_order
from rngcert.stats.multiple import holm
from rngcert.stats.result import Requirement, TestResult

EU = load_wheel("european")
SPACE = EU.position_space()
U = Requirement.UNIFORMITY


def fixed(name, p, w=1.0):
    return Spec(name, lambda d, ctx: TestResult(name, U, 1.0, 1, p, 100, "asymptotic"), U, weight=w)


def log_file(tmp_path, n, bias=WheelBias(), seed=1, name="sim.csv", **kw):
    sim = simulate_spins(EU, n, stream(seed, "test-verdict"), bias=bias, **kw)
    p = tmp_path / name
    write_spin_log(p, EU, sim)
    return p


# ----------------------------------------------------------------------------- precedence
def test_inconclusive_reasons_take_precedence_over_fail():
    out = run_battery([fixed("a", 1e-9)], entropy=1, inconclusive=["15% of rows could not be read"])
    assert out.verdict == "INCONCLUSIVE" and out.overridden == ["a"]
    assert any("could not be read" in r for r in out.reasons) and any("cannot stand" in r for r in out.reasons)


def test_c03_five_spins_is_inconclusive(cli, tmp_path):
    f = shared_file("cases", "c03-five-spins.csv")
    r = cli("certify", f, "--seed", 1, "--no-plots", "--out", tmp_path)
    assert r.exit_code == EXIT["INCONCLUSIVE"], r.output
    assert "too few to certify" in r.output


def test_c04_unreadable_share_is_a_reason_in_report_and_terminal(cli, tmp_path):
    f = shared_file("cases", "c04-fifteen-percent-unreadable.csv")
    r = cli("certify", f, "--seed", 1, "--no-plots", "--json", "--out", tmp_path)
    assert r.exit_code == EXIT["INCONCLUSIVE"]
    rep = json.loads(r.output)
    reasons = rep["tables"][0]["battery"]["reasons"]
    assert any("300 of 2,300 data rows" in x and "could not be read" in x for x in reasons), reasons
    t = cli("certify", f, "--seed", 1, "--no-plots", "--out", tmp_path)
    assert "could not be read" in t.output and "VERDICT: INCONCLUSIVE" in t.output


@pytest.mark.skipif(not has_shared("data", "money-wheel-crazytime", "CleanData.csv"), reason="shared Crazy Time data absent")
def test_c14_crazy_time_without_equipment_names_the_wheel(cli, tmp_path):
    f = shared_file("data", "money-wheel-crazytime", "CleanData.csv")
    r = cli("certify", f, "--column", "result=WheelResult", "--seed", 1, "--no-plots", "--out", tmp_path)
    assert r.exit_code == EXIT["INCONCLUSIVE"], r.output
    assert "look like the crazy-time wheel" in r.output and "--equipment crazy-time" in r.output
    # the tests and the pay table are the wrong wheel's: no player claim, no "would be FAIL, inspect the wheel"
    assert "1561" not in r.output and "Could a player beat this wheel? Not assessed: the pay table of european does not apply" in r.output
    assert "Would be" not in r.output and "inspect the wheel" not in r.output
    # the wrong wheel is the first reason (the unreadable share follows from it)
    assert r.output.split("VERDICT: INCONCLUSIVE — ", 1)[1].startswith("No verdict: the labels look like the crazy-time wheel")


def test_c15_equipment_without_a_log_is_an_error(cli, tmp_path):
    r = cli("certify", "--equipment", "american", "--out", tmp_path)
    assert r.exit_code == EXIT_INPUT and "default log only for the european wheel" in r.output


def test_a_mostly_unreadable_file_in_a_multi_file_run_is_named(tmp_path):
    good = log_file(tmp_path, 8000, name="good.csv")  # enough spins for the default minimum effect (+50% on one pocket)
    bad = tmp_path / "SOURCE.txt"
    bad.write_text("Source: a casino web page\n" + "\n".join(f"row {i} of notes" for i in range(60)) + "\n5 12\n")
    cert = certify_log([good, bad], EU, seed=1, n_resamples=199, figures=False)
    tabs = {t["table"]: t for t in cert.report["tables"]}
    assert tabs["SOURCE"]["battery"]["verdict"] == "INCONCLUSIVE"
    assert any("of SOURCE.txt could not be read" in r for r in tabs["SOURCE"]["battery"]["reasons"])
    assert tabs["SIM-1"]["battery"]["verdict"] in ("PASS", "SUSPECT")  # the good file is judged on its own


# ----------------------------------------------------------------------------- the family
def test_family_has_no_duplicates_and_dealer_tests_need_dealer_data():
    x = np.random.default_rng(1).integers(0, 37, 3000).astype(np.int16)
    names = [s.name for s in WHEEL.members(WheelData(x, SPACE))]
    assert "g_test" not in names and "pocket_binomial_holm" not in names
    out = WHEEL.run(WheelData(x, SPACE), entropy=1, n_resamples=199)
    na = {r.name: r.reason for r in out.results if not r.applicable}
    assert "dealer_signature" in na and "no dealer ids or release pockets" in na["dealer_signature"]
    with_dealers = WHEEL.run(WheelData(x, SPACE, dealer=np.arange(3000) // 50 % 3, dealer_labels=("a", "b", "c")), entropy=1, n_resamples=199)
    assert any(r.name == "dealer_signature" and r.applicable for r in with_dealers.results)
    pc = next(r for r in out.results if r.name == "pocket_chisquare")
    assert "g_statistic" in pc.details  # the G statistic is a detail


def test_weighted_holm_reduces_to_holm_and_controls_the_first_step():
    p = np.array([0.001, 0.02, 0.3, 0.0004])
    r1, a1 = holm(p, 0.01)
    r2, a2 = holm(p, 0.01, weights=np.ones(4))
    assert np.array_equal(r1, r2) and np.allclose(a1, a2)
    w = np.array([2.0, 1.0, 1.0, 2.0])
    _, aw = holm(p, 0.01, weights=w)
    assert aw.min() == pytest.approx(min(w.sum() * p / w))  # first step: p_i <= alpha w_i / W
    with pytest.raises(ValueError):
        holm(p, 0.01, weights=[1, 1, 1, 0])


def test_suspect_is_a_looser_family_wise_rejection():
    specs = [fixed("a", 0.004), *(fixed(f"b{i}", 0.5) for i in range(9))]  # 10 tests: 0.004 * 10 = 0.04
    out = run_battery(specs, entropy=1)
    assert out.verdict == "SUSPECT" and out.suspect_rejected == ["a"] and out.rejected == []
    legacy = run_battery([fixed("a", 0.009), *(fixed(f"b{i}", 0.5) for i in range(20))], entropy=1, suspect_level=None)
    assert legacy.verdict == "SUSPECT"  # the 0.1 rule, kept only for comparison
    assert run_battery([fixed("a", 0.009), *(fixed(f"b{i}", 0.5) for i in range(20))], entropy=1).verdict == "PASS"


def test_adding_a_test_changes_no_other_p_value():
    x = np.random.default_rng(2).integers(0, 37, 4000).astype(np.int16)
    d = WheelData(x, SPACE, dealer=np.arange(4000) // 50 % 2, dealer_labels=("a", "b"))
    base = WHEEL.run(d, entropy=7, n_resamples=199)
    extra = WHEEL.extended(Spec("extra_draws", lambda data, ctx: TestResult("extra_draws", U, ctx.rng.random(), None, 0.5, 1, "x"), U))
    more = extra.run(d, entropy=7, n_resamples=199)
    a = {r.name: r.pvalue for r in base.results if r.applicable}
    b = {r.name: r.pvalue for r in more.results if r.applicable and r.name != "extra_draws"}
    assert a == b


def test_legacy_battery_is_the_0_1_family():
    names = [s.name for s in WHEEL_0_1.members(WheelData(np.zeros(0, dtype=np.int16), SPACE))]
    assert {"g_test", "pocket_binomial_holm", "dealer_signature"} <= set(names) and len(names) == 21


# ----------------------------------------------------------------------------- integrity
def test_boundary_repeats_finds_a_planted_transcription_artefact():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 37, 60000)
    line_start = np.zeros(x.size, bool)
    line_start[::20] = True
    starts = np.flatnonzero(line_start)[1:]
    copy = starts[rng.random(starts.size) < 0.05]  # 5% of line starts repeat the last number of the line before
    x[copy] = x[copy - 1]
    ev = boundary_repeats(x, line_start, 37)
    assert ev["finding"] and ev["boundary"]["relative_excess"] > 1.0
    fair = boundary_repeats(rng.integers(0, 37, 60000), line_start, 37)
    assert not fair["finding"]


def test_duplicated_blocks_and_time_order():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 37, 5000)
    assert duplicated_blocks(x, 37)["repeated_blocks"] == 0
    x[3000:3050] = x[100:150]
    d = duplicated_blocks(x, 37)
    assert d["repeated_blocks"] >= 1 and d["spins_in_copies"] >= 50 and d["first"][0] == (100, 3000)
    t = time_order(np.array([1, 2, 2, 1, 5]))
    assert t == {"steps": 4, "backwards": 1, "repeats": 1, "first_backwards": [3]}


@pytest.mark.slow
@pytest.mark.skipif(not has_shared("data", "roulette-wiesbaden", "spielbank-wiesbaden_t6_190424.txt"), reason="shared Wiesbaden data absent")
def test_wiesbaden_t6_names_the_artefact_and_does_not_fail():
    t5 = shared_file("data", "roulette-wiesbaden", "spielbank-wiesbaden_t5_190424.txt")
    t6 = shared_file("data", "roulette-wiesbaden", "spielbank-wiesbaden_t6_190424.txt")
    cert = certify_log([t5, t6], EU, seed=1, n_resamples=9999, figures=False)
    tabs = {t["table"]: t for t in cert.report["tables"]}
    a, b = tabs["spielbank-wiesbaden_t5_190424"], tabs["spielbank-wiesbaden_t6_190424"]
    assert a["battery"]["verdict"] == "PASS" and not a["integrity"]["findings"]
    assert b["battery"]["verdict"] != "FAIL"
    (f,) = b["integrity"]["findings"]
    assert f["name"] == "repeats_at_line_starts" and "+27.5%" in f["text"] and "+2.3%" in f["text"]
    assert any("Data integrity" in k for k in b["key_findings"])
    tests = {x["name"]: x for x in b["battery"]["tests"]}
    assert not tests["dealer_signature"]["applicable"]  # no dealer data: no signature on the previous result
    assert tests["wheel_distance"]["details"]["pairs_used"] < b["n"] - 1  # within-line pairs only


# ----------------------------------------------------------------------------- findings in words
def test_a_fail_finding_is_a_plain_sentence_with_a_next_step(tmp_path):
    p = log_file(tmp_path, 30000, bias=WheelBias(pockets=((EU.position_space().labels.index("17"), 1.4),)), seed=3)
    cert = certify_log([p], EU, seed=2, n_resamples=999, figures=False)
    t = cert.report["tables"][0]
    assert t["battery"]["verdict"] == "FAIL"
    s = " ".join(t["key_findings"])
    assert "pocket 17 came up" in s and "expected" in s and "Possible causes" in s and "re-test with at least" in s
    assert "Next step: after inspection and repair, re-test with at least" in s  # a FAIL needs no confirmation first
    assert "e+" not in s  # plain decimals
    assert t["next_steps"] and all(x.get("plain") for x in t["battery"]["tests"] if x.get("rejected_familywise"))


# ----------------------------------------------------------------------------- power of the verdict
def test_power_statement_is_the_power_of_the_verdict(tmp_path):
    p = log_file(tmp_path, 20000, seed=4)
    cert = certify_log([p], EU, seed=2, n_resamples=999, figures=False, required_bias=0.05)
    t = cert.report["tables"][0]
    P = t["battery"]["power"]
    assert "battery returns FAIL" in P["statement"] and 0.1 < P["single_pocket"]["effect"] < 0.5
    assert t["battery"]["verdict"] == "INCONCLUSIVE" and any("declared minimum bias" in r for r in t["battery"]["reasons"])


@pytest.mark.slow
@pytest.mark.parametrize("alternative", ["single-pocket", "sector:5"])
def test_fail_rate_at_the_stated_90_percent_point(alternative):
    """At the effect the report states, the real battery FAILs 90% +- 4 points of 200 simulated
    wheels, planted where the statement says (a numbered pocket; the sector starting there)."""
    from rngcert.battery.power import _categories, _levels, _mde, stated_start

    n, reps = 10_000, 200
    x0 = np.random.default_rng(0).integers(0, 37, n).astype(np.int16)
    d0 = WheelData(x0, SPACE)
    probe = WHEEL.run(d0, entropy=0, n_resamples=9999)
    start = stated_start(d0)
    assert SPACE.labels[start] == "32"  # the first numbered pocket after the zero
    cats = _categories(probe, d0, start)
    assert {t for t, _ in cats} == {"outside_colour", "outside_parity", "outside_low_high", "outside_dozen", "outside_column"}
    levels = tuple(sorted((t, a) for t, a in _levels(probe, 0.01).items() if t != "dealer_signature"))
    effect = _mde(n, 37, alternative, levels, 0.9, 1, 9999, cats)
    kind, _, width = alternative.partition(":")
    bias = WheelBias(pockets=((start, 1 + effect),)) if kind == "single-pocket" else WheelBias(sectors=((start, int(width), 1 + effect),))
    fails = 0
    for i in range(reps):
        sim = simulate_spins(EU, n, stream(99, "power-validation", alternative, i), bias=bias)
        fails += WHEEL.run(WheelData(sim.positions.astype(np.int16), SPACE), entropy=i, n_resamples=9999).verdict == "FAIL"
    rate = fails / reps
    # 200 replicates: the binomial standard error at 90% is 2.1 points
    assert abs(rate - 0.9) <= 0.04, (effect, rate)


def test_decide_records_weights():
    out = decide([TestResult("a", U, 1.0, 1, 0.2, 10, "x"), TestResult("b", U, 1.0, 1, 0.3, 10, "x")], weights={"a": 2.0})
    assert out.weights == {"a": 2.0, "b": 1.0} and out.to_dict()["correction"] == "weighted Holm"


def test_report_prints_the_measured_suspect_share_not_a_formula(tmp_path, cli):
    """SUSPECT means something (issue 14 item 3): the report states the shares measured on
    simulated fair wheels (rngcert/battery/calibration.json), within the 5% and alpha limits, when the
    run is the configuration they were measured on (issue 23: 4 dealers, release pockets, rotor direction, R = 9,999)."""
    p = log_file(tmp_path, 20000, seed=8, dealers=4, with_release=True)
    r = cli("certify", p, "--seed", 1, "--no-plots", "--out", tmp_path / "r")
    assert r.exit_code in (0, 10), r.output
    (rep,) = (tmp_path / "r").glob("*/report.json")
    cal = json.loads(rep.read_text())["tables"][0]["battery"]["calibration"]
    assert cal["calibrated"] and cal["fair_wheels"] >= 1000 and cal["spins"] == 20000
    assert cal["suspect_share"] <= 0.05 and cal["fail_share"] <= 0.01
    html = (rep.parent / "report.html").read_text()
    assert "<b>Calibration.</b> Measured on 1,000 simulated fair European wheels of 20,000 spins" in html
    assert "raw p-value below alpha about" not in html  # the old formula for independent tests is gone


def test_inconclusive_findings_lead_with_the_reason_and_never_say_fail(tmp_path):
    """Case c04 (a biased log with unreadable rows): the first key finding and the headline are why
    there is no verdict; a rejecting test is reported as overridden, once per effect."""
    p = shared_file("cases", "c04-fifteen-percent-unreadable.csv")
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    t = cert.report["tables"][0]
    assert t["battery"]["verdict"] == "INCONCLUSIVE"
    kf = t["key_findings"]
    # two reasons: the unreadable share, and that the unreadable rows are one value ('xx': labels that do not fit the wheel)
    assert kf[0].startswith("No verdict:") and any("could not be read" in r for r in cert.outcomes[0].reasons)
    assert not any(k.startswith(("FAIL:", "SUSPECT:")) for k in kf)
    assert any(k.startswith("Would be FAIL, but these data cannot carry a verdict: pocket 17") for k in kf)
    assert len(kf) == len(set(kf))
