"""An audit's previous window is the spins before this window in the table's order (spin ids), not in the order the
logs were ingested: a month ingested late (a backfill) is neither "no earlier spins" nor the window after."""

from __future__ import annotations

import numpy as np
from scipy import stats

from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.audit import audit_table
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
R = 199


def _log(path, n, seed, first):
    sim = simulate_spins(EU, n, np.random.default_rng(seed), first_spin=first)
    with open(path, "wb") as fh:
        write_spin_log(fh, EU, sim, table="T", first_spin=first)
    return sim


def test_previous_window_follows_spin_order_not_ingest_order(tmp_path):
    may = _log(tmp_path / "may.csv", 3000, 1, 0)  # spins 1..3000, 40 s apart from 2026-01-01T00:00:00Z
    june = _log(tmp_path / "june.csv", 3000, 2, 3000)  # spins 3001..6000
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([tmp_path / "june.csv"])
        st.ingest([tmp_path / "may.csv"])  # the earlier month, ingested after the later one
        # the later month: its previous window is the earlier month, though that was ingested after it
        a = audit_table(st, "T", since="2026-01-02T09:20:00Z", seed=1, n_resamples=R, figures=False, outdir=None, record=False)
        assert a.window["n"] == 3000
        h = a.trend["window_homogeneity"]
        assert h.get("applicable", True) is not False and a.trend["previous_window"]["n"] == 3000
        tab = np.stack([np.bincount(may.positions, minlength=37), np.bincount(june.positions, minlength=37)])
        assert h["statistic"] == stats.chi2_contingency(tab, correction=False)[0]
        # the earlier month has no spins before it: no previous window (not the later month, ingested first)
        b = audit_table(st, "T", until="2026-01-02T09:20:00Z", seed=1, n_resamples=R, figures=False, outdir=None)
        assert b.window["n"] == 3000
        assert b.trend["window_homogeneity"]["applicable"] is False
        # an earlier audit of the later month is no previous window of the earlier month
        c = audit_table(st, "T", since="2026-01-02T09:20:00Z", seed=1, n_resamples=R, figures=False, outdir=None)
        d = audit_table(st, "T", until="2026-01-02T09:20:00Z", seed=1, n_resamples=R, figures=False, outdir=None, record=False)
        assert c.trend["previous_window"]["kind"] == f"window of audit {b.audit_id}"
        assert d.trend["window_homogeneity"]["applicable"] is False


def test_last_window_leaves_out_a_conflict_before_it_ingested_late(tmp_path):
    _log(tmp_path / "may.csv", 3000, 1, 0)
    _log(tmp_path / "june.csv", 3000, 2, 3000)
    lines = (tmp_path / "may.csv").read_text().splitlines(keepends=True)
    head = lines[0].rstrip("\n").replace("\"", "").split(",")
    row = lines[10].rstrip("\n").split(",")  # spin 10
    r = head.index("result")
    row[r] = str((int(row[r]) + 1) % 37)
    (tmp_path / "may-edited.csv").write_text(lines[0] + ",".join(row) + "\n")
    with Store(tmp_path / "s.duckdb") as st:
        for name in ("june.csv", "may.csv", "may-edited.csv"):  # the earlier month after the later one, then an edit of it
            st.ingest([tmp_path / name])
        whole = st.spins("T")
        assert whole.conflicted == 1
        tail = st.spins("T", last=1000)  # spins 5001..6000: spin 10's conflict is no part of them
        assert tail.spin_id.to_pylist()[0] == "5001"
        assert tail.conflicted == 0 and tail.conflict_rows == []
        head_ = st.spins("T", last=5995)  # spins 6..6000 (spin 10 left out): its conflict is in the window
        assert head_.conflicted == 1 and len(head_.conflict_rows) == 2


def _gap_notes(a):
    return [n for n in a.report["tables"][0].get("notes", []) + a.report.get("notes", []) if "missing between" in str(n)]


def test_gap_note_counts_the_window_ids_not_the_seq_range(tmp_path):
    _log(tmp_path / "may.csv", 3000, 1, 0)
    _log(tmp_path / "june.csv", 3000, 2, 3000)
    lines = (tmp_path / "may.csv").read_text().splitlines(keepends=True)
    (tmp_path / "may.csv").write_text("".join(lines[:100] + lines[110:]))  # spins 100..109 never carried
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([tmp_path / "june.csv"])
        st.ingest([tmp_path / "may.csv"])  # seq: june 1..3000, may after it
        # spins 2941..6000: no gap among them (the window's seq range spans the whole table)
        a = audit_table(st, "T", since="2026-01-02T08:40:00Z", seed=1, n_resamples=R, figures=False, outdir=None, record=False)
        assert a.window["n"] == 3060
        assert _gap_notes(a) == []
        b = audit_table(st, "T", seed=1, n_resamples=R, figures=False, outdir=None, record=False)
        assert [str(n).split(" (gaps")[0] for n in _gap_notes(b)] == ["10 spin_id(s) missing between 1 and 6000"]


def test_an_earlier_audit_whose_seq_range_spans_other_spins_is_no_previous_window(tmp_path):
    _log(tmp_path / "may.csv", 3000, 1, 0)
    _log(tmp_path / "june.csv", 3000, 2, 3000)
    _log(tmp_path / "july.csv", 1000, 3, 6000)
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([tmp_path / "june.csv"])
        st.ingest([tmp_path / "may.csv"])
        # spins 2941..6000: its seq range (june 1..3000, may's last 60 after them) spans all of may
        a = audit_table(st, "T", since="2026-01-02T08:40:00Z", seed=1, n_resamples=R, figures=False, outdir=None)
        assert a.window["n"] == 3060
        st.ingest([tmp_path / "july.csv"])
        b = audit_table(st, "T", since="2026-01-03T18:40:00Z", seed=1, n_resamples=R, figures=False, outdir=None, record=False)
        assert b.window["n"] == 1000
        prev = b.trend["previous_window"]
        assert prev["kind"] != f"window of audit {a.audit_id}" and prev["n"] == 1000, prev
