"""rngcert.stats.sequential: e-detector pieces and the chi-square test of homogeneity.

Runtime budget: about 5 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rngcert.errors import InputError
from rngcert.stats import sequential as sq
from rngcert.stats.result import NotApplicable

K = 37


# ---------------------------------------------------------------------------- alternatives
def test_every_alternative_is_a_probability_law_so_lr_has_mean_one():
    fam = sq.wheel_alternatives(np.full(K, 1 / K), release=True)
    assert fam.size == 37 * 4 * 4 * 3 + 8 * 3
    assert math.isclose(np.exp(fam.log_weight).sum(), 1.0, rel_tol=1e-12)
    # E_pi[L_j] = sum_v pi(v) q_j(v)/pi(v) = 1 exactly: the product of LRs is a martingale under H0
    np.testing.assert_allclose(np.exp(fam.log_lr).mean(axis=1), 1.0, rtol=1e-12)
    assert np.all(np.exp(fam.log_lr) > 0)
    # non-uniform null (money wheel symbols): centred under its own law
    p = np.array([24, 12, 8, 4, 2, 1, 1]) / 52
    fam2 = sq.wheel_alternatives(p, circular=False)
    np.testing.assert_allclose(np.exp(fam2.log_lr) @ p, 1.0, rtol=1e-12)
    assert set(fam2.feature.tolist()) == {sq.POCKET}


def test_sector_alternative_is_the_planted_law():
    # +20% on 5 pockets from position 3: q = p(1+b) on the arc, the rest scaled to sum to one
    fam = sq.wheel_alternatives(np.full(K, 1 / K), widths=(5,), biases=(0.2,), harmonic_phases=0, distance=False)
    j = fam.names.index("positions 3..7 (width 5) +20%")
    q = np.exp(fam.log_lr[j]) / K
    assert math.isclose(q[3:8].sum() / (5 / K), 1.2)
    np.testing.assert_allclose(q[8:], (1 - 1.2 * 5 / K) / 32)


def test_alternatives_input_validation():
    with pytest.raises(InputError, match="summing to 1"):
        sq.wheel_alternatives([0.5, 0.6])
    with pytest.raises(InputError, match="biases must be > 0"):
        sq.wheel_alternatives(np.full(K, 1 / K), biases=(0.1, -0.1))
    with pytest.raises(InputError, match="widths must be in 1..36"):
        sq.wheel_alternatives(np.full(K, 1 / K), widths=(37,))
    with pytest.raises(InputError, match="equal pocket probabilities"):
        p = np.full(K, 1 / K)
        p[0] *= 2
        sq.wheel_alternatives(p / p.sum())


# ---------------------------------------------------------------------------- recursion
def test_shiryaev_roberts_matches_definition_by_brute_force():
    rng = np.random.default_rng(0)
    s = rng.normal(-0.1, 1.0, size=(30, 4))
    got = sq.shiryaev_roberts_log(s)
    # R_b = sum over change blocks beta <= b of prod_{beta..b} exp(s)
    for b in range(30):
        ref = np.log(sum(np.exp(s[beta : b + 1].sum(axis=0)) for beta in range(b + 1)))
        np.testing.assert_allclose(got[b], ref, rtol=1e-12)
    # continuing from a state equals one pass
    first = sq.shiryaev_roberts_log(s[:11])
    rest = sq.shiryaev_roberts_log(s[11:], first[-1])
    np.testing.assert_allclose(np.vstack([first, rest]), got, rtol=1e-12)


def test_block_counts_and_features():
    x = np.array([[0, 1, 1, 36, 5], [2, 2, 2, 2, 2]])
    fv = sq.feature_values(x, K, previous=None)
    assert fv[sq.DISTANCE].tolist() == [[-1, 1, 0, 35, 6], [-1, 0, 0, 0, 0]]
    c = sq.block_counts(fv[sq.POCKET], K, 2)
    assert c.shape == (2, 3, K)
    assert c[0, 0, 0] == 1 and c[0, 0, 1] == 1 and c[0, 1, 1] == 1 and c[0, 1, 36] == 1 and c[0, 2, 5] == 1
    assert c[1].sum() == 5
    assert sq.block_counts(fv[sq.DISTANCE], K, 2)[0].sum() == 4  # undefined first distance not counted
    with pytest.raises(InputError, match="positions must be in 0..36"):
        sq.feature_values([0, 37], K)


def test_detector_increments_equal_per_spin_sum_and_state_continues():
    rng = np.random.default_rng(1)
    fam = sq.wheel_alternatives(np.full(K, 1 / K))
    x = rng.integers(0, K, 1000)
    fv = sq.feature_values(x, K)
    counts = {f: sq.block_counts(v, K, 100) for f, v in fv.items()}
    inc = sq.log_increments(counts, fam)
    # per spin: log L_j of spin t; summed over block 3 by a plain loop over its spins
    blk = slice(300, 400)
    ref = fam.log_lr[:, :][np.arange(fam.size), :][:, fv[sq.POCKET][blk]].sum(axis=1) * (fam.feature == sq.POCKET)
    d = fv[sq.DISTANCE][blk]
    ref = ref + fam.log_lr[:, d].sum(axis=1) * (fam.feature == sq.DISTANCE)
    np.testing.assert_allclose(inc[3], ref, rtol=1e-10, atol=1e-10)
    logA = sq.detector_threshold(0.01, 100_000, 100)
    one = sq.e_detector(counts, fam, logA)
    a = sq.e_detector({f: c[:4] for f, c in counts.items()}, fam, logA)
    b = sq.e_detector({f: c[4:] for f, c in counts.items()}, fam, logA, state=a.state)
    np.testing.assert_allclose(np.concatenate([a.log_m, b.log_m]), one.log_m, rtol=1e-12)
    assert b.state.blocks == 10


def test_threshold_formula():
    assert math.isclose(sq.detector_threshold(0.01, 100_000, 100), math.log(1000 / 0.01))
    assert math.isclose(sq.detector_threshold(0.05, 150, 100), math.log(2 / 0.05))
    with pytest.raises(InputError, match="alpha must be in"):
        sq.detector_threshold(1.5, 10, 1)


def test_null_mean_of_detector_is_number_of_starts():
    # E_inf[M_b] = b (sum of w_j E[R_j,b] with E[R_j,b] = b): Monte Carlo over 4000 runs of a
    # few blocks with modest alternatives (light tails), within 5 standard errors
    rng = np.random.default_rng(2)
    fam = sq.wheel_alternatives(np.full(K, 1 / K), widths=(3,), biases=(0.1,), harmonic_amplitudes=(0.1,), distance=False)
    x = rng.integers(0, K, size=(4000, 300))
    counts = {sq.POCKET: sq.block_counts(x, K, 50)}
    path = sq.e_detector(counts, fam, 50.0)
    m = np.exp(path.log_m)
    mean, se = m.mean(axis=0), m.std(axis=0) / np.sqrt(m.shape[0])
    assert np.all(np.abs(mean - np.arange(1, 7)) < 5 * se)


# ---------------------------------------------------------------------------- homogeneity
def test_homogeneity_matches_scipy_chi2_contingency():
    rng = np.random.default_rng(3)
    tab = rng.multinomial(2000, np.full(K, 1 / K), size=3)
    res = sq.homogeneity_chisquare(tab)
    chi2, p, dof, _ = stats.chi2_contingency(tab, correction=False)
    assert res.method == "asymptotic"
    assert math.isclose(res.statistic, chi2, rel_tol=1e-12) and math.isclose(res.pvalue, p, rel_tol=1e-10) and res.df == dof == 72


def test_homogeneity_worked_example():
    # 2 x 2 by hand: rows (10, 20) / (20, 10): E = 15 everywhere, X^2 = 4 * 25 / 15 = 6.667, df 1
    res = sq.homogeneity_chisquare([[10, 20], [20, 10]])
    assert math.isclose(res.statistic, 20 / 3) and res.df == 1
    assert math.isclose(res.pvalue, stats.chi2.sf(20 / 3, 1))


def test_homogeneity_small_counts_monte_carlo_and_not_applicable():
    tab = np.array([[3, 0, 1, 2, 0], [0, 4, 1, 0, 2]])
    with pytest.raises(InputError, match="rng"):
        sq.homogeneity_chisquare(tab, rng=4)  # a seed, not a stream (without rng: the fixed default stream)
    res = sq.homogeneity_chisquare(tab, rng=np.random.default_rng(4), n_resamples=999)
    assert res.method == "monte-carlo, R=999" and 0 < res.pvalue <= 1
    # Fisher's exact test agrees on a 2x2 table within Monte Carlo error
    t2 = np.array([[1, 6], [5, 1]])
    mc = sq.homogeneity_chisquare(t2, rng=np.random.default_rng(5), n_resamples=4999)
    exact = stats.fisher_exact(t2).pvalue
    assert abs(mc.pvalue - exact) < 0.02
    assert isinstance(sq.homogeneity_chisquare([[5, 5, 5], [0, 0, 0]]), NotApplicable)
    with pytest.raises(InputError, match="non-negative integer"):
        sq.homogeneity_chisquare([[1, -1], [2, 2]])


def test_homogeneity_calibrated_and_powerful():
    rng = np.random.default_rng(6)
    p_null = [sq.homogeneity_chisquare(rng.multinomial(3700, np.full(K, 1 / K), size=2)).pvalue for _ in range(400)]
    assert stats.kstest(p_null, "uniform").pvalue > 0.01
    # a +30% pocket in the second of two windows of 50,000 spins is found
    q = np.full(K, 1.0)
    q[17] = 1.3
    tab = np.stack([rng.multinomial(50000, np.full(K, 1 / K)), rng.multinomial(50000, q / q.sum())])
    assert sq.homogeneity_chisquare(tab).pvalue < 1e-4
