"""Gaps in the spin ids of a followed log (review of 2026-12-05): spins the log never carried are
said at once (table, first and last id missing, how many, file and line where the ids resume),
counted in the end summary and in ``--json``; a late id that fills a gap leaves no false gap;
a lost rotation is said once (SPINS LOST, exit 14), not again as a gap.

The LogWatch tests drive the watch poll by poll; the CLI tests run ``rngcert watch`` (no timing).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from test_watch_follow import EU, lines  # (the simulated CSV lines of the follow tests)

from rngcert.pipeline.watch import LogFollower, LogWatch
from rngcert.pipeline.watch.id_gaps import IdGaps


def step(w: LogWatch, final=False):
    """(gap events, texts of the other notes, lost texts) of one poll."""
    evs = w.step(final=final)
    assert not any(e.kind == "alarm" for e in evs)
    return ([e for e in evs if e.kind == "gap"], [e.text for e in evs if e.kind == "note"], [e.text for e in evs if e.kind == "lost"])


def _append(log, data: bytes) -> None:
    with open(log, "ab") as fh:
        fh.write(data)


def test_gap_appended_between_two_polls_is_said_at_once_with_where_the_ids_resume(tmp_path):
    log = tmp_path / "live.csv"
    log.write_bytes(lines(100, 1, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, _, lost = step(w)
    assert gaps == [] and lost == [] and w.spins["W1"] == 100
    _append(log, lines(45, 2, first=105))  # ids 106-150: 101-105 never written
    gaps, _, lost = step(w)
    assert lost == [] and len(gaps) == 1 and w.spins["W1"] == 145
    g = gaps[0]
    assert g.table == "W1" and (g.detail["first"], g.detail["last"], g.detail["missing"]) == (101, 105, 5)
    assert g.detail["file"] == str(log) and g.detail["line"] == 102  # header, 100 rows, then the row of id 106
    assert f"{log}:102" in g.text and "101 to 105" in g.text and "(5)" in g.text and "table W1" in g.text
    assert w.id_gaps["W1"].gaps == 1 and w.id_gaps["W1"].missing == 5
    assert step(w, final=True)[0] == []  # said once
    w.close()


def test_gap_inside_one_read_and_ids_out_of_order_within_a_read(tmp_path):
    log = tmp_path / "live.csv"
    rows = lines(100, 3, header=True).splitlines(keepends=True)
    body = rows[:51] + rows[61:]  # header + ids 1-50, then 61-100: 51-60 missing
    body[3], body[4] = body[4], body[3]  # ids 3 and 4 swapped: out of order, no gap
    log.write_bytes(b"".join(body))
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, _, _ = step(w, final=True)
    assert [(g.detail["first"], g.detail["last"], g.detail["missing"], g.detail["line"]) for g in gaps] == [(51, 60, 10, 52)]
    assert w.id_gaps["W1"].missing == 10 and w.spins["W1"] == 90
    w.close()


def test_a_late_row_fills_its_gap_and_leaves_no_false_gap(tmp_path):
    log = tmp_path / "live.csv"
    rows = lines(60, 4, header=True).splitlines(keepends=True)
    log.write_bytes(b"".join(rows[:51] + rows[53:]))  # ids 51 and 52 missing
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, _, _ = step(w)
    assert [(g.detail["first"], g.detail["last"]) for g in gaps] == [(51, 52)]
    _append(log, rows[52])  # id 52 arrives late
    gaps, notes, _ = step(w)
    assert gaps == [] and any("52" in t and "late" in t and "1 still missing" in t for t in notes), notes
    ig = w.id_gaps["W1"]
    assert (ig.gaps, ig.missing, ig.late) == (1, 1, 1) and w.spins["W1"] == 59
    _append(log, rows[52] + rows[51])  # 52 again (a repeat: counted neither as a spin nor as late), then 51
    gaps, notes, _ = step(w)
    assert gaps == [] and (ig.gaps, ig.missing, ig.late) == (1, 0, 2) and w.spins["W1"] == 60 and w.repeated == 1
    _append(log, lines(5, 5, first=60))  # 61-65 go on: no gap
    assert step(w, final=True)[0] == [] and ig.missing == 0
    w.close()


def test_several_tables_are_checked_each_on_its_own_ids(tmp_path):
    log = tmp_path / "live.csv"
    a = lines(40, 6, header=True, table="A").splitlines(keepends=True)
    b = lines(40, 7, table="B").splitlines(keepends=True)
    b = b[:19] + b[24:]  # table B: ids 20-24 missing
    rows = [a[0]] + [r for pair in zip(a[1:], b) for r in pair] + b[len(a) - 1:]
    log.write_bytes(b"".join(rows))
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, _, _ = step(w, final=True)
    assert [(g.table, g.detail["first"], g.detail["last"]) for g in gaps] == [("B", 20, 24)]
    line_25 = 1 + next(i for i, r in enumerate(rows) if r.startswith(b"25,") and b",B," in r)
    assert gaps[0].detail["line"] == line_25
    assert w.id_gaps["A"].missing == 0 and w.id_gaps["B"].missing == 5
    w.close()


def test_a_log_without_spin_ids_has_no_gap_check(tmp_path):
    log = tmp_path / "live.csv"
    res = np.random.default_rng(20).integers(0, 37, 200)
    log.write_bytes(b"result\n" + b"".join(b"%d\n" % x for x in res.tolist()))
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, notes, lost = step(w, final=True)
    assert gaps == [] and lost == [] and w.spins[log.stem] == 200 and w.id_gaps == {}
    w.close()


def _rotate(log, data: bytes) -> None:
    log.unlink()
    log.write_bytes(data)


def test_a_lost_rotation_is_said_once_not_again_as_a_gap(tmp_path):
    """Delete-and-recreate twice within one poll: the jump 300 -> 601 is SPINS LOST (exit 14 in
    the CLI), not also a gap; the gap count leaves those ids to the lost rotation."""
    log = tmp_path / "live.csv"
    log.write_bytes(lines(300, 8, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    step(w)
    _rotate(log, lines(300, 9, first=300, header=True))
    _rotate(log, lines(300, 10, first=600, header=True))
    out = [step(w), step(w)]
    gaps = [g for o in out for g in o[0]]
    lost = [t for o in out for t in o[2]]
    assert len(lost) == 1 and "is 601" in lost[0] and gaps == [] and w.id_gaps["W1"].missing == 0
    w.close()


def test_a_gap_inside_the_new_file_after_a_rotation_is_a_gap(tmp_path):
    """One rotation, seen: the new file continues the ids, then skips inside: a gap (not a lost rotation)."""
    log = tmp_path / "live.csv"
    log.write_bytes(lines(300, 11, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    step(w)
    new = lines(100, 12, first=300, header=True).splitlines(keepends=True)
    _rotate(log, b"".join(new[:11] + new[14:]))  # 301-310, then 314-400: 311-313 missing
    out = [step(w), step(w)]
    gaps = [g for o in out for g in o[0]]
    assert [o[2] for o in out] == [[], []]
    assert [(g.detail["first"], g.detail["last"], g.detail["line"]) for g in gaps] == [(311, 313, 12)]
    w.close()


def test_id_gaps_unit():
    ig = IdGaps()
    gaps, late = ig.update(np.array([5, 6, 9, 7, 12]))
    assert [(g.first, g.last, g.after, g.resume, g.index) for g in gaps] == [(8, 8, 7, 9, 2), (10, 11, 9, 12, 4)] and late.size == 0
    gaps, late = ig.update(np.array([3, 11, 11, 13]))  # 3: below the first id (out of order, no gap); 11 late
    assert gaps == [] and late.tolist() == [1] and (ig.gaps, ig.missing, ig.late) == (2, 2, 1)
    gaps, _ = ig.update(np.array([20]), excuse=(13, 20))
    assert gaps == [] and ig.missing == 2 and ig.hi == 20


def test_a_newest_first_log_says_its_gaps_across_polls(tmp_path):
    """A log whose ids run newest-first across reads (100 down to 51, then 49 down to 31 and 28 down to 1): every id of the
    second read was below the first one seen, so no gap was found (the known limit); a table whose ids go down is checked
    downwards too: 50 and 29-30 are said, where the ids resume, and 50 arriving later fills its gap."""
    head, *rows = lines(100, 1, header=True).splitlines(keepends=True)  # rows[k] has spin id k + 1
    log = tmp_path / "live.csv"
    log.write_bytes(head + b"".join(rows[99:49:-1]))
    w = LogWatch(log, EU, block=1, settle=0.0)
    gaps, _, lost = step(w)
    assert gaps == [] and lost == [] and w.spins["W1"] == 50
    _append(log, b"".join(rows[48:29:-1] + rows[27::-1]))
    gaps, _, lost = step(w)
    assert [(g.detail["first"], g.detail["last"], g.detail["line"]) for g in gaps] == [(50, 50, 52), (29, 30, 71)] and lost == []
    assert "the ids go from 51 to 49 here" in gaps[0].text and w.id_gaps["W1"].missing == 3
    _append(log, rows[49])
    gaps, notes, _ = step(w)
    assert gaps == [] and any("arrived late" in n and "2 still missing" in n for n in notes)
    ig = IdGaps()  # the same in one table's reads, with an oldest-first table beside it unchanged (below its first id: no gap)
    assert ig.update(np.array([9, 8]))[0] == [] and [(g.first, g.last, g.after, g.resume, g.index) for g in ig.update(np.array([6, 5, 2]))[0]] == [
        (7, 7, 8, 6, 0), (3, 4, 5, 2, 2)]
    up = IdGaps()
    assert up.update(np.array([8, 9]))[0] == [] and up.update(np.array([5]))[0] == []


def test_a_recorder_restarted_after_a_rotation_is_a_gap_not_lost_spins(tmp_path):
    """rngcert record wrote games 001-030 (spins 1-30), was stopped, its log rotated; restarted, it continues the ids and
    leaves out those of games 031-039, played while it was stopped (spins 40-59). The watch saw the one rotation and read
    both files, but took the jump from 30 to 40 after it for a second rotation it had missed: SPINS LOST, exit 14. The
    log's LOG.json says the recorder resumed after spin 30: the jump is a gap of the source, said as one."""
    from test_protocol import _game

    from rngcert.collect.record import record
    from rngcert.equipment.protocol import load_protocol

    proto = load_protocol("slingshot2")
    part1, part2, log = tmp_path / "p1.log", tmp_path / "p2.log", tmp_path / "live.csv"
    part1.write_text("\n".join(x for k in range(1, 31) for x in _game(k, str(k % 37))) + "\n")
    part2.write_text("\n".join(x for k in range(40, 60) for x in _game(k, str(k % 37))) + "\n")
    record(str(part1), log, proto)
    w = LogWatch(log, EU, block=1, settle=0.0)
    assert step(w)[0] == [] and w.spins["live"] == 30
    os.rename(log, tmp_path / "live.csv.1")
    record(str(part2), log, proto)
    got = [step(w) for _ in range(3)]
    gaps, lost = [g for x in got for g in x[0]], [t for x in got for t in x[2]]
    assert lost == [] and w.lost == [] and w.spins["live"] == 50
    assert [(g.detail["first"], g.detail["last"], g.detail["missing"]) for g in gaps] == [(31, 39, 9)]


