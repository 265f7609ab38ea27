"""One result type for every test (DESIGN §4).

A test returns either a :class:`TestResult` (with a p-value in (0, 1]) or a
:class:`NotApplicable` (no p-value at all, and the reason). Both are frozen dataclasses whose
``details`` are JSON-able, so a report can serialise them without knowing the test.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

#: The smallest p-value reported: tail probabilities that underflow to 0 are floored here.
P_FLOOR = float(np.finfo(float).tiny)


class Requirement(str, enum.Enum):
    """The regulatory requirement a test serves (money-wheel rules, rule 2.4)."""

    INDEPENDENCE = "independence"
    UNIFORMITY = "uniformity"
    UNPREDICTABILITY = "unpredictability"


def jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays and nested containers into plain JSON types."""
    t = type(value)  # the plain types first, by exact type: the same result as the checks below, without them
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    if t is dict:
        return {str(k): jsonable(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class TestResult:
    """Outcome of one applicable hypothesis test.

    Attributes
    ----------
    name : str
        Stable identifier, e.g. ``"pocket_chisquare"``.
    requirement : Requirement
        Which of the three regulatory requirements the test serves.
    statistic : float
        The test statistic.
    df : float or None
        Degrees of freedom where the reference law has them.
    pvalue : float
        In (0, 1]. Monte Carlo p-values are ``(b + 1) / (R + 1)`` (or ``h / l`` for a scan stopped early,
        Besag & Clifford) and never 0; an asymptotic tail that underflows is floored at :data:`P_FLOOR`.
    n : int
        Sample size the statistic was computed from (spins, pairs, bits, shoes).
    method : str
        ``"asymptotic"``, ``"exact"``, ``"monte-carlo, R=…"`` or, for a scan stopped early,
        ``"sequential monte-carlo, l of R=… (Besag-Clifford: stopped at h exceedances)"``.
    details : mapping
        JSON-able supporting numbers (observed, expected, residuals, …).
    """

    __test__ = False  # not a pytest test class

    name: str
    requirement: Requirement
    statistic: float
    df: float | None
    pvalue: float
    n: int
    method: str
    details: Mapping[str, Any] = field(default_factory=dict)

    applicable = True

    def __post_init__(self) -> None:
        p = float(self.pvalue)
        if not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise ValueError(f"{self.name}: p-value {self.pvalue!r} is not in [0, 1]")
        # A p-value of 0 is an underflow of the tail probability, never an exact value: report the
        # smallest positive double instead (shown as "< 1e-300"), so that p is always in (0, 1].
        object.__setattr__(self, "pvalue", max(p, P_FLOOR))
        object.__setattr__(self, "statistic", float(self.statistic))

    # -- scipy-like conveniences: ``stat, p = result``, a short repr, a table in notebooks --
    def __iter__(self):
        """Unpack as ``(statistic, pvalue)``, like scipy.stats results.

        Examples
        --------
        >>> from rngcert.stats import pocket_chisquare
        >>> stat, p = pocket_chisquare([10, 12, 9, 11, 8])  # X2 = (0 + 4 + 1 + 1 + 4) / 10
        >>> round(stat, 4), round(p, 4)
        (1.0, 0.9098)
        """
        return iter((self.statistic, self.pvalue))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        return (self.statistic, self.pvalue)[i]

    def __repr__(self) -> str:
        p = "< 1e-300" if self.pvalue < 1e-300 else f"{self.pvalue:.4g}"
        df = "" if self.df is None else f", df={float(self.df):g}"
        return f"TestResult({self.name}: statistic={self.statistic:.6g}{df}, pvalue={p}, n={int(self.n)}, method={self.method!r})"

    def _repr_html_(self) -> str:
        """A small table for Jupyter (details left out; see ``result.details``)."""
        import html

        p = "&lt; 1e-300" if self.pvalue < 1e-300 else f"{self.pvalue:.4g}"
        rows = [
            ("test", html.escape(self.name)), ("requirement", self.requirement.value), ("statistic", f"{self.statistic:.6g}"),
            ("df", "–" if self.df is None else f"{float(self.df):g}"), ("p-value", p), ("n", f"{int(self.n):,}"), ("method", html.escape(self.method)),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
        return f"<table class='rngcert-result'>{body}</table>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary of every field."""
        return {
            "name": self.name,
            "requirement": self.requirement.value,
            "applicable": True,
            "statistic": jsonable(self.statistic),
            "df": jsonable(self.df),
            "pvalue": self.pvalue,
            "n": int(self.n),
            "method": self.method,
            "details": jsonable(dict(self.details)),
        }


@dataclass(frozen=True)
class NotApplicable:
    """A test that could not be applied to these data; it carries no p-value.

    Attributes
    ----------
    name, requirement, n
        As in :class:`TestResult`.
    reason : str
        Why the test could not be applied (too few data for its approximation, a constant
        sequence, a stream shorter than the test needs, ...).
    """

    name: str
    requirement: Requirement
    n: int
    reason: str

    applicable = False
    pvalue = None

    def __iter__(self):
        """A test that was not applied has no ``(statistic, pvalue)`` to unpack: this raises
        ValueError with the reason (never a made-up p-value)."""
        raise ValueError(f"{self.name} is not applicable ({self.reason}): it has no statistic or p-value")

    def __repr__(self) -> str:
        return f"NotApplicable({self.name}: n={int(self.n)}, reason={self.reason!r})"

    def _repr_html_(self) -> str:
        import html

        return f"<table class='rngcert-result'><tr><th style='text-align:left'>test</th><td>{html.escape(self.name)}</td></tr><tr><th style='text-align:left'>not applicable</th><td>{html.escape(self.reason)}</td></tr></table>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary of every field."""
        return {
            "name": self.name,
            "requirement": self.requirement.value,
            "applicable": False,
            "n": int(self.n),
            "reason": self.reason,
        }


def clip_pvalue(p: float) -> float:
    """Clamp a numerically computed p-value into [0, 1] (survival functions can overshoot)."""
    p = float(p)
    if math.isnan(p):
        raise ValueError("p-value is NaN")
    return min(1.0, max(0.0, p))


def monte_carlo_pvalue(observed: float, null: np.ndarray) -> float:
    """Upper-tail Monte Carlo p-value ``(b + 1) / (R + 1)``, never 0.

    Parameters
    ----------
    observed : float
        Observed statistic (large values are evidence against H0).
    null : (R,) ndarray of float
        Statistics of R samples drawn under H0.

    Notes
    -----
    Davison & Hinkley (1997), *Bootstrap Methods and their Application*, eq. (4.11); the same
    rule as ``scipy.stats.monte_carlo_test``. A relative tolerance of 1e-12 counts ties as
    exceedances so floating-point noise never makes an identical sample look extreme.
    """
    null = np.asarray(null, dtype=float)
    b = int(np.count_nonzero(null >= monte_carlo_threshold(observed)))
    return (b + 1) / (null.size + 1)


def monte_carlo_threshold(observed: float) -> float:
    """The least null statistic :func:`monte_carlo_pvalue` counts as an exceedance of ``observed``:
    ``observed`` less its relative tolerance of 1e-12 (ties count)."""
    return observed - 1e-12 * max(1.0, abs(float(observed)))
