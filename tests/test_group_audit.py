"""Error over tables and time (issue 23 item 5): expected false FAILs of a group, Holm / BH across
tables, alpha-spending over a table's audits, and the group statement of `rngcert audit --all`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rngcert.cli import EXIT
from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.group_audit import group_statement
from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log
from rngcert.stats.group import benjamini_hochberg, expected_false_fails, group_control, spending_level, spent_pvalue

EU = load_wheel("european")


def test_spending_sums_to_alpha_and_matches_the_spent_pvalue():
    lv = spending_level(0.01, np.arange(1, 200_001))
    assert lv.sum() < 0.01 and lv.sum() == pytest.approx(0.01, rel=1e-5)
    assert spending_level(0.01, 1) == pytest.approx(0.01 * 6 / math.pi**2)
    for i in (1, 3, 12):
        p = spending_level(0.01, i)
        assert spent_pvalue(p * 0.999, i) <= 0.01 < spent_pvalue(p * 1.001, i)
    with pytest.raises(ValueError):
        spending_level(0.01, 0)


def test_holm_bh_and_none_across_tables():
    p = np.array([0.001, 0.008, 0.012, 0.04, 0.5])
    assert group_control(p, 0.05, "none")[0].tolist() == [True, True, True, True, False]
    assert group_control(p, 0.05, "holm")[0].tolist() == [True, True, True, False, False]  # 0.001*5, 0.008*4, 0.012*3; 0.04*2 > 0.05
    rej, adj = benjamini_hochberg(p, 0.05)
    assert rej.tolist() == [True, True, True, True, False]  # 0.04 <= 4/5 * 0.05
    assert adj[0] == pytest.approx(0.005) and adj[3] == pytest.approx(0.05)
    e = expected_false_fails(200, 0.01, 12)
    assert e["per_run"] == pytest.approx(2.0) and e["per_year"] == pytest.approx(24.0) and e["p_any_per_run"] == pytest.approx(1 - 0.99**200)


def _report(table, p, earlier, verdict="PASS"):
    return {"tables": [{"table": table, "min_holm": p, "battery": {"verdict": verdict}}], "audit": {"earlier_audits": [{}] * earlier}}


def test_group_statement_spends_alpha_over_a_tables_audits():
    reps = [_report("A", 0.004, 0), _report("B", 0.004, 5, "FAIL"), _report("C", 0.6, 0)] + [_report(f"F{i}", 0.5, 0) for i in range(7)]
    g = group_statement(reps, alpha=0.01)
    by = {x["table"]: x for x in g["tables"]}
    assert by["B"]["audit_number"] == 6 and by["B"]["level"] == pytest.approx(0.01 * 6 / (math.pi**2 * 36))
    assert g["named"] == [] and "no table is named" in g["statement"]  # 0.004 at the first audit: 0.0066 spent, above 0.01/10
    assert g["expected"]["per_run"] == pytest.approx(0.1) and "requires per-table tests" in g["statement"]
    g2 = group_statement([_report("A", 1e-6, 0), _report("B", 0.3, 0)], alpha=0.01, control="bh")
    assert g2["named"] == ["A"]
    g3 = group_statement(reps, alpha=0.01, control="none", time_control=False)
    assert set(g3["named"]) == {"A", "B"}  # per-table at alpha: both


def test_audit_all_prints_and_writes_the_group_statement(tmp_path, cli):
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        for k, bias in enumerate((WheelBias(), WheelBias(), WheelBias(pockets=((17, 1.6),)))):
            sim = simulate_spins(EU, 8000, stream(11, "group-audit", k), bias=bias)
            p = tmp_path / f"t{k}.csv"
            write_spin_log(p, EU, sim, table=f"T{k}")
            st.ingest([p])
    r = cli("audit", "--db", db, "--all", "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "rep", "--workers", 1)
    assert r.exit_code == EXIT["FAIL"], r.output
    line = next(ln for ln in r.output.splitlines() if ln.startswith("GROUP:"))
    assert "3 table(s) audited at alpha = 0.01" in line and "0.03 false FAIL(s) a run" in line and "0.36 a year" in line
    assert "1 table(s) named: T2" in line and "Holm" in line
    (f,) = (tmp_path / "rep").glob("audit-group-*.json")
    g = json.loads(f.read_text())
    assert g["control"] == "holm" and [x["audit_number"] for x in g["tables"]] == [1, 1, 1]
    r = cli("audit", "--db", db, "--all", "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "rep2", "--workers", 1,
            "--group-control", "bh", "--audits-per-year", 4)
    line = next(ln for ln in r.output.splitlines() if ln.startswith("GROUP:"))
    assert "Benjamini-Hochberg" in line and "0.12 a year" in line
    g = json.loads(next((tmp_path / "rep2").glob("audit-group-*.json")).read_text())
    assert [x["audit_number"] for x in g["tables"]] == [2, 2, 2]  # the first run's audits are in the store's history
