"""A spin id with two different results (case c07's kind) gives the same sample whether the log is
certified or ingested and audited: neither result is used, both rows are rejected rows naming file,
line, column and reason, and the audit says so in a note; in one file or across two files.

Runtime budget: about 3 s.
"""

from __future__ import annotations

import numpy as np

from rngcert.collect.spinlog import read_spin_log
from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.audit import prepare_audit

EU = load_wheel("european")


def _log(path, n=600, *, extra=(), seed=3):
    """A log of ``n`` spins (ids 1..n) with ``extra`` rows (spin_id, result label) inserted after their id."""
    res = np.random.default_rng(seed).integers(0, 37, n).tolist()
    lines = ["spin_id,result"]
    for i, x in enumerate(res, start=1):
        lines.append(f"{i},{x}")
        lines += [f"{i},{lab}" for j, lab in extra if j == i]
    path.write_text("\n".join(lines) + "\n")
    return res


def test_c07_conflict_in_one_file_same_sample_as_certify(tmp_path):
    f = tmp_path / "log.csv"
    res5 = int(np.random.default_rng(3).integers(0, 37, 600)[4])
    _log(f, extra=[(5, res5), (5, (res5 + 1) % 37), (9, "x")])  # spin 5: a, a, b; after spin 9 an unreadable row
    log = read_spin_log(f, EU)
    certified = log.tables["log"].outcomes
    with Store(tmp_path / "s.duckdb") as st:
        (r,) = st.ingest([f])
        assert r.conflicts == 1
        work = prepare_audit(st, "log")
    audited = work["log"].tables["log"].outcomes
    assert audited.size == certified.size == 599  # spin 5 is in neither: its two results are not chosen between
    assert np.array_equal(audited, certified)
    assert any("1 spin_id(s) of table 'log' have conflicting results" in n and "neither result is used" in n for n in work["notes"])
    conf = [x for x in work["log"].rejected if x.reason.startswith("conflict:")]
    assert {(x.file, x.line, x.column) for x in conf} == {(str(f), 6, "result"), (str(f), 8, "result")}
    assert all("spin_id 5 of table log" in x.reason for x in conf)
    (src,) = work["log"].sources
    assert src.rejected == 3  # the unreadable row and both conflicting rows: read, but not used (as certify counts them)


def test_c07_conflict_across_files_is_left_out_and_listed(tmp_path, cli):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    res = _log(a)
    b.write_text(f"spin_id,result\n10,{(res[9] + 1) % 37}\n601,4\n")
    db = tmp_path / "s.duckdb"
    ing = cli("ingest", "--db", db, "--table", "T", a, b)
    assert ing.exit_code == 0, ing.output
    assert "kept the stored row" not in ing.stderr and "neither result is used" in ing.stderr
    with Store(db) as st:
        stored = [row[0] for row in st.con.execute("SELECT pos FROM spins WHERE spin_no = 10").fetchall()]
        sp = st.spins("T")
        work = prepare_audit(st, "T")
    assert len(stored) == 1  # the stored row is never overwritten nor deleted
    assert sp.n == 600 and sp.conflicted == 1  # spins 1..601 without spin 10
    assert any("conflicting results" in n for n in work["notes"])
    assert {(x.file, x.line) for x in work["log"].rejected} == {(str(a), 11), (str(b), 2)}
    assert sorted(s.path for s in work["log"].sources) == [str(a), str(b)]
    rej = cli("rejects", "--db", db, "--json")
    import json

    got = json.loads(rej.output)["rejects"]
    assert {(r["file"], r["line"], r["column"]) for r in got} == {(str(a), 11, "result"), (str(b), 2, "result")}
    assert all("neither result is used" in r["reason"] for r in got)
    # an audit of the last spins only does not report a conflict outside its window
    with Store(db) as st:
        assert st.spins("T", last=100).conflicted == 0


def test_many_conflicts_numeric_and_text_ids_are_each_left_out_once(tmp_path):
    """Thousands of spin ids with two results (two logs of one table whose results differ at every third id), with
    whole-number ids in one table and text ids in another: exactly those ids are left out of the audit, each with
    both its rows as rejected rows. (The conflicted ids are now picked by a semi-join: ``list_contains`` over the
    list of them, once a row, took 108 s for 149,000 conflicts among 500,000 spins; benchmarks/bench_conflicts.py.)"""
    rng = np.random.default_rng(11)
    n = 6000
    first = rng.integers(0, 37, n)
    second = first.copy()
    flip = np.arange(n) % 3 == 0
    second[flip] = (second[flip] + 5) % 37
    paths = []
    for name, res in (("a", first), ("b", second)):
        for table, prefix in (("N1", ""), ("X1", "R")):  # (a log's ids are whole numbers or text, not both)
            p = tmp_path / f"{name}-{table}.csv"
            p.write_text("spin_id,table,result\n" + "\n".join(f"{prefix}{i + 1},{table},{r}" for i, r in enumerate(res.tolist())) + "\n")
            paths.append(p)
    db = tmp_path / "s.duckdb"
    from rngcert.collect.store import ingest_files

    ingest_files(db, paths)
    for table, ids in (("N1", [str(i + 1) for i in np.flatnonzero(flip)]), ("X1", [f"R{i + 1}" for i in np.flatnonzero(flip)])):
        with Store(db, read_only=True) as st:
            s = st.spins(table)
        kept = set(map(str, s.spin_id.to_pylist()))
        assert len(kept) == n - flip.sum() and not kept & set(ids) and s.conflicted == flip.sum()
        assert len(s.conflict_rows) == 2 * flip.sum()  # both rows of each, as rejected rows
        assert {r.reason.split()[2] for r in s.conflict_rows} == set(ids) and {r.file for r in s.conflict_rows} == {str(p) for p in paths if table in p.name}
