"""Raw-bit collectors: named bit generators, dumps (ASCII / binary), foreign sources.

Runtime: about 2 s.
"""

import hashlib

import numpy as np
import pytest
from _support import shared_file

from rngcert.collect import bits as cb
from rngcert.errors import InputError, NoDataError
from rngcert.simulate import sources as src_
from rngcert.stats import nist


def test_unknown_name_lists_valid_names():
    with pytest.raises(InputError, match=r"'nosuch' is not a known bit generator; valid names: .*pcg64"):
        src_.bit_generator("nosuch", 1)


def test_seed_is_required():
    with pytest.raises(InputError, match="seed is required"):
        src_.generate_bits("pcg64", 10, seed=None)


@pytest.mark.parametrize("name", sorted(src_.BIT_GENERATORS))
def test_every_generator_gives_balanced_bits_in_every_word_position(name):
    cls, width = src_.BIT_GENERATORS[name]
    x = src_.generate_bits(name, 4096 * width, seed=1)
    assert x.dtype == np.uint8 and set(np.unique(x)) <= {0, 1}
    per_pos = x.reshape(-1, width).mean(axis=0)          # P(1) of each bit of the word
    # 4096 words: sd 0.0078; 6 sd bound catches a 32-bit generator read as 64
    assert np.all(np.abs(per_pos - 0.5) < 0.047), per_pos
    assert nist.frequency(x).pvalue > 1e-6


def test_msb_first_word_order():
    bg = np.random.PCG64(np.random.SeedSequence(5))
    w = bg.random_raw(2)
    x = src_.generate_bits("pcg64", 128, seed=np.random.SeedSequence(5))
    assert "".join(map(str, x[:64])) == format(int(w[0]), "064b")
    assert "".join(map(str, x[64:])) == format(int(w[1]), "064b")
    m = src_.generate_bits("mt19937", 64, seed=3)
    w = np.random.MT19937(np.random.SeedSequence(3)).random_raw(2)
    assert "".join(map(str, m)) == format(int(w[0]), "032b") + format(int(w[1]), "032b")


def test_streams_are_spawned_children_and_reproducible():
    a = src_.generate_bits("philox", 1000, seed=42, streams=3)
    b = src_.generate_bits("philox", 1000, seed=42, streams=3)
    assert a.shape == (3, 1000)
    np.testing.assert_array_equal(a, b)
    child = np.random.SeedSequence(42).spawn(3)[1]
    np.testing.assert_array_equal(a[1], src_.generate_bits("philox", 1000, seed=child))
    assert not np.array_equal(a[0], a[1])
    p = src_.generate_bits("philox", 1001, seed=42, streams=3, packed=True)
    assert p.shape == (3, 126)
    np.testing.assert_array_equal(cb.unpack_bits(p, 1000), a)


def test_ascii_dump_reads_data_e():
    f = shared_file("data", "nist-sts", "data.e")
    d = cb.read_bits(f, fmt="ascii", n=1_000_000)
    assert d.bits.size == 1_000_000 and d.n_bits == 1_004_882
    assert d.bits[:10].tolist() == [1, 0, 1, 0, 1, 1, 0, 1, 1, 1]   # e = 10.1011011111...
    with open(f, "rb") as fh:
        assert d.sha256 == hashlib.sha256(fh.read()).hexdigest()
    assert d.provenance()["bit_order"] is None and not d.bits.flags.writeable


