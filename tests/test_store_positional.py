"""Logs without a spin_id column are numbered by position in their file: two different such logs of one table
(two days of a permanence list, ``--table``) would give spin k of day 2 the id of spin k of day 1. Every
coincidence was counted "already stored" (dropped) and every other row a "conflict" that removed both days'
spins from audits, with exit 0. Such an ingest is refused, naming both files; a grown log still adds its rows."""

from __future__ import annotations

import numpy as np

from rngcert.collect.store import Store

RNG_RESULTS = np.random.default_rng(7).integers(0, 37, size=600)


def _bare(path, results):
    path.write_text("result\n" + "".join(f"{r}\n" for r in results))
    return path


def _counts(db):
    with Store(db, read_only=True) as st:
        return tuple(st.con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ("spins", "conflicts", "sources"))


def test_second_positional_log_of_a_table_is_refused_not_merged(tmp_path, cli):
    day1 = _bare(tmp_path / "day1.csv", RNG_RESULTS[:300])
    day2 = _bare(tmp_path / "day2.csv", RNG_RESULTS[300:])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", day1, "--db", db, "--table", "T9").exit_code == 0
    r = cli("ingest", day2, "--db", db, "--table", "T9")
    assert r.exit_code == 3, r.output
    assert "day2.csv" in r.output and "day1.csv" in r.output and "spin_id" in r.output, r.output
    assert _counts(db) == (300, 0, 1)  # nothing of day 2 stored, no false conflict, day 1 intact


def test_grown_positional_log_still_adds_its_new_rows(tmp_path, cli):
    log = _bare(tmp_path / "perm.csv", RNG_RESULTS[:300])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T9").exit_code == 0
    _bare(log, RNG_RESULTS[:450])
    r = cli("ingest", log, "--db", db, "--table", "T9")
    assert r.exit_code == 0 and "150 new spins stored, 300 already stored, 0 conflicting" in r.output, r.output
    assert _counts(db) == (450, 0, 2)


def test_positional_log_into_a_table_of_spin_ids_is_refused(tmp_path, cli):
    ided = tmp_path / "ids.csv"
    ided.write_text("spin_id,result\n" + "".join(f"{i + 1},{r}\n" for i, r in enumerate(RNG_RESULTS[:300])))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", ided, "--db", db, "--table", "T9").exit_code == 0
    r = cli("ingest", _bare(tmp_path / "bare.csv", RNG_RESULTS[300:]), "--db", db, "--table", "T9")
    assert r.exit_code == 3 and "bare.csv" in r.output and "ids.csv" in r.output, r.output
    r = cli("ingest", ided, _bare(tmp_path / "later.csv", RNG_RESULTS[:10]), "--db", db, "--table", "T8")
    assert r.exit_code == 0, r.output  # another table: fine
    assert _counts(db)[0] == 310


def test_the_same_bytes_under_another_name_say_where_they_were_stored(tmp_path, cli):
    """A copy of a log without a table column, under another name, adds nothing (same SHA-256): the note must say
    which file (and so which table) holds its spins, or `audit --table <new name>` finds no table with no word why."""
    first = _bare(tmp_path / "day1.csv", RNG_RESULTS[:300])
    copy = tmp_path / "wheel7.csv"
    copy.write_bytes(first.read_bytes())
    db = tmp_path / "s.duckdb"
    assert cli("ingest", first, "--db", db).exit_code == 0
    r = cli("ingest", copy, "--db", db)
    assert r.exit_code == 0 and "already ingested" in r.output and f"first ingested from {first}" in r.output and "day1" in r.output, r.output


def _through_fifo(fifo, text: str, db, table: str):
    """Ingest ``text`` read from the FIFO ``fifo`` (as `cat log | rngcert ingest - --table T` reads /dev/stdin)."""
    import threading

    from rngcert.collect.store import ingest_files

    def feed():
        with open(fifo, "w") as fh:
            fh.write(text)

    t = threading.Thread(target=feed)
    t.start()
    try:
        return ingest_files(db, [fifo], table=table)
    finally:
        t.join()


