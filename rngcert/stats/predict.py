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
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue
from rngcert.stats.signature import offsets_iv

__all__ = ["out_of_sample_predictor"]


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
    """
    pos, ref, k, grp, labels, width = _predict_iv(positions, reference, k, groups, group_labels, width, name)
    req = Requirement.UNPREDICTABILITY
    if isinstance(min_fit, bool) or int(min_fit) != min_fit or min_fit < 1:
        raise InputError(f"{name}: min_fit must be a positive integer, got {min_fit!r}")
    off = (pos - ref) % k
    g = len(labels)
    order = np.argsort(grp, kind="stable")  # spin order kept within each group
    gs = grp[order]
    offs = off[order]
    starts = np.searchsorted(gs, np.arange(g), side="left")
    ends = np.searchsorted(gs, np.arange(g), side="right")
    per_group = []
    hits_total = 0
    n_test = 0
    arc = np.arange(width)
    for j in range(g):  # loop over dealer/direction groups
        d = offs[starts[j] : ends[j]]
        nf = d.size // 2
        if nf < min_fit:
            continue
        fit, test = d[:nf], d[nf:]
        c = np.bincount(fit, minlength=k)
        cc = np.concatenate([[0], np.cumsum(np.concatenate([c, c]))])
        arc_counts = cc[width : width + k] - cc[:k]
        s = int(np.argmax(arc_counts))
        in_arc = np.zeros(k, dtype=bool)
        in_arc[(s + arc) % k] = True
        h = int(in_arc[test].sum())
        hits_total += h
        n_test += int(test.size)
        per_group.append(dict(group=j, label=labels[j], arc_start_offset=s, arc_offsets=((s + arc) % k),
                              fit_spins=int(nf), fit_hits=int(arc_counts[s]), test_spins=int(test.size), hits=h))
    if not per_group:
        return NotApplicable(name, req, int(pos.size), f"no dealer/direction group has {2 * min_fit} spins (fit half >= {min_fit})")
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
