r"""Out-of-sample predictor test (unpredictability).

A dealer who releases the ball the same way each time makes the landing position predictable
from the release pocket (or from the previous result) even on a perfect wheel. The test fits the
simplest predictor a player could use — for each dealer/direction group, the arc of ``width``
offsets (landing position minus reference, in wheel order) that was hit most often — on the first
half of each group's spins, and counts how often the second half lands in the predicted arc.
"""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats.chunks import spans
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue
from rngcert.stats.signature import offsets_iv

__all__ = ["out_of_sample_predictor", "predictor_from_offsets"]


def _predict_iv(positions, reference, k, groups, group_labels, width, name):
    if isinstance(k, bool) or int(k) != k or k < 3:
        raise InputError(f"{name}: k must be an integer >= 3, got {k!r}")
    k = int(k)
    if isinstance(width, bool) or int(width) != width or not 1 <= width < k:
        raise InputError(f"{name}: width must be an integer in 1..{k - 1}, got {width!r}")
    pos, ref, grp = offsets_iv(positions, reference, groups, k, name)
    g = int(grp.max()) + 1 if grp.size else 1
    if group_labels is not None:
        labels = [str(s) for s in group_labels]
        if len(labels) < g:
            raise InputError(f"{name}: {len(labels)} group_labels for group ids up to {g - 1}")
    else:
        labels = [str(i) for i in range(g)]
    return pos, ref, k, grp, labels, int(width)


def out_of_sample_predictor(
    positions,
    reference,
    k: int,
    *,
    groups=None,
    group_labels=None,
    width: int = 5,
    min_fit: int = 10,
    name: str = "out_of_sample_predictor",
) -> TestResult | NotApplicable:
    r"""Fit the most frequent offset arc per group on the first half, test hits on the second.

    Parameters
    ----------
    positions : (n,) array_like of int
        Landing positions 0..k-1 in wheel order, in spin order.
    reference : (n,) array_like of int
        Reference position per spin: the release pocket, or the previous result.
    k : int
        Number of wheel positions.
    groups : (n,) array_like of int, optional
        Dealer/direction group of each spin (ids >= 0); default one group.
    group_labels : sequence of str, optional
        Label per group id, copied into the details.
    width : int
        Width of the predicted arc of offsets, in pockets (default 5: a number and two
        neighbours each side, the usual bet of a player predicting a sector).
    min_fit : int
        Minimum spins in a group's first half for the group to be used (default 10).
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` = hits in the second halves, ``pvalue`` = exact one-sided binomial
        :math:`P(\mathrm{Bin}(N, w/k) \ge \text{hits})`, ``method = "exact"``, ``n`` = N (second-half
        spins of the groups used); requirement UNPREDICTABILITY. ``details``: the share
        ``w/k``, expected hits, hit rate, and per group the label, fitted arc start (offset),
        fit and test spins and hits. NotApplicable when no group has ``2*min_fit`` spins.

    Notes
    -----
    Offsets are :math:`d_t = (x_t - r_t) \bmod k`. For group j with :math:`n_j` spins (in spin
    order), the first :math:`\lfloor n_j/2 \rfloor` spins fit the predictor: the start s of the
    arc :math:`\{s, s+1, \dots, s+w-1\} \bmod k` holding the most fitted offsets (ties: smallest s).
    On the remaining spins a hit is an offset in that arc.
    H0: offsets are i.i.d. uniform on 0..k-1 and independent of the reference (as in the
    dealer-signature test). The arc is a function of the first half only, so given it each
    second-half spin hits with probability exactly w/k, independently; the total hits over groups
    is :math:`\mathrm{Bin}(N, w/k)` and the p-value is exact [1]_. Unlike the in-sample
    dealer-signature scan, no multiplicity correction is needed, and a hit rate well above
    w/k is direct evidence that a player could predict the sector.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934) for the binomial law; for out-of-sample
           prediction of roulette from the ball's release: Small, M. & Tse, C. K. (2012),
           "Predicting the outcome of roulette", Chaos 22, 033150.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import out_of_sample_predictor
    >>> g = np.random.default_rng(6)
    >>> reference = g.integers(0, 37, 4000)
    >>> fair = (reference + g.integers(0, 37, 4000)) % 37
    >>> out_of_sample_predictor(fair, reference, 37).pvalue > 0.01
    True
    >>> aimed = (reference + g.integers(10, 16, 4000)) % 37  # a dealer who always lands 10-15 pockets on
    >>> out_of_sample_predictor(aimed, reference, 37).pvalue < 1e-10
    True
    """
    pos, ref, k, grp, labels, width = _predict_iv(positions, reference, k, groups, group_labels, width, name)
    if isinstance(min_fit, bool) or int(min_fit) != min_fit or min_fit < 1:
        raise InputError(f"{name}: min_fit must be a positive integer, got {min_fit!r}")
    off = (pos - ref) % k

    def chunks():
        for lo, hi in spans(off.size):
            yield off[lo:hi], grp[lo:hi]

    return predictor_from_offsets(chunks, k, labels, width=width, min_fit=min_fit, name=name)


