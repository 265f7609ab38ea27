"""SP 800-22 section 2.9: Maurer's "universal statistical" test."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, erfc, not_applicable, result
from rngcert.stats.result import Requirement

__all__ = ["universal"]

# sts-2.1.2 universal.c: expected value and variance of f_n for L = 0..16 (SP 800-22 section 2.9.4).
_EXPECTED = (0, 0, 0, 0, 0, 0, 5.2177052, 6.1962507, 7.1836656, 8.1764248, 9.1723243, 10.170032,
             11.168765, 12.168070, 13.167693, 14.167488, 15.167379)
_VARIANCE = (0, 0, 0, 0, 0, 0, 2.954, 3.125, 3.238, 3.311, 3.356, 3.384, 3.401, 3.410, 3.416,
             3.419, 3.421)
# sts-2.1.2: L is the largest value whose minimum n is reached.
_L_THRESHOLDS = ((16, 1059061760), (15, 496435200), (14, 231669760), (13, 107560960),
                 (12, 49643520), (11, 22753280), (10, 10342400), (9, 4654080), (8, 2068480),
                 (7, 904960), (6, 387840))


def _choose_L(n: int) -> int:
    for L, nmin in _L_THRESHOLDS:
        if n >= nmin:
            return L
    return 5


def universal(bits, L: int | None = None, Q: int | None = None):
    """Maurer's universal statistical test, SP 800-22 rev1a section 2.9.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    L : int in 6..16, optional
        Block length; default as sts-2.1.2 from n (L = 7 for 904,960 <= n < 2,068,480, so 7 for
        10^6 bits).
    Q : int, optional
        Initialisation blocks; default 10 * 2**L (1280 for L = 7). Must be >= 10 * 2**L.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_universal"``, statistic f_n (mean log2 distance to the previous occurrence
        of each block). NotApplicable when n < 387,840 (L would be below 6) or when fewer than
        one test block remains after the Q initialisation blocks.

    Notes
    -----
    H0: the sequence is not significantly compressible. K = n // L - Q test blocks;
    :math:`f_n = K^{-1}\\sum_{i=Q+1}^{Q+K} \\log_2(i - T_i)` with T_i the index of the previous
    block with the same value (0 if none);
    :math:`c = 0.7 - 0.8/L + (4 + 32/L) K^{-3/L}/15`, :math:`\\sigma = c\\sqrt{\\mathrm{var}(L)/K}`,
    :math:`p = \\operatorname{erfc}(|f_n - E(L)|/(\\sqrt 2\\sigma))` (section 2.9.4; constants of
    sts-2.1.2). The previous occurrences are found with one stable sort, not a loop.
    Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.9 and 3.9.
    .. [2] Maurer U. (1992) A universal statistical test for random bit generators. J. Cryptology
       5, 89-105. Coron J.-S., Naccache D. (1998) An accurate evaluation of Maurer's universal
       test. SAC '98, LNCS 1556 (the variance correction c).
    """
    x = _bits_iv(bits)
    n = x.size
    name = "nist_universal"
    if L is None:
        L = _choose_L(n)
        if L < 6:
            return not_applicable(name, Requirement.INDEPENDENCE, n,
                                  f"n = {n} < 387,840, the minimum for L = 6 (SP 800-22 "
                                  "section 2.9.7)")
    if not (isinstance(L, (int, np.integer)) and 6 <= L <= 16):
        raise InputError(f"L={L!r}; an integer in 6..16 is required")
    if Q is None:
        Q = 10 * (1 << L)
    if Q < 10 * (1 << L):
        raise InputError(f"Q={Q!r}; at least 10 * 2**L = {10 * (1 << L)} is required")
    K = n // L - Q
    if K < 1:
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              f"n = {n} leaves no test block after Q = {Q} initialisation blocks "
                              f"of L = {L} bits")
    nb = Q + K
    w = (1 << np.arange(L - 1, -1, -1)).astype(np.int64)
    codes = x[: nb * L].reshape(nb, L).astype(np.int64) @ w
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    idx = order + 1                                   # 1-based block indices, sorted by value
    prev_sorted = np.zeros(nb, dtype=np.int64)
    same = sc[1:] == sc[:-1]
    prev_sorted[1:] = np.where(same, idx[:-1], 0)
    prev = np.empty(nb, dtype=np.int64)
    prev[order] = prev_sorted
    i = np.arange(Q + 1, nb + 1)
    fn = float(np.sum(np.log2(i - prev[Q:]))) / K
    c = 0.7 - 0.8 / L + (4 + 32 / L) * K ** (-3 / L) / 15
    sigma = c * math.sqrt(_VARIANCE[L] / K)
    p = erfc(abs(fn - _EXPECTED[L]) / (math.sqrt(2.0) * sigma))
    return result(name, Requirement.INDEPENDENCE, fn, None, p, n, "asymptotic",
                  {"L": L, "Q": Q, "K": K, "expected": _EXPECTED[L], "sigma": sigma,
                   "discarded_bits": n - nb * L})
