"""SP 800-22 section 2.10: linear complexity test (Berlekamp-Massey, vectorised across blocks)."""

from __future__ import annotations

import numpy as np

from rngcert.stats.nist._common import _bits_iv, _int_param_iv, igamc, not_applicable, result
from rngcert.stats.result import Requirement

__all__ = ["linear_complexity", "berlekamp_massey_blocks"]


# sts-2.1.2 linearComplexity.c class probabilities (SP 800-22 section 3.10).
_PI = np.array([0.01047, 0.03125, 0.12500, 0.50000, 0.25000, 0.06250, 0.020833])


def berlekamp_massey_blocks(blocks) -> np.ndarray:
    """Linear complexity over GF(2) of every row of a (B, M) 0/1 array.

    Parameters
    ----------
    blocks : (B, M) array_like of {0, 1}
        B sequences of M bits each.

    Returns
    -------
    (B,) ndarray of int
        The length of the shortest LFSR generating each row.

    Notes
    -----
    Massey's algorithm [1] run in lock step on all rows, bit-sliced: bit j of 64 rows is held
    in one 64-bit word, so the coefficients c_i of the connection polynomials C, of the shifted
    previous polynomial D = x^k B(x) and the sequence bits s_j are (M, ceil(B/64)) word arrays.
    At step N the discrepancies of all rows are ``XOR_i (C_i & s_{N-i})``; C and D are updated
    with word masks. The loop runs over the M bit positions only.

    References
    ----------
    .. [1] Massey J. L. (1969) Shift-register synthesis and BCH decoding. IEEE Trans. Inform.
       Theory 15(1), 122-127.
    """
    s = np.asarray(blocks, dtype=np.uint8)
    if s.ndim != 2:
        raise ValueError(f"blocks must be (B, M), got shape {s.shape}")
    B, M = s.shape
    nw = -(-B // 64)
    # S[j] = bit j of every row, 64 rows per word (row b -> word b // 64, bit b % 64)
    packed = np.packbits(s.T, axis=1, bitorder="little")            # (M, ceil(B/8))
    pad = nw * 8 - packed.shape[1]
    if pad:
        packed = np.concatenate([packed, np.zeros((M, pad), np.uint8)], axis=1)
    S = np.ascontiguousarray(packed).view(np.uint64)                 # (M, nw)
    rows = M + 3
    C = np.zeros((rows, nw), dtype=np.uint64)
    D = np.zeros((rows, nw), dtype=np.uint64)
    ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    C[0] = ones                                                      # C(x) = 1
    D[1] = ones                                                      # D(x) = x * 1
    L = np.zeros(B, dtype=np.int64)
    for N in range(M):
        top = N + 3
        d = np.bitwise_xor.reduce(C[: N + 1] & S[N::-1], axis=0)     # (nw,)
        if not d.any():
            D[1:top] = D[: top - 1].copy()
            D[0] = 0
            continue
        dbits = np.unpackbits(d.view(np.uint8), bitorder="little")[:B].astype(bool)
        grow = dbits & (2 * L <= N)
        g = np.packbits(np.concatenate([grow, np.zeros(nw * 64 - B, bool)]),
                        bitorder="little").view(np.uint64)
        Cw = C[:top]
        Dw = D[:top]
        Cold = Cw.copy()
        Cw ^= Dw & d
        Dw[...] = (Cold & g) | (Dw & ~g)
        D[1:top] = D[: top - 1].copy()
        D[0] = 0
        L = np.where(grow, N + 1 - L, L)
    return L


def linear_complexity(bits, M: int = 500):
    """Linear complexity test, SP 800-22 rev1a section 2.10.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    M : int, default 500
        Block length; N = n // M blocks, remainder discarded.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_linear_complexity"``, chi-square with K = 6 degrees of freedom.
        NotApplicable when N < 1.

    Notes
    -----
    H0: the linear complexities L_i of the blocks follow the law of random sequences.
    :math:`\\mu = M/2 + (9 + (-1)^{M+1})/36 - (M/3 + 2/9)/2^M`,
    :math:`T_i = (-1)^M (L_i - \\mu) + 2/9`, classes
    :math:`T \\le -2.5, (-2.5,-1.5], \\dots, (1.5, 2.5], > 2.5` with probabilities
    0.010417 (sts: 0.01047), 0.03125, 0.125, 0.5, 0.25, 0.0625, 0.020833;
    :math:`\\chi^2 = \\sum (\\nu_i - N\\pi_i)^2/(N\\pi_i)`, :math:`p = Q(K/2, \\chi^2/2)`
    (section 2.10.4). SP 800-22 recommends n >= 10^6 and 500 <= M <= 5000, N >= 200
    (section 2.10.7). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.10 and 3.10.
    """
    x = _bits_iv(bits)
    M = _int_param_iv(M, "M", 2)
    n = x.size
    N = n // M
    name = "nist_linear_complexity"
    if N < 1:
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              f"n = {n} is shorter than one block of M = {M} bits")
    Ls = berlekamp_massey_blocks(x[: N * M].reshape(N, M))
    sign = -1.0 if M % 2 else 1.0
    mu = M / 2.0 + (9.0 + (-sign)) / 36.0 - (M / 3.0 + 2.0 / 9.0) / 2.0 ** M
    T = sign * (Ls - mu) + 2.0 / 9.0
    cls = np.searchsorted(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]), T, side="left")
    nu = np.bincount(cls, minlength=7)
    chi2 = float(np.sum((nu - N * _PI) ** 2 / (N * _PI)))
    p = igamc(3.0, chi2 / 2.0)
    return result(name, Requirement.INDEPENDENCE, chi2, 6, p, n, "asymptotic",
                  {"M": M, "N": N, "nu": nu, "pi": _PI, "mu": mu})
