"""SP 800-22 sections 2.7 and 2.8: non-overlapping and overlapping template matching tests."""

from __future__ import annotations

import functools
import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, _constants_iv, _int_param_iv, igamc, not_applicable, result, windows
from rngcert.stats.result import Requirement
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

__all__ = ["aperiodic_templates", "non_overlapping_template", "overlapping_template",
           "overlapping_class_probabilities"]


@functools.lru_cache(maxsize=None)
def _aperiodic_codes(m: int) -> tuple[int, ...]:
    out = []
    for code in range(1 << m):
        s = format(code, f"0{m}b")
        if all(s[k:] != s[: m - k] for k in range(1, m)):
            out.append(code)
    return tuple(out)


def aperiodic_templates(m: int = 9) -> list[str]:
    """All aperiodic (unbordered) m-bit templates in ascending binary order.

    A template B is aperiodic when no proper shift of it overlaps itself:
    ``B[k:] != B[:m-k]`` for k = 1..m-1 (SP 800-22 section 2.7.2). For m = 9 there are 148,
    listed in the order of the sts-2.1.2 file ``templates/template9`` (000000001, 000000011, ...).
    Deterministic: no randomness is involved.
    """
    m = _int_param_iv(m, "m", 2)
    return [format(c, f"0{m}b") for c in _aperiodic_codes(m)]


def _template_iv(template, name="template") -> tuple[str, int]:
    s = str(template)
    if not s or any(ch not in "01" for ch in s):
        raise InputError(f"{name}={template!r}; a string of the characters 0 and 1 is required")
    return s, int(s, 2)


def non_overlapping_template(bits, m: int = 9, N: int = 8, templates=None, *, _codes=None):
    """Non-overlapping template matching test, SP 800-22 rev1a section 2.7.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    m : int, default 9
        Template length.
    N : int, default 8
        Number of blocks; block length M = n // N.
    templates : sequence of str, optional
        Aperiodic templates such as ``"000000001"``; default all of :func:`aperiodic_templates`
        (148 for m = 9). A periodic template raises InputError (the greedy non-overlapping scan is
        then not the count of matches this implementation uses).

    Returns
    -------
    list of TestResult, or NotApplicable
        One result per template, named ``nist_non_overlapping_template[<template>]``, chi-square
        with N degrees of freedom. NotApplicable when the block length M = n // N is shorter
        than m.

    Notes
    -----
    H0: the number W_j of non-overlapping occurrences of B in block j has mean
    :math:`\\mu = (M-m+1)/2^m` and variance :math:`\\sigma^2 = M(2^{-m} - (2m-1)2^{-2m})`.
    :math:`\\chi^2 = \\sum_j (W_j-\\mu)^2/\\sigma^2`, :math:`p = Q(N/2, \\chi^2/2)` (section 2.7.4).
    An aperiodic template cannot overlap itself, so the greedy scan of sts-2.1.2 (skip m bits
    after a hit) counts exactly the matches among the windows lying inside the block; all
    templates are counted at once from the integer codes of the m-bit windows.
    Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.7 and 3.7.
    """
    x = _bits_iv(bits)
    m = _int_param_iv(m, "m", 2)
    N = _int_param_iv(N, "N")
    n = x.size
    if templates is None:
        codes_t = list(_aperiodic_codes(m))
        labels = [format(c, f"0{m}b") for c in codes_t]
    else:
        labels, codes_t = [], []
        aperiodic = set(_aperiodic_codes(m))
        for t in templates:
            s, c = _template_iv(t)
            if len(s) != m:
                raise InputError(f"template {t!r} has length {len(s)}, expected m = {m}")
            if c not in aperiodic:
                raise InputError(f"template {t!r} is periodic (overlaps itself); only aperiodic "
                                 "templates are supported")
            labels.append(s)
            codes_t.append(c)
    M = n // N
    if M < m:
        return not_applicable("nist_non_overlapping_template", Requirement.INDEPENDENCE, n,
                              f"block length M = n // N = {M} is shorter than the template "
                              f"length m = {m}")
    codes = windows(x, m, circular=False) if _codes is None else _codes
    W = np.empty((N, 1 << m), dtype=np.int64)
    for j in range(N):  # loop over the N blocks only
        W[j] = np.bincount(codes[j * M: j * M + M - m + 1], minlength=1 << m)
    W = W[:, codes_t]                       # (N, T)
    mu = (M - m + 1) / 2.0 ** m
    var = M * (1.0 / 2.0 ** m - (2.0 * m - 1.0) / 2.0 ** (2.0 * m))
    chi2 = np.sum((W - mu) ** 2, axis=0) / var
    pv = special.gammaincc(N / 2.0, chi2 / 2.0)
    out = []
    for k, lab in enumerate(labels):
        out.append(result(f"nist_non_overlapping_template[{lab}]", Requirement.INDEPENDENCE,
                          chi2[k], N, pv[k], n, "asymptotic",
                          {"template": lab, "m": m, "N": N, "M": M, "W": W[:, k], "mu": mu,
                           "variance": var}))
    return out


def _sts_pr(u: int, eta: float) -> float:
    """``Pr(u, eta)`` of sts-2.1.2 overlappingTemplateMatchings.c (the approximation of rev1)."""
    if u == 0:
        return math.exp(-eta)
    lg = math.lgamma
    return sum(math.exp(-eta - u * math.log(2) + l * math.log(eta) - lg(l + 1) + lg(u) - lg(l)
                        - lg(u - l + 1)) for l in range(1, u + 1))