def predictor_from_offsets(chunks, k: int, group_labels, *, width: int = 5, min_fit: int = 10, totals=None,
                           name: str = "out_of_sample_predictor") -> TestResult | NotApplicable:
    """:func:`out_of_sample_predictor` on landing offsets read span by span.

    Parameters
    ----------
    chunks : callable
        ``chunks()`` returns a fresh iterator of ``(offsets, groups)`` integer arrays, consecutive
        spans of the spins in spin order: offsets ``(x - r) mod k`` in 0..k-1, group ids in
        ``0..len(group_labels)-1``. Read once, or twice when ``totals`` is not given.
    k : int
        Number of wheel positions (>= 3).
    group_labels : sequence of str
        One label per group id.
    width, min_fit, name
        As in :func:`out_of_sample_predictor` (validated there).
    totals : (g, k) array_like of int, optional
        Offset counts per group over all spans (:func:`rngcert.stats.signature.offset_counts`),
        when the caller has them.

    Returns
    -------
    TestResult or NotApplicable
        Equal to :func:`out_of_sample_predictor` on the concatenated spans, whatever their
        lengths: the first half of a group is found from its running count across spans, and the
        hits of the second half are its offset counts in the arc (total minus fitted counts), so
        every sum is an integer one.
    """
    req = Requirement.UNPREDICTABILITY
    if isinstance(width, bool) or int(width) != width or not 1 <= width < k:  # (an arc of k or more offsets counts a hit twice)
        raise InputError(f"{name}: width must be an integer in 1..{k - 1}, got {width!r}")
    labels = [str(s) for s in group_labels]
    g = len(labels)
    if totals is None:
        tot = np.zeros(g * k, dtype=np.int64)
        for off, grp in chunks():
            tot += np.bincount(grp.astype(np.intp) * k + off, minlength=g * k)
        totals = tot.reshape(g, k)
    totals = np.asarray(totals, dtype=np.int64)
    n_spins = int(totals.sum())
    n_j = totals.sum(axis=1)
    nf_j = n_j // 2
    fitc = _fit_half_counts(chunks, g, k, nf_j) if bool(np.any(nf_j >= min_fit)) else np.zeros((g, k), dtype=np.int64)
    per_group = _arc_hits(fitc, totals, n_j, nf_j, labels, width, min_fit)
    hits_total = sum(d["hits"] for d in per_group)
    n_test = sum(d["test_spins"] for d in per_group)
    if not per_group:
        return NotApplicable(name, req, n_spins, f"no dealer/direction group has {2 * min_fit} spins (fit half >= {min_fit})")
    share = width / k
    pvalue = clip_pvalue(_dist.binom_sf(hits_total - 1, n_test, share))
    details = dict(
        width=width,
        share=share,
        expected_hits=n_test * share,
        hit_rate=hits_total / n_test,
        groups=per_group,
        groups_skipped=g - len(per_group),
    )
    return TestResult(name, req, float(hits_total), None, pvalue, n_test, "exact", details)


def _arc_hits(fitc: np.ndarray, totals: np.ndarray, n_j: np.ndarray, nf_j: np.ndarray, labels, width: int, min_fit: int) -> list[dict]:
    """Per group whose fitting half has at least ``min_fit`` spins: the arc of ``width`` offsets its
    fitting half landed in most often, and the hits of its other (test) half in that arc."""
    g, k = totals.shape
    per_group = []
    arc = np.arange(width)
    for j in range(g):  # loop over dealer/direction groups
        nf = int(nf_j[j])
        if nf < min_fit:
            continue
        c = fitc[j]
        cc = np.concatenate([[0], np.cumsum(np.concatenate([c, c]))])
        arc_counts = cc[width : width + k] - cc[:k]
        s = int(np.argmax(arc_counts))
        test_counts = totals[j] - c
        h = int(test_counts[(s + arc) % k].sum())
        n_tj = int(n_j[j]) - nf
        per_group.append(dict(group=j, label=labels[j], arc_start_offset=s, arc_offsets=((s + arc) % k),
                              fit_spins=int(nf), fit_hits=int(arc_counts[s]), test_spins=n_tj, hits=h))
    return per_group


def _fit_half_counts(chunks, g: int, k: int, nf_j: np.ndarray) -> np.ndarray:
    """(g, k) offset counts of the first ``nf_j[j]`` spins of each group j (its fitting half), in
    spin order, read span by span until every half is complete."""
    fitc = np.zeros(g * k, dtype=np.int64)
    seen = np.zeros(g, dtype=np.int64)
    for off, grp in chunks():  # loop over spans
        gi = grp.astype(np.intp)
        order = np.argsort(gi, kind="stable")  # spin order kept within each group
        gs = gi[order]
        del gi
        first = np.searchsorted(gs, np.arange(g), side="left")
        fit = seen[gs] + (np.arange(gs.size) - first[gs]) < nf_j[gs]  # rank within the group, in spin order
        seen += np.bincount(gs, minlength=g)
        keys = gs[fit] * k
        keys += off[order[fit]]
        fitc += np.bincount(keys, minlength=g * k)
        if bool(np.all(seen >= nf_j)):
            break  # the fitted halves are complete
    return fitc.reshape(g, k)
