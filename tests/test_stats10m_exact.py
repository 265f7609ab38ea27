"""The per-spin reformulations of issue 26 item 2 at 10 M spins (helper stats10m) give the numbers of the
direct computation: each against a per-spin count or the implementation it replaced, on random inputs of
1 to 64 spins, in spans of 1 to 64 spins, and on longer ones."""

from __future__ import annotations

import numpy as np
import pytest
from test_throughput_exact import _direct_lag_pairs

from rngcert.stats import chunks
from rngcert.stats.serial import _lag_triples, lag_pair_counts
from rngcert.stats.tally import SpinTally


def assert_lag_pairs(x, k, lags, with_tally=(False, True)):
    """lag_pair_counts of ``x`` (with and without the tally's counts and pairs) against a direct count."""
    t = SpinTally.of(x, k)
    for kw in [{"counts": t.counts, "pairs": t.pairs} if w else {} for w in with_tally]:
        c, p = lag_pair_counts(x, k, lags, **kw)
        np.testing.assert_array_equal(c, np.bincount(x.astype(np.intp), minlength=k))
        for h in lags:
            np.testing.assert_array_equal(p[h], _direct_lag_pairs(x.astype(np.intp), k, h), err_msg=f"lag {h}, n={x.size}, k={k}")


def _span_length(chunk, monkeypatch):
    if chunk is not None:
        monkeypatch.setattr(chunks, "CHUNK", chunk)


def test_lag_triples_are_disjoint_sums():
    assert len(_lag_triples(list(range(2, 11)))) == 3  # the battery's lags 2..10 (lag 1 from the tally)
    for lags in ([1, 2, 3, 5, 10, 12], list(range(1, 11)), list(range(1, 17)), [2], [], [3, 6, 9, 12]):
        tr = _lag_triples(lags)
        used = [h for a, b in tr for h in (a, b - a, b)]
        assert len(used) == len(set(used)) and set(used) <= set(lags)
        assert all(0 < a < b and b - a != a for a, b in tr)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lag_pair_counts_short_inputs_any_span(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    split = 0  # inputs longer than their span (counts carried across spans) and longer than the largest lag
    for _ in range(60):
        n = int(rng.integers(1, 65))
        k = int(rng.choice([2, 3, 5, 37, 38]))
        x = rng.integers(0, k, n).astype(np.int8)
        span = int(rng.integers(1, 65))
        monkeypatch.setattr(chunks, "CHUNK", span)
        lags = list(range(1, 11)) if rng.random() < 0.5 else sorted(set(rng.integers(1, 20, 6).tolist()))
        assert_lag_pairs(x, k, lags)
        split += n > span and n > max(lags)
    assert split >= 5, split


@pytest.mark.parametrize("chunk", [None, 64, 1000])
def test_lag_pair_counts_battery_lags_long(chunk, monkeypatch):
    _span_length(chunk, monkeypatch)
    x = np.random.default_rng(7).integers(0, 37, 20_011).astype(np.int8)
    x[5000:6000] = (np.arange(1000) * 5 % 37).astype(np.int8)  # a periodic stretch: counts far from uniform
    assert _direct_lag_pairs(x.astype(np.intp), 37, 1).max() > 2 * x.size / 37**2  # (the stretch: 27 more in each of 37 cells)
    assert_lag_pairs(x, 37, list(range(1, 11)), with_tally=(True,))


def _direct_duplicated_blocks(x, L):
    """(first, later) pairs of duplicated_blocks by a dictionary of the windows' spins: for each content, its
    windows in spin order, each with the one before it when they are at least L apart."""
    pos: dict[tuple, list[int]] = {}
    for i in range(x.size - L + 1):
        pos.setdefault(tuple(x[i : i + L].tolist()), []).append(i)
    pairs = [(a, b) for p in pos.values() for a, b in zip(p, p[1:]) if b - a >= L]
    return sorted(pairs, key=lambda ab: ab[1])


def _check_duplicated_blocks(x, k, L):
    from rngcert.stats.integrity import duplicated_blocks

    got = duplicated_blocks(x, k, length=L)
    want = _direct_duplicated_blocks(x, L) if x.size >= 2 * L else []
    assert got["repeated_blocks"] == len(want)
    assert got["first"] == want[:5]
    starts = np.array([b for _, b in want], dtype=np.int64)
    covered = int(np.minimum(np.diff(starts), L).sum()) + L if starts.size else 0
    assert got["spins_in_copies"] == covered and got["share"] == (float(covered / x.size) if starts.size else 0.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_duplicated_blocks_against_a_dictionary_short(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    for _ in range(80):
        n = int(rng.integers(1, 65))
        k = int(rng.choice([2, 3, 37]))
        L = int(rng.integers(2, 7))
        monkeypatch.setattr(chunks, "CHUNK", int(rng.integers(1, 65)))
        _check_duplicated_blocks(rng.integers(0, k, n).astype(np.int8), k, L)


@pytest.mark.parametrize("chunk", [None, 64, 999])
def test_duplicated_blocks_against_a_dictionary_long(chunk, monkeypatch):
    _span_length(chunk, monkeypatch)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 37, 6_000).astype(np.int8)
    x[3000:3100] = x[200:300]  # a block pasted twice
    x[4000:4040] = x[3990:4030]  # an overlapping copy (10 apart: not a copy of 20 spins)
    x[5000:5100] = 7  # a run: every window the same
    x[5500:5530] = x[200:230]  # a third copy
    for L in (20, 5):
        _check_duplicated_blocks(x, 37, L)
    _check_duplicated_blocks(np.full(300, 3, dtype=np.int8), 37, 20)
    y = rng.integers(0, 300, 4_000).astype(np.int16)  # ids beyond one byte
    y[2000:2050] = y[10:60]
    _check_duplicated_blocks(y, 300, 20)


def _direct_tally(x, k, parts):
    from rngcert.stats.tally import RunTally

    xi = x.astype(np.intp)
    counts = np.bincount(xi, minlength=k)
    pairs = np.zeros((k, k), dtype=np.int64)
    if x.size > 1:
        np.add.at(pairs, (xi[:-1], xi[1:]), 1)
    return counts, pairs, {name: RunTally.of(np.asarray(p)[xi]) for name, p in parts.items()}


def _partitions(rng, k):
    parts = {"alt": np.arange(k) % 2, "mixed": rng.integers(-1, 2, k), "all_out": np.full(k, -1), "one_out": np.r_[-1, rng.integers(0, 2, k - 1)]}
    parts["same_out"] = np.where(parts["one_out"] < 0, -1, 1 - parts["one_out"])  # shares the spins in no category with one_out
    return parts


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_tally_runs_and_counts_against_direct_short(seed):
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.integers(0, 65))
        k = int(rng.choice([2, 3, 5, 37]))
        x = rng.integers(0, k, n).astype(np.int8)
        if n and rng.random() < 0.3:
            x[rng.random(n) < 0.5] = 0  # long stretches of pocket 0 (in no category of one_out, same_out)
        parts = _partitions(rng, k)
        t = SpinTally.of(x, k, partitions=parts)
        counts, pairs, runs = _direct_tally(x, k, parts)
        np.testing.assert_array_equal(t.counts, counts)
        np.testing.assert_array_equal(t.pairs, pairs)
        assert dict(t.runs) == runs, (x.tolist(), k)
        assert t.counts.dtype == np.int64 and t.pairs.dtype == np.int64


@pytest.mark.parametrize("seed", [1, 2])
def test_chunked_tally_against_direct_any_span(seed):
    from rngcert.battery.wheel import WheelData
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import chunked_tally

    space = load_wheel("european").position_space()
    parts = WheelData(np.zeros(0, dtype=np.int8), space).run_partitions
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 400))
        x = rng.integers(0, 37, n).astype(np.int8)
        x[rng.random(n) < 0.2] = list(space.labels).index("0")  # the zero: in no category of the three partitions
        whole = _direct_tally(x, 37, parts)
        for chunk in (1, 2, int(rng.integers(3, 65)), 1 << 16):
            t = chunked_tally(x, space, chunk=chunk)
            np.testing.assert_array_equal(t.counts, whole[0])
            np.testing.assert_array_equal(t.pairs, whole[1])
            assert dict(t.runs) == whole[2]


