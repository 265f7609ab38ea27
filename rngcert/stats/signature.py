"""Dealer-signature (unpredictability) test: landing offset relative to a reference pocket."""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.montecarlo import MonteCarlo
from rngcert.stats.result import NotApplicable, Requirement, TestResult
from rngcert.stats.sector import sector_scan

__all__ = ["offset_counts", "offset_counts_from_chunks", "dealer_signature"]


def offsets_iv(positions, reference, groups, k: int, name: str, ref_label: str = "reference"):
    """Validate landing positions, their references (both 0..k-1) and optional group ids (>= 0),
    all one-dimensional integer arrays of one length. Returns int64 ``(pos, ref, groups)``, groups
    all 0 when not given. Shared by the dealer-signature and predictor tests."""
    pos = np.asarray(positions)
    ref = np.asarray(reference)
    arrays = [("positions", pos), (ref_label, ref)]
    if groups is not None:
        arrays.append(("groups", np.asarray(groups)))
    for label, a in arrays:
        if a.ndim != 1 or a.shape != pos.shape:
            raise InputError(f"{name}: {label} must be one-dimensional of length {pos.size}, got shape {a.shape}")
        if a.size and a.dtype.kind not in "iu":
            raise InputError(f"{name}: {label} must be integers, got dtype {a.dtype}")
    for label, a in arrays[:2]:
        if a.size and (a.min() < 0 or a.max() >= k):
            raise InputError(f"{name}: {label} must be wheel positions 0..{k - 1}, found {a[(a < 0) | (a >= k)][0]!r}")
    grp = arrays[2][1] if groups is not None else np.zeros(pos.size, dtype=np.int64)
    if grp.size and grp.min() < 0:
        raise InputError(f"{name}: group ids must be >= 0, found {grp[grp < 0][0]!r}")
    return pos.astype(np.int64), ref.astype(np.int64), grp.astype(np.int64)


def offset_counts(positions, reference_positions, k: int, groups=None, n_groups: int | None = None) -> np.ndarray:
    """Counts of landing offsets ``(pos - ref) mod k`` per group.

    Parameters
    ----------
    positions : (n,) array_like of int
        Result positions 0..k-1 in wheel order.
    reference_positions : (n,) array_like of int
        Reference position of each spin (release pocket, or the previous result), 0..k-1.
    k : int
        Number of wheel positions.
    groups : (n,) array_like of int, optional
        Group id 0..n_groups-1 per spin (e.g. dealer x direction); default: one group.
    n_groups : int, optional
        Number of groups; default ``max(groups) + 1``.

    Returns
    -------
    (g, k) ndarray of int64
        ``out[i, d]`` = spins of group i that landed d pockets (in wheel order) past the reference.

    Raises
    ------
    InputError
        Mismatched lengths, values out of range.

    Examples
    --------
    >>> from rngcert.stats import offset_counts
    >>> c = offset_counts([5, 6, 0], [3, 3, 36], 37)  # offsets 2, 3 and 1 (36 -> 0 wraps round)
    >>> c.shape, c[0, :4].tolist()
    ((1, 37), [0, 1, 1, 1])
    >>> offset_counts([5, 6, 0], [3, 3, 36], 37, groups=[0, 1, 1])[:, :4].tolist()  # one row per group (dealer)
    [[0, 0, 1, 0], [0, 1, 0, 1]]
    """
    name = "offset_counts"
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise InputError(f"{name}: k must be an integer >= 2, got {k!r}")
    k = int(k)
    pos, ref, grp = offsets_iv(positions, reference_positions, groups, k, name, ref_label="reference_positions")
    if groups is None:
        g = 1 if n_groups is None else int(n_groups)
    else:
        gmax = int(grp.max()) + 1 if grp.size else 0
        g = gmax if n_groups is None else int(n_groups)
        if g < max(gmax, 1):
            raise InputError(f"{name}: n_groups={n_groups!r} but group ids go up to {gmax - 1}")
    off = (pos.astype(np.int64) - ref.astype(np.int64)) % k
    return np.bincount(grp.astype(np.int64) * k + off, minlength=g * k).reshape(g, k).astype(np.int64)


