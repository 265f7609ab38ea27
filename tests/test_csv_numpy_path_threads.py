"""The one-pass numpy read of a CSV log parses its blocks on two threads (issue 26 item 6: the read is the
serial part of a multi-table ``certify`` on a local pool): the parts, their line numbers, the hash, the size
estimate given after the first block and the fallback to the exact path are those of the read on one thread."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rngcert.collect import csvstream
from rngcert.collect.spinlog import fastcsv, read_spin_log
from rngcert.equipment.wheel import load_wheel

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_numpy_path import _random_log, _same  # noqa: E402


def _read(p: Path, threads: int, monkeypatch, block_size: int = 4096):
    """(result of read_file, the parts handed on in order, the reserve calls, restarts) with ``threads`` parse threads."""
    monkeypatch.setattr(csvstream, "read_threads", lambda: threads)
    parts, reserved, restarts = [], [], []

    def then(part):
        parts.append(part)
        return part["rows"]

    got = fastcsv.read_file(p, str(p), load_wheel("european"), {}, True, then, lambda: restarts.append(1), reserved.append,
                            block_size=block_size)
    return got, parts, reserved, restarts


@pytest.mark.parametrize("seed,crlf", [(31, False), (32, False), (33, True)])
def test_two_parse_threads_give_the_parts_of_one(seed, crlf, tmp_path, monkeypatch):
    p = tmp_path / "log.csv"
    p.write_bytes(_random_log(seed, 3000, shuffle_cols=seed % 2 == 0, crlf=crlf))
    one, parts1, res1, _ = _read(p, 1, monkeypatch)
    base = threading.active_count()
    two, parts2, res2, _ = _read(p, 2, monkeypatch)
    assert threading.active_count() == base  # the parse threads have ended (a local pool forks after the read)
    assert one is not None and two is not None
    assert len(parts1) > 20  # many blocks: the threads overlap
    _same(parts2, parts1)
    assert [pt["lines"][0] for pt in parts2] == list(np.cumsum([2] + [pt["rows"] for pt in parts2[:-1]]))  # each block's first line
    assert two[1] == one[1]  # what then() returned, in order
    _same(two[0], one[0])  # the scan: hash, size, line count
    assert two[0].sha256 == one[0].sha256 and two[0].n_lines == one[0].n_lines == 3001
    assert res2 == res1 and len(res1) == 1  # the size estimate, once, from the first block


@pytest.mark.parametrize("where", ["a quote", "a non-ASCII byte", "a line longer than a block"])
def test_a_late_block_off_the_path_sends_the_file_to_the_exact_path_on_two_threads(where, tmp_path, monkeypatch):
    """A block far into the file that this path does not read: the read gives None and the consumer is told
    to forget what it was given, as on one thread (the exact path then reads the file)."""
    data = _random_log(34, 3000)
    lines = data.split(b"\n")
    k = len(lines) * 3 // 4
    bad = {"a quote": b'"' + lines[k] + b'"', "a non-ASCII byte": lines[k].replace(b",", b",\xc3\xa9", 1),
           "a line longer than a block": lines[k] + b"x" * 9000}[where]
    lines[k] = bad
    p = tmp_path / "log.csv"
    p.write_bytes(b"\n".join(lines))
    base = threading.active_count()
    for threads in (1, 2):
        got, parts, _, restarts = _read(p, threads, monkeypatch)
        assert got is None and restarts == [1], threads
        assert threading.active_count() == base
    monkeypatch.setattr(csvstream, "read_threads", lambda: 2)
    log = read_spin_log(p, load_wheel("european"))  # the exact path reads it (and rejects or reads that line)
    assert log.accepted + len(log.rejected) + log.void >= 2999


def test_the_log_read_on_two_threads_is_the_log_read_on_one(tmp_path, monkeypatch):
    p = tmp_path / "log.csv"
    p.write_bytes(_random_log(35, 5000))
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 8192)
    logs = []
    for threads in (1, 2):
        monkeypatch.setattr(csvstream, "read_threads", lambda threads=threads: threads)
        logs.append(read_spin_log(p, load_wheel("european")))
    a, b = logs
    assert a.sources[0].to_dict() == b.sources[0].to_dict()
    assert list(a.tables) == list(b.tables) and (a.accepted, a.void) == (b.accepted, b.void)
    for name in a.tables:
        x, y = a.tables[name], b.tables[name]
        assert np.array_equal(x.outcomes, y.outcomes) and x.n == y.n and x.void == y.void


def test_the_month_table_is_filled_once_when_both_parse_threads_ask_at_once(monkeypatch):
    """The two parse threads filled the lazy month table at once (both found it empty): it held four
    entries and every later CSV read of the process stopped with 'too many values to unpack (expected 2)',
    an internal error on a valid log (79 tests of one xdist worker failed so). A slow table (the threads
    are both inside its first fill) must still be filled once."""
    import time

    real = fastcsv._month_tables

    def slow():
        time.sleep(0.2)  # (widens the window in which both threads find the table empty)
        return real()

    monkeypatch.setattr(fastcsv, "_month_tables", slow)
    monkeypatch.setattr(fastcsv, "_MONTHS", [])
    cell = b"2026-01-01T00:00:00Z"
    data = np.frombuffer(cell * 4 + b" " * 32, dtype=np.uint8)
    s, w = np.arange(4) * len(cell), np.full(4, len(cell))
    out, errors = [], []

    def parse():
        try:
            out.append(fastcsv._timestamps(data, s, w))
        except Exception as exc:  # noqa: BLE001 (the failure under test)
            errors.append(exc)

    threads = [threading.Thread(target=parse) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(fastcsv._MONTHS) == 2 and len(out) == 2
    assert np.array_equal(out[0], out[1])
