"""The law of each SP 800-22 p-value under H0 (rngcert.stats.nist.nulllaw), case c02.

Exact laws are checked against enumeration of all 2^n sequences run through the battery's own
test functions; the laws that are tabulated by Monte Carlo or enumeration of multinomial outcomes
are checked against each other and against simulated bits. Runtime: about 40 s.
"""

import math

import numpy as np
import pytest
from scipy import stats

from rngcert.stats import nist
from rngcert.stats.nist import nulllaw as L
from rngcert.stats.nist.runs import _longest_runs_per_row, longest_run_class_probabilities
from rngcert.stats.nist.twolevel import _merge


def _all_sequences(n):
    v = np.arange(1 << n, dtype=np.int64)[:, None]
    return ((v >> np.arange(n)) & 1).astype(np.uint8)


def _law_of(pvals):
    pvals = np.asarray(pvals, dtype=float)
    return np.bincount(L.bin_index(pvals), minlength=10) / pvals.size, np.mean(pvals >= 0.01)


def test_bin_index_matches_numpy_histogram():
    p = np.r_[np.linspace(0, 1, 10_001), L.UNIFORMITY_EDGES, [0.3, 0.7, 0.6]]
    np.testing.assert_array_equal(np.bincount(L.bin_index(p), minlength=10),
                                  np.histogram(p, bins=np.linspace(0.0, 1.0, 11))[0])


@pytest.mark.parametrize("n", [10, 13, 16])
def test_frequency_law_exact_by_enumeration(n):
    b, passp = _law_of([nist.frequency(x).pvalue for x in _all_sequences(n)])
    law = L.pvalue_law("frequency", n)
    assert law.kind == "exact"
    np.testing.assert_allclose(law.bins, b, atol=1e-14)
    assert law.pass_probability == pytest.approx(passp, abs=1e-14)


@pytest.mark.parametrize("n,M", [(12, 3), (16, 4), (15, 5), (14, 7), (16, 16)])
def test_block_frequency_law_exact_by_enumeration(n, M):
    b, passp = _law_of([nist.block_frequency(x, M=M).pvalue for x in _all_sequences(n)])
    law = L.pvalue_law("block_frequency", n, (M,))
    np.testing.assert_allclose(law.bins, b, atol=1e-14)
    assert law.pass_probability == pytest.approx(passp, abs=1e-14)


@pytest.mark.parametrize("n", [10, 14, 17])
def test_runs_law_exact_by_enumeration_conditional_on_prerequisite(n):
    res = [nist.runs(x) for x in _all_sequences(n)]
    b, passp = _law_of([r.pvalue for r in res if r.applicable])
    assert sum(not r.applicable for r in res) > 0             # the law is conditional
    law = L.pvalue_law("runs", n)
    np.testing.assert_allclose(law.bins, b, atol=1e-14)
    assert law.pass_probability == pytest.approx(passp, abs=1e-14)


@pytest.mark.parametrize("n", [9, 12, 13])
def test_cusum_law_exact_by_enumeration_both_modes(n):
    for mode in ("forward", "reverse"):
        b, passp = _law_of([nist.cumulative_sums(x, mode)[0].pvalue for x in _all_sequences(n)])
        law = L.pvalue_law("cumulative_sums", n)
        np.testing.assert_allclose(law.bins, b, atol=1e-14)
        assert law.pass_probability == pytest.approx(passp, abs=1e-14)


@pytest.mark.parametrize("M,m", [(12, 3), (14, 4), (15, 5)])
def test_template_count_law_same_for_every_aperiodic_template(M, m):
    law = L._template_count_law(M, m)
    s = ["".join(map(str, x)) for x in _all_sequences(M)]
    for t in nist.aperiodic_templates(m):
        w = np.array([sum(q[i:i + m] == t for i in range(M - m + 1)) for q in s])
        np.testing.assert_allclose(np.bincount(w, minlength=law.size) / w.size, law, atol=1e-14)


