"""SP 800-22 sections 2.14 and 2.15: random excursions and random excursions variant tests."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, _constants_iv, not_applicable, result
from rngcert.stats.result import Requirement
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

__all__ = ["random_excursions", "random_excursions_variant", "excursion_state_probabilities"]

#: Decimals to which sts-2.1.2 (``randomExcursions.c``, array ``pi``) tabulates pi_k(x) for
#: k = 0, 1, 2, 3, 4, >= 5 and |x| = 1..4.
_STS_DECIMALS = (10, 11, 11, 11, 11, 10)
#: The one entry of that table that is not the closed form rounded to those decimals:
#: pi_5(3) = 625/7776 = 0.08037551440..., printed by sts-2.1.2 as 0.0803755143 (1.03e-10 low).
_STS_DEVIATIONS = {(3, 5): Fraction("0.0803755143")}
#: sts-2.1.2 tabulates the states |x| <= 4 only.
_STS_MAX_STATE = 4


def _closed_form(a: int) -> list[Fraction]:
    """Exact pi_k(x), k = 0..4 and >= 5, for |x| = a >= 1 (SP 800-22 section 3.14), as fractions."""
    q = 1 - Fraction(1, 2 * a)
    return ([q] + [Fraction(1, 4 * a * a) * q ** (k - 1) for k in range(1, 5)]
            + [Fraction(1, 2 * a) * q ** 4])


def _round_half_up(v: Fraction, decimals: int) -> Fraction:
    scale = 10 ** decimals
    return Fraction(math.floor(v * scale + Fraction(1, 2)), scale)


def _state_iv(x) -> int:
    try:
        a = abs(int(x))
    except (TypeError, ValueError):
        raise InputError(f"state x={x!r} is not an integer") from None
    if a != abs(x) or a == 0:
        raise InputError(f"state x={x!r}; a non-zero integer is required (the walk's cycles "
                         "start and end in 0)")
    return a


@functools.lru_cache(maxsize=None)
def _probabilities(a: int, constants: str) -> tuple[float, ...]:
    exact = _closed_form(a)
    if constants == "reference" and a <= _STS_MAX_STATE:
        vals = [_STS_DEVIATIONS.get((a, k), _round_half_up(v, d))
                for k, (v, d) in enumerate(zip(exact, _STS_DECIMALS))]
        # float(Fraction) is correctly rounded, as a C compiler reads a decimal constant
        return tuple(float(v) for v in vals)
    return tuple(float(v) for v in exact)


def excursion_state_probabilities(x: int, constants: str = "reference") -> np.ndarray:
    r"""P(k visits to state x during one cycle of a fair walk), k = 0, 1, 2, 3, 4, >= 5.

    Parameters
    ----------
    x : int
        The state, a non-zero integer (the test uses -4..-1, 1..4); only |x| matters.
    constants : {"reference", "corrected"}
        "corrected": the closed form in double precision (each entry the double nearest the
        exact rational; every row sums to 1 to rounding). "reference": the values of
        sts-2.1.2 for |x| <= 4, i.e. the closed form rounded half-up to 10 decimals (k = 0
        and k >= 5) and 11 decimals (k = 1..4), which is how that program tabulates them,
        except pi_5(3), which sts-2.1.2 prints as 0.0803755143 (closed form 0.08037551440...);
        for |x| > 4, which sts-2.1.2 does not tabulate, the closed form.

    Returns
    -------
    (6,) ndarray of float64
        :math:`\pi_0(x), \ldots, \pi_4(x), \pi_5(x)` where :math:`\pi_5` is P(>= 5 visits).
        A fresh array (the caller may modify it).

    Raises
    ------
    InputError
        If x is 0 or not an integer, or ``constants`` is not one of the two names.

    Notes
    -----
    Closed form (SP 800-22 section 3.14): :math:`\pi_0(x) = 1 - 1/(2|x|)`,
    :math:`\pi_k(x) = (4x^2)^{-1}(1 - 1/(2|x|))^{k-1}` for k = 1..4,
    :math:`\pi_5(x) = (2|x|)^{-1}(1 - 1/(2|x|))^4`. The number of visits to x in one cycle is
    0 with probability :math:`\pi_0` and otherwise geometric, so every row sums to 1. The
    whole table is derived from this formula (computed in exact rational arithmetic); no
    value is typed in by hand except the one documented deviation of sts-2.1.2 above. In
    double precision the reference and corrected rows differ by at most 1.04e-10 (at |x| = 3;
    rows |x| = 1, 2 are identical), which moves a p-value by a few 1e-9: enough to change
    the 6th printed decimal now and then, hence the separate reference table.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 3.14.
    .. [2] Baron M., Rukhin A. L. (1999) Distribution of the number of visits of a random walk.
       Comm. Statist. Stochastic Models 15, 593-597.
    .. [3] NIST sts-2.1.2, ``randomExcursions.c`` (the tabulated ``pi``).

    Examples
    --------
    >>> excursion_state_probabilities(2, "corrected").tolist()
    [0.75, 0.0625, 0.046875, 0.03515625, 0.0263671875, 0.0791015625]
    """
    a = _state_iv(x)
    return np.array(_probabilities(a, _constants_iv(constants)), dtype=np.float64)


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