def test_two_piped_positional_logs_of_a_table_are_refused(tmp_path):
    """Every piped log is /dev/stdin: the same name is no evidence of a grown log, so a second piped log without
    spin_id into a table of positional spins is refused as a second file is."""
    import os

    import pytest

    from rngcert.errors import InputError

    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    db = tmp_path / "s.duckdb"
    day = "result\n" + "".join(f"{r}\n" for r in RNG_RESULTS[:300])
    (r1,) = _through_fifo(fifo, day, db, "P")
    assert r1.inserted == 300
    with pytest.raises(InputError, match="pipe"):
        _through_fifo(fifo, "result\n" + "".join(f"{r}\n" for r in RNG_RESULTS[300:]), db, "P")
    assert _counts(db) == (300, 0, 1)


def test_a_log_of_the_same_name_from_another_folder_is_not_taken_for_a_grown_log(tmp_path, cli):
    """Labs keep one folder a day with the same file name in each (2026-12-01/perm.csv, 2026-12-02/perm.csv). Day 2's
    list is another log, not day 1's grown: its spins would take day 1's position ids (dropped as 'already stored' or
    made false conflicts). A grown log is told by its bytes (it starts with the stored log's bytes), not by its name."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    day1 = _bare(tmp_path / "d1" / "perm.csv", RNG_RESULTS[:300])
    day2 = _bare(tmp_path / "d2" / "perm.csv", RNG_RESULTS[300:])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", day1, "--db", db, "--table", "T9").exit_code == 0
    r = cli("ingest", day2, "--db", db, "--table", "T9")
    assert r.exit_code == 3, r.output
    # (day 2's list is 9 bytes shorter than day 1's: its bytes cannot be compared, and the error says so)
    assert str(day2) in r.output and str(day1) in r.output and "is shorter than" in r.output, r.output
    assert _counts(db) == (300, 0, 1)  # nothing of day 2 stored, day 1 intact


def test_a_grown_log_under_another_name_still_adds_its_new_rows(tmp_path, cli):
    """The same log grown and saved under another name (or moved): its first bytes are the stored log's, so its
    positions number the same spins; its new rows are added, none dropped or made a conflict."""
    log = _bare(tmp_path / "perm.csv", RNG_RESULTS[:300])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T9").exit_code == 0
    grown = _bare(tmp_path / "perm-full.csv", RNG_RESULTS[:450])
    r = cli("ingest", grown, "--db", db, "--table", "T9")
    assert r.exit_code == 0 and "150 new spins stored, 300 already stored, 0 conflicting" in r.output, r.output
    # a log of the same name whose first bytes were rewritten (an edited line) is not the stored log grown
    edited = _bare(tmp_path / "perm.csv", np.r_[(RNG_RESULTS[0] + 1) % 37, RNG_RESULTS[1:500]])
    r = cli("ingest", edited, "--db", db, "--table", "T9")
    assert r.exit_code == 3 and "does not start with" in r.output, r.output
    assert _counts(db) == (450, 0, 2)


def test_an_export_of_a_grown_positional_log_ingests_without_its_files(tmp_path, cli):
    """An export carries both versions of a grown log without a spin_id column; ingested into a new store after the
    files are gone, the later version is taken for the earlier one grown (its store took it under these rules): no
    file to read again, nothing refused, every spin kept."""
    log = _bare(tmp_path / "perm.csv", RNG_RESULTS[:300])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T9").exit_code == 0
    _bare(log, RNG_RESULTS[:450])
    assert cli("ingest", log, "--db", db, "--table", "T9").exit_code == 0
    r = cli("export", "--db", db, "--parquet", tmp_path / "exp")
    assert r.exit_code == 0, r.output
    log.unlink()
    db2 = tmp_path / "s2.duckdb"
    r = cli("ingest", tmp_path / "exp", "--db", db2)
    assert r.exit_code == 0, r.output
    assert _counts(db2) == (450, 0, 2)


def test_an_earlier_version_after_its_grown_one_is_refused_without_calling_it_another_log(tmp_path, cli):
    """Day 1's copy of a log ingested after the grown log (an archive re-ingested, folders taken in another order) is
    shorter than the stored version: its bytes cannot show whether it is an earlier version or another log, so it is
    refused, but the error must not say it is another log (it said 'so it is another log, not that log grown')."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    early = _bare(tmp_path / "d1" / "perm.csv", RNG_RESULTS[:300])
    grown = _bare(tmp_path / "d2" / "perm.csv", RNG_RESULTS[:450])
    db = tmp_path / "s.duckdb"
    assert cli("ingest", grown, "--db", db, "--table", "T9").exit_code == 0
    r = cli("ingest", early, "--db", db, "--table", "T9")
    assert r.exit_code == 3, r.output
    assert "is shorter than" in r.output and "an earlier version" in r.output, r.output
    assert "another log, not that log grown" not in r.output, r.output
    assert _counts(db) == (450, 0, 1)


