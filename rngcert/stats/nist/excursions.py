"""SP 800-22 sections 2.14 and 2.15: random excursions and random excursions variant tests."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from rngcert.stats.nist._common import _bits_iv, _constants_iv, not_applicable, result
from rngcert.stats.result import Requirement

__all__ = ["random_excursions", "random_excursions_variant", "excursion_state_probabilities"]

# sts-2.1.2 randomExcursions.c, pi[|x|][k]: P(k visits to x in a cycle), k = 0..4, >= 5.
_STS_PI = np.array([
    [0.5000000000, 0.25000000000, 0.12500000000, 0.06250000000, 0.03125000000, 0.0312500000],
    [0.7500000000, 0.06250000000, 0.04687500000, 0.03515625000, 0.02636718750, 0.0878906250],
    [0.8333333333, 0.02777777778, 0.02314814815, 0.01929012346, 0.01607510288, 0.0803755144],
    [0.8750000000, 0.01562500000, 0.01367187500, 0.01196289063, 0.01046752930, 0.0732727051],
])


def excursion_state_probabilities(x: int, constants: str = "reference") -> np.ndarray:
    """P(k visits to state x during one cycle of a fair walk), k = 0, 1, 2, 3, 4, >= 5.

    Closed form (SP 800-22 section 3.14): :math:`\\pi_0 = 1 - 1/(2|x|)`,
    :math:`\\pi_k = (4x^2)^{-1}(1 - 1/(2|x|))^{k-1}` for k = 1..4,
    :math:`\\pi_5 = (2|x|)^{-1}(1 - 1/(2|x|))^4`. "reference" returns the 10-digit table of
    sts-2.1.2 (|x| <= 4), "corrected" the closed form in double precision.
    """
    a = abs(int(x))
    if _constants_iv(constants) == "reference" and 1 <= a <= 4:
        return _STS_PI[a - 1].copy()
    q = 1.0 - 1.0 / (2 * a)
    k = np.arange(1, 5)
    return np.concatenate([[q], q ** (k - 1) / (4.0 * a * a), [q ** 4 / (2.0 * a)]])


def _walk(x: np.ndarray) -> np.ndarray:
    return np.cumsum(2 * x.astype(np.int32) - 1, dtype=np.int32)


def _cycles(S: np.ndarray) -> tuple[np.ndarray, int]:
    """Cycle index of every position of the walk and the number of cycles J (section 2.14.4)."""
    zero = S == 0
    cyc = np.cumsum(zero, dtype=np.int32)
    cyc -= zero                           # zeros strictly before position i
    return cyc, _n_cycles(S)


def _n_cycles(S: np.ndarray) -> int:
    return int(np.count_nonzero(S == 0)) + (1 if S[-1] != 0 else 0)


def _min_cycles_reason(J: int, n: int, min_cycles) -> str | None:
    need = max(0.005 * math.sqrt(n), 500.0) if min_cycles is None else float(min_cycles)
    if J < need:
        return (f"J = {J} cycles < {need:g}, the minimum max(0.005 sqrt(n), 500) of SP 800-22 "
                "section 2.14.4 step 4 / sts-2.1.2")
    return None


def random_excursions(bits, *, states=(-4, -3, -2, -1, 1, 2, 3, 4), constants="reference",
                      min_cycles=None, _S=None):
    """Random excursions test, SP 800-22 rev1a section 2.14.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    states : sequence of int, default -4..-1, 1..4
    constants : {"reference", "corrected"}
        Visit-count probabilities, see :func:`excursion_state_probabilities`.
    min_cycles : float, optional
        Minimum number of cycles J; default max(0.005 sqrt(n), 500) as sts-2.1.2. The worked
        example of the publication (n = 10, J = 3) needs ``min_cycles=1``.

    Returns
    -------
    list of TestResult, or NotApplicable
        One result per state, ``nist_random_excursions[x=-4]`` ... ``[x=4]``, chi-square with
        5 df. NotApplicable (one for the whole test) when J is below the minimum.

    Notes
    -----
    H0: the numbers of visits to each state within the cycles (excursions from 0) of the walk
    :math:`S_k = \\sum_{i\\le k}(2\\varepsilon_i-1)` follow the law of a fair random walk.
    :math:`\\chi^2(x) = \\sum_{k=0}^5 (\\nu_k(x) - J\\pi_k(x))^2/(J\\pi_k(x))`,
    :math:`p = Q(5/2, \\chi^2/2)` (section 2.14.4). sts-2.1.2 also aborts when
    J > max(1000, n/100), an array-size limit of that program, not a statistical rule; it is
    not applied here. Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.14 and 3.14.
    .. [2] Baron M., Rukhin A. L. (1999) Distribution of the number of visits of a random walk.
       Comm. Statist. Stochastic Models 15, 593-597.
    """
    x = _bits_iv(bits)
    _constants_iv(constants)
    n = x.size
    S = _walk(x) if _S is None else _S
    cyc, J = _cycles(S)
    why = _min_cycles_reason(J, n, min_cycles)
    if why is not None:
        return not_applicable("nist_random_excursions", Requirement.INDEPENDENCE, n, why)
    states = [int(s) for s in states]
    smax = max(abs(s) for s in states)
    mask = (S != 0) & (np.abs(S) <= smax)
    width = 2 * smax + 1
    visits = np.bincount(cyc[mask].astype(np.int64) * width + (S[mask] + smax),
                         minlength=J * width)
    visits = visits.reshape(J, width)
    out = []
    for s in states:
        v = np.minimum(visits[:, s + smax], 5)
        nu = np.bincount(v, minlength=6)
        pi = excursion_state_probabilities(s, constants)
        chi2 = float(np.sum((nu - J * pi) ** 2 / (J * pi)))
        p = float(special.gammaincc(2.5, chi2 / 2.0))
        out.append(result(f"nist_random_excursions[x={s}]", Requirement.INDEPENDENCE, chi2,
                          5, p, n, f"asymptotic; state probabilities: {constants}",
                          {"x": s, "J": J, "nu": nu, "pi": pi, "constants": constants}))
    return out


def random_excursions_variant(bits, *, states=tuple(s for s in range(-9, 10) if s),
                              min_cycles=None, _S=None):
    """Random excursions variant test, SP 800-22 rev1a section 2.15.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    states : sequence of int, default -9..-1, 1..9
    min_cycles : float, optional
        As in :func:`random_excursions` (sts-2.1.2 applies the same J constraint).

    Returns
    -------
    list of TestResult, or NotApplicable
        One per state, ``nist_random_excursions_variant[x=-9]`` ... ``[x=+9]``; statistic
        :math:`\\xi(x)`, the total number of visits to x.

    Notes
    -----
    H0: :math:`\\xi(x)` has mean J and variance :math:`J(4|x|-2)`;
    :math:`p = \\operatorname{erfc}(|\\xi(x) - J|/\\sqrt{2J(4|x|-2)})` (section 2.15.4).
    Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.15 and 3.15.
    """
    x = _bits_iv(bits)
    n = x.size
    S = _walk(x) if _S is None else _S
    J = _n_cycles(S)
    why = _min_cycles_reason(J, n, min_cycles)
    if why is not None:
        return not_applicable("nist_random_excursions_variant", Requirement.INDEPENDENCE, n, why)
    states = [int(s) for s in states]
    smax = max(abs(s) for s in states)
    inrange = S[np.abs(S) <= smax]
    counts = np.bincount(inrange + smax, minlength=2 * smax + 1)
    out = []
    for s in states:
        xi = int(counts[s + smax])
        p = float(special.erfc(abs(xi - J) / math.sqrt(2.0 * J * (4.0 * abs(s) - 2.0))))
        out.append(result(f"nist_random_excursions_variant[x={s}]", Requirement.INDEPENDENCE,
                          xi, None, p, n, "asymptotic", {"x": s, "J": J, "xi": xi}))
    return out
