"""Chunked battery (issue 11, item 1): the order-dependent tests and the integrity checks, read in
spans of a few spins, give exactly (bit for bit) what the whole-table code of rngcert 0.x gave.

The ``_whole_*`` functions below are that code (whole-table int64 arrays, kept here as the
reference); the tests force spans of 1, 7 and 64 spins so that runs, gaps, groups, lags and
copied blocks straddle many span ends.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rngcert.stats.chunks as chunks
from rngcert.battery.wheel import WHEEL, WheelData, signature_groups
from rngcert.collect.spinlog import TableSpins
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline import checks
from rngcert.pipeline.certify_wheel import chunked_tally
from rngcert.stats import integrity, predict, runs, serial, signature

EU = load_wheel("european").position_space()


# ------------------------------------------------------------------ the whole-table reference code
def _whole_predictor_groups(pos, ref, grp, k, width=5, min_fit=10):
    off = (pos.astype(np.int64) - ref.astype(np.int64)) % k
    g = int(grp.max()) + 1
    order = np.argsort(grp, kind="stable")
    gs, offs = grp[order], off[order]
    out = []
    for j in range(g):
        d = offs[np.searchsorted(gs, j, "left") : np.searchsorted(gs, j, "right")]
        nf = d.size // 2
        if nf < min_fit:
            continue
        c = np.bincount(d[:nf], minlength=k)
        cc = np.concatenate([[0], np.cumsum(np.concatenate([c, c]))])
        arc_counts = cc[width : width + k] - cc[:k]
        s = int(np.argmax(arc_counts))
        in_arc = np.zeros(k, dtype=bool)
        in_arc[(s + np.arange(width)) % k] = True
        out.append((j, s, int(nf), int(arc_counts[s]), int(d.size - nf), int(in_arc[d[nf:]].sum())))
    return out


def _whole_longest(seq):
    x = np.asarray(seq)
    change = np.flatnonzero(np.diff(x) != 0) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [x.size]]))
    vals = x[starts]
    if not np.any(vals > 0):
        return 0, 0, -1
    i = int(np.argmax(np.where(vals > 0, lengths, -1)))
    return int(lengths[i]), int(vals[i]), int(starts[i])


def _whole_gaps(pos, tgt, t):
    hits = np.flatnonzero(tgt[pos.astype(np.int64)])
    return np.bincount(np.minimum(np.diff(hits) - 1, t), minlength=t + 1)


def _whole_distances(pos, k, lag, mask):
    p = pos.astype(np.int64)
    d = p[lag:] - p[:-lag]
    d[d < 0] += k
    if mask is None:
        return np.bincount(d, minlength=k), d.size, max(d.size - lag, 0)
    return np.bincount(d[mask], minlength=k), int(mask.sum()), int(np.count_nonzero(mask[lag:] & mask[:-lag])) if mask.size > lag else 0


def _whole_duplicated(x, L=20):
    x = x.astype(np.uint64)
    n = x.size
    base = np.uint64(1_000_003)
    powers = np.ones(L, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(L - 2, -1, -1):
            powers[i] = powers[i + 1] * base
        win = np.lib.stride_tricks.sliding_window_view(x + np.uint64(1), L)
        h = np.zeros(win.shape[0], dtype=np.uint64)
        for j in range(L):
            h += win[:, j] * powers[j]
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    a, b = order[same], order[same + 1]
    first, later = np.minimum(a, b), np.maximum(a, b)
    ok = np.all(win[first] == win[later], axis=1) & (later - first >= L)
    first, later = first[ok], later[ok]
    covered = np.zeros(n, dtype=bool)
    for off in range(L):
        covered[later + off] = True
    srt = np.argsort(later)
    return int(later.size), int(covered.sum()), [(int(f), int(c)) for f, c in zip(first[srt][:5], later[srt][:5])]


# ------------------------------------------------------------------ tables
def _table(seed, n=3000, dealers=True, release=None):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 37, n).astype(np.int8)
    x[200:260] = x[900:960]  # a copied block, twice
    x[1500:1560] = x[900:960]
    x[400:430] = 5  # a long run of one pocket (overlapping windows, a long colour run)
    x[rng.random(n) < 0.05] = 0
    kw = {}
    if dealers:
        rel = rng.integers(-1, 37, n).astype(np.int8)
        if release is False:
            rel[:] = -1
        kw = dict(release=rel, dealer=rng.integers(0, 3, n).astype(np.int8), dealer_labels=("a", "b", "c"),
                  direction=rng.integers(-1, 2, n).astype(np.int8))
    return TableSpins("T", x, **kw)


@pytest.fixture(params=[1, 7, 64])
def tiny(request, monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK", request.param)
    return request.param


def _deep(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, _deep({f.name: getattr(x, f.name) for f in dataclasses.fields(x)}))
    if isinstance(x, dict):
        return {str(k): _deep(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_deep(v) for v in x]
    if isinstance(x, np.ndarray):
        return (str(x.dtype), x.shape, x.tobytes())
    if isinstance(x, (float, np.floating)):
        return ("f", float(x).hex())
    if isinstance(x, np.generic):
        return (type(x).__name__, x.item())
    return x


def _battery(t, pair_mask=None):
    d = WheelData(t.outcomes, EU, release=t.release, dealer=t.dealer, dealer_labels=t.dealer_labels, direction=t.direction,
                  tally=chunked_tally(t.outcomes, EU), pair_mask=pair_mask, pair_mask_reason="x" if pair_mask is not None else "")
    res, err, _ = WHEEL.evaluate(d, entropy=5, group="table:T", n_resamples=49)
    assert not err
    return _deep(res)


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("kw", [dict(), dict(release=False), dict(dealers=False)])
def test_battery_is_the_same_in_spans_of_any_length(kw, monkeypatch):
    t = _table(1, **kw)
    mask = np.ones(t.n - 1, dtype=bool)
    mask[::5] = False
    whole = [_battery(t), _battery(t, mask), _deep(checks.integrity_findings(t, EU))]
    for c in (1, 7, 64):
        monkeypatch.setattr(chunks, "CHUNK", c)
        assert [_battery(t), _battery(t, mask), _deep(checks.integrity_findings(t, EU))] == whole


@pytest.mark.parametrize("mask_every", [None, 4])
def test_landings_and_predictor_equal_the_whole_table_code(tiny, mask_every):
    for release in (None, False):
        t = _table(2, release=release)
        mask = None
        if mask_every:
            mask = np.ones(t.n - 1, dtype=bool)
            mask[::mask_every] = False
        pos, ref, g, labels, _ = signature_groups(t.outcomes, t.release, t.dealer, t.dealer_labels, t.direction, mask)
        d = WheelData(t.outcomes, EU, release=t.release, dealer=t.dealer, dealer_labels=t.dealer_labels, direction=t.direction, pair_mask=mask)
        res = WHEEL.evaluate(d, entropy=1, group="g", n_resamples=9)[0]
        pred = next(r for r in res if r.name == "out_of_sample_predictor")
        got = [(q["group"], q["arc_start_offset"], q["fit_spins"], q["fit_hits"], q["test_spins"], q["hits"]) for q in pred.details["groups"]]
        assert got == _whole_predictor_groups(pos, ref, g, 37)
        oc = next(r for r in res if r.name == "dealer_signature")
        assert oc.n == pos.size
        direct = predict.out_of_sample_predictor(pos, ref, 37, groups=g, group_labels=labels)
        assert _deep(direct.details["groups"]) == _deep(pred.details["groups"]) and direct.pvalue == pred.pvalue
        whole = np.bincount(g.astype(np.int64) * 37 + (pos.astype(np.int64) - ref) % 37, minlength=len(labels) * 37).reshape(-1, 37)
        assert np.array_equal(signature.offset_counts(pos, ref, 37, groups=g, n_groups=len(labels)), whole)


def test_longest_run_gaps_distances_equal_the_whole_table_code(tiny):
    rng = np.random.default_rng(3)
    for n in (1, 2, 50, 997):
        seq = rng.choice(3, n, p=[0.1, 0.45, 0.45]).astype(np.int8)
        if n > 100:
            seq[300:340] = 2
            seq[600:640] = 1  # a tie: the first run counts
        r = runs.longest_run(seq, [0.1, 0.45, 0.45])
        L, colour, start = _whole_longest(seq)
        assert (r.statistic, r.details["colour"], r.details["start_index"]) == (L, colour, start)
    pos = rng.integers(0, 37, 2000).astype(np.int8)
    tgt = np.isin(np.arange(37), [1, 3, 5, 7, 9, 12])
    g = serial.gap_test(pos, tgt)
    assert np.array_equal(g.details["observed"], _whole_gaps(pos, tgt, g.details["t"]))
    assert g.details["n_hits"] == int(tgt[pos].sum())
    for lag in (1, 3):
        for mask in (None, rng.random(2000 - lag) < 0.8):
            w = serial.wheel_distance(pos, 37, lag=lag, pair_mask=mask, probs=np.asarray(EU.probs))
            obs, N, _ = _whole_distances(pos, 37, lag, mask)
            assert np.array_equal(w.details["observed"], obs) and w.n == N


def test_integrity_checks_equal_the_whole_table_code(tiny):
    rng = np.random.default_rng(4)
    for n in (39, 40, 41, 500, 3000):
        x = rng.integers(0, 37, n).astype(np.int8)
        if n >= 500:
            x[100:150] = x[300:350]
            x[320:340] = x[10:30]  # copies overlapping copies
            x[450:480] = 7
        dup = integrity.duplicated_blocks(x, 37)
        want = _whole_duplicated(x) if n >= 40 else (0, 0, [])
        assert (dup["repeated_blocks"], dup["spins_in_copies"], dup["first"]) == want
        ls = rng.random(n) < 0.2
        ls[0] = True
        ev = integrity.boundary_repeats(x, ls, 37)
        rep, at = x[1:] == x[:-1], ls[1:]
        assert (ev["boundary"]["pairs"], ev["boundary"]["repeats"]) == (int(at.sum()), int((rep & at).sum()))
        assert (ev["within"]["pairs"], ev["within"]["repeats"]) == (int((~at).sum()), int((rep & ~at).sum()))


def _direct_line_counter_starts(line_start):
    """Starts of the lines holding two spins or more, from every line's start and end (the reference)."""
    starts = np.flatnonzero(line_start)
    ends = np.append(starts[1:], line_start.size)
    return starts[ends - starts >= 2]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_line_counter_reads_the_lines_of_the_whole_table_code(seed):
    """The numbered-lines check (its lines of two spins or more found without an index of every line) gives
    the finding of the direct count: on numbered lists, on lists of one number a line and on mixed lines."""
    rng = np.random.default_rng(seed)
    space = EU
    id_of = np.argsort(np.array([int(lab) for lab in space.labels]))  # pocket number -> outcome id
    seen = {"found": 0, "none": 0}
    for _ in range(30):
        n = int(rng.integers(2, 400))
        ls = rng.random(n) < rng.choice([0.05, 0.5, 1.0])
        ls[0] = True
        x = rng.integers(0, 37, n).astype(np.int8)
        numbered = rng.random() < 0.5
        if numbered:  # a running number first on each line
            st = np.flatnonzero(ls)
            x[st] = id_of[np.arange(st.size) % 36 + 1].astype(np.int8)
        got = checks.line_counter(TableSpins("T", x, line_start=ls), space)
        starts = _direct_line_counter_starts(ls)
        seen["found" if got is not None else "none"] += 1
        if starts.size < checks.COUNTER_MIN_LINES:
            assert got is None
            continue
        first = np.array([int(lab) for lab in space.labels])[x[starts]]
        up = first[1:] == first[:-1] + 1
        if up.mean() < checks.COUNTER_SHARE:
            assert got is None
        else:
            assert got["lines"] == starts.size and got["counting_up"] == int(up.sum())
    assert seen["found"] >= 3 and seen["none"] >= 3, seen


def test_line_counter_and_pooled_counts_allocate_no_index_of_every_spin():
    """At 10^8 spins of a list of one number a line, the numbered-lines check's index arrays of every line (three
    int64 arrays of n) took the certify from 0.9 GB to 2.7 GB (issue 26 item 3: 1.5 GB). Traced here at 2 M spins:
    the check allocates a few bytes a spin (a bool copy), the pooled counts a span's worth."""
    import tracemalloc

    from rngcert.collect.spinlog import SpinLog

    n = 2_000_000
    x = np.random.default_rng(3).integers(0, 37, n).astype(np.int8)
    t = TableSpins("T", x, line_start=np.ones(n, dtype=bool))
    tracemalloc.start()
    try:
        assert checks.line_counter(t, EU) is None
        peak_lines = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        log = SpinLog.__new__(SpinLog)
        log.tables, log.space = {"T": t}, EU
        counts = checks.pooled_counts(log)
        peak_counts = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(counts, np.bincount(x, minlength=37))
    assert peak_lines <= 3 * n and peak_counts <= 4 * 4 * chunks.CHUNK * 8, (peak_lines, peak_counts)
