"""Wheel-geometry uniformity tests: sector (arc) scan and first harmonic.

Counts are in wheel order, so consecutive positions are physically adjacent and position k-1 is
adjacent to position 0. Worn frets and shallow pockets bias neighbouring pockets together (sector
scan); an unbalanced or off-level rotor gives a smooth one-sided bias (first harmonic).
"""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats._arcs import _arc_tables, _exceed_bounds, _flat_arcs, _scan, _scan_exceeds
from rngcert.stats._validate import (
    _BATCH_CELLS,
    _as_counts,
    _as_probs,
    _n_resamples_iv,
    _rng_iv,
)
from rngcert.stats.montecarlo import MonteCarlo, monte_carlo_args
from rngcert.stats.result import (
    NotApplicable,
    Requirement,
    TestResult,
    clip_pvalue,
    monte_carlo_threshold,
)

__all__ = ["sector_scan", "first_harmonic"]


def _sector_scan_iv(counts, probs, min_len, max_len, n_resamples, rng, name):
    c = _as_counts(counts, name, ndim=(1, 2))
    c2 = c[None, :] if c.ndim == 1 else c
    g, k = c2.shape
    if k < 3:
        raise InputError(f"{name}: a wheel needs k >= 3 positions, got k={k}")
    if probs is None:
        p2 = np.full((g, k), 1.0 / k)
    else:
        parr = np.asarray(probs, dtype=float)
        if parr.ndim == 1:
            p2 = np.tile(_as_probs(parr, k, name), (g, 1))
        elif parr.shape == (g, k):
            p2 = np.stack([_as_probs(parr[i], k, name) for i in range(g)])
        else:
            raise InputError(f"{name}: probs must have shape ({k},) or ({g}, {k}), got {parr.shape}")
    if max_len is None:
        max_len = k // 2
    for label, v in (("min_len", min_len), ("max_len", max_len)):
        if isinstance(v, bool) or int(v) != v:
            raise InputError(f"{name}: {label} must be an integer, got {v!r}")
    min_len, max_len = int(min_len), int(max_len)
    if not (1 <= min_len <= max_len <= k - 1):
        raise InputError(
            f"{name}: need 1 <= min_len <= max_len <= k-1 = {k - 1}, "
            f"got min_len={min_len}, max_len={max_len}"
        )
    n_resamples = _n_resamples_iv(n_resamples, name)
    rng = _rng_iv(rng, name)
    return c2, p2, min_len, max_len, n_resamples, rng


