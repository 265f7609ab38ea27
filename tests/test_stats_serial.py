"""Tests of rngcert.stats.serial: pair counts, transition test, wheel distance, serial correlation, gaps."""

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from scipy import stats

from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement
from rngcert.stats.serial import (
    _distance_law,
    gap_test,
    pair_counts,
    serial_correlation,
    serial_pair,
    wheel_distance,
)

K = 37


def test_pair_counts_hand_example():
    pc = pair_counts([0, 1, 1, 2, 0], 3)
    expected = np.zeros((3, 3), int)
    for a, b in [(0, 1), (1, 1), (1, 2), (2, 0)]:
        expected[a, b] += 1
    np.testing.assert_array_equal(pc, expected)
    assert pc.dtype == np.int64
    assert pair_counts([4], 5).sum() == 0
    with pytest.raises(InputError, match="0..2"):
        pair_counts([0, 3], 3)


def test_serial_pair_matches_scipy_chi2_contingency():
    rng = Generator(PCG64(1))
    pos = rng.integers(0, 6, 5000)
    pc = pair_counts(pos, 6)
    r = serial_pair(pc)
    ref = stats.chi2_contingency(pc, correction=False)
    assert r.method == "asymptotic"
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.df == 25 and r.requirement is Requirement.INDEPENDENCE


def test_serial_pair_anderson_goodman_form():
    # sum_i n_i. (phat_ij - phat_.j)^2 / phat_.j equals the Pearson independence statistic
    pc = np.array([[5, 9, 2], [7, 3, 8], [4, 6, 6]])
    ni = pc.sum(1, keepdims=True)
    pj = pc.sum(0) / pc.sum()
    ag = np.sum(ni * (pc / ni - pj) ** 2 / pj)
    assert serial_pair(pc, method="asymptotic").statistic == pytest.approx(ag)


def test_serial_pair_permutation_branch():
    rng = Generator(PCG64(2))
    pos = rng.integers(0, K, 1500)  # expected per cell ~ 1.1 -> sparse
    pc = pair_counts(pos, K)
    na = serial_pair(pc)
    assert isinstance(na, NotApplicable) and "sparse" in na.reason
    r = serial_pair(pc, positions=pos, rng=Generator(PCG64(3)), n_resamples=199)
    assert r.method == "permutation, R=199"
    assert 0 < r.pvalue <= 1
    with pytest.raises(InputError, match="reproduce"):
        serial_pair(pc, positions=pos[::-1].copy()[:-1], rng=Generator(PCG64(3)))
    # a strongly Markov sequence is detected by the permutation test
    steps = np.where(rng.random(1500) < 0.3, 1, rng.integers(0, K, 1500))
    dep = np.cumsum(steps) % K
    r = serial_pair(pair_counts(dep, K), positions=dep, rng=Generator(PCG64(4)), n_resamples=199)
    assert r.pvalue == pytest.approx(1 / 200)


def test_permutation_and_asymptotic_agree_when_dense():
    rng = Generator(PCG64(5))
    pos = rng.integers(0, 4, 3000)
    pc = pair_counts(pos, 4)
    a = serial_pair(pc, method="asymptotic")
    b = serial_pair(pc, method="permutation", positions=pos, rng=Generator(PCG64(6)), n_resamples=1999)
    assert abs(a.pvalue - b.pvalue) < 0.05


# ---------------------------------------------------------------- wheel distance
def test_distance_law_is_circular_autoconvolution():
    p = np.array([0.5, 0.3, 0.2])
    q = _distance_law(p)
    # d = 0: 0.25+0.09+0.04; d = 1: p0p1 + p1p2 + p2p0; d = 2: p0p2 + p1p0 + p2p1
    np.testing.assert_allclose(q, [0.38, 0.15 + 0.06 + 0.10, 0.10 + 0.15 + 0.06])
    np.testing.assert_allclose(np.fft.ifft(np.abs(np.fft.fft(p)) ** 2).real, q, atol=1e-15)


