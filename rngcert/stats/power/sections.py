"""Power of a category chi-square against a single biased section, for outcomes recorded only
as categories (:mod:`rngcert.stats.power`)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats.power.base import _MAX_EFFECT, PowerResult, _brentq, _common_iv, _k_iv, _n_iv
from rngcert.stats.power.noncentral import _collapse, _lambda_for_power, _pearson_power, _solve_n


def _section_iv(categories, section, alpha, power):
    _common_iv(alpha, power)
    cat = np.asarray(categories)
    k = _k_iv(cat.size)
    if cat.dtype.kind not in "iu":
        raise InputError(f"categories must be integer ids, got dtype {cat.dtype}")
    if isinstance(section, bool) or int(section) != section or not 0 <= section < k:
        raise InputError(f"section must be in 0..{k - 1}, got {section!r}")
    return cat, k, int(section)


def _section_probs(k, section, effect, cat):
    w = np.ones(k)
    w[section] *= 1.0 + effect
    return _collapse(np.full(k, 1.0 / k), w / w.sum(), cat)


def min_detectable_section_bias_categories(
    n: int, categories, section: int, *, alpha: float = 0.01, power: float = 0.9
) -> PowerResult:
    r"""Minimum detectable single-section bias of a category chi-square test.

    For outcomes recorded only as categories (e.g. money-wheel symbols when the arrangement is
    unknown): section ``section`` of a wheel with ``k = len(categories)`` equally likely sections
    has its weight multiplied by ``1 + effect`` (the ``single-pocket`` alternative of
    :mod:`rngcert.simulate.wheel`), and the test is Pearson's chi-square on the category
    counts (df = categories - 1), as :func:`rngcert.stats.frequency.category_frequency`. Power
    from the two-moment non-central chi-square of :func:`chisquare_power`.

    Parameters
    ----------
    n : int
        Spins.
    categories : (k,) array_like of int
        Category (symbol) id of each section; -1 for none.
    section : int
        The biased section.
    alpha, power : float

    Returns
    -------
    PowerResult
        ``alternative = "single-section"``, ``test = "category_chisquare"``; effect inf when no
        effect up to 100 reaches the power.
    """
    n = _n_iv(n)
    cat, k, section = _section_iv(categories, section, alpha, power)

    def g(e):
        return _pearson_power(n, *_section_probs(k, section, e, cat), alpha)[0] - power

    df = int(np.unique(cat[cat >= 0]).size) - 1
    method = f"non-central chi-square (two-moment fit to the exact mean and variance of X^2), df={df}"
    if g(_MAX_EFFECT) < 0:
        return PowerResult("single-section", "category_chisquare", method, "effect", n, math.inf, alpha, power, None, k, 1, {"section": section})
    e = _brentq(g, 1e-12, _MAX_EFFECT, xtol=1e-12, rtol=1e-9)
    pw, det = _pearson_power(n, *_section_probs(k, section, e, cat), alpha)
    return PowerResult("single-section", "category_chisquare", method, "effect", n, float(e), alpha, power, pw, k, 1, det | {"section": section})


def spins_needed_section_bias_categories(
    effect: float, categories, section: int, *, alpha: float = 0.01, power: float = 0.9, max_n: int = 10**13
) -> PowerResult:
    """Spins the category chi-square needs to detect a single-section bias ``effect``.

    The counterpart of :func:`min_detectable_section_bias_categories` (same model, test and law).
    """
    cat, k, section = _section_iv(categories, section, alpha, power)
    if not isinstance(effect, (int, float, np.floating)) or not math.isfinite(effect) or effect <= 0:
        raise InputError(f"effect (relative excess, 0.1 = +10%) must be > 0, got {effect!r}")
    q0, q1 = _section_probs(k, section, effect, cat)
    df = q0.size - 1
    method = f"non-central chi-square (two-moment fit to the exact mean and variance of X^2), df={df}"
    lam1 = float(np.sum((q1 - q0) ** 2 / q0))
    guess = max(1, math.ceil(_lambda_for_power(_dist.chi2_isf(alpha, df), df, power) / lam1))
    n = _solve_n(lambda m: _pearson_power(m, q0, q1, alpha)[0], guess, power, max_n)
    if n is None:
        return PowerResult("single-section", "category_chisquare", method, "n", None, float(effect), alpha, power, None, k, 1, {"max_n": max_n})
    pw, det = _pearson_power(n, q0, q1, alpha)
    return PowerResult("single-section", "category_chisquare", method, "n", n, float(effect), alpha, power, pw, k, 1, det | {"section": section})
