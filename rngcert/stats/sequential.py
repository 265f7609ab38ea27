"""Anytime-valid monitoring of a wheel, and comparison of audit windows.

Two kinds of statistics for a table watched over months:

* :func:`e_detector` — a Shiryaev–Roberts **e-detector** (Shin, Ramdas & Rinaldo [1]_) over a
  mixture of structured alternatives (single pocket, sector, first harmonic, and the distance
  between consecutive results, i.e. a dealer/rotor offset), for live change detection: looking
  after every block of spins does not inflate false alarms, and a wheel that was fair for months
  still raises the alarm quickly once it goes wrong.
* :func:`homogeneity_chisquare` — Pearson's chi-square test of homogeneity of pocket
  frequencies between windows (this audit vs the previous one) or between dealers.

Everything here is a pure function of numpy arrays; the evidence is kept as per-block counts, so
that chunks merge by addition (DESIGN §2) and many simulated runs are processed as one array.

The guarantee (stated once, used by ``rngcert watch``)
------------------------------------------------------
Let the data be spins ``x_1, x_2, ...``; under H0 they are independent with the null pocket law
``p``. For every alternative ``j`` (a pocket law ``q_j``, or a law of the landing distance from
the previous result) the per-spin likelihood ratio ``L_j,t = q_j(v_t) / pi(v_t)`` has conditional
mean 1 under H0 given the past. Change points are allowed at the start of every block of ``B``
spins; the detector after block ``b`` is

.. math:: M_b = \\sum_j w_j R_{j,b}, \\quad R_{j,b} = \\sum_{\\beta=1}^{b} \\prod_{t \\in
          \\text{blocks } \\beta..b} L_{j,t}, \\quad \\sum_j w_j = 1,

computed by the Shiryaev–Roberts recursion :math:`R_{j,b} = (1 + R_{j,b-1})\\,\\Lambda_{j,b}`
with :math:`\\Lambda_{j,b}` the product over block ``b`` ([1]_ §3, SR e-detector; [3]_). Under H0,
:math:`M_b - b` is a martingale with :math:`M_0 = 0`, so (i) by Doob's maximal inequality for the
non-negative submartingale :math:`M` (the form of Ville's inequality [4]_ that applies to sums
of e-processes started at successive times),

.. math:: P_\\infty(\\max_{b \\le n} M_b \\ge A) \\le n / A,

so the threshold :math:`A = \\lceil N/B \\rceil / \\alpha` bounds the probability of *any* false
alarm during the first ``N`` spins by ``alpha`` (and during the first ``t`` spins by about
``alpha * t / N``: a watch that runs past its horizon keeps a linearly growing bound); and
(ii) by optional stopping ([1]_, the average run length of e-detectors; Pollak [3]_ for SR), the mean time to a false alarm is at
least :math:`A` blocks, i.e. :math:`B \\cdot A = N / \\alpha` spins. Both hold at every block
boundary, however often one looks. Detection delay after a change to alternative ``j`` is about
:math:`(\\log A - \\log w_j) / \\mathrm{KL}(q_j \\| p)` spins (Lorden [2]_).

References
----------
.. [1] J. Shin, A. Ramdas, A. Rinaldo, "E-detectors: a nonparametric framework for sequential
       change detection", arXiv:2203.03532 (2022); New England J. Statist. Data Sci. (2024).
.. [2] G. Lorden, "Procedures for reacting to a change in distribution", Ann. Math. Statist.
       42(6):1897-1908 (1971).
.. [3] M. Pollak, "Optimal detection of a change in distribution", Ann. Statist. 13(1):206-227
       (1985); S. W. Roberts, "A comparison of some control chart procedures", Technometrics
       8:411-430 (1966).
.. [4] J. Ville, *Étude critique de la notion de collectif*, Gauthier-Villars (1939); J. L. Doob,
       *Stochastic Processes*, Wiley (1953), Thm VII.3.2 (maximal inequality).
.. [5] K. Pearson, "On the criterion that a given system of deviations...", Phil. Mag. 50:157-175
       (1900); A. Agresti, *Categorical Data Analysis*, 3rd ed., Wiley (2013), §3.2.1 (chi-square
       test of independence/homogeneity, eq. 3.10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist, arrayops
from rngcert.stats._validate import _rng_iv
from rngcert.stats.montecarlo import MonteCarlo, monte_carlo_args
from rngcert.stats.params import check_number
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, monte_carlo_pvalue

#: Feature ids: what the likelihood ratio of an alternative is a function of.
POCKET, DISTANCE, RELEASE_OFFSET = 0, 1, 2
FEATURE_NAMES = ("pocket", "distance from previous result", "offset from release pocket")


@dataclass(frozen=True)
class AlternativeFamily:
    """The structured alternatives mixed by the e-detector.

    Attributes
    ----------
    names : tuple of str, length J
        Human-readable description of each alternative (e.g. ``"sector 5 from position 12, +20%"``).
    feature : (J,) ndarray of int
        :data:`POCKET`, :data:`DISTANCE` or :data:`RELEASE_OFFSET`.
    log_lr : (J, k) ndarray of float
        :math:`\\log q_j(v) / \\pi(v)` for each value ``v`` of the alternative's feature.
    log_weight : (J,) ndarray of float
        Log prior weights; :math:`\\sum_j e^{w_j} = 1`.
    k : int
        Number of feature values (pockets).
    """

    names: tuple[str, ...]
    feature: np.ndarray
    log_lr: np.ndarray
    log_weight: np.ndarray
    k: int

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def features(self) -> tuple[int, ...]:
        return tuple(int(f) for f in arrayops.unique(self.feature))


def _arc_log_lr(pi: np.ndarray, start: int, width: int, bias: float) -> np.ndarray | None:
    """log q/pi for an arc of ``width`` values from ``start`` made (1 + bias) times as likely."""
    k = pi.size
    arc = np.zeros(k, dtype=bool)
    arc[(start + np.arange(width)) % k] = True
    P = float(pi[arc].sum())
    if not 0 < P < 1:
        return None
    out_factor = 1.0 - bias * P / (1.0 - P)
    if out_factor <= 0:
        return None
    return np.where(arc, math.log1p(bias), math.log(out_factor))


def wheel_alternatives(
    probs,
    *,
    circular: bool = True,
    widths: Sequence[int] = (1, 3, 5, 9),
    biases: Sequence[float] = (0.1, 0.2, 0.4, 0.8),
    harmonic_amplitudes: Sequence[float] = (0.05, 0.1, 0.2),
    harmonic_phases: int = 8,
    distance: bool = True,
    release: bool = False,
) -> AlternativeFamily:
    """The structured alternatives the wheel battery cares about, as likelihood-ratio tables.

    Parameters
    ----------
    probs : (k,) array_like of float
        Null probability of each outcome (wheel positions in wheel order when ``circular``).
    circular : bool
        Outcomes are positions on a circle (arcs and harmonics make sense). When False (symbol
        level), only single outcomes (width 1) are used.
    widths : sequence of int
        Arc widths in pockets; width 1 is the single-pocket alternative.
    biases : sequence of float
        Relative excess of the arc, e.g. 0.2 for "+20%"; the rest of the wheel is scaled down so
        that the law sums to 1. Each must be > 0.
    harmonic_amplitudes, harmonic_phases
        First-harmonic alternatives :math:`q \\propto p (1 + a(\\cos(\\theta - \\phi) - c))` at
        ``harmonic_phases`` equally spaced phases (smooth one-sided bias: rotor unbalance, tilt).
    distance : bool
        Add arc alternatives on the distance (in pockets, mod k) from the previous result —
        the wheel-distance distribution; needs equal null probabilities.
    release : bool
        Add arc alternatives on the offset from the release pocket (dealer signature); needs
        equal null probabilities and a logged release pocket.

    Returns
    -------
    AlternativeFamily
        Prior weights: equal mass on each present group (pocket arcs, harmonics, distance arcs,
        release arcs), uniform within a group.

    Raises
    ------
    InputError
        Probabilities not summing to 1, a non-positive bias, a width outside ``1..k-1``, or
        ``distance``/``release`` with unequal null probabilities.
    """
    pi = np.asarray(probs, dtype=float)
    if pi.ndim != 1 or pi.size < 2 or np.any(pi <= 0) or abs(pi.sum() - 1) > 1e-9:
        raise InputError(f"probs must be a 1-d array of positive probabilities summing to 1, got shape {pi.shape} and sum {pi.sum()!r}")
    k = pi.size
    if any(b <= 0 for b in biases):
        raise InputError(f"biases must be > 0, got {tuple(biases)!r}")
    if circular and any(not 1 <= w < k for w in widths):
        raise InputError(f"arc widths must be in 1..{k - 1}, got {tuple(widths)!r}")
    uniform = bool(np.allclose(pi, 1.0 / k))
    if (distance or release) and not (uniform and circular):
        if distance and not circular:
            distance = False  # no geometry at symbol level: nothing to test
        else:
            raise InputError("distance/release alternatives need a circular outcome space with equal pocket probabilities")
    ws = widths if circular else (1,)
    groups: list[tuple[list[str], list[int], list[np.ndarray]]] = [_arc_alternatives(pi, POCKET, "position", ws, biases)]
    if circular and harmonic_phases > 0 and harmonic_amplitudes:
        groups.append(_harmonic_alternatives(pi, harmonic_phases, harmonic_amplitudes))
    if distance:
        groups.append(_arc_alternatives(np.full(k, 1.0 / k), DISTANCE, "distance", ws, biases))
    if release:
        groups.append(_arc_alternatives(np.full(k, 1.0 / k), RELEASE_OFFSET, "release offset", ws, biases))
    groups = [g for g in groups if g[0]]
    names, feats, rows, logw = [], [], [], []
    for gn, gf, gr in groups:
        names += gn
        feats += gf
        rows += gr
        logw += [-math.log(len(groups)) - math.log(len(gn))] * len(gn)
    return AlternativeFamily(tuple(names), np.asarray(feats, dtype=np.int64), np.asarray(rows, dtype=float), np.asarray(logw), k)



def _arc_alternatives(null: np.ndarray, feature: int, label: str, widths, biases) -> tuple[list, list, list]:
    """(names, features, log likelihood-ratio rows) of every arc of each width starting at each
    position, raised by each bias, against ``null``."""
    k = null.size
    names, feats, rows = [], [], []
    for w in widths:
        for s in range(k):
            for b in biases:
                lr = _arc_log_lr(null, s, w, b)
                if lr is None:
                    continue
                what = f"{label} {s}" if w == 1 else f"{label}s {s}..{(s + w - 1) % k} (width {w})"
                names.append(f"{what} +{b:.0%}")
                feats.append(feature)
                rows.append(lr)
    return names, feats, rows


def _harmonic_alternatives(pi: np.ndarray, harmonic_phases: int, harmonic_amplitudes) -> tuple[list, list, list]:
    """(names, features, log likelihood-ratio rows) of the first harmonic towards each of
    ``harmonic_phases`` directions at each amplitude (those that keep every probability positive)."""
    k = pi.size
    theta = 2 * np.pi * np.arange(k) / k
    names, feats, rows = [], [], []
    for ph in range(harmonic_phases):
        phi = 2 * np.pi * ph / harmonic_phases
        h = np.cos(theta - phi)
        h = h - pi @ h
        for a in harmonic_amplitudes:
            lr = 1 + a * h
            if np.all(lr > 0):
                names.append(f"first harmonic towards position {ph * k / harmonic_phases:.1f}, amplitude {a:g}")
                feats.append(POCKET)
                rows.append(np.log(lr))
    return names, feats, rows


def feature_values(positions, k: int, *, release=None, previous: int | None = None) -> dict[int, np.ndarray]:
    """Per-spin feature values for the alternatives: pocket, distance from the previous result,
    offset from the release pocket.

    Parameters
    ----------
    positions : (..., n) array_like of int
        Outcomes in ``0..k-1`` (wheel positions), void spins removed; leading axes are
        independent sequences (e.g. simulated runs).
    k : int
        Number of pockets.
    release : (..., n) array_like of int, optional
        Release pocket of each spin, -1 where unknown.
    previous : int, optional
        The result just before ``positions[..., 0]`` (a continuing stream); without it the first
        spin has no distance.

    Returns
    -------
    dict
        ``{POCKET: x, DISTANCE: d, RELEASE_OFFSET: r}`` with -1 where the value is undefined
        (such spins contribute a likelihood ratio of 1 to that feature).
    """
    x = np.asarray(positions)
    if x.size and (x.min() < 0 or x.max() >= k):
        raise InputError(f"positions must be in 0..{k - 1}, got values in {x.min()}..{x.max()}")
    d = np.full(x.shape, -1, dtype=np.int64)
    d[..., 1:] = (x[..., 1:] - x[..., :-1]) % k
    if previous is not None and x.shape[-1]:
        d[..., 0] = (x[..., 0] - int(previous)) % k
    out = {POCKET: x.astype(np.int64), DISTANCE: d}
    if release is not None:
        r = np.asarray(release)
        out[RELEASE_OFFSET] = np.where(r >= 0, (x - r) % k, -1)
    return out


def block_counts(values, k: int, block: int) -> np.ndarray:
    """Counts of each feature value in consecutive blocks of ``block`` spins.

    Parameters
    ----------
    values : (..., n) array_like of int
        Feature values in ``0..k-1``, -1 for "undefined" (not counted).
    k : int
        Number of values.
    block : int
        Block length B; a final partial block is counted as its own block.

    Returns
    -------
    (..., ceil(n / B), k) ndarray of int64
    """
    v = np.asarray(values, dtype=np.int64)
    if block < 1:
        raise InputError(f"block must be a positive number of spins, got {block}")
    lead, n = v.shape[:-1], v.shape[-1]
    nb = -(-n // block)
    flat = v.reshape(-1, n)
    r = flat.shape[0]
    b = np.arange(n) // block
    idx = (np.arange(r)[:, None] * nb + b[None, :]) * k + flat
    idx = idx[flat >= 0]
    return np.bincount(idx, minlength=r * nb * k).reshape(*lead, nb, k)


def log_increments(counts: Mapping[int, np.ndarray], family: AlternativeFamily) -> np.ndarray:
    """Log likelihood ratio of each block under each alternative.

    Parameters
    ----------
    counts : mapping feature -> (..., nb, k) ndarray
        Block counts of each feature used by ``family`` (from :func:`block_counts`).
    family : AlternativeFamily

    Returns
    -------
    (..., nb, J) ndarray of float
        :math:`\\sum_v c_{b}(v) \\log q_j(v)/\\pi(v)`, columns in the order of ``family``; one
        matrix product with a block-diagonal table (features stacked along the last axis).
    """
    feats = family.features
    for f in feats:
        if f not in counts:
            raise InputError(f"the alternatives need counts of feature {FEATURE_NAMES[f]!r}, which were not given")
    k = family.k
    W = np.zeros((len(feats) * k, family.size))
    for i, f in enumerate(feats):  # loop over features (at most three)
        cols = family.feature == f
        W[i * k : (i + 1) * k, cols] = family.log_lr[cols].T
    C = np.concatenate([np.asarray(counts[f], dtype=float) for f in feats], axis=-1)
    lead = C.shape[:-1]
    return (C.reshape(-1, C.shape[-1]) @ W).reshape(*lead, family.size)  # 2-d product: one BLAS call


@dataclass(frozen=True)
class DetectorState:
    """The e-detector after some blocks: carry it to continue on new data (a live watch).

    ``log_r`` is :math:`\\log R_{j,b}` for each alternative (-inf before any block), ``blocks``
    the number of blocks seen.
    """

    log_r: np.ndarray
    blocks: int = 0

    @classmethod
    def start(cls, family: AlternativeFamily) -> "DetectorState":
        return cls(np.full(family.size, -np.inf), 0)


@dataclass(frozen=True)
class DetectorPath:
    """Evidence after each block.

    Attributes
    ----------
    log_m : (..., nb) ndarray
        :math:`\\log M_b` after each block.
    alarm : (...) ndarray of int
        0-based index of the first block with :math:`\\log M_b \\ge \\log A`, -1 if none.
    leader : (..., nb) ndarray of int
        Alternative with the largest weighted evidence after each block.
    state : DetectorState or None
        State after the last block (one sequence only).
    log_threshold : float
    """

    log_m: np.ndarray
    alarm: np.ndarray
    leader: np.ndarray
    state: DetectorState | None
    log_threshold: float


def detector_threshold(alpha: float, horizon: int, block: int) -> float:
    """:math:`\\log A` with :math:`A = \\lceil N/B \\rceil / \\alpha`: P(any false alarm within the
    first ``horizon`` spins) <= ``alpha`` and mean time to a false alarm >= ``horizon/alpha`` spins.

    Raises
    ------
    InputError
        ``alpha`` outside (0, 1), non-positive ``horizon`` or ``block``.
    """
    check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if horizon < 1 or block < 1:
        raise InputError(f"horizon and block must be positive numbers of spins, got {horizon!r} and {block!r}")
    return math.log(math.ceil(horizon / block)) - math.log(alpha)


def shiryaev_roberts_log(increments, log_r0=None) -> np.ndarray:
    """:math:`\\log R_b` of the Shiryaev–Roberts recursion :math:`R_b = (1 + R_{b-1}) e^{s_b}`.

    Computed in log space, :math:`\\log R_b = \\mathrm{logaddexp}(\\log R_{b-1}, 0) + s_b`; the
    loop runs over blocks, each step vectorised over runs and alternatives.

    Parameters
    ----------
    increments : (..., nb, J) array_like
        Log likelihood ratio :math:`s_b` of each block per alternative.
    log_r0 : (J,) or (..., J) array_like, optional
        :math:`\\log R_0` (default -inf: nothing before).

    Returns
    -------
    (..., nb, J) ndarray
    """
    s = np.asarray(increments, dtype=float)
    out = np.empty_like(s)
    r = np.full(s.shape[:-2] + s.shape[-1:], -np.inf)
    if log_r0 is not None:
        r[...] = np.asarray(log_r0, dtype=float)
    for b in range(s.shape[-2]):  # loop over blocks, not spins
        np.logaddexp(r, 0.0, out=r)
        r += s[..., b, :]
        out[..., b, :] = r
    return out


def _mixture_path(s: np.ndarray, log_w: np.ndarray, log_r0):
    """log M_b, leader_b and the final log R for increments ``s`` (..., nb, J), one pass over blocks."""
    nb = s.shape[-2]
    r = np.full(s.shape[:-2] + s.shape[-1:], -np.inf)
    if log_r0 is not None:
        r[...] = np.asarray(log_r0, dtype=float)
    log_m = np.empty(s.shape[:-1])
    leader = np.empty(s.shape[:-1], dtype=np.int64)
    tmp = np.empty_like(r)
    for b in range(nb):  # loop over blocks, not spins
        np.logaddexp(r, 0.0, out=r)
        r += s[..., b, :]
        np.add(r, log_w, out=tmp)
        top = np.max(tmp, axis=-1, keepdims=True)
        leader[..., b] = np.argmax(tmp, axis=-1)
        tmp -= top
        np.exp(tmp, out=tmp)
        log_m[..., b] = np.log(tmp.sum(axis=-1)) + top[..., 0]
    return log_m, leader, r


def e_detector(
    counts: Mapping[int, np.ndarray],
    family: AlternativeFamily,
    log_threshold: float,
    *,
    state: DetectorState | None = None,
) -> DetectorPath:
    """Mixture Shiryaev–Roberts e-detector over structured alternatives, evaluated after each block.

    Parameters
    ----------
    counts : mapping feature -> (..., nb, k) ndarray of int
        Block counts of the features (:func:`feature_values`, :func:`block_counts`); leading axes
        are independent sequences (simulated runs).
    family : AlternativeFamily
        Alternatives and prior weights (:func:`wheel_alternatives`).
    log_threshold : float
        :math:`\\log A` (:func:`detector_threshold`).
    state : DetectorState, optional
        Continue from an earlier call (one sequence only).

    Returns
    -------
    DetectorPath

    Notes
    -----
    H0: spins independent with the null law. :math:`\\log M_b = \\mathrm{logsumexp}_j(\\log w_j +
    \\log R_{j,b})`; alarm at the first block with :math:`M_b \\ge A`. Guarantees (module
    docstring): :math:`P_\\infty(\\text{alarm within } n \\text{ blocks}) \\le n/A` and
    :math:`E_\\infty[\\text{blocks to alarm}] \\ge A` [1]_ [3]_ [4]_.

    References
    ----------
    See the module docstring.
    """
    inc = log_increments(counts, family)
    log_r0 = None
    if state is not None:
        if inc.ndim != 2:
            raise InputError("a carried state applies to one sequence, not to a batch of runs")
        log_r0 = state.log_r
    log_m, leader, last = _mixture_path(inc, family.log_weight, log_r0)
    hit = log_m >= log_threshold
    alarm = np.where(hit.any(axis=-1), np.argmax(hit, axis=-1), -1)
    new_state = None
    if inc.ndim == 2:
        nb = inc.shape[0]
        new_state = DetectorState(np.array(last), (state.blocks if state is not None else 0) + nb)
    return DetectorPath(log_m, alarm, leader, new_state, float(log_threshold))


# ---------------------------------------------------------------------------- window comparison
def _homogeneity_iv(table, method, n_resamples, rng, name="homogeneity_chisquare"):
    t = np.asarray(table)
    if t.dtype == object:  # a transposed DataFrame of nullable Int64 columns; None / pd.NA become NaN below
        try:
            t = t.astype(float)
        except (TypeError, ValueError):
            raise InputError(f"{name}: table must hold non-negative integer counts, got {t.ravel()[:3].tolist()!r}...") from None
    if t.ndim != 2:
        raise InputError(f"{name}: table must be 2-d (groups x outcomes), got shape {t.shape}")
    if not np.issubdtype(t.dtype, np.number):
        raise InputError(f"{name}: table must hold non-negative integer counts, got dtype {t.dtype}")
    bad = ~(t >= 0) | (t != np.round(t))  # NaN too
    if bad.any():
        raise InputError(f"{name}: table must hold non-negative integer counts, found {t[bad][0].item()!r} "
                         f"at row {np.argwhere(bad)[0][0]}, column {np.argwhere(bad)[0][1]}")
    if method not in ("auto", "asymptotic", "monte-carlo"):
        raise InputError(f"method {method!r} is not one of 'auto', 'asymptotic', 'monte-carlo'")
    if method != "asymptotic" and (not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1):
        raise InputError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return t.astype(np.int64), method


def _x2(obs: np.ndarray, expected: np.ndarray) -> np.ndarray:
    return np.sum((obs - expected) ** 2 / expected, axis=(-2, -1))


def homogeneity_chisquare(
    table,
    *,
    method: str | MonteCarlo = "auto",
    n_resamples: int = 1999,
    rng: np.random.Generator | None = None,
    name: str = "pocket_homogeneity",
    group_labels: Sequence[str] = (),
    requirement: Requirement = Requirement.UNIFORMITY,
) -> TestResult | NotApplicable:
    """Pearson chi-square test that several groups of spins share one pocket distribution.

    Parameters
    ----------
    table : (g, k) array_like of int
        Spins per pocket (columns) in each group (rows): e.g. this audit window and the previous
        one, or one row per dealer.
    method : {"auto", "asymptotic", "monte-carlo"}
        "auto": the chi-square law when every expected count is at least 5, otherwise a Monte
        Carlo test conditional on both margins (tables drawn from the multivariate
        hypergeometric law, exact in distribution). ``method=MonteCarlo(n_resamples, batch, rng)``
        (:class:`rngcert.stats.MonteCarlo`) is ``"monte-carlo"`` with its options in one object
        (its ``batch`` has no effect here: replicates are drawn one at a time).
    n_resamples : int
        Monte Carlo replicates R.
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    name, group_labels, requirement
        Recorded in the result.

    Returns
    -------
    TestResult or NotApplicable
        NotApplicable with fewer than two non-empty groups or two observed pockets.

    Notes
    -----
    H0: every group has the same pocket probabilities. With :math:`E_{ij} = r_i c_j / N`,
    :math:`X^2 = \\sum_{ij} (O_{ij} - E_{ij})^2 / E_{ij}`, asymptotically
    :math:`\\chi^2_{(g-1)(k'-1)}` over the ``k'`` pockets observed at least once ([5]_, eq. 3.10);
    the same statistic as ``scipy.stats.chi2_contingency(table, correction=False)``. The Monte
    Carlo p-value is :math:`(b + 1)/(R + 1)`.

    References
    ----------
    See the module docstring ([5]_).

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import homogeneity_chisquare
    >>> g = np.random.default_rng(9)
    >>> table = np.stack([g.multinomial(3700, np.full(37, 1 / 37)) for _ in range(3)])  # three dealers, one wheel
    >>> res = homogeneity_chisquare(table, group_labels=["D1", "D2", "D3"])
    >>> res.df, res.method, res.pvalue > 0.01
    (72, 'asymptotic', True)
    """
    # MonteCarlo's batch has no effect here: the replicates are drawn one at a time (memory does not grow with R)
    method, n_resamples, rng, _ = monte_carlo_args(method, n_resamples, rng, name, default_n=1999)
    t, method = _homogeneity_iv(table, method, n_resamples, rng, name)
    req = requirement
    rows = t.sum(axis=1) > 0
    t = t[rows]
    labels = [lab for lab, keep in zip(group_labels, rows) if keep] if group_labels else []
    t = t[:, t.sum(axis=0) > 0]
    n = int(t.sum())
    if t.shape[0] < 2:
        return NotApplicable(name, req, n, f"{t.shape[0]} non-empty group(s): homogeneity needs at least two")
    if t.shape[1] < 2:
        return NotApplicable(name, req, n, "fewer than two pockets observed")
    r, c = t.sum(axis=1), t.sum(axis=0)
    expected = np.outer(r, c) / n
    stat = float(_x2(t, expected))
    df = (t.shape[0] - 1) * (t.shape[1] - 1)
    use_mc = method == "monte-carlo" or (method == "auto" and expected.min() < 5)
    details = {
        "groups": labels or [f"group {i + 1}" for i in range(t.shape[0])],
        "group_sizes": r.tolist(),
        "min_expected": float(expected.min()),
        "pockets_observed": int(t.shape[1]),
    }
    if not use_mc:
        return TestResult(name, req, stat, df, clip_pvalue(float(_dist.chi2_sf(stat, df))), n, "asymptotic", details)
    rng = _rng_iv(rng, name)
    null = np.empty(n_resamples)
    for i in range(n_resamples):  # loop over replicates; each draw is vectorised over pockets
        rem = c.copy()
        sim = np.empty_like(t)
        for g in range(t.shape[0] - 1):  # loop over groups (a handful)
            sim[g] = rng.multivariate_hypergeometric(rem, int(r[g]))
            rem = rem - sim[g]
        sim[-1] = rem
        null[i] = _x2(sim, expected)
    return TestResult(name, req, stat, df, monte_carlo_pvalue(stat, null), n, f"monte-carlo, R={n_resamples}", details)
