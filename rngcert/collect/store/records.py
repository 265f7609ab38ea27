"""Audit and alarm records: written in their own short transactions, read back oldest first."""

from __future__ import annotations

import json

from rngcert import __version__
from rngcert.collect.store.schema import _guarded, _rollback
from rngcert.errors import InputError


class RecordsMixin:
    """Audit and alarm records (part of :class:`~rngcert.collect.store.Store`)."""

    def _insert_record(self, kind: str, rec: dict, cols: list[str], rows=None, *, own: bool = True) -> int:
        """Insert one ``audits``/``alarms`` row (the next id, ``rec``'s ``cols``, the rngcert version) and, through
        ``rows(con, id)``, its child rows, in one short transaction (``own=False``: in the caller's); returns the id."""
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        if not own:
            return self._insert_row(con, kind, rec, cols, rows)
        con.execute("BEGIN TRANSACTION")
        try:
            rid = self._insert_row(con, kind, rec, cols, rows)
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (a failed COMMIT has ended the transaction: its error is the one to report)
            raise
        return rid

    @staticmethod
    def _insert_row(con, kind: str, rec: dict, cols: list[str], rows=None) -> int:
        """The inserts of :meth:`_insert_record`, in the transaction the caller opened."""
        rid = con.execute(f"SELECT coalesce(max({kind[:-1]}_id), 0) + 1 FROM {kind}").fetchall()[0][0]
        vals = [rid] + [rec.get(c) for c in cols] + [__version__]
        names = ", ".join([f"{kind[:-1]}_id", *cols, "rngcert"])
        con.execute(f"INSERT INTO {kind} ({names}) VALUES ({','.join('?' * len(vals))})", vals)
        if rows is not None:
            rows(con, rid)
        return int(rid)

    @_guarded
    def record_audit(self, rec: dict, tests: list[dict]) -> int:
        """Insert an audit record and its per-test rows; returns the audit id."""
        return self._audit_record(rec, tests)

    @_guarded
    def record_audits(self, records: list[tuple[dict, list[dict]]]) -> list[int]:
        """Insert several audit records (``(rec, tests)`` pairs, as :meth:`record_audit` takes one) in one
        transaction: one commit instead of one each (``audit --all`` on a local pool records its tables so, after
        the last); the ids are those :meth:`record_audit` would give one after the other. A failure records none."""
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            ids = self._audit_rows(con, records)
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (as _insert_record)
            raise
        return ids

    #: Columns of an audit record (besides its id and the rngcert version).
    _AUDIT_COLS = (
        "table_id", "equipment", "created_utc", "since", "until", "last_n", "first_seq", "last_seq", "first_ts", "last_ts",
        "n", "void", "verdict", "seed", "alpha", "n_resamples", "report_path", "pvalues", "bias", "homogeneity", "report_sha256",
    )
    #: Rows a statement of :meth:`_audit_rows` inserts at most (audits; their tests' rows twice as many): DuckDB binds a
    #: statement's parameters in about 17 us each up to 2,000 of them, in twice that at 10,000.
    _ROWS_A_STATEMENT = 100

    @staticmethod
    def _test_row(aid: int, t: dict) -> list:
        return [aid, t["name"], t["requirement"], t["applicable"], t.get("statistic"), t.get("df"), t.get("pvalue"), t.get("pvalue_holm"),
                t.get("method"), t.get("reason")]

    def _audit_rows(self, con, records: list[tuple[dict, list[dict]]]) -> list[int]:
        """The inserts of :meth:`record_audits`, in the caller's transaction: the ids and rows that
        :meth:`record_audit` gives one after the other (the next ids in order; every audit's row, then every
        test row in the same order), in a few multi-row statements instead of three a record (about 4.5 ms
        each: 4.5 s for 1,000 tables)."""
        first = int(con.execute("SELECT coalesce(max(audit_id), 0) + 1 FROM audits").fetchall()[0][0])
        ids = list(range(first, first + len(records)))
        tests = [self._test_row(aid, t) for aid, (_, ts) in zip(ids, records) for t in ts]  # (a test without a name: KeyError, nothing written)
        names = ", ".join(["audit_id", *self._AUDIT_COLS, "rngcert"])
        one = "(" + ",".join("?" * (len(self._AUDIT_COLS) + 2)) + ")"
        step = self._ROWS_A_STATEMENT
        for a in range(0, len(records), step):
            part = list(zip(ids[a : a + step], records[a : a + step]))
            vals = [v for aid, (rec, _) in part for v in [aid, *(rec.get(c) for c in self._AUDIT_COLS), __version__]]
            con.execute(f"INSERT INTO audits ({names}) VALUES " + ", ".join([one] * len(part)), vals)
        for a in range(0, len(tests), 2 * step):
            part = tests[a : a + 2 * step]
            con.execute("INSERT INTO audit_tests VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(part)), [v for r in part for v in r])
        return ids

    def _audit_record(self, rec: dict, tests: list[dict], own: bool = True) -> int:
        def test_rows(con, aid):
            if tests:  # one statement of every row (executemany ran one insert a row: 0.85 ms each)
                rows = [self._test_row(aid, t) for t in tests]
                con.execute("INSERT INTO audit_tests VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows)), [v for r in rows for v in r])

        return self._insert_record("audits", rec, list(self._AUDIT_COLS), rows=test_rows, own=own)

    def _records(self, kind: str, table: str | None) -> list[dict]:
        """Rows of ``audits``/``alarms`` (of one table, or all), oldest first, as dicts."""
        q = f"SELECT * FROM {kind}" + (" WHERE table_id = ?" if table else "") + f" ORDER BY {kind[:-1]}_id"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @_guarded
    def audits(self, table: str | None = None) -> list[dict]:
        """Audit records (oldest first), with ``pvalues``/``bias``/``homogeneity`` decoded."""
        out = self._records("audits", table)
        for d in out:
            for k in ("pvalues", "bias", "homogeneity"):
                d[k] = json.loads(d[k]) if d[k] else None
        return out

    @_guarded
    def record_alarm(self, rec: dict) -> int:
        """Insert an alarm record; returns the alarm id."""
        cols = ["table_id", "source", "created_utc", "spin_count", "spin_id", "ts", "log_evidence", "log_threshold", "alternative", "guarantee"]
        return self._insert_record("alarms", rec, cols)

    @_guarded
    def alarms(self, table: str | None = None) -> list[dict]:
        return self._records("alarms", table)
