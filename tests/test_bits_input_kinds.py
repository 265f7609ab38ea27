"""Case c17's kind, both ways round: a bit file named for what it looks like when its bytes cannot be
what ``--format`` says (UTF-16 without a byte-order mark; a binary dump, a hex dump or bits with
separators given as ``--format ascii``)."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.collect import bits as cb
from rngcert.errors import InputError

BITS = "".join(map(str, np.random.default_rng(21).integers(0, 2, 4000)))


@pytest.mark.parametrize("enc", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_named_in_both_formats(tmp_path, cli, enc):
    """Bits saved as UTF-16 without a byte-order mark (Notepad's 'Unicode'): as binary they were 'outcomes stored one per
    byte'; as ASCII only a NUL character was named."""
    f = tmp_path / "bits.txt"
    f.write_bytes(BITS.encode(enc))
    with pytest.raises(InputError, match="UTF-16 text without a byte-order mark"):
        cb.read_bits(f, fmt="binary")
    with pytest.raises(InputError, match="UTF-16 text without a byte-order mark"):
        cb.read_bits(f, fmt="ascii")
    res = cli("bits", f, "--format", "binary", "--length", 1000, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3 and "UTF-16" in res.output and "outcomes" not in res.output


def test_binary_dump_given_as_ascii_names_format_binary(tmp_path, cli):
    f = tmp_path / "dump.bin"
    f.write_bytes(np.random.default_rng(22).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    res = cli("bits", f, "--format", "ascii", "--length", 1000, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3 and "binary data, not text" in res.output and "--format binary" in res.output


def test_hex_dump_and_separated_bits_given_as_ascii_are_named(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text(np.random.default_rng(23).integers(0, 256, 2000, dtype=np.uint8).tobytes().hex())
    with pytest.raises(InputError, match=r"a hex dump .*xxd -r -p"):
        cb.read_bits(f, fmt="ascii")
    f.write_text(",".join(BITS))
    with pytest.raises(InputError, match="bits separated by ','"):
        cb.read_bits(f, fmt="ascii")


def test_a_stray_character_in_ascii_bits_is_not_given_a_kind(tmp_path):
    """One '2' among the bits is a stray character, named by place alone (no guess at another format)."""
    f = tmp_path / "s.txt"
    f.write_text(BITS[:100] + "2" + BITS[100:])
    with pytest.raises(InputError, match=r"line 1, column 101, byte offset 100: character b'2'") as e:
        cb.read_bits(f, fmt="ascii")
    assert "looks like" not in str(e.value)
    f.write_text(BITS)
    assert cb.read_bits(f, fmt="ascii").n_bits == len(BITS)


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zip"])
def test_compressed_capture_is_named_not_tested(tmp_path, kind):
    """A capture given compressed was tested as its compressed stream (a few header bytes, then deflate output), with
    no word that it is not the generator's bits."""
    import bz2
    import gzip
    import lzma
    import zipfile

    raw = np.random.default_rng(24).integers(0, 256, 20000, dtype=np.uint8).tobytes()
    f = tmp_path / f"capture.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("capture.bin", raw)
    else:
        f.write_bytes({"gzip": gzip, "bzip2": bz2, "xz": lzma}[kind].compress(raw))
    with pytest.raises(InputError, match=f"signature of an? {kind if kind != 'zip' else 'zip archive'}"):
        cb.read_bits(f, fmt="binary")
    f.write_bytes(raw)  # the capture itself is read
    assert cb.read_bits(f, fmt="binary").n_bits == 8 * len(raw)