def test_a_piped_grown_log_is_not_said_to_differ_from_the_stored_bytes(tmp_path):
    """A pipe is never compared with the stored log (it cannot be read again): the refusal says so, and does not say
    that its bytes differ from the stored log's (it said 'it does not start with the bytes of day1.csv, so it is
    another log' of a pipe carrying day 1's log grown)."""
    import os

    import pytest

    from rngcert.collect.store import ingest_files
    from rngcert.errors import InputError

    db = tmp_path / "s.duckdb"
    ingest_files(db, [_bare(tmp_path / "day1.csv", RNG_RESULTS[:300])], table="P")
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="pipe") as exc:
        _through_fifo(fifo, "result\n" + "".join(f"{r}\n" for r in RNG_RESULTS[:450]), db, "P")
    assert "does not start with" not in str(exc.value) and "another log" not in str(exc.value), exc.value
    assert _counts(db) == (300, 0, 1)


def test_stored_versions_are_compared_in_one_read_of_the_new_log(tmp_path, monkeypatch):
    """A log ingested as it grew has a stored version per ingest: each was compared by reading the new log's prefix
    again (the sum of the versions' sizes, quadratic in the ingests). One read up to the largest stored size does."""
    import builtins

    import rngcert.collect.store.ingest as ingest_mod
    from rngcert.collect.store import ingest_files

    db = tmp_path / "s.duckdb"
    log = tmp_path / "perm.csv"
    for n in (100, 200, 300, 400):  # four stored versions of one log
        ingest_files(db, [_bare(log, RNG_RESULTS[:n])], table="T9")
    largest = log.stat().st_size
    read = []

    class Counted:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def read(self, n=-1):
            b = self.fh.read(n)
            read.append(len(b))
            return b

    monkeypatch.setattr(ingest_mod, "open", lambda *a, **k: Counted(builtins.open(*a, **k)), raising=False)
    (res,) = ingest_files(db, [_bare(log, RNG_RESULTS[:500])], table="T9")
    assert res.inserted == 100 and res.duplicates == 400, res
    assert 0 < sum(read) <= largest, (sum(read), largest)
    assert _counts(db) == (500, 0, 5)


def test_ingest_help_does_not_say_grown_logs_keep_their_name(cli):
    r = cli("ingest", "--help")
    assert r.exit_code == 0 and "same file name" not in r.output and "bytes" in r.output, r.output


def test_an_export_of_another_stores_log_of_the_same_name_is_refused(tmp_path, cli):
    """Store B holds d3/perm.csv and store A d1/perm.csv, both in table T: B's export ingested into A was merged by the
    file name into false conflicts (exit 0). An export's source is taken for a stored log grown only when the export
    holds that stored version too; here it does not: refused, nothing stored."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "d3").mkdir()
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    assert cli("ingest", _bare(tmp_path / "d1" / "perm.csv", RNG_RESULTS[:300]), "--db", a, "--table", "T").exit_code == 0
    assert cli("ingest", _bare(tmp_path / "d3" / "perm.csv", RNG_RESULTS[300:]), "--db", b, "--table", "T").exit_code == 0
    assert cli("export", "--db", b, "--parquet", tmp_path / "expB").exit_code == 0
    r = cli("ingest", tmp_path / "expB", "--db", a)
    assert r.exit_code == 3 and "export that does not hold" in r.output, r.output
    assert _counts(a) == (300, 0, 1)
