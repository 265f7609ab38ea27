"""``certify --tests``: a follow-up reruns chosen battery tests on new data (issue 27 item 6a)."""

from __future__ import annotations

import json

import pytest

from rngcert.battery.followup import family_line, followup, parse_tests
from rngcert.battery.wheel import WHEEL
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.simulate.sources import generator, seed_sequence
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
CHOSEN = ("sector_scan", "pocket_chisquare")


def _log(tmp_path, n=8000, seed=3):  # 8,000 spins: enough for the default standard's +50% (issue 23)
    sim = simulate_spins(EU, n, generator("pcg64", seed_sequence(seed)))
    p = tmp_path / f"fair-{seed}.csv"
    write_spin_log(p, EU, sim)
    return p


def test_parse_tests_keeps_order_and_rejects_unknown_names():
    assert parse_tests(" sector_scan,pocket_chisquare,sector_scan ", WHEEL) == CHOSEN
    with pytest.raises(ValueError, match="unknown test name.*bogus.*tests of the wheel battery are: pocket_chisquare, max_count"):
        parse_tests("pocket_chisquare,bogus", WHEEL)
    with pytest.raises(ValueError, match="no test named"):
        parse_tests(" , ", WHEEL)
    b = followup(WHEEL, CHOSEN)
    assert [s.name for s in b.specs] == ["pocket_chisquare", "sector_scan"]
    assert b.weights == {"pocket_chisquare": 2.0, "sector_scan": 2.0}


def test_followup_runs_only_the_chosen_tests_with_a_family_of_their_number(tmp_path):
    p = _log(tmp_path)
    full = certify_log([p], EU, seed=7, n_resamples=199, figures=False)
    fu = certify_log([p], EU, seed=7, n_resamples=199, figures=False, tests=CHOSEN)
    r = fu.report
    assert r["follow_up"] == {"tests": list(CHOSEN), "family_size": 2, "statement": family_line(CHOSEN)}
    assert r["notes"][0].startswith("follow-up of 2 tests (sector_scan, pocket_chisquare); family of 2")
    assert "over the 2 chosen tests of this follow-up" in json.dumps(r["policy"])
    assert r["rerun"]["tests"] == list(CHOSEN)
    (t,) = r["tables"]
    b = t["battery"]
    assert sorted(x["name"] for x in b["tests"]) == sorted(CHOSEN) and b["tests_applicable"] == 2
    # the calibration was measured on the full battery: not printed for a follow-up
    assert b["calibration"] == {} and full.report["tables"][0]["battery"]["calibration"]
    # each test keeps its own stream: the same p-value as inside the full battery; only Holm's family shrinks
    fp = {x["name"]: x for x in full.report["tables"][0]["battery"]["tests"]}
    for x in b["tests"]:
        assert x["pvalue"] == fp[x["name"]]["pvalue"]
        # weighted Holm over 2 equal-weight tests: the smaller p-value is doubled (or capped at 1)
        assert x["pvalue_holm"] <= fp[x["name"]]["pvalue_holm"]
    low = min(b["tests"], key=lambda x: x["pvalue"])
    assert low["pvalue_holm"] == pytest.approx(min(1.0, 2 * low["pvalue"]))
    assert "rerun" not in full.report or "tests" not in full.report["rerun"]


def test_a_test_outside_this_wheels_battery_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="symbol_frequency not in the battery of the european wheel.*its tests are: pocket_chisquare"):
        certify_log([_log(tmp_path)], EU, seed=1, n_resamples=99, figures=False, tests=["symbol_frequency"])


def test_cli_tests_option(cli, tmp_path):
    p = _log(tmp_path)
    bad = cli("certify", p, "--tests", "pocket_chisquare,nonsense", "--seed", "1")
    assert bad.exit_code == 2
    assert "nonsense" in bad.output and "wheel_distance" in bad.output and "dealer_signature" in bad.output
    ok = cli("certify", p, "--tests", "pocket_chisquare,sector_scan", "--seed", "1", "--resamples", "199", "--no-plots",
             "--out", tmp_path / "rep")
    assert ok.exit_code in (0, 10), ok.output
    assert "follow-up of 2 tests (pocket_chisquare, sector_scan); family of 2" in ok.output
    other = cli("certify", p, "--tests", "symbol_frequency", "--seed", "1")
    assert other.exit_code == 3 and "not in the battery of the european wheel" in other.output + other.stderr



def test_verify_rerun_reruns_the_same_followup(cli, tmp_path):
    p = _log(tmp_path)
    ok = cli("certify", p, "--tests", "pocket_chisquare,sector_scan", "--seed", "1", "--resamples", "199", "--no-plots",
             "--out", tmp_path / "rep")
    assert ok.exit_code in (0, 10), ok.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    assert json.loads((rep / "report.json").read_text())["rerun"]["tests"] == ["pocket_chisquare", "sector_scan"]
    res = cli("verify", rep, p, "--rerun")
    assert res.exit_code == 10, res.output  # INTACT: every value recomputed; unsigned, so not authenticated (issue 24)
    assert "values recomputed, all equal" in res.output


def test_a_followup_without_a_count_test_cannot_verify_a_declared_minimum_bias(tmp_path):
    p = _log(tmp_path)
    cert = certify_log([p], EU, seed=2, n_resamples=199, figures=False, tests=["gap_test", "runs_colour"], required_bias=0.5)
    (t,) = cert.report["tables"]
    assert cert.verdict == "INCONCLUSIVE"
    assert any("cannot be verified: none of the chosen tests (gap_test, runs_colour)" in r for r in t["battery"]["reasons"])
    # with a count-based test the power is stated as for the full battery
    ok = certify_log([p], EU, seed=2, n_resamples=199, figures=False, tests=["max_count"], required_bias=5.0)
    assert ok.report["tables"][0]["battery"]["power"]["single_pocket"]["effect"] > 0
    assert not any("cannot be verified" in r for r in ok.report["tables"][0]["battery"]["reasons"])
