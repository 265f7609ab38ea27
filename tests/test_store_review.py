"""Review of the store and of audits over time (issue 23 item 5), as a compliance officer running monthly audits
meets them: a table name no audit can name, an archived (0444) store that ``ingest`` wrote into, and a group
statement that claimed a bound over every audit for a run that is not recorded in any table's history."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from rngcert.collect.store import Store, ingest_files
from rngcert.errors import InputError
from rngcert.pipeline.group_audit import group_statement


def _log(path, n: int = 400, seed: int = 1, table: str | None = None):
    """A small fair European log with spin ids and minute timestamps (fixed seed)."""
    r = np.random.default_rng(seed)
    res = r.integers(0, 37, n)
    rows = [f"{k + 1},2026-03-01T{k // 60 % 24:02d}:{k % 60:02d}:00Z,{res[k]}" + (f",{table}" if table else "") for k in range(n)]
    path.write_text("spin_id,timestamp,result" + (",table" if table else "") + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _sha(p) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["", "   ", "a\nb", "T\x001"])
def test_ingest_refuses_a_table_name_no_audit_can_name(tmp_path, cli, name):
    """`ingest --table ""` stored a table '' that `audit --table ""` refuses as a usage error ("give exactly one of
    --table T or --all"); a blank name, or one with a control character (the rule of a log's table cells), is refused
    before the store is created, naming the option and the reason."""
    db = tmp_path / "s.duckdb"
    r = cli("ingest", _log(tmp_path / "a.csv"), "--db", db, "--table", name)
    assert r.exit_code in (2, 3), r.output
    assert "--table" in r.output and ("blank" in r.output or "control character" in r.output), r.output
    assert not db.exists()
    with pytest.raises(InputError, match="--table"):
        ingest_files(db, [tmp_path / "a.csv"], table=name)


def test_a_table_cell_left_empty_is_a_rejected_row_as_before(tmp_path, cli):
    """The rule the option now follows: an empty cell of a log's table column is a rejected row with its reason."""
    p = tmp_path / "a.csv"
    lines = _log(p, table="T1").read_text().splitlines()
    p.write_text("\n".join(lines[:-1] + [lines[-1][: -len("T1")]]) + "\n")  # the last row's table cell empty
    db = tmp_path / "s.duckdb"
    assert cli("ingest", p, "--db", db).exit_code == 0
    with Store(db, read_only=True) as st:
        assert [t["table"] for t in st.tables()] == ["T1"]
        (rej,) = st.rejects()
        assert rej["line"] == len(lines) and "empty table value" in rej["reason"]


@pytest.mark.skipif(os.name != "posix", reason="permission bits")
def test_ingest_does_not_write_into_a_store_marked_read_only(tmp_path, cli):
    """A 0444 store is the archive mark `audit` respects even for root (tests/test_store_concurrency.py); `ingest` ran
    as root stored 3,000 new spins into it. It is refused (exit 3, the path and the mode) and the file is unchanged."""
    db = tmp_path / "s.duckdb"
    assert cli("ingest", _log(tmp_path / "a.csv"), "--db", db, "--table", "T1").exit_code == 0
    os.chmod(db, 0o444)
    before = _sha(db)
    try:
        r = cli("ingest", _log(tmp_path / "b.csv", seed=2), "--db", db, "--table", "T2")
        assert r.exit_code == 3 and "read-only (mode 444)" in r.output and str(db) in r.output, r.output
        with pytest.raises(InputError, match="read-only"):
            Store(db)
        with Store(db, read_only=True) as st:  # reading it is fine
            assert st.count_spins() == 400
    finally:
        os.chmod(db, 0o644)
    assert _sha(db) == before


def _report(table: str, p: float, earlier: int, verdict: str = "PASS") -> dict:
    return {"tables": [{"table": table, "min_holm": p, "battery": {"verdict": verdict}}], "audit": {"earlier_audits": [{}] * earlier}}


def test_a_run_not_recorded_does_not_claim_the_bound_over_every_audit():
    """`audit --all --no-record` records nothing, so the next run judges each table at the same audit number again: a
    monthly --no-record run spends alpha at its first audit every month, and the bound 'over every table and audit'
    does not hold for such runs. The statement says so (and a recorded run says nothing of it)."""
    reps = [_report("A", 0.2, 3), _report("B", 0.5, 3)]
    rec = group_statement(reps, alpha=0.01)
    assert "not recorded" not in rec["statement"] and rec["recorded"] is True
    g = group_statement(reps, alpha=0.01, recorded=False)
    assert g["recorded"] is False
    assert "not recorded" in g["statement"] and "same audit number" in g["statement"]
    assert [x["audit_number"] for x in g["tables"]] == [4, 4]
    g = group_statement(reps, alpha=0.01, time_control=False, recorded=False)
    assert "not recorded" not in g["statement"]  # no spending: nothing over time is claimed


def test_audit_all_no_record_group_line_says_it_is_not_recorded(tmp_path, cli):
    db = tmp_path / "s.duckdb"
    assert cli("ingest", _log(tmp_path / "a.csv", n=300, table="T1"), "--db", db).exit_code == 0
    args = ("audit", "--db", db, "--all", "--seed", 1, "--resamples", 99, "--no-plots", "--out", tmp_path / "r", "--workers", 1)
    for _ in range(2):
        r = cli(*args, "--no-record")
        line = next(ln for ln in r.output.splitlines() if ln.startswith("GROUP:"))
        assert "not recorded" in line, line
    r = cli(*args)
    line = next(ln for ln in r.output.splitlines() if ln.startswith("GROUP:"))
    assert "not recorded" not in line, line


def _clock_log(path, back_s: int, n: int = 600, seed: int = 4):
    """Spin ids in order, zoned (UTC) timestamps 12 s apart that step back ``back_s`` seconds once, half-way."""
    r = np.random.default_rng(seed)
    t = 1_800_000_000 + 12 * np.arange(n)
    t[n // 2:] -= back_s
    import datetime as _dt

    rows = [f"{k + 1},{_dt.datetime.fromtimestamp(int(t[k]), _dt.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')},{r.integers(37)}" for k in range(n)]
    path.write_text("spin_id,timestamp,result\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_an_audit_tests_the_spins_in_spin_id_order_and_reports_time_going_back_as_certify_does(tmp_path, cli):
    """certify (c18) tests whole-number spin ids in id order and makes timestamps that go back against it a data-integrity
    finding (INCONCLUSIVE when no clock change explains it). The store sorted the window by timestamp instead: the audit of a
    log whose clock went back 10 minutes interleaved the two passes, tested a sequence the wheel never produced, and said
    nothing. The audit now reads the same order and carries the same finding."""
    p = _clock_log(tmp_path / "clock.csv", back_s=600)
    db = tmp_path / "s.duckdb"
    c, a, pv, pa_ = _certify_and_audit(cli, p, db, "clock", tmp_path)
    assert pa_ == pv
    assert a["verdict"] == c["verdict"] == "INCONCLUSIVE"
    assert "time order" in json.dumps(a).lower() and "go back 1 time(s)" in json.dumps(a)
    with Store(db, read_only=True) as st:
        s = st.spins("clock")
        assert s.spin_id.to_pylist() == [str(k) for k in range(1, 601)]  # id order, not time order
        assert s.order_finding is not None and s.order_finding["evidence"]["backward_steps"] == 1


def test_spins_in_time_and_id_order_carry_no_order_finding(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest_files(db, [_clock_log(tmp_path / "ok.csv", back_s=0)], table="ok")
    with Store(db, read_only=True) as st:
        assert st.spins("ok").order_finding is None


def test_last_keeps_the_order_finding_only_for_the_spins_it_keeps(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest_files(db, [_clock_log(tmp_path / "clock.csv", back_s=600)], table="clock")
    with Store(db, read_only=True) as st:
        assert st.spins("clock", last=400).order_finding is not None  # the step back (after spin 300) is among the last 400
        assert st.spins("clock", last=200).order_finding is None


def test_ids_out_of_order_with_times_in_order_are_put_in_id_order_with_the_finding(tmp_path):
    """Rows in time order whose ids go back (a counter reset or a wrong id): certify puts them in id order and reports the
    timestamps going back; the store read them in time order, with no finding."""
    p = _clock_log(tmp_path / "ids.csv", back_s=0, n=40)
    lines = p.read_text().splitlines()
    body = lines[1:]
    body[10], body[11] = body[11], body[10]  # ids 12, 11 in time order (the times stay increasing)
    body[10] = "12," + lines[11].split(",", 1)[1]
    body[11] = "11," + lines[12].split(",", 1)[1]
    p.write_text("\n".join([lines[0]] + body) + "\n")
    db = tmp_path / "s.duckdb"
    ingest_files(db, [p], table="ids")
    with Store(db, read_only=True) as st:
        s = st.spins("ids")
        assert s.spin_id.to_pylist()[9:13] == ["10", "11", "12", "13"]
        assert s.order_finding is not None and s.order_finding["evidence"]["backward_steps"] == 1


def test_a_one_hour_step_back_says_the_store_cannot_tell_daylight_saving_time(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest_files(db, [_clock_log(tmp_path / "dst.csv", back_s=3600)], table="dst")
    with Store(db, read_only=True) as st:
        f = st.spins("dst").order_finding
    assert f["inconclusive"] and "daylight-saving" in f["inconclusive"] and "rngcert certify" in f["summary"]


def test_rejects_limit_says_how_many_there_are_in_all(tmp_path, cli):
    """`rejects --limit 4` ended with '4 rejected row(s)' (and JSON count 4) when the store held 6: the count is of them all."""
    p = _log(tmp_path / "a.csv", n=40)
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:1] + [ln.rsplit(",", 1)[0] + ",99" if k % 5 == 0 else ln for k, ln in enumerate(lines[1:31])]) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", p, "--db", db, "--table", "T1").exit_code == 0
    r = cli("rejects", "--db", db, "--limit", 4)
    assert r.exit_code == 0 and r.output.count("a.csv:") == 4 and "4 of 6 rejected row(s)" in r.output, r.output
    d = json.loads(cli("rejects", "--db", db, "--limit", 4, "--json").output)
    assert d["count"] == 6 and d["shown"] == 4 and len(d["rejects"]) == 4
    assert "6 rejected row(s)" in cli("rejects", "--db", db).output


def test_audit_all_with_an_empty_window_names_the_window_not_an_empty_store(tmp_path, cli):
    """`audit --all --since 2030-01-01` on a store with spins said 'no table with spins in the store' (exit 3); it names the window."""
    db = tmp_path / "s.duckdb"
    assert cli("ingest", _log(tmp_path / "a.csv", n=200, table="T1"), "--db", db).exit_code == 0
    r = cli("audit", "--db", db, "--all", "--since", "2030-01-01", "--no-plots", "--out", tmp_path / "r", "--no-record")
    assert r.exit_code == 3 and "no spins in the window" in r.output and "since=2030-01-01" in r.output and "1 table(s)" in r.output, r.output


def test_text_ids_of_one_prefix_are_in_number_order_as_certify_orders_them(tmp_path, cli):
    """Ids R1..R600 (one prefix and a number): certify orders them by number and reports the clock going back; the store
    sorted them by time. The audit's p-values now equal certify's, and the finding names the ids with their prefix."""
    p = _clock_log(tmp_path / "rid.csv", back_s=606)  # (no two rounds within 5 s: certify's near-duplicate rule, which the store lacks)
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:1] + ["R" + ln for ln in lines[1:]]) + "\n")
    db = tmp_path / "s.duckdb"
    c, a, pv, pa_ = _certify_and_audit(cli, p, db, "rid", tmp_path)
    assert pv == pa_
    with Store(db, read_only=True) as st:
        s = st.spins("rid")
    assert s.spin_id.to_pylist()[:3] == ["R1", "R2", "R3"] and "spin_id R300" in s.order_finding["text"]


def _certify_and_audit(cli, p, db, table: str, tmp_path):
    """Ingest log ``p`` into ``db`` as ``table``, certify the log and audit the table (same seed and replicates):
    both reports (JSON) and each one's p-values of its applicable tests."""
    assert cli("ingest", p, "--db", db, "--table", table).exit_code == 0
    common = ("--seed", 1, "--resamples", 99, "--no-plots", "--json")
    c = json.loads(cli("certify", p, *common, "--out", tmp_path / "c").output)
    a = json.loads(cli("audit", "--db", db, "--table", table, *common, "--out", tmp_path / "a", "--no-record").output)

    def pvalues(rep):
        return {x["name"]: x.get("pvalue") for x in rep["tables"][0]["battery"]["tests"] if x.get("applicable")}

    return c, a, pvalues(c), pvalues(a)


def test_rejects_of_a_file_not_in_the_store_is_an_error_not_none(tmp_path, cli):
    """`rejects --file nope` printed '0 rejected row(s)' and exit 0, as if that file had been read without a fault; a name
    that is no stored file's path or ending is an input error (exit 3) naming the stored files. The ending is a suffix of
    the text: '_' in it is not a wildcard (`--file a_csv` matched a.csv's rejects through SQL LIKE)."""
    p = _log(tmp_path / "a.csv", n=40)
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:1] + [ln.rsplit(",", 1)[0] + ",99" if k % 5 == 0 else ln for k, ln in enumerate(lines[1:31])]) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", p, "--db", db, "--table", "T1").exit_code == 0
    for name in ("nope.csv", "a_csv", "%.csv"):
        r = cli("rejects", "--db", db, "--file", name)
        assert r.exit_code == 3 and "no file ingested" in r.output and "a.csv" in r.output and "rejected row(s)" not in r.output, r.output
        d = json.loads(cli("rejects", "--db", db, "--file", name, "--json").stdout)
        assert d["exit_code"] == 3 and "a.csv" in d["error"]
    r = cli("rejects", "--db", db, "--file", "a.csv")
    assert r.exit_code == 0 and "6 rejected row(s)" in r.output, r.output
    clean = _log(tmp_path / "b.csv", n=40)
    assert cli("ingest", clean, "--db", db, "--table", "T2").exit_code == 0
    r = cli("rejects", "--db", db, "--file", "b.csv")  # a stored file without rejects: 0 of them, exit 0
    assert r.exit_code == 0 and "0 rejected row(s)" in r.output, r.output


def test_rejects_file_matches_a_stored_path_ending_at_a_separator_only(tmp_path, cli):
    """`rejects --file ive.csv` of a store holding five.csv printed its rejects with exit 0 (the ending was matched as
    text): a part of a file name is no stored file, exit 3 as for any other name; the whole file name (or a path ending
    after a separator) still matches."""
    p = _log(tmp_path / "five.csv", n=40)
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:1] + [ln.rsplit(",", 1)[0] + ",99" if k % 5 == 0 else ln for k, ln in enumerate(lines[1:31])]) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", p, "--db", db, "--table", "T1").exit_code == 0
    r = cli("rejects", "--db", db, "--file", "ive.csv")
    assert r.exit_code == 3 and "no file ingested" in r.output and "rejected row(s)" not in r.output, r.output
    for name in ("five.csv", f"{tmp_path.name}/five.csv", str(p)):
        r = cli("rejects", "--db", db, "--file", name)
        assert r.exit_code == 0 and "6 rejected row(s)" in r.output, (name, r.output)
