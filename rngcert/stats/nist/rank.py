"""SP 800-22 section 2.5: binary matrix rank test."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats.nist._common import _bits_iv, not_applicable, result
from rngcert.stats.result import Requirement

__all__ = ["binary_matrix_rank", "rank_probabilities", "gf2_rank_rows"]


def rank_probabilities(M: int = 32, Q: int = 32) -> np.ndarray:
    """P(rank = M), P(rank = M - 1), P(rank <= M - 2) of a random M x Q binary matrix.

    Closed form (SP 800-22 section 3.5):
    :math:`p_r = 2^{r(Q+M-r)-MQ} \\prod_{i=0}^{r-1} (1-2^{i-Q})(1-2^{i-M}) / (1-2^{i-r})`.
    """
    def p(r):
        prod = 1.0
        for i in range(r):
            prod *= (1.0 - 2.0 ** (i - Q)) * (1.0 - 2.0 ** (i - M)) / (1.0 - 2.0 ** (i - r))
        return 2.0 ** (r * (Q + M - r) - M * Q) * prod

    pM, pM1 = p(M), p(M - 1)
    return np.array([pM, pM1, 1.0 - pM - pM1])


def gf2_rank_rows(rows: np.ndarray, width: int) -> np.ndarray:
    """GF(2) rank of many matrices at once.

    Parameters
    ----------
    rows : (N, R) ndarray of unsigned int
        Row r of matrix k as an integer whose low ``width`` bits are the row's entries.
    width : int
        Number of columns.

    Returns
    -------
    (N,) ndarray of int
        Rank of each matrix (Gauss-Jordan elimination vectorised across matrices; the loop runs
        over the ``width`` columns only).
    """
    rows = np.array(rows, dtype=np.uint64, copy=True)
    N, R = rows.shape
    used = np.zeros((N, R), dtype=bool)
    rank = np.zeros(N, dtype=np.int64)
    ar = np.arange(N)
    for b in range(width - 1, -1, -1):
        have = ((rows >> np.uint64(b)) & np.uint64(1)).astype(bool)
        eligible = have & ~used
        found = eligible.any(axis=1)
        piv = np.argmax(eligible, axis=1)
        pivrow = rows[ar, piv]
        clear = have & found[:, None]
        clear[ar, piv] = False
        rows ^= np.where(clear, pivrow[:, None], np.uint64(0))
        used[ar[found], piv[found]] = True
        rank += found
    return rank


def binary_matrix_rank(bits, M: int = 32, Q: int = 32):
    """Binary matrix rank test, SP 800-22 rev1a section 2.5.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    M, Q : int, default 32
        Rows and columns of each matrix; matrix k is filled row by row from bits
        ``k*M*Q .. (k+1)*M*Q - 1``; the remaining bits are discarded.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_rank"``, chi-square with 2 degrees of freedom over the classes full rank,
        rank M - 1, lower. NotApplicable when N = n // (M Q) < 38 (section 2.5.7; sts-2.1.2).

    Notes
    -----
    H0: the ranks of disjoint sub-matrices follow the law of random binary matrices.
    :math:`\\chi^2 = \\sum (F_i - N p_i)^2/(N p_i)`, :math:`p = e^{-\\chi^2/2}` (section 2.5.4
    step 4; the survival function of chi-square with 2 df). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.5 and 3.5.
    .. [2] Kovalenko I. N. (1972) Distribution of the linear rank of a random matrix. Theory
       Probab. Appl. 17, 342-346.
    """
    x = _bits_iv(bits)
    n = x.size
    name = "nist_rank"
    N = n // (M * Q)
    if N < 38:
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              f"n = {n} gives N = {N} matrices of {M}x{Q} bits; at least 38 are "
                              f"required (n >= {38 * M * Q}, SP 800-22 section 2.5.7)")
    if Q == 32:
        rows = np.packbits(x[: N * M * Q]).view(">u4").astype(np.uint64).reshape(N, M)
    else:
        mats = x[: N * M * Q].reshape(N * M, Q)
        weights = (np.uint64(1) << np.arange(Q - 1, -1, -1, dtype=np.uint64))
        rows = (mats.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64).reshape(N, M)
    r = gf2_rank_rows(rows, Q)
    F = np.array([np.count_nonzero(r == M), np.count_nonzero(r == M - 1), 0])
    F[2] = N - F[0] - F[1]
    p_cls = rank_probabilities(M, Q)
    chi2 = float(np.sum((F - N * p_cls) ** 2 / (N * p_cls)))
    p = math.exp(-chi2 / 2.0)
    return result(name, Requirement.INDEPENDENCE, chi2, 2, p, n, "asymptotic",
                  {"M": M, "Q": Q, "N": N, "F": F, "p_classes": p_cls})
