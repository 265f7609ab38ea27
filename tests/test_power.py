"""Power and sample size (issue 5). Runtime ~6 s (validation by simulation for each alternative)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.simulate.wheel import WheelBias, position_probabilities, simulate_spins
from rngcert.stats import frequency, sector, signature
from rngcert.stats import power as P

K = 37
EURO = load_wheel("european")


def _gen(seed):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- closed forms
def test_chisquare_power_df1_matches_normal_closed_form():
    # k = 2: X^2 = Z^2 with Z ~ N(sqrt(lambda), 1) asymptotically; power = Phi(s - z) + Phi(-s - z)
    p0 = np.array([0.5, 0.5])
    p1 = np.array([0.53, 0.47])
    n = 1500
    lam = n * np.sum((p1 - p0) ** 2 / p0)
    z = sps.norm.isf(0.005)
    want = sps.norm.cdf(math.sqrt(lam) - z) + sps.norm.cdf(-math.sqrt(lam) - z)
    assert P.chisquare_power(n, p0, p1, 0.01, approximation="local") == pytest.approx(want, rel=1e-10)


def test_harmonic_noncentrality_is_n_a2_over_2():
    a, n = 0.1, 3000
    p1 = P.alternative_probs(K, "harmonic", a)
    lam1, df = P._noncentrality_per_spin("first_harmonic", np.full(K, 1 / K), p1)
    assert df == 2 and lam1 == pytest.approx(a * a / 2, rel=1e-12)
    r = P.power_at(n, K, "harmonic", a)
    assert r.power == pytest.approx(sps.ncx2.sf(sps.chi2.isf(0.01, 2), 2, n * a * a / 2), rel=1e-12)


def test_cohen_effect_size_w():
    # Cohen (1988) §7.2: local law, lambda = n w^2, w^2 = sum (p1 - p0)^2 / p0
    p0 = np.full(K, 1 / K)
    p1 = P.alternative_probs(K, "single-pocket", 0.5)
    w2 = np.sum((p1 - p0) ** 2 / p0)
    crit = sps.chi2.isf(0.01, K - 1)
    assert P.chisquare_power(4000, p0, p1, 0.01, approximation="local") == pytest.approx(sps.ncx2.sf(crit, K - 1, 4000 * w2), rel=1e-12)
    r = P.spins_needed(K, "single-pocket", 0.5)
    assert r.details["local_noncentrality"] == pytest.approx(r.n * w2)
    assert r.achieved_power >= 0.9 > P.chisquare_power(r.n - 1, p0, p1, 0.01)


def test_pearson_exact_moments_against_closed_forms_and_simulation():
    # under H0 with uniform p0: E X^2 = k-1, Var X^2 = 2(k-1) + (sum 1/p0 - k^2 - 2k + 2)/n = 2(k-1)(1 - 1/n)
    n, p0 = 500, np.full(K, 1 / K)
    m, v = P._pearson_moments(n, p0, p0)
    assert m == pytest.approx(K - 1, rel=1e-12) and v == pytest.approx(2 * (K - 1) * (1 - 1 / n), rel=1e-10)
    # under a fixed alternative: against 40,000 simulated statistics
    p1 = P.alternative_probs(K, "sector:5", 0.4)
    C = _gen(30).multinomial(n, p1, size=40_000).astype(float)
    X = np.sum((C - n * p0) ** 2 / (n * p0), axis=1)
    m, v = P._pearson_moments(n, p0, p1)
    assert m == pytest.approx(X.mean(), rel=0.01) and v == pytest.approx(X.var(), rel=0.03)
    # mean has the closed form sum p1(1-p1)/p0 + n sum (p1-p0)^2/p0
    assert m == pytest.approx(np.sum(p1 * (1 - p1) / p0) + n * np.sum((p1 - p0) ** 2 / p0), rel=1e-12)


def test_alternatives_match_simulator_definitions():
    from rngcert.simulate.wheel import offset_probabilities, position_probabilities

    assert np.allclose(P.alternative_probs(K, "single-pocket", 0.4), position_probabilities(K, WheelBias(pockets=((0, 1.4),))))
    assert np.allclose(P.alternative_probs(K, "sector:5", 0.2), position_probabilities(K, WheelBias(sectors=((0, 5, 1.2),))))
    assert np.allclose(P.alternative_probs(K, "harmonic", 0.3), position_probabilities(K, WheelBias(harmonic=(0.3, 0.0))))
    assert np.allclose(P.alternative_probs(K, "dealer-signature:3", 1.0), offset_probabilities(K, 1, 3, 2.0))
    p = P.alternative_probs(K, "single-pocket", 0.4)
    assert p[0] == pytest.approx(1.4 / (K + 0.4))


def test_inverse_consistency_noncentral():
    for alt, e in (("single-pocket", 0.25), ("harmonic", 0.07), ("sector:5", 0.15)):
        test = "pocket_chisquare" if alt == "sector:5" else None
        n = P.spins_needed(K, alt, e, test=test).n
        mde = P.min_detectable_effect(n, K, alt, test=test).effect
        assert mde <= e and mde == pytest.approx(e, rel=2e-3)



def test_simulated_statistics_equal_the_battery_statistics():
    rng = _gen(1)
    c = rng.multinomial(3000, P.alternative_probs(K, "sector:5", 0.3))
    x = c[None, None, :]
    n = np.array([3000])
    assert P._statistics("sector_scan", x, n, K)[0] == pytest.approx(sector.sector_scan(c, n_resamples=9, rng=rng).statistic)
    assert P._statistics("pocket_chisquare", x, n, K)[0] == pytest.approx(frequency.pocket_chisquare(c).statistic)
    assert P._statistics("first_harmonic", x, n, K)[0] == pytest.approx(sector.first_harmonic(c).statistic)
    # max_count reports max z = (max - e)/sd, the same ordering as the maximum count
    mx = P._statistics("max_count", x, n, K)[0]
    e = 3000 / K
    assert (mx - e) / math.sqrt(e * (1 - 1 / K)) == pytest.approx(frequency.max_count(c, n_resamples=9, rng=rng).statistic)
    oc = np.stack([rng.multinomial(1000, np.full(K, 1 / K)), rng.multinomial(1200, np.full(K, 1 / K))])
    got = P._statistics("dealer_signature", oc[None], oc.sum(axis=1), K)[0]
    assert got == pytest.approx(signature.dealer_signature(oc, n_resamples=9, rng=rng).statistic)


# ----------------------------------------------------------------------------- validation (issue 5)
N_VAL = 1500  # simulated samples per alternative: SE of a power of 0.9 is 0.8 points


def _within(power_hat, target=0.9, tol=0.03):
    print(f"simulated power {power_hat:.4f}")
    assert abs(power_hat - target) <= tol, f"simulated power {power_hat:.3f} vs requested {target}"


def test_validation_single_pocket_chisquare():
    r = P.spins_needed(K, "single-pocket", 0.2)
    p1 = position_probabilities(K, WheelBias(pockets=((5, 1.2),)))  # the simulator's law, bias elsewhere
    C = _gen(11).multinomial(r.n, p1, size=N_VAL)
    _within(np.mean([frequency.pocket_chisquare(c).pvalue <= 0.01 for c in C]))


def test_validation_harmonic():
    r = P.spins_needed(K, "harmonic", 0.1)
    assert r.method.startswith("non-central")
    rng = _gen(12)
    C = rng.multinomial(r.n, P.alternative_probs(K, "harmonic", 0.1), size=N_VAL)
    _within(np.mean([sector.first_harmonic(c).pvalue <= 0.01 for c in C]))


def test_validation_single_pocket_max_count():
    r = P.spins_needed(K, "single-pocket", 0.3, test="max_count", n_null=5000, n_alt=2000, rng=_gen(13))
    assert r.method.startswith("simulation")
    # exact critical value of the battery's max_count (Levin): smallest m with P(max >= m) <= alpha
    def p_of_max(m):  # P(max >= m) depends on m only: put m in one pocket, spread the rest
        rest = r.n - m
        c = np.concatenate([[m], np.full(K - 1, rest // (K - 1))])
        c[1 : 1 + rest % (K - 1)] += 1
        return frequency.max_count(c, n_resamples=9, rng=_gen(0)).pvalue

    lo, hi = r.n // K + 2, r.n // 2
    while lo < hi:
        mid = (lo + hi) // 2
        if p_of_max(mid) <= 0.01:
            hi = mid
        else:
            lo = mid + 1
    C = _gen(14).multinomial(r.n, P.alternative_probs(K, "single-pocket", 0.3), size=N_VAL)
    _within(np.mean(C.max(axis=1) >= lo))


def test_validation_sector_scan():
    r = P.spins_needed(K, "sector:5", 0.2, n_null=5000, n_alt=2000, rng=_gen(15))
    # independent null (other seed) and alternative samples from the simulator, with the bias
    # planted elsewhere on the wheel; statistics from the battery's function
    null = np.sort(P._simulate("sector_scan", r.n, np.full(K, 1 / K), 1, 10_000, _gen(16)))
    C = _gen(17).multinomial(r.n, position_probabilities(K, WheelBias(sectors=((20, 5, 1.2),))), size=N_VAL)
    stat = np.array([sector.sector_scan(c, n_resamples=1, rng=_gen(0)).statistic for c in C])
    b = null.size - np.searchsorted(null, stat - 1e-9, side="left")
    _within(np.mean((b + 1) / (null.size + 1) <= 0.01))


def test_validation_dealer_signature():
    groups = 2
    r = P.spins_needed(K, "dealer-signature:3", 0.5, groups=groups, n_null=5000, n_alt=2000, rng=_gen(18))
    null = np.sort(P._simulate("dealer_signature", r.n, np.full(K, 1 / K), groups, 10_000, _gen(19)))
    stats_ = []
    m = r.n // 2 * 2
    for i in range(N_VAL // 3):  # simulate_spins end to end: release pocket, 2 dealers
        s = simulate_spins(EURO, m, _gen(1000 + i), bias=WheelBias(signature=(10, 3, 1.5)), dealers=2, with_release=True)
        g = (np.arange(m) // (m // 2)).astype(np.int64)  # two groups of equal size
        oc = signature.offset_counts(s.positions, s.release, K, groups=g, n_groups=2)
        stats_.append(signature.dealer_signature(oc, n_resamples=1, rng=_gen(0)).statistic)
    stat = np.array(stats_)
    b = null.size - np.searchsorted(null, stat - 1e-9, side="left")
    _within(np.mean((b + 1) / (null.size + 1) <= 0.01), tol=0.04)  # 500 samples: SE 1.3 points


def test_two_moment_law_for_large_single_pocket_bias():
    """For a +100% pocket the local non-central law overstates power (it plans too few spins);
    the two-moment law and method='simulation' both hold the requested power."""
    r = P.spins_needed(K, "single-pocket", 1.0)
    p0, p1 = np.full(K, 1 / K), P.alternative_probs(K, "single-pocket", 1.0)
    assert P.chisquare_power(r.n, p0, p1, 0.01, approximation="local") > 0.93
    C = _gen(21).multinomial(r.n, p1, size=N_VAL)
    _within(np.mean([frequency.pocket_chisquare(c).pvalue <= 0.01 for c in C]))
    sim = P.spins_needed(K, "single-pocket", 1.0, method="simulation", n_alt=2000, rng=_gen(20))
    assert sim.n == pytest.approx(r.n, rel=0.05)


def test_simulated_power_is_reproducible_and_monotone():
    a = P.power_at(3000, K, "sector:5", 0.2, n_null=2000, n_alt=500, rng=_gen(3))
    b = P.power_at(3000, K, "sector:5", 0.2, n_null=2000, n_alt=500, rng=_gen(3))
    c = P.power_at(6000, K, "sector:5", 0.2, n_null=2000, n_alt=500, rng=_gen(3))
    assert a.power == b.power and c.power > a.power
    assert "simulation" in a.method and a.details["se"] > 0


# ----------------------------------------------------------------------------- INCONCLUSIVE
def test_inconclusive_when_sample_too_small():
    from rngcert.battery.core import Spec, run_battery
    from rngcert.stats.exploit import power_and_exploitability
    from rngcert.stats.result import Requirement

    counts = _gen(4).multinomial(2000, np.full(K, 1 / K))
    d = power_and_exploitability(counts, EURO.position_space(), EURO, 0.01, rng=_gen(5), required_bias=0.2, **_tables(EURO),
                                 n_null=1000, n_alt=300, n_draws=500)
    assert d["inconclusive_reasons"] and "needs" in d["inconclusive_reasons"][0]
    spec = Spec("pocket_chisquare", lambda d, ctx: frequency.pocket_chisquare(counts), Requirement.UNIFORMITY)
    out = run_battery([spec], entropy=1, inconclusive=d["inconclusive_reasons"])
    assert out.verdict == "INCONCLUSIVE"
    big = power_and_exploitability(counts * 30, EURO.position_space(), EURO, 0.01, rng=_gen(5), required_bias=0.2, **_tables(EURO),
                                   n_null=1000, n_alt=300, n_draws=500)
    assert big["inconclusive_reasons"] == []


# ----------------------------------------------------------------------------- input validation
def test_bad_inputs():
    with pytest.raises(InputError, match="unknown alternative"):
        P.spins_needed(K, "wobble", 0.1)
    with pytest.raises(InputError, match="width"):
        P.spins_needed(K, "sector", 0.1)
    with pytest.raises(InputError, match="effect"):
        P.spins_needed(K, "single-pocket", -0.1)
    with pytest.raises(InputError, match="amplitude"):
        P.spins_needed(K, "harmonic", 1.5)
    with pytest.raises(InputError, match="rng"):
        P.spins_needed(K, "sector:5", 0.1)
    with pytest.raises(InputError, match="cannot be planned"):
        P.spins_needed(K, "harmonic", 0.1, test="max_count")
    with pytest.raises(InputError, match="power"):
        P.spins_needed(K, "single-pocket", 0.1, power=0.001)
    with pytest.raises(InputError, match="groups"):
        P.spins_needed(K, "single-pocket", 0.1, groups=3)


def test_to_dict_and_text():
    r = P.min_detectable_effect(10, K, "harmonic")
    assert r.effect == math.inf and r.to_dict()["effect"] == "inf"
    assert "no harmonic bias" in r.text()
    r = P.spins_needed(K, "single-pocket", 0.1)
    assert r.to_dict()["n"] == 162443 and "162443 spins" in r.text()


# ----------------------------------------------------------------------------- CLI
def test_cli_power(cli):
    import json


    res = cli("power", "--equipment", "european", "--alternative", "single-pocket", "--effect", "0.1", "--alpha", "0.01", "--power", "0.9")
    assert res.exit_code == 0 and "spins needed: 162443" in res.output and "non-central chi-square" in res.output
    res = cli("power", "-a", "harmonic", "--spins", "5000", "--json")
    d = json.loads(res.output)
    assert d["solved_for"] == "effect" and d["effect"] == pytest.approx(0.0834906, rel=1e-5)
    res = cli("power", "-a", "sector:5", "--spins", "3000", "--effect", "0.2", "--seed", "7", "--resamples", "1000", "--alt-samples", "200")
    assert res.exit_code == 0 and "simulation" in res.output and "seed: 7" in res.output
    res = cli("power", "-a", "sector", "--spins", "30")
    assert res.exit_code == 2 and "sector width" in res.output
    res = cli("power", "-a", "single-pocket")
    assert res.exit_code == 2
    assert "Examples" in cli("power", "--help").output


def test_symbol_only_wheel_single_section():
    """Money wheel of unknown arrangement: one section biased, symbol (category) chi-square."""
    cats = np.repeat(np.arange(8), [21, 13, 7, 4, 4, 2, 2, 1])  # Crazy Time: 54 sections
    r = P.spins_needed_section_bias_categories(0.5, cats, 53, alpha=0.01, power=0.9)
    m = P.min_detectable_section_bias_categories(r.n, cats, 53, alpha=0.01, power=0.9)
    assert m.effect <= 0.5 and m.effect == pytest.approx(0.5, rel=2e-3)
    # same law as chisquare_power on the collapsed categories
    w = np.ones(54)
    w[53] = 1.5
    assert r.achieved_power == pytest.approx(P.chisquare_power(r.n, np.full(54, 1 / 54), w / w.sum(), 0.01, categories=cats))
    # validation: simulated power of category_frequency at the planned n
    C = _gen(22).multinomial(r.n, w / w.sum(), size=4000)  # SE 0.5 points
    _within(np.mean([frequency.category_frequency(c, cats, name="symbol_frequency").pvalue <= 0.01 for c in C]))


def test_cli_power_symbol_only_wheel(cli):


    res = cli("power", "-e", "crazy-time", "--effect", "0.5")
    assert res.exit_code == 0 and "category_chisquare" in res.output and "spins needed" in res.output
    res = cli("power", "-e", "crazy-time", "-a", "sector:3", "--spins", "1000")
    assert res.exit_code == 2 and "no known arrangement" in res.output


def _tables(wheel):
    from rngcert.equipment.paytables import paytables_for_wheel

    pt, rage = paytables_for_wheel(wheel)
    return {"paytable": pt, "rage_paytable": rage}


def test_money_wheel_power_sentences_say_section_not_pocket(cli, tmp_path):
    """A money wheel has sections, not pockets: the power statement, the INCONCLUSIVE reason and the
    declared minimum bias use the wheel's own word (a roulette wheel keeps "pocket")."""
    import json

    log = tmp_path / "mw.csv"
    assert cli("simulate", "wheel", "--equipment", "money-wheel-52", "--spins", "3000", "--seed", "3", "--out", log).exit_code == 0
    res = cli("certify", log, "--equipment", "money-wheel-52", "--seed", "1", "--resamples", "999", "--json")
    rep = json.loads(res.output)
    (table,) = rep["tables"]
    statement = table["battery"]["power"]["statement"]
    assert "one section comes up" in statement and "neighbouring sections" in statement and "pocket" not in statement
    assert table["battery"]["reasons"] and all("pocket" not in r for r in table["battery"]["reasons"]), table["battery"]["reasons"]
    assert "on one section" in json.dumps(rep)
