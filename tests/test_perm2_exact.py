"""The per-spin speed-ups of issue 26 item 2 at 10 M spins (helper perm2) give the numbers of the formulas they
replace: each against the old path (or a direct count) on random and adversarial inputs, in tiny and usual spans."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.stats import chunks
from rngcert.stats.serial import gap_test


def _same(a, b):
    assert type(a) is type(b)
    if hasattr(a, "statistic"):
        assert (a.statistic, a.pvalue, a.df, a.n) == (b.statistic, b.pvalue, b.df, b.n)
        for key in a.details:
            np.testing.assert_array_equal(np.asarray(a.details[key]), np.asarray(b.details[key]), err_msg=key)
    else:
        assert a.reason == b.reason


def _gap_inputs(rng):
    k = int(rng.choice([5, 37, 38]))
    n = int(rng.choice([1, 2, 30, 500, 3_000]))
    x = rng.integers(0, k, n).astype(np.int8)
    tgt = np.zeros(k, dtype=bool)
    tgt[rng.choice(k, int(rng.integers(1, k)), replace=False)] = True
    shape = rng.integers(5)
    if shape == 1:  # no hit at all
        x = rng.choice(np.flatnonzero(~tgt), n).astype(np.int8)
    elif shape == 2:  # one hit
        x = rng.choice(np.flatnonzero(~tgt), n).astype(np.int8)
        x[rng.integers(n)] = np.flatnonzero(tgt)[0]
    elif shape == 3 and n > 100:  # a long stretch without a hit: gaps far beyond the last class
        x[n // 4 : n // 2] = np.flatnonzero(~tgt)[0]
    return x, k, tgt


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_gap_test_hits_from_the_counts(seed, monkeypatch):
    """gap_test with the tally's pocket counts (hits counted from them) equals gap_test counting the hits
    from the positions, in spans of 1 to 64 spins and the usual ones, with and without a class cap and
    with a non-uniform law."""
    rng = np.random.default_rng(seed)
    kinds = set()
    for _ in range(40):
        x, k, tgt = _gap_inputs(rng)
        counts = np.bincount(x, minlength=k)
        probs = None if rng.random() < 0.5 else rng.dirichlet(np.full(k, 20.0))
        max_gap = None if rng.random() < 0.7 else int(rng.integers(1, 6))
        for chunk in (int(rng.integers(1, 65)), 1 << 16):
            monkeypatch.setattr(chunks, "CHUNK", chunk)
            if tgt.all() or not tgt.any():
                continue
            a = gap_test(x, tgt, probs=probs, max_gap=max_gap)
            b = gap_test(x, tgt, probs=probs, max_gap=max_gap, counts=counts)
            _same(a, b)
            kinds.add(type(a).__name__)
            if hasattr(a, "statistic"):  # the classes against a direct count of the gaps between hits
                t = a.details["t"]
                direct = np.bincount(np.minimum(np.diff(np.flatnonzero(tgt[x])) - 1, t), minlength=t + 1)
                np.testing.assert_array_equal(a.details["observed"], direct)
    assert kinds == {"TestResult", "NotApplicable"}, kinds  # (both outcomes met)


def test_chunked_tally_default_chunk_equals_one_pass():
    """chunked_tally's default chunk (256 Ki spins) gives the one-pass tally of the whole table."""
    from rngcert.battery.wheel import WheelData
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import chunked_tally
    from rngcert.stats.tally import SpinTally

    space = load_wheel("european").position_space()
    parts = WheelData(np.zeros(0, dtype=np.int8), space).run_partitions
    rng = np.random.default_rng(9)
    x = rng.integers(0, 37, 600_001).astype(np.int8)
    x[262_140:262_150] = 0  # a stretch of zeros across the first chunk's end
    x[300_000:300_500] = 5
    assert chunked_tally(x, space) == SpinTally.of(x, 37, partitions=parts)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simple_scan_digit_values_are_the_translate_of_the_block(seed):
    """_simple_scan's one translate gives each byte's digit value as the separate translate did (10 for a byte that
    is not a digit, two line ends after the block), and the line ends and token starts of the byte classes, on
    blocks of digits, line ends, separators and white space, one token or many a line."""
    from rngcert.collect import permstream as ps

    rng = np.random.default_rng(seed)
    seps = [",", ", ", ";", " ", "\t", " ,", ",\r"]
    seen = 0
    for _ in range(300):
        per = int(rng.choice([1, 1, 2, 17]))
        sep = seps[int(rng.integers(len(seps)))]
        lines = [sep.join(str(int(v)).zfill(int(rng.integers(1, 4))) if rng.random() < 0.1 else str(int(v))
                          for v in rng.integers(0, 37, per)) for _ in range(int(rng.integers(1, 40)))]
        raw = bytearray(("\n".join(lines) + "\n").encode())
        if rng.random() < 0.3:  # now and then a stray byte: a blank, a separator, a digit more, a line end more
            raw[int(rng.integers(len(raw)))] = int(rng.choice(list(b" ,;\t\r\n0123456789")))
        raw = bytes(raw) if raw.endswith(b"\n") else bytes(raw) + b"\n"
        r = ps._simple_scan(raw)
        if r is None:
            continue
        seen += 1
        nl, starts, length, tok_line, dv = r
        want = np.frombuffer((raw + b"\n\n").translate(ps._DIGIT_VALUE_BYTES), dtype=np.uint8)
        np.testing.assert_array_equal(dv, want)
        b = np.frombuffer(raw, dtype=np.uint8)
        np.testing.assert_array_equal(nl, np.flatnonzero(b == 10))
        dig = (b >= 48) & (b < 58)
        np.testing.assert_array_equal(starts, np.flatnonzero(dig & ~np.r_[False, dig[:-1]]))
        want_len = np.flatnonzero(dig & ~np.r_[dig[1:], False]) + 1 - starts
        assert want_len.max() <= 3  # (a longer token: the block is not simple)
        if length is not None:  # (made on the one-token-a-line path only)
            np.testing.assert_array_equal(length, want_len)
        np.testing.assert_array_equal(tok_line, np.searchsorted(nl, starts))
    assert 100 <= seen < 300, seen  # (most blocks simple, some not)
    long = [b"1,2345\n", b"12345\n", b"1 2 3\n4567,1\n", b"0,1\n22,333\n4444\n"]
    assert all(ps._simple_scan(b) is None for b in long)
    assert ps._simple_scan(b"1,234\n") is not None and ps._simple_scan(b"999\n") is not None
    assert ps._simple_scan(b"12\nab\n") is None and ps._simple_scan(b"\n\n") is None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_colour_runs_longest_when_zero_runs_are_longer_or_tie(seed, monkeypatch):
    """ColourRuns' first longest colour run (argmax of the run lengths, the colour runs' own argmax when a run of
    zeros is the longest) against the longest-run scan, and its rounds against rage_rounds: zero runs longer than
    every colour run, ties between colour runs, no colour run at all, runs across spans of 1 to 64 spins."""
    from rngcert.stats.rage import rage_rounds
    from rngcert.stats.runs import _longest_colour_run, colour_runs

    colour = np.array([2, 0, 1])  # position 0 zero, 1 red, 2 black
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(1, 300))
        x = rng.choice(3, n, p=rng.dirichlet([1, 1, 1])).astype(np.int8)
        if rng.random() < 0.4 and n > 20:
            a = int(rng.integers(n - 10))
            x[a : a + int(rng.integers(5, 11))] = 0  # a long run of zeros
        if rng.random() < 0.2:
            x[:] = 0
        if rng.random() < 0.3 and n > 30:
            x[:30] = np.repeat(np.array([1, 2, 1, 2, 0, 1], dtype=np.int8), 5)  # equal colour runs: the first wins
        monkeypatch.setattr(chunks, "CHUNK", int(rng.integers(1, 65)))
        cr = colour_runs(x, colour)
        rr = rage_rounds(colour[x])
        assert (cr.longest, cr.colour, cr.start) == _longest_colour_run([x]), x.tolist()
        np.testing.assert_array_equal(cr.round_counts, np.bincount(rr["run_lengths"], minlength=15))
        assert (cr.red, cr.black, cr.censored, cr.first_run) == (rr["by_colour"]["red"], rr["by_colour"]["black"], rr["censored"], rr["first_run"])


