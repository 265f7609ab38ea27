r"""Power and sample size of the wheel tests against named bias alternatives.

Alternatives (effect sizes exactly as planted by :mod:`rngcert.stats.alternatives` (the models the simulator plants)):

``single-pocket``
    one pocket's weight is multiplied by ``1 + effect`` (``effect = 0.1`` is "+10%"), then all
    weights are renormalised: that pocket has probability :math:`(1+\delta)/(k+\delta)`;
``sector:K``
    ``K`` contiguous pockets get weight ``1 + effect``;
``harmonic``
    weight :math:`1 + a\cos(2\pi j/k - \phi)` with amplitude ``a = effect`` (``0 <= a < 1``);
``dealer-signature`` or ``dealer-signature:K``
    the landing offset from the reference pocket falls in a ``K``-pocket sector (default K = 1)
    ``1 + effect`` times as often as fair, in every dealer/direction group.

How power is computed (stated in every result's ``method``):

* **non-central chi-square** for the tests whose statistic is chi-square: ``pocket_chisquare``
  and category tests (df k-1; Pearson's :math:`X^2 \approx s\,\chi'^2_{k-1}(\lambda')` with s and
  :math:`\lambda'` fitted to the exact mean and variance of :math:`X^2` under the alternative,
  Broffitt & Randles 1977, Patnaik 1949 — the local law :math:`\lambda = n w^2` of Cochran 1952
  and Cohen 1988 §7.2 overstates the power against a concentrated bias, see
  :func:`chisquare_power`) and ``first_harmonic`` (df 2, local law
  :math:`\lambda = n(\mu_1-\mu_0)^T\Sigma_0^{-1}(\mu_1-\mu_0)`, which is :math:`n a^2/2` for the
  harmonic alternative on a uniform wheel);
* **seeded simulation** for the max and scan statistics ``max_count``, ``sector_scan`` and
  ``dealer_signature``: the critical value is taken from simulated null replicates exactly as the
  battery's Monte Carlo decision ``(b+1)/(R+1) <= alpha`` would, and power is the share of
  simulated alternative samples rejected. Searches over n or the effect use common random
  numbers (the same seeds at every candidate), so the estimated power curve is smooth.
  Any test can be forced to simulation with ``method="simulation"`` (used to validate the
  non-central approximation).

Power is per test at level ``alpha`` (not the power of the whole battery after Holm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats import _dist
from rngcert.stats._arcs import _arc_tables, _scan
from rngcert.stats.alternatives import block_probabilities
from rngcert.stats.result import jsonable

__all__ = [
    "PowerResult",
    "ALTERNATIVES",
    "TESTS",
    "parse_alternative",
    "alternative_probs",
    "chisquare_power",
    "power_at",
    "spins_needed",
    "min_detectable_effect",
    "min_detectable_section_bias_categories",
    "spins_needed_section_bias_categories",
    "chisquare_min_detectable_pocket_bias",
    "chisquare_spins_needed",
    "power_statement",
]

ALTERNATIVES = ("single-pocket", "sector", "harmonic", "dealer-signature")

#: Tests that can be planned for each alternative (first = default).
TESTS = {
    "single-pocket": ("pocket_chisquare", "max_count", "sector_scan"),
    "sector": ("sector_scan", "pocket_chisquare", "first_harmonic"),
    "harmonic": ("first_harmonic", "pocket_chisquare", "sector_scan"),
    "dealer-signature": ("dealer_signature",),
}

_CHISQUARE_TESTS = ("pocket_chisquare", "first_harmonic")
_SIM_TESTS = ("max_count", "sector_scan", "dealer_signature")
_MAX_EFFECT = 100.0
_BATCH_CELLS = 2_000_000


@dataclass(frozen=True)
class PowerResult:
    """Power of one test against one alternative.

    Attributes
    ----------
    alternative : str
        ``"single-pocket"``, ``"sector:5"``, ``"harmonic"``, ``"dealer-signature:1"``.
    test : str
        Battery test name whose power this is.
    method : str
        ``"non-central chi-square, df=36"`` or ``"simulation, R_null=…, R_alt=…"``.
    solved_for : str
        ``"n"`` (spins needed), ``"effect"`` (minimum detectable effect) or ``"power"``.
    n : int or None
        Spins (for dealer-signature: spins in all groups together); None if no n up to
        ``max_n`` reaches the power.
    effect : float
        Effect size (inf when no effect up to the search bound reaches the power).
    alpha, power : float
        Level, and the target power (``solved_for`` n/effect) or the computed power.
    achieved_power : float or None
        Power at the returned (n, effect): exact non-central value, or the simulated estimate.
    k, groups : int
        Wheel positions; dealer/direction groups (dealer-signature).
    details : mapping
        Critical value, non-centrality, simulation seed and standard error, search bounds.
    """

    alternative: str
    test: str
    method: str
    solved_for: str
    n: int | None
    effect: float
    alpha: float
    power: float
    achieved_power: float | None
    k: int
    groups: int = 1
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return jsonable(
            {
                "alternative": self.alternative,
                "test": self.test,
                "method": self.method,
                "solved_for": self.solved_for,
                "n": self.n,
                "effect": self.effect if math.isfinite(self.effect) else "inf",
                "alpha": self.alpha,
                "power": self.power,
                "achieved_power": self.achieved_power,
                "k": self.k,
                "groups": self.groups,
                "details": dict(self.details),
            }
        )

    def text(self) -> str:
        """One line for humans (CLI and reports)."""
        eff = _effect_words(self.alternative, self.effect)
        if self.solved_for == "n":
            if self.n is None:
                return f"{self.test}: no sample size up to {self.details.get('max_n')} detects {eff} with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
            return f"{self.test}: {self.n} spins detect {eff} with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
        if self.solved_for == "effect":
            if not math.isfinite(self.effect):
                return f"{self.test}: with {self.n} spins no {self.alternative} bias up to the search bound is detected with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
            return f"{self.test}: with {self.n} spins the minimum detectable bias is {eff} (power {self.power:.0%}, alpha={self.alpha}) [{self.method}]"
        return f"{self.test}: power {self.power:.1%} to detect {eff} with {self.n} spins at alpha={self.alpha} [{self.method}]"



def _brentq(*args, **kw):
    from scipy import optimize  # imported on first use: it costs about 0.6 s, and a report rarely needs it

    return optimize.brentq(*args, **kw)

def _effect_words(alternative: str, effect: float) -> str:
    if not math.isfinite(effect):
        return f"{alternative} (none)"
    if alternative == "harmonic":
        return f"a harmonic bias of amplitude {effect:.4g}"
    return f"a {alternative} bias of {effect:+.2%}"


# ----------------------------------------------------------------------------- alternatives
def parse_alternative(alternative: str) -> tuple[str, int]:
    """Split ``"sector:5"`` into ``("sector", 5)``.

    Returns
    -------
    kind : str
        One of :data:`ALTERNATIVES`.
    width : int
        Sector width K (1 for single-pocket and the default dealer signature; 0 for harmonic).

    Raises
    ------
    InputError
        Unknown alternative or a bad width.
    """
    s = str(alternative).strip().lower()
    kind, _, w = s.partition(":")
    if kind not in ALTERNATIVES:
        raise InputError(
            f"unknown alternative {alternative!r}; allowed: single-pocket, sector:K, harmonic, dealer-signature[:K]"
        )
    if kind == "sector" and not w:
        raise InputError(f"alternative {alternative!r}: give the sector width, e.g. 'sector:5'")
    if kind in ("single-pocket", "harmonic") and w:
        raise InputError(f"alternative {alternative!r}: {kind} takes no width")
    if w:
        if not w.isdigit() or int(w) < 1:
            raise InputError(f"alternative {alternative!r}: width must be a positive integer, got {w!r}")
        width = int(w)
    else:
        width = 0 if kind == "harmonic" else 1
    return kind, width


def _canonical(kind: str, width: int) -> str:
    if kind in ("sector", "dealer-signature"):
        return f"{kind}:{width}"
    return kind


def alternative_probs(k: int, alternative: str, effect: float) -> np.ndarray:
    """(k,) cell probabilities under an alternative (positions, or offsets for dealer-signature).

    Uses :func:`rngcert.stats.alternatives.position_probabilities` and
    :func:`~rngcert.stats.alternatives.offset_probabilities`, so the effect means exactly what
    the simulator plants (biased block starting at position 0; harmonic phase 0).
    """

    kind, width = parse_alternative(alternative)
    k = _k_iv(k)
    _effect_iv(kind, width, effect, k)
    return block_probabilities(k, kind, width, effect)


def _k_iv(k) -> int:
    if isinstance(k, bool) or int(k) != k or k < 3:
        raise InputError(f"k (wheel positions) must be an integer >= 3, got {k!r}")
    return int(k)


def _effect_iv(kind, width, effect, k):
    if not isinstance(effect, (int, float, np.floating)) or not math.isfinite(effect):
        raise InputError(f"effect must be a finite number, got {effect!r}")
    if kind == "harmonic":
        if not 0 < effect < 1:
            raise InputError(f"harmonic amplitude must be in (0, 1), got {effect!r}")
    elif not effect > 0:
        raise InputError(f"effect (relative excess, 0.1 = +10%) must be > 0, got {effect!r}")
    if width >= k:
        raise InputError(f"sector width {width} must be smaller than the number of positions k={k}")


def _common_iv(alpha, power):
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    if power is not None and not alpha < power < 1:
        raise InputError(f"power must be in (alpha, 1) = ({alpha}, 1), got {power!r}")


def _test_iv(kind, test, method):
    allowed = TESTS[kind]
    if test is None:
        test = allowed[0]
    if test not in allowed:
        raise InputError(f"test {test!r} cannot be planned for a {kind} alternative; allowed: {', '.join(allowed)}")
    if method not in ("auto", "noncentral", "simulation"):
        raise InputError(f"method must be 'auto', 'noncentral' or 'simulation', got {method!r}")
    if method == "auto":
        method = "noncentral" if test in _CHISQUARE_TESTS else "simulation"
    if method == "noncentral" and test not in _CHISQUARE_TESTS:
        raise InputError(f"{test} has no non-central chi-square law; use method='simulation'")
    return test, method


# ----------------------------------------------------------------------------- non-central
def _harmonic_basis(k):
    theta = 2.0 * np.pi * np.arange(k) / k
    return np.stack([np.cos(theta), np.sin(theta)], axis=1)


def _noncentrality_per_spin(test: str, p0: np.ndarray, p1: np.ndarray) -> tuple[float, int]:
    """(λ per spin, df) of the chi-square test under p1 against p0."""
    k = p0.size
    if test == "pocket_chisquare":
        return float(np.sum((p1 - p0) ** 2 / p0)), k - 1
    V = _harmonic_basis(k)
    mu0, mu1 = p0 @ V, p1 @ V
    sigma = (V * p0[:, None]).T @ V - np.outer(mu0, mu0)
    d = mu1 - mu0
    return float(d @ np.linalg.solve(sigma, d)), 2


def _pearson_moments(n: int, p0: np.ndarray, p1: np.ndarray) -> tuple[float, float]:
    """Exact mean and variance of Pearson's X² = Σ (N_i - n p0_i)²/(n p0_i), N ~ Mult(n, p1).

    With D = N - n p1 and d = n (p1 - p0): X² = Σ a_i D_i² + 2 Σ a_i d_i D_i + Σ a_i d_i², a = 1/(n p0).
    The multinomial's cumulants are n times those of one categorical draw Z = e_c - p1, so
    Var = aᵀ(n κ4 + 2 (n κ2)²) a + 4 (a∘d)ᵀ n κ2 (a∘d) + 4 aᵀ n m3 (a∘d), with κ2 = diag(p1) - p1p1ᵀ,
    m3_ij = E[Z_i² Z_j], κ4_ij = E[Z_i² Z_j²] - κ2_ii κ2_jj - 2 κ2_ij².
    """
    k = p0.size
    Z = np.eye(k) - p1[None, :]  # row c: the centred indicator when category c occurs
    Z2 = Z * Z
    w = p1[:, None]
    k2 = np.diag(p1) - np.outer(p1, p1)
    m3 = Z2.T @ (w * Z)
    m4 = Z2.T @ (w * Z2)
    dk = np.diag(k2)
    k4 = m4 - np.outer(dk, dk) - 2.0 * k2 * k2
    a = 1.0 / (n * p0)
    d = n * (p1 - p0)
    ad = a * d
    mean = float(np.sum(a * n * dk) + np.sum(a * d * d))
    var = float(a @ (n * k4 + 2.0 * (n * k2) ** 2) @ a + 4.0 * ad @ (n * k2) @ ad + 4.0 * a @ (n * m3) @ ad)
    return mean, var


def _pearson_power(n: int, p0: np.ndarray, p1: np.ndarray, alpha: float) -> tuple[float, dict]:
    """Two-moment non-central chi-square power of Pearson's test (df = k - 1), and its parameters."""
    df = p0.size - 1
    crit = _dist.chi2_isf(alpha, df)
    mean, var = _pearson_moments(n, p0, p1)
    disc = 16.0 * mean * mean - 8.0 * df * var
    if disc >= 0:
        scale = (4.0 * mean - math.sqrt(disc)) / (4.0 * df)
        lam = max(0.0, mean / scale - df)
        pw = float(_dist.ncx2_sf(crit / scale, df, lam)) if lam > 0 else float(_dist.chi2_sf(crit / scale, df))
        det = dict(approximation="scaled non-central chi-square, two moments", scale=scale, noncentrality=lam, df=df)
    else:  # variance too large for df = k-1: Satterthwaite's scaled chi-square
        scale = var / (2.0 * mean)
        nu = 2.0 * mean * mean / var
        pw = float(_dist.chi2_sf(crit / scale, nu))
        det = dict(approximation="scaled chi-square (Satterthwaite), two moments", scale=scale, df_fitted=nu, df=df)
    det.update(critical_value=crit, mean=mean, variance=var, local_noncentrality=float(n * np.sum((p1 - p0) ** 2 / p0)))
    return pw, det