def _digit_lines(seed: int) -> bytes:
    """One token a line, digits and line ends only (the reader's fastest shape), with the tokens the wheel judges
    (07, 007, 00, 37, 999), now and then a blank line, a token of four digits or a last line without its end."""
    rng = np.random.default_rng(seed)
    odd = ["07", "007", "00", "37", "999", "0"] + (["", "1234"] if rng.random() < 0.3 else [])
    toks = [str(rng.integers(0, 37)) if rng.random() < 0.9 else odd[rng.integers(len(odd))] for _ in range(int(rng.integers(1, 300)))]
    return ("\n".join(toks) + ("\n" if rng.random() < 0.7 else "")).encode()


@pytest.mark.parametrize("wheel", ["european", "american"])
def test_permanence_one_a_line_digits_only_equal_the_exact_reader(tmp_path, monkeypatch, wheel):
    """The scan of a block of digits and line ends (a line is its token) and the token codes made for every byte
    give the exact reader's spins, rejects, fields and line starts, in blocks of 7 bytes and of 4 MB."""
    from test_permanence_memory import _read_three_ways

    from rngcert.collect import permstream
    from rngcert.equipment.wheel import load_wheel

    w = load_wheel(wheel)
    fast, real = [], permstream._simple_scan

    def spy(buf):
        r = real(buf)
        fast.append(r is not None)
        return r

    monkeypatch.setattr(permstream, "_simple_scan", spy)
    for seed in range(30):
        p = tmp_path / f"digits{seed}.txt"
        p.write_bytes(_digit_lines(seed))
        exact, tiny, big = _read_three_ways(p, w, monkeypatch)
        assert tiny == exact and big == exact, (seed, p.read_bytes()[:200])
    assert any(fast) and not all(fast)


