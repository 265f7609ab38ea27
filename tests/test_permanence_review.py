"""Adversarial review of the permanence-list readers (helper h-perm): every list the streamed reader
(:mod:`rngcert.collect.permstream`) accepts is read exactly as the exact path reads it (spins in order,
rejects with line, column and reason, void, notes, line starts, SHA-256, counts), whatever the block size,
and lists it cannot prove equal fall back to the exact path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import compact_read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rngcert.collect.permstream as permstream
import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel

WHEELS = {w: load_wheel(w) for w in ("european", "american")}


def _snap(log) -> str:
    """Every field a reading gives: sources (rows, accepted, void, rejected, blank lines, SHA-256), rejects
    (file, line, column, reason, text), notes, and each table's void, notes, findings, spins and line starts."""
    out = [log.level, [s.to_dict() for s in log.sources], [r.to_dict() for r in log.rejected], list(log.notes)]
    for name, t in log.tables.items():
        out.append([name, t.void, list(t.notes), t.findings, t.outcomes.astype(int).tolist(),
                    None if t.line_start is None else np.asarray(t.line_start, dtype=bool).tolist()])
    return json.dumps(out, default=str)


def _read(path, wheel, monkeypatch, chunk: int | None):
    """(snapshot or the error's text, whether the streamed path returned it); ``chunk`` None: the exact path."""
    with compact_read(monkeypatch, exact=chunk is None) as (m, taken):
        if chunk is not None:
            m.setattr(permstream, "CHUNK", chunk)
        try:
            return _snap(spinlog.read_spin_log(path, wheel, fmt="permanence")), bool(taken)
        except Exception as exc:  # (the same error, or none, on both paths)
            return f"{type(exc).__name__}: {exc}", bool(taken)


def _assert_same(tmp_path, monkeypatch, data: bytes, wheel="european", chunks=(1, 2, 3, 7, 64, 1 << 18)) -> tuple[str, list[bool]]:
    p = tmp_path / "perm.txt"
    p.write_bytes(data)
    exact, _ = _read(p, WHEELS[wheel], monkeypatch, None)
    streamed = []
    for c in chunks:
        got, took = _read(p, WHEELS[wheel], monkeypatch, c)
        assert got == exact, (c, data[:300])
        streamed.append(took)
    return exact, streamed


_DECIMAL = b"1,0 2,0 3,0 4,0 5,0 6,0 7,0 8,0 9,0 10,0 11,0 12,0 13,0"


@pytest.mark.parametrize("data", [
    _DECIMAL,  # one line without a line end: the head before its last line end is empty
    _DECIMAL + b"\n",
    b"1 2 3\n" * 12_000 + _DECIMAL + b"\n",  # the decimal commas after the first 64 KB
    b"1,0 2,0 3,0\n" + b"4 5 6\n" * 12_000 + b"7,0 8,0 9,0 10,0 11,0 12,0 13,0\n",  # too few in the head, enough in the file
], ids=["one-line", "one-line-nl", "after-64k", "split"])
def test_decimal_commas_decided_on_the_whole_file(tmp_path, monkeypatch, data):
    """The exact path reads a list whose every comma (ten or more) ends a number with zeros as decimal
    commas (15,0 is 15, with a note); the streamed path decided it on the first 64 KB up to its last line
    end only, so these lists gained a spin 0 after every number and lost the note."""
    exact, _ = _assert_same(tmp_path, monkeypatch, data, chunks=(7, 4096, 1 << 18) if len(data) < 1000 else (4096, 1 << 18))
    assert "decimal comma" in exact


def test_a_list_with_ordinary_commas_stays_streamed(tmp_path, monkeypatch):
    """A comma-separated list (commas before numbers other than zeros) keeps the streamed path."""
    x = np.random.default_rng(3).integers(1, 37, 3000)
    data = "\n".join(",".join(map(str, row)) for row in x.reshape(-1, 10).tolist()).encode() + b"\n"
    _, streamed = _assert_same(tmp_path, monkeypatch, data, chunks=(7, 1 << 18))
    assert all(streamed)