def test_template_count_law_moments_match_sp800_22():
    """Mean (M-m+1)/2^m exactly; variance close to SP 800-22's M(2^-m - (2m-1)2^-2m)."""
    M, m = 125_000, 9
    law = L._template_count_law(M, m)
    w = np.arange(law.size)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.sum(w * law) == pytest.approx((M - m + 1) / 2 ** m, rel=1e-10)
    var = np.sum(w ** 2 * law) - np.sum(w * law) ** 2
    assert var == pytest.approx(M * (2.0 ** -m - (2 * m - 1) * 2.0 ** (-2 * m)), rel=2e-3)


def test_longest_run_law_enumeration_against_simulated_bits():
    """n = 128 (M = 8, N = 16): the enumerated multinomial law against 200,000 fair
    sequences run through the test's own block classification and formula."""
    n, R = 128, 200_000
    law = L.pvalue_law("longest_run", n, (8, "reference"))
    assert law.kind == "exact"
    rng = np.random.default_rng(20261201)
    x = rng.integers(0, 2, size=(R, n), dtype=np.uint8)
    V, pi = longest_run_class_probabilities(8, "reference")
    runs = _longest_runs_per_row(x.reshape(R * 16, 8)).reshape(R, 16)
    cls = np.clip(runs, V[0], V[-1]) - V[0]
    nu = np.stack([(cls == c).sum(axis=1) for c in range(4)], axis=1)
    chi2 = np.sum((nu - 16 * pi) ** 2 / (16 * pi), axis=1)
    from scipy import special
    b, passp = _law_of(special.gammaincc(1.5, chi2 / 2))
    # spot-check that this is the test's p-value
    assert nist.longest_run(x[0]).pvalue == pytest.approx(special.gammaincc(1.5, chi2[0] / 2))
    counts = np.round(b * R)
    assert stats.chisquare(counts, np.array(law.bins) * R).pvalue > 1e-3
    assert abs(passp - law.pass_probability) < 4 * math.sqrt(0.01 / R)


def test_multinomial_enumeration_agrees_with_monte_carlo():
    N, pi = 40, np.array([0.2888, 0.5776, 0.1336])
    f = lambda c: np.exp(-c / 2)  # noqa: E731
    p, w, kind, _, _ = L._multinomial_atoms(N, pi, pi, "t", 1, f, "x")
    assert kind == "exact" and w.sum() == pytest.approx(1.0, abs=1e-12)
    exact = np.bincount(L.bin_index(p), weights=w, minlength=10)
    nu = np.random.default_rng(3).multinomial(N, pi, size=400_000)
    mc = np.bincount(L.bin_index(f(np.sum((nu - N * pi) ** 2 / (N * pi), axis=1))),
                     minlength=10) / 400_000
    np.testing.assert_allclose(exact, mc, atol=5 * math.sqrt(0.25 / 400_000))


def test_rank_law_is_exact_enumeration():
    law = L.pvalue_law("rank", 38 * 1024, (32, 32))
    assert law.kind == "exact" and sum(law.bins) == pytest.approx(1.0)
    assert max(abs(b - 0.1) for b in law.bins) > 0.02        # 38 matrices: visibly discrete


def test_linear_complexity_class_probabilities():
    """SP 800-22 section 3.10 values, and the counts of Gustavson (1976) by brute force."""
    np.testing.assert_allclose(L.linear_complexity_class_probabilities(500),
                               [0.010417, 0.03125, 0.125, 0.5, 0.25, 0.0625, 0.020833],
                               atol=1e-6)
    M = 10
    Ls = nist.berlekamp_massey_blocks(_all_sequences(M))
    sign = 1.0
    mu = M / 2.0 + (9.0 + (-sign)) / 36.0 - (M / 3.0 + 2.0 / 9.0) / 2.0 ** M
    T = sign * (Ls - mu) + 2.0 / 9.0
    cls = np.searchsorted(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]), T, side="left")
    np.testing.assert_allclose(L.linear_complexity_class_probabilities(M),
                               np.bincount(cls, minlength=7) / 2 ** M, atol=1e-15)


