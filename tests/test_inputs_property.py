"""Property tests (issue 28): exports of one fair wheel written in many ways never change the verdict.

A fixed fair European log (400 spins) is written as a lab's tools write it: pockets spelled with
aliases (``zero``, ``O``), zero padding (``07``), decimals (``7.0``, ``7,0``), quotes and spaces;
comma, semicolon or tab delimiters (with Excel's ``sep=`` line), CSV, JSON Lines or a permanence
list; UTF-8, UTF-8 with BOM or Latin-1; LF or CRLF; timestamps with Z, an offset or no zone; rows
shuffled when spin ids or timestamps give the order.

* Spellings the wheel declares: the reader recovers exactly the spin sequence, so the verdict is
  the canonical log's.
* Spellings it does not declare, and junk rows: the verdict is never FAIL, and every rejected row
  names its file, line, column and reason (and its line holds the rejected text).

Few examples, small logs, derandomized (a fixed example set every run), no deadline.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log

EU = load_wheel("european")
N = 400
TRUTH = np.random.default_rng(28).integers(0, 37, N)  # pocket numbers of a fair wheel
SETTINGS = dict(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: the verdict properties certify each example (about 0.15 s each): fewer examples; the reading property above implies them
VERDICT_SETTINGS = dict(SETTINGS, max_examples=6)

_canonical: dict = {}


def canonical_verdict(tmp_path) -> str:
    if "v" not in _canonical:
        p = tmp_path / "canonical.csv"
        p.write_text("result\n" + "\n".join(map(str, TRUTH)) + "\n")
        _canonical["v"] = certify_log([p], EU, seed=1, n_resamples=99, figures=False).verdict
    return _canonical["v"]


@st.composite
def export_style(draw, declared: bool = True):
    """How an export writes the log (one choice per property of the file)."""
    fmt = draw(st.sampled_from(["csv", "csv", "jsonl", "permanence"]))
    zero_known = ["0", "zero", "Zero", "ZERO", "O", "o"]
    zero_undeclared = ["Null", "nought", "00", "zéro", "green"]
    return {
        "fmt": fmt,
        "zero": draw(st.sampled_from(zero_known if declared else zero_undeclared)),
        "pad": draw(st.sampled_from([0, 2, 3])),
        "decimal": draw(st.sampled_from(["", ".0", ",0"])),
        "quote": draw(st.sampled_from(["", '"', "'"])) if fmt == "csv" else "",
        "space": draw(st.sampled_from(["", " "])),
        "delim": draw(st.sampled_from([",", ";", "\t"])),
        "sep_line": draw(st.booleans()),
        "encoding": draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1"])),
        "newline": draw(st.sampled_from(["\n", "\r\n"])),
        "ids": draw(st.booleans()) if fmt != "permanence" else False,
        "ts": draw(st.sampled_from(["", "Z", "+01:00", " "])) if fmt != "permanence" else "",  # " ": zone-less with a space
        "shuffle": draw(st.booleans()),
        "header": draw(st.sampled_from(["result", "Result", "RESULT", " result "])),
        "junk": 0 if declared else draw(st.integers(0, 4)),
        "seed": draw(st.integers(0, 2**16)),
    }


def _cell(v: int, s: dict) -> str:
    tok = s["zero"] if v == 0 else str(v).zfill(s["pad"]) if s["pad"] else str(v)
    if v != 0 and s["decimal"]:
        tok += s["decimal"]
    return s["space"] + tok + s["space"]


def write_export(path, s: dict) -> tuple[list[int], list[str]]:
    """Write TRUTH as ``s`` says; returns (file line of each spin, the junk cells written)."""
    rng = np.random.default_rng(s["seed"])
    nl, d = s["newline"], s["delim"]
    order = rng.permutation(N) if ((s["ids"] or s["ts"]) and s["shuffle"]) else np.arange(N)

    def stamp(i):
        t = np.datetime64("2026-10-25T00:30:00") + np.timedelta64(40 * int(i), "s")
        return str(t).replace("T", " ") if s["ts"] == " " else f"{t}{s['ts']}"

    junk_cells = (["xx", "37", "-", "7 7"] if s["fmt"] != "permanence" else ["xx", "37", "-", "#"])[: s["junk"]]
    junk_at = set(rng.choice(N, len(junk_cells), replace=False).tolist()) if junk_cells else set()
    lines: list[str] = []
    if s["fmt"] == "csv":
        if s["sep_line"]:
            lines.append(f"sep={d}")
        q = s["quote"]
        lines.append(d.join((["spin_id"] if s["ids"] else []) + (["timestamp"] if s["ts"] else []) + [s["header"], "dealer"]))
        for j, i in enumerate(order):
            cell = _cell(int(TRUTH[i]), s)
            if q:
                cell = f"{q}{cell}{q}"
            if "," in cell and d == "," and q != '"':
                cell = f'"{cell}"'  # a decimal comma in a comma-separated file is quoted (as every CSV writer does)
            lines.append(d.join(([str(i + 1)] if s["ids"] else []) + ([stamp(i)] if s["ts"] else []) + [cell, "Jörg" if i % 2 else "Zoë"]))
            if j in junk_at:
                lines.append(d.join(([str(N + 1 + j)] if s["ids"] else []) + ([stamp(N + 1 + j)] if s["ts"] else []) + [junk_cells.pop(), "Jörg"]))
    elif s["fmt"] == "jsonl":
        for j, i in enumerate(order):
            obj = ({"spin_id": int(i) + 1} if s["ids"] else {}) | ({"timestamp": stamp(i)} if s["ts"] else {}) | {
                s["header"].strip(): _cell(int(TRUTH[i]), s), "dealer": "Zoë"}
            lines.append(json.dumps(obj, ensure_ascii=False))
            if j in junk_at:
                lines.append(json.dumps(({"spin_id": N + 1 + j} if s["ids"] else {}) | ({"timestamp": stamp(N + 1 + j)} if s["ts"] else {})
                                        | {s["header"].strip(): junk_cells.pop()}))
    else:  # a permanence list: 10 numbers a line (no decimals: a permanence list separates by commas)
        s = dict(s, decimal="", space="")
        cells = [_cell(int(v), s) for v in TRUTH]
        for a in range(0, N, 10):
            row = cells[a : a + 10]
            if a // 10 in {j // 10 for j in junk_at}:
                row = row[:5] + [junk_cells.pop()] + row[5:] if junk_cells else row
            lines.append((d if d != "\t" else " ").join(row))
    text = nl.join(lines) + nl
    path.write_bytes(text.encode(s["encoding"], errors="replace"))
    return lines


def _rows_named(log, path, encoding: str) -> None:
    """Every rejected row names file, line, column and reason, and its line holds the text."""
    file_lines = path.read_bytes().decode(encoding).replace("\r\n", "\n").split("\n")
    for r in log.rejected:
        assert r.file == str(path) and 1 <= r.line <= len(file_lines) and r.column and r.reason, r
        text = r.text.strip().strip("\"'").strip()
        if text.isascii():
            assert text in file_lines[r.line - 1], (r, file_lines[r.line - 1])


@settings(**SETTINGS)
@given(s=export_style(declared=True))
def test_declared_spellings_read_exactly_the_spins(tmp_path_factory, s):
    """However the log is written, with the wheel's own spellings the reader gives back exactly
    the spin sequence: the verdict is the canonical log's, never a FAIL made by the writing."""
    path = tmp_path_factory.mktemp("x") / {"csv": "log.csv", "jsonl": "log.jsonl", "permanence": "log.txt"}[s["fmt"]]
    write_export(path, s)
    log = read_spin_log(path, EU)
    assert not log.rejected, (s, log.rejected[:3])
    (t,) = log.tables.values()
    assert [EU.labels[i] for i in t.outcomes] == [str(v) for v in TRUTH], s


