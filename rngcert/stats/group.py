r"""Error over tables and time (issue 23): the false FAILs a group of tables and its audits over
months can expect, and the rules that control them.

* **Across the tables of one run**, each table's smallest weighted-Holm adjusted p-value ``p_t`` is a
  valid p-value for "this table is fair" (the table FAILs at alpha exactly when ``p_t <= alpha``).
  With k fair tables each tested at alpha, a run expects up to ``k * alpha`` false FAILs. The group's
  statement controls them by Holm (family-wise: P(any false alarm in the group) <= alpha) or by
  Benjamini-Hochberg (false discovery rate <= alpha; under the global null the same bound).
* **Across a table's audits over months**, alpha is spent: the i-th audit of a table is judged at
  :math:`\alpha_i = \alpha \cdot 6 / (\pi^2 i^2)`, so :math:`\sum_i \alpha_i = \alpha` and a fair
  table raises a false alarm in its whole history with probability at most alpha (a union bound, valid
  whatever the dependence between the audits; Bonferroni over an infinite sequence). Equivalently the
  audit's p-value is inflated to :math:`p \cdot \pi^2 i^2 / 6`.

Both together (the spent p-values of the tables, then Holm across tables) bound the probability of any
false alarm of the group over every table and every audit ever by alpha.
"""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats.multiple import holm

__all__ = ["CONTROLS", "benjamini_hochberg", "expected_false_fails", "group_control", "spending_level", "spent_pvalue"]

CONTROLS = ("holm", "bh", "none")
_C = 6.0 / math.pi**2


def spending_level(alpha: float, i) -> np.ndarray | float:
    r"""Level of a table's i-th audit (i = 1, 2, ...): :math:`\alpha \cdot 6 / (\pi^2 i^2)`."""
    i = np.asarray(i, dtype=float)
    if np.any(i < 1):
        raise ValueError("audit numbers start at 1")
    out = alpha * _C / i**2
    return float(out) if out.ndim == 0 else out


def spent_pvalue(p, i) -> np.ndarray | float:
    r"""The p-value of a table's i-th audit on the spending scale: :math:`\min(1, p \pi^2 i^2 / 6)`
    (rejects at alpha exactly when p rejects at :func:`spending_level`)."""
    p, i = np.asarray(p, dtype=float), np.asarray(i, dtype=float)
    out = np.minimum(1.0, p * i**2 / _C)
    return float(out) if out.ndim == 0 else out


def benjamini_hochberg(pvalues, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg step-up: (reject, adjusted p-values), controlling the false discovery rate
    at alpha for independent (or positively dependent) p-values."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj_sorted = np.minimum.accumulate(ranked[::-1])[::-1]
    adj = np.empty(m)
    adj[order] = np.minimum(adj_sorted, 1.0)
    return adj <= alpha, adj


def group_control(pvalues, alpha: float, method: str = "holm") -> tuple[np.ndarray, np.ndarray]:
    """The group's statement over tables: (reject, adjusted p-values) by ``holm``, ``bh`` or ``none``
    (each table at alpha on its own)."""
    p = np.asarray(pvalues, dtype=float)
    if method == "holm":
        return holm(p, alpha=alpha) if p.size else (np.zeros(0, dtype=bool), np.zeros(0))
    if method == "bh":
        return benjamini_hochberg(p, alpha)
    if method == "none":
        return p <= alpha, p.copy()
    raise ValueError(f"group control must be one of {CONTROLS}, got {method!r}")


def expected_false_fails(k: int, alpha: float, audits_per_year: float = 12.0) -> dict:
    """Expected false FAILs of k fair tables each tested at alpha: per run (``k * alpha``), per year
    (``k * alpha * audits_per_year``), and the probability of at least one per run
    (``1 - (1 - alpha)^k``, independent tables)."""
    return {"tables": int(k), "alpha": float(alpha), "per_run": k * alpha, "audits_per_year": float(audits_per_year),
            "per_year": k * alpha * audits_per_year, "p_any_per_run": 1.0 - (1.0 - alpha) ** k}