# ---------------------------------------------------------------- the command line
class _Clock:
    """A clock for ``rngcert.cli._watch`` (its ``time``): each wait or sleep moves it 1,000 s on, so
    that --max-idle ends a follow after the poll that found nothing new, without waiting; the first
    one runs ``first`` (a writer between two polls)."""

    def __init__(self, first):
        self.t, self.first, self.calls = 0.0, first, 0

    def monotonic(self):
        return self.t

    def sleep(self, _s=None):
        if not self.calls:
            self.first()
        self.calls += 1
        self.t += 1000.0


def test_cli_follow_says_a_gap_appended_between_polls_and_counts_it(tmp_path, monkeypatch, cli):
    log = tmp_path / "live.csv"
    log.write_bytes(lines(100, 13, header=True))
    import rngcert.cli._watch as cw

    clock = _Clock(lambda: _append(log, lines(50, 14, first=103)))  # 101-103 missing
    monkeypatch.setattr(cw, "time", clock)
    monkeypatch.setattr(LogFollower, "wait", lambda self, timeout: clock.sleep())
    r = cli("watch", log, "--no-record", "--follow", "--interval", "0.1", "--block", "1", "--settle", "0", "--max-idle", "30", "--json")
    assert r.exit_code == 0, r.output
    assert f"SPIN IDS MISSING: {log}:102: table W1: spin_id 101 to 103 missing (3)" in r.stderr
    assert "1 gap(s) in the spin ids" in r.stderr and "3 spin id(s) missing" in r.stderr
    events = [json.loads(x) for x in r.stdout.splitlines()]
    gap = [e for e in events if e["event"] == "note" and "gap" in e]
    assert len(gap) == 1 and gap[0]["gap"] == {"first": 101, "last": 103, "missing": 3, "file": str(log), "line": 102}
    end = events[-1]
    assert end["event"] == "end" and end["gaps"] == 1 and end["missing_ids"] == {"W1": 3} and end["late_ids"] == 0


