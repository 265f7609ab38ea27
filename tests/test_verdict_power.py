"""The fast verdict-power model (rngcert.stats.verdict_power, issue 11 item 2): every shortcut
agrees with the plain simulation it replaces, and the statement stays fast.

* the max count's exact null law (Levin 1981) against simulated multinomial maxima and the
  battery's own p-value;
* the importance-sampled scan null tails (sector scan; dealer signature over groups) against plain
  null simulation;
* the power curve of one reweighted sample against fresh draws at other effects, and the
  exchangeable-groups estimate against explicit draws of every group;
* the solved effect: fresh draws there give the stated power; its standard error is honest.

The validation against the real battery is tests/test_verdict.py::test_fail_rate_at_the_stated_90_percent_point.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from rngcert.errors import InputError
from rngcert.stats import frequency
from rngcert.stats import power as sp
from rngcert.stats import verdict_power as vp

K = 37
A = 0.01 * 2 / 24  # a primary test's first-step Holm level in the wheel battery (weights 2 of 24)


def _plain_null(test, n, k, groups, reps, seed):
    """Plain null simulation of a scan statistic (max over ``groups`` groups of n spins)."""
    arcs = vp._arcs(n, k, vp._scan_lengths(test, k))
    rng = np.random.default_rng(seed)
    x = rng.multinomial(n, np.full(k, 1.0 / k), size=reps * groups)
    return vp._scan(x, arcs)[0].reshape(reps, groups).max(axis=1)


# ----------------------------------------------------------------------------- max count
def test_exact_max_count_law_agrees_with_simulated_maxima():
    n, reps = 2000, 200_000
    m = np.random.default_rng(11).multinomial(n, np.full(K, 1.0 / K), size=reps).max(axis=1)
    for c in range(68, 92, 2):
        exact, sim = vp.max_count_sf(n, K, c), float(np.mean(m >= c))
        se = math.sqrt(max(exact * (1 - exact), 1e-12) / reps)
        assert abs(sim - exact) <= 4 * se + 1e-5, (c, sim, exact)


def test_max_count_critical_is_the_battery_decision():
    """The critical count is where the battery's own max-count p-value crosses the level."""
    for n in (100, 2000, 20000, 1_000_000):
        c = vp.max_count_critical(n, K, A)
        for count, rejects in ((c, True), (c - 1, False)):
            rest = n - count  # pocket 0 has the count, the rest spread evenly over the others
            counts = np.full(K, rest // (K - 1))
            counts[1 : 1 + rest % (K - 1)] += 1
            counts[0] = count
            assert counts.sum() == n and counts.argmax() == 0
            p = frequency.max_count(counts).pvalue
            assert (p <= A) == rejects, (n, count, p)
    assert vp.max_count_critical(3, 3, 0.01) == 4  # three spins on three cells: never significant at 1%
    assert vp._LEVIN_LOW_SD == frequency._LEVIN_LOW_SD and vp._LEVIN_MAX_LEN == frequency._LEVIN_MAX_LEN


def test_max_count_monte_carlo_regime_of_huge_samples(monkeypatch):
    """Beyond the battery's FFT limit the battery judges the max count by Monte Carlo: the rule is
    P(Bin(R, q(c)) <= floor(a (R+1)) - 1) with the exact q, rising from 0 to 1 around c*."""
    n, R = 200_000, 9999
    monkeypatch.setattr(vp.maxcount, "_LEVIN_MAX_LEN", 1000)  # read where the rule lives
    rule = vp._MaxCountRule(n, K, A, R)
    assert rule.mc
    c = rule.threshold()
    cs = np.arange(c - 40, c + 40)
    phi = rule(cs)
    assert np.all(np.diff(phi) >= -1e-12) and phi[0] == 0.0 and phi[-1] > 0.999
    bmax = math.floor(A * (R + 1)) - 1
    from scipy import special

    for g in (c - 5, c, c + 5):
        assert rule(np.array([g]))[0] == pytest.approx(special.bdtr(bmax, R, vp.max_count_sf(n, K, g)), rel=2e-2, abs=1e-6)


# ----------------------------------------------------------------------------- scan nulls
def test_fast_scan_statistic_is_the_battery_statistic():
    rng = np.random.default_rng(3)
    for test, g in (("sector_scan", 1), ("dealer_signature", 3)):
        n = 3000
        x = rng.multinomial(n, np.full(K, 1.0 / K), size=(200, g))
        ref = sp._statistics(test, x, np.full(g, n), K)
        fast = vp._scan(x.reshape(-1, K), vp._arcs(n, K, vp._scan_lengths(test, K)))[0].reshape(200, g).max(axis=1)
        assert np.allclose(fast, ref, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("test,n,groups", [("sector_scan", 20000, 1), ("sector_scan", 400, 1), ("dealer_signature", 2500, 3)])
def test_importance_sampled_scan_tail_agrees_with_plain_simulation(test, n, groups):
    reps = 60_000 if groups == 1 else 40_000
    null = np.sort(_plain_null(test, n, K, groups, reps, seed=5))
    tail = vp.scan_null_tail(test, n, K, groups, 0.003, size=4000, entropy=7)
    for q in (0.01, 0.003, 0.001):
        s = float(null[int((1 - q) * reps)])
        if s <= tail.s0:
            continue
        plain = float(np.mean(null >= s - 1e-9))
        est = float(tail.q(s))
        se = math.sqrt(plain * (1 - plain) / reps + (est * float(tail.rse(s))) ** 2)
        assert abs(est - plain) <= 4 * se, (q, s, plain, est, se)
    assert float(tail.rse(float(null[int((1 - 0.001) * reps)]))) < 0.08  # precise where the level is


def test_truncated_binomial_draws_follow_the_truncated_law():
    n, p, a, b = 10000, 5 / K, 1450, 1700
    v = vp._tail_values(n, p, a, b, 200_000, np.random.default_rng(1))
    assert v.min() >= a and v.max() <= b
    vals = np.arange(a, b + 1)
    from scipy import special

    pmf = np.exp(special.gammaln(n + 1) - special.gammaln(vals + 1) - special.gammaln(n - vals + 1) + vals * math.log(p) + (n - vals) * math.log1p(-p))
    pmf /= pmf.sum()
    for cut in (1452, 1460, 1475):
        want = pmf[vals <= cut].sum()
        assert abs(np.mean(v <= cut) - want) <= 4 * math.sqrt(want * (1 - want) / v.size)


def test_scan_tail_reaches_the_requested_depth():
    tail = vp.scan_null_tail("sector_scan", 10000, K, 1, 0.002, size=2000, entropy=3)
    assert float(tail.q(tail.s0 * (1 + 1e-9))) >= 0.002
    assert tail.inverse(0.001) > tail.s0


# ----------------------------------------------------------------------------- the power curve
LEVELS = {"pocket_chisquare": A, "max_count": A, "sector_scan": A, "first_harmonic": A}


@pytest.mark.parametrize("alternative,e0,groups", [("single-pocket", 0.35, 1), ("sector:5", 0.17, 1), ("dealer-signature:3", 0.4, 3)])
def test_reweighted_power_curve_agrees_with_fresh_draws(alternative, e0, groups):
    """One sample drawn at e0 and reweighted gives the power at e0 +- 8%, as fresh draws there do."""
    n = 10000
    lv = {"dealer_signature": A} if alternative.startswith("dealer") else LEVELS
    _, k, kind, width, g, bat = vp._setup(n, K, alternative, lv, groups, 9999, 20261201, None)
    curve = vp._sample(bat, width, vp._block_pi(e0, width, K), 6000, np.random.default_rng(1))
    for e in (0.92 * e0, e0, 1.08 * e0):
        p, se, ess = curve.power(e, se=True)
        fresh = vp._sample(bat, width, vp._block_pi(e, width, K), 6000, np.random.default_rng(2))
        q, se2, _ = fresh.power(e, se=True)
        assert abs(p - q) <= 4 * math.hypot(se, se2), (e, p, q)
        assert ess > 0.3 * 6000


def test_exchangeable_groups_estimate_equals_explicit_group_draws():
    """P(max over g groups rejects) from one group's law, F^g, against g groups drawn explicitly."""
    n, g, e, reps = 12000, 4, 0.35, 6000
    _, k, kind, width, g, bat = vp._setup(n, K, "dealer-signature:3", {"dealer_signature": A}, g, 9999, 20261201, None)
    p, se, _ = vp._sample(bat, 3, vp._block_pi(e, 3, K), reps, np.random.default_rng(4)).power(e, se=True)
    x = np.random.default_rng(5).multinomial(n // g, vp._probs(K, "dealer-signature", 3, e), size=reps * g)
    M = vp._scan(x, bat.arcs)[0].reshape(reps, g).max(axis=1)
    rej = bat.rules["dealer_signature"](M)
    direct, se2 = float(rej.mean()), float(rej.std() / math.sqrt(reps))
    assert abs(p - direct) <= 4 * math.hypot(se, se2), (p, direct)


def test_power_standard_error_is_honest():
    """The reported standard error matches the spread over independent samples (groups of 3)."""
    n, e = 9000, 0.4
    _, k, kind, width, g, bat = vp._setup(n, K, "dealer-signature:3", {"dealer_signature": A}, 3, 9999, 20261201, None)
    est = [vp._sample(bat, 3, vp._block_pi(e, 3, K), 1000, np.random.default_rng(100 + i)).power(e, se=True) for i in range(40)]
    sd = np.std([p for p, _, _ in est], ddof=1)
    assert 0.7 < np.mean([s for _, s, _ in est]) / sd < 1.4


@pytest.mark.parametrize("alternative,groups", [("single-pocket", 1), ("sector:5", 1), ("dealer-signature:3", 4)])
def test_solved_effect_has_the_stated_power(alternative, groups):
    n = 20000
    lv = {"dealer_signature": A} if alternative.startswith("dealer") else LEVELS
    r = vp.verdict_effect(n, K, alternative, lv, groups=groups)
    assert 0 < r.se < 0.02 * r.effect and abs(r.power - 0.9) < 1e-6 and r.ess > 0.7 * r.n_alt
    fresh = vp.verdict_power(n, K, alternative, r.effect, lv, groups=groups, n_alt=8000, entropy=99)
    assert abs(fresh - 0.9) <= 4 * math.hypot(r.power_se, math.sqrt(0.09 / 8000)), (r, fresh)
    assert vp.min_detectable_verdict_effect(n, K, alternative, lv, groups=groups) == r.effect


def test_no_effect_reaches_the_power_gives_inf():
    r = vp.verdict_effect(80, K, "sector:5", {"sector_scan": A}, max_effect=0.5)
    assert r.effect == math.inf and r.to_dict()["effect"] is None


def test_harmonic_alternative_is_still_solved():
    e = vp.min_detectable_verdict_effect(20000, K, "harmonic", LEVELS, n_alt=1000)
    assert 0.02 < e < 0.2
    assert vp.verdict_power(20000, K, "harmonic", e, LEVELS, n_alt=4000, entropy=5) == pytest.approx(0.9, abs=0.04)


def test_spins_needed_for_verdict_inverts_the_effect():
    n = vp.spins_needed_for_verdict(0.5, K, "single-pocket", LEVELS, n_alt=2000)
    assert 3000 < n < 20000


# ----------------------------------------------------------------------------- plumbing
@pytest.mark.parametrize("alt", ["single-pocket", "sector:5", "harmonic", "dealer-signature", "dealer-signature:3",
                                 "sector", "single-pocket:2", "harmonic:1", "sector:x", "sector:0", "bogus", "sector:37"])
def test_local_parser_agrees_with_stats_power(alt):
    try:
        want = sp.parse_alternative(alt)
        if want[1] >= K:
            raise InputError("width")
    except InputError:
        with pytest.raises(InputError):
            vp._parse(alt, K)
        return
    assert vp._parse(alt, K) == want
    eff = 0.3
    assert np.allclose(vp._probs(K, *want, eff), sp.alternative_probs(K, alt, eff))


def test_no_scipy_stats_import():
    code = "import sys, rngcert.stats.verdict_power; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_power_reason_is_a_whole_sentence_when_no_effect_is_reached(monkeypatch):
    """When the detectable effect lies beyond the simulated range (effect None), the INCONCLUSIVE reason was
    only "; no sample size reaches it" (an operator-precedence slip dropped the sentence's start)."""
    from rngcert.battery import power as bp
    from rngcert.battery.wheel import WHEEL, WheelData
    from rngcert.equipment.wheel import load_wheel

    space = load_wheel("european").position_space()
    x = np.random.default_rng(5).integers(0, K, 400).astype(np.int16)
    data = WheelData(x, space)
    out = WHEEL.run(data, entropy=1, n_resamples=99)
    monkeypatch.setattr(bp, "_verdict_effect", lambda *a, **k: {"effect": None, "se": None, "power": None, "power_se": None,
                                                                  "n_alt": 0, "ess": 0, "null_rse": {}})
    _, reasons = bp.verdict_power_statement(out, data, alpha=0.01, n_resamples=99, required_bias=0.5)
    assert len(reasons) == 1 and reasons[0].startswith("400 spins cannot carry a verdict on the declared minimum bias")
    assert reasons[0].endswith("lies beyond the range simulated)")
