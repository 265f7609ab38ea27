"""Audit and alarm records: written in their own short transactions, read back oldest first."""

from __future__ import annotations

import json

from rngcert import __version__
from rngcert.collect.store.schema import _guarded, _rollback
from rngcert.errors import InputError


class RecordsMixin:
    """Audit and alarm records (part of :class:`~rngcert.collect.store.Store`)."""

    @_guarded
    def record_audit(self, rec: dict, tests: list[dict]) -> int:
        """Insert an audit record and its per-test rows; returns the audit id."""
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            aid = con.execute("SELECT coalesce(max(audit_id), 0) + 1 FROM audits").fetchall()[0][0]
            cols = [
                "table_id", "equipment", "created_utc", "since", "until", "last_n", "first_seq", "last_seq", "first_ts", "last_ts",
                "n", "void", "verdict", "seed", "alpha", "n_resamples", "report_path", "pvalues", "bias", "homogeneity", "report_sha256",
            ]
            vals = [aid] + [rec.get(c) for c in cols] + [__version__]
            names = ", ".join(["audit_id", *cols, "rngcert"])
            con.execute(f"INSERT INTO audits ({names}) VALUES ({','.join('?' * len(vals))})", vals)
            if tests:
                con.executemany(
                    "INSERT INTO audit_tests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [[aid, t["name"], t["requirement"], t["applicable"], t.get("statistic"), t.get("df"), t.get("pvalue"), t.get("pvalue_holm"), t.get("method"), t.get("reason")] for t in tests],
                )
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (a failed COMMIT has ended the transaction: its error is the one to report)
            raise
        return int(aid)

    @_guarded
    def audits(self, table: str | None = None) -> list[dict]:
        """Audit records (oldest first), with ``pvalues``/``bias``/``homogeneity`` decoded."""
        q = "SELECT * FROM audits" + (" WHERE table_id = ?" if table else "") + " ORDER BY audit_id"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(names, r))
            for k in ("pvalues", "bias", "homogeneity"):
                d[k] = json.loads(d[k]) if d[k] else None
            out.append(d)
        return out

    @_guarded
    def record_alarm(self, rec: dict) -> int:
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            aid = con.execute("SELECT coalesce(max(alarm_id), 0) + 1 FROM alarms").fetchall()[0][0]
            cols = ["table_id", "source", "created_utc", "spin_count", "spin_id", "ts", "log_evidence", "log_threshold", "alternative", "guarantee"]
            vals = [aid] + [rec.get(c) for c in cols] + [__version__]
            con.execute(f"INSERT INTO alarms VALUES ({','.join('?' * len(vals))})", vals)
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (a failed COMMIT has ended the transaction: its error is the one to report)
            raise
        return int(aid)

    @_guarded
    def alarms(self, table: str | None = None) -> list[dict]:
        q = "SELECT * FROM alarms" + (" WHERE table_id = ?" if table else "") + " ORDER BY alarm_id"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
