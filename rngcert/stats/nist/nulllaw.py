"""Law of each SP 800-22 p-value under H0, for the two-level analysis (case c02).

SP 800-22's uniformity check (section 4.2.2) counts the first-level p-values of m sequences in
ten bins of [0, 1] and expects m/10 in each, which holds when the p-value is continuous and
exactly uniform under H0. A first-level statistic of n bits is discrete, and its p-value is an
asymptotic approximation: at small n the p-value takes few values (the frequency test's p-value
at n = 128 takes 65), so its bins are far from equally likely and a perfect generator fails the
check (c02: uniformity p ~ 1e-34 at n = 128, m = 1000). The same happens to the proportion check
(section 4.2.1), whose null pass probability P(p >= alpha) is then not exactly 1 - alpha.

:func:`pvalue_law` gives, for one result name of the battery at a given n (and the test's
parameters and constants), the probabilities of the ten bins and the pass probability under
H0 (fair i.i.d. bits), computed from the law of the test's sufficient statistic and evaluated
through the very formula the test uses for its p-value, so the discreteness *and* the error of
the asymptotic approximation are both accounted for. The kinds of law:

``exact``
    computed exactly (up to tail mass < 1e-15 and floating-point rounding):

    * frequency: S_n = 2K - n with K ~ Binomial(n, 1/2);
    * block frequency: sum over the N blocks of (2k_i - M)^2, k_i ~ Binomial(M, 1/2), by
      convolution powers (FFT beyond small sizes, tails truncated at 60 standard deviations);
    * runs: the joint law of the number of ones K and of runs V (the Wald-Wolfowitz law of
      V given K [3]), conditional on the frequency prerequisite that makes the test applicable;
    * longest run: counts of the K + 1 classes ~ Multinomial(N, exact class probabilities), all
      outcomes enumerated within 8 standard deviations when there are at most 3 million of them;
    * rank: the three class counts ~ Multinomial(N, closed-form probabilities), enumerated;
    * cumulative sums: the law of max_k |S_k| of the simple random walk, by the method of
      images with exact binomial probabilities [4] (forward and reverse walks have one law).

``monte-carlo``
    tabulated from R draws of the sufficient statistic from its exact law (fixed seed, so the
    law is a deterministic function of the test, n and the parameters):

    * longest run, when the multinomial has too many outcomes to enumerate;
    * non-overlapping templates: the count W of an aperiodic m-bit template in an M-bit block
      has one law for every aperiodic template (its generating function
      1/(1 - 2z - (u - 1)z^m) depends only on m, by the Goulden-Jackson cluster method [5]),
      computed exactly by that recurrence; the N block counts are drawn from it;
    * overlapping template and linear complexity: class counts ~ Multinomial(N, exact class
      probabilities) (Hamano-Kaneko probabilities by dynamic programming; the law of the linear
      complexity of M random bits, Gustavson [6]), while the statistic uses the constants of
      the test (sts-2.1.2's, for ``constants="reference"``);
    * DFT, for n <= 100,000 (at least 2,000 replicates): fair bit sequences are simulated and
      the test run on them (the law of N_1 is not known in closed form).

    The second-level chi-square divides by 1 + m/R for the sampling error of the table.

``approximate``
    DFT for larger n: N_1 on the integer lattice with the mean and variance the test itself
    assumes (normal, continuity-corrected), which captures the lattice but not any error of the
    test's normal approximation.

``continuous``
    universal, serial (m >= 8), approximate entropy (m >= 6), random excursions and the variant:
    statistics built from thousands of terms (pattern counts, log distances) or mixed over the
    random number of cycles J >= 500, with no atoms of practical size; also runs and templates
    for n > :data:`LARGE_N`, where their computed laws have converged to within 2e-4 and 1.3e-3
    of 1/10 per bin. SP 800-22's rule applies as published (bins 1/10, pass probability
    1 - alpha).

``unknown``
    anything else (a name outside the battery's 15 tests, or parameters for which no law is
    computed, such as serial with m < 8): the uniformity check is not applicable, with the reason.

References
----------
.. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 4.2.
.. [2] L'Ecuyer P., Simard R. (2007) TestU01: a C library for empirical testing of random
   number generators. ACM TOMS 33(4), section 3 (second-level tests on discrete statistics).
.. [3] Mood A. M. (1940) The distribution theory of runs. Ann. Math. Statist. 11, 367-392.
.. [4] Feller W. (1968) An Introduction to Probability Theory and Its Applications I, 3rd ed.,
   chapter XIV (random walk between absorbing barriers, method of images).
.. [5] Goulden I. P., Jackson D. M. (1979) An inversion theorem for cluster decompositions of
   sequences with distinguished subsequences. J. London Math. Soc. 20, 567-576.
.. [6] Gustavson F. G. (1976) Analysis of the Berlekamp-Massey linear feedback shift-register
   synthesis algorithm. IBM J. Res. Dev. 20, 204-212.
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass

import numpy as np

from rngcert.seeding import stream
from rngcert.stats.nist import complexity as _complexity
from rngcert.stats.nist.dft import _LOG20_STS
from rngcert.stats.nist.frequency import _cusum_pvalue
from rngcert.stats.nist.rank import rank_probabilities
from rngcert.stats.nist.runs import longest_run_class_probabilities
from rngcert.stats.nist.templates import overlapping_class_probabilities
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

__all__ = ["PValueLaw", "pvalue_law", "law_for_result", "law_params", "bin_index",
           "linear_complexity_class_probabilities", "UNIFORMITY_EDGES", "MC_REPLICATES"]

#: Edges of the ten bins of SP 800-22 section 4.2.2, exactly as ``numpy.histogram`` uses them.
UNIFORMITY_EDGES = np.linspace(0.0, 1.0, 11)
#: Replicates R of a Monte Carlo table (sufficient statistics drawn from their exact law).
MC_REPLICATES = 200_000
#: Bits simulated for the DFT table; below DFT_MC_MIN replicates the lattice model is used.
#: (R = 20,000 at n = 10^4: with R = 4,000 the table's own error, though allowed for by the
#: 1 + m/R factor, made a good generator FAIL once in 16 runs of m = 1000.)
DFT_MC_BUDGET = 200_000_000
DFT_MC_MIN = 2_000
#: Fixed entropy of the Monte Carlo tables: a table is a function of (test, n, parameters) only.
MC_ENTROPY = 80022
#: Longest n for which the runs and template laws are computed (their cost grows as n); beyond
#: it they are taken as continuous: at n = 10^6 the exact runs law puts 0.1 +/- 2e-4 in every
#: bin, and the template law 0.1 +/- 1.3e-3 (within its Monte Carlo error).
LARGE_N = 2_000_000

_ENUMERATE_MAX = 3_000_000
_LOG2 = math.log(2.0)


@dataclass(frozen=True)
class PValueLaw:
    """Law under H0 of one test's p-value, as the two-level analysis needs it.

    Attributes
    ----------
    kind : {"exact", "monte-carlo", "approximate", "continuous", "unknown"}
        How the law was obtained (module docstring).
    bins : tuple of 10 float, or None
        P(p-value in bin i) for the bins [0, .1), [.1, .2), ..., [.9, 1] of
        :data:`UNIFORMITY_EDGES`; 1/10 each for "continuous", None for "unknown".
    pass_probability : float or None
        P(p-value >= alpha); 1 - alpha for "continuous", None for "unknown".
    alpha : float
        The first-level level the pass probability refers to.
    method : str
        One sentence naming the statistic's law and how it was computed.
    replicates : int or None
        R for "monte-carlo" (the second-level chi-square is divided by 1 + m/R).
    reason : str or None
        Why the law is unknown (kind "unknown").
    """

    kind: str
    bins: tuple[float, ...] | None
    pass_probability: float | None
    alpha: float
    method: str
    replicates: int | None = None
    reason: str | None = None

    @property
    def known(self) -> bool:
        """True unless kind is "unknown"."""
        return self.kind != "unknown"


def bin_index(p) -> np.ndarray:
    """Bin of each p-value among the ten of :data:`UNIFORMITY_EDGES` (last bin closed).

    Parameters
    ----------
    p : (k,) array_like of float in [0, 1]

    Returns
    -------
    (k,) ndarray of int in 0..9
        The same assignment as ``numpy.histogram(p, bins=UNIFORMITY_EDGES)``.
    """
    idx = np.searchsorted(UNIFORMITY_EDGES, np.asarray(p, dtype=float), side="right") - 1
    return np.clip(idx, 0, 9)


def _from_atoms(p, w, alpha, kind, method, replicates=None) -> PValueLaw:
    p = np.asarray(p, dtype=float).ravel()
    w = np.asarray(w, dtype=float).ravel()
    tot = float(w.sum())
    b = np.bincount(bin_index(p), weights=w, minlength=10) / tot
    passp = float(w[p >= alpha].sum()) / tot
    return PValueLaw(kind, tuple(float(v) for v in b), passp, alpha, method, replicates)


def _continuous(alpha, why) -> PValueLaw:
    return PValueLaw("continuous", (0.1,) * 10, 1.0 - alpha, alpha,
                     f"continuous: {why}; SP 800-22 section 4.2.2 as published (10 equal bins)")


def _unknown(alpha, why) -> PValueLaw:
    return PValueLaw("unknown", None, None, alpha, "law not available", None, why)


def _rng(key: str, *ints) -> np.random.Generator:
    # the CRC-32 of the whole key (a name's stream key would stop at its first "["), then the sizes
    return stream(MC_ENTROPY, zlib.crc32(key.encode()), *(int(i) for i in ints))


@functools.lru_cache(maxsize=4)
def _lgamma_table(n: int) -> np.ndarray:
    """log(i!) for i = 0..n."""
    return special.gammaln(np.arange(n + 1, dtype=float) + 1.0)


def _binomial_half(n: int, width: float = 40.0):
    """k and P(K = k) for K ~ Binomial(n, 1/2), k within `width` sd of n/2."""
    sd = math.sqrt(n) / 2.0
    lo = max(0, int(math.floor(n / 2.0 - width * sd - 1)))
    hi = min(n, int(math.ceil(n / 2.0 + width * sd + 1)))
    k = np.arange(lo, hi + 1)
    lg = special.gammaln
    logp = lg(n + 1.0) - lg(k + 1.0) - lg(n - k + 1.0) - n * _LOG2
    w = np.exp(logp)
    return k, w / w.sum()


# ---- exact laws ---------------------------------------------------------------------------------

def _frequency(n, alpha):
    k, w = _binomial_half(n)
    s_obs = np.abs(2 * k - n) / math.sqrt(n)           # frequency(): |S_n| / sqrt(n)
    p = special.erfc(s_obs / math.sqrt(2.0))
    return _from_atoms(p, w, alpha, "exact", "exact: S_n = 2K - n, K ~ Binomial(n, 1/2)")


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.size * b.size <= 4_000_000:
        out = np.convolve(a, b)
    else:
        L = a.size + b.size - 1
        size = 1 << (L - 1).bit_length()
        out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:L]
    return np.clip(out, 0.0, None)


def _convolution_power(pmf: np.ndarray, N: int):
    """(offset, pmf) of the sum of N i.i.d. copies of a variable with law ``pmf`` on 0..len-1.

    Binary powering; each partial sum of c terms is cut to mean +/- 60 sd (c * mean,
    c * var), far beyond any mass that affects a bin probability.
    """
    x = np.arange(pmf.size, dtype=float)
    mean1 = float(np.sum(x * pmf))
    var1 = float(np.sum((x - mean1) ** 2 * pmf))

    def cut(off, arr, c):
        lo = int(math.floor(c * mean1 - 60.0 * math.sqrt(c * var1))) - off
        hi = int(math.ceil(c * mean1 + 60.0 * math.sqrt(c * var1))) - off
        lo, hi = max(lo, 0), min(hi, arr.size - 1)
        return off + lo, arr[lo: hi + 1]

    res = (0, np.ones(1), 0)
    base = (0, pmf, 1)
    while N:
        if N & 1:
            off, arr = cut(res[0] + base[0], _convolve(res[1], base[1]), res[2] + base[2])
            res = (off, arr, res[2] + base[2])
        N >>= 1
        if N:
            off, arr = cut(2 * base[0], _convolve(base[1], base[1]), 2 * base[2])
            base = (off, arr, 2 * base[2])
    return res[0], res[1]


def _block_frequency(n, M, alpha):
    N = n // M
    k = np.arange(M + 1)
    lg = special.gammaln
    wk = np.exp(lg(M + 1.0) - lg(k + 1.0) - lg(M - k + 1.0) - M * _LOG2)
    d = 2 * k - M
    # sum of (2k_i - M)^2 over the blocks is 4 T (M even, t = (d/2)^2) or 8 T + N (M odd,
    # t = (d^2 - 1)/8): an integer lattice
    t = (d // 2) ** 2 if M % 2 == 0 else (d * d - 1) // 8
    pmf = np.bincount(t, weights=wk)
    off, law = _convolution_power(pmf, N)
    T = off + np.arange(law.size, dtype=float)
    U = 4.0 * T if M % 2 == 0 else 8.0 * T + N
    chi2 = U / M                                        # = 4M sum (k_i/M - 1/2)^2
    p = special.gammaincc(N / 2.0, chi2 / 2.0)
    return _from_atoms(p, law, alpha, "exact",
                       f"exact: sum over N = {N} blocks of (2k_i - M)^2, k_i ~ Binomial({M}, 1/2),"
                       " by convolution")


def _runs(n, alpha):
    tau = 2.0 / math.sqrt(n)
    k = np.arange(1, n // 2 + 1)                        # P(k, v) = P(n - k, v): half the k
    k = k[~(np.abs(k / n - 0.5) > tau)]                 # runs(): not applicable when > tau
    if k.size == 0:
        return _unknown(alpha, f"the runs test is never applicable at n = {n}")
    mult = np.where(2 * k == n, 1.0, 2.0)
    lg = _lgamma_table(n)
    span = int(math.ceil(8.5 * (math.sqrt(n) / 4.0 + 1.0))) + 2   # 8.5 sd of r = V // 2
    rc = np.floor(k * (n - k) / n).astype(np.int64)
    ps, ws = [], []
    step = max(1, 1_000_000 // (2 * span + 1))
    off = np.arange(-span, span + 1)
    for j0 in range(0, k.size, step):
        kk = k[j0: j0 + step, None]
        n1, n0 = kk, n - kk                             # ones, zeros (n1 <= n0)
        r = rc[j0: j0 + step, None] + off
        ok = (r >= 1) & (r <= n1)
        rr = np.clip(r, 1, n1)
        a1, a0 = n1 - 1, n0 - 1
        c1m = lg[a1] - lg[rr - 1] - lg[a1 - rr + 1]     # log C(n1-1, r-1)
        c0m = lg[a0] - lg[rr - 1] - lg[a0 - rr + 1]     # log C(n0-1, r-1)
        # log C(a, r) = log C(a, r-1) + log((a - r + 1)/r); zero when r > a
        with np.errstate(divide="ignore"):
            c1 = c1m + np.log(np.maximum(a1 - rr + 1, 0) / rr)
            c0 = c0m + np.log(np.maximum(a0 - rr + 1, 0) / rr)
        base = math.log(2.0) * (1 - n) + np.log(mult[j0: j0 + step, None])
        # P(K = k, V = 2r) = 2 C(n1-1, r-1) C(n0-1, r-1) / 2^n; P(K = k, V = 2r + 1) =
        # [C(n1-1, r) C(n0-1, r-1) + C(n1-1, r-1) C(n0-1, r)] / 2^n  (Mood 1940)
        we = np.where(ok, np.exp(c1m + c0m + base), 0.0)
        wo = np.where(ok, 0.5 * (np.exp(c1 + c0m + base) + np.exp(c1m + c0 + base)), 0.0)
        pik = kk / n                                    # runs(): pi = ones / n
        c = 2.0 * n * pik * (1.0 - pik)
        s_ = 2.0 * math.sqrt(2.0 * n) * pik * (1.0 - pik)
        for v, w in ((2 * r, we), (2 * r + 1, wo)):
            ps.append(special.erfc(np.abs(v - c) / s_).ravel())
            ws.append(w.ravel())
    return _from_atoms(np.concatenate(ps), np.concatenate(ws), alpha, "exact",
                       "exact: joint law of the number of ones and of runs (Mood 1940), "
                       "conditional on the frequency prerequisite")


def _multinomial_atoms(N, pi_true, pi_test, key, n, pval, what):
    """Law of a chi-square over multinomial class counts: enumeration or Monte Carlo."""
    sd = np.sqrt(N * pi_true * (1.0 - pi_true))
    ranges = []
    for i in range(len(pi_true) - 1):
        lo = max(0, int(math.floor(N * pi_true[i] - 8.0 * sd[i])))
        hi = min(N, int(math.ceil(N * pi_true[i] + 8.0 * sd[i])))
        ranges.append(np.arange(lo, hi + 1))
    size = math.prod(r.size for r in ranges)
    if size <= _ENUMERATE_MAX:
        grids = np.meshgrid(*ranges, indexing="ij", sparse=False)
        nu = np.stack([g.ravel() for g in grids], axis=1)
        last = N - nu.sum(axis=1)
        ok = last >= 0
        nu = np.concatenate([nu[ok], last[ok, None]], axis=1)
        lg = special.gammaln
        logw = lg(N + 1.0) - lg(nu + 1.0).sum(axis=1) + (nu * np.log(pi_true)).sum(axis=1)
        w = np.exp(logw)
        kind, method, R = "exact", f"exact: {what} ~ Multinomial(N = {N}), enumerated", None
    else:
        R = MC_REPLICATES
        nu = _rng(key, n, N).multinomial(N, pi_true, size=R)
        w = np.ones(R)
        kind, method = "monte-carlo", f"monte-carlo: {what} ~ Multinomial(N = {N}), R = {R}"
    chi2 = np.sum((nu - N * pi_test) ** 2 / (N * pi_test), axis=1)
    return pval(chi2), w, kind, method, R


def _longest_run(n, M, constants, alpha):
    if M is None:
        M = 8 if n < 6272 else (128 if n < 750000 else 10000)
    V, pi_c = longest_run_class_probabilities(M, constants)
    _, pi_e = longest_run_class_probabilities(M, "corrected")
    N = n // M
    K = len(V) - 1
    p, w, kind, method, R = _multinomial_atoms(
        N, pi_e, pi_c, "longest_run", n, lambda c: special.gammaincc(K / 2.0, c / 2.0),
        f"class counts of the longest run in {M}-bit blocks (exact class probabilities)")
    return _from_atoms(p, w, alpha, kind, method, R)


def _rank(n, M, Q, alpha):
    N = n // (M * Q)
    pc = rank_probabilities(M, Q)
    p, w, kind, method, R = _multinomial_atoms(
        N, pc, pc, "rank", n, lambda c: np.exp(-c / 2.0),
        f"counts of rank {M}, {M - 1}, lower of {M}x{Q} matrices (closed-form probabilities)")
    return _from_atoms(p, w, alpha, kind, method, R)


def _cusum(n, alpha):
    k, w = _binomial_half(n)
    s = 2 * k - n                                       # support of S_n, step 2
    cdf = np.concatenate([[0.0], np.cumsum(w)])

    def F(v):  # P(S_n <= v), v integer array
        idx = np.searchsorted(s, v, side="right")
        return cdf[idx]

    def G(z):  # P(max_{k<=n} |S_k| < z): images at (4j +- 1) z, open intervals
        jmax = (n + 3 * z) // (4 * z) + 1
        j = np.arange(-jmax, jmax + 1)
        a, b, c = (4 * j - 1) * z, (4 * j + 1) * z, (4 * j + 3) * z
        return float(np.sum((F(b - 1) - F(a)) - (F(c - 1) - F(b))))

    # P(max |S_k| < z) ~ exp(-pi^2 n / (8 z^2)) < 1e-18 below 0.15 sqrt(n)
    zlo = max(1, int(0.15 * math.sqrt(n)))
    zhi = min(n, int(9.0 * math.sqrt(n)) + 3)
    zs = np.arange(zlo, zhi + 1)
    g = np.array([G(int(z)) for z in zs] + [1.0])     # G(zhi + 1) ~ 1 (tail < 1e-17)
    prob = np.clip(np.diff(g), 0.0, None)               # P(Z = z) = G(z + 1) - G(z)
    keep = prob > 1e-18
    p = np.array([_cusum_pvalue(int(z), n) for z in zs[keep]])
    return _from_atoms(p, prob[keep], alpha, "exact",
                       "exact: max_k |S_k| of the simple random walk (method of images with "
                       "binomial probabilities); the reverse walk has the same law")


# ---- Monte Carlo and approximate laws -------------------------------------------------------------

@functools.lru_cache(maxsize=8)
def _template_count_law(M: int, m: int) -> np.ndarray:
    """P(W = w), w = 0..M//m, for W = occurrences of an aperiodic m-bit word in M fair bits.

    Recurrence of the generating function 1/(1 - 2z - (u-1) z^m):
    P_L = P_{L-1} + 2^-m (u - 1) P_{L-m}, run m positions at a time (a cumulative sum over the
    block of the previous block's terms).
    """
    mu = (M - m + 1) / 2.0 ** m
    sd = math.sqrt(max(mu, 1.0))
    kmax = min(M // m, int(math.ceil(mu + 40.0 * sd + 40)))
    c = 2.0 ** -m
    block = np.zeros((m, kmax + 1))                     # P_L for L = L0 .. L0 + m - 1
    block[:, 0] = 1.0                                   # L < m: no occurrence
    L0 = 0
    while L0 + m <= M:
        d = np.zeros_like(block)
        d[:, 1:] = block[:, :-1]
        d -= block                                      # (u - 1) P_{L-m}
        block = block[-1] + c * np.cumsum(d, axis=0)    # P_{L0+m} .. P_{L0+2m-1}
        L0 += m
    return np.clip(block[M - L0], 0.0, None)


def _templates(n, m, N, alpha):
    M = n // N
    law = _template_count_law(M, m)
    law = law / law.sum()
    R = MC_REPLICATES
    rng = _rng("non_overlapping_template", n, m, N)
    cdf = np.cumsum(law)
    W = np.searchsorted(cdf, rng.random((R, N)) * cdf[-1], side="right")
    W = np.minimum(W, law.size - 1)
    mu = (M - m + 1) / 2.0 ** m
    var = M * (1.0 / 2.0 ** m - (2.0 * m - 1.0) / 2.0 ** (2.0 * m))
    chi2 = np.sum((W - mu) ** 2, axis=1) / var
    p = special.gammaincc(N / 2.0, chi2 / 2.0)
    return _from_atoms(p, np.ones(R), alpha, "monte-carlo",
                       f"monte-carlo: N = {N} block counts drawn from the exact law of the count "
                       f"of an aperiodic {m}-bit template in {M} bits (the same for all), R = {R}",
                       R)


def _overlapping(n, m, M, K, constants, alpha):
    N = n // M
    pi_c = overlapping_class_probabilities(m, M, K, constants)
    pi_e = overlapping_class_probabilities(m, M, K, "corrected")
    R = MC_REPLICATES
    nu = _rng("overlapping_template", n, m, M, K).multinomial(N, pi_e, size=R)
    chi2 = np.sum((nu - N * pi_c) ** 2 / (N * pi_c), axis=1)
    p = special.gammaincc(K / 2.0, chi2 / 2.0)
    return _from_atoms(p, np.ones(R), alpha, "monte-carlo",
                       f"monte-carlo: class counts ~ Multinomial(N = {N}, exact probabilities "
                       f"of Hamano-Kaneko), statistic with the {constants} constants, R = {R}", R)


def linear_complexity_class_probabilities(M: int) -> np.ndarray:
    """Exact probabilities of the seven T classes of the linear complexity test for block length M.

    Parameters
    ----------
    M : int
        Block length (bits), M >= 2.

    Returns
    -------
    (7,) ndarray of float
        P(T <= -2.5), P(-2.5 < T <= -1.5), ..., P(T > 2.5) with
        :math:`T = (-1)^M (L - \\mu) + 2/9`, L the linear complexity of M fair bits.

    Notes
    -----
    The number of binary sequences of length M with linear complexity L is 1 for L = 0,
    :math:`2^{2L-1}` for 1 <= L <= M/2 and :math:`2^{2(M-L)}` for L > M/2 (Gustavson 1976;
    Rueppel 1986), so P(L) is exact; the classes are cut with the test's own mu and
    ``searchsorted`` rule. For M = 500 the result agrees with SP 800-22 section 3.10's
    0.010417, 0.03125, 0.125, 0.5, 0.25, 0.0625, 0.020833 to 1e-6.

    References
    ----------
    .. [1] Gustavson F. G. (1976) IBM J. Res. Dev. 20, 204-212.
    .. [2] Rueppel R. A. (1986) Analysis and Design of Stream Ciphers, Springer, chapter 4.
    """
    L = np.arange(M + 1)
    e = np.where(L == 0, 0, np.where(2 * L <= M, 2 * L - 1, 2 * (M - L)))
    prob = np.exp2((e - M).astype(float))
    sign = -1.0 if M % 2 else 1.0
    mu = M / 2.0 + (9.0 + (-sign)) / 36.0 - (M / 3.0 + 2.0 / 9.0) / 2.0 ** M
    T = sign * (L - mu) + 2.0 / 9.0
    cls = np.searchsorted(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]), T, side="left")
    return np.bincount(cls, weights=prob, minlength=7) / prob.sum()


def _linear_complexity(n, M, alpha):
    N = n // M
    pi_e = linear_complexity_class_probabilities(M)
    pi_c = _complexity._PI
    R = MC_REPLICATES
    nu = _rng("linear_complexity", n, M).multinomial(N, pi_e, size=R)
    chi2 = np.sum((nu - N * pi_c) ** 2 / (N * pi_c), axis=1)
    p = special.gammaincc(3.0, chi2 / 2.0)
    return _from_atoms(p, np.ones(R), alpha, "monte-carlo",
                       f"monte-carlo: class counts ~ Multinomial(N = {N}, exact class "
                       f"probabilities for M = {M}), statistic with sts-2.1.2's constants, "
                       f"R = {R}", R)


def _dft(n, alpha):
    import scipy.fft

    N0 = 0.95 * n / 2.0
    sd = math.sqrt(n / 4.0 * 0.95 * 0.05)
    R = min(MC_REPLICATES, DFT_MC_BUDGET // n)
    if R >= DFT_MC_MIN:
        rng = _rng("dft", n)
        T2 = _LOG20_STS * n
        batch = max(1, (1 << 22) // n)
        N1 = []
        for s in range(0, R, batch):
            b = min(batch, R - s)
            X = 2.0 * rng.integers(0, 2, size=(b, n), dtype=np.int8) - 1.0
            F = scipy.fft.rfft(X, axis=1)[:, : n // 2]
            N1.append(np.count_nonzero(F.real ** 2 + F.imag ** 2 < T2, axis=1))
        N1 = np.concatenate(N1)
        d = (N1 - N0) / sd
        p = special.erfc(np.abs(d) / math.sqrt(2.0))
        return _from_atoms(p, np.ones(R), alpha, "monte-carlo",
                           f"monte-carlo: the test run on R = {R} simulated fair sequences", R)
    k = np.arange(max(0, int(N0 - 12 * sd)), min(n // 2, int(N0 + 12 * sd) + 1) + 1)
    w = special.ndtr((k + 0.5 - N0) / sd) - special.ndtr((k - 0.5 - N0) / sd)
    d = (k - N0) / sd
    p = special.erfc(np.abs(d) / math.sqrt(2.0))
    return _from_atoms(p, w, alpha, "approximate",
                       "approximate: N_1 on the integer lattice, normal with the mean and "
                       "variance of the test (continuity-corrected)")


# ---- dispatch -------------------------------------------------------------------------------------

def _key(name: str) -> str:
    return name.split("[", 1)[0].removeprefix("nist_")


@functools.lru_cache(maxsize=512)
def pvalue_law(key: str, n: int, params: tuple = (), alpha: float = 0.01) -> PValueLaw:
    """Law under H0 of the p-value of one SP 800-22 test at sequence length n.

    Parameters
    ----------
    key : str
        Test key of :data:`rngcert.stats.nist.DEFAULT_PARAMS` (``"frequency"``, ``"runs"``,
        ``"non_overlapping_template"``, ...); every name of one test shares the law
        (all 148 templates, both cusum modes, both serial statistics are handled per name by
        :func:`law_for_result`).
    n : int
        Sequence length (bits) the p-value was computed from.
    params : tuple
        The parameters the law depends on, as :func:`law_for_result` builds them from a
        result's details: block frequency ``(M,)``, longest run ``(M, constants)``, rank
        ``(M, Q)``, templates ``(m, N)``, overlapping ``(m, M, K, constants)``, linear
        complexity ``(M,)``, serial and approximate entropy ``(m,)``; otherwise ``()``.
    alpha : float, default 0.01
        Level of the pass probability P(p >= alpha).

    Returns
    -------
    PValueLaw
        Cached: each (key, n, params, alpha) is computed once per process. The Monte Carlo
        tables use a fixed seed (:data:`MC_ENTROPY`), so every call gives the same law.

    Raises
    ------
    ValueError
        If n < 1.

    Notes
    -----
    The p-value's law is obtained by evaluating the test's own p-value formula on every atom
    of the sufficient statistic (or on every Monte Carlo draw), so both the discreteness of the
    statistic and the error of the asymptotic approximation are in the bin probabilities.
    Methods per test: module docstring. Costs at n = 10^6: about 1-3 s in all, once.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 4.2.
    .. [2] L'Ecuyer P., Simard R. (2007) TestU01. ACM TOMS 33(4).
    """
    if n < 1:
        raise ValueError(f"n={n!r}; a sequence length >= 1 is required")
    if key == "frequency":
        return _frequency(n, alpha)
    if key == "block_frequency":
        return _block_frequency(n, params[0], alpha)
    if key == "runs":
        if n > LARGE_N:
            return _continuous(alpha, f"n = {n} > {LARGE_N}: V has sd sqrt(n)/2 >= 700 runs, "
                                      "and the exact law at n = 10^6 is within 2e-4 of 1/10 "
                                      "per bin")
        return _runs(n, alpha)
    if key == "longest_run":
        return _longest_run(n, params[0], params[1], alpha)
    if key == "rank":
        return _rank(n, params[0], params[1], alpha)
    if key == "cumulative_sums":
        return _cusum(n, alpha)
    if key == "non_overlapping_template":
        if n > LARGE_N:
            return _continuous(alpha, f"n = {n} > {LARGE_N}: each block count has sd >= 20, "
                                      "and the law at n = 10^6 is within 1.3e-3 of 1/10 per "
                                      "bin")
        return _templates(n, params[0], params[1], alpha)
    if key == "overlapping_template":
        return _overlapping(n, *params, alpha)
    if key == "linear_complexity":
        return _linear_complexity(n, params[0], alpha)
    if key == "dft":
        return _dft(n, alpha)
    if key == "universal":
        return _continuous(alpha, "Maurer's statistic averages the logs of K >= 1000s of "
                                  "distances")
    if key == "serial":
        if params and params[0] >= 8:
            return _continuous(alpha, f"chi-squares over 2^{params[0]} pattern counts")
        return _unknown(alpha, "the serial test's p-value law is computed only for m >= 8 "
                               "(where it is a chi-square over >= 64 cells)")
    if key == "approximate_entropy":
        if params and params[0] >= 6:
            return _continuous(alpha, f"a chi-square over 2^{params[0]} pattern counts")
        return _unknown(alpha, "the approximate entropy p-value law is computed only for "
                               "m >= 6")
    if key in ("random_excursions", "random_excursions_variant"):
        return _continuous(alpha, "mixed over the random number of cycles J >= 500")
    return _unknown(alpha, f"no law of the p-value is known to rngcert for test {key!r}")


def law_params(name: str, details) -> tuple[str, tuple]:
    """Test key and law parameters of a battery result, from its name and details.

    Parameters
    ----------
    name : str
        Result name, e.g. ``"nist_non_overlapping_template[000000001]"``.
    details : mapping or None
        The result's ``details`` (block lengths, template length, constants...).

    Returns
    -------
    key : str
        Test key (``"non_overlapping_template"``).
    params : tuple
        The arguments :func:`pvalue_law` takes for that key (see there).

    Raises
    ------
    KeyError, TypeError, ValueError
        When ``details`` lacks a parameter the law of that test depends on.
    """
    key = _key(name)
    d = details or {}
    if key == "block_frequency":
        return key, (int(d["M"]),)
    if key == "longest_run":
        return key, (int(d["M"]), str(d.get("constants", "reference")))
    if key == "rank":
        return key, (int(d["M"]), int(d["Q"]))
    if key == "non_overlapping_template":
        return key, (int(d["m"]), int(d["N"]))
    if key == "overlapping_template":
        return key, (int(d["m"]), int(d["M"]), int(d["K"]), str(d.get("constants", "reference")))
    if key == "linear_complexity":
        return key, (int(d["M"]),)
    if key in ("serial", "approximate_entropy"):
        return key, (int(d["m"]),)
    return key, ()


def law_for_result(result, alpha: float = 0.01) -> PValueLaw:
    """Law under H0 of an applicable SP 800-22 result's p-value (see :func:`pvalue_law`).

    Parameters
    ----------
    result : TestResult
        A first-level result of :func:`rngcert.stats.nist.run_sp800_22` (its name, n and
        details determine the law).
    alpha : float, default 0.01

    Returns
    -------
    PValueLaw
        kind "unknown" for a name outside the battery's 15 tests or details lacking the
        parameters the law needs.
    """
    if not result.name.startswith("nist_"):
        return _unknown(alpha, f"{result.name!r} is not a result of the SP 800-22 battery")
    try:
        key, params = law_params(result.name, result.details)
    except (KeyError, TypeError, ValueError) as e:
        return _unknown(alpha, f"{result.name}: the details lack the parameter {e} the law "
                               "depends on")
    return pvalue_law(key, int(result.n), params, float(alpha))
