"""Review of the duplicated-block scan (:func:`rngcert.stats.integrity.duplicated_blocks`): every field of its result
against an independent dictionary of every window, on both of its searches (the k-grams sampled at every s-th spin,
and the sort of every window's hash), and with windows of different spins whose 64-bit hashes are equal.

The rule checked (the docstrings', and ``_direct_duplicated_blocks`` in ``tests/test_stats10m_exact.py``): for each
content of L spins, its windows in spin order; a window is a copy when the one before it with the same spins starts
at least L spins earlier (equal windows closer than that are a periodic stretch, not a pasted block).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcert.stats import integrity
from rngcert.stats.integrity import duplicated_blocks

#: sum_j d[j] * B**(11 - j) = 0 mod 2**64 for the hash's base B = 1_000_003 (found by lattice reduction): the windows
#: max(d, 0) and max(-d, 0) (spins 0..22 of a 37-pocket wheel) have different spins and the same 64-bit hash.
COLLISION_12 = np.array([-22, -17, -2, 6, 11, 10, -5, 5, 3, 22, -13, 18])
#: The same for the default length of 20 spins: two windows of spins 0..4 with the same 64-bit hash.
COLLISION_20 = np.array([-4, 1, -3, 3, 3, 2, 2, 1, 0, 1, -3, -1, 3, -4, 1, 4, 1, -2, 2, -3])


def _reference(x, k, L):
    """The expected result, from a dictionary of every window's spins (a Python loop over the windows)."""
    n = x.size
    out = {"length": L, "repeated_blocks": 0, "spins_in_copies": 0, "share": 0.0, "first": [],
           "chance_bound": min(1.0, n * n / 2.0 * float(k) ** (-L)) if n else 0.0}
    if n < 2 * L:
        return out
    pos: dict[tuple, list[int]] = {}
    for i in range(n - L + 1):
        pos.setdefault(tuple(x[i : i + L].tolist()), []).append(i)
    pairs = sorted(((a, b) for p in pos.values() for a, b in zip(p, p[1:]) if b - a >= L), key=lambda ab: ab[1])
    covered = set()
    for _, b in pairs:
        covered.update(range(b, b + L))
    out.update(repeated_blocks=len(pairs), spins_in_copies=len(covered), share=len(covered) / n, first=pairs[:5])
    return out