_TOKENS = ["0", "7", "17", "36", "07", "007", "00", "37", "0007", "99", "1234567", "zero", "Zero", "rot", "red", "void",
           "Tisch", "19.04.2026", "1.", "2)", "15,0", "7.0", "-3", "+4", "#", "x", "é", "Ø", "\u00a0", "\u0663", "=", "1/2"]
_SEPS = [",", ";", "|", " ", "\t", ", ", " | ", ",,", "\r", "\u00a0", "\x0b", "\x0c", ""]
_ENDS = ["\n", "\r\n", "\r", "\n\n", "\n \t\n"]


@st.composite
def _lists(draw):
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        toks = draw(st.lists(st.one_of(st.integers(0, 37).map(str), st.sampled_from(_TOKENS)), min_size=0, max_size=17))
        seps = draw(st.lists(st.sampled_from(_SEPS), min_size=len(toks), max_size=len(toks)))
        lines.append("".join(t + s for t, s in zip(toks, seps)))
        lines.append(draw(st.sampled_from(_ENDS)))
    if not draw(st.booleans()):
        lines.pop()  # no line end after the last line
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]))
    return "".join(lines).encode(enc, errors="replace")


@pytest.mark.parametrize("wheel", ["european", "american"])
def test_random_lists_streamed_equals_exact(tmp_path, monkeypatch, wheel):
    @settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_lists())
    def check(data):
        _assert_same(tmp_path, monkeypatch, data, wheel, chunks=(1, 3, 8, 1 << 18))

    check()


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf1 2 3\r\n4 5 6\r\n",
    b"1 2\n" + b" \t" * 40,  # (a last line of white space, no line end, cut in blocks: its blank line was not counted)
    b"\xef\xbb\xbf0,\n",  # (blocks of 1 or 2 bytes cut the mark: it was read as text, '\ufeff0' rejected)
    b"1 2 3\r4 5 6\r7 8 9\r",
    b"01 007 00 0 36 37\n",
    b",,;;|| \n,\n\n",
    b"1. 17 32 5\n2. 4 5 6\n3. 7 8 9\n",
    b"Permanence Tisch 3 19.04.2026\n1 2 3\n4 5 6\n",
    b"1 2 3 # comment here\n4 zero 6\n17 red\n",
    b"1 2 3 = 6\n",
    "1\u00a02 3\n4 5\n".encode(),
    "1 2 3\n4 \u00e9 6\n".encode("latin-1"),
    "1 2 3\n4 5 6\n".encode("utf-16"),
], ids=["bom-crlf", "blank-tail", "bom-cut", "cr-only", "leading-zeros", "only-separators", "numbered", "title", "words", "total", "nbsp", "latin-1", "utf-16"])
@pytest.mark.parametrize("wheel", ["european", "american"])
def test_crafted_lists_streamed_equals_exact(tmp_path, monkeypatch, data, wheel):
    _assert_same(tmp_path, monkeypatch, data, wheel)


@pytest.mark.parametrize("dot", [".", ""])
def test_numbered_lines_past_the_largest_pocket_make_no_verdict(tmp_path, dot):
    """Lines numbered 1 to 1000 before 30 results each: the numbers 37 … 1000 are rejected (3% of the
    tokens, under --max-rejected) and 1 … 36 read as spins, so the accepted first numbers do not count up
    and line_counter did not see the numbering: the list was certified (PASS) with 36 line numbers among
    its spins. The rejected first fields counting up are the same numbering: no verdict."""
    from rngcert.pipeline import checks

    rng = np.random.default_rng(1)
    p = tmp_path / "numbered.txt"
    p.write_text("".join(f"{i}{dot} " + " ".join(map(str, rng.integers(0, 37, 30))) + "\n" for i in range(1, 1001)))
    log = spinlog.read_spin_log(p, WHEELS["european"])
    (reason,) = checks.rejected_counter_reasons(log)
    assert "numbered" in reason and f"(37{dot}, 38{dot}, 39{dot} …" in reason and "numbers below 37 (the lines before line 37) were read" in reason
    r = tmp_path / "bracket.txt"  # numbered 1) 2) …: every number rejected, none read as a result (and the reason says no such thing)
    r.write_text("".join(f"{i}) " + " ".join(map(str, rng.integers(0, 37, 30))) + "\n" for i in range(1, 401)))
    (reason,) = checks.rejected_counter_reasons(spinlog.read_spin_log(r, WHEELS["european"]))
    assert "(1), 2), 3) …, from" in reason and "were read as results" not in reason
    # a list with rejected first fields that do not count up (a stray 37 now and then) gives no reason
    q = tmp_path / "stray.txt"
    q.write_text("".join(("37 " if i % 50 == 0 else "") + " ".join(map(str, rng.integers(0, 37, 30))) + "\n" for i in range(1, 1001)))
    assert checks.rejected_counter_reasons(spinlog.read_spin_log(q, WHEELS["european"])) == []


