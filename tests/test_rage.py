"""Roulette Rage rounds counted on a log (issue 25 item 4; 003 rules 3.15-3.18, 3.26-3.31): the
rounds follow the rules, their run lengths follow the exact law on fair wheels, the returns match
the published house edge, and the section is in the certify report of a real permanence list."""

import json

import numpy as np
import pytest
from _support import shared_path
from numpy.random import PCG64, Generator
from scipy import stats

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.paytables import rage_run_length_law
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.pipeline.rage import RAGE_PAYTABLES, rage_section
from rngcert.stats.rage import rage_returns, rage_rounds, rage_run_length_test

EU = load_wheel("european")
SPACE = EU.position_space()
COLOUR = np.asarray(SPACE.categories["colour"][0])  # 0 red, 1 black, 2 zero
LAW = np.asarray(rage_run_length_law(18 / 37), dtype=float)
REF = shared_path("reference", "roulette_rage.json")
WIESBADEN = shared_path("data", "roulette-wiesbaden", "spielbank-wiesbaden_t5_190424.txt")


def _rounds_by_the_rules(colour, cap=14):
    """Rules 3.15-3.18 and 3.27 spin by spin: an establishing spin is a colour after the other
    colour or after zero; the wager runs until the colour is broken; L counted after it, capped."""
    out, prev, est, run = [], None, None, 0
    for c in colour:  # loop over spins (the reference implementation)
        c = int(c) if c in (0, 1) else -1
        if est is not None:
            if c == est:
                run += 1
                prev = c
                continue
            out.append(min(run, cap))  # broken by the other colour or zero: settled
            est = None
        if c >= 0 and prev is not None and prev != c:
            est, run = c, 0
        prev = c
    return out, est is not None


def test_rounds_follow_the_establishing_spin_rules():
    col = np.array([0, 0, 1, 1, 1, 2, 0, 0, 0, 0, 0, 1, 2, 2, 1, 0])
    r = rage_rounds(col)
    # runs: red x2 (first: no round), black x3 (L 2), zero, red x5 (L 4), black (L 0), zeros, black (L 0: after zeros), red (unsettled)
    assert r["run_lengths"].tolist() == [2, 4, 0, 0] and r["censored"] == 1 and r["by_colour"] == {"red": 1, "black": 3}
    assert rage_rounds(np.r_[1, np.zeros(20, int), 1])["run_lengths"].tolist() == [14]  # capped at 14 (rule 3.27)
    x = Generator(PCG64(3)).integers(0, 37, 20000)
    ref, unsettled = _rounds_by_the_rules(COLOUR[x])
    got = rage_rounds(COLOUR[x])
    assert got["run_lengths"].tolist() == ref and got["censored"] == int(unsettled)


def test_fair_wheels_give_uniform_run_length_pvalues():
    rng = Generator(PCG64(4))
    p = []
    for _ in range(200):  # loop over replicates (test harness)
        L = rage_rounds(COLOUR[rng.integers(0, 37, 3000)])["run_lengths"]
        p.append(rage_run_length_test(L, LAW, n_resamples=199, rng=rng).pvalue)
    assert stats.kstest(p, "uniform").pvalue > 0.001


def test_sticky_colours_are_detected():
    rng = Generator(PCG64(5))
    n = 20000
    col = np.empty(n, int)
    col[0] = 0
    same = rng.random(n) < 0.56  # a colour repeats more often than 18/37 (zero left out: a sticky wheel)
    flip = rng.integers(0, 2, n)
    for i in range(1, n):  # loop over spins (a Markov chain)
        col[i] = col[i - 1] if same[i] else flip[i]
    res = rage_run_length_test(rage_rounds(col)["run_lengths"], LAW, n_resamples=199, rng=rng)
    assert res.pvalue == 1 / 200 and res.details["mean_run"] > res.details["expected_mean_run"]  # the smallest Monte Carlo p-value