def _collapse(p0, p1, categories):
    cat = np.asarray(categories)
    if cat.shape != p0.shape or cat.dtype.kind not in "iu":
        raise InputError(f"categories must be integer ids of shape {p0.shape}, got {cat.shape} {cat.dtype}")
    incl = cat >= 0
    ids, idx = np.unique(cat[incl], return_inverse=True)
    if ids.size < 2:
        raise InputError("categories: need at least two categories")
    q0 = np.bincount(idx, weights=p0[incl], minlength=ids.size)
    q1 = np.bincount(idx, weights=p1[incl], minlength=ids.size)
    return q0 / q0.sum(), q1 / q1.sum()


def _analytic_power(test: str, n: int, p0: np.ndarray, p1: np.ndarray, alpha: float, approximation: str = "two-moment") -> tuple[float, dict]:
    if test == "pocket_chisquare" and approximation == "two-moment":
        return _pearson_power(n, p0, p1, alpha)
    lam1, df = _noncentrality_per_spin(test, p0, p1)
    crit = _dist.chi2_isf(alpha, df)
    return float(_dist.ncx2_sf(crit, df, n * lam1)), dict(
        approximation="non-central chi-square, local (lambda = n w^2)", critical_value=crit, noncentrality=n * lam1, df=df
    )