def test_wheel_distance_uniform_matches_scipy():
    rng = Generator(PCG64(7))
    pos = rng.integers(0, K, 4000)
    for lag in (1, 3):
        d = (pos[lag:] - pos[:-lag]) % K
        ref = stats.chisquare(np.bincount(d, minlength=K))
        r = wheel_distance(pos, K, lag=lag)
        assert r.statistic == pytest.approx(ref.statistic)
        assert r.pvalue == pytest.approx(ref.pvalue)
        assert r.n == 4000 - lag


def test_wheel_distance_nonuniform_covariance_matches_simulation():
    # The Wald form uses Var(counts) = N(diag q - qq') + (N - lag)(C + C'); check against simulation.
    rng = Generator(PCG64(8))
    k, n = 5, 60
    p = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    sims = rng.choice(k, size=(40_000, n), p=p)
    d = (sims[:, 1:] - sims[:, :-1]) % k
    cnt = (d[..., None] == np.arange(k)).sum(axis=1)
    emp = np.cov(cnt.T)
    q = _distance_law(p)
    N = n - 1
    j = np.arange(k)
    C = (p[(j[None, :] - j[:, None]) % k] * p[None, :]) @ p[(j[:, None] + j[None, :]) % k] - np.outer(q, q)
    V = N * (np.diag(q) - np.outer(q, q)) + (N - 1) * (C + C.T)
    np.testing.assert_allclose(emp, V, atol=0.25)
    # and Pearson's covariance alone would be wrong here
    assert np.max(np.abs(emp - N * (np.diag(q) - np.outer(q, q)))) > 1.0


def test_wheel_distance_not_applicable_and_invalid():
    assert isinstance(wheel_distance(np.arange(50) % K, K), NotApplicable)
    with pytest.raises(InputError, match="lag"):
        wheel_distance(np.arange(500) % K, K, lag=0)


# ---------------------------------------------------------------- serial correlation
def _hosking_reference(pos, k, lags):
    th = 2 * np.pi * pos / k
    u = np.c_[np.cos(th), np.sin(th)]
    u = u - u.mean(0)
    N = len(u)
    G0inv = np.linalg.inv(np.einsum("ti,tj->ij", u, u) / N)
    Q = 0.0
    for h in lags:
        G = np.einsum("ti,tj->ij", u[h:], u[:-h]) / N
        Q += N * N / (N - h) * np.trace(G.T @ G0inv @ G @ G0inv)
    return Q


def test_serial_correlation_matches_reference_formula():
    rng = Generator(PCG64(9))
    pos = rng.integers(0, K, 3000)
    r = serial_correlation(pos, K, lags=[1, 2, 5])
    assert r.statistic == pytest.approx(_hosking_reference(pos, K, [1, 2, 5]))
    assert r.df == 12
    assert r.pvalue == pytest.approx(stats.chi2.sf(r.statistic, 12))
    assert [d["lag"] for d in r.details["lags"]] == [1, 2, 5]


def test_serial_correlation_single_lag_uniform_is_close_to_complex_rayleigh_form():
    # For a uniform marginal Gamma_0 ~ I/2, and the 4-df statistic splits into the rotational
    # part 2|sum w_{t+1} conj(w_t)|^2/N and the reflectional part 2|sum w_{t+1} w_t|^2/N.
    rng = Generator(PCG64(10))
    pos = rng.integers(0, K, 20_000)
    w = np.exp(2j * np.pi * pos / K)
    w = w - w.mean()
    N = len(w)
    rot = 2 * abs(np.sum(w[1:] * np.conj(w[:-1]))) ** 2 / N
    ref = 2 * abs(np.sum(w[1:] * w[:-1])) ** 2 / N
    r = serial_correlation(pos, K, lags=[1])
    assert r.statistic == pytest.approx(rot + ref, rel=0.02)


