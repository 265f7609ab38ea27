"""Logs with many rejected rows (an export of another wheel, a wrong ``--column``): the rejected rows are grouped
before their string work and written in bulk; every result must be the one of the row-by-row code it replaced.

The oracles below are the row-by-row implementations as they were (rngcert 0.2.0 before the change): the
grouped code must give the same values, in the same order, and rejects.csv the same bytes."""

from __future__ import annotations

import csv
import io
import pickle
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rngcert.collect import csvsafe
from rngcert.collect.labels import LABEL_REJECT, RejectedValue, _norm, plausible_label, rejected_values
from rngcert.collect.spinlog.core import RejectedRow
from rngcert.equipment.wheel import load_wheel


def _old_writer_bytes(rows) -> str:
    buf = io.StringIO(newline="")
    w = csvsafe.writer(buf)
    w.writerow(["file", "line", "column", "reason", "text"])
    for r in rows:
        w.writerow([r.file, r.line, r.column, r.reason, r.text])
    return buf.getvalue()


def _new_writer_bytes(rows) -> str:
    buf = io.StringIO(newline="")
    assert csvsafe.write_rejected(buf, rows) == len(rows)
    return buf.getvalue()


class _Row:  # a duck-typed row: the writer must take any cell type a reader may leave (None, numbers, bools)
    def __init__(self, file, line, column, reason, text):
        self.file, self.line, self.column, self.reason, self.text = file, line, column, reason, text


_TEXT = st.text(alphabet=st.sampled_from(list("ab1 ,;\"'=+-@\t\r\n\x00é€x0")), max_size=12)
_CELL = st.one_of(_TEXT, st.none(), st.integers(-3, 3), st.booleans(), st.floats(allow_nan=False, width=32))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.csv", "=b.csv", "c,d.csv"]), st.one_of(st.integers(-1, 10**6), st.booleans(), st.none(), _TEXT),
                          st.sampled_from(["result (column 2)", "*", "-x", "field 3"]), _CELL, _CELL), max_size=40))
def test_write_rejected_gives_the_bytes_of_the_cell_by_cell_writer(rows):
    rows = [_Row(*r) for r in rows] + [_Row(*r) for r in rows[:5]]  # repeated cells: the remembered ones
    assert _new_writer_bytes(rows) == _old_writer_bytes(rows)


def test_write_rejected_cells_true_and_one_are_written_apart():
    """True == 1 as a dictionary key: a remembered cell must not make one into the other."""
    rows = [_Row("f", 1, "c", "r", 1), _Row("f", 2, "c", "r", True), _Row("f", True, "c", "r", 1.0), _Row("f", 1, "c", "r", "1"),
            _Row("f", 1, "c", "r", ["=a"])]  # (a cell that cannot be a dictionary key: written as the cell-by-cell writer does)
    got = list(csv.reader(io.StringIO(_new_writer_bytes(rows))))
    assert [g[4] for g in got[1:]] == ["1", "true", "1.0", "1", "['=a']"]
    assert got[3][1] == "true"
    assert _new_writer_bytes(rows) == _old_writer_bytes(rows)


def test_write_rejected_many_distinct_texts_past_the_memory_bound(monkeypatch):
    monkeypatch.setattr(csvsafe, "_MEMO_MAX", 3)
    rows = [_Row("f", i, "c", "why", f"=v{i % 7},\"{i}\"") for i in range(50)]
    assert _new_writer_bytes(rows) == _old_writer_bytes(rows)


def _old_rejected_values(rejected, wheel, *, keep_lines=3):
    counts: Counter = Counter()
    first: dict = {}
    for r in rejected:
        if LABEL_REJECT not in r.reason:
            continue
        key = _norm(r.text)
        counts[key] += 1
        v = first.get(key)
        if v is None:
            v = first[key] = RejectedValue(r.text.strip(), 0, [], r.column)
        if len(v.lines) < keep_lines and (r.file, r.line) not in v.lines:
            v.lines.append((r.file, r.line))
    out = []
    for key, c in counts.most_common():
        v = first[key]
        v.count = c
        v.guess = plausible_label(v.value, wheel)
        out.append(v)
    return out


_REASONS = [f"'x' {LABEL_REJECT} of wheel 'european'", f"'y' {LABEL_REJECT} of wheel 'european'", "empty result",
            "conflict: spin_id 3 has two results"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.csv", "b.csv"]), st.integers(1, 30), st.sampled_from(["result (column 2)", "field 1"]),
                          st.sampled_from(_REASONS), st.sampled_from(["x1", " X1", "'x1'", "zero", "Zero ", "00", "7R", "", "q"])),
                max_size=60),
       st.integers(0, 4))
def test_rejected_values_are_those_of_the_row_by_row_grouping(rows, keep):
    wheel = load_wheel("european")
    rejected = [RejectedRow(*r) for r in rows]
    got = rejected_values(rejected, wheel, keep_lines=keep)
    want = _old_rejected_values(rejected, wheel, keep_lines=keep)
    assert [(v.value, v.count, v.lines, v.column, v.guess) for v in got] == [(v.value, v.count, v.lines, v.column, v.guess) for v in want]
    assert rejected_values(iter(rejected), wheel, keep_lines=keep) == got  # any iterable, read once


def test_rejected_row_has_slots_escapes_controls_and_pickles():
    r = RejectedRow("f.csv", 3, "result (column 2)", "why", "ok")
    assert not hasattr(r, "__dict__")
    with pytest.raises(AttributeError):
        r.text = "x"  # frozen
    bad = RejectedRow("f.csv", 4, "c\x00", "why\x01", "a\x00b")
    assert (bad.column, bad.reason, bad.text) == ("c\\x00", "why\\x01", "a\\x00b")
    kept = RejectedRow("f.csv", 5, "c", "why", None)  # a cell that is not text stays as it is
    assert kept.text is None
    assert pickle.loads(pickle.dumps(bad)) == bad
    assert RejectedRow("f.csv", 6, "c", "why").text == ""


def test_a_log_of_another_wheels_labels_reads_every_reject_once(tmp_path):
    """20,000 rows, half of them labels the wheel does not have: every reject counted, grouped, and written."""
    import numpy as np

    from rngcert.collect.spinlog import read_spin_log
    from rngcert.pipeline import checks

    rng = np.random.default_rng(5)
    n = 20_000
    vals = rng.integers(0, 37, n).astype(str).astype(object)
    bad = rng.random(n) < 0.5
    vals[bad] = [f"x{v}" for v in rng.integers(0, 40, int(bad.sum()))]
    p = tmp_path / "log.csv"
    p.write_text("spin_id,result\n" + "".join(f"{i},{v}\n" for i, v in enumerate(vals)))
    log = read_spin_log([p], load_wheel("european"))
    assert len(log.rejected) == int(bad.sum()) and log.sources[0].rejected == int(bad.sum())
    assert [r.line for r in log.rejected] == (np.flatnonzero(bad) + 2).tolist()
    assert len({id(r.column) for r in log.rejected}) == 1  # one shared column name, not a string a row
    values = rejected_values(log.rejected, log.wheel)
    assert sum(v.count for v in values) == int(bad.sum()) and len(values) == 40
    assert values[0].lines[0][1] == min(r.line for r in log.rejected if _norm(r.text) == _norm(values[0].value))
    (reason,) = checks.label_reasons(log)
    assert "looks like pocket" in reason and "and 35 more value(s)" in reason
    buf = io.StringIO(newline="")
    csvsafe.write_rejected(buf, log.rejected)
    assert buf.getvalue() == _old_writer_bytes(log.rejected)