@pytest.mark.parametrize("wheel", ["european", "american", "crazy-time", "money-wheel-52"])
def test_packed_position_symbol_table_is_the_two_tables(wheel):
    """The reader's one 4-byte entry per digit string holds its position and symbol (the two tables it replaces in a
    clean block), and the entry is -1 exactly for the strings that are void or not read (the flag table)."""
    from rngcert.collect import permstream as ps
    from rngcert.collect.spinlog import RejectedRow, _read_permanence, _resolve_labels
    from rngcert.equipment.wheel import load_wheel

    r = ps._Reader("x", load_wheel(wheel), None, "utf-8", (RejectedRow, _read_permanence, _resolve_labels))
    assert r.pos_sym_by_digits is not None
    pair = r.pos_sym_by_digits.view(np.int16).reshape(-1, 2)
    np.testing.assert_array_equal(pair[:, 0], r.by_digits[0])
    np.testing.assert_array_equal(pair[:, 1], r.by_digits[1])
    np.testing.assert_array_equal(r.pos_sym_by_digits == -1, r.flag_by_digits.astype(bool))
    assert r.flag_by_digits.any() and not r.flag_by_digits.all()


@pytest.mark.parametrize("k", [2, 37, 255, 256, 257, 300])
def test_tally_pair_keys_at_the_uint16_edge(k):
    """SpinTally.of's pair keys in uint16 (k * k <= 65,536) and in intp beyond, against a direct count, with the
    largest key (k - 1 then k - 1) present."""
    from rngcert.stats.tally import SpinTally

    rng = np.random.default_rng(k)
    x = rng.integers(0, k, 5_000).astype(np.int16 if k > 127 else np.int8)
    x[10:13] = k - 1
    t = SpinTally.of(x, k)
    direct = np.zeros((k, k), dtype=np.int64)
    np.add.at(direct, (x[:-1].astype(np.intp), x[1:].astype(np.intp)), 1)
    np.testing.assert_array_equal(t.pairs, direct)
    np.testing.assert_array_equal(t.counts, np.bincount(x.astype(np.intp), minlength=k))
    assert t.pairs.dtype == np.int64 and t.counts.dtype == np.int64