def test_ascii_whitespace_ignored_and_bad_character_located(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(b"01 1\n\t0\r\n1")
    assert cb.read_bits(f, fmt="ascii").bits.tolist() == [0, 1, 1, 0, 1]
    f.write_bytes(b"0101\n01x1")
    with pytest.raises(InputError, match=r"byte offset 7: character b'x'"):
        cb.read_bits(f, fmt="ascii")
    f.write_bytes(b"The quick brown fox")
    with pytest.raises(InputError, match=r"byte offset 0: character b'T'"):
        cb.read_bits(f, fmt="ascii")


def test_empty_files_raise_nodata(tmp_path):
    f = tmp_path / "e.bin"
    f.write_bytes(b"")
    for fmt in ("ascii", "binary"):
        with pytest.raises(NoDataError, match="empty"):
            cb.read_bits(f, fmt=fmt)
    f.write_bytes(b" \n\n ")
    with pytest.raises(NoDataError, match="whitespace"):
        cb.read_bits(f, fmt="ascii")


def test_binary_bit_order(tmp_path):
    f = tmp_path / "b.bin"
    f.write_bytes(bytes([0b10000001, 0b01000000]))
    assert cb.read_bits(f, fmt="binary").bits.tolist() == [1, 0, 0, 0, 0, 0, 0, 1,
                                                          0, 1, 0, 0, 0, 0, 0, 0]
    assert cb.read_bits(f, fmt="binary", bit_order="little").bits.tolist() == [
        1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    with pytest.raises(InputError, match="bit_order='middle'"):
        cb.read_bits(f, fmt="binary", bit_order="middle")
    with pytest.raises(InputError, match="fmt='auto'"):
        cb.read_bits(f, fmt="auto")


def test_short_file_is_an_error_never_replayed(tmp_path):
    f = tmp_path / "s.bin"
    f.write_bytes(bytes(range(100)))                      # 800 bits
    with pytest.raises(InputError, match="holds 800 bits, 1000 requested.*never rewound"):
        cb.read_bits(f, fmt="binary", n=1000)
    s, d = cb.read_bit_streams(f, 3, 256, fmt="binary")
    assert s.shape == (3, 256) and d.bits.size == 768
    with pytest.raises(InputError, match="the file has 3 whole streams"):
        cb.read_bit_streams(f, 4, 256, fmt="binary")
    # odd bit counts from an ASCII file are kept exactly
    g = tmp_path / "odd.txt"
    g.write_bytes(b"1" * 7 + b"0" * 6)
    assert cb.read_bits(g, fmt="ascii").bits.size == 13


def test_wrap_callable_feeds_numpy_generator():
    state = {"x": 0}

    def nxt():
        state["x"] = (state["x"] * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        return state["x"]

    g = np.random.Generator(src_.wrap_callable(nxt, 64))
    v = g.integers(0, 37, size=1000)
    assert v.min() >= 0 and v.max() <= 36 and len(set(v.tolist())) == 37


def test_finite_word_source_detects_exhaustion():
    src = src_.FiniteWordSource(np.arange(1, 11, dtype=np.uint64), bits=64)
    assert src.bit_generator.random_raw(4).tolist() == [1, 2, 3, 4]
    assert src.remaining == 6
    src.check()
    with pytest.raises(InputError, match="exhausted: 10 words available, 13 drawn"):
        with src:
            src.bit_generator.random_raw(9)
    with pytest.raises(NoDataError):
        src_.FiniteWordSource(np.array([], dtype=np.uint64))
    # a rejection sampler fed from an exhausted source terminates, and the overrun is caught
    src = src_.FiniteWordSource(np.zeros(4, dtype=np.uint64), bits=64)
    g = np.random.Generator(src.bit_generator)
    with pytest.raises(InputError, match="exhausted"):
        with src:
            g.integers(0, 37, size=100)


def test_defective_sources():
    rng = np.random.default_rng(0)
    assert src_.biased_bits(100_000, 0.51, rng=rng).mean() == pytest.approx(0.51, abs=0.005)
    m = src_.markov_bits(100_000, 0.51, rng=rng)
    assert np.mean(m[1:] == m[:-1]) == pytest.approx(0.51, abs=0.005)
    bg = src_.short_period_bit_generator(8, seed=1)
    w = bg.random_raw(24)
    np.testing.assert_array_equal(w[:8], w[8:16])