def offset_counts_from_chunks(chunks, k: int, n_groups: int) -> np.ndarray:
    """:func:`offset_counts` summed over spans of landing offsets.

    Parameters
    ----------
    chunks : iterable of (offsets, groups)
        Integer arrays of one span each: offsets ``(pos - ref) mod k`` in 0..k-1, group ids in
        ``0..n_groups-1``.
    k : int
        Number of wheel positions.
    n_groups : int
        Number of groups (>= 1).

    Returns
    -------
    (n_groups, k) ndarray of int64
        The counts :func:`offset_counts` gives on the concatenated spans (a sum of integer counts).
    """
    k, g = int(k), int(n_groups)
    total = np.zeros(g * k, dtype=np.int64)
    for off, grp in chunks:  # loop over spans
        key = grp.astype(np.intp) * k
        key += off
        total += np.bincount(key, minlength=g * k)
    return total.reshape(g, k)


def dealer_signature(
    offset_counts,
    *,
    group_labels=None,
    probs=None,
    min_len: int = 1,
    max_len: int | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    name: str = "dealer_signature",
    method: MonteCarlo | None = None,
) -> TestResult | NotApplicable:
    r"""Dealer-signature test: do results cluster in an arc at a fixed offset from a reference?

    Parameters
    ----------
    offset_counts : (k,) or (g, k) array_like of int
        Counts of landing offsets per group (from :func:`offset_counts`).
    group_labels : sequence of str, optional
        Label of each group (e.g. ``"dealer 7 / cw"``), copied into the details.
    probs : (k,) array_like of float, optional
        Null law of the offset; default uniform (see Notes).
    min_len, max_len : int
        Arc lengths scanned (default 1 .. k//2).
    n_resamples : int
        Monte Carlo replicates R.
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value, here or in ``method``. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    name : str
        Identifier carried by the result.
    method : MonteCarlo, optional
        ``n_resamples``, ``batch`` and ``rng`` in one object (:class:`rngcert.stats.MonteCarlo`),
        instead of the keywords; the same p-value.

    Returns
    -------
    TestResult or NotApplicable
        As :func:`rngcert.stats.sector.sector_scan` (requirement UNPREDICTABILITY), with the
        details per group carrying ``label``, ``n``, best arc and z.

    Notes
    -----
    H0: the landing position is uniform and independent of the reference, so the offset
    :math:`d = (x - r) \bmod k` is uniform. When the reference is the release pocket this holds
    for any spin that is independent of the release. When the reference is the previous result
    and results are i.i.d. uniform, the map from the sequence to (first result, offsets) is a
    bijection, so the offsets are i.i.d. uniform and their counts per group are multinomial —
    exactly the null of the sector scan. (With a non-uniform marginal and the previous result as
    reference, consecutive offsets are dependent and the multinomial null is only approximate.)
    The statistic is the sector scan's max |z| over groups (dealers x directions), arc starts
    (offsets) and lengths, with a family-wise Monte Carlo p-value [1]_.

    References
    ----------
    .. [1] Kulldorff, M. (1997), Comm. Statist. Theory Methods 26, 1481-1496; for dealer
           signature as the mechanism: Small, M. & Tse, C. K. (2012), "Predicting the outcome of
           roulette", Chaos 22, 033150.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import dealer_signature, offset_counts
    >>> g = np.random.default_rng(5)
    >>> release = g.integers(0, 37, 3000)
    >>> landing = (release + g.integers(0, 37, 3000)) % 37  # fair: the offset is uniform
    >>> res = dealer_signature(offset_counts(landing, release, 37), n_resamples=999)  # rng: the fixed default stream
    >>> res.method, res.pvalue > 0.01
    ('monte-carlo, R=999', True)
    >>> res.pvalue == dealer_signature(offset_counts(landing, release, 37), n_resamples=999).pvalue
    True
    """
    c = np.asarray(offset_counts)
    g = 1 if c.ndim == 1 else c.shape[0]
    if group_labels is not None:
        labels = [str(s) for s in group_labels]
        if len(labels) != g:
            raise InputError(f"{name}: {len(labels)} group_labels for {g} groups")
    else:
        labels = [str(i) for i in range(g)]
    res = sector_scan(
        offset_counts,
        probs,
        min_len=min_len,
        max_len=max_len,
        n_resamples=n_resamples,
        rng=rng,
        name=name,
        requirement=Requirement.UNPREDICTABILITY,
        method=method,
    )
    if isinstance(res, NotApplicable):
        return res
    details = dict(res.details)
    details["groups"] = [dict(gd, label=labels[gd["group"]]) for gd in details["groups"]]
    best = dict(details["best_arc"])
    best["label"] = labels[best["group"]]
    details["best_arc"] = best
    return TestResult(res.name, res.requirement, res.statistic, res.df, res.pvalue, res.n, res.method, details)