def chisquare_power(
    n: int, p0, p1, alpha: float = 0.01, *, test: str = "pocket_chisquare", categories=None, approximation: str = "two-moment"
) -> float:
    r"""Power of a Pearson-type chi-square test from a non-central chi-square law.

    Parameters
    ----------
    n : int
        Spins.
    p0, p1 : (k,) array_like of float
        Null and alternative probabilities of the k positions.
    alpha : float
        Level.
    test : {"pocket_chisquare", "first_harmonic"}
        Which statistic (df k-1, or 2).
    categories : (k,) array_like of int, optional
        For a category test (outside bets, symbols): category id per position, -1 for positions
        in no category (excluded and renormalised as in
        :func:`rngcert.stats.frequency.category_frequency`). Only with ``pocket_chisquare``.
    approximation : {"two-moment", "local"}
        Pearson's test only. ``"local"``: :math:`X^2 \sim \chi'^2_{k-1}(\lambda)`,
        :math:`\lambda = n\sum_j (p_{1j}-p_{0j})^2/p_{0j}` (Cohen's :math:`n w^2`) [1]_.
        ``"two-moment"`` (default): :math:`X^2 \approx s\,\chi'^2_{k-1}(\lambda')` with s and
        :math:`\lambda'` matching the exact mean and variance of :math:`X^2` under the
        alternative [2]_ (Satterthwaite's :math:`s\chi^2_\nu` if no such pair exists).

    Returns
    -------
    float
        :math:`P(X^2 > \chi^2_{df,1-\alpha})` under p1. ``first_harmonic`` always uses the local
        law with :math:`\lambda = n(\mu_1-\mu_0)^T\Sigma_0^{-1}(\mu_1-\mu_0)`.

    Notes
    -----
    The local non-central law is the limit under alternatives shrinking like :math:`n^{-1/2}`
    [1]_. For a fixed bias concentrated in one cell it overstates power: measured on k = 37 at
    the planned n for 90%, 0.894 (+10%), 0.882 (+30%), 0.862 (+60%), 0.839 (+100%) by
    simulation, against 0.892, 0.878, 0.858, 0.835 from the two-moment law
    (``tests/test_power.py``). The exact moments follow from the multinomial cumulants
    (see ``_pearson_moments``).

    References
    ----------
    .. [1] Cochran, W. G. (1952), "The chi-square test of goodness of fit", Ann. Math. Statist.
           23, 315-345; Cohen, J. (1988), *Statistical Power Analysis*, 2nd ed., §7.2.
    .. [2] Broffitt, J. D. & Randles, R. H. (1977), "A power approximation for the chi-square
           goodness-of-fit test: simple hypothesis case", J. Amer. Statist. Assoc. 72, 604-607
           (exact mean and variance of X² under fixed alternatives); Patnaik, P. B. (1949),
           Biometrika 36, 202-232 (moment-matched approximations to the non-central chi-square).
    """
    _common_iv(alpha, None)
    if approximation not in ("two-moment", "local"):
        raise InputError(f"approximation must be 'two-moment' or 'local', got {approximation!r}")
    p0 = np.asarray(p0, dtype=float)
    p1 = np.asarray(p1, dtype=float)
    if p0.shape != p1.shape or p0.ndim != 1:
        raise InputError(f"p0 and p1 must be one-dimensional of equal length, got {p0.shape}, {p1.shape}")
    if categories is not None:
        p0, p1 = _collapse(p0, p1, categories)
    return _analytic_power(test, int(n), p0, p1, alpha, approximation)[0]


