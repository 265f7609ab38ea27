"""Certification end to end: planted biases FAIL, reports are complete, real logs certify."""

from __future__ import annotations

import json

import pytest
from _support import shared_file

from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.report.writer import write_report
from rngcert.simulate.sources import generator, seed_sequence
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log
from rngcert.stats.result import jsonable

EU = load_wheel("european")


def shared(*parts):
    return shared_file("data", *parts)


def simulated_log(tmp_path, n, bias=WheelBias(), seed=1, **kw):
    sim = simulate_spins(EU, n, generator("pcg64", seed_sequence(seed)), bias=bias, **kw)
    p = tmp_path / f"sim-{seed}.csv"
    write_spin_log(p, EU, sim)
    return p


def test_fair_wheel_passes_and_report_is_complete(tmp_path):
    p = simulated_log(tmp_path, 20000, seed=11, void_rate=0.02, dealers=3, with_release=True)
    cert = certify_log([p], EU, seed=5, n_resamples=999)
    r = cert.report
    assert r["verdict"] in ("PASS", "SUSPECT")
    (t,) = r["tables"]
    assert t["n"] + t["void"] == 20000 and t["void"] > 300
    assert r["inputs"][0]["sha256"] and r["inputs"][0]["rows"] == 20000
    b = t["battery"]
    assert {x["requirement"] for x in b["tests"]} == {"uniformity", "independence", "unpredictability"}
    for x in b["tests"]:
        if x["applicable"]:
            assert 0 < x["pvalue"] <= 1 and x["method"] and x["n"] > 0
            assert x["pvalue_holm"] >= x["pvalue"]
    assert 0 < b["power"]["single_pocket"]["effect"] < 1 and b["power"]["sector"]["effect"] > 0
    assert "the battery returns FAIL" in b["power"]["statement"]  # the power of the verdict, not of one test
    assert "No evidence" in b["exploitability_line"]
    sig = [x for x in b["tests"] if x["name"] == "dealer_signature"][0]
    assert sig["details"]["reference"] == "release pocket"
    paths = write_report(r, cert.figures, cert.log.rejected, tmp_path / "rep")
    j = json.loads(paths["json"].read_text())
    assert j["verdict"] == r["verdict"] and j["seed"]["entropy"] == "5"
    html = paths["html"].read_text()
    assert html.count("data:image/svg+xml;base64,") >= 4  # vector figures
    assert "http://" not in html and "https://" not in html  # opens offline
    for word in ("Uniformity", "Independence", "Unpredictability", "SHA-256", "Holm"):
        assert word in html


def test_same_seed_same_report(tmp_path):
    p = simulated_log(tmp_path, 3000, seed=2)
    a = certify_log([p], EU, seed=9, n_resamples=499, figures=False).report
    b = certify_log([p], EU, seed=9, n_resamples=499, figures=False).report
    pa = [x.get("pvalue") for x in a["tables"][0]["battery"]["tests"]]
    pb = [x.get("pvalue") for x in b["tables"][0]["battery"]["tests"]]
    assert pa == pb


def _rejected(cert):
    return set(cert.report["tables"][0]["battery"]["rejected_familywise"])


def test_planted_pocket_bias_fails(tmp_path):
    # one pocket at +20% with 50,000 spins (issue 2, done means 1)
    p = simulated_log(tmp_path, 50000, WheelBias(pockets=((EU.labels.index("17"), 1.2),)), seed=3)
    cert = certify_log([p], EU, seed=1, figures=False)
    assert cert.verdict == "FAIL"
    assert {"max_count", "pocket_binomial_holm"} & _rejected(cert)
    mc = [r for r in cert.outcomes[0].results if r.name == "max_count"][0]
    assert "17" in json.dumps(jsonable(mc.details))


def test_planted_sector_bias_fails(tmp_path):
    # a 5-pocket sector at +10% with 50,000 spins
    start = EU.labels.index("22")
    p = simulated_log(tmp_path, 50000, WheelBias(sectors=((start, 5, 1.1),)), seed=4)
    cert = certify_log([p], EU, seed=2, figures=False)
    assert cert.verdict == "FAIL"
    assert "sector_scan" in _rejected(cert)
    best = [r for r in cert.outcomes[0].results if r.name == "sector_scan"][0].details["best_arc"]
    assert abs(best["start"] - start) <= 2 and 3 <= best["length"] <= 8


