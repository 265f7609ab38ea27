"""A large binary dump of which a few streams are tested is not held in memory whole (a 50 MB capture with
``--streams 1 --length 1000`` took 508 MB, ten times the file: a 1 GB capture would need 10 GB), while its
SHA-256 and bit count still cover the whole file and its shape is still judged (case c17)."""

from __future__ import annotations

import hashlib
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from rngcert.collect import bits as cb
from rngcert.errors import InputError


def test_few_streams_of_a_large_dump_read_only_what_is_tested(tmp_path):
    raw = np.random.default_rng(31).integers(0, 256, 8 << 20, dtype=np.uint8).tobytes()  # 8 MB
    f = tmp_path / "capture.bin"
    f.write_bytes(raw)
    tracemalloc.start()
    try:
        arr, dump = cb.read_bit_streams(f, 2, 1000, fmt="binary")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak  # the whole file (8 MB) and its bits (64 MB) were held before; now a 1 MB hash chunk or two
    assert dump.sha256 == hashlib.sha256(raw).hexdigest() and dump.n_bits == 8 * len(raw)
    assert arr.tolist() == np.unpackbits(np.frombuffer(raw[:250], dtype=np.uint8)).reshape(2, 1000).tolist()
    assert dump.provenance()["bits_used"] == 2000


def test_short_length_still_judges_the_dump(tmp_path):
    """Reading only the tested bits must not stop the shape checks: 64 bits of an ASCII bit file are refused."""
    f = tmp_path / "bits.txt"
    f.write_text("".join(map(str, np.random.default_rng(32).integers(0, 2, 64000))))
    with pytest.raises(InputError, match="ASCII bit file"):
        cb.read_bit_streams(f, 1, 64, fmt="binary")
    g = tmp_path / "b.bin"
    g.write_bytes(np.random.default_rng(33).integers(0, 256, 64000, dtype=np.uint8).tobytes())
    with pytest.raises(InputError, match=r"holds 512000 bits, 1 streams of 1000000 bits need 1000000 \(the file has 0 whole"):
        cb.read_bit_streams(g, 1, 10**6, fmt="binary")


@pytest.mark.skipif(not Path("/dev/null").is_char_device(), reason="needs a character device")
def test_a_device_is_refused_not_read_until_memory_runs_out(tmp_path, cli):
    """`rngcert bits /dev/urandom --format binary --streams 1 --length 1000` read the device whole: it never ended (and
    /dev/zero was killed for its memory). A device is refused by name (exit 3); /dev/null stands in for it here, safe to
    read before the fix too (it said "the file is empty")."""
    with pytest.raises(InputError, match="a device, not a dump.*head -c"):
        cb.read_bit_streams("/dev/null", 1, 1000, fmt="binary")
    with pytest.raises(InputError, match="a device, not a dump"):
        cb.read_bits("/dev/null", fmt="ascii")
    res = cli("bits", "/dev/null", "--format", "binary", "--streams", 1, "--length", 1000, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3 and "a device, not a dump" in res.output