def test_cli_read_once_without_a_gap_says_none(tmp_path, cli):
    log = tmp_path / "live.csv"
    log.write_bytes(lines(100, 15, header=True))
    r = cli("watch", log, "--no-record", "--json")
    assert r.exit_code == 0 and "SPIN IDS MISSING" not in r.stderr and "gap(s)" not in r.stderr
    end = json.loads(r.stdout.splitlines()[-1])
    assert end["gaps"] == 0 and end["missing_ids"] == {} and end["late_ids"] == 0


def test_cli_store_table_says_gaps_between_and_within_polls(tmp_path, monkeypatch, cli):
    """watch --table follows the store: a gap in the first read (with the file and line of its
    source row) and one between two polls (a second log ingested while it waits)."""
    import rngcert.cli._watch as cw

    first = lines(100, 16, header=True).splitlines(keepends=True)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"".join(first[:41] + first[43:]))  # 41-42 missing; id 43 on line 42 of a.csv
    b.write_bytes(lines(20, 17, first=110, header=True))  # 101-110 missing; id 111 on line 2 of b.csv
    db = tmp_path / "s.duckdb"
    assert cli("ingest", a, "--db", db).exit_code == 0
    monkeypatch.setattr(cw, "time", _Clock(lambda: cli("ingest", b, "--db", db)))
    r = cli("watch", "--table", "W1", "--db", db, "--follow", "--interval", "0.1", "--max-idle", "30", "--json")
    assert r.exit_code == 0, r.output
    assert f"SPIN IDS MISSING: {a}:42: table W1: spin_id 41 to 42 missing (2)" in r.stderr, r.stderr
    assert f"SPIN IDS MISSING: {b}:2: table W1: spin_id 101 to 110 missing (10)" in r.stderr, r.stderr
    end = json.loads(r.stdout.splitlines()[-1])
    assert end["gaps"] == 2 and end["missing_ids"] == {"W1": 12} and end["spins"] == {"W1": 118}
    assert cli("rejects", "--db", db).exit_code == 0