def _both_searches(x, k, L):
    """duplicated_blocks(x, k, L) with the sampled search from the first window on, and with every window's hash
    sorted (the sample disabled)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(integrity, "_SAMPLED_MIN_WINDOWS", 0)
        sampled = duplicated_blocks(x, k, length=L)
        mp.setattr(integrity, "_sampled_candidates", lambda *a: None)
        full = duplicated_blocks(x, k, length=L)
    return sampled, full


def _check(x, k, L):
    want = _reference(x, k, L)
    sampled, full = _both_searches(x, k, L)
    assert full == want, (x.size, k, L)
    assert sampled == want, (x.size, k, L)
    assert duplicated_blocks(x, k, length=L) == want


@st.composite
def _records(draw):
    """A record of n spins of k pockets with blocks pasted again (some over their source or each other, of lengths
    around L), and sometimes a periodic stretch or a run of one number."""
    k = draw(st.sampled_from([1, 2, 3, 5, 37, 38, 300]))
    L = draw(st.sampled_from([2, 3, 8, 12, 19, 20, 21, 33]))
    n = draw(st.integers(1, 700))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(0, k, n).astype(np.int16)
    for _ in range(draw(st.integers(0, 4))):
        ln = draw(st.integers(1, min(n, 3 * L)))
        a, b = draw(st.integers(0, n - ln)), draw(st.integers(0, n - ln))
        x[b : b + ln] = x[a : a + ln].copy()
    if n > 2 and draw(st.booleans()):
        a = draw(st.integers(0, n - 2))
        per, ln = draw(st.integers(1, L + 2)), draw(st.integers(1, n - a))
        x[a : a + ln] = np.resize(x[a : a + per], ln)
    return x, k, L


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records())
def test_both_searches_equal_a_dictionary_of_every_window(rec):
    _check(*rec)


def test_edges_lengths_and_degenerate_records():
    rng = np.random.default_rng(3)
    L = 20
    for n in (2 * L - 1, 2 * L, 2 * L + 1, 200):
        base = rng.integers(0, 37, n).astype(np.int8)
        for ln in (L - 1, L, L + 1):
            if n >= 2 * ln:
                x = base.copy()
                x[n - ln :] = x[:ln]  # the first spins pasted at the very end
                _check(x, 37, L)
    x = rng.integers(0, 37, 400).astype(np.int8)
    x[100:140] = x[0:40]
    x[250:290] = x[100:140]  # a copy of a copy
    x[300:345] = x[290:335]  # overlapping its source (10 apart)
    _check(x, 37, L)
    for k, n in ((1, 300), (2, 300), (2, 5000)):
        _check(rng.integers(0, k, n).astype(np.int8), k, L)
    _check(np.resize(np.arange(7, dtype=np.int8), 500), 37, L)  # periodic throughout: equal windows 7 apart
    _check(np.resize(np.arange(23, dtype=np.int8), 500), 37, L)  # periodic with a period above L: every window copied


def test_records_above_the_sample_threshold():
    rng = np.random.default_rng(8)
    seen = []
    real = integrity._sampled_candidates
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(integrity, "_sampled_candidates", lambda *a: seen.append(real(*a)) or seen[-1])
        for L, k in ((20, 37), (12, 37), (33, 300)):
            x = rng.integers(0, k, integrity._SAMPLED_MIN_WINDOWS + 3_000).astype(np.int16)
            for a, b, ln in ((0, 30_000, 3 * L), (500, 510, 3 * L), (9_000, x.size - L - 5, L + 5), (30_000, 20_000, L - 1)):
                x[b : b + ln] = x[a : a + ln].copy()
            want = _reference(x, k, L)
            assert duplicated_blocks(x, k, length=L) == want and want["repeated_blocks"] > 0
    assert len(seen) == 3 and all(c is not None for c in seen)  # (the sampled search ran, not its fallback)


def _colliding_windows(d):
    a, c = np.maximum(d, 0).astype(np.int8), np.maximum(-d, 0).astype(np.int8)
    h = integrity._whole_hash(np.concatenate([a, c]), d.size, np.array([0, d.size]))
    assert not np.array_equal(a, c) and h[0] == h[1]
    return a, c


@pytest.mark.parametrize("n", [3_000, integrity._SAMPLED_MIN_WINDOWS + 3_000])
@pytest.mark.parametrize("d", [COLLISION_12, COLLISION_20], ids=["L12", "L20"])
def test_windows_of_different_spins_with_equal_hashes_hide_no_copy(n, d):
    """A window pasted again with a window of other spins but the same 64-bit hash between the two copies: the copy
    is still found (it was lost: only neighbours in hash order were compared), by both searches, and the
    colliding windows themselves are no copy."""
    a, c = _colliding_windows(d)
    L = d.size
    x = np.random.default_rng(12).integers(0, 37, n).astype(np.int8)
    x[100 : 100 + L], x[500 : 500 + L], x[1000 : 1000 + L] = a, c, a
    _check(x, 37, L)
    assert duplicated_blocks(x, 37, length=L)["first"] == [(100, 1000)]
    x[1500 : 1500 + L] = c  # each of the two windows twice, interleaved
    _check(x, 37, L)
    assert duplicated_blocks(x, 37, length=L)["first"] == [(100, 1000), (500, 1500)]
    x[1000 : 1000 + L] = np.random.default_rng(13).integers(0, 37, L)
    _check(x, 37, L)
    assert duplicated_blocks(x, 37, length=L)["first"] == [(500, 1500)]
    x[[500, 1500]] = 5  # no more collision: the same copy from the sort by hash alone
    _check(x, 37, L)
