"""Tallies merge by addition: a log read in chunks gives exactly the one-pass statistics (DESIGN §2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.stats import frequency, runs, sector, serial, signature
from rngcert.stats.tally import RunTally, ShoeTally, SpinTally

SPACE = load_wheel("european").position_space()
PARTS = WheelData(np.zeros(0, dtype=np.int16), SPACE).run_partitions


def _tally(x, **kw):
    return SpinTally.of(x, 37, partitions=PARTS, **kw)


@settings(max_examples=60, deadline=None)
@given(
    x=st.lists(st.integers(0, 36), min_size=0, max_size=400),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_chunked_tally_equals_one_pass(x, cuts):
    x = np.asarray(x, dtype=np.int16)
    edges = sorted({0, x.size, *(c % (x.size + 1) for c in cuts)})
    chunks = [x[a:b] for a, b in zip(edges[:-1], edges[1:])]
    total = SpinTally.empty(37)
    for c in chunks:
        total = total + _tally(c)
    assert total == _tally(x)


@settings(max_examples=40, deadline=None)
@given(
    x=st.lists(st.integers(0, 36), min_size=200, max_size=600),
    cut=st.integers(1, 199),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_count_statistic_is_the_same_from_merged_tallies(x, cut, seed):
    x = np.asarray(x, dtype=np.int16)
    rng = np.random.default_rng(seed)
    dealer = rng.integers(0, 3, x.size)
    release = rng.integers(-1, 37, x.size)
    labels = ("d0", "d1", "d2")
    one = SpinTally.of(x, 37, partitions=PARTS, groups=dealer, group_labels=labels, release=release)
    merged = SpinTally.of(x[:cut], 37, partitions=PARTS, groups=dealer[:cut], group_labels=labels, release=release[:cut]) + SpinTally.of(
        x[cut:], 37, partitions=PARTS, groups=dealer[cut:], group_labels=labels, release=release[cut:]
    )
    assert merged == one
    # the statistics computed from the merged tally equal the one-pass statistics
    counts = np.bincount(x, minlength=37)
    _same(frequency.pocket_chisquare(merged.counts, method="asymptotic"), frequency.pocket_chisquare(counts, method="asymptotic"))
    _same(sector.first_harmonic(merged.counts), sector.first_harmonic(counts))
    _same(serial.serial_pair(merged.pairs, method="asymptotic"), serial.serial_pair(serial.pair_counts(x, 37), method="asymptotic"))
    for name, part in PARTS.items():
        rt = merged.runs[name]
        _same(runs.runs_test_from_counts(rt.runs, rt.n0, rt.n1, name=name), runs.runs_test(np.asarray(part)[x], name=name))
    d = merged.distance_counts()
    dd = (x[1:].astype(int) - x[:-1]) % 37
    assert np.array_equal(d, np.bincount(dd, minlength=37))
    ok = release >= 0
    for gi, lab in enumerate(labels):
        sel = ok & (dealer == gi)
        if sel.any():
            ref = signature.offset_counts(x[sel], release[sel], 37)
            assert np.array_equal(merged.release_offsets[lab], np.ravel(ref))


def _same(a, b):
    assert a.applicable == b.applicable
    if a.applicable:
        assert (a.statistic, a.pvalue, a.df) == (b.statistic, b.pvalue, b.df)
    else:
        assert a.reason == b.reason


def test_run_tally_joins_runs_across_a_boundary():
    a, b = RunTally.of(np.array([0, 0, 1])), RunTally.of(np.array([1, 0, -1, 0]))
    assert (a + b) == RunTally.of(np.array([0, 0, 1, 1, 0, -1, 0]))
    assert (a + b).runs == 3
    assert RunTally() + a == a and a + RunTally() == a


def test_shoe_tally_merges_by_addition():
    rng = np.random.default_rng(3)
    perm = np.argsort(rng.random((50, 52)), axis=1)
    one = ShoeTally.of(perm)
    assert ShoeTally.of(perm[:17]) + ShoeTally.of(perm[17:]) == one
    assert one.position.sum() == 50 * 52 and np.all(one.position.sum(axis=1) == 50)
    with pytest.raises(InputError):
        ShoeTally.of(np.argsort(rng.random((5, 40)), axis=1)) + one


def test_tally_rejects_bad_input():
    with pytest.raises(InputError):
        SpinTally.of(np.array([0, 37]), 37)
    with pytest.raises(InputError):
        SpinTally.of(np.array([0.5]), 37)
    with pytest.raises(InputError):
        SpinTally.empty(37) + SpinTally.empty(38)


def test_battery_on_chunked_tally_equals_one_pass():
    """A WheelData built from the sum of chunk tallies gives the same report as one pass."""
    x = np.random.default_rng(9).integers(0, 37, 5000).astype(np.int16)
    chunks = [x[:1234], x[1234:4000], x[4000:]]
    tally = SpinTally.empty(37)
    for c in chunks:
        tally = tally + SpinTally.of(c, 37, partitions=PARTS)
    a = WHEEL.run(WheelData(x, SPACE), entropy=5, n_resamples=199)
    b = WHEEL.run(WheelData(x, SPACE, tally=tally), entropy=5, n_resamples=199)
    assert [(r.name, r.pvalue) for r in a.results if r.applicable] == [(r.name, r.pvalue) for r in b.results if r.applicable]