@pytest.mark.parametrize("conflict", [False, True])
def test_store_conflicted_id_is_not_a_gap(tmp_path, cli, conflict):
    """A spin id stored with two results is left out of the window (neither is used): not a gap."""
    rows = lines(50, 18, header=True).splitlines(keepends=True)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"".join(rows))
    r20 = rows[20].decode().split(",")
    r20[-1] = str((int(r20[-1]) + 1) % 37) + "\n" if conflict else r20[-1]
    b.write_bytes(rows[0] + ",".join(r20).encode())
    db = tmp_path / "s.duckdb"
    assert cli("ingest", a, "--db", db).exit_code == 0
    assert cli("ingest", b, "--db", db).exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    assert "SPIN IDS MISSING" not in r.stderr
    end = json.loads(r.stdout.splitlines()[-1])
    assert end["gaps"] == 0 and end["spins"] == {"W1": 49 if conflict else 50}


def test_gap_count_is_not_an_exit_code(tmp_path, cli):
    """A gap is spins the source never gave: said and counted, exit 0 (README's exit table)."""
    log = tmp_path / "live.csv"
    rows = lines(100, 19, header=True).splitlines(keepends=True)
    log.write_bytes(b"".join(rows[:11] + rows[21:]))
    r = cli("watch", log, "--no-record")
    assert r.exit_code == 0 and "SPIN IDS MISSING" in r.stderr and "10 spin id(s) missing" in r.stderr
    assert os.path.exists(log)


