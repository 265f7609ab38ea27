"""Export and import: the spins as Parquet partitioned by table and day with their provenance,
and such a folder read back, checked against its manifest (see :mod:`rngcert.collect.store`)."""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
from pathlib import Path
from typing import Callable, Sequence

import pyarrow as pa

import rngcert.scratch as scratch
from rngcert import __version__
from rngcert.collect.store.ingest import IngestResult, whole_line_reject
from rngcert.collect.store.schema import PARTIAL_SOURCE_KEY, _guarded, _now, storage_error
from rngcert.errors import InputError, StorageError

#: Export layout version (``DIR/_rngcert/manifest.json``).
EXPORT_FORMAT = 3  # 2: conflicts.jsonl; every file's SHA-256 and rows, spins per source in the manifest; 3: the ``conflict`` column


def _export_files(tmp: Path) -> list[dict]:
    """Every file of the export under ``tmp`` with its SHA-256 and rows (lines of the .jsonl files), checked by ingest."""
    files = []
    for p in sorted(tmp.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(tmp).as_posix()
        if p.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = int(pq.ParquetFile(p).metadata.num_rows)
        else:
            with open(p, "rb") as fh:
                rows = sum(1 for _ in fh)
        files.append({"path": rel, "sha256": _file_sha256(p), "rows": rows})
    return files


def _export_error(folder: Path, exc: BaseException) -> None:
    """Raise the StorageError of a failed export, when it is one (a full disk, a storage fault); return otherwise."""
    # the export's own disk: an OSError, or DuckDB's Parquet writer's IOException (which the
    # store's guard would take for the store's disk)
    if "no space left" in str(exc).lower() or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        raise StorageError(f"export to {folder} failed, nothing was written: the disk holding {folder.parent} is full ({exc}); "
                           "free space there (or export elsewhere) and run the command again") from exc
    if isinstance(exc, OSError):
        err = storage_error(folder, exc)
        if err is not None:
            raise StorageError(f"export to {folder} failed, nothing was written: {err}") from exc


def _check_listed_files(folder: Path, manifest: dict, fmt_version: int, mpath: Path, bad) -> list[Path]:
    """Step 1 of :meth:`ExportMixin.ingest_parquet`: the data files of an export, each file the manifest lists checked (there, with
    its SHA-256) and no data file it does not list."""
    listed = manifest.get("files")
    if fmt_version >= 2:
        if not isinstance(listed, list):
            raise bad(f"{mpath} lists no files")
        missing, changed = [], []
        for f in listed:
            p = folder / f["path"]
            if not p.is_file():
                missing.append(f"{p} ({f.get('rows')} row(s))")
            elif _file_sha256(p) != f["sha256"]:
                changed.append(str(p))
        if missing:
            raise bad(f"{len(missing)} file(s) of the manifest are missing: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
        if changed:
            raise bad(f"{len(changed)} file(s) differ from their SHA-256 in the manifest: {', '.join(changed[:10])}{' …' if len(changed) > 10 else ''}")
        data_files = [folder / f["path"] for f in listed if f["path"].endswith(".parquet") and not f["path"].startswith("_rngcert/")]
        extra = sorted(
            str(p) for p in folder.rglob("*.parquet")
            if not p.relative_to(folder).as_posix().startswith("_rngcert/") and p.relative_to(folder).as_posix() not in {f["path"] for f in listed}
        )
        if extra:
            raise bad(f"{len(extra)} data file(s) not in the manifest: {', '.join(extra[:10])}")
    else:  # format 1: no checksums; the counts below are still checked
        data_files = sorted(p for p in folder.rglob("*.parquet") if not p.relative_to(folder).as_posix().startswith("_rngcert/"))
    return data_files


def _read_export_meta(meta: Path, manifest: dict, fmt_version: int, bad) -> tuple:
    """The sources, rejects and conflicts files of an export, checked against the manifest and each other; returns (sources,
    rejects by source SHA-256, conflicts by source SHA-256, the sources' SHA-256s)."""
    def jsonl(name: str, need: bool) -> list[dict]:
        p = meta / name
        if not p.is_file():
            if need:
                raise bad(f"{p} is missing")
            return []
        try:
            return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
        except ValueError as exc:
            raise bad(f"{p}: {exc}") from None

    sources = jsonl("sources.jsonl", True)
    rejects = jsonl("rejects.jsonl", False)
    conflicts = jsonl("conflicts.jsonl", fmt_version >= 2)
    for name, got, key in (("sources.jsonl", sources, "sources"), ("rejects.jsonl", rejects, "rejects"), ("conflicts.jsonl", conflicts, "conflicts")):
        if key in manifest and len(got) != int(manifest[key]):
            raise bad(f"{meta / name} has {len(got)} row(s), the manifest lists {manifest[key]}")
    rejects_by_sha: dict[str, list[dict]] = {}
    for r in rejects:
        rejects_by_sha.setdefault(r.get("source_sha256"), []).append(r)
    conflicts_by_sha: dict[str, list[dict]] = {}
    for r in conflicts:
        conflicts_by_sha.setdefault(r.get("source_sha256"), []).append(r)
    shas = {s_["sha256"] for s_ in sources}
    orphans = sorted({str(k) for k in list(rejects_by_sha) + list(conflicts_by_sha) if k not in shas})
    if orphans:
        raise bad(f"rejected rows or conflicts of source(s) not in {meta / 'sources.jsonl'}: {', '.join(orphans[:5])}")
    keyless = [f"table {c.get('table_id')} spin {c.get('spin_id')}" for c in conflicts if c.get("spin_no") is None or c.get("spin_label") is None]
    if keyless:
        raise bad(f"{meta / 'conflicts.jsonl'}: conflict(s) without the stored spin's key: {', '.join(keyless[:5])}")
    return sources, rejects_by_sha, conflicts_by_sha, shas


def _check_exported_counts(reader, data_files: list[Path], manifest: dict, shas: set, meta: Path, bad) -> None:
    """Step 2 of :meth:`ExportMixin.ingest_parquet`: the view ``exported`` over the data files, whose spins per source and per
    table must agree with the manifest."""
    if data_files:
        flist = ", ".join("'" + str(p).replace("'", "''") + "'" for p in data_files)
        reader.execute(f"CREATE VIEW exported AS SELECT * FROM read_parquet([{flist}], hive_partitioning = true, hive_types_autocast = false)").fetchall()
    else:
        reader.execute(
            """CREATE VIEW exported AS SELECT NULL::VARCHAR AS table_id, NULL::BIGINT AS spin_no, NULL::VARCHAR AS spin_label,
                      NULL::BIGINT AS seq, NULL::TIMESTAMP AS ts, NULL::SMALLINT AS pos, NULL::SMALLINT AS sym, NULL::VARCHAR AS dealer,
                      NULL::TINYINT AS direction, NULL::SMALLINT AS release, NULL::BOOLEAN AS void, NULL::BOOLEAN AS conflict, NULL::INTEGER AS line,
                      NULL::VARCHAR AS equipment, NULL::VARCHAR AS source_sha256 WHERE false"""
        ).fetchall()
    got_src = dict(reader.execute("SELECT source_sha256, count(*) FROM exported GROUP BY 1").fetchall())
    got_tab = {r[0]: (r[1], r[2]) for r in reader.execute("SELECT table_id, count(*) FILTER (WHERE NOT void), count(*) FILTER (WHERE void) FROM exported GROUP BY 1").fetchall()}
    unknown = sorted(str(k) for k in got_src if k not in shas)
    if unknown:
        raise bad(f"spins of source(s) not in {meta / 'sources.jsonl'}: {', '.join(unknown[:5])}")
    short = []
    if "spins" in manifest and sum(got_src.values()) != int(manifest["spins"]):
        short.append(f"{sum(got_src.values())} spins read, the manifest lists {manifest['spins']}")
    for t in manifest.get("tables", []):
        want = (int(t.get("spins") or 0), int(t.get("void") or 0))
        if got_tab.get(t["table_id"], (0, 0)) != want:
            short.append(f"table {t['table_id']}: {sum(got_tab.get(t['table_id'], (0, 0)))} spins read, the manifest lists {sum(want)}")
    for ps in manifest.get("per_source", []):
        if got_src.get(ps["sha256"], 0) != int(ps["spins"]):
            short.append(f"source {ps['path']} (sha256 {ps['sha256'][:16]}…): {got_src.get(ps['sha256'], 0)} spins read, the manifest lists {ps['spins']}")
    if short:
        raise bad("; ".join(short[:10]) + (" …" if len(short) > 10 else ""))


def _check_conflict_column(reader, conflicts_by_sha: dict, fmt_version: int, meta: Path, bad) -> None:
    """Step 2 of :meth:`ExportMixin.ingest_parquet` (format 3 on): the spins the data marks ``conflict`` are exactly the stored
    spins of the conflicts in ``conflicts.jsonl`` (by table and spin key); they are stored again with their conflicts, so an
    audit of the copy uses neither result, as the column says."""
    if fmt_version < 3:
        return
    cols = {r[0] for r in reader.execute("DESCRIBE exported").fetchall()}
    if "conflict" not in cols:
        raise bad(f"the data files have no 'conflict' column (export format {fmt_version})")
    marked = {tuple(r) for r in reader.execute("SELECT DISTINCT table_id, spin_no, spin_label FROM exported WHERE conflict").fetchall()}
    listed = {(c["table_id"], c["spin_no"], c["spin_label"]) for cs in conflicts_by_sha.values() for c in cs}
    unlisted, unmarked = sorted(marked - listed, key=str), sorted(listed - marked, key=str)
    if unlisted or unmarked:
        def name(k):
            return f"table {k[0]} spin {k[2] or k[1]}"
        what = ([f"{len(unlisted)} spin(s) marked conflict in the data without a conflict in {meta / 'conflicts.jsonl'} "
                 f"({', '.join(map(name, unlisted[:5]))})"] if unlisted else []) + \
               ([f"{len(unmarked)} conflict(s) of {meta / 'conflicts.jsonl'} whose stored spin is not marked conflict in the data "
                 f"({', '.join(map(name, unmarked[:5]))})"] if unmarked else [])
        raise bad("; ".join(what))


def _with_conflicts(incoming: pa.Table, confs: list[dict]) -> pa.Table:
    """A source's exported spins followed by its conflicts."""
    if confs:
        # a conflict is a row of this source that the store did not keep: it goes in again, after
        # the source's spins, and the rules of ingest record it as the same conflict again
        k = len(confs)
        cols = {
            "table_id": [c["table_id"] for c in confs], "spin_no": [c["spin_no"] for c in confs],
            "spin_label": [c["spin_label"] for c in confs], "ord": list(range(len(incoming), len(incoming) + k)),
            "ts": [None] * k, "pos": [c["new_pos"] for c in confs], "sym": [c["new_sym"] for c in confs], "dealer": [None] * k,
            "direction": [None] * k, "release": [None] * k, "void": [c["new_void"] for c in confs], "line": [c["line"] for c in confs],
        }
        incoming = pa.concat_tables([incoming, pa.table({f.name: pa.array(cols[f.name], f.type) for f in incoming.schema}, schema=incoming.schema)])
    return incoming


def _export_rejects(rows: list[dict]) -> tuple[list, pa.Table]:
    """A source's exported rejected rows, as RejectedRow and as the store's rejects table."""
    from rngcert.collect.spinlog import RejectedRow

    rej = [RejectedRow(r["file"], r["line"], r["column"], r["reason"], r["text"]) for r in rows]
    rej_tbl = pa.table(
        {
            "file": pa.array([r.file for r in rej], type=pa.string()), "line": pa.array([r.line for r in rej], type=pa.int32()),
            "column": pa.array([r.column for r in rej], type=pa.string()), "reason": pa.array([r.reason for r in rej], type=pa.string()),
            "text": pa.array([r.text for r in rej], type=pa.string()),
        }
    )
    return rej, rej_tbl


class ExportMixin:
    """Parquet export and import (part of :class:`~rngcert.collect.store.Store`)."""

    @_guarded
    def export_parquet(self, folder: str | Path, *, tables: Sequence[str] | None = None, on_stale: Callable[[Path, int, bool], None] | None = None) -> dict:
        """Write the spins as Parquet partitioned by table and day, with every row's provenance.

        Layout (Hive partitioning, read as one data set by Spark, Dask and DuckDB, e.g.
        ``read_parquet('DIR/*/*/*.parquet', hive_partitioning = true)``)::

            DIR/table_id=<table>/day=<YYYY-MM-DD>/data_0.parquet   (day=__HIVE_DEFAULT_PARTITION__: no timestamp)
            DIR/_rngcert/manifest.json    format, store schema, tables and their wheels, row counts
            DIR/_rngcert/sources.jsonl    one line per ingested source (path, SHA-256, counts)
            DIR/_rngcert/rejects.jsonl    the rejected rows (file, line, column, reason, text)
            DIR/_rngcert/conflicts.jsonl  the conflicts of the tables (both versions, both sources by SHA-256)

        Every source of the tables is exported, including one that added no spin (only
        duplicates, conflicts or rejects); the manifest lists every file's SHA-256 and rows and
        the spins, rejects and conflicts of each source.

        A spin id stored with two results (a conflict) is used by neither result: its stored row is
        exported with ``conflict`` true (the other result is in ``conflicts.jsonl``), so a reader
        counts what audits count with ``WHERE NOT conflict``.

        Columns of the spins: ``spin_id`` (text), ``spin_no``, ``spin_label``, ``seq``, ``ts``
        (UTC), ``result`` (the pocket label, or the symbol), ``pos``, ``sym``, ``dealer``,
        ``direction`` (0 cw, 1 ccw), ``release``, ``void``, ``conflict``, ``equipment``, ``source_sha256``,
        ``source_path``, ``line``; the partition columns ``table_id`` and ``day`` come from the
        folder names.

        Parameters
        ----------
        folder : path
            Must not exist yet, or be empty. The export is written to a sibling temporary
            folder and renamed at the end, so a failed export leaves no partial folder.
        tables : sequence of str, optional
            Only these tables (default: all).
        on_stale : callable, optional
            ``on_stale(path, pid, removed)`` for each temporary folder of an earlier export to the same folder whose process
            no longer runs (killed by SIGKILL or a power cut, which leave it behind); it is removed first (``removed``:
            whether it is gone).

        Returns
        -------
        dict
            The manifest (also written to ``_rngcert/manifest.json``).

        Raises
        ------
        InputError
            The folder exists and is not empty; an unknown table.
        StorageError
            Full disk (the temporary folder is removed) or damaged store.
        """
        folder = Path(folder)
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise InputError(f"{folder} exists and is not an empty folder: give a new folder for the export")
        known = {t["table"]: t for t in self.tables()}
        chosen = list(known) if tables is None else list(tables)
        for t in chosen:
            if t not in known:
                raise InputError(f"table {t!r} is not in store {self.path}; tables: {', '.join(sorted(known)[:20]) or '(none)'}")
        tmp = folder.parent / f".{folder.name}.rngcert-export-{_host()}-{os.getpid()}"
        scratch.remove(tmp)
        _remove_stale_exports(folder, on_stale)
        try:
            tmp.mkdir(parents=True)
            scratch.keep(tmp)
            con = self.con.cursor()
            try:
                self._export_spins(con, tmp, chosen, known)
                meta = tmp / "_rngcert"
                meta.mkdir()
                srcs, rej_rows, conf_rows, per_source = self._export_provenance(con, meta)
                n = int(sum(per_source.values()))
            finally:
                con.close()
            files = _export_files(tmp)
            manifest = self._export_manifest(chosen, known, srcs, per_source, rej_rows, conf_rows, files, n)
            (meta / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            if folder.exists():
                folder.rmdir()
            os.replace(tmp, folder)
            scratch.forget(tmp)
        except BaseException as exc:
            scratch.remove(tmp)
            _export_error(folder, exc)
            raise
        return manifest

    def _export_spins(self, con, tmp: Path, chosen: list, known: dict) -> None:
        """The spins of the chosen tables, with their readable result, as Parquet partitioned by table and day under ``tmp``."""
        from rngcert.equipment.wheel import load_wheel

        # labels of every wheel in use, for the readable `result` column
        lab_rows = []
        for t in chosen:
            eq = known[t]["equipment"]
            w = load_wheel(eq)
            if w.order_known:
                lab_rows += [(t, "pos", i, str(lab)) for i, lab in enumerate(w.position_space().labels)]
            lab_rows += [(t, "sym", i, str(sym)) for i, sym in enumerate(w.symbols)] if getattr(w, "symbols", None) else []
        labels = pa.table(
            {
                "table_id": pa.array([r[0] for r in lab_rows], pa.string()), "kind": pa.array([r[1] for r in lab_rows], pa.string()),
                "code": pa.array([r[2] for r in lab_rows], pa.int16()), "label": pa.array([r[3] for r in lab_rows], pa.string()),
            }
        )
        con.register("labels_arrow", labels)
        con.register("chosen_arrow", pa.table({"table_id": pa.array(chosen, pa.string())}))
        q = """SELECT s.table_id, CAST(s.ts AS DATE) AS day,
                      CASE WHEN s.spin_label = '' THEN CAST(s.spin_no AS VARCHAR) ELSE s.spin_label END AS spin_id,
                      s.spin_no, s.spin_label, s.seq, s.ts, coalesce(lp.label, ls.label) AS result, s.pos, s.sym, s.dealer,
                      s.direction, s.release, s.void, (cf.spin_id IS NOT NULL) AS conflict, t.equipment, src.sha256 AS source_sha256,
                      src.path AS source_path, s.line
               FROM spins s JOIN chosen_arrow c USING (table_id) JOIN tables t USING (table_id) JOIN sources src USING (source_id)
               LEFT JOIN (SELECT DISTINCT table_id, spin_id FROM conflicts) cf ON cf.table_id = s.table_id
                    AND cf.spin_id = (CASE WHEN s.spin_label = '' THEN CAST(s.spin_no AS VARCHAR) ELSE s.spin_label END)
               LEFT JOIN labels_arrow lp ON lp.table_id = s.table_id AND lp.kind = 'pos' AND lp.code = s.pos
               LEFT JOIN labels_arrow ls ON ls.table_id = s.table_id AND ls.kind = 'sym' AND ls.code = s.sym
               ORDER BY s.seq"""
        target = str(tmp).replace("'", "''")
        con.execute(f"COPY ({q}) TO '{target}' (FORMAT PARQUET, PARTITION_BY (table_id, day), COMPRESSION zstd)").fetchall()

    def _export_provenance(self, con, meta: Path) -> tuple:
        """sources.jsonl, rejects.jsonl and conflicts.jsonl of the chosen tables under ``meta``; returns (sources, reject rows,
        conflict rows, spins per source id)."""
        # every source of the chosen tables: its spins or conflicts are in them, or it left
        # neither (only duplicates and rejects: its table is unknown, so it goes with every export)
        src_ids = {
            r[0]
            for r in con.execute(
                """SELECT source_id FROM sources src
                   WHERE EXISTS (SELECT 1 FROM spins s JOIN chosen_arrow USING (table_id) WHERE s.source_id = src.source_id)
                      OR EXISTS (SELECT 1 FROM conflicts c JOIN chosen_arrow USING (table_id) WHERE c.source_id = src.source_id)
                      OR (NOT EXISTS (SELECT 1 FROM spins s WHERE s.source_id = src.source_id)
                          AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.source_id = src.source_id))"""
            ).fetchall()
        }
        srcs = [r for r in self.sources() if r["source_id"] in src_ids]
        part = dict(con.execute("SELECT substr(key, ?), value FROM meta WHERE starts_with(key, ?)",
                                [len(PARTIAL_SOURCE_KEY) + 1, PARTIAL_SOURCE_KEY]).fetchall())
        for r in srcs:  # a source this store holds in part (from an export of some tables) is in part in the copy too
            if r["sha256"] in part:
                r["partial_tables"] = part[r["sha256"]]
        with open(meta / "sources.jsonl", "w", encoding="utf-8") as fh:
            for r in srcs:
                fh.write(json.dumps(_jsonable_row(r)) + "\n")
        sha_of = {r["source_id"]: r["sha256"] for r in srcs}
        con.register("srcids_arrow", pa.table({"source_id": pa.array(sorted(src_ids), pa.int32())}))
        rej_rows = con.execute(
            'SELECT source_id, file, line, "column", reason, text FROM rejects JOIN srcids_arrow USING (source_id) ORDER BY source_id, line'
        ).fetchall()
        with open(meta / "rejects.jsonl", "w", encoding="utf-8") as fh:
            for r in rej_rows:
                fh.write(json.dumps({"source_sha256": sha_of.get(r[0]), "file": r[1], "line": r[2], "column": r[3], "reason": r[4], "text": r[5]}) + "\n")
        # conflicts of the chosen tables, with the stored spin's key (spin_no, spin_label)
        conf_rows = con.execute(
            """SELECT c.table_id, c.spin_id, s.spin_no, s.spin_label, c.stored_pos, c.stored_sym, c.stored_void,
                      c.stored_source_id, c.stored_line, c.new_pos, c.new_sym, c.new_void, c.source_id, c.line, c.detected_utc
               FROM conflicts c JOIN chosen_arrow USING (table_id)
               LEFT JOIN spins s ON s.table_id = c.table_id
                    AND (CASE WHEN s.spin_label = '' THEN CAST(s.spin_no AS VARCHAR) ELSE s.spin_label END) = c.spin_id
               ORDER BY c.source_id, c.line, c.table_id, c.spin_id"""
        ).fetchall()
        conf_names = ("table_id", "spin_id", "spin_no", "spin_label", "stored_pos", "stored_sym", "stored_void", "stored_source_sha256",
                      "stored_line", "new_pos", "new_sym", "new_void", "source_sha256", "line", "detected_utc")
        with open(meta / "conflicts.jsonl", "w", encoding="utf-8") as fh:
            for r in conf_rows:
                d = dict(zip(conf_names, r))
                d["stored_source_sha256"], d["source_sha256"] = sha_of.get(d["stored_source_sha256"]), sha_of.get(d["source_sha256"])
                fh.write(json.dumps(_jsonable_row(d)) + "\n")
        per_source = dict(con.execute("SELECT source_id, count(*) FROM spins JOIN chosen_arrow USING (table_id) GROUP BY 1").fetchall())
        return srcs, rej_rows, conf_rows, per_source

    def _export_manifest(self, chosen: list, known: dict, srcs: list, per_source: dict, rej_rows: list, conf_rows: list, files: list,
                         n: int) -> dict:
        """The export's manifest: format, store, tables, per-source counts and every file."""
        n_conf_of: dict[int, int] = {}
        for r in conf_rows:
            n_conf_of[r[12]] = n_conf_of.get(r[12], 0) + 1
        n_rej_of: dict[int, int] = {}
        for r in rej_rows:
            n_rej_of[r[0]] = n_rej_of.get(r[0], 0) + 1
        return {
            "rngcert_export": EXPORT_FORMAT,
            "written_by": f"rngcert {__version__}",
            "written_utc": _now().isoformat(timespec="seconds"),
            "store": str(self.path),
            "store_schema_version": self.schema_version,
            "partitioning": ["table_id", "day"],
            "spins": n,
            "rejects": len(rej_rows),
            "conflicts": len(conf_rows),
            "tables": [{"table_id": t, "equipment": known[t]["equipment"], "wheel": known[t]["wheel"], "spins": known[t]["stored_spins"],
                        "void": known[t]["stored_void"], "conflicted": known[t]["conflicted"]} for t in chosen],  # (rows of the data)
            "sources": len(srcs),
            "per_source": [
                {"sha256": r["sha256"], "path": r["path"], "spins": int(per_source.get(r["source_id"], 0)),
                 "rejects": n_rej_of.get(r["source_id"], 0), "conflicts": n_conf_of.get(r["source_id"], 0)}
                for r in srcs
            ],
            "files": files,
            "read_with": "duckdb: SELECT * FROM read_parquet('DIR/*/*/*.parquet', hive_partitioning = true); "
            "spark: spark.read.parquet('DIR'); dask: dask.dataframe.read_parquet('DIR')",
        }

    @_guarded
    def ingest_parquet(self, folder: str | Path) -> list[IngestResult]:
        """Read an :meth:`export_parquet` folder back into this store, one source at a time.

        Each original source (a log file's bytes, by SHA-256) is one transaction with the rules of
        :meth:`ingest`: a source already in this store adds nothing; spins whose (table, spin_id)
        is stored already are duplicates or conflicts; the spin order (``seq``), timestamps,
        dealers, provenance (file, SHA-256, line) and rejected rows are kept.

        Parameters
        ----------
        folder : path
            A folder written by :meth:`export_parquet`.

        Returns
        -------
        list of IngestResult
            One per source of the export, in the order they were first ingested.

        Raises
        ------
        InputError
            Not an export folder, an export format newer than this rngcert, a table stored with
            another wheel; a file of the manifest missing or differing from its SHA-256, a data
            file it does not list, or spins per source or table that differ from it (checked
            before anything is stored).
        StorageError
            Full disk or damaged store (the source's transaction is rolled back).
        """
        import duckdb

        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        folder = Path(folder)
        mpath = folder / "_rngcert" / "manifest.json"
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
            fmt_version = int(manifest.get("rngcert_export", 0))
        except (OSError, ValueError, AttributeError) as exc:
            raise InputError(f"{folder}: not an rngcert export folder ({mpath}: {exc})") from None
        if fmt_version > EXPORT_FORMAT or fmt_version < 1:
            raise InputError(f"{mpath}: export format {fmt_version} is not one this rngcert {__version__} reads (1..{EXPORT_FORMAT})")
        equipment_of = {t["table_id"]: t["equipment"] for t in manifest.get("tables", [])}
        meta = folder / "_rngcert"

        def bad(what: str):
            return InputError(f"{folder}: damaged or incomplete export, nothing was ingested: {what}")

        # 1. every file the manifest lists is there with its SHA-256 and rows; no data file it does not list
        data_files = _check_listed_files(folder, manifest, fmt_version, mpath, bad)
        sources, rejects_by_sha, conflicts_by_sha, shas = _read_export_meta(meta, manifest, fmt_version, bad)
        out: list[IngestResult] = []
        reader = duckdb.connect()  # an in-memory connection reads the Parquet files
        try:
            # 2. what the data files hold agrees with the manifest: spins per source and per table
            _check_exported_counts(reader, data_files, manifest, shas, meta, bad)
            _check_conflict_column(reader, conflicts_by_sha, fmt_version, meta, bad)
            tables_of = {sha: [] for sha in shas}  # each source's tables in the export
            for t, sha in reader.execute("SELECT DISTINCT table_id, source_sha256 FROM exported").fetchall():
                tables_of.setdefault(sha, []).append(t)
            for src in sources:  # a source this store holds in part is refused before anything is stored (its other tables)
                self.known_source(src["sha256"], tables=tables_of.get(src["sha256"], []))
            # 3. store, source by source
            for src in sources:
                sha = src["sha256"]
                if self.known_source(sha, tables=tables_of.get(sha, [])):
                    out.append(IngestResult(src["path"], sha, "already ingested", note=f"source of export {folder}"))
                    continue
                out.append(self._ingest_exported_source(reader, folder, src, equipment_of, rejects_by_sha, conflicts_by_sha,
                                                        frozenset(s["sha256"] for s in sources)))
        finally:
            reader.close()
        return out

    def _ingest_exported_source(self, reader, folder: Path, src: dict, equipment_of: dict, rejects_by_sha: dict, conflicts_by_sha: dict,
                                export_shas: frozenset = frozenset()) -> IngestResult:
        """Step 3 of :meth:`ingest_parquet` for one source of the export not yet in the store: its spins, conflicts and rejected
        rows stored in one transaction."""
        from rngcert.equipment.wheel import load_wheel

        sha = src["sha256"]
        tbl = reader.sql(
            """SELECT table_id, spin_no, spin_label, CAST(row_number() OVER (ORDER BY seq) - 1 AS BIGINT) AS ord, ts,
                      CAST(pos AS SMALLINT) AS pos, CAST(sym AS SMALLINT) AS sym, dealer, CAST(direction AS TINYINT) AS direction,
                      CAST(release AS SMALLINT) AS release, void, CAST(line AS INTEGER) AS line, equipment
               FROM exported WHERE source_sha256 = $sha ORDER BY seq""",
            params={"sha": sha},
        )
        tbl = tbl.to_arrow_table() if hasattr(tbl, "to_arrow_table") else tbl.arrow()
        eqs = set(tbl.column("equipment").to_pylist()) or {src.get("equipment")}
        if len(eqs) != 1:
            raise InputError(f"{folder}: source {src['path']} holds spins of several wheels ({sorted(map(str, eqs))}); cannot ingest it as one")
        (equipment,) = eqs
        wheel = load_wheel(equipment)
        incoming = tbl.drop_columns(["equipment"])
        incoming = _with_conflicts(incoming, conflicts_by_sha.get(sha, []))
        rej, rej_tbl = _export_rejects(rejects_by_sha.get(sha, []))
        used = sorted(set(incoming.column("table_id").to_pylist()))
        for t in used:
            if t in equipment_of and equipment_of[t] != equipment:
                raise InputError(f"{folder}: table {t!r} has wheel {equipment_of[t]!r} in the manifest but {equipment!r} in its spins")
        prep = {
            "path": Path(src["path"]), "sha": sha, "format": src.get("format"), "size": src.get("size_bytes"),
            "accepted": int(src.get("accepted") or 0), "void": int(src.get("void") or 0),
            "n": int(src.get("rows") or len(incoming)) - sum(1 for r in rej if whole_line_reject(r)), "m": len(incoming),
            "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej, "used_tables": used, "rule": src.get("spin_id_rule") or "column",
            "default_table": src.get("default_table"), "timing": {}, "exported": export_shas or frozenset([sha]),
        }
        # an export of some tables (the source's spins of others are not here), or of a store that held the source in part
        if tbl.num_rows < int(src.get("inserted") or 0) or src.get("partial_tables"):
            prep["partial_tables"] = ", ".join(used)
        res = self._store_prepared(prep, wheel, str(equipment))
        res.note = f"from export {folder}"
        if res.duplicates != int(src.get("duplicates") or 0):  # repeats of stored spins are counted, not kept
            res.note += f"; the original ingest counted {src.get('duplicates')} row(s) already stored (not kept by a store, so not exported)"
        return res


def _file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _jsonable_row(r: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, (_dt.datetime, _dt.date)) else v) for k, v in r.items()}


def _host() -> str:
    """This machine's name as it goes into a temporary folder's name (letters, digits, ``.`` and ``-``)."""
    import socket

    return "".join(c if c.isascii() and (c.isalnum() or c in ".-") else "_" for c in socket.gethostname())[:64] or "host"


def _remove_stale_exports(folder: Path, on_stale: Callable[[Path, int, bool], None] | None) -> None:
    """Remove the temporary folders (``.NAME.rngcert-export-HOST-PID``) that exports to ``folder`` from this machine left
    behind when their process was killed beyond a handler's reach (SIGKILL, a power cut): only those of this machine's
    name whose process no longer runs here, so an export still running to the same folder keeps its own, and one on
    another machine writing to a shared folder is never taken for dead (its process id means nothing here). Folders of
    rngcert before 2026-12-05 (``-PID`` alone) are left. ``on_stale(path, pid, removed)`` is told of each (``removed``
    False: it could not be removed, a file in it not ours to delete, say)."""
    prefix = f".{folder.name}.rngcert-export-{_host()}-"
    try:
        siblings = list(folder.parent.iterdir()) if folder.parent.is_dir() else []
    except OSError:
        return
    for p in siblings:
        pid = p.name[len(prefix):]
        if not (p.name.startswith(prefix) and pid.isdigit() and p.is_dir() and not p.is_symlink()) or int(pid) == os.getpid():
            continue
        if _process_runs(int(pid)):
            continue
        scratch.remove(p)  # (errors ignored: whether it is gone is looked at)
        if on_stale is not None:
            on_stale(p, int(pid), not os.path.lexists(p))


def _process_runs(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: it cannot be told apart)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
