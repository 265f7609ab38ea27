"""Multiple-testing corrections.

Holm's step-down adjustment is a few lines of numpy; it is written here rather than taken from
statsmodels' ``multipletests`` because statsmodels 0.15 calls ``gc.collect()`` on every call
(about 60 ms each), which dominated batteries that adjust per pocket. The tests cross-check it
against ``statsmodels.stats.multitest.multipletests(method="holm")``.
"""

from __future__ import annotations

import numpy as np

from rngcert.stats.params import check_number


def holm(pvalues, alpha: float = 0.01, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Holm step-down adjustment controlling the family-wise error rate, optionally weighted.

    Parameters
    ----------
    pvalues : (m,) array_like of float
        Raw p-values, each in [0, 1].
    alpha : float
        Family-wise significance level.
    weights : (m,) array_like of float, optional
        Positive weights (default all 1: Holm's procedure). Hypothesis i is tested at
        ``alpha * w_i / W`` at the first step, where W is the total weight of the hypotheses not yet
        rejected, so tests with a larger weight get a larger share of alpha.

    Returns
    -------
    reject : (m,) ndarray of bool
        Which hypotheses are rejected at family-wise level ``alpha``.
    adjusted : (m,) ndarray of float
        Adjusted p-values in the original order: with the hypotheses ordered by ``p_i / w_i``,
        ``max_{j<=i} min(1, W_j p_(j) / w_(j))`` where ``W_j`` is the weight of hypotheses
        ``j..m``; unweighted, ``max_{j<=i} min(1, (m - j + 1) p_(j))``.

    Raises
    ------
    ValueError
        p-values not one-dimensional, NaN or outside [0, 1]; weights not positive or of another
        length; ``alpha`` outside (0, 1).
    TypeError
        ``alpha`` not a number (``"0.05"``), or ``pvalues`` not numbers (strings, None).

    Notes
    -----
    Holm, S. (1979) "A simple sequentially rejective multiple test procedure", *Scand. J.
    Statist.* 6, 65-70, which gives the weighted form too (its section 4). A hypothesis is rejected
    when its adjusted p-value is at most ``alpha`` (p_(i) <= alpha / (m - i + 1) step-down),
    exactly as statsmodels' ``multipletests(method="holm")`` for unit weights. The family-wise
    error rate is at most alpha for any dependence between the tests and any fixed weights.

    Examples
    --------
    >>> from rngcert.stats import holm
    >>> reject, adjusted = holm([0.001, 0.02, 0.04, 0.3], alpha=0.05)
    >>> reject.tolist(), [round(float(p), 3) for p in adjusted]
    ([True, False, False, False], [0.004, 0.06, 0.08, 0.3])
    """
    check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    raw = np.asarray(pvalues)
    if raw.dtype.kind not in "iuf":  # np.asarray(["0.1"], dtype=float) read text as numbers, None was NaN, True was 1
        raise TypeError(f"holm: pvalues must be numbers, got dtype {raw.dtype} ({raw.ravel()[:3].tolist()!r}...)")
    p = raw.astype(float)
    if p.ndim != 1:
        raise ValueError(f"holm: pvalues must be one-dimensional, got shape {p.shape}")
    if p.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))  # NaN too
    if bad.size:
        raise ValueError(f"holm: pvalues must lie in [0, 1], found {float(p[bad[0]])!r} at index {bad[0]} ({bad.size} outside)")
    m = p.size
    if weights is None:
        w = np.ones(m)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != p.shape or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError("weights must be positive, one per p-value")
    order = np.argsort(p / w, kind="stable")
    ws = w[order]
    remaining = np.cumsum(ws[::-1])[::-1]  # W_j: weight of hypotheses j..m in step-down order
    stepped = np.minimum(1.0, remaining * p[order] / ws)
    adj_sorted = np.maximum.accumulate(stepped)
    adjusted = np.empty(m)
    adjusted[order] = adj_sorted
    return adjusted <= alpha, adjusted