# long: numpydoc docstring of the scan's law, then validation, the per-group scan and its Monte Carlo p-value
def sector_scan(
    counts,
    probs=None,
    *,
    min_len: int = 2,
    max_len: int | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    name: str = "sector_scan",
    requirement: Requirement = Requirement.UNIFORMITY,
    method: MonteCarlo | None = None,
) -> TestResult | NotApplicable:
    r"""Scan every circular arc of adjacent wheel positions for an excess or deficit.

    Parameters
    ----------
    counts : (k,) or (g, k) array_like of int
        Spins per wheel position in wheel order; with two dimensions, one row per group (e.g.
        dealer x direction), each scanned, with a family-wise p-value over groups and arcs.
    probs : (k,) or (g, k) array_like of float, optional
        Null probability per position (per group); default ``1/k``.
    min_len, max_len : int
        Arc lengths scanned, in positions; default 2 .. k//2 (``1 <= min_len <= max_len <= k-1``).
    n_resamples : int
        Monte Carlo replicates R.
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value, here or in ``method``. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    name : str
        Identifier carried by the result.
    requirement : Requirement
        UNIFORMITY by default; the dealer-signature test files it under UNPREDICTABILITY.
    method : MonteCarlo, optional
        ``n_resamples``, ``batch`` and ``rng`` in one object (:class:`rngcert.stats.MonteCarlo`),
        instead of the keywords; the same p-value.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` = max over groups, starts and lengths of :math:`|z|`; ``df`` None; ``details``:
        best arc (group, start, length, observed, expected, z, relative excess), the observed
        per-length maximum :math:`|z|` and, per group, n and its best arc. NotApplicable when no
        group has any spin.

    Notes
    -----
    H0: group i's counts are multinomial(:math:`n_i`, probs), independently across groups. For the
    arc A of length L starting at position s (positions s, s+1, ..., s+L-1 mod k) with null
    probability :math:`p_A`, :math:`z_A = (O_A - n p_A)/\sqrt{n p_A (1-p_A)}`. The statistic is
    :math:`\max |z_A|` over all arcs (and groups); it is a discrete circular scan statistic [1]_
    [2]_. Its family-wise p-value is a Monte Carlo p-value :math:`(b+1)/(R+1)` over R multinomial
    draws per group (each with its own :math:`n_i`), so the multiplicity of the overlapping arcs
    and groups is accounted for exactly; the cost does not depend on n. Arc sums are differences
    of cumulative sums over the doubled count vector.

    References
    ----------
    .. [1] Kulldorff, M. (1997), "A spatial scan statistic", Comm. Statist. Theory Methods 26,
           1481-1496 (Monte Carlo inference for scan statistics).
    .. [2] Glaz, J., Naus, J. & Wallenstein, S. (2001), *Scan Statistics*, Springer, ch. 13
           (circular scan).

    Examples
    --------
    Three adjacent pockets (wheel positions 10-12) each 30% over their expected 100 spins:

    >>> import numpy as np
    >>> from rngcert.seeding import stream
    >>> from rngcert.stats import sector_scan
    >>> counts = np.full(37, 100)
    >>> counts[10:13] += 30
    >>> res = sector_scan(counts, rng=stream(2026, "doc", "sector_scan"), n_resamples=999)
    >>> res.details["best_arc"]["start"], res.details["best_arc"]["length"], res.pvalue
    (10, 3, 0.001)

    No arc of a fair wheel was as extreme in 999 simulated wheels, so the Monte Carlo p-value is
    its floor 1/(R+1): the scan found the worn sector.

    Without ``rng=`` the Monte Carlo draws come from the fixed-seed stream
    :func:`rngcert.seeding.default_stream`, so the call is reproducible as it stands:

    >>> res = sector_scan(counts, n_resamples=999)
    >>> res.pvalue, res.pvalue == sector_scan(counts, n_resamples=999).pvalue
    (0.001, True)
    """
    if method is not None and not isinstance(method, MonteCarlo):
        raise InputError(f"{name}: method must be a MonteCarlo(...) or None (the p-value is always Monte Carlo), got {method!r}")
    _, n_resamples, rng, batch = monte_carlo_args(method, n_resamples, rng, name, default_n=9999, mc_method=None, sequential=True)
    stop_after = method.stop_after if method is not None else None
    c2, p2, min_len, max_len, n_resamples, rng = _sector_scan_iv(
        counts, probs, min_len, max_len, n_resamples, rng, name
    )
    g, k = c2.shape
    n = c2.sum(axis=1)
    ntot = int(n.sum())
    if ntot == 0:
        return NotApplicable(name, requirement, 0, "no observations (all counts are 0)")
    active = np.flatnonzero(n > 0)
    lengths = list(range(min_len, max_len + 1))
    tables = _arc_tables(p2[active], n[active].astype(float), lengths)
    zs = _scan(c2[active], tables, lengths)  # list over lengths of (ga, k)
    Zs = np.stack(zs)  # (nL, ga, k) signed z
    Z = np.abs(Zs)
    li, gi, si = np.unravel_index(int(np.argmax(Z)), Z.shape)
    stat = float(Z[li, gi, si])
    L = lengths[li]
    obs_arc = float(np.sum(np.take(c2[active[gi]], np.arange(si, si + L) % k)))
    exp_arc = float(tables[li][1][gi, si])
    best = dict(
        group=int(active[gi]),
        start=int(si),
        length=int(L),
        positions=(np.arange(si, si + L) % k),
        observed=obs_arc,
        expected=exp_arc,
        z=float(Zs[li, gi, si]),
        relative_excess=obs_arc / exp_arc - 1.0,
    )
    per_group = []
    for a, gidx in enumerate(active):  # loop over groups
        zg = Z[:, a, :]
        lj, sj = np.unravel_index(int(np.argmax(zg)), zg.shape)
        per_group.append(
            dict(
                group=int(gidx),
                n=int(n[gidx]),
                best_start=int(sj),
                best_length=int(lengths[lj]),
                z=float(Zs[lj, a, sj]),
            )
        )

    # Monte Carlo. Groups are independent under H0, so the null maximum over groups is the
    # element-wise maximum of independent per-group replicate vectors; each group is simulated
    # on its own (multinomial with its own n), batched to bound memory. The groups draw from the
    # stream in a canonical order (by n, then null law), not in the order they were given, so that
    # the p-value does not depend on the order of the groups (dealers in order of first appearance
    # in a file differ when the same spins come in another row order); groups of equal n and
    # law are interchangeable under H0.
    cells = k * (2 * k + 2 + 2 * len(lengths))
    batch = batch or max(1, _BATCH_CELLS // max(1, cells))
    # Only whether a replicate's max |z| reaches the observed one (less monte_carlo_pvalue's tolerance)
    # counts, so each arc is decided by integer bounds on its sum (_exceed_bounds: the same arithmetic,
    # so the same p-value as the max |z| of every replicate, with the same draws).
    threshold = monte_carlo_threshold(stat)
    canon = sorted(range(active.size), key=lambda a: (int(n[active[a]]), p2[active[a]].tobytes()))
    groups = [(int(n[active[a]]), p2[active[a]],
               _exceed_bounds(_flat_arcs(tables, lengths, k, a), threshold, int(n[active[a]])) if threshold > 0 else None)
              for a in canon]
    # all R replicates (no stop_after) are drawn as a sequential run draws them (group i from its own child stream), so
    # that a p-value the battery's early stopping leaves alone is also the ordinary call's, bit for bit
    pvalue, drawn = _sequential_pvalue(groups, n_resamples, batch, rng, n_resamples + 1 if stop_after is None else stop_after)
    mc_method = f"monte-carlo, R={n_resamples}" if drawn is None else (
        f"sequential monte-carlo, {drawn} of R={n_resamples} (Besag-Clifford: stopped at {stop_after} exceedances)")
    details = dict(
        best_arc=best,
        per_length_max_abs_z={int(Lx): float(Z[i].max()) for i, Lx in enumerate(lengths)},
        groups=per_group,
        n_groups=int(g),
        lengths=[min_len, max_len],
    )
    return TestResult(name, requirement, stat, None, pvalue, ntot, mc_method, details)



def _sequential_pvalue(groups, n_resamples: int, batch: int, rng: np.random.Generator, stop_after: int) -> tuple[float, int | None]:
    """Besag & Clifford's sequential Monte Carlo p-value: ``(p, replicates drawn when it stopped early, else None)``.

    Replicate r is drawn for every group (group i from its own child stream of ``rng``, in the
    canonical group order, so replicate r is the same whatever the batch); drawing stops at the
    replicate l where the ``stop_after``-th exceedance occurs, with p = h / l, or after R
    replicates with the usual (b + 1) / (R + 1). Where the full R replicates give a p-value at or
    below h / (R + 1) (fewer than h exceedances), drawing never stops early and the p-value is theirs,
    bit for bit; otherwise both are above h / (R + 1) (the full run's is at least (h + 1) / (R + 1), this
    one at least h / R) and this one is Besag & Clifford's valid p-value
    (Besag, J. & Clifford, P. (1991), "Sequential Monte Carlo p-values", Biometrika 78, 301-304).
    """
    streams = [rng] if len(groups) == 1 else rng.spawn(len(groups))
    hits = 0
    done = 0
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        m = np.zeros(b, dtype=bool)
        for (n_g, p_g, bounds), g_rng in zip(groups, streams):  # loop over groups
            x = g_rng.multinomial(n_g, p_g, size=b)  # (b, k)
            m |= True if bounds is None else _scan_exceeds(x, bounds)
        new = int(np.count_nonzero(m))
        if hits + new >= stop_after:
            drawn = done + int(np.flatnonzero(m)[stop_after - hits - 1]) + 1
            return stop_after / drawn, drawn
        hits += new
        done += b
    return (hits + 1) / (n_resamples + 1), None


def first_harmonic(
    counts,
    probs=None,
    *,
    name: str = "first_harmonic",
) -> TestResult | NotApplicable:
    r"""Rayleigh-type test of the first circular harmonic of the pocket angle.

    Parameters
    ----------
    counts : (k,) array_like of int
        Spins per wheel position in wheel order (k >= 3).
    probs : (k,) array_like of float, optional
        Null probability per position; default ``1/k``.
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` ~ :math:`\chi^2_2` under H0, ``df = 2``. ``details``: mean resultant length
        :math:`\bar R`, its direction ``direction_position``, the estimated amplitude ``a`` and
        phase ``phase_position`` of a :math:`1 + a\cos(\theta - \phi)` bias (direction and phase
        are fractional wheel positions: angles in units of one pocket from position 0; they are not
        pocket labels). NotApplicable when n < 10 (the
        chi-square law is asymptotic).

    Notes
    -----
    Position j has angle :math:`\theta_j = 2\pi j/k`. Let :math:`v = (\cos\theta, \sin\theta)` and
    :math:`\bar v` its sample mean over n spins. Under H0 with uniform probabilities and
    :math:`k \ge 3`, :math:`E\cos\theta = E\sin\theta = 0` (the k-th roots of unity sum to 0),
    :math:`E\cos^2\theta = E\sin^2\theta = 1/2` and :math:`E\cos\theta\sin\theta = 0` (because
    :math:`\cos^2 = (1+\cos 2\theta)/2`, :math:`\cos\sin = \sin(2\theta)/2` and the sums of
    :math:`e^{2i\theta_j}` vanish for :math:`k \ge 3`). So :math:`\mathrm{Cov}(v) = I/2` and by the
    CLT the Rayleigh statistic :math:`2 n \bar R^2 = 2|\sum_t e^{i\theta_t}|^2/n \to \chi^2_2`
    [1]_ §6.3.1. For non-uniform probs the statistic is the Hotelling-type form
    :math:`n (\bar v - \mu)^T \Sigma^{-1} (\bar v - \mu)` with the exact null mean
    :math:`\mu = \sum_j p_j v_j` and covariance :math:`\Sigma = \sum_j p_j v_j v_j^T - \mu\mu^T`,
    also :math:`\to \chi^2_2`; it reduces to the Rayleigh statistic when probs are uniform. Under
    the alternative :math:`p_j \propto p^0_j (1 + a\cos(\theta_j-\phi))` (small a),
    :math:`E\bar v - \mu \approx a\,\Sigma (\cos\phi, \sin\phi)`, giving the reported estimate
    :math:`a\,(\cos\phi, \sin\phi) = \Sigma^{-1}(\bar v - \mu)` (:math:`= 2\bar v` for uniform).

    References
    ----------
    .. [1] Mardia, K. V. & Jupp, P. E. (2000), *Directional Statistics*, Wiley, §6.3.1 (Rayleigh
           test), eq. (6.3.5); Rayleigh, Lord (1880), Phil. Mag. 10, 73-78.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import first_harmonic
    >>> angle = 2 * np.pi * np.arange(37) / 37
    >>> counts = np.round(200 * (1 + 0.3 * np.cos(angle))).astype(int)  # a tilted wheel: one side favoured
    >>> res = first_harmonic(counts)
    >>> res.df, res.pvalue < 1e-6
    (2, True)
    >>> first_harmonic(np.full(37, 200)).pvalue
    1.0
    """
    counts = _as_counts(counts, name)
    k = counts.size
    if k < 3:
        raise InputError(f"{name}: needs k >= 3 positions, got k={k}")
    p = _as_probs(probs, k, name)
    n = int(counts.sum())
    req = Requirement.UNIFORMITY
    if n < 10:
        return NotApplicable(name, req, n, f"n={n} spins; the chi-square(2) law needs n >= 10")
    theta = 2.0 * np.pi * np.arange(k) / k
    V = np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (k, 2)
    vbar = counts @ V / n
    mu = p @ V
    sigma = (V * p[:, None]).T @ V - np.outer(mu, mu)
    d = vbar - mu
    w = np.linalg.solve(sigma, d)
    stat = float(n * d @ w)
    pvalue = clip_pvalue(_dist.chi2_sf(stat, 2))
    rbar = float(np.hypot(*vbar))
    direction = float((math.atan2(vbar[1], vbar[0]) / (2 * np.pi) * k) % k)
    amp = float(np.hypot(*w))
    phase = float((math.atan2(w[1], w[0]) / (2 * np.pi) * k) % k)
    details = dict(
        mean_resultant_length=rbar,
        direction_position=direction,
        amplitude=amp,
        phase_position=phase,
        null_mean=mu,
    )
    return TestResult(name, req, stat, 2, pvalue, n, "asymptotic", details)
