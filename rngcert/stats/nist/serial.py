"""SP 800-22 sections 2.11 and 2.12: serial test and approximate entropy test."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats.nist._common import _bits_iv, _int_param_iv, igamc, not_applicable, result, windows
from rngcert.stats.result import Requirement

__all__ = ["serial", "approximate_entropy"]


def _pattern_counts(x: np.ndarray, m: int) -> np.ndarray:
    """Counts of the 2**m overlapping m-bit patterns of the circular (augmented) sequence."""
    if m == 0:
        return np.array([x.size], dtype=np.int64)
    return np.bincount(windows(x, m, circular=True), minlength=1 << m)


def _psi2(counts: np.ndarray, m: int, n: int) -> float:
    if m <= 0:
        return 0.0
    c = counts.astype(np.int64)
    return float(int(np.sum(c * c))) * (2.0 ** m) / n - n   # exact integer sum of squares


def serial(bits, m: int = 16, *, _counts=None):
    """Serial test, SP 800-22 rev1a section 2.11.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    m : int, default 16
        Pattern length (m >= 2).

    Returns
    -------
    list of TestResult, or NotApplicable
        ``nist_serial[1]`` (statistic :math:`\\nabla\\psi^2_m`, 2^(m-1) df) and
        ``nist_serial[2]`` (:math:`\\nabla^2\\psi^2_m`, 2^(m-2) df). NotApplicable when m > n.

    Notes
    -----
    H0: every m-bit pattern is equally likely. On the sequence augmented with its first m - 1
    bits (section 2.11.4 step 1), :math:`\\psi^2_m = 2^m/n \\sum_i \\nu_i^2 - n`;
    :math:`\\nabla\\psi^2_m = \\psi^2_m - \\psi^2_{m-1}`,
    :math:`\\nabla^2\\psi^2_m = \\psi^2_m - 2\\psi^2_{m-1} + \\psi^2_{m-2}`;
    :math:`p_1 = Q(2^{m-2}, \\nabla\\psi^2_m/2)`, :math:`p_2 = Q(2^{m-3}, \\nabla^2\\psi^2_m/2)`
    (section 2.11.4 step 5). The worked example's step-5 values 0.9057/0.8805 are misprints;
    the formulas give 0.808792/0.670320. SP 800-22 recommends m < floor(log2 n) - 2
    (section 2.11.7), enforced by the battery. Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.11 and 3.11.
    .. [2] Good I. J. (1953) The serial test for sampling numbers and other tests for randomness.
       Proc. Cambridge Philos. Soc. 49, 276-284.
    """
    x = _bits_iv(bits)
    m = _int_param_iv(m, "m", 2)
    n = x.size
    if m > n:
        return not_applicable("nist_serial", Requirement.INDEPENDENCE, n,
                              f"pattern length m = {m} exceeds n = {n}")
    if _counts is None:
        cm = _pattern_counts(x, m)
    else:
        cm = _counts
    # counts for m-1 and m-2 by marginalising the circular m-pattern counts (exact: every
    # circular (m-1)-window is the prefix of exactly one circular m-window)
    c1 = cm.reshape(-1, 2).sum(axis=1)
    c2 = c1.reshape(-1, 2).sum(axis=1)
    psi = [_psi2(cm, m, n), _psi2(c1, m - 1, n), _psi2(c2, m - 2, n)]
    del1 = psi[0] - psi[1]
    del2 = psi[0] - 2.0 * psi[1] + psi[2]
    p1 = igamc(2.0 ** (m - 2), del1 / 2.0)
    p2 = igamc(2.0 ** (m - 3), del2 / 2.0)
    det = {"m": m, "psi2_m": psi[0], "psi2_m1": psi[1], "psi2_m2": psi[2]}
    return [
        result("nist_serial[1]", Requirement.INDEPENDENCE, del1, 2.0 ** (m - 1), p1, n,
               "asymptotic", det),
        result("nist_serial[2]", Requirement.INDEPENDENCE, del2, 2.0 ** (m - 2), p2, n,
               "asymptotic", det),
    ]


def _phi(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0].astype(np.float64)
    return float(np.sum(c * np.log(c / n))) / n


def approximate_entropy(bits, m: int = 10, *, _counts=None):
    """Approximate entropy test, SP 800-22 rev1a section 2.12.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    m : int, default 10
        Block length (m >= 1); patterns of lengths m and m + 1 are counted.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_approximate_entropy"``, statistic :math:`\\chi^2 = 2n(\\ln 2 - ApEn(m))` with
        2^m df. NotApplicable when m + 1 > n.

    Notes
    -----
    H0: the overlapping m- and (m+1)-bit patterns have the frequencies of random bits. On the
    circular sequence, :math:`\\varphi^{(m)} = \\sum_i \\pi_i \\ln \\pi_i` with :math:`\\pi_i` the
    relative counts of m-bit patterns, :math:`ApEn(m) = \\varphi^{(m)} - \\varphi^{(m+1)}`,
    :math:`p = Q(2^{m-1}, \\chi^2/2)` (section 2.12.4). SP 800-22 recommends
    m < floor(log2 n) - 5 (section 2.12.7), enforced by the battery. Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.12 and 3.12.
    .. [2] Pincus S., Singer B. H. (1996) Randomness and degrees of irregularity. PNAS 93,
       2083-2088.
    """
    x = _bits_iv(bits)
    m = _int_param_iv(m, "m", 1)
    n = x.size
    if m + 1 > n:
        return not_applicable("nist_approximate_entropy", Requirement.INDEPENDENCE, n,
                              f"pattern length m + 1 = {m + 1} exceeds n = {n}")
    c_hi = _pattern_counts(x, m + 1) if _counts is None else _counts
    c_lo = c_hi.reshape(-1, 2).sum(axis=1)
    apen = _phi(c_lo, n) - _phi(c_hi, n)
    chi2 = 2.0 * n * (math.log(2.0) - apen)
    p = igamc(2.0 ** (m - 1), chi2 / 2.0)
    return result("nist_approximate_entropy", Requirement.INDEPENDENCE, chi2, 2 ** m, p, n,
                  "asymptotic", {"m": m, "ApEn": apen})