@pytest.mark.parametrize("k", [37, 40, 41, 64])
def test_lag_pair_counts_triple_keys_both_widths(k, monkeypatch):
    """The triple keys in uint16 (k^3 <= 65,536: k <= 40) and in int32 (41 <= k <= 64), span by span (perm2): every
    key at its largest (x = k - 1 in all three places) and the tally's and lone lags beside them."""
    rng = np.random.default_rng(k)
    x = rng.integers(0, k, 3_000).astype(np.int8)
    x[100:140] = k - 1  # the largest key, k^3 - 1
    x[500:900] = (np.arange(400) * 7 % k).astype(np.int8)
    for chunk in (None, 1, 5, 333):
        _span_length(chunk, monkeypatch)
        assert_lag_pairs(x, k, list(range(1, 11)))
        assert_lag_pairs(x, k, [2, 3, 5, 11, 13])


# The duplicated-block scan's sampled candidates (k-grams at every s-th spin, a bit table, the hits sorted): the
# same copies as the dictionary of every window, on inputs where the sample path runs (not its fallback).


def _sampled_path(monkeypatch):
    """Run the sampled path from the first window on, and count the calls that fall back to sorting every window."""
    from rngcert.stats import integrity

    monkeypatch.setattr(integrity, "_SAMPLED_MIN_WINDOWS", 0)
    calls = {"full": 0}
    full = integrity._low_bits_twice

    def counted(*a):
        calls["full"] += 1
        return full(*a)

    monkeypatch.setattr(integrity, "_low_bits_twice", counted)
    return calls


def test_sampled_kgram_hashes_equal_the_rolling_hashes():
    from rngcert.stats.integrity import _whole_hash, _WindowHashes

    x = np.random.default_rng(11).integers(0, 300, 5_000).astype(np.int16)
    for kk in (4, 10, 16):
        starts = np.arange(0, x.size - kk + 1, 7)
        np.testing.assert_array_equal(_whole_hash(x, kk, starts).astype(np.uint32), _WindowHashes(x, kk)(0, x.size - kk + 1)[starts])


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_sampled_duplicated_blocks_against_a_dictionary(seed, monkeypatch):
    calls = _sampled_path(monkeypatch)
    rng = np.random.default_rng(seed)
    planted = sampled = 0
    for _ in range(25):
        n = int(rng.integers(200, 3_000))
        k = int(rng.choice([13, 37, 38, 300]))
        L = int(rng.choice([8, 9, 12, 20, 21, 33]))
        x = rng.integers(0, k, n).astype(np.int16)
        for _ in range(int(rng.integers(0, 4))):  # blocks pasted again, some overlapping their source or each other
            ln = int(rng.integers(L, 3 * L))
            a, b = (int(v) for v in rng.integers(0, n - ln, 2))
            x[b : b + ln] = x[a : a + ln].copy()
        if rng.random() < 0.3:  # a periodic stretch: equal windows closer than L (not copies)
            a, per = int(rng.integers(0, n - 60)), int(rng.integers(1, L))
            x[a : a + 60] = np.resize(x[a : a + per], 60)
        before = calls["full"]
        _check_duplicated_blocks(x, k, L)
        planted += duplicated_blocks_count(x, k, L) > 0
        if L >= 20 and k >= 37:  # (shorter k-grams of fewer pockets repeat by chance: those sort every window)
            sampled += 1
            assert calls["full"] == before, (n, k, L)
    assert planted >= 10 and sampled >= 5, (planted, sampled)


def duplicated_blocks_count(x, k, L):
    from rngcert.stats.integrity import duplicated_blocks

    return duplicated_blocks(x, k, length=L)["repeated_blocks"]


def test_sampled_duplicated_blocks_falls_back_where_the_sample_cannot_be_selective(monkeypatch):
    calls = _sampled_path(monkeypatch)
    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, 2_000).astype(np.int8)  # 3 pockets: 10-grams repeat by chance
    _check_duplicated_blocks(x, 3, 20)
    assert calls["full"] == 1
    y = rng.integers(0, 37, 4_000).astype(np.int8)
    y[2_000:3_500] = y[0:1_500]  # a long pasted block: most k-grams repeated
    _check_duplicated_blocks(y, 37, 20)
    assert calls["full"] == 2
    z = rng.integers(0, 37, 4_000).astype(np.int8)
    z[3_000:3_040] = z[100:140]
    _check_duplicated_blocks(z, 37, 20)
    assert calls["full"] == 2 and duplicated_blocks_count(z, 37, 20) == 21  # the sample path: 21 windows of the 40-spin copy
