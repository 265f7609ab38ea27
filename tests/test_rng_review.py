"""Electronic-RNG review (bits and scaling): inputs that were misread into a verdict, and sentences
of the reports that were not true. Each test names the input that showed the defect."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.collect import bits as cb
from rngcert.equipment.scaling import outcome_probabilities
from rngcert.errors import InputError
from rngcert.pipeline.certify_bits import _unused_tail


def _random_bytes(k: int, seed: int = 11) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, k, dtype=np.uint8).tobytes()


# ------------------------------------------------------------------ text given as --format binary
def test_hex_dump_given_as_binary_is_refused_not_failed(cli, tmp_path):
    """A hex dump of good random bytes (`xxd -p`, or `xxd`-like with spaces) given as --format binary
    FAILed (exit 12, 'biased towards zeros'): text, not the generator's bytes."""
    raw = _random_bytes(2500)
    f = tmp_path / "dump.hex"
    f.write_text(raw.hex())
    res = cli("bits", f, "--format", "binary", "--length", 1000, "--no-plots", "--workers", 1, "--out", tmp_path / "r")
    assert res.exit_code == 3, res.output
    assert "hex dump" in res.output and "xxd -r -p" in res.output
    assert not (tmp_path / "r").exists()
    g = tmp_path / "dump2.hex"
    g.write_text("\n".join(raw[i:i + 16].hex(" ") for i in range(0, len(raw), 16)) + "\n")
    with pytest.raises(InputError, match="hex dump"):
        cb.read_bits(g, fmt="binary")


def test_decimal_words_as_text_are_named_text_not_outcomes(tmp_path):
    """32-bit words written one per line in decimal were refused as 'outcomes stored one per byte
    (pockets, cards, dice: 11 distinct values from 10 to 57)': they are text."""
    f = tmp_path / "words.txt"
    f.write_text("\n".join(map(str, np.random.default_rng(2).integers(0, 2**32, 500))) + "\n")
    with pytest.raises(InputError, match="decimal numbers written as text") as e:
        cb.read_bits(f, fmt="binary")
    assert "outcomes stored one per byte" not in str(e.value)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_ascii_bits_with_a_byte_order_mark(tmp_path, encoding):
    """'0'/'1' saved by an editor with a byte-order mark: as binary, UTF-16 was read as bytes (FAIL on
    every test); as ASCII the error named byte b'\\xef' or b'\\xff' without saying it is a BOM."""
    s = "".join(map(str, np.random.default_rng(3).integers(0, 2, 4000)))
    f = tmp_path / "bits.txt"
    f.write_bytes(s.encode(encoding))
    with pytest.raises(InputError, match="ASCII bit file.*--format ascii"):
        cb.read_bits(f, fmt="binary")
    with pytest.raises(InputError, match="line 1, column 1, byte offset 0: the file starts with a UTF-(8|16) byte-order mark"):
        cb.read_bits(f, fmt="ascii")