def _solve_n(f, guess: int, power: float, max_n: int) -> int | None:
    """Smallest n >= 1 with f(n) >= power for an increasing f (bracket from guess, then bisect)."""
    hi = max(1, guess)
    lo = 0
    if f(hi) >= power:
        while hi > 1 and f(hi // 2) >= power:
            hi //= 2
        lo = hi // 2
    else:
        lo = hi
        while f(hi) < power:
            lo, hi = hi, hi * 2
            if hi > 4 * max_n:
                return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi if hi <= max_n else None


# ----------------------------------------------------------------------------- simulation
def _scan_lengths(test: str, k: int):
    if test == "dealer_signature":
        return list(range(1, k // 2 + 1))  # dealer_signature defaults: min_len 1 .. k//2
    return list(range(2, k // 2 + 1))  # sector_scan defaults: min_len 2 .. k//2


def _statistics(test: str, x: np.ndarray, n_per_group: np.ndarray, k: int) -> np.ndarray:
    """Statistic of ``test`` for count arrays ``x`` of shape (b, g, k) (uniform null)."""
    if test in ("sector_scan", "dealer_signature"):

        lengths = _scan_lengths(test, k)
        g = x.shape[1]
        p2 = np.full((g, k), 1.0 / k)
        tables = _arc_tables(p2, n_per_group.astype(float), lengths)
        m = np.zeros(x.shape[0])
        for z in _scan(x, tables, lengths):  # loop over arc lengths
            np.maximum(m, np.max(np.abs(z), axis=(-2, -1)), out=m)
        return m
    xs = x[:, 0, :].astype(float)
    n = float(n_per_group[0])
    if test == "max_count":
        return xs.max(axis=1)
    if test == "pocket_chisquare":
        e = n / k
        return np.sum((xs - e) ** 2, axis=1) / e
    if test == "first_harmonic":
        V = _harmonic_basis(k)
        vbar = xs @ V / n
        return 2.0 * n * np.sum(vbar**2, axis=1)
    raise InputError(f"unknown test {test!r}")


def _simulate(test: str, n: int, p: np.ndarray, groups: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` simulated statistics with n spins split evenly over ``groups`` groups, each ~ p."""
    k = p.size
    ng = np.full(groups, n // groups)
    ng[: n % groups] += 1
    cells = k * groups * (2 * k + 4 + 2 * len(_scan_lengths(test, k)))
    batch = max(1, _BATCH_CELLS // max(1, cells))
    out = np.empty(size)
    done = 0
    while done < size:
        b = min(batch, size - done)
        x = np.stack([rng.multinomial(int(m), p, size=b) for m in ng], axis=1)  # (b, g, k)
        out[done : done + b] = _statistics(test, x, ng, k)
        done += b
    return out


def _reject(null_sorted: np.ndarray, stats_: np.ndarray, alpha: float, test: str, df: int | None) -> np.ndarray:
    """Rejections at level alpha: asymptotic chi-square critical value, or the Monte Carlo rule."""
    if null_sorted is None:
        return stats_ > _dist.chi2_isf(alpha, df)
    R = null_sorted.size
    b = R - np.searchsorted(null_sorted, stats_ - 1e-9 * np.maximum(1.0, np.abs(stats_)), side="left")
    return (b + 1.0) / (R + 1.0) <= alpha


class _Simulator:
    """Power by simulation with common random numbers (one seed per role, reused at every point)."""

    def __init__(self, test, kind, width, k, groups, alpha, n_null, n_alt, rng, use_null):
        self.test, self.kind, self.width, self.k, self.groups = test, kind, width, k, groups
        self.alpha, self.n_null, self.n_alt = alpha, n_null, n_alt
        self.entropy = int(rng.integers(0, 2**63 - 1))
        self.use_null = use_null  # False: asymptotic chi-square critical value
        self.df = None if use_null else (k - 1 if test == "pocket_chisquare" else 2)
        self._null_cache: dict[int, np.ndarray] = {}

    def _gen(self, role: int) -> np.random.Generator:
        return stream(self.entropy, role)

    def null(self, n: int):
        if not self.use_null:
            return None
        if n not in self._null_cache:
            p0 = np.full(self.k, 1.0 / self.k)
            self._null_cache[n] = np.sort(_simulate(self.test, n, p0, self.groups, self.n_null, self._gen(0)))
        return self._null_cache[n]

    def power(self, n: int, effect: float) -> float:
        p1 = alternative_probs(self.k, _canonical(self.kind, self.width), effect)
        alt = _simulate(self.test, n, p1, self.groups, self.n_alt, self._gen(1))
        return float(np.mean(_reject(self.null(n), alt, self.alpha, self.test, self.df)))

    def method(self) -> str:
        crit = f"R_null={self.n_null}" if self.use_null else f"asymptotic chi-square critical value, df={self.df}"
        return f"simulation, {crit}, R_alt={self.n_alt}"

    def details(self) -> dict:
        return {"seed_entropy": str(self.entropy), "n_null": self.n_null if self.use_null else 0, "n_alt": self.n_alt}


def _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng):
    kind, width = parse_alternative(alternative)
    k = _k_iv(k)
    if width >= k:
        raise InputError(f"sector width {width} must be smaller than the number of positions k={k}")
    _common_iv(alpha, power)
    test, method = _test_iv(kind, test, method)
    if isinstance(groups, bool) or int(groups) != groups or groups < 1:
        raise InputError(f"groups must be a positive integer, got {groups!r}")
    if groups != 1 and kind != "dealer-signature":
        raise InputError("groups > 1 is only meaningful for the dealer-signature alternative")
    sim = None
    if method == "simulation":
        if not isinstance(rng, np.random.Generator):
            raise InputError(f"power by simulation needs rng=numpy.random.Generator, got {rng!r}")
        for label, v in (("n_null", n_null), ("n_alt", n_alt)):
            if isinstance(v, bool) or int(v) != v or v < 10:
                raise InputError(f"{label} must be an integer >= 10, got {v!r}")
        if test not in _CHISQUARE_TESTS and n_null < 2.0 / alpha:
            raise InputError(f"n_null={n_null} is too small for alpha={alpha}: need at least {math.ceil(2 / alpha)}")
        sim = _Simulator(test, kind, width, k, int(groups), alpha, int(n_null), int(n_alt), rng, test not in _CHISQUARE_TESTS)
    return kind, width, k, test, method, int(groups), sim


def _nc_method(test, k):
    if test == "pocket_chisquare":
        return f"non-central chi-square (two-moment fit to the exact mean and variance of X^2), df={k - 1}"
    return "non-central chi-square, df=2"


# ----------------------------------------------------------------------------- public API
def power_at(
    n: int,
    k: int,
    alternative: str,
    effect: float,
    *,
    alpha: float = 0.01,
    test: str | None = None,
    method: str = "auto",
    groups: int = 1,
    n_null: int = 10_000,
    n_alt: int = 2_000,
    rng: np.random.Generator | None = None,
) -> PowerResult:
    """Power of a wheel test with ``n`` spins against an alternative of a given effect size.

    Parameters
    ----------
    n : int
        Spins (all groups together).
    k : int
        Wheel positions (37, 38, 52, 54).
    alternative : str
        ``single-pocket``, ``sector:K``, ``harmonic``, ``dealer-signature[:K]`` (module docstring).
    effect : float
        Relative excess (0.1 = +10%), or the harmonic amplitude.
    alpha : float
        Level of the test.
    test : str, optional
        One of :data:`TESTS` [kind]; default the first.
    method : {"auto", "noncentral", "simulation"}
        ``auto``: non-central chi-square for chi-square tests, simulation otherwise.
    groups : int
        Dealer/direction groups over which the n spins are split evenly (dealer-signature).
    n_null, n_alt : int
        Simulated null replicates (critical value) and alternative samples (power estimate).
    rng : numpy.random.Generator
        Required for simulation.

    Returns
    -------
    PowerResult
        ``solved_for = "power"``; ``power`` = ``achieved_power`` = the power; for simulation
        ``details["se"]`` is its binomial standard error.
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, None, test, method, groups, n_null, n_alt, rng)
    _effect_iv(kind, width, effect, k)
    n = _n_iv(n)
    alt = _canonical(kind, width)
    if sim is None:
        pw, det = _analytic_power(test, n, np.full(k, 1.0 / k), alternative_probs(k, alt, effect), alpha)
        return PowerResult(alt, test, _nc_method(test, k), "power", n, float(effect), alpha, pw, pw, k, groups, det)
    pw = sim.power(n, effect)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt)}
    return PowerResult(alt, test, sim.method(), "power", n, float(effect), alpha, pw, pw, k, groups, det)


def _n_iv(n) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n (spins) must be a positive integer, got {n!r}")
    return int(n)


def spins_needed(
    k: int,
    alternative: str,
    effect: float,
    *,
    alpha: float = 0.01,
    power: float = 0.9,
    test: str | None = None,
    method: str = "auto",
    groups: int = 1,
    max_n: int = 10**9,
    n_null: int = 10_000,
    n_alt: int = 2_000,
    rng: np.random.Generator | None = None,
) -> PowerResult:
    r"""Smallest number of spins for which the test detects the alternative with ``power``.

    Parameters
    ----------
    k, alternative, effect, alpha, test, method, groups, n_null, n_alt, rng
        As in :func:`power_at`.
    power : float
        Target power, in (alpha, 1).
    max_n : int
        Search bound; ``n`` is None in the result when it is not enough.

    Returns
    -------
    PowerResult
        ``solved_for = "n"``; ``achieved_power`` is the power at the returned n.

    Notes
    -----
    Non-central chi-square: the smallest n whose power (:func:`chisquare_power`) reaches the
    target, by bracketing from the local-law guess :math:`\lceil \lambda^*/\lambda_1 \rceil` and
    integer bisection (power increases with n). Simulation: bisection over n on the
    common-random-number power curve (bracketing, then to a relative precision of 0.5%).

    Examples
    --------
    >>> from rngcert.stats.power import spins_needed
    >>> r = spins_needed(37, "single-pocket", 0.1, alpha=0.01, power=0.9)
    >>> r.n, round(r.achieved_power, 4)
    (162443, 0.9)

    A pocket that comes up 10% more often than fair (probability 1.1/37.1) needs about 162,000
    spins for the pocket chi-square to flag it nine times out of ten at the 99% level.
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng)
    _effect_iv(kind, width, effect, k)
    alt = _canonical(kind, width)
    if sim is None:
        p0, p1 = np.full(k, 1.0 / k), alternative_probs(k, alt, effect)
        lam1, df = _noncentrality_per_spin(test, p0, p1)
        guess = max(1, math.ceil(_lambda_for_power(_dist.chi2_isf(alpha, df), df, power) / lam1))
        n = _solve_n(lambda m: _analytic_power(test, m, p0, p1, alpha)[0], guess, power, max_n)
        if n is None:
            return PowerResult(alt, test, _nc_method(test, k), "n", None, float(effect), alpha, power, None, k, groups, {"max_n": max_n})
        pw, det = _analytic_power(test, n, p0, p1, alpha)
        return PowerResult(alt, test, _nc_method(test, k), "n", n, float(effect), alpha, power, pw, k, groups, det)
    # bracket around the pocket chi-square's non-central sample size (a cheap first guess;
    # the cost of a simulated point does not depend on n), then bisect
    p1 = alternative_probs(k, alt, effect)
    lam1, df = _noncentrality_per_spin("pocket_chisquare", np.full(k, 1.0 / k), p1)
    guess = max(groups, 10, math.ceil(_lambda_for_power(_dist.chi2_isf(alpha, df), df, power) / lam1))
    if sim.power(guess, effect) >= power:
        lo, hi = guess // 2, guess
        while lo > max(groups, 10) and sim.power(lo, effect) >= power:
            hi, lo = lo, lo // 2
        lo = max(lo, max(groups, 10))
    else:
        lo, hi = guess + 1, 2 * guess
        while sim.power(hi, effect) < power:
            lo, hi = hi + 1, 2 * hi
            if hi > max_n:
                return PowerResult(alt, test, sim.method(), "n", None, float(effect), alpha, power, None, k, groups, sim.details() | {"max_n": max_n})
    while hi - lo > max(0, int(0.005 * hi)):
        mid = (lo + hi) // 2
        if sim.power(mid, effect) >= power:
            hi = mid
        else:
            lo = mid + 1
    pw = sim.power(hi, effect)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt), "precision": "0.5% of n"}
    return PowerResult(alt, test, sim.method(), "n", int(hi), float(effect), alpha, power, pw, k, groups, det)


def _lambda_for_power(crit: float, df: int, power: float) -> float:
    f = lambda lam: _dist.ncx2_sf(crit, df, lam) - power  # noqa: E731
    hi = 1.0
    while f(hi) < 0:
        hi *= 2
    return _brentq(f, 0.0, hi, xtol=1e-10, rtol=1e-12)


def min_detectable_effect(
    n: int,
    k: int,
    alternative: str,
    *,
    alpha: float = 0.01,
    power: float = 0.9,
    test: str | None = None,
    method: str = "auto",
    groups: int = 1,
    n_null: int = 10_000,
    n_alt: int = 2_000,
    rng: np.random.Generator | None = None,
) -> PowerResult:
    """Smallest effect the test detects with ``power`` from ``n`` spins.

    Parameters
    ----------
    n : int
        Spins.
    k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng
        As in :func:`spins_needed`.

    Returns
    -------
    PowerResult
        ``solved_for = "effect"``; ``effect`` is inf when no effect up to 100 (+10,000%; harmonic
        amplitude 0.999) reaches the power. Relative precision 1e-6 (non-central) or 0.5%
        (simulation).
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng)
    n = _n_iv(n)
    alt = _canonical(kind, width)
    e_hi = 0.999 if kind == "harmonic" else _MAX_EFFECT
    if sim is None:
        p0 = np.full(k, 1.0 / k)

        def g(e):
            return _analytic_power(test, n, p0, alternative_probs(k, alt, e), alpha)[0] - power

        if g(e_hi) < 0:
            return PowerResult(alt, test, _nc_method(test, k), "effect", n, math.inf, alpha, power, None, k, groups, {"search_bound": e_hi})
        e = _brentq(g, 1e-12, e_hi, xtol=1e-12, rtol=1e-9)
        pw, det = _analytic_power(test, n, p0, alternative_probs(k, alt, e), alpha)
        return PowerResult(alt, test, _nc_method(test, k), "effect", n, float(e), alpha, power, pw, k, groups, det)
    if n < groups:
        raise InputError(f"n={n} spins cannot be split over {groups} groups")
    if sim.power(n, e_hi) < power:
        return PowerResult(alt, test, sim.method(), "effect", n, math.inf, alpha, power, None, k, groups, sim.details() | {"search_bound": e_hi})
    # geometric bracketing first (effects span orders of magnitude), then bisection
    e = e_hi
    while e > 1e-4 and sim.power(n, e / 4) >= power:
        e /= 4
    lo, hi = (e / 4 if e > 1e-4 else 0.0), e
    while hi - lo > 0.005 * hi:
        mid = 0.5 * (lo + hi)
        if sim.power(n, mid) >= power:
            hi = mid
        else:
            lo = mid
    pw = sim.power(n, hi)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt), "precision": "0.5% of the effect"}
    return PowerResult(alt, test, sim.method(), "effect", n, float(hi), alpha, power, pw, k, groups, det)


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


# ----------------------------------------------------------------------------- battery helpers
def chisquare_min_detectable_pocket_bias(n: int, k: int, alpha: float = 0.01, power: float = 0.9) -> float:
    """Smallest relative single-pocket excess the pocket chi-square detects with ``power``.

    Non-central chi-square (see :func:`min_detectable_effect`); ``inf`` when n <= 0 or no excess
    up to +10,000% reaches the power. Kept with the signature :mod:`rngcert.battery.core` uses.
    """
    if n <= 0:
        return float("inf")
    return float(min_detectable_effect(int(n), int(k), "single-pocket", alpha=alpha, power=power).effect)


def chisquare_spins_needed(delta: float, k: int, alpha: float = 0.01, power: float = 0.9) -> int:
    """Spins the pocket chi-square needs to detect a relative single-pocket excess ``delta``.

    Raises
    ------
    ValueError
        When the effect is too small for 10**13 spins.
    """
    res = spins_needed(int(k), "single-pocket", float(delta), alpha=alpha, power=power, max_n=10**13)
    if res.n is None:
        raise ValueError("effect too small")
    return int(res.n)


def power_statement(n: int, k: int, alpha: float, power: float = 0.9, required_bias: float | None = None) -> tuple[dict, list[str]]:
    """Power of the sample for the report, and INCONCLUSIVE reasons when it falls short.

    Returns
    -------
    statement : dict
        ``method``, ``alpha``, ``power``, ``n``, ``min_detectable_single_pocket_bias`` and a
        one-sentence ``statement``; with ``required_bias`` also ``required_min_detectable_bias``
        and ``spins_needed_for_required_bias``.
    reasons : list of str
        Why the verdict must be INCONCLUSIVE (empty when the sample suffices).
    """
    mdb = chisquare_min_detectable_pocket_bias(n, k, alpha, power)
    st: dict[str, Any] = {
        "method": f"non-central chi-square fitted to the exact mean and variance of X^2 (two moments), pocket chi-square test, {k - 1} df",
        "alpha": alpha,
        "power": power,
        "n": n,
        "min_detectable_single_pocket_bias": mdb,
        "statement": (
            f"With {n} spins the pocket chi-square test detects a single pocket that comes up "
            f"{mdb:.1%} more often than fair with probability {power:.0%} at alpha = {alpha}."
            if np.isfinite(mdb)
            else f"With {n} spins no single-pocket bias up to +10000% is detected with probability {power:.0%}."
        ),
    }
    reasons: list[str] = []
    if required_bias is not None:
        st["required_min_detectable_bias"] = required_bias
        need = chisquare_spins_needed(required_bias, k, alpha, power)
        st["spins_needed_for_required_bias"] = need
        if n < need:
            reasons.append(
                f"{n} spins cannot detect the declared minimum bias of {required_bias:.1%} with {power:.0%} power "
                f"(needs {need} spins)"
            )
    return st, reasons
