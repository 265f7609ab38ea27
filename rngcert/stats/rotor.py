"""Tests of the rotor: the wheel head's direction and speed against the results (issue 25).

A wheel controller (and some surveillance logs) reports per spin which way the rotor turned and
how fast, and sometimes which way the ball was spun. These pure functions test what the rules ask
of them:

* :func:`direction_homogeneity` — the results have one law whichever way the rotor turned (the
  direction of each spin may alternate, money-wheel rule 4.1; a wheel that favours a sector in
  one direction only is unpredictable to nobody who watches the rotor);
* :func:`ball_against_wheel` — the ball was spun against the rotor on every spin (roulette rules
  003 rule 3.6 and 004 §4 rule 3.1.1), where the log says which way each turned: a rule check
  (a count of breaches, :class:`RuleCheck`), not a test, so it gives no p-value;
* :func:`speed_independence` — the landing sector does not depend on the rotor speed at the
  ball's launch: an outcome-level test of unpredictability, the proxy for the rotor/ball timing
  attacks of Small & Tse (2012), which predict the landing region from the rotor's and the ball's
  speeds;
* :func:`rotor_speed_trend` — the rotor speed does not drift over the session (a drifting motor is
  an equipment finding, and makes the speed-dependent landing drift with it).

Directions are coded 0 clockwise, 1 counter-clockwise, -1 unknown; speeds are floats in the log's
own unit, NaN where unknown. Spins with an unknown value are left out of the test that needs it
(the count used is in ``n``).

References
----------
Small, M. & Tse, C. K. (2012), "Predicting the outcome of roulette", Chaos 22, 033150.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats._validate import _n_resamples_iv, _rng_iv
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, monte_carlo_pvalue
from rngcert.stats.serial import _contingency_x2, _table_chisquare

__all__ = ["direction_homogeneity", "ball_against_wheel", "RuleCheck", "BALL_RULE", "speed_independence", "rotor_speed_trend", "contingency_test", "DIRECTION_NAMES"]

_REQ = Requirement.UNPREDICTABILITY
#: Names of the direction codes 0 and 1.
DIRECTION_NAMES = ("cw", "ccw")
#: Memory bound (cells) of one permutation batch.
_PERM_BATCH_CELLS = 4_000_000


def _outcomes_iv(outcomes, m, name: str) -> tuple[np.ndarray, int]:
    if isinstance(m, bool) or int(m) != m or m < 2:
        raise InputError(f"{name}: m must be an integer >= 2, got {m!r}")
    x = np.asarray(outcomes)
    if x.ndim != 1 or (x.size and x.dtype.kind not in "iu"):
        raise InputError(f"{name}: outcomes must be a one-dimensional integer array, got shape {x.shape} dtype {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= m):
        raise InputError(f"{name}: outcomes must be in 0..{int(m) - 1}, found {x[(x < 0) | (x >= m)][0]!r}")
    return x.astype(np.int64), int(m)


def _same_length(name: str, x: np.ndarray, label: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.shape != x.shape:
        raise InputError(f"{name}: {label} must have one entry per spin ({x.size}), got shape {a.shape}")
    return a


def contingency_test(rows, cols, r: int, c: int, *, name: str, requirement: Requirement = _REQ, n_resamples: int = 9999,
                     rng: np.random.Generator | None = None, method: str = "auto") -> tuple[TestResult | NotApplicable, np.ndarray | None]:
    r"""Pearson chi-square test that the row and column labels of paired observations are
    independent (homogeneity of the column law across rows).

    Parameters
    ----------
    rows, cols : (n,) int arrays
        Row label 0..r-1 and column label 0..c-1 of each observation.
    r, c : int
        Numbers of row and column labels.
    name : str
        Identifier carried by the result.
    requirement : Requirement
        The requirement the calling test serves.
    n_resamples : int
        Permutations R for the permutation p-value.
    rng : numpy.random.Generator
        Required for the permutation p-value.
    method : {"auto", "asymptotic", "permutation"}
        ``"auto"``: the chi-square law unless the expected counts are sparse (Cochran's rule: any
        expected count < 1, or more than 20% of them < 5), then a permutation p-value.

    Returns
    -------
    result : TestResult or NotApplicable
        ``statistic`` :math:`X^2`, ``df = (r'-1)(c'-1)`` over the non-empty rows and columns;
        details ``observed`` and ``expected`` tables and the cell with the largest standardised
        residual (``cell``: row, column, observed, expected). NotApplicable when fewer than two
        rows or columns are non-empty.
    table : (r, c) int64 array or None
        The observed table (None when not applicable).

    Notes
    -----
    The permutation p-value :math:`(b+1)/(R+1)` permutes the row labels against the column
    labels, which keeps both margins; it is exact for any n when the observations are
    exchangeable (implied by H0 and i.i.d. spins).
    """
    if method not in ("auto", "asymptotic", "permutation"):
        raise InputError(f"{name}: method {method!r} is not one of ('auto', 'asymptotic', 'permutation')")
    n_resamples = _n_resamples_iv(n_resamples, name)
    rows, cols = (a if a.dtype.kind == "i" else a.astype(np.int64) for a in (np.asarray(rows), np.asarray(cols)))
    n = int(rows.size)
    key = np.multiply(rows, c, dtype=np.intp)  # (one index array, in the labels' own types: no int64 copies of them)
    key += cols
    tab = np.bincount(key, minlength=r * c).reshape(r, c)
    del key
    rk, ck = tab.sum(axis=1) > 0, tab.sum(axis=0) > 0
    r2, c2 = int(rk.sum()), int(ck.sum())
    if r2 < 2 or c2 < 2:
        return NotApplicable(name, requirement, n, f"only {r2} non-empty rows and {c2} non-empty columns in the {r} x {c} table"), None
    stat, df, e, method = _table_chisquare(tab, rk, ck, n, method)
    ef = np.zeros((r, c))
    ef[np.ix_(rk, ck)] = e
    z = np.where(ef > 0, (tab - ef) / np.sqrt(np.where(ef > 0, ef, 1.0)), 0.0)
    i, j = np.unravel_index(int(np.argmax(np.abs(z))), z.shape)
    details = dict(observed=tab, expected=ef, min_expected=float(e.min()), frac_expected_below_5=float(np.mean(e < 5.0)),
                   cell={"row": int(i), "column": int(j), "observed": int(tab[i, j]), "expected": float(ef[i, j]), "z": float(z[i, j])})
    if method == "asymptotic":
        return TestResult(name, requirement, stat, df, clip_pvalue(_dist.chi2_sf(stat, df)), n, "asymptotic", details), tab
    rng = _rng_iv(rng, name)
    rows, cols = rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False)
    batch = max(1, _PERM_BATCH_CELLS // max(n, r * c))
    null = np.empty(n_resamples)
    done = 0
    while done < n_resamples:  # loop over batches of permutations
        b = min(batch, n_resamples - done)
        perm = rng.permuted(np.broadcast_to(rows, (b, n)), axis=1)
        codes = perm * c + cols + (np.arange(b) * r * c)[:, None]
        tabs = np.bincount(codes.ravel(), minlength=b * r * c).reshape(b, r, c)
        null[done : done + b] = _contingency_x2(tabs)
        done += b
    return TestResult(name, requirement, stat, df, monte_carlo_pvalue(stat, null), n, f"permutation, R={n_resamples}", details), tab


def direction_homogeneity(outcomes, direction, m: int, *, n_resamples: int = 9999, rng: np.random.Generator | None = None,
                          name: str = "direction_homogeneity") -> TestResult | NotApplicable:
    """Chi-square test that the results have the same law in both rotor directions.

    Parameters
    ----------
    outcomes : (n,) int array
        Outcome ids 0..m-1 in spin order.
    direction : (n,) int array
        Rotor direction of each spin: 0 clockwise, 1 counter-clockwise, -1 unknown (left out).
    m : int
        Number of outcome ids.
    n_resamples : int
        Permutations for a sparse table (see :func:`contingency_test`).
    rng : numpy.random.Generator
        Required when the table is sparse.
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        The 2 x m contingency test; details add ``spins_by_direction`` and the most deviant cell
        as ``direction`` (cw/ccw), ``outcome``, ``observed`` and ``expected`` (from the pooled law
        and the direction's number of spins). NotApplicable when fewer than two spins of each
        direction are known.

    Notes
    -----
    H0: the outcome is independent of the rotor direction (whatever its law). A wheel that is
    fair in one direction and biased in the other, or biased towards opposite sectors in the two
    directions (nearly fair when pooled), is seen here and not by the pooled uniformity tests.
    """
    x, m = _outcomes_iv(outcomes, m, name)
    d = _same_length(name, x, "direction", direction)
    d = d if d.dtype.kind == "i" else d.astype(np.int64)
    known = (d == 0) | (d == 1)
    every = bool(known.all())  # (then no masked copies)
    per = np.bincount(d if every else d[known], minlength=2)
    if per.min() < 2:
        return NotApplicable(name, _REQ, int(known.sum()),
                             f"the rotor turned one way only in the known spins ({int(per[0])} cw, {int(per[1])} ccw): nothing to compare")
    res, tab = contingency_test(d if every else d[known], x if every else x[known], 2, m, name=name, n_resamples=n_resamples, rng=rng)
    if not res.applicable:
        return res
    det = dict(res.details)
    cell = det.pop("cell")
    det.update(spins_by_direction={"cw": int(per[0]), "ccw": int(per[1])}, unknown_direction=int(x.size - known.sum()),
               direction=DIRECTION_NAMES[cell["row"]], outcome=cell["column"], observed_in_direction=cell["observed"],
               expected_in_direction=cell["expected"])
    return TestResult(name, _REQ, res.statistic, res.df, res.pvalue, res.n, res.method, det)


#: The rule that :func:`ball_against_wheel` checks, as the report cites it.
BALL_RULE = ("the ball is spun in the direction opposite to the rotation of the wheel (003 rule 3.6, Gambling Commission "
             "rules of casino games; 004 §4 rule 3.1.1, Rules for the Live Casino: opposite to the rotation, to constitute a valid spin)")


@dataclass(frozen=True)
class RuleCheck:
    """The outcome of a rule check over every spin: a count of breaches, not a chance event, so it
    carries no p-value (DESIGN §4: no p-value of 0 or 1).

    Attributes
    ----------
    name : str
        Identifier of the check (the battery's test name).
    rule : str
        The rule checked, with its source.
    known : int
        Spins on which the check could be made.
    violations : int
        Spins that break the rule.
    first : tuple of int
        0-based indices (in spin order) of up to 10 breaching spins.
    reason : str
        Why the check could not be made (``known == 0``), else empty.
    """

    name: str
    rule: str
    known: int
    violations: int
    first: tuple[int, ...] = ()
    reason: str = ""

    @property
    def applicable(self) -> bool:
        return self.known > 0

    @property
    def broken(self) -> bool:
        return self.violations > 0

    def to_dict(self) -> dict:
        return {"name": self.name, "rule": self.rule, "known": self.known, "violations": self.violations,
                "first_spins": list(self.first), "reason": self.reason}


def ball_against_wheel(direction, ball_direction, *, name: str = "ball_against_wheel") -> RuleCheck:
    """Rule check: the ball is spun against the rotor on every spin.

    Parameters
    ----------
    direction, ball_direction : (n,) int arrays
        Rotor and ball direction of each spin (0 cw, 1 ccw, -1 unknown).
    name : str
        Identifier carried by the result.

    Returns
    -------
    RuleCheck
        ``violations``: spins in which ball and rotor turned the same way, among the ``known``
        spins where both directions are recorded; ``first``: the 0-based indices of up to 10 of
        them. Not a statistical test: a single such spin breaks the rule, whatever chance says, so
        no p-value is given (the caller states the breach as a procedure finding). Not applicable
        (``known == 0``, with ``reason``) when no spin has both directions.

    Notes
    -----
    Roulette rules 003 rule 3.6 and 004 §4 rule 3.1.1: the ball shall be spun in the direction
    opposite to the rotation of the wheel (under 004, to constitute a valid spin). Spinning with
    the rotor lowers the relative speed of ball and rotor, which is what a timing attack exploits.
    """
    d = np.asarray(direction)
    b = np.asarray(ball_direction)
    if d.shape != b.shape or d.ndim != 1:
        raise InputError(f"{name}: direction and ball_direction must be one-dimensional of one length, got {d.shape} and {b.shape}")
    both = (d >= 0) & (b >= 0)
    n = int(both.sum())
    if n == 0:
        return RuleCheck(name, BALL_RULE, 0, 0, (), "no spin has both the rotor's and the ball's direction")
    same = both & (d == b)
    return RuleCheck(name, BALL_RULE, n, int(same.sum()), tuple(int(i) for i in np.flatnonzero(same)[:10]))


def _quantile_bins(v: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Class ids 0..B-1 of ``v`` cut at its empirical quantiles (equal values share a class, so
    classes may be unequal or fewer than ``n_bins``), and the (B, 2) smallest and largest value
    of each class."""
    edges = np.unique(np.quantile(v, np.linspace(0, 1, n_bins + 1)[1:-1]))
    ids = np.searchsorted(edges, v, side="right")
    used, ids = np.unique(ids, return_inverse=True)
    ranges = np.array([[v[ids == b].min(), v[ids == b].max()] for b in range(used.size)])  # loop over the few classes
    return ids.astype(np.int64), ranges


def speed_independence(outcomes, speed, m: int, *, circular: bool = True, n_bins: int = 4, n_sectors: int = 8,
                       n_resamples: int = 9999, rng: np.random.Generator | None = None,
                       name: str = "speed_independence") -> TestResult | NotApplicable:
    """Chi-square test that the landing sector is independent of the rotor speed at launch.

    Parameters
    ----------
    outcomes : (n,) int array
        Outcome ids 0..m-1 (wheel positions when ``circular``).
    speed : (n,) float array
        Rotor speed of each spin at the ball's launch; NaN unknown (left out).
    m : int
        Number of outcome ids.
    circular : bool
        Whether the ids are positions in wheel order: then they are grouped into ``n_sectors``
        arcs of adjacent pockets; otherwise each id is its own column.
    n_bins : int
        Speed classes, cut at the empirical quantiles of the speeds (equal speeds share a class).
    n_sectors : int
        Arcs of the wheel (at most m).
    n_resamples, rng
        Permutations for a sparse table (see :func:`contingency_test`).
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        The speed class x sector contingency test; details add ``speed_classes`` (low, high of
        each class), ``sectors`` (the first and last position of each arc) and the most deviant
        cell (``speed_low``, ``speed_high``, ``sector_first``, ``sector_last``, ``observed``,
        ``expected``). NotApplicable when the speeds are unknown or all equal.

    Notes
    -----
    H0: the landing sector is independent of the rotor speed. Under the physics of Small & Tse
    (2012) the landing sector relative to the ball's launch is a function of the ball's and the
    rotor's speeds; a wheel whose landing sector moves with the rotor speed is predictable to a
    player who times the rotor. Outcomes are grouped in arcs so the table stays dense and the
    test has power against a landing region that moves with the speed.
    """
    x, m = _outcomes_iv(outcomes, m, name)
    v = _same_length(name, x, "speed", speed).astype(float)
    if n_bins < 2 or n_sectors < 2:
        raise InputError(f"{name}: n_bins and n_sectors must be >= 2, got {n_bins} and {n_sectors}")
    known = np.isfinite(v)
    nk = int(known.sum())
    if nk < 2:
        return NotApplicable(name, _REQ, nk, f"the rotor speed is known for {nk} spin(s)")
    vk = v[known]
    if vk.min() == vk.max():
        return NotApplicable(name, _REQ, nk, f"the rotor speed is the same ({vk[0]:g}) in every spin with a speed: nothing to compare")
    bins, ranges = _quantile_bins(vk, n_bins)
    S = min(int(n_sectors), m) if circular else m
    col = (x[known] * S) // m if circular else x[known]
    res, tab = contingency_test(bins, col, ranges.shape[0], S, name=name, n_resamples=n_resamples, rng=rng)
    if not res.applicable:
        return res
    det = dict(res.details)
    cell = det.pop("cell")
    first = (np.arange(S) * m + S - 1) // S  # the first position p with p * S // m == s
    last = np.r_[first[1:] - 1, m - 1]
    det.update(speed_classes=ranges, sectors=np.c_[first, last] if circular else None, unknown_speed=int(x.size - nk),
               speed_low=float(ranges[cell["row"], 0]), speed_high=float(ranges[cell["row"], 1]),
               sector_first=int(first[cell["column"]]) if circular else int(cell["column"]),
               sector_last=int(last[cell["column"]]) if circular else int(cell["column"]),
               observed=cell["observed"], expected=cell["expected"])
    return TestResult(name, _REQ, res.statistic, res.df, res.pvalue, res.n, res.method, det)


def rotor_speed_trend(speed, *, min_spins: int = 20, name: str = "rotor_speed_trend") -> TestResult | NotApplicable:
    """Spearman rank test of a monotone trend of the rotor speed over the session.

    Parameters
    ----------
    speed : (n,) float array
        Rotor speed of each spin, in spin order; NaN unknown (left out).
    min_spins : int
        Fewest spins with a speed for the test to apply.
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic``: Spearman's rho between the spin index and the speed (average ranks for
        ties); two-sided p-value from :math:`z = \\rho\\sqrt{n-1}`. Details: ``rho``, ``first``
        and ``last`` (mean speed of the first and last tenth of the spins), ``change`` (last
        minus first). NotApplicable with fewer than ``min_spins`` speeds or constant speeds.

    Notes
    -----
    H0: the speeds are exchangeable in time (no drift). Under every permutation of the speeds
    the Pearson correlation of two fixed vectors has mean 0 and variance exactly 1/(n - 1),
    ties or not, so ``z`` is standardised exactly and normal for large n. A controller that
    varies the speed at random within its range passes; a motor that slows or speeds up over
    the session (wear, heat, a failing drive) does not. A speed that wanders without a trend
    (strong autocorrelation) also inflates ``rho``: the report states the first and last means
    so the drift can be judged.
    """
    from scipy.stats import rankdata

    v = np.asarray(speed, dtype=float)
    if v.ndim != 1:
        raise InputError(f"{name}: speed must be one-dimensional, got shape {v.shape}")
    idx = np.flatnonzero(np.isfinite(v))
    n = int(idx.size)
    if n < max(int(min_spins), 3):
        return NotApplicable(name, Requirement.UNPREDICTABILITY, n, f"the rotor speed is known for {n} spins; the trend test needs {max(int(min_spins), 3)}")
    vk = v[idx]
    if vk.min() == vk.max():
        return NotApplicable(name, Requirement.UNPREDICTABILITY, n, f"the rotor speed is the same ({vk[0]:g}) in every spin: no trend to test")
    a = rankdata(vk) - (n + 1) / 2
    t = rankdata(idx) - (n + 1) / 2
    rho = float(a @ t / np.sqrt((a @ a) * (t @ t)))
    z = rho * np.sqrt(n - 1)
    p = clip_pvalue(2 * _dist.norm_sf(abs(z)))
    tenth = max(1, n // 10)
    first, last = float(vk[:tenth].mean()), float(vk[-tenth:].mean())
    details = dict(rho=rho, z=float(z), first=first, last=last, change=last - first, tenth=tenth)
    return TestResult(name, Requirement.UNPREDICTABILITY, rho, None, max(p, np.finfo(float).tiny), n, "asymptotic (Spearman, exact variance)", details)