def test_certify_numbered_list_is_inconclusive(tmp_path):
    """The verdict of certify on such a list is INCONCLUSIVE (exit 11) and says why."""
    import subprocess
    import sys

    rng = np.random.default_rng(2)
    p = tmp_path / "numbered.txt"
    p.write_text("".join(f"{i}. " + " ".join(map(str, rng.integers(0, 37, 30))) + "\n" for i in range(1, 401)))
    out = subprocess.run([sys.executable, "-m", "rngcert", "certify", str(p), "--seed", "1", "--resamples", "99", "--no-plots",
                          "--workers", "1", "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert out.returncode == 11, out.stdout[-2000:] + out.stderr[-2000:]
    assert "numbered" in out.stdout


@pytest.mark.parametrize("chunk", [7, 1 << 18])
def test_cr_only_line_ends_are_line_ends(tmp_path, monkeypatch, chunk):
    """A list with classic Mac line ends (CR alone, no LF anywhere) was read as one line: its title gave the
    spin 1 and three rejected words (case c20's kind), and its line starts were lost. Its lines are read as
    lines, on both paths, as the same list with LF line ends."""
    text = "Spielbank Tisch 1 19.04.2026\n1 2 3\n4 5 6\n\n7 8 9\n"
    lf = tmp_path / "lf.txt"
    lf.write_bytes(text.encode())
    cr = tmp_path / "cr.txt"
    cr.write_bytes(text.replace("\n", "\r").encode())
    want, _ = _read(lf, WHEELS["european"], monkeypatch, None)
    for path_chunk in (None, chunk):
        got, _ = _read(cr, WHEELS["european"], monkeypatch, path_chunk)
        assert got.replace("cr.txt", "x").replace('"cr"', '"x"') == want.replace("lf.txt", "x").replace('"lf"', '"x"').replace(
            json.loads(want)[1][0]["sha256"], json.loads(got)[1][0]["sha256"])
    assert '"Spielbank Tisch 1 19.04.2026"' in want


def test_decimal_commas_with_one_comma_separated_line(tmp_path, monkeypatch):
    """A list of 20,000 numbers written 15,0 and one line 1,2,3 was not read with decimal commas (not every
    comma was one): each 15,0 gave the spins 15 and 0, and certify FAILed the wheel (pocket 0 +1800%). Most
    commas ending a number with zeros are decimal commas; the other commas still separate spins."""
    x = np.random.default_rng(4).integers(0, 37, (2000, 10))
    lines = [" ".join(f"{v},0" for v in r) for r in x.tolist()]
    lines.insert(1000, "1,2,3")
    exact, streamed = _assert_same(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode(), chunks=(4096, 1 << 18))
    plain = tmp_path / "plain.txt"
    plain.write_text(" ".join(map(str, np.concatenate([x[:1000].ravel(), [1, 2, 3], x[1000:].ravel()]).tolist())))
    want, _ = _read(plain, WHEELS["european"], monkeypatch, None)
    assert json.loads(exact)[4][4] == json.loads(want)[4][4] and "decimal comma" in exact and all(streamed) is False
