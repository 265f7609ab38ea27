"""SP 800-22 sections 2.3 and 2.4: runs test and longest run of ones in a block."""

from __future__ import annotations

import functools
import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, _constants_iv, erfc, igamc, not_applicable, result
from rngcert.stats.result import Requirement

__all__ = ["runs", "longest_run", "longest_run_class_probabilities"]


def runs(bits):
    """Runs test, SP 800-22 rev1a section 2.3.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_runs"``, statistic ``V_n(obs)`` = total number of runs. NotApplicable when the
        frequency prerequisite fails: :math:`|\\pi - 1/2| > \\tau = 2/\\sqrt n` (section 2.3.4
        step 2; the strict inequality of sts-2.1.2).

    Notes
    -----
    H0: the oscillation between zeros and ones is that of i.i.d. fair bits.
    :math:`p = \\operatorname{erfc}(|V_n - 2n\\pi(1-\\pi)| / (2\\sqrt{2n}\\,\\pi(1-\\pi)))`
    (section 2.3.4 step 4). Recommended n >= 100 (section 2.3.7). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.3 and 3.3.
    """
    x = _bits_iv(bits)
    n = x.size
    name = "nist_runs"
    pi = np.count_nonzero(x) / n
    tau = 2.0 / math.sqrt(n)
    if pi in (0.0, 1.0):
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              "constant sequence: a single run, no oscillation to test")
    if abs(pi - 0.5) > tau:
        return not_applicable(
            name, Requirement.INDEPENDENCE, n,
            f"frequency prerequisite failed: |pi - 1/2| = {abs(pi - 0.5):.6g} > tau = 2/sqrt(n) "
            f"= {tau:.6g} (SP 800-22 section 2.3.4 step 2)")
    v = 1 + int(np.count_nonzero(x[1:] != x[:-1]))
    arg = abs(v - 2.0 * n * pi * (1.0 - pi)) / (2.0 * math.sqrt(2.0 * n) * pi * (1.0 - pi))
    p = erfc(arg)
    return result(name, Requirement.INDEPENDENCE, v, None, p, n, "asymptotic",
                  {"pi": pi, "tau": tau})


# sts-2.1.2 / SP 800-22 section 3.4 class probabilities, keyed by block length M.
_LONGEST_RUN_TABLE = {
    8: ((1, 2, 3, 4), (0.21484375, 0.3671875, 0.23046875, 0.1875)),
    128: ((4, 5, 6, 7, 8, 9),
          (0.1174035788, 0.242955959, 0.249363483, 0.17517706, 0.102701071, 0.112398847)),
    10000: ((10, 11, 12, 13, 14, 15, 16),
            (0.0882, 0.2092, 0.2483, 0.1933, 0.1208, 0.0675, 0.0727)),
}


@functools.lru_cache(maxsize=None)
def _prob_longest_at_most(M: int, k: int) -> float:
    """P(longest run of ones in M fair bits <= k), by dynamic programming on the current run."""
    state = np.zeros(k + 1)
    state[0] = 1.0
    for _ in range(M):
        new = np.empty_like(state)
        new[0] = 0.5 * state.sum()
        new[1:] = 0.5 * state[:-1]
        state = new
    return float(state.sum())


def longest_run_class_probabilities(M: int, constants: str = "reference") -> tuple[tuple, np.ndarray]:
    """Class boundaries V and class probabilities pi of the longest-run test.

    Parameters
    ----------
    M : {8, 128, 10000}
        Block length.
    constants : {"reference", "corrected"}
        "reference": the rounded values of sts-2.1.2 (and SP 800-22 section 3.4), for M = 10000
        given to only 4 decimals; "corrected": exact probabilities computed by dynamic
        programming over the run length (Fraction-free, double precision).

    Returns
    -------
    V : tuple of int
        Class 0 is "longest run <= V[0]", class j is "== V[j]", the last class ">= V[-1]".
    pi : (K + 1,) ndarray of float
    """
    if M not in _LONGEST_RUN_TABLE:
        raise InputError(f"M={M!r}; allowed: 8, 128, 10000")
    V, ref = _LONGEST_RUN_TABLE[M]
    if _constants_iv(constants) == "reference":
        return V, np.array(ref)
    cdf = np.array([_prob_longest_at_most(M, v) for v in V[:-1]])
    pi = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    return V, pi


def _longest_runs_per_row(blocks: np.ndarray) -> np.ndarray:
    """Longest run of ones in each row of a (N, M) 0/1 array (vectorised, no loop over bits)."""
    dt = np.int16 if blocks.shape[1] < 32768 else np.int32
    c = np.cumsum(blocks, axis=1, dtype=dt)
    reset = np.where(blocks == 0, c, 0)
    np.maximum.accumulate(reset, axis=1, out=reset)
    return (c - reset).max(axis=1)


def longest_run(bits, M: int | None = None, *, constants: str = "reference"):
    """Test for the longest run of ones in a block, SP 800-22 rev1a section 2.4.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    M : {8, 128, 10000} or None
        Block length; None chooses as sts-2.1.2: M = 8 for n < 6272, 128 for n < 750000,
        10000 otherwise.
    constants : {"reference", "corrected"}
        Class probabilities: sts-2.1.2 (default, reproduces Appendix B) or exact (see
        :func:`longest_run_class_probabilities`).

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_longest_run"``, chi-square with K degrees of freedom; NotApplicable for n < 128
        (section 2.4.2) or fewer than one block.

    Notes
    -----
    H0: the longest run of ones within M-bit blocks has the distribution of fair i.i.d. bits.
    :math:`\\chi^2 = \\sum_{i=0}^K (\\nu_i - N\\pi_i)^2 / (N\\pi_i)`, :math:`p = Q(K/2, \\chi^2/2)`
    (section 2.4.4). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.4 and 3.4.
    """
    x = _bits_iv(bits)
    n = x.size
    name = "nist_longest_run"
    if n < 128:
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              f"n = {n} < 128, the minimum of SP 800-22 section 2.4.2")
    if M is None:
        M = 8 if n < 6272 else (128 if n < 750000 else 10000)
    V, pi = longest_run_class_probabilities(M, constants)
    N = n // M
    if N < 1:
        return not_applicable(name, Requirement.INDEPENDENCE, n, f"n = {n} < M = {M}")
    K = len(V) - 1
    longest = _longest_runs_per_row(x[: N * M].reshape(N, M))
    cls = np.clip(longest, V[0], V[-1]) - V[0]
    nu = np.bincount(cls, minlength=K + 1)
    chi2 = float(np.sum((nu - N * pi) ** 2 / (N * pi)))
    p = igamc(K / 2.0, chi2 / 2.0)
    return result(name, Requirement.INDEPENDENCE, chi2, K, p, n,
                  f"asymptotic; class probabilities: {constants}",
                  {"M": M, "N": N, "K": K, "V": list(V), "nu": nu, "pi": pi,
                   "constants": constants})
