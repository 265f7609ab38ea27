"""Multiple-testing corrections (the only place statsmodels' ``multipletests`` is called)."""

from __future__ import annotations

import numpy as np
from statsmodels.stats.multitest import multipletests


def holm(pvalues, alpha: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Holm step-down adjustment controlling the family-wise error rate.

    Parameters
    ----------
    pvalues : (m,) array_like of float
        Raw p-values, each in [0, 1].
    alpha : float
        Family-wise significance level.

    Returns
    -------
    reject : (m,) ndarray of bool
        Which hypotheses are rejected at family-wise level ``alpha``.
    adjusted : (m,) ndarray of float
        Holm-adjusted p-values (monotone, capped at 1).

    Notes
    -----
    Holm, S. (1979) "A simple sequentially rejective multiple test procedure", *Scand. J.
    Statist.* 6, 65-70. statsmodels' default method is Holm–Šidák ("hs"); ``method="holm"`` is
    passed explicitly.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    if p.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("p-values must lie in [0, 1]")
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
    return np.asarray(reject, dtype=bool), np.asarray(adjusted, dtype=float)