def test_ascii_error_names_line_and_column(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(b"0101\n01x1")
    with pytest.raises(InputError, match=r"line 2, column 3, byte offset 7: character b'x'"):
        cb.read_bits(f, fmt="ascii")


def test_all_zero_dump_is_not_called_bits_one_per_byte(tmp_path):
    f = tmp_path / "zeros.bin"
    f.write_bytes(bytes(5000))
    with pytest.raises(InputError, match="erased or unwritten dump, or a source stuck at 0") as e:
        cb.read_bits(f, fmt="binary")
    assert "one per byte" not in str(e.value)


def test_random_bytes_and_ascii_text_of_bits_still_read(tmp_path):
    f = tmp_path / "ok.bin"
    f.write_bytes(_random_bytes(4096, seed=5))
    assert cb.read_bits(f, fmt="binary").n_bits == 4096 * 8
    g = tmp_path / "ok.txt"
    g.write_bytes(b"0110\r\n1001 \r\n")
    assert cb.read_bits(g, fmt="ascii").bits.tolist() == [0, 1, 1, 0, 1, 0, 0, 1]


# ------------------------------------------------------------------ the same output twice
def test_dump_written_twice_is_refused(cli, tmp_path):
    """One good stream of 20,000 bits written twice PASSed as 2 streams (each stream tested alone);
    at 10**6 bits the same (`dup2.bin`: PASS, exit 0)."""
    x = _random_bytes(2500)
    f = tmp_path / "twice.bin"
    f.write_bytes(x + x)
    with pytest.raises(InputError, match="first 128 bits occur again at bit 20,000: the dump holds the same output twice"):
        cb.read_bit_streams(f, 2, 20000, fmt="binary")
    with pytest.raises(InputError, match="occur again at bit 20,000"):  # the copy not on a stream boundary
        cb.read_bit_streams(f, 3, 13000, fmt="binary")
    res = cli("bits", f, "--format", "binary", "--length", 20000, "--no-plots", "--workers", 1, "--out", tmp_path / "r")
    assert res.exit_code == 3 and "same output twice" in res.output, res.output
    assert cb.read_bit_streams(f, 1, 20000, fmt="binary")[0].shape == (1, 20000)  # one copy alone is read


def test_identical_streams_after_the_start_are_refused(tmp_path):
    a, x = _random_bytes(125, seed=8), _random_bytes(1250, seed=9)
    f = tmp_path / "axx.bin"
    f.write_bytes(a + x + x)
    with pytest.raises(InputError, match=r"streams 2 and 12 of 1,000 bits \(bits 1,000 and 11,000 on\) are identical"):
        cb.read_bit_streams(f, 21, 1000, fmt="binary")


def test_short_period_is_left_to_the_battery(tmp_path):
    """A 16-byte block repeated (a cycling source) is not an input error: the battery FAILs it."""
    f = tmp_path / "cycle.bin"
    f.write_bytes(_random_bytes(16) * 300)
    s, _ = cb.read_bit_streams(f, 38, 1000, fmt="binary")
    assert s.shape == (38, 1000)


# ------------------------------------------------------------------ report sentences
def test_unused_bits_note_names_the_streams_not_asked_for():
    """--streams 60 of a 120-stream file: the note said '120,000,000 in the file is not a multiple of
    --length 1,000,000', which is false."""
    (note,) = _unused_tail({"bits_in_file": 120_000_000}, 60, 1_000_000)
    assert "not a multiple" not in note and "--streams 120" in note and note.startswith("60,000,000 bit(s)")
    (note,) = _unused_tail({"bits_in_file": 20_024}, 2, 10_000)
    assert "24 bit(s) after the last whole stream" in note and "--streams" not in note


# ------------------------------------------------------------------ scaling
def test_scaling_limit_message_is_true():
    """32-bit words onto 2**32 outcomes: 'outcomes=4294967296 exceeds the 4294967296 values of a
    32-bit word' was false (it exceeds rngcert's 2**24 limit)."""
    with pytest.raises(InputError, match="limit of 16,777,216") as e:
        outcome_probabilities(32, 2**32, "modulo")
    assert "values of a" not in str(e.value)


def test_scaling_relative_bias_never_printed_as_zero(cli):
    """64-bit multiply-shift onto 37 pockets printed 'relative 0.000%' for a bias of 1.4e-18."""
    res = cli("scaling", "--bits", 64, "--outcomes", 37, "--method", "multiply-shift")
    assert res.exit_code == 0 and "relative 0.000%" not in res.output and "relative 1.36e-16%" in res.output
    assert "relative 0 (exactly uniform)" in cli("scaling", "--bits", 8, "--outcomes", 32, "--method", "modulo").output
    assert "relative 13.281%" in cli("scaling", "--bits", 8, "--outcomes", 37, "--method", "modulo").output


def test_pass_says_when_the_uniformity_rule_never_ran():
    """10 streams of 10**6 bits of pcg64: 'SP 800-22's second-level rules flag no test name', while the
    uniformity rule (at least 55 sequences) had run on no name at all; with 60 streams the random
    excursions (applicable on 41) were judged by proportion only, unsaid."""
    from rngcert.battery.plain import bits_findings

    def section(ms):
        rows = [{"name": f"nist_x{i}", "m": m, "passes": m, "proportion_ok": True, "uniformity_ok": None if m < 55 else True,
                 "uniformity_pvalue": None if m < 55 else 0.5} for i, m in enumerate(ms)]
        return {"battery": {"verdict": "PASS", "reasons": [], "tests": []}, "two_level": {"rows": rows}}

    keys, _ = bits_findings(section([10, 10, 6]))
    text = " ".join(keys)
    assert "second-level rules flag no test name" not in text and "proportion rule flags no test name" in text
    assert "was not checked for any test name" in text and "here 6 to 10" in text
    keys, _ = bits_findings(section([60, 60, 41]))
    text = " ".join(keys)
    assert "second-level rules flag no test name" in text and "not checked for 1 of 3 test names" in text and "here 41" in text
    assert "not checked" not in " ".join(bits_findings(section([60, 60]))[0])


def test_a_pipe_is_read_once(tmp_path):
    """`cat dump.bin | rngcert bits /dev/stdin --format binary --length 1000` said '/dev/stdin: the
    file is empty' (exit 3): without --streams the file was read twice, and a pipe holds its bytes once."""
    import os
    import subprocess
    import sys

    f = tmp_path / "dump.bin"
    f.write_bytes(_random_bytes(2500))
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    with open(f, "rb") as fh:
        pipe = subprocess.Popen(["cat"], stdin=fh, stdout=subprocess.PIPE)
        res = subprocess.run([sys.executable, "-m", "rngcert", "bits", "/dev/stdin", "--format", "binary", "--length", "1000",
                              "--no-plots", "--workers", "1", "--out", str(tmp_path / "r")],
                             stdin=pipe.stdout, capture_output=True, text=True, env=env, timeout=120)
        pipe.wait()
    assert res.returncode == 11, res.stdout + res.stderr  # INCONCLUSIVE: n = 1000 is too short for some tests
    assert "20,000 bits in the file; 20 stream(s) of 1,000 bits used" in res.stdout


def test_a_recurring_run_of_zeros_is_not_called_a_copy(tmp_path):
    """A dump that starts with 16 zero bytes and has a longer zero run later is a stuck episode, for the
    battery to judge, not 'the same output twice'."""
    f = tmp_path / "stuck.bin"
    f.write_bytes(bytes(16) + _random_bytes(2000, seed=12) + bytes(32) + _random_bytes(452, seed=13))
    s, _ = cb.read_bit_streams(f, 20, 1000, fmt="binary")
    assert s.shape == (20, 1000)


def test_base64_and_other_text_given_as_binary_are_refused(tmp_path):
    import base64

    f = tmp_path / "dump.b64"
    f.write_bytes(base64.encodebytes(_random_bytes(3000)))
    with pytest.raises(InputError, match="base64 text: decode it"):
        cb.read_bits(f, fmt="binary")
    f.write_text("# generator: device 7, 2026-12-04\n" + "\n".join(f"{x:08x}" for x in range(200)))
    with pytest.raises(InputError, match="printable text, not raw bytes"):
        cb.read_bits(f, fmt="binary")


def test_scaling_at_rngcert_limit_shares_two_values():
    """2**24 outcomes (the documented limit) built 2**24 distinct ints and Fractions through a Python
    loop over outcomes (1,000,000 outcomes: 4.2 s, 415 MB; the limit about 16 times that); the counts
    take two values, so every outcome shares one of two objects."""
    r = outcome_probabilities(40, 3 * 2**20, "multiply-shift")
    assert len({id(c) for c in r.counts}) <= 2 and len({id(p) for p in r.probabilities}) <= 2
    assert sum(r.counts) == 2**40 and r.counts[:3] == (349526, 349525, 349525)


def test_second_level_clause_says_uniformity_was_not_checked(cli, tmp_path):
    """10 streams: the clause 'SP 800-22 second-level rules (proportion, uniformity)' was 'met' with no word
    that the uniformity rule had run on no name (it needs 55 sequences)."""
    import json

    res = cli("bits", "--source", "pcg64", "--streams", 3, "--length", 1_000_000, "--seed", 3, "--workers", 1, "--no-plots",
              "--json", "--out", tmp_path / "r")
    assert res.exit_code in (0, 10), res.output
    rep = json.loads(res.stdout)
    second = next(c for c in rep["standard"]["tables"][0]["clauses"] if c["id"] == "sp800-22-second-level")
    assert second["result"] == "met" and "uniformity of p-values checked for 0 of 188 test names" in second["detail"], second
    assert rep["verdict"] == "PASS"
    assert any("was not checked for any test name" in k for k in rep["tables"][0]["key_findings"])


def test_a_capture_joined_twice_is_refused_wherever_it_lies(tmp_path):
    """Four captures of 2,000 bytes joined as c0 c1 c1 c2: the copy starts neither at the file's start
    nor on a stream (n = 1,024), and SP 800-22 would test both copies as fresh output."""
    c = [_random_bytes(2000, seed=20 + i) for i in range(3)]
    f = tmp_path / "joined.bin"
    f.write_bytes(c[0] + c[1] + c[1] + c[2])
    with pytest.raises(InputError, match="bits 16,768 to 17,791 occur again at bit 32,768: the dump holds the same output twice"):
        cb.read_bit_streams(f, 62, 1024, fmt="binary")
    f.write_bytes(c[0] + c[1] + c[2])  # the same captures once each
    assert cb.read_bit_streams(f, 48, 1000, fmt="binary")[0].shape == (48, 1000)
    s = "".join(map(str, np.random.default_rng(21).integers(0, 2, 40000)))
    g = tmp_path / "joined.txt"
    g.write_text(s[:7] + s[100:20000] + s[5003:30000])  # ASCII: a copy at any bit offset
    with pytest.raises(InputError, match="occur again at bit"):
        cb.read_bit_streams(g, 40, 1000, fmt="ascii")