def test_ids_that_rise_by_two_are_said_in_full_20_times_then_together(tmp_path):
    """One count for two tables (ids 1, 3, 5, ... in each): a gap at every row. The first 20 gaps of
    the table are said one by one, the others in one note per read; all are counted."""
    log = tmp_path / "live.csv"
    rows = lines(100, 21, header=True).splitlines(keepends=True)
    log.write_bytes(b"".join(rows[:1] + rows[1::2]))  # ids 1, 3, ..., 99: 49 gaps of one id
    w = LogWatch(log, EU, block=1, settle=0.0)
    evs = w.step(final=True)
    gaps = [e for e in evs if e.kind == "gap"]
    more = [e.text for e in evs if e.kind == "note" and "more gap(s)" in e.text]
    assert len(gaps) == 20 and gaps[-1].detail["first"] == 40
    assert len(more) == 1 and "29 more gap(s)" in more[0] and "29 id(s) missing" in more[0] and f"{log}:51" in more[0], more
    assert (w.id_gaps["W1"].gaps, w.id_gaps["W1"].missing) == (49, 49)
    w.close()


def test_gaps_beyond_those_kept_are_counted_in_bounded_memory(monkeypatch):
    """A table whose ids rise by two (one count shared by two tables) has a gap at every row, and a watch runs for
    months: past KEPT_GAPS the gaps are counted, not kept (two int64 each would grow with the spins), and the counts
    stay exact; a late id inside a kept gap still fills it."""
    from rngcert.pipeline.watch import id_gaps

    monkeypatch.setattr(id_gaps, "KEPT_GAPS", 5)
    g = id_gaps.IdGaps()
    for a in range(0, 60, 20):  # three reads: ids 1, 3, 5, ..., 59
        g.update(np.arange(a + 1, a + 21, 2))
    assert g.gaps == 29 and g.missing == 29 and g.starts.size == g.ends.size == 5
    g.update(np.array([2, 40]))  # 2 is inside a kept gap, 40 inside a gap counted only (not recognised)
    assert g.late == 1 and g.missing == 28 and g.gaps == 29


def _prefixed(data: bytes, prefix: bytes = b"R") -> bytes:
    """The same CSV lines with text spin ids (``R101``): the prefix before each row's id (the header kept)."""
    return b"".join(ln if ln.startswith(b'"') else prefix + ln for ln in data.splitlines(keepends=True))


def test_text_ids_of_one_prefix_are_checked_for_gaps_as_whole_numbers_are(tmp_path):
    """Text spin ids of letters and a number (``R1200``) are checked for gaps by their number, as certify counts them;
    the gap is said with the ids as the log writes them (the watch had no gap check for them). Another prefix in the
    table opens no gap (not the table's counter)."""
    log = tmp_path / "live.csv"
    log.write_bytes(_prefixed(lines(100, 21, header=True)))
    w = LogWatch(log, EU, block=1, settle=0.0)
    assert step(w)[0] == []
    _append(log, _prefixed(lines(45, 22, first=105)) + _prefixed(lines(1, 23, first=400), b"Q"))  # R101-R105 never written; Q401
    gaps, _, lost = step(w, final=True)
    assert lost == [] and len(gaps) == 1
    g = gaps[0]
    assert (g.detail["first"], g.detail["last"], g.detail["missing"], g.detail["line"]) == ("R101", "R105", 5, 102)
    assert "spin_id R101 to R105 missing (5)" in g.text and "from R100 to R106" in g.text
    assert w.id_gaps["W1"].gaps == 1 and w.id_gaps["W1"].missing == 5
    w.close()


def test_cli_text_ids_gap_said_and_counted(tmp_path, cli):
    log = tmp_path / "live.csv"
    log.write_bytes(_prefixed(lines(100, 24, header=True)) + _prefixed(lines(50, 25, first=103)))  # R101-R103 missing
    r = cli("watch", log, "--no-record", "--json")
    assert r.exit_code == 0, r.output
    assert f"SPIN IDS MISSING: {log}:102: table W1: spin_id R101 to R103 missing (3)" in r.stderr
    end = json.loads(r.stdout.splitlines()[-1])
    assert end["event"] == "end" and end["gaps"] == 1 and end["missing_ids"] == {"W1": 3}