def test_serial_correlation_detects_dependence():
    rng = Generator(PCG64(11))
    n = 5000
    steps = np.where(rng.random(n) < 0.1, 3, rng.integers(0, K, n))  # P(next = prev + 3) raised
    pos = np.cumsum(steps) % K
    r = serial_correlation(pos, K)
    assert r.pvalue < 1e-6
    assert r.details["lags"][0]["pvalue"] < 1e-6


def test_serial_correlation_na_and_invalid():
    assert isinstance(serial_correlation(np.arange(50) % K, K), NotApplicable)
    # only positions 0 and k/2 on an even wheel lie on a line
    pos = np.tile([0, 5], 200)
    assert isinstance(serial_correlation(pos, 10, lags=[1]), NotApplicable)
    with pytest.raises(InputError, match="lags"):
        serial_correlation(np.zeros(500, int), K, lags=[0])


# ---------------------------------------------------------------- gap test
def test_gap_test_hand_example():
    # target = {0} on k=2 (pi = 1/2); sequence hits at t=0,1,3,6,...: explicit classes
    rng = Generator(PCG64(12))
    pos = rng.integers(0, 2, 400)
    tgt = np.array([True, False])
    r = gap_test(pos, tgt)
    hits = np.flatnonzero(pos == 0)
    gaps = np.diff(hits) - 1
    m = len(gaps)
    t = r.details["t"]
    assert m * 0.5 * 0.5 ** (t - 1) >= 5 and m * 0.5**t >= 5
    assert not (m * 0.5 * 0.5**t >= 5 and m * 0.5 ** (t + 1) >= 5)
    obs = np.bincount(np.minimum(gaps, t), minlength=t + 1)
    e = m * np.append(0.5 * 0.5 ** np.arange(t), 0.5**t)
    ref = stats.chisquare(obs, e)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.df == t


def test_gap_test_detects_clustered_hits_and_validates():
    rng = Generator(PCG64(13))
    pos = rng.integers(0, K, 20_000)
    rep = rng.random(20_000) < 0.15
    idx = np.maximum.accumulate(np.where(rep, 0, np.arange(20_000)))
    pos = pos[idx]  # repeat the previous result 15% of the time -> gap 0 too frequent
    tgt = np.zeros(K, bool)
    tgt[[1, 3, 5, 7, 9]] = True
    assert gap_test(pos, tgt).pvalue < 1e-6
    with pytest.raises(InputError, match="some but not all"):
        gap_test(pos, np.ones(K, bool))
    assert isinstance(gap_test(np.array([1, 2, 3]), tgt), NotApplicable)


def test_serial_correlation_from_lag_pair_counts_does_not_depend_on_spans(monkeypatch):
    """The statistic is computed from integer pocket and lag-pair counts, counted span by span: the
    same bits for any span length (a pair may straddle a span's end), and the per-spin formula
    (Hosking's Q over the centred unit vectors) to rounding."""
    from rngcert.stats import chunks
    from rngcert.stats.serial import serial_correlation

    rng = np.random.default_rng(7)
    x = (np.cumsum(rng.integers(-1, 2, 30_000)) % 37).astype(np.int8)  # a lag-correlated walk
    x[::3] = rng.integers(0, 37, x[::3].size)
    ref = serial_correlation(x, 37)
    for chunk in (1, 7, 4096):
        monkeypatch.setattr(chunks, "CHUNK", chunk)
        got = serial_correlation(x, 37)
        assert got.statistic == ref.statistic and got.details == ref.details
    # the per-spin formula, by direct sums over spins
    ang = 2 * np.pi * x.astype(float) / 37
    u = np.stack([np.cos(ang), np.sin(ang)])
    u -= u.mean(axis=1, keepdims=True)
    N = x.size
    G0inv = np.linalg.inv(u @ u.T / N)
    Q = sum(N * N / (N - h) * np.trace((G := u[:, h:] @ u[:, :-h].T / N).T @ G0inv @ G @ G0inv) for h in range(1, 11))
    assert ref.statistic == pytest.approx(Q, rel=1e-11)