@functools.lru_cache(maxsize=None)
def _exact_ones_overlapping(m: int, M: int, K: int) -> tuple[float, ...]:
    """Exact P(W = 0..K-1), P(W >= K) for W = overlapping occurrences of 1^m in M fair bits.

    Dynamic programming over (current run of ones capped at m, count capped at K).
    """
    P = np.zeros((m + 1, K + 1))
    P[0, 0] = 1.0
    for _ in range(M):
        new = np.zeros_like(P)
        new[0, :] += 0.5 * P.sum(axis=0)              # a zero resets the run
        nr = np.minimum(np.arange(m + 1) + 1, m)      # run after a one
        for r in range(m + 1):
            if nr[r] == m:  # a window of m ones ends here: one more occurrence
                new[m, 1:] += 0.5 * P[r, :-1]
                new[m, K] += 0.5 * P[r, K]
            else:
                new[nr[r], :] += 0.5 * P[r, :]
        P = new
    return tuple(P.sum(axis=0))


# Hamano & Kaneko (2007) class probabilities for m = 9, M = 1032, K = 5, as printed in
# SP 800-22 rev1a section 3.8 (and left unused in sts-2.1.2's initialiser).
_HAMANO_KANEKO = (0.364091, 0.185659, 0.139381, 0.100571, 0.0704323, 0.139865)


def overlapping_class_probabilities(m: int = 9, M: int = 1032, K: int = 5,
                                    constants: str = "reference") -> np.ndarray:
    """Class probabilities of the overlapping template test (W = 0, 1, ..., K-1, >= K).

    Parameters
    ----------
    constants : {"reference", "corrected"}
        "reference": sts-2.1.2, which overwrites its table with ``Pr(u, eta)``, the compound
        Poisson approximation of SP 800-22 rev1 (eta = (M-m+1)/2^(m+1)), last class = 1 - sum.
        "corrected": the exact probabilities (Hamano & Kaneko 2007), computed here by dynamic
        programming for any (m, M, K); for (9, 1032, 5) they agree with the values printed in
        rev1a section 3.8 (0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865).
    """
    if _constants_iv(constants) == "reference":
        eta = (M - m + 1) / 2.0 ** m / 2.0
        pi = [_sts_pr(u, eta) for u in range(K)]
        return np.array(pi + [1.0 - sum(pi)])
    return np.array(_exact_ones_overlapping(m, M, K))


def overlapping_template(bits, m: int = 9, M: int = 1032, K: int = 5, *,
                         constants: str = "reference", _codes=None):
    """Overlapping template matching test (template of m ones), SP 800-22 rev1a section 2.8.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    m : int, default 9
        Template length; the template is m ones, as in sts-2.1.2.
    M : int, default 1032
        Block length; N = n // M blocks.
    K : int, default 5
        Number of degrees of freedom (classes W = 0..K-1 and W >= K).
    constants : {"reference", "corrected"}
        Class probabilities, see :func:`overlapping_class_probabilities`.

    Returns
    -------
    TestResult or NotApplicable
        ``name="nist_overlapping_template"``, chi-square with K degrees of freedom. NotApplicable
        when there is no complete block (N < 1); sts-2.1.2 has no further check, SP 800-22
        recommends n >= 10^6 (section 2.8.7), which the battery enforces.

    Notes
    -----
    H0: the number of overlapping occurrences of the template per block follows the law given
    by the class probabilities. :math:`\\chi^2 = \\sum_i (\\nu_i - N\\pi_i)^2/(N\\pi_i)`,
    :math:`p = Q(K/2, \\chi^2/2)` (section 2.8.4). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.8 and 3.8.
    .. [2] Hamano K., Kaneko T. (2007) Correction of overlapping template matching test included
       in NIST randomness test suite. IEICE Trans. Fundamentals E90-A(9), 1788-1792.
    """
    x = _bits_iv(bits)
    m = _int_param_iv(m, "m", 1)
    M = _int_param_iv(M, "M", m)
    K = _int_param_iv(K, "K", 1)
    n = x.size
    name = "nist_overlapping_template"
    N = n // M
    if N < 1:
        return not_applicable(name, Requirement.INDEPENDENCE, n,
                              f"n = {n} is shorter than one block of M = {M} bits")
    pi = overlapping_class_probabilities(m, M, K, constants)
    codes = windows(x, m, circular=False) if _codes is None else _codes
    hit = (codes == (1 << m) - 1)
    cs = np.concatenate([[0], np.cumsum(hit, dtype=np.int64)])
    starts = np.arange(N) * M
    W = cs[starts + M - m + 1] - cs[starts]
    nu = np.bincount(np.minimum(W, K), minlength=K + 1)
    chi2 = float(np.sum((nu - N * pi) ** 2 / (N * pi)))
    p = igamc(K / 2.0, chi2 / 2.0)
    return result(name, Requirement.INDEPENDENCE, chi2, K, p, n,
                  f"asymptotic; class probabilities: {constants}",
                  {"m": m, "M": M, "K": K, "N": N, "nu": nu, "pi": pi, "constants": constants})