@pytest.mark.parametrize("conflict", [False, True])
def test_cli_store_table_with_text_ids_says_their_gaps(tmp_path, cli, conflict):
    """watch --table on text spin ids (``R41``): a gap is said with the ids as stored and the file and line where they
    resume; a text id stored with two results is no gap."""
    first = _prefixed(lines(100, 26, header=True)).splitlines(keepends=True)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"".join(first[:41] + first[43:]))  # R41-R42 missing; R43 on line 42 of a.csv
    r60 = first[60].decode().split(",")
    r60[-1] = str((int(r60[-1]) + (1 if conflict else 0)) % 37) + "\n"
    b.write_bytes(first[0] + ",".join(r60).encode())
    db = tmp_path / "s.duckdb"
    assert cli("ingest", a, "--db", db).exit_code == 0
    assert cli("ingest", b, "--db", db).exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    assert f"SPIN IDS MISSING: {a}:42: table W1: spin_id R41 to R42 missing (2)" in r.stderr, r.stderr
    assert r.stderr.count("SPIN IDS MISSING") == 1, r.stderr
    gap = [json.loads(x) for x in r.stdout.splitlines() if '"gap"' in x]
    assert gap[0]["gap"]["first"] == "R41" and gap[0]["gap"]["last"] == "R42"
    end = json.loads(r.stdout.splitlines()[-1])
    assert end["gaps"] == 1 and end["missing_ids"] == {"W1": 2} and end["spins"] == {"W1": 97 if conflict else 98}


def test_cli_store_table_gap_where_a_row_was_rejected_on_ingest_says_so(tmp_path, cli):
    """A stored table misses the id of a row rejected on ingest (its result unreadable): the source did carry it, so the
    gap no longer says 'spins the source never carried' alone but names the rejected row between the two stored ones."""
    rows = lines(60, 27, header=True).splitlines(keepends=True)
    r31 = rows[31].decode().split(",")  # spin 31 (line 32)
    r31[-1] = "99\n"  # not a pocket: rejected on ingest
    rows[31] = ",".join(r31).encode()
    a = tmp_path / "a.csv"
    a.write_bytes(b"".join(rows))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", a, "--db", db).exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db)
    assert r.exit_code == 0, r.output
    said = [x for x in r.stderr.splitlines() if "SPIN IDS MISSING" in x]
    assert len(said) == 1 and "spin_id 31 missing (1)" in said[0], r.stderr
    assert f"1 row(s) of {a} between them (line(s) 32) were rejected on ingest" in said[0], said[0]
    assert "The missing spins were not watched" in r.stderr


def test_a_lost_rotation_of_a_log_with_text_ids_is_said_with_its_ids(tmp_path):
    """The lost-rotation check of whole-number ids holds for text ids of one prefix: R300 -> R601 is SPINS LOST once."""
    log = tmp_path / "live.csv"
    log.write_bytes(_prefixed(lines(300, 28, header=True)))
    w = LogWatch(log, EU, block=1, settle=0.0)
    step(w)
    _rotate(log, _prefixed(lines(300, 29, first=300, header=True)))
    _rotate(log, _prefixed(lines(300, 30, first=600, header=True)))
    out = [step(w), step(w)]
    lost = [t for o in out for t in o[2]]
    assert len(lost) == 1 and "is R601" in lost[0] and "was R300" in lost[0] and [g for o in out for g in o[0]] == []
    w.close()


@pytest.mark.parametrize("first,then", [
    ([f"R{i}" for i in range(1, 10)], [f"r{i}" for i in range(10, 20)] + ["R25"]),  # a case difference: r10 may be spin R10
    (["X"] + [f"R{i}" for i in range(1, 10)], [f"R{i}" for i in range(15, 20)]),  # an id of neither shape before the prefix is known
])
def test_text_ids_of_two_shapes_are_labels_and_not_checked_for_gaps(tmp_path, first, then):
    """Certify counts gaps in text ids only when every id of the table is its one prefix and a number; the watch said
    'spin_id R10 to R24 missing (15) ... spins the log never carried' of a log holding r10 to r19. From the first id of
    another shape the table's ids are labels: a note says so once, and no gap is said."""
    log = tmp_path / "live.csv"

    def rows(ids):
        return "".join(f"{s},{k * 7 % 37},T\n" for k, s in enumerate(ids)).encode()

    log.write_bytes(b"spin_id,result,table\n" + rows(first))
    w = LogWatch(log, EU, block=1, settle=0.0)
    g1, n1, _ = step(w)
    _append(log, rows(then))
    g2, n2, _ = step(w, final=True)
    assert g1 == [] and g2 == [], [g.text for g in g1 + g2]
    notes = [n for n in n1 + n2 if "ids of two shapes" in n]
    assert len(notes) == 1 and "no longer checked for gaps" in notes[0], n1 + n2
    w.close()


