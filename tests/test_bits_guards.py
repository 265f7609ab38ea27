"""Bits that cannot be misread (issue 28 item 2, case c17) and what a multi-stream `bits` report
carries (issue 24 item 6): per-stream p-values, and the proportion rule stated with its difference
from sts-2.1.2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rngcert.collect import bits as cb
from rngcert.errors import InputError, NoDataError
from rngcert.stats.nist import twolevel
from rngcert.stats.result import Requirement, TestResult


# ------------------------------------------------------------------ c17 and its kind
def test_c17_ascii_bits_given_as_binary_are_refused(cli, tmp_path):
    """c17: 64,000 bits written as '0'/'1' characters, given as --format binary: refused (exit 3),
    naming what the file is and --format ascii; read as ASCII it is certified."""
    b = np.random.default_rng(17).integers(0, 2, 64000)
    f = tmp_path / "bits.txt"
    f.write_text("".join(map(str, b)))
    res = cli("bits", f, "--format", "binary", "--streams", 1, "--length", 64000, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3, res.output
    assert "every byte is the character '0' or '1'" in res.output and "--format ascii" in res.output
    assert not (tmp_path / "r").exists()  # no report on data read wrong
    # the same kind with whitespace and line ends (sts-2.1.2's data.e layout)
    g = tmp_path / "lines.txt"
    g.write_text("\n".join(" ".join("".join(map(str, b[i:i + 8])) for i in range(j, j + 64, 8)) for j in range(0, 6400, 64)) + "\n")
    with pytest.raises(InputError, match="ASCII bit file"):
        cb.read_bits(g, fmt="binary")
    assert cb.read_bits(g, fmt="ascii").n_bits == 6400


def test_c17_kind_outcomes_stored_as_bytes_are_refused(cli, tmp_path):
    pockets = np.random.default_rng(3).integers(0, 37, 20000).astype(np.uint8)  # roulette outcomes, one per byte
    f = tmp_path / "spins.bin"
    f.write_bytes(pockets.tobytes())
    with pytest.raises(InputError, match=r"below 37.*outcomes stored one per byte.*37 distinct values from 0 to 36.*rngcert certify"):
        cb.read_bits(f, fmt="binary")
    res = cli("bits", f, "--format", "binary", "--length", 1000, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3 and "outcomes stored one per byte" in res.output
    one_per_byte = np.random.default_rng(4).integers(0, 2, 4000).astype(np.uint8)
    f.write_bytes(one_per_byte.tobytes())
    with pytest.raises(InputError, match="bits stored one per byte.*packbits"):
        cb.read_bits(f, fmt="binary")


def test_real_binary_dumps_still_read(tmp_path):
    f = tmp_path / "ok.bin"
    f.write_bytes(np.random.default_rng(5).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    assert cb.read_bits(f, fmt="binary").n_bits == 4096 * 8
    f.write_bytes(b"01")  # too short to judge: read as two bytes of bits
    assert cb.read_bits(f, fmt="binary").n_bits == 16
    # a uniform source looks like text or small bytes with probability at most 4**-16 at the shortest judged length
    assert (cb.SMALL_BYTE_BOUND / 256) ** cb.MIN_CHECKED_BYTES < 1e-9


def test_empty_dump_is_exit_3(cli, tmp_path):
    f = tmp_path / "e.bin"
    f.write_bytes(b"")
    with pytest.raises(NoDataError, match="empty"):
        cb.read_bits(f, fmt="binary")
    res = cli("bits", f, "--format", "binary", "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 3 and "empty" in res.output


@pytest.mark.slow
def test_multi_stream_json_per_stream_pvalues_proportion_rule_and_unused_bits(cli, tmp_path):
    """One dump of 2 streams of 10,000 bits and 24 bits more: the JSON carries every stream's p-value
    per test name, the proportion rule with sts-2.1.2's difference, and the 24 untested bits."""
    f = tmp_path / "d.bin"
    f.write_bytes(np.random.default_rng(6).integers(0, 256, 2 * 1250 + 3, dtype=np.uint8).tobytes())
    res = cli("bits", f, "--format", "binary", "--length", 10000, "--no-plots", "--workers", 1, "--json", "--out", tmp_path / "r")
    assert res.exit_code in (0, 10, 11), res.output
    t = json.loads(res.stdout)["tables"][0]
    assert any("24 bit(s) of the file after the 2 stream(s) of 10,000 bits were not tested" in n for n in t["notes"]), t["notes"]
    rows = t["two_level"]["rows"]
    for r in rows:
        assert len(r["pvalues"]) == r["m_total"] == 2
        got = [p for p in r["pvalues"] if p is not None]
        assert len(got) == r["m"] and sum(p >= 0.01 for p in got) == r["passes"]
    assert any(r["m"] == 2 for r in rows)
    assert any(n.startswith("proportion rule (SP 800-22 section 4.2.1)") and "sts-2.1.2" in n for n in t["notes"])
    assert any("two_level.rows[*].pvalues" in n for n in t["notes"])


def _results(pvalues):
    return [[TestResult("x", Requirement.UNIFORMITY, 0.0, None, float(p), 100, "exact")] for p in pvalues]


def test_eight_of_ten_fails_here_and_would_pass_in_sts():
    """The real-valued bound: 0.99 - 3*sqrt(0.99*0.01/10) = 0.8956, so 8 of 10 fails; sts-2.1.2 stores
    0.8956 * 10 in an int (8) and passes it."""
    assert twolevel.minimum_passes(10)[:2] == (9, 8)
    eight = twolevel.two_level(_results([0.001, 0.002] + [0.5] * 8), null_law="uniform").row("x")
    nine = twolevel.two_level(_results([0.001] + [0.5] * 9), null_law="uniform").row("x")
    assert eight.passes == 8 and eight.proportion_ok is False and eight.verdict == "fail"
    assert nine.passes == 9 and nine.proportion_ok is True
    assert eight.passes >= twolevel.minimum_passes(10)[1]  # what sts-2.1.2 accepts
    assert eight.pvalues == (0.001, 0.002) + (0.5,) * 8
    text = twolevel.proportion_rule_text(10)
    assert "at least 9 of 10" in text and "8 of 10 passing fails here and passes in sts-2.1.2" in text