def test_dft_law_monte_carlo_at_small_n_lattice_at_large_n():
    small = L.pvalue_law("dft", 1000)
    assert small.kind == "monte-carlo" and small.replicates == L.DFT_MC_BUDGET // 1000
    # at n = 1000 the DFT test rejects about 1.7% of fair sequences at alpha = 0.01
    assert 0.975 < small.pass_probability < 0.99
    big = L.pvalue_law("dft", 1_000_000)
    assert big.kind == "approximate" and sum(big.bins) == pytest.approx(1.0)


def test_monte_carlo_laws_are_deterministic():
    a = L._templates(20544, 9, 8, 0.01)
    b = L._templates(20544, 9, 8, 0.01)
    assert a == b and a.kind == "monte-carlo" and a.replicates == L.MC_REPLICATES


def test_overlapping_reference_constants_law_is_not_uniform():
    """sts-2.1.2's class probabilities (compound Poisson of rev1) are not the true ones, so
    its p-value is not uniform at n = 10^6; with the corrected ones it is close to uniform."""
    ref = L.pvalue_law("overlapping_template", 1_000_000, (9, 1032, 5, "reference"))
    cor = L.pvalue_law("overlapping_template", 1_000_000, (9, 1032, 5, "corrected"))
    assert ref.bins[0] > 0.104 and ref.bins[-1] < 0.098
    assert max(abs(b - 0.1) for b in cor.bins) < 0.003


def test_continuous_and_unknown_laws():
    for key, params in [("universal", ()), ("serial", (16,)), ("approximate_entropy", (10,)),
                        ("random_excursions", ()), ("random_excursions_variant", ())]:
        law = L.pvalue_law(key, 1_000_000, params)
        assert law.kind == "continuous" and law.bins == (0.1,) * 10
        assert law.pass_probability == pytest.approx(0.99)
    for key, params in [("serial", (4,)), ("approximate_entropy", (3,)), ("foo", ())]:
        law = L.pvalue_law(key, 1000, params)
        assert not law.known and law.bins is None and law.reason
    from rngcert.stats.result import Requirement, TestResult
    foreign = TestResult("pocket_chisquare", Requirement.UNIFORMITY, 1.0, 1, 0.5, 10, "x")
    assert "not a result of the SP 800-22 battery" in L.law_for_result(foreign).reason
    with pytest.raises(ValueError, match="n=0"):
        L.pvalue_law("frequency", 0)


@pytest.mark.parametrize("n", [128, 1000])
def test_battery_pvalues_follow_their_laws(n):
    """Every applicable name of the battery at small n, 3000 fair sequences: the histogram of
    the battery's own p-values fits the law (chi-square with merged classes)."""
    R = 3000
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2, size=(R, n), dtype=np.uint8)
    per = [nist.run_sp800_22(s) for s in x]
    names = [r.name for r in per[0] if r.applicable]
    assert "nist_cumulative_sums[reverse]" in names
    for nm in names:
        res = [r for seq in per for r in seq if r.name == nm and r.applicable]
        law = L.law_for_result(res[0])
        assert law.known, nm
        e = np.array(law.bins) * len(res)
        o = np.bincount(L.bin_index([r.pvalue for r in res]), minlength=10)
        cls = _merge(e, 5.0)
        ec = np.array([e[a:b + 1].sum() for a, b in cls])
        oc = np.array([o[a:b + 1].sum() for a, b in cls])
        inflate = 1 + len(res) / law.replicates if law.replicates else 1.0
        chi2 = float(np.sum((oc - ec) ** 2 / ec)) / inflate
        assert stats.chi2.sf(chi2, len(cls) - 1) > 1e-4, (nm, o, e)