def test_cli_store_table_with_text_ids_of_two_shapes_says_no_gap(tmp_path, cli):
    """watch --table of a table holding R1-R9, r10-r19 and R25 (a case difference): certify counts no gaps in such ids
    (labels); the watch said 'spin_id R10 to R24 missing (15)'. It says once that the ids are labels, and no gap."""
    log = tmp_path / "a.csv"
    ids = [f"R{i}" for i in range(1, 10)] + [f"r{i}" for i in range(10, 20)] + ["R25"]
    log.write_text("spin_id,result\n" + "".join(f"{s},{k * 7 % 37}\n" for k, s in enumerate(ids)))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "W1").exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    assert "SPIN IDS MISSING" not in r.stderr, r.stderr
    assert r.stderr.count("ids of two shapes") == 1 and f"{log}:11: table W1: spin_id 'r10' is not R" in r.stderr, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["gaps"] == 0


def test_cli_store_table_ids_with_leading_zeros_name_the_rejected_row_and_the_file(tmp_path, cli):
    """Ids written with leading zeros (``031``) are stored as labels but watched as numbers: the gap of a rejected row was
    said as 'store DB:0: ... spins the source never carried' (the row of the id where the ids resume and the rejected
    row between were looked up as whole numbers only). It names the file and line, and the rejected row."""
    log = tmp_path / "a.csv"
    log.write_text("spin_id,result\n" + "".join(f"{i:03d},{99 if i == 31 else i * 7 % 37}\n" for i in range(1, 61)))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "W1").exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db)
    assert r.exit_code == 0, r.output
    assert f"SPIN IDS MISSING: {log}:33: table W1: spin_id 31 missing (1)" in r.stderr, r.stderr
    assert f"1 row(s) of {log} between them (line(s) 32) were rejected on ingest" in r.stderr, r.stderr


def test_cli_store_table_newest_first_gap_of_a_rejected_row_names_it(tmp_path, cli):
    """A newest-first log (R60 down to R1) with R31's row rejected on ingest: the row lies between R32's line and R30's,
    in that order, and the gap said 'spins the source never carried' (the rejected rows were looked for only after the
    lower id's line). It names the rejected row."""
    log = tmp_path / "n.csv"
    log.write_text("spin_id,result\n" + "".join(f"R{i},{99 if i == 31 else i * 7 % 37}\n" for i in range(60, 0, -1)))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "W1").exit_code == 0
    r = cli("watch", "--table", "W1", "--db", db)
    assert r.exit_code == 0, r.output
    assert "table W1: spin_id R31 missing (1)" in r.stderr, r.stderr
    assert f"1 row(s) of {log} between them (line(s) 31) were rejected on ingest" in r.stderr, r.stderr


def test_a_text_id_among_whole_numbers_does_not_stop_the_gap_check(tmp_path):
    """The first row's id is R1, the other ids whole numbers: the reader rejects R1 ('not a whole number (the other spin
    ids of the file are)'), as certify does, and counts the gaps of the numbers; the watch took R as the table's prefix
    from that row and checked nothing (with the labels rule: said the ids were labels). Most ids decide, as in the reader."""
    log = tmp_path / "live.csv"

    def rows(ids):
        return "".join(f"{s},{k * 7 % 37},T\n" for k, s in enumerate(ids)).encode()

    log.write_bytes(b"spin_id,result,table\n" + rows(["R1"] + list(range(2, 50))))
    w = LogWatch(log, EU, block=1, settle=0.0)
    g1, n1, _ = step(w)
    _append(log, rows(range(55, 60)))
    g2, n2, _ = step(w, final=True)
    assert not any("ids of two shapes" in n for n in n1 + n2), n1 + n2
    assert [(g.detail["first"], g.detail["last"], g.detail["missing"]) for g in g1 + g2] == [(50, 54, 5)]
    w.close()