def test_planted_dealer_signature_fails(tmp_path):
    # results fall in the 7-pocket sector centred 10 pockets past the previous result 15% more often
    p = simulated_log(tmp_path, 20000, WheelBias(signature=(10, 7, 1.15)), seed=5)
    cert = certify_log([p], EU, seed=3, figures=False)
    assert cert.verdict == "FAIL"
    rej = _rejected(cert)
    assert "dealer_signature" in rej or "wheel_distance" in rej
    sig = [r for r in cert.outcomes[0].results if r.name == "dealer_signature"][0]
    assert sig.pvalue < 0.001
    # pocket frequencies alone cannot see it
    chi = [r for r in cert.outcomes[0].results if r.name == "pocket_chisquare"][0]
    assert chi.pvalue > 0.001


def test_small_sample_with_declared_bias_is_inconclusive(tmp_path):
    p = simulated_log(tmp_path, 2000, seed=6)
    cert = certify_log([p], EU, seed=1, n_resamples=999, required_bias=0.2, figures=False)
    assert cert.verdict == "INCONCLUSIVE"
    assert "declared minimum bias" in " ".join(cert.report["tables"][0]["battery"]["reasons"])


def test_monte_carlo_floor_is_flagged(tmp_path):
    p = simulated_log(tmp_path, 2000, seed=7)
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    assert any("smallest Monte Carlo p-value" in n for n in cert.report["notes"])


# --------------------------------------------------------------------------- real logs
def test_wiesbaden_permanence_lists():
    files = sorted(shared("roulette-wiesbaden").glob("spielbank-*.txt"))
    assert len(files) == 2
    expected = {"t5": 748116, "t6": 791237}
    for f in files:
        cert = certify_log([f], EU, seed=1, n_resamples=999, figures=False)
        (t,) = cert.report["tables"]
        key = "t5" if "_t5_" in f.name else "t6"
        assert t["n"] == expected[key] and t["void"] == 0 and cert.report["rejected_count"] == 0
        assert sum(t["counts"]) == expected[key]
        assert cert.report["verdict"] in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE")
        assert len([x for x in t["battery"]["tests"] if x["applicable"]]) >= 17  # no dealer data: no dealer signature


@pytest.mark.slow
def test_live_dealer_tables():
    f = shared("roulette-live-dealer", "live_roulette_spins.csv")
    cert = certify_log([f], EU, columns={"result": "number", "table": "file", "spin_id": "seq_in_file"}, seed=1, n_resamples=999, figures=False)
    tabs = {t["table"]: t["n"] for t in cert.report["tables"]}
    assert len(tabs) == 18 and sum(tabs.values()) == 16808
    assert tabs["betfair-live-1"] == 512 and tabs["bitcasino-8"] == 1461
    # pooled chi-square from SOURCE.txt: 29.18 on 36 df, p = 0.78
    pooled = certify_log([f], EU, columns={"result": "number"}, seed=1, n_resamples=999, figures=False)
    chi = [x for x in pooled.report["tables"][0]["battery"]["tests"] if x["name"] == "pocket_chisquare"][0]
    assert chi["statistic"] == pytest.approx(29.18, abs=0.01) and chi["pvalue"] == pytest.approx(0.78, abs=0.01)


def test_crazy_time_money_wheel():
    f = shared("money-wheel-crazytime", "CleanData.csv")
    ct = load_wheel("crazy-time")
    # min_round_interval=0: every row, as SOURCE.txt counts them (its 17 near-duplicate rounds: tests/test_inputs_cases.py)
    cert = certify_log([f], ct, columns={"result": "WheelResult", "timestamp": "DateTime"}, seed=1, n_resamples=999, min_round_interval=0)
    r = cert.report
    (t,) = r["tables"]
    assert r["level"] == "symbol" and t["n"] == 10909 and r["rejected_count"] == 0
    assert dict(zip(t["labels"], t["counts"])) == {"1": 4197, "2": 2658, "5": 1463, "10": 776, "CoinFlip": 801, "CashHunt": 418, "Pachinko": 394, "CrazyBonus": 202}
    chi = [x for x in t["battery"]["tests"] if x["name"] == "pocket_chisquare"][0]
    # SOURCE.txt: chi-square 4.63, 7 df, p = 0.71
    assert chi["statistic"] == pytest.approx(4.63, abs=0.01) and chi["df"] == 7 and chi["pvalue"] == pytest.approx(0.71, abs=0.01)
    na = {x["name"]: x["reason"] for x in t["battery"]["tests"] if not x["applicable"]}
    assert "sector_scan" not in [x["name"] for x in t["battery"]["tests"]]  # no geometry without the arrangement
    assert any("sorted by timestamp" in n for n in t["notes"])
    assert isinstance(na, dict)
    assert len(cert.figures[0]) >= 2
    # a PASS on a wheel that was never calibrated says so (it was silent: no calibration line at all)
    cal = t["battery"]["calibration"]
    assert cal["calibrated"] is False and cal["statement"].startswith("Not calibrated for this wheel") and "crazy-time" in cal["statement"]