@pytest.mark.skipif(not REF.exists(), reason="the shared reference is not on this machine")
def test_exact_returns_are_the_published_house_edges():
    ref = json.loads(REF.read_text())
    s = rage_section(Generator(PCG64(6)).integers(0, 37, 5000), SPACE, rng=Generator(PCG64(7)), n_resamples=999)
    assert s["returns"]["roulette-rage-minimum-odds"]["expected"] == pytest.approx(-ref["derived_house_edge"]["minimum_odds"], abs=1e-6)
    assert set(s["returns"]) == set(RAGE_PAYTABLES)
    for key, pid in (("minimum_odds", "roulette-rage-minimum-odds"), ("pay_table_1", "roulette-rage-pay-table-1"), ("pay_table_2", "roulette-rage-pay-table-2")):
        odds = ref["odds_to_1"][key]
        net = np.full(15, -1.0)
        for j, v in odds.items():
            net[int(j)] = v
        assert s["returns"][pid]["expected"] == pytest.approx(float(LAW @ net), abs=1e-12)
    L = np.array([0, 4, 5, 14])
    r = rage_returns(L, LAW, {"t": np.r_[-np.ones(4), np.arange(11) + 1.0]}, n_resamples=99, rng=Generator(PCG64(1)))["t"]
    assert r["observed"] == pytest.approx((-1 + 1 + 2 + 11) / 4) and r["wins"] == 3


@pytest.mark.skipif(not WIESBADEN.exists(), reason="the Wiesbaden permanence list is not on this machine")
def test_rage_rounds_on_the_wiesbaden_permanence_list(tmp_path):
    t = read_spin_log(WIESBADEN, EU).tables["spielbank-wiesbaden_t5_190424"]
    ref, unsettled = _rounds_by_the_rules(COLOUR[t.outcomes])
    s = rage_section(t.outcomes, SPACE, rng=Generator(PCG64(1)), n_resamples=999)
    assert s["rounds"] == len(ref) == 373_179 and s["censored"] == int(unsettled)
    assert s["run_length_test"]["details"]["observed"] == np.bincount(ref, minlength=15).tolist()
    assert s["run_length_test"]["pvalue"] > 0.01  # the casino's wheel: consistent with the exact law
    assert "373,179 rounds after an establishing spin" in s["line"]


def test_certify_report_has_the_rage_section_on_single_zero_wheels_only(tmp_path):
    x = Generator(PCG64(8)).integers(0, 37, 3000)
    p = tmp_path / "perm.txt"
    p.write_text("\n".join(" ".join(SPACE.labels[v] for v in x[i : i + 20]) for i in range(0, x.size, 20)) + "\n")
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    tab = cert.report["tables"][0]
    assert tab["roulette_rage"]["rounds"] == rage_rounds(COLOUR[x])["rounds"] and tab["battery"]["rage_line"].startswith("Roulette Rage")
    us = load_wheel("american")
    xa = Generator(PCG64(9)).integers(0, 38, 3000)
    pa_ = tmp_path / "us.txt"
    pa_.write_text(" ".join(us.position_space().labels[v] for v in xa) + "\n")
    assert "roulette_rage" not in certify_log([pa_], us, seed=1, n_resamples=199, figures=False).report["tables"][0]


@pytest.mark.parametrize("net", [np.r_[-np.ones(4), 5, 8, 15, 20, 40, 60, 100, 200, 400, 1000, 2000],  # whole units: integer product
                                 np.r_[-np.ones(4), 3.5, 8.25, np.arange(9) + 1 / 3]])  # fractions: the float product
def test_returns_are_the_float_products_numbers(net):
    """rage_returns forms whole-unit returns with an integer product (no BLAS call, issue 26 item 1): the same numbers."""
    L = Generator(PCG64(4)).choice(np.arange(15), size=4000, p=LAW / LAW.sum())
    got = rage_returns(L, LAW, {"t": net}, n_resamples=999, rng=Generator(PCG64(5)))["t"]
    sims = Generator(PCG64(5)).multinomial(L.size, LAW / LAW.sum(), size=999)
    sim = sims @ net / L.size
    exp, obs = float(LAW @ net), float(np.bincount(L, minlength=15) @ net / L.size)
    b = int(np.count_nonzero(np.abs(sim - exp) >= abs(obs - exp) - 1e-12 * max(1.0, abs(obs - exp))))
    assert got["pvalue"] == (b + 1) / 1000 and got["observed"] == obs
    assert np.array_equal(got["range95"], np.quantile(sim, [0.025, 0.975]))
