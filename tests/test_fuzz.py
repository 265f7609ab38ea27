"""Fuzz the readers through the CLI (issue 10): malformed spin logs and shoe logs must never be an
internal error (exit 1), and when a verdict is given every data row of the file is accounted for:
accepted + void + rejected = the data rows (non-blank lines after the header).

Bounded: a few dozen examples per test, no deadline, so the file runs in well under a minute.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
from _support import run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

VERDICT_CODES = {0, 10, 11, 12}
# no shrinking phase: a failure is reported as found (shrinking a CLI run can take minutes)
FUZZ = settings(
    max_examples=40, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def data_rows(raw: bytes) -> int:
    """Non-blank lines after the header (a line of nothing, or of just the CR of a CRLF, is blank)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = raw.split(b"\n")
    nonblank = [i for i, line in enumerate(lines) if line not in (b"", b"\r")]
    return max(0, len(nonblank) - 1)


def invoke(args: list[str]):
    res = run_cli(*args, catch_exceptions=True)
    assert res.exit_code != 1, f"internal error for {args}: {res.output}\n{res.exception!r}"
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


# ------------------------------------------------------------------------------ spin logs
POCKETS = [str(i) for i in range(37)]
NASTY_CELLS = [
    "=1+1", "+cmd", "-5", "@SUM(A1)", "\t=x", "'=x", "=HYPERLINK(\"http://x\")", "", " ", "00", "05", "7.0", "37", "-1",
    "abc", "1e29", "2.5", "9" * 30, '"', '"5', '5"', '""', "5\r6", "\x00", "é", "\u240d", "void", "No spin",
]
COLUMNS = ["spin_id", "result", "timestamp", "table", "dealer", "void", "revolutions", "direction", "release_pocket"]


@st.composite
def cell(draw, col: str) -> str:
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(NASTY_CELLS) | st.text(max_size=8))
    if col in ("result", "release_pocket"):
        return draw(st.sampled_from(POCKETS))
    if col == "spin_id":
        return str(draw(st.integers(0, 60)))
    if col == "timestamp":
        return f"2026-01-01T00:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}Z"
    if col == "table":
        return draw(st.sampled_from(["T1", "T2", ""]))
    if col == "dealer":
        return draw(st.sampled_from(["D1", "D2"]))
    if col == "void":
        return draw(st.sampled_from(["false", "true", "maybe"]))
    if col == "revolutions":
        return draw(st.sampled_from(["5", "2", "x"]))
    return draw(st.sampled_from(["cw", "ccw", "up"]))


@st.composite
def spin_log(draw) -> bytes:
    """A spin log that is mostly right, with the faults users' files have."""
    if draw(st.integers(0, 9)) == 0:  # pure noise, sometimes behind a header
        noise = draw(st.binary(max_size=600))
        return (b"result\n" + noise) if draw(st.booleans()) else noise
    cols = ["result"] + draw(st.lists(st.sampled_from(COLUMNS[:1] + COLUMNS[2:]), unique=True, max_size=4))
    cols = draw(st.permutations(cols))
    header = [draw(st.sampled_from([c, f" {c} ", c.upper(), f'"{c}"'])) for c in cols]
    delim = draw(st.sampled_from([",", ";", "\t"]))
    lines = [delim.join(header)]
    for _ in range(draw(st.integers(0, 60))):
        kind = draw(st.integers(0, 12))
        fields = [draw(cell(c)) for c in cols]
        if kind == 0:
            fields = fields + ["extra"]  # too many fields
        elif kind == 1 and len(fields) > 1:
            fields = fields[:-1]  # too few
        elif kind == 2:
            lines.append("")  # blank line
        line = delim.join(fields)
        if kind == 3:
            line = line[: draw(st.integers(0, max(0, len(line))))]  # truncated row
        lines.append(line)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines) + draw(st.sampled_from(["", eol]))
    enc = draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "latin-1", "utf-16", "utf-16-le"]))
    raw = text.encode(enc, errors="replace")
    if draw(st.integers(0, 6)) == 0:  # a stray byte somewhere
        pos = draw(st.integers(0, len(raw)))
        raw = raw[:pos] + draw(st.sampled_from([b"\r", b"\x00", b"\xff", b'"', b"\n"])) + raw[pos:]
    return raw


@FUZZ
@given(raw=spin_log())
def test_fuzz_spin_logs_never_internal_error_and_rows_add_up(raw):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "fuzz.csv"
        p.write_bytes(raw)
        res = invoke(["certify", str(p), "--format", "csv", "--no-plots", "--resamples", "99", "--seed", "1", "--out", str(Path(d) / "r"), "--json"])
        if res.exit_code in VERDICT_CODES:
            rep = json.loads(res.stdout)
            (src,) = rep["inputs"]
            assert src["accepted"] + src["void"] + src["rejected"] == src["rows"] == data_rows(raw), (src, raw[:300])
            assert rep["rows"]["rejected"] == src["rejected"]
            (rej_file,) = list((Path(d) / "r").glob("*/rejects.csv"))
            body = rej_file.read_text(encoding="utf-8")
            for line in body.splitlines()[1:]:
                assert not line.startswith(("=", "+", "-", "@"))
        else:
            assert res.exit_code in (3, 4), res.output
            assert "rngcert: error:" in res.output


# ------------------------------------------------------------------------------ shoe logs
CARDS = [r + s for r in "A23456789TJQK" for s in "SHDC"]


@st.composite
def shoe_log(draw) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=600))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lines = ["shoe_id,position,card"]
    for shoe in range(draw(st.integers(1, 4))):
        deck = rng.permutation(CARDS)
        n = draw(st.sampled_from([52, 40, 30]))
        for pos in range(1, n + 1):
            row = [str(shoe + 1), str(pos), str(deck[pos - 1])]
            kind = draw(st.integers(0, 300))
            if kind == 0:
                row[2] = draw(st.sampled_from(["=1+1", "ZZ", "", "QH#9", "-5", "10S", "1e29"]))
            elif kind == 1:
                row[1] = draw(st.sampled_from(["0", "-1", "x", "9" * 30, "2.5"]))
            elif kind == 2:
                row.append("extra")
            elif kind == 3:
                row = row[:2]
            elif kind == 4:
                row[0] = draw(st.sampled_from(["", "=A1", "@x"]))
            lines.append(",".join(row))
            if kind == 5:
                lines.append("")
    text = "\n".join(lines) + "\n"
    raw = text.encode(draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"])))
    if draw(st.integers(0, 5)) == 0:
        cut = draw(st.integers(0, len(raw)))
        raw = raw[:cut]  # truncated file
    return raw


@FUZZ
@given(raw=shoe_log(), decks=st.sampled_from([1, 2]))
def test_fuzz_shoe_logs_never_internal_error_and_rows_add_up(raw, decks):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "shoes.csv"
        p.write_bytes(raw)
        res = invoke(["shuffle", "certify", str(p), "--decks", str(decks), "--no-plots", "--resamples", "99", "--seed", "1", "--out", str(Path(d) / "r"), "--json"])
        if res.exit_code in VERDICT_CODES:
            rep = json.loads(res.stdout)
            (src,) = rep["inputs"]
            # rows the reader could not split are in rejected_rows only; every other row is accepted or rejected
            assert src["accepted_rows"] + src["rejected_rows"] == data_rows(raw), (src, raw[:300])
        else:
            assert res.exit_code in (3, 4), res.output
