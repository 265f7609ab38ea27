"""Audits of stored spins: same p-values as `certify`, audit records, trend and homogeneity.

Runtime budget: about 25 s (the two Wiesbaden permanence lists, 1.5 M spins, are ingested,
audited and certified once per session).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from _support import run_cli, shared_file, shared_path
from scipy import stats

from rngcert.cli import EXIT
from rngcert.collect.spinlog import SpinLog, read_spin_log
from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.audit import audit_all, audit_table
from rngcert.pipeline.certify_wheel import certify_log, certify_spins
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
DATA = shared_path("data")
WIESBADEN = sorted((DATA / "roulette-wiesbaden").glob("spielbank-wiesbaden_*.txt"))
LIVE = DATA / "roulette-live-dealer" / "live_roulette_spins.csv"
LIVE_COLUMNS = {"result": "number", "table": "file", "spin_id": "seq_in_file"}
R = 199  # Monte Carlo replicates: small, the comparison is exact whatever R


def pvalues(report, i=0):
    return {t["name"]: t.get("pvalue") for t in report["tables"][i]["battery"]["tests"]}


@pytest.mark.slow
@pytest.mark.skipif(not WIESBADEN, reason="shared Wiesbaden data not present")
def test_wiesbaden_ingest_audit_equals_certify(tmp_path):
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        res = st.ingest(WIESBADEN)
        assert all(r.spin_id_rule == "position" for r in res)  # permanence lists: numbered by position
        # t6 has a line-start artefact that certify sees from the file's lines: the audit reads the stored lines of a
        # permanence list and applies the same integrity rule (it gave SUSPECT where certify gave INCONCLUSIVE)
        for path in WIESBADEN:
            a = audit_table(st, path.stem, seed=11, n_resamples=R, figures=False, outdir=tmp_path / "rep")
            c = certify_log([path], EU, seed=11, n_resamples=R, figures=False)
            assert a.report["tables"][0]["n"] == c.report["tables"][0]["n"] > 700_000
            assert a.report["tables"][0]["counts"] == c.report["tables"][0]["counts"]
            assert pvalues(a.report) == pvalues(c.report)
            assert a.verdict == c.verdict
            assert a.report["inputs"][0]["sha256"] == c.report["inputs"][0]["sha256"]
            assert a.audit_id is not None and Path(a.paths["json"]).is_file()


@pytest.mark.slow
def test_live_dealer_every_table_equals_certify(tmp_path):
    shared_file("data", "roulette-live-dealer", "live_roulette_spins.csv")  # skips without the shared folder
    db = tmp_path / "s.duckdb"
    whole = read_spin_log(LIVE, EU, columns=LIVE_COLUMNS)
    full = certify_log([LIVE], EU, columns=LIVE_COLUMNS, seed=5, n_resamples=R, figures=False)
    with Store(db) as st:
        (res,) = st.ingest([LIVE], columns=LIVE_COLUMNS)
        assert res.inserted == 16808 and len(res.tables) == 18
        audits = audit_all(st, seed=5, n_resamples=R, figures=False, outdir=None)
        recs = st.audits()
    assert len(audits) == 18 == len(recs)
    for a in audits:
        one = SpinLog(EU, whole.level, whole.space, {a.table: whole.tables[a.table]}, whole.sources, whole.rejected)
        c = certify_spins(one, seed=5, n_resamples=R, figures=False)
        assert pvalues(a.report) == pvalues(c.report), a.table
        # certify on the whole file: table i draws Monte Carlo stream (i, test); the deterministic
        # (asymptotic / exact) p-values are identical, table by table
        i = [t["table"] for t in full.report["tables"]].index(a.table)
        det = {t["name"]: t["pvalue"] for t in full.report["tables"][i]["battery"]["tests"] if t.get("applicable") and "R=" not in str(t.get("method", ""))}
        assert det and all(pvalues(a.report)[k] == v for k, v in det.items())
    # the audit record holds every applicable p-value
    rec = next(r for r in recs if r["table_id"] == audits[0].table)
    assert rec["pvalues"] == {k: v for k, v in pvalues(audits[0].report).items() if v is not None}
    con = duckdb.connect(str(db), read_only=True)
    n_tests = con.execute("SELECT count(*) FROM audit_tests WHERE audit_id = ?", [rec["audit_id"]]).fetchall()[0][0]
    con.close()
    assert n_tests == len(audits[0].report["tables"][0]["battery"]["tests"])


def _dealer_log(path, n, seed, first=0, header=True, mode="wb"):
    sim = simulate_spins(EU, n, np.random.default_rng(seed), dealers=4, first_spin=first)
    with open(path, mode) as fh:
        write_spin_log(fh, EU, sim, table="T", first_spin=first, header=header)
    return sim


def test_trend_earlier_audits_and_homogeneity_cross_checked(tmp_path):
    log = tmp_path / "t.csv"
    sim1 = _dealer_log(log, 6000, 1)
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([log])
        a1 = audit_table(st, "T", seed=1, n_resamples=R, figures=False, outdir=tmp_path / "rep")
        assert a1.trend["window_homogeneity"]["applicable"] is False
        sim2 = _dealer_log(log, 4000, 2, first=6000, header=False, mode="ab")
        st.ingest([log])
        a2 = audit_table(st, "T", seed=1, n_resamples=R, figures=False, outdir=tmp_path / "rep", since="2026-01-03T18:40:00Z")
    # window 2 = spins from 6001 on (40 s apart from 2026-01-01T00:00:00Z)
    assert a2.window["n"] == 4000 and a2.window["first_ts"] == "2026-01-03T18:40:00"
    (earlier,) = a2.trend["earlier_audits"]
    assert earlier["audit_id"] == a1.audit_id and earlier["verdict"] == a1.verdict and earlier["pvalues"]["pocket_chisquare"] == pytest.approx(pvalues(a1.report)["pocket_chisquare"])
    h = a2.trend["window_homogeneity"]
    assert a2.trend["previous_window"]["kind"] == f"window of audit {a1.audit_id}"
    tab = np.stack([np.bincount(sim1.positions, minlength=37), np.bincount(sim2.positions, minlength=37)])
    chi2, p, dof, _ = stats.chi2_contingency(tab, correction=False)
    assert h["statistic"] == pytest.approx(chi2, rel=1e-12) and h["pvalue"] == pytest.approx(p, rel=1e-9) and h["df"] == dof
    d = a2.trend["dealer_homogeneity"]
    dtab = np.zeros((4, 37), dtype=int)
    np.add.at(dtab, (sim2.dealer, sim2.positions), 1)
    chi2, p, dof, _ = stats.chi2_contingency(dtab, correction=False)
    assert d["statistic"] == pytest.approx(chi2, rel=1e-12) and d["df"] == dof and d["details"]["groups"] == ["D1", "D2", "D3", "D4"]
    html = Path(a2.paths["html"]).read_text()
    assert "Audit trend" in html and "Earlier audits of this table" in html
    assert json.loads(Path(a2.paths["json"]).read_text())["audit"]["window_homogeneity"]["pvalue"] == pytest.approx(h["pvalue"])
    assert a2.trend["bias"]["n"] == 4000 and "best_arc" in a2.trend["bias"]


def test_windows_last_since_until(tmp_path):
    log = tmp_path / "t.csv"
    sim = _dealer_log(log, 3000, 3)
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([log])
        sp = st.spins("T", last=500)
        assert sp.n == 500 and sp.seq[0] == 2501
        sp = st.spins("T", since="2026-01-01T00:10:00Z", until="2026-01-01T01:00:00")
        assert sp.n == (3600 - 600) // 40 and sp.seq[0] == 16
        a = audit_table(st, "T", last=1000, seed=2, n_resamples=R, figures=False, outdir=None)
        assert a.report["tables"][0]["counts"] == np.bincount(sim.positions[-1000:], minlength=37).tolist()
        # the previous window of a first audit: the 1000 spins just before
        assert a.trend["previous_window"]["first_seq"] == 1001 and a.trend["previous_window"]["n"] == 1000


@pytest.mark.slow
def test_audit_cli_exit_code_report_and_all_parallel(tmp_path, cli):
    shared_file("data", "roulette-live-dealer", "live_roulette_spins.csv")  # skips without the shared folder
    log = tmp_path / "t.csv"
    _dealer_log(log, 3000, 4)
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([log])
        st.ingest([LIVE], columns=LIVE_COLUMNS)
    r = cli("audit", "--db", db, "--table", "T", "--seed", "3", "--resamples", "199", "--no-plots", "--out", tmp_path / "rep")
    assert "VERDICT:" in r.output and "trend: homogeneity across dealers: X²" in r.output
    with Store(db, read_only=True) as st:
        (rec,) = st.audits("T")
    assert r.exit_code == EXIT[rec["verdict"]]
    assert Path(rec["report_path"]).is_file()
    r1 = cli("audit", "--db", db, "--all", "--seed", "3", "--resamples", "199", "--no-plots", "--out", tmp_path / "r1")
    r2 = cli("audit", "--db", db, "--all", "--jobs", "2", "--seed", "3", "--resamples", "199", "--no-plots", "--out", tmp_path / "r2")
    assert r1.exit_code == r2.exit_code
    with Store(db, read_only=True) as st:
        recs = st.audits()
    assert len(recs) == 1 + 2 * 19
    first, second = recs[1:20], recs[20:]
    assert [(a["table_id"], a["pvalues"]) for a in first] == [(a["table_id"], a["pvalues"]) for a in second]
    r = cli("audit", "--db", db, "--table", "nope")
    assert r.exit_code == 3 and "not in store" in r.output
    r = cli("audit", "--db", db)
    assert r.exit_code == 2


def test_record_audits_in_one_transaction_gives_what_one_after_the_other_gives(tmp_path):
    """audit --all on a local pool records its tables after the last one in one transaction (issue 26 item 6):
    the same ids and rows as record_audit one table after the other; a failure in any records none."""
    from rngcert.collect.store import Store

    def rec(t):
        return {"table_id": t, "equipment": "european", "n": 10, "verdict": "PASS", "seed": "1", "alpha": 0.01}

    tests = [{"name": "chi_square", "requirement": "uniformity", "applicable": True, "statistic": 3.0, "pvalue": 0.5}]
    with Store(tmp_path / "a.duckdb") as a, Store(tmp_path / "b.duckdb") as b:
        one_by_one = [a.record_audit(rec(t), tests) for t in ("X", "Y", "Z")]
        together = b.record_audits([(rec(t), tests) for t in ("X", "Y", "Z")])
        assert one_by_one == together == [1, 2, 3]
        assert a.audits() == b.audits()
        with pytest.raises(KeyError):
            b.record_audits([(rec("W"), tests), (rec("V"), [{"requirement": "uniformity"}])])  # the second has no test name
        assert [r["audit_id"] for r in b.audits()] == [1, 2, 3]  # W was not recorded either
        assert b.con.execute("SELECT count(*) FROM audit_tests").fetchall()[0][0] == 3


def test_audit_of_a_numbered_permanence_list_sees_its_lines_as_certify_does(tmp_path):
    """The store kept no line structure of a permanence list: a list numbered '1 17', '2 22', ... (read two spins a
    line) was INCONCLUSIVE by certify but FAILed by audit, and the line-start artefact check never ran on stored
    lists. The audit reads the stored source and line of each spin and marks the line starts as certify does."""
    from rngcert.pipeline.audit import spinlog_from_store

    x = np.random.default_rng(11).integers(0, 37, 3000)
    p = tmp_path / "numbered.txt"
    p.write_text("\n".join(f"{i % 25 + 1} {v}" for i, v in enumerate(x)) + "\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([p])
        stored = st.spins("numbered")
        t = spinlog_from_store(stored, EU).tables["numbered"]
        a = audit_table(st, "numbered", seed=11, n_resamples=R, figures=False, outdir=tmp_path / "rep")
    c = certify_log([p], EU, seed=11, n_resamples=R, figures=False)
    ref = next(iter(read_spin_log(p, EU).tables.values()))
    assert np.array_equal(t.line_start, ref.line_start) and int(t.line_start.sum()) == 3000
    assert a.verdict == c.verdict == "INCONCLUSIVE" and pvalues(a.report) == pvalues(c.report)
    assert "the lines are numbered" in json.dumps(a.report["tables"][0]["integrity"])



@pytest.mark.parametrize(("option", "value"), [("--since", "2026-13-01"), ("--until", "31.01.2026"), ("--since", "yesterday")])
def test_a_window_that_is_no_date_is_a_usage_error(tmp_path, option, value):
    """--since/--until that are no ISO 8601 date: a usage error (exit 2) naming the option and value, as click
    gives for any malformed option, before the store is opened (it was exit 3 from deep in the audit)."""
    r = run_cli("audit", "--db", tmp_path / "none.duckdb", "--table", "T", option, value)
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '{option}': '{value}' is not an ISO 8601 date" in r.output
    assert not (tmp_path / "none.duckdb").exists()
