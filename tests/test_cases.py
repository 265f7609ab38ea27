"""The cases of ../shared/cases (issue 10, items 2-7), each as a regression test named by its id.

The case inputs are copied into tests/data/cases/ so the tests do not depend on where the shared
folder is. Each test checks the behaviour the case table gives as right, and the kind of fault
around it (other inputs of the same kind), not only the one file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from rngcert.cli import EXIT_EQUIPMENT, EXIT_INPUT
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel

CASES = Path(__file__).resolve().parent / "data" / "cases"
EU = load_wheel("european")


def case(name: str) -> Path:
    return CASES / name


def report_of(res) -> dict:
    return json.loads(res.output)


def _only_dir(base: Path) -> Path:
    (d,) = [p for p in base.iterdir() if p.is_dir()]
    return d


# ------------------------------------------------------------------------------------ c09
def test_c09_rejects_csv_neutralises_formulas_and_keeps_the_text(cli, tmp_path):
    """c09: cells of rejects.csv a spreadsheet would run (=, +, -, @, tab, CR) start with a quote;
    dropping that one quote gives the original text; numbers (line) are left as numbers."""
    from rngcert.collect.csvsafe import original_cell

    res = cli("certify", case("c09-rejects-formula.csv"), "--out", tmp_path, "--no-plots", "--resamples", 99, "--seed", 1)
    assert res.exit_code not in (1, 3), res.output
    rows = list(csv.reader(open(_only_dir(tmp_path) / "rejects.csv", newline="", encoding="utf-8")))
    assert rows[0] == ["file", "line", "column", "reason", "text"]
    texts = [r[4] for r in rows[1:]]
    src = case("c09-rejects-formula.csv").read_text().splitlines()
    originals = [next(csv.reader([src[int(r[1]) - 1]]))[1] for r in rows[1:]]
    assert len(texts) == 2 and originals[0].startswith("=")
    for r in rows[1:]:
        for cell in r:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert r[1].lstrip("-").isdigit()  # the line is a number, unquoted
    assert [original_cell(t) for t in texts] == originals


def test_c09_every_csv_writer_uses_the_rule(cli, tmp_path):
    """The kind: rngcert rejects --csv, and the logs rngcert simulate writes, use the same rule;
    a negative number that is text (a spin id) is quoted, a number cell is not."""
    from rngcert.collect.csvsafe import original_cell, safe_cell

    assert safe_cell(-1) == -1 and safe_cell(2.5) == 2.5
    for text in ("=1+1", "+x", "-5", "@SUM(A1)", "\tx", "\rx", "'=x", "'plain"):
        assert safe_cell(text) == "'" + text and original_cell(safe_cell(text)) == text
    for text in ("5", "abc", "", "a=b"):
        assert safe_cell(text) == text and original_cell(safe_cell(text)) == text
    log = tmp_path / "f.csv"
    log.write_text("spin_id,result\n1,=HYPERLINK(\"x\")\n-5,4\n2,+7\n3,@x\n4,5\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db).exit_code == 0
    res = cli("rejects", "--db", db, "--csv")
    rows = list(csv.reader(io.StringIO(res.stdout)))[1:]
    assert len(rows) == 4
    for r in rows:
        assert not r[4].startswith(("=", "+", "-", "@")) and r[4].startswith("'")
    assert sorted(original_cell(r[4]) for r in rows) == sorted(['=HYPERLINK("x")', "-5", "+7", "@x"])
    # a simulated log with a table id that would be a formula is written safe and read back as given
    out = tmp_path / "sim.csv"
    assert cli("simulate", "wheel", "--spins", 50, "--seed", 1, "--table", "=A1", "--out", out).exit_code == 0
    body = out.read_text().splitlines()[1:]
    assert all(",'=A1," in line for line in body)
    assert list(read_spin_log(out, EU).tables) == ["=A1"]


# ------------------------------------------------------------------------------------ c01
def test_c01_header_spaces_with_a_timestamp_column(cli, tmp_path):
    """c01: `result,timestamp ` — 2 spins accepted and sorted by time (not an internal error)."""
    res = cli("certify", case("c01-header-space-timestamp.csv"), "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    assert res.exit_code == 11, res.output
    rep = report_of(res)
    assert rep["rows"] == {"accepted": 2, "void": 0, "rejected": 0}
    log = read_spin_log(case("c01-header-space-timestamp.csv"), EU)
    (t,) = log.tables.values()
    pos = {lab: i for i, lab in enumerate(EU.labels)}
    assert t.outcomes.tolist() == [pos["17"], pos["5"]]


@pytest.mark.parametrize(
    "text",
    [
        " result , timestamp \n17, 2026-01-01T10:00:00Z\n5,2026-01-01T09:00:00Z \n",  # spaces everywhere
        '"result ","timestamp"\n17,2026-01-01T10:00:00Z\n5,2026-01-01T09:00:00Z\n',  # quoted with a space
        "result, revolutions ,void ,spin_id \n17, 5 ,false, 1\n5,4, false ,2\n",  # numbers, booleans
        "result,timestamp \n17,2026-01-01T10:00:00Z\n5,2026-01-01T09:00:00Z\n" + "".join(f"{i % 37},2026-01-02T{i // 60 % 24:02d}:{i % 60:02d}:00Z\n" for i in range(3000)),
    ],
)
def test_c01_kind_every_column_is_text_whatever_it_looks_like(tmp_path, text):
    p = tmp_path / "h.csv"
    p.write_text(text)
    log = read_spin_log(p, EU)
    assert log.sources[0].rejected == 0 and log.accepted == log.sources[0].rows


# ------------------------------------------------------------------------------------ c06
def test_c06_bad_spin_ids_named_and_checks_stay_on(cli, tmp_path):
    """c06: abc, -5, 2.5, 1e29 each rejected with line and reason; gap and duplicate checks run on
    the valid ids."""
    res = cli("certify", case("c06-spin-id-garbage.csv"), "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    assert res.exit_code not in (1, 3), res.output
    rep = report_of(res)
    rej = {r["line"]: r for r in rep["rejected_sample"]}
    assert sorted(rej) == [2, 3, 4, 5] and rep["rows"]["rejected"] == 4
    assert "digits" in rej[2]["reason"] and "negative" in rej[3]["reason"]
    assert "not a whole number" in rej[4]["reason"] and "not a whole number" in rej[5]["reason"]
    assert all(r["column"].startswith("spin_id") for r in rej.values())
    # the checks stay on: a gap and a duplicate among the valid ids are reported
    lines = case("c06-spin-id-garbage.csv").read_text().splitlines()
    p = tmp_path / "c06-gap.csv"
    p.write_text("\n".join([lines[0]] + lines[1:10] + lines[12:] + [lines[20]]) + "\n")
    log = read_spin_log(p, EU)
    (t,) = log.tables.values()
    assert any("missing" in n for n in t.notes) and any("duplicate" in n for n in t.notes)


def test_c06_kind_text_ids_are_labels_and_empty_ids_rejected(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("spin_id,result\nT-1,5\nT-2,6\n,7\nT-2,6\n")
    log = read_spin_log(p, EU)
    assert [(r.line, r.reason.split(" (")[0]) for r in log.rejected] == [(4, "empty spin_id"), (5, "exact duplicate of line 3")]
    assert not any("missing" in n for t in log.tables.values() for n in t.notes)  # text ids: no gap check


def test_c06_kind_rejected_ids_are_not_gaps(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("spin_id,result\n1,5\n2,99\n3,x\n4,1,extra\n5,6\n")  # 2..4 are rejected, but present
    log = read_spin_log(p, EU)
    assert log.sources[0].rejected == 3
    assert not any("missing" in n for t in log.tables.values() for n in t.notes)


# ------------------------------------------------------------------------------------ c07
def test_c07_duplicate_counted_once_conflict_neither_chosen(cli, tmp_path):
    res = cli("certify", case("c07-duplicate-and-conflict.csv"), "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    assert res.exit_code not in (1, 3), res.output
    rep = report_of(res)
    (t,) = rep["tables"]
    assert t["n"] == 3  # spins 1, 2 (once), 4: spin 3 has two results, neither is used
    pos = {lab: i for i, lab in enumerate(EU.labels)}
    counts = t["counts"]
    assert counts[pos["17"]] == 1 and counts[pos["9"]] == 0 and counts[pos["10"]] == 0
    rej = {r["line"]: r["reason"] for r in rep["rejected_sample"]}
    assert rej[4].startswith("exact duplicate of line 3")
    assert "conflict" in rej[5] and "conflict" in rej[6] and "9 (line 5)" in rej[5] and "10 (line 6)" in rej[5]
    assert any("exact duplicate" in n for n in t["notes"]) and any("conflicting results (3)" in n for n in t["notes"])
    # the share over --max-rejected names the conflicting rows for what they are, not only "could not be read"
    assert any("2 of them conflicting results of one spin_id" in r for r in t["battery"]["reasons"])


def test_c07_kind_repeats_across_files_and_the_store_rule(cli, tmp_path):
    """An overlapping second export counts each spin once; the store classifies the same rows with
    the same function (first kept, exact repeats duplicates, different results conflicts)."""
    from rngcert.collect.spinlog import outcome_key, repeat_status
    from rngcert.collect.store import Store

    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text("table,spin_id,result\nA,1,5\nA,2,17\nA,3,9\n")
    b.write_text("table,spin_id,result\nA,3,9\nA,4,0\nA,2,18\n")
    log = read_spin_log([a, b], EU)
    assert log.tables["A"].n == 3 and log.accepted == 3  # 1, 3 (once), 4; 2 is a conflict
    reasons = [(r.file, r.line, r.reason.split(":")[0]) for r in log.rejected]
    assert (str(b), 2, "exact duplicate of " + str(a) + " line 4 (spin_id 3, same result 9)") in reasons
    assert sum("conflict" in r.reason for r in log.rejected) == 2
    status, first = repeat_status([np.array([0, 0, 0, 0]), np.array([7, 7, 8, 7])], outcome_key(np.array([1, 1, 2, 3]), np.full(4, -1), np.zeros(4, bool)))
    assert status.tolist() == [0, 1, 0, 2] and first.tolist() == [0, 0, 2, 0]
    c = tmp_path / "c07.csv"
    c.write_text(case("c07-duplicate-and-conflict.csv").read_text())
    with Store(tmp_path / "s.duckdb") as st:
        (res,) = st.ingest([c])
    assert (res.inserted, res.duplicates, res.conflicts) == (4, 1, 1)


def test_c07_kind_exact_duplicates_are_not_unreadable_rows(cli, tmp_path):
    """A block of 200 rows exported twice (same spin ids and results) is counted once and named as
    duplicates; the copies are in the rejects but are not "rows that could not be read", so they
    neither make the verdict INCONCLUSIVE by the --max-rejected rule nor send the user to check
    --equipment and --column. The same file given twice likewise. A file with unreadable rows as
    well keeps its unreadable share, counted without the copies."""
    rng = np.random.default_rng(5)
    rows = [f"{i},{x}" for i, x in enumerate(rng.integers(0, 37, 2000).tolist(), start=1)]
    f = tmp_path / "dup.csv"
    f.write_text("spin_id,result\n" + "\n".join(rows + rows[1000:1200]) + "\n")
    res = cli("certify", f, "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    rep = report_of(res)
    (src,) = rep["inputs"]
    assert (src["accepted"], src["rejected"], src["duplicates"]) == (2000, 200, 200)
    assert "200 of them exact duplicates" in src["summary"]
    reasons = rep["tables"][0]["battery"]["reasons"]
    assert not any("could not be read" in r for r in reasons), reasons
    assert any("200 exact duplicate row(s)" in n for n in rep["tables"][0]["notes"])
    twice = cli("certify", f, f, "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    assert not any("could not be read" in r for r in report_of(twice)["tables"][0]["battery"]["reasons"])
    bad = tmp_path / "dup_bad.csv"
    bad.write_text("spin_id,result\n" + "\n".join(rows + rows[1000:1200] + [f"{3000 + i},X" for i in range(150)]) + "\n")
    r3 = report_of(cli("certify", bad, "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99))
    (why,) = [r for r in r3["tables"][0]["battery"]["reasons"] if "could not be read" in r]
    assert why.startswith("150 of 2,150 data rows (7%) could not be read") and "200 duplicate row(s) besides" in why
    assert r3["verdict"] == "INCONCLUSIVE"


# ------------------------------------------------------------------------------------ c08
def test_c08_empty_table_rows_rejected_with_line(cli, tmp_path):
    res = cli("certify", case("c08-empty-table-value.csv"), "--out", tmp_path, "--no-plots", "--json", "--seed", 1, "--resamples", 99)
    assert res.exit_code not in (1, 3), res.output
    rep = report_of(res)
    assert [t["table"] for t in rep["tables"]] == ["T1"]  # no silent "(no table)"
    assert rep["rows"]["rejected"] == 80 and rep["rows"]["accepted"] == 320
    r0 = rep["rejected_sample"][0]
    assert r0["line"] == 2 and r0["column"].startswith("table") and "empty table" in r0["reason"]
    assert not any("missing" in n for n in rep["tables"][0]["notes"])  # the rejected rows' ids are not gaps


def test_c08_kind_all_empty_table_column_is_ignored_with_a_note(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("table,result\n,5\n,6\n")
    log = read_spin_log(p, EU)
    assert list(log.tables) == ["e"] and log.accepted == 2 and any("empty in every row" in n for n in log.notes)


# ------------------------------------------------------------------- reader faults of the same kinds
@pytest.mark.parametrize(
    "content,match",
    [
        (__import__("gzip").compress(b"result\n5\n"), "gzip-compressed.*decompress"),
        (b"PK\x03\x04" + bytes(100), "ZIP archive"),
        ("result\n5\n6\n".encode("utf-16-le"), "UTF-16-LE text without a byte-order mark"),
        ("result\n5\n6\n".encode("utf-16-be"), "UTF-16-BE"),
        ("result\n5\n".encode("utf-16"), "UTF-16"),
        (bytes(np.random.default_rng(3).integers(0, 256, 5000, dtype=np.uint8)), "binary data"),
    ],
    ids=["gzip", "zip", "utf16le-no-bom", "utf16be-no-bom", "utf16-bom", "random-binary"],  # stable ids (gzip embeds a time)
)
def test_reader_names_what_a_file_is(tmp_path, content, match):
    from rngcert.errors import InputError

    p = tmp_path / "x.csv"
    p.write_bytes(content)
    with pytest.raises(InputError, match=match):
        read_spin_log(p, EU)


def test_reader_one_line_is_one_row_whatever_quotes_and_crs_do(tmp_path):
    """An unclosed quote must not swallow the next lines; a lone CR must not split a line."""
    p = tmp_path / "q.csv"
    p.write_bytes(b'spin_id,result\n1,5\n2,"6\n3,8\n4,9\r7\n5,10\n')
    log = read_spin_log(p, EU)
    s = log.sources[0]
    assert (s.accepted, s.rejected) == (3, 2)
    assert [(r.line, r.column == "*" or r.column.startswith("result")) for r in log.rejected] == [(3, True), (5, True)]
    assert "␍" in log.rejected[1].text


def test_reader_zero_padded_pockets(tmp_path):
    """`05` is pocket 5 when the wheel has no `05` (like `7.0`); `00` stays the American double zero
    and is not read as 0 on a European wheel."""
    p = tmp_path / "z.csv"
    p.write_text("result\n05\n007\n7.0\n00\n0\n")
    eu = read_spin_log(p, EU)
    (t,) = eu.tables.values()
    pos = {lab: i for i, lab in enumerate(EU.labels)}
    assert t.outcomes.tolist() == [pos["5"], pos["7"], pos["7"], pos["0"]] and [r.text for r in eu.rejected] == ["00"]
    am = load_wheel("american")
    (ta,) = read_spin_log(p, am).tables.values()
    apos = {lab: i for i, lab in enumerate(am.labels)}
    assert ta.outcomes.tolist() == [apos["5"], apos["7"], apos["7"], apos["00"], apos["0"]]


# ------------------------------------------------------------------------------------ c05
def test_c05_one_deck_shoes_with_decks_2_is_an_input_error(cli, tmp_path):
    """c05: 300 shoes of 52 cards (each card once) certified as --decks 2: exit 3, naming the shoes
    and what is missing."""
    res = cli("shuffle", "certify", case("c05-one-deck-shoes.csv"), "--decks", 2, "--game", "blackjack", "--out", tmp_path, "--no-plots")
    assert res.exit_code == EXIT_INPUT, res.output
    msg = res.output.strip().splitlines()[-1]
    assert msg.startswith("rngcert: error:") and "shoe 1" in msg and "104" in msg and "52 cards" in msg and "missing" in msg
    assert not any(tmp_path.iterdir())  # no report on data that do not fit the declared decks
    # the same log with its real deck count is certified
    res = cli("shuffle", "certify", case("c05-one-deck-shoes.csv"), "--decks", 1, "--game", "blackjack", "--out", tmp_path, "--no-plots", "--resamples", 99, "--seed", 1)
    assert res.exit_code in (0, 10, 11, 12), res.output


def test_c05_kind_deck_count_checked_both_ways(tmp_path):
    """Dealt prefixes that never repeat a card (impossible for the declared decks) and shoes that hold
    a card more often than the declared decks can are input errors; realistic prefixes are not."""
    from rngcert.collect.shoelog import read_shoe_log, write_shoe_log
    from rngcert.equipment.cards import new_shoe
    from rngcert.errors import InputError

    rng = np.random.default_rng(5)
    one = np.stack([rng.permutation(new_shoe(1)) for _ in range(40)])
    two = np.stack([rng.permutation(new_shoe(2)) for _ in range(40)])
    f = tmp_path / "p.csv"
    write_shoe_log(f, one[:, :40], serial=False)  # 40-card prefixes of one-deck shoes
    with pytest.raises(InputError, match="no shoe holds any card more than 1 time.*--decks 2"):
        read_shoe_log(f, decks=2)
    write_shoe_log(f, two, serial=False)  # complete two-deck shoes declared as one deck
    with pytest.raises(InputError, match="40 of 40 shoes hold some card more often than --decks 1"):
        read_shoe_log(f, decks=1)
    write_shoe_log(f, two[:, :70], serial=False)  # a realistic cut-card prefix of the declared decks
    assert read_shoe_log(f, decks=2).n_shoes == 40


# ------------------------------------------------------------------------------------ c11
def test_c11_many_pockets_is_an_equipment_error_within_a_second(cli, tmp_path, monkeypatch):
    """c11: a 40,000-pocket wheel file is refused at once (size limits before per-pocket work)."""
    import runpy

    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(case("c11-many-pockets.py")))
    res = cli("equipment", tmp_path / "c11-many-pockets.toml")
    assert res.exit_code == EXIT_EQUIPMENT and "40,000" in res.output  # refused by the size limit (no timing in tests)


def test_c11_kind_validation_is_linear_and_deep_toml_is_an_equipment_error(cli, tmp_path):
    import time

    k = 30000  # just under the limit: every check must be linear
    big = tmp_path / "big.toml"
    big.write_text(
        'id="big"\nkind="roulette"\nwheel_order=[' + ",".join(f'"{i}"' for i in range(k)) + "]\n"
        "red=[" + ",".join(f'"{i}"' for i in range(1, k, 2)) + ']\ngreen=["0"]\n'
    )
    t0 = time.perf_counter()
    assert load_wheel(big).k == k
    assert time.perf_counter() - t0 < 2.0
    mw = tmp_path / "mw.toml"
    mw.write_text('id="mw"\nkind="money-wheel"\nsections=[' + ",".join(f'"S{i % 5000}"' for i in range(k)) + "]\n")
    t0 = time.perf_counter()
    assert load_wheel(mw).k == k and time.perf_counter() - t0 < 2.0
    for n, text in (
        ("arrays", 'id="x"\nkind="roulette"\nwheel_order=' + "[" * 100000 + "]" * 100000 + "\n"),
        ("tables", 'id="x"\nkind="roulette"\nname=' + "{a=" * 5000 + "1" + "}" * 5000 + "\n"),
    ):
        f = tmp_path / f"deep-{n}.toml"
        f.write_text(text)
        for args in (("equipment", f), ("certify", "--equipment", f), ("house-edge", "roulette", "--paytable", f), ("shuffle", "certify", f)):
            res = cli(*args)
            assert res.exit_code == EXIT_EQUIPMENT and "nested too deeply" in res.output, (args, res.output)
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"#" * (9 << 20))
    res = cli("equipment", huge)
    assert res.exit_code == EXIT_EQUIPMENT and "MiB" in res.output


# ------------------------------------------------------------------- storage faults (item 5)
def _corrupt_store_found_by_a_query(tmp_path):
    """A store whose header and schema read fine but whose data are corrupt (searched for: DuckDB
    decides where its blocks go)."""
    import os
    import shutil

    from rngcert.collect.store import Store
    from rngcert.errors import StorageError

    good = tmp_path / "good.duckdb"
    log = tmp_path / "T9.csv"
    rng = np.random.default_rng(1)
    log.write_text("spin_id,result\n" + "".join(f"{i},{r}\n" for i, r in enumerate(rng.integers(0, 37, 20000), 1)))
    with Store(good) as st:
        st.ingest([log])
    size = os.path.getsize(good)
    for off in range(4096 * 3, size, 4096 * 8):
        bad = tmp_path / "bad.duckdb"
        shutil.copy(good, bad)
        with open(bad, "r+b") as fh:
            fh.seek(off)
            fh.write(b"\xaa" * 4096)
        try:
            st = Store(bad, read_only=True)
        except StorageError:
            continue
        try:
            st.tables()
            st.spins("T9")
        except StorageError:
            return bad
        finally:
            st.close()
    return None


def test_storage_corrupt_store_found_during_a_query_exits_3_naming_the_path(cli, tmp_path):
    bad = _corrupt_store_found_by_a_query(tmp_path)
    if bad is None:
        pytest.skip("no block of this DuckDB version's store is read only by a query")
    for args in (("audit", "--table", "T9", "--db", bad, "--no-plots", "--resamples", 99, "--out", tmp_path / "r"), ("audit", "--all", "--db", bad, "--no-plots", "--resamples", 99, "--out", tmp_path / "r")):
        res = cli(*args)
        assert res.exit_code == EXIT_INPUT, res.output
        assert str(bad) in res.output and "corrupt" in res.output and "internal error" not in res.output


def test_storage_full_disk_and_read_only_exit_3_naming_the_path(cli, tmp_path, monkeypatch):
    import errno

    import duckdb

    import rngcert.collect.store as store_mod

    log = tmp_path / "T1.csv"
    log.write_text("spin_id,result\n1,5\n2,6\n")
    db = tmp_path / "s.duckdb"

    def full(*a):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod.ingest, "_before_commit", full)
    res = cli("ingest", log, "--db", db)
    assert res.exit_code == EXIT_INPUT and str(db) in res.output and "no space left" in res.output.lower(), res.output
    monkeypatch.undo()
    with store_mod.Store(db, read_only=True) as st:
        assert st.count_spins() == 0  # the failed ingest left the store as it was
    # a store on a read-only file system: opening for writing fails, named
    real = duckdb.connect

    def ro(path, read_only=False, **k):
        if not read_only:
            raise duckdb.IOException(f'IO Error: Cannot open file "{path}": Read-only file system')
        return real(path, read_only=read_only, **k)

    monkeypatch.setattr(duckdb, "connect", ro)
    res = cli("ingest", log, "--db", db)
    assert res.exit_code == EXIT_INPUT and str(db) in res.output and "Read-only" in res.output
    monkeypatch.undo()

    def ro_dir(self, *a, **k):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", ro_dir)
    res = cli("ingest", log, "--db", tmp_path / "new" / "s.duckdb")
    assert res.exit_code == EXIT_INPUT and "s.duckdb" in res.output and ("read-only" in res.output.lower() or "cannot be written" in res.output)
    res = cli("certify", log, "--out", tmp_path / "reports", "--no-plots", "--resamples", 99)
    assert res.exit_code == EXIT_INPUT and "reports" in res.output and "cannot be written" in res.output
    monkeypatch.undo()
    # a report folder on a full disk
    def full_write(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full_write)
    res = cli("certify", log, "--out", tmp_path / "reports", "--no-plots", "--resamples", 99)
    assert res.exit_code == EXIT_INPUT and "report." in res.output and "No space left" in res.output


# ------------------------------------------------------------------- pipes and FIFOs (item 5)
def test_ingest_reads_a_pipe_and_certify_never_blocks_on_a_fifo(cli, tmp_path, monkeypatch):
    import os
    import threading
    import time

    from rngcert.collect import csvstream

    db = tmp_path / "s.duckdb"
    r, w = os.pipe()
    body = b"spin_id,result\n" + b"".join(b"%d,%d\n" % (i, i % 37) for i in range(1, 501))
    threading.Thread(target=lambda: (os.write(w, body), os.close(w)), daemon=True).start()
    res = cli("ingest", f"/dev/fd/{r}", "--db", db, "--table", "PIPE")
    os.close(r)
    assert res.exit_code == 0, res.output
    assert "500 new spins" in res.output
    # a missing log: a clear error, and no empty store is created
    res = cli("ingest", tmp_path / "nope.csv", "--db", tmp_path / "other.duckdb")
    assert res.exit_code == EXIT_INPUT and "no such file" in res.output and not (tmp_path / "other.duckdb").exists()
    # a FIFO that no process writes to: certify returns at once with a clear error
    fifo = tmp_path / "spins.fifo"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    res = cli("certify", fifo, "--out", tmp_path / "r", "--no-plots")
    assert res.exit_code == EXIT_INPUT and "FIFO" in res.output and time.perf_counter() - t0 < 5
    # a writer that stays silent is given up after the idle time
    monkeypatch.setattr(csvstream, "STREAM_IDLE_SECONDS", 0.5)
    r, w = os.pipe()
    res = cli("certify", f"/dev/fd/{r}", "--out", tmp_path / "r", "--no-plots")
    os.close(w)
    os.close(r)
    assert res.exit_code == EXIT_INPUT and "no data for 0.5 s" in res.output
    res = cli("certify", tmp_path, "--out", tmp_path / "r")
    assert res.exit_code in (2, EXIT_INPUT)  # a folder: click or rngcert refuses it by name