@settings(**VERDICT_SETTINGS)
@given(s=export_style(declared=True))
def test_declared_spellings_keep_the_verdict(tmp_path_factory, s):
    path = tmp_path_factory.mktemp("v") / {"csv": "log.csv", "jsonl": "log.jsonl", "permanence": "log.txt"}[s["fmt"]]
    write_export(path, s)
    cert = certify_log([path], EU, seed=1, n_resamples=99, figures=False)
    assert cert.verdict == canonical_verdict(tmp_path_factory.mktemp("c")) != "FAIL"


@settings(**VERDICT_SETTINGS)
@given(s=export_style(declared=False))
def test_undeclared_spellings_and_junk_never_fail_and_every_reject_is_named(tmp_path_factory, s):
    """A spelling of zero the wheel does not declare, and a few junk rows: never FAIL (pocket 0
    read as empty is a label finding, INCONCLUSIVE, naming the value); every rejected row names
    file, line, column and reason."""
    path = tmp_path_factory.mktemp("u") / {"csv": "log.csv", "jsonl": "log.jsonl", "permanence": "log.txt"}[s["fmt"]]
    write_export(path, s)
    cert = certify_log([path], EU, seed=1, n_resamples=99, figures=False)
    assert cert.verdict != "FAIL", (s, cert.outcomes[0].reasons)
    _rows_named(cert.log, path, s["encoding"])
    zeros = int(np.count_nonzero(TRUTH == 0))
    assert sum(1 for r in cert.log.rejected if "is not a pocket" in r.reason) >= zeros
    assert cert.verdict == "INCONCLUSIVE" and any("labels that do not fit the wheel" in r for r in cert.outcomes[0].reasons)
