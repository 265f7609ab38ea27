"""SP 800-22 sections 2.1, 2.2 and 2.13: frequency (monobit), frequency within a block, cumulative sums."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, _int_param_iv, erfc, igamc, not_applicable, result
from rngcert.stats.result import Requirement
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

__all__ = ["frequency", "block_frequency", "cumulative_sums"]


def frequency(bits):
    """Frequency (monobit) test, SP 800-22 rev1a section 2.1.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
        The bit sequence, in order.

    Returns
    -------
    TestResult
        ``name="nist_frequency"``, statistic ``s_obs = |S_n| / sqrt(n)``, requirement UNIFORMITY.

    Raises
    ------
    InputError
        If ``bits`` is empty, not one-dimensional or holds values other than 0/1.

    Notes
    -----
    H0: the bits are i.i.d. with P(1) = 1/2. With :math:`S_n = \\sum (2\\varepsilon_i - 1)`,
    :math:`p = \\operatorname{erfc}(|S_n| / \\sqrt{2n})` (SP 800-22 section 2.1.4, steps 1-3).
    SP 800-22 recommends n >= 100 (section 2.1.7); the battery enforces that minimum.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 2.1 and 3.1.
    """
    x = _bits_iv(bits)
    n = x.size
    s = 2 * int(np.count_nonzero(x)) - n
    s_obs = abs(s) / math.sqrt(n)
    p = erfc(s_obs / math.sqrt(2.0))
    return result("nist_frequency", Requirement.UNIFORMITY, s_obs, None, p, n, "asymptotic",
                  {"S_n": s, "ones": int(np.count_nonzero(x))})


def block_frequency(bits, M: int = 128):
    """Frequency test within a block, SP 800-22 rev1a section 2.2.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    M : int, default 128
        Block length in bits; the ``N = n // M`` whole blocks are used, the remainder discarded.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_block_frequency"``, statistic chi-square with N degrees of freedom.
        NotApplicable when n < M (no complete block).

    Notes
    -----
    H0: the proportion of ones in every M-bit block is 1/2.
    :math:`\\chi^2 = 4M \\sum_{i=1}^N (\\pi_i - 1/2)^2`, :math:`p = Q(N/2, \\chi^2/2)`
    (section 2.2.4, steps 1-4; Q the regularised upper incomplete gamma function).

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.2 and 3.2.
    """
    x = _bits_iv(bits)
    M = _int_param_iv(M, "M")
    n = x.size
    N = n // M
    name = "nist_block_frequency"
    if N < 1:
        return not_applicable(name, Requirement.UNIFORMITY, n,
                              f"n = {n} bits is shorter than one block of M = {M} bits")
    ones = x[: N * M].reshape(N, M).sum(axis=1, dtype=np.int64)
    pi = ones / M
    chi2 = 4.0 * M * float(np.sum((pi - 0.5) ** 2))
    p = igamc(N / 2.0, chi2 / 2.0)
    return result(name, Requirement.UNIFORMITY, chi2, N, p, n, "asymptotic",
                  {"M": M, "N": N, "discarded_bits": n - N * M})


def _cusum_pvalue(z: int, n: int) -> float:
    """P-value of section 2.13.4 step 4 with the integer divisions of sts-2.1.2 (C truncation)."""
    def cdiv(a: int, b: int) -> int:  # C integer division truncates toward zero
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    nz = cdiv(n, z)
    sq = math.sqrt(n)
    k1 = np.arange(cdiv(-nz + 1, 4), cdiv(nz - 1, 4) + 1, dtype=float)
    k2 = np.arange(cdiv(-nz - 3, 4), cdiv(nz - 1, 4) + 1, dtype=float)
    ndtr = special.ndtr
    sum1 = float(np.sum(ndtr((4 * k1 + 1) * z / sq) - ndtr((4 * k1 - 1) * z / sq)))
    sum2 = float(np.sum(ndtr((4 * k2 + 3) * z / sq) - ndtr((4 * k2 + 1) * z / sq)))
    return 1.0 - sum1 + sum2


def cumulative_sums(bits, mode: str = "both", *, _walk=None):
    """Cumulative sums (cusum) test, SP 800-22 rev1a section 2.13.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    mode : {"both", "forward", "reverse"}
        Which walk(s) to test; the battery runs both (two p-values).

    Returns
    -------
    list of TestResult
        One per mode, named ``nist_cumulative_sums[forward]`` / ``nist_cumulative_sums[reverse]``;
        statistic ``z`` = the maximal absolute partial sum.

    Notes
    -----
    H0: the random walk :math:`S_k = \\sum_{i \\le k} (2\\varepsilon_i - 1)` has the excursions of a
    fair walk. With :math:`z = \\max_k |S_k|` (forward) or the same over the reversed sequence,

    .. math:: p = 1 - \\sum_{k=(-n/z+1)/4}^{(n/z-1)/4} [\\Phi((4k+1)z/\\sqrt n) - \\Phi((4k-1)z/\\sqrt n)]
              + \\sum_{k=(-n/z-3)/4}^{(n/z-1)/4} [\\Phi((4k+3)z/\\sqrt n) - \\Phi((4k+1)z/\\sqrt n)]

    (section 2.13.4 step 4), with the summation limits truncated toward zero as in sts-2.1.2.
    Recommended n >= 100 (section 2.13.7). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.13 and 3.13.
    """
    x = _bits_iv(bits)
    if mode not in ("both", "forward", "reverse"):
        raise InputError(f"mode={mode!r}; allowed: 'both', 'forward', 'reverse'")
    n = x.size
    s = _walk if _walk is not None else np.cumsum(2 * x.astype(np.int32) - 1, dtype=np.int32)
    out = []
    modes = ("forward", "reverse") if mode == "both" else (mode,)
    for md in modes:
        if md == "forward":
            z = int(np.max(np.abs(s)))
        else:
            # partial sums from the end: S_n - S_{k-1}, k = n..1
            total = int(s[-1])
            z = max(abs(total), int(np.max(np.abs(total - s[:-1]))) if n > 1 else 0)
        p = _cusum_pvalue(z, n)
        out.append(result(f"nist_cumulative_sums[{md}]", Requirement.INDEPENDENCE, z, None, p, n,
                          "asymptotic", {"mode": md, "z": z}))
    return out
