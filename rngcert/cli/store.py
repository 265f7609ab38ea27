"""CLI commands of the store: ``ingest``, ``rejects``, ``audit``, ``watch``, ``export``.

Standalone click commands; ``rngcert/cli/app.py`` registers them with ``main.add_command(...)``.
Exit codes follow the table in :mod:`rngcert.cli`; ``watch`` adds :data:`EXIT_ALARM`.

Every command holds the store file only briefly and waits for it, at most ``--wait`` seconds,
when another process holds it (see :mod:`rngcert.collect.store`, "Many readers, one writer").
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from rngcert.cli._common import (
    EXIT,
    EXIT_EQUIPMENT,
    EXIT_INPUT,
    audit_overview,
    check_report_options,
    echo_out,
    fail,
    parse_columns,
    progress_bar,
    report_options,
    subject_option,
    summary_text,
)
from rngcert.cli._parallel import parallel_options, plan_of
from rngcert.cli._standard import load_for, standard_option
from rngcert.collect.store import DEFAULT_DB, DEFAULT_WAIT

#: Exit code of ``rngcert watch`` when the alarm is raised (not in cli.EXIT: a watch has no verdict).
EXIT_ALARM = 13
#: ``rngcert watch`` saw that spins were lost: a rotation it did not see (a file it never read, or
#: the spin ids of the next file skip ahead); it stops rather than watch on with a gap.
EXIT_LOST = 14

#: Seconds a watch of a FIFO waits for its writer when neither --follow nor --max-idle is given.
FIFO_WAIT = 60.0

_DB_OPTION = click.option(
    "--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True, help="The store (a DuckDB file)."
)
_WAIT_OPTION = click.option(
    "--wait", "wait", type=click.FloatRange(min=0), default=DEFAULT_WAIT, show_default=True, metavar="SECONDS",
    help="When another process holds the store (DuckDB: one writer or many readers), retry for up to this long before giving up (exit 3).",
)


def _run(fn):
    """Map rngcert errors to the documented exit codes when the command runs outside cli.main."""
    from rngcert.errors import EquipmentError, InputError, RngcertError

    try:
        return fn()
    except BrokenPipeError:  # the reader of the output went away (rngcert rejects | head): not an input error
        raise
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except (InputError, RngcertError, OSError, UnicodeDecodeError) as exc:
        fail(EXIT_INPUT, str(exc))


def _cmdline(name: str) -> str:
    return "rngcert " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv and sys.argv[0].endswith("rngcert") else f"rngcert {name}"


def _json_line(obj) -> None:
    """One JSON object on one line of standard output (non-finite numbers as null), flushed."""
    import json
    import math

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    click.echo(json.dumps(clean(obj), default=str))
    sys.stdout.flush()


def _waiting(db):
    """The ``on_wait`` callback: tell the user once per open that the command is waiting."""

    def on_wait(msg):
        click.echo(f"store {db} is held by another process ({msg}); waiting for it…", err=True)

    return on_wait


def _protocol_option(f):
    """``--protocol`` for wheel controllers' captures (:func:`rngcert.cli.controller.protocol_option`)."""
    from rngcert.cli.controller import protocol_option

    return protocol_option(f)


# --------------------------------------------------------------------------- ingest
# long: 21 lines of click options and the help text; the body is one loop over files with its messages
@click.command(
    "ingest",
    epilog="""\b
Examples:
  rngcert ingest spins-2026-01.csv spins-2026-02.csv
  rngcert ingest spielbank-wiesbaden_t5_190424.txt --table wiesbaden-5
  rngcert ingest live_roulette_spins.csv --column result=number \\
      --column table=file --column spin_id=seq_in_file
  rngcert ingest live.csv --db /srv/rngcert/casino.duckdb   # a grown export adds only new rows
  rngcert ingest exported/ --db copy.duckdb                  # an `rngcert export --parquet` folder
""",
)
@_protocol_option
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@_DB_OPTION
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file the logs were recorded on.")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file, e.g. result=Number (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--table", default=None, help="Table id for logs without a table column (default: the file name without extension).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: what each file added, conflicts, the store's totals.")
@_WAIT_OPTION
def ingest(logs, db, equipment, columns, fmt, table, as_json, wait):
    """Load spin logs into the store (idempotent, one transaction per file).

    Every row is kept with its source file's SHA-256 and line. A file already ingested adds
    nothing; a log that grew adds only its new rows; a row whose (table, spin_id) is stored with
    a different result is reported as a conflict and never overwritten; unreadable rows go to
    the rejects table (see `rngcert rejects`). Logs without spin_id (permanence lists) are
    numbered by position in the file. A folder written by `rngcert export --parquet` is read
    back source by source with the same rules. Each file is parsed before the store is opened,
    and the store is held for writing only while that file is stored, so audits and watches
    of the same store run between files. Shoe logs are not stored yet (spins only).
    """
    from dataclasses import asdict

    from rngcert.collect.store import Store, ingest_files

    # "-" is standard input (the Unix convention): a pipe is read as any pipe or FIFO is, and stored under /dev/stdin
    logs = tuple(Path("/dev/stdin") if str(p) == "-" else p for p in logs)
    unreadable = []
    results = []

    def show(res):
        results.append(res)
        if as_json:
            if res.status == "empty" or (res.status == "ingested" and res.accepted + res.void == 0 and not res.note.startswith("from export")):
                unreadable.append(res.path)
            return
        echo_out(res.summary())
        if res.status == "empty" or (res.status == "ingested" and res.accepted + res.void == 0 and not res.note.startswith("from export")):
            unreadable.append(res.path)
        for c in res.conflict_sample:
            click.echo(
                f"  conflict: table {c['table']} spin {c['spin_id']}: stored {c['stored']} (line {c['stored_line']}), "
                f"this file says {c['new']} (line {c['line']}): kept the stored row",
                err=True,
            )
        if res.conflicts > len(res.conflict_sample):
            click.echo(f"  … {res.conflicts - len(res.conflict_sample)} more conflict(s) in the store's conflicts table", err=True)

    def go():
        from rngcert.collect.csvstream import is_stream

        for p in logs:  # before the store is opened (or created): a missing log leaves no empty store
            if not p.is_dir():
                is_stream(p)
        with progress_bar(total=len(logs), unit="file", desc="ingesting") as bar:
            rows = [0]

            def done(res):
                rows[0] += res.accepted + res.void + res.rejected
                bar.update(1, postfix=f"{rows[0]:,} rows")
                show(res)

            ingest_files(db, logs, equipment, columns=parse_columns(columns), fmt=fmt, table=table, wait=wait, on_wait=_waiting(db), on_result=done)
        with Store(db, read_only=True, wait=wait, on_wait=_waiting(db)) as st:
            spins, ntables = st.count_spins(), len(st.tables())
        if as_json:
            import json

            echo_out(json.dumps({"store": str(db), "files": [asdict(r) for r in results], "store_spins": spins, "store_tables": ntables,
                                   "unreadable": [str(u) for u in unreadable]}, indent=1, default=str))
        else:
            echo_out(f"store {db}: {spins} spins in {ntables} table(s)")
        if unreadable:
            click.echo(f"rngcert: error: nothing readable in {', '.join(unreadable)}", err=True)
            sys.exit(EXIT_INPUT)

    _run(go)


# --------------------------------------------------------------------------- rejects
@click.command(
    "rejects",
    epilog="""\b
Examples:
  rngcert rejects
  rngcert rejects --file live.csv --limit 20
  rngcert rejects --csv > rejects.csv
  rngcert rejects --json | jq '.rejects[].reason'
""",
)
@_DB_OPTION
@click.option("--file", "file", default=None, help="Only rows of this file (path or its ending).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many rows.")
@click.option("--csv", "as_csv", is_flag=True, help="Write CSV (file, line, column, reason, text).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {store, count, rejects: [{file, line, column, reason, text}, ...]}.")
@_WAIT_OPTION
def rejects(db, file, limit, as_csv, as_json, wait):
    """List the rows the store rejected on ingest: file, line, column and reason (read-only)."""
    from rngcert.collect.store import Store

    def go():
        with Store(db, read_only=True, wait=wait, on_wait=_waiting(db)) as st:
            rows = st.rejects(file=file, limit=limit)
        if as_csv and as_json:
            raise click.UsageError("give --csv or --json, not both")
        if as_json:
            import json

            keep = ("file", "line", "column", "reason", "text")
            click.echo(json.dumps({"store": str(db), "count": len(rows), "rejects": [{k: r[k] for k in keep} for r in rows]}, indent=1, default=str))
            return
        if as_csv:
            from rngcert.collect import csvsafe

            w = csvsafe.writer(sys.stdout)  # cells a spreadsheet would run as formulas are neutralised
            w.writerow(["file", "line", "column", "reason", "text"])
            for r in rows:
                w.writerow([r["file"], r["line"], r["column"], r["reason"], r["text"]])
            return
        for r in rows:
            click.echo(f"{r['file']}:{r['line']}: {r['column']}: {r['reason']}  [{r['text']}]")
        click.echo(f"{len(rows)} rejected row(s)", err=True)

    _run(go)


# --------------------------------------------------------------------------- audit
# long: 38 lines of click options and the help text; the body prints each table's trend lines
@click.command(
    "audit",
    epilog="""\b
Examples:
  rngcert audit --table wiesbaden-5
  rngcert audit --table T7 --since 2026-01-01 --until 2026-07-01 --seed 1
  rngcert audit --table T7 --last 20000
  rngcert audit --table T7 --pdf --sign lab.pem --subject "wheel serial 12345"   # certificate, signed
  rngcert audit --all --no-plots                    # every table, on every core
  rngcert audit --all --scheduler tcp://10.0.0.5:8786   # on a Dask cluster (shared store path)
  rngcert audit --all --db /archive/2025.duckdb --no-record   # a read-only or archived store
""",
)
@_DB_OPTION
@click.option("--table", default=None, help="The table to audit.")
@click.option("--all", "all_tables", is_flag=True, help="Audit every table of the store (independent work items).")
@click.option("--since", default=None, metavar="DATE", help="First spin time included (ISO 8601, UTC).")
@click.option("--until", default=None, metavar="DATE", help="Spins before this time (ISO 8601, UTC).")
@click.option("--last", type=click.IntRange(min=1), default=None, metavar="N", help="Only the last N (non-void) spins of the window.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification (family-wise) significance level.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed of every Monte Carlo p-value (recorded; default: fresh entropy).")
@click.option("--resamples", type=click.IntRange(min=99), default=9999, show_default=True, help="Monte Carlo replicates per test.")
@click.option("--min-bias", type=click.FloatRange(min=0, min_open=True), default=None, help="Declared minimum detectable single-pocket bias (0.2 = +20%).")
@click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True, help="Power for the power statement.")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder for reports/<equipment>-<table>-<UTC time>/.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, hidden=True, help="Older name of --workers.")
@click.option("--no-record", is_flag=True, help="Do not record the audit in the store: the store is only read (archived or read-only stores).")
@click.option("--json", "as_json", is_flag=True, help="Print the report JSON(s) instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
@_WAIT_OPTION
@parallel_options
@report_options
@standard_option
@click.option("--group-control", type=click.Choice(["holm", "bh", "none"]), default="holm", show_default=True,
              help="--all: the group's statement across tables: Holm (family-wise), Benjamini-Hochberg (false discovery rate) or none; "
                   "each table's p-value is first put on the alpha-spending scale of its audit history (alpha·6/(π²i²) at its i-th audit).")
@click.option("--audits-per-year", type=click.FloatRange(min=0, min_open=True), default=12.0, show_default=True,
              help="--all: audits a year, for the expected false FAILs a year.")
def audit(db, table, all_tables, since, until, last, alpha, seed, resamples, min_bias, power, outdir, jobs, no_record, as_json, no_plots, wait, workers, scheduler,
          pdf, sign_key, standard, group_control, audits_per_year):
    """Audit stored spins of a table with the certify battery, and record the audit.

    Writes the same report as `rngcert certify` (plus an audit-trend section: earlier audits of
    the table, homogeneity of pocket frequencies between this window and the previous one and
    across dealers) and an audit record in the store (window, verdict, every p-value, bias
    estimates, report path). The spins are read in a read-only session and the record is
    written in its own short transaction, so an audit runs while an ingest writes (each waits
    for the other at most --wait seconds); --no-record never opens the store for writing. With
    --all, tables are independent work items on every core (a local process pool) or on the
    cluster given by --scheduler; each reads only its own table. Exits with the verdict's code
    (the worst table's with --all).
    """
    from rngcert.battery.core import worst
    from rngcert.pipeline.audit import audit_all, audit_table
    from rngcert.pipeline.options import CertifyOptions

    if bool(table) == bool(all_tables):
        raise click.UsageError("give exactly one of --table T or --all")
    check_report_options(pdf, sign_key)  # fail fast, before the audit runs; the key travels as its path
    std = load_for(standard, "wheel", "audit", alpha)

    def go():
        from rngcert.collect.store import Store

        if not db.is_file():
            from rngcert.errors import InputError

            if db.is_dir():
                Store(db, read_only=True)  # "a folder, not a store file"
            raise InputError(f"no table with spins in the store {db}: the store does not exist; create it with: rngcert ingest LOG --db {db}")
        # the audit's options, built once here and passed down as one object
        options = CertifyOptions(alpha=alpha, seed=seed, n_resamples=resamples, required_bias=min_bias, power=power, figures=not no_plots,
                                 command=_cmdline("audit"), standard=std)
        kw = dict(outdir=outdir, pdf=pdf, sign_key=str(sign_key) if sign_key is not None else None, subject=subject_option(), options=options)
        if all_tables:
            with progress_bar(unit="table", desc="auditing") as bar:
                results = audit_all(db, since=since, until=until, last=last, plan=plan_of(workers or jobs, scheduler),
                                    progress=lambda msg: bar.update(1, postfix=msg), on_start=bar.set_total,
                                    record=not no_record, wait=wait, on_wait=_waiting(db), **kw)
        else:
            with progress_bar(total=1, unit="table", desc=f"auditing {table}") as bar:
                results = [audit_table(db, table, since=since, until=until, last=last, record=not no_record, wait=wait, on_wait=_waiting(db), **kw)]
                bar.update(1, postfix=results[0].verdict)
        for r in results:
            if as_json:
                click.echo(r.paths["json"].read_text(encoding="utf-8"))
                continue
            click.echo(summary_text(r.report))
            tr = r.report["audit"]
            for key, title in (("window_homogeneity", "previous vs this window"), ("dealer_homogeneity", "across dealers")):
                d = tr.get(key) or {}
                if d.get("applicable"):
                    click.echo(f"    trend: homogeneity {title}: X² = {d['statistic']:.4g}, df {d['df']}, p = {d['pvalue']:.4g}")
                else:
                    click.echo(f"    trend: homogeneity {title}: not applicable ({d.get('reason', '')})")
            rec = f"audit id {r.audit_id}" if r.audit_id is not None else "not recorded (--no-record)"
            click.echo(f"    earlier audits of this table: {len(tr['earlier_audits'])}; {rec}; report {r.paths.get('html')}"
                       + (f"; certificate {r.paths['pdf']}" if r.paths.get("pdf") else "")
                       + ("; signed" if (r.report.get("integrity") or {}).get("signature") else ""))
        if len(results) > 1 and not as_json:
            click.echo("\n".join(audit_overview([r.report["tables"][0] for r in results])))
        if not results:  # nothing to audit is an input error, as an empty window of --table is
            click.echo(f"rngcert: error: no table with spins in the store {db}", err=True)
            sys.exit(EXIT_INPUT)
        if all_tables:
            _group(results, alpha=alpha, control=group_control, audits_per_year=audits_per_year, outdir=outdir, as_json=as_json, std=std)
        sys.exit(EXIT[worst([r.verdict for r in results])])

    _run(go)


def _group(results, *, alpha, control, audits_per_year, outdir, as_json, std):
    """Print (and write beside the reports) the group statement of ``audit --all``."""
    import datetime as _dt
    import json as _json

    from rngcert.pipeline.group_audit import group_statement

    g = group_statement([r.report for r in results], alpha=alpha, control=control, audits_per_year=audits_per_year, standard_id=std.id)
    if outdir is not None:
        Path(outdir).mkdir(parents=True, exist_ok=True)
        p = Path(outdir) / f"audit-group-{_dt.datetime.now(_dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
        p.write_text(_json.dumps(g, indent=1), encoding="utf-8")
        g["file"] = str(p)
    if not as_json:
        click.echo(f"GROUP: {g['statement']}" + (f" ({g['file']})" if g.get("file") else ""))


# --------------------------------------------------------------------------- export
@click.command(
    "export",
    epilog="""\b
Examples:
  rngcert export --parquet spins-parquet/
  rngcert export --parquet t7/ --table T7 --db /srv/rngcert/casino.duckdb
  duckdb -c "SELECT table_id, count(*) FROM read_parquet('spins-parquet/*/*/*.parquet', hive_partitioning=true) GROUP BY 1"
  rngcert ingest spins-parquet/ --db copy.duckdb    # read it back
""",
)
@_DB_OPTION
@click.option("--parquet", "folder", type=click.Path(path_type=Path), required=True, help="New folder for the Parquet data set (partitioned by table and day).")
@click.option("--table", "tables", multiple=True, help="Only this table (repeatable; default every table).")
@click.option("--json", "as_json", is_flag=True, help="Print the export's manifest as JSON.")
@_WAIT_OPTION
def export(db, folder, tables, as_json, wait):
    """Write the stored spins as Parquet, partitioned by table and day, for Spark, Dask or DuckDB.

    The folder holds DIR/table_id=<table>/day=<YYYY-MM-DD>/*.parquet (Hive layout) with every
    spin's id, time, result, dealer, direction, release, void flag, wheel and provenance (source
    file, SHA-256, line), and DIR/_rngcert/ with the manifest, the sources and the rejected rows.
    `rngcert ingest DIR` reads it back. The store is only read; the folder appears complete or
    not at all.
    """
    from rngcert.collect.store import Store

    def go():
        with Store(db, read_only=True, wait=wait, on_wait=_waiting(db)) as st:
            man = st.export_parquet(folder, tables=list(tables) or None)
        if as_json:
            import json

            click.echo(json.dumps(man, indent=1))
            return
        click.echo(f"exported {man['spins']:,} spins of {len(man['tables'])} table(s) from {man['sources']} source(s) to {folder} "
                   f"({man['rejects']} rejected row(s) in {folder / '_rngcert' / 'rejects.jsonl'})")

    _run(go)


# --------------------------------------------------------------------------- watch
@click.command(
    "watch",
    epilog="""\b
Examples:
  rngcert watch live.csv --follow                    # tail a growing export (rotation-safe)
  rngcert watch live.csv --follow --interval 5 --max-idle 3600
  mkfifo spins.pipe; rngcert watch spins.pipe        # a stream: read until the writer closes it
  rngcert watch spins.pipe --max-idle 900            # ... and exit 3 if the writer stalls 15 min
  rngcert watch --table T7                           # replay a stored table once
  rngcert watch --table T7 --follow --alpha 0.001 --horizon 1000000

\b
--json prints JSON Lines on standard output, one event per line as it happens (flushed):
  {"event": "start", "table", "guarantee"} when a table's first spins arrive;
  {"event": "status", "table", "spins", "blocks", "log_evidence", "log_threshold", "leader", "alarm"}
  after each update; {"event": "note", "text"} (rotation, truncation, skipped rows);
  and last either {"event": "alarm", ...} (exit 13) or {"event": "end", "spins", ...} (exit 0);
  an input error (exit 3) ends the lines without either, its message on standard error.
Messages for people stay on standard error.

Exit codes: 0 no alarm · 13 ALARM · 14 spins lost: a rotation the watch did not see (two
rotations within one poll: a file never read, or the spin ids of the next file skip ahead) ·
3 input error (also: a FIFO cut by --max-idle while its writer still held it open) · 2 usage error.
""",
)
@click.argument("log", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--table", default=None, help="Watch this stored table instead of a log file (new rows as they are ingested).")
@_DB_OPTION
@click.option("--follow", is_flag=True, help="Keep watching for new rows (like tail -F: across truncation and rotation); without it, read what is there and exit.")
@click.option("--interval", type=click.FloatRange(min=0.05), default=2.0, show_default=True, help="Seconds between polls with --follow.")
@click.option("--max-idle", type=click.FloatRange(min=0), default=None, help="With --follow, stop after this many seconds without new rows (says so on stderr). On a FIFO: the longest wait for a writer (default 60 s without --follow), and, if given, for new rows while the writer holds the pipe open: reaching it then cuts the stream, which is exit 3.")
@click.option("--settle", type=click.FloatRange(min=0), default=5.0, show_default=True, metavar="SECONDS",
              help="A final line without a newline is counted once the log has not changed for this long; a rotated-away file is finished after this long without change.")
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (LOG only; a stored table knows its wheel).")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Bound on the probability of any false alarm within --horizon spins.")
@click.option("--horizon", type=click.IntRange(min=1), default=100_000, show_default=True, help="Spins over which --alpha bounds false alarms (mean spins to a false alarm >= horizon/alpha).")
@click.option("--block", type=click.IntRange(min=1), default=100, show_default=True, help="The detector is updated and checked after every block of this many spins.")
@click.option("--no-record", is_flag=True, help="Do not write the alarm record into the store.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON Lines: one event per line (start, status, note, then alarm or end); see below.")
@_WAIT_OPTION
@click.option("--standard", default=None, metavar="NAME|PATH",
              help="Only rngcert-default applies (the ALARM is its anytime-valid detector); other standards' fixed-sample clauses apply to `rngcert audit`.")
def watch(log, table, db, follow, interval, max_idle, settle, equipment, columns, fmt, alpha, horizon, block, no_record, as_json, wait, standard):
    """Watch a growing spin log (or a stored table) with an anytime-valid change detector.

    Keeps a mixture Shiryaev-Roberts e-detector (Shin, Ramdas & Rinaldo 2022) over structured
    alternatives: single pockets and sectors (widths 1, 3, 5, 9), first harmonics, and sectors
    of the distance between consecutive results (the wheel-distance distribution). Checking after
    every block does not inflate false alarms: for a fair wheel, P(any alarm within --horizon
    spins) <= --alpha (Doob/Ville maximal inequality), and the mean time to a false alarm is at
    least horizon/alpha spins. Prints a status line per update; on alarm, writes an alarm record
    in the store and exits with code 13. Each table of a log is watched separately.

    Every spin is counted exactly once: the log is followed by identity (device, inode) and
    size. On rotation (rename and a new file) the old file is finished first, then the new one
    is read from its beginning; on truncation or a rewrite in place (copy-truncate) the file is
    read again from its beginning, after the lines past the old offset are read from the copy
    when it lies beside the log (LOG.1, LOG-DATE). A final line without a newline counts once the
    log has not changed for --settle seconds, or when the watch ends. Rows that repeat a spin
    already counted (same table, spin_id and result, e.g. a log rewritten whole) are skipped and
    said so; a spin_id already counted with another result is a conflict, reported, not counted
    (rows without spin_id cannot be recognised and are counted as read). A FIFO is read as a stream
    until its writer closes it, however long the writer pauses; a FIFO that delivers no spin is an
    input error, and so is a FIFO cut by --max-idle while its writer still holds it open (exit 3).
    A rotation the watch did not see (two within one poll: a file beside the log that it never
    read, or spin ids of the next file that skip ahead of the last file's) stops it with exit 14.
    """
    if bool(log) == bool(table):
        raise click.UsageError("give exactly one of LOG or --table T")
    std = load_for(standard, "wheel", "watch")
    if std.id != "rngcert-default" or not std.packaged:
        raise click.UsageError(
            f"standard {std.id!r} does not apply to `rngcert watch`: its clauses are fixed-sample tests at fixed levels, and a live "
            "watch raises ALARM by an anytime-valid detector (rngcert-default's rule for monitoring); audit the stored spins against "
            f"it instead: rngcert audit --table T --standard {standard}"
        )
    run = _WatchRun(db=db, follow=follow, interval=interval, max_idle=max_idle, settle=settle, equipment=equipment, columns=tuple(columns), fmt=fmt,
                    alpha=alpha, horizon=horizon, block=block, no_record=no_record, as_json=as_json, wait=wait, fifo_wait=FIFO_WAIT)
    _run((lambda: _watch_log(run, log)) if log else (lambda: _watch_table(run, table)))


@dataclass(frozen=True)
class _WatchRun:
    """The options of one ``rngcert watch`` and what it prints on a status, an alarm (and its record)."""

    db: Path
    follow: bool
    interval: float
    max_idle: float | None
    settle: float
    equipment: str
    columns: tuple
    fmt: str
    alpha: float
    horizon: int
    block: int
    no_record: bool
    as_json: bool
    wait: float
    fifo_wait: float

    def record(self, tname, w, spin_id, source):
        """The alarm record written into the store (None with --no-record)."""
        if self.no_record:
            return None
        import datetime as _dt

        from rngcert.collect.store import Store

        with Store(self.db, wait=self.wait, on_wait=_waiting(self.db)) as st:
            return st.record_alarm(
                {
                    "table_id": tname, "source": source, "created_utc": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
                    "spin_count": w.alarm_spin, "spin_id": spin_id, "ts": None, "log_evidence": w.log_m, "log_threshold": w.log_threshold,
                    "alternative": w.leader, "guarantee": w.guarantee(),
                }
            )

    def status_out(self, tname, st_):
        if self.as_json:
            _json_line({"event": "status", "table": tname, "spins": st_.spins, "blocks": st_.blocks, "log_evidence": float(st_.log_evidence),
                        "log_threshold": float(st_.log_threshold), "leader": st_.leader, "alarm": bool(st_.alarm)})
        else:
            click.echo(f"[{tname}] {st_.line()}")

    def alarm_exit(self, tname, w, spin_id, source):
        aid = self.record(tname, w, spin_id, source)
        if self.as_json:
            _json_line({"event": "alarm", "table": tname, "source": source, "spin": w.alarm_spin, "spin_id": spin_id, "leader": w.leader,
                        "log_evidence": float(w.log_m), "log_threshold": float(w.log_threshold), "guarantee": w.guarantee(), "alarm_record": aid})
        click.echo(f"ALARM table {tname}: evidence crossed the threshold at spin {w.alarm_spin} (spin_id {spin_id}); leading alternative: {w.leader}", err=True)
        click.echo(f"  guarantee: {w.guarantee()}", err=True)
        if aid is not None:
            click.echo(f"  alarm record {aid} written to {self.db}", err=True)
        sys.exit(EXIT_ALARM)


def _refuse_capture(log: Path, follow: bool) -> None:
    """A controller's raw capture is decoded game by game by `record`, not chunk by chunk here; a missing
    file is an error unless --follow waits for it."""
    from rngcert.errors import InputError

    if log.is_file():
        from rngcert.collect.spinlog import detect_format

        with open(log, "rb") as fh:
            if detect_format(log, fh.read(1 << 15)).startswith("protocol"):
                raise InputError(f"{log} is a wheel controller's capture: decode it into a spin log first, then watch that: "
                                 f"rngcert record {shlex.quote(str(log))} --out spins.csv && rngcert watch spins.csv")
    if not follow and not log.exists():
        raise InputError(f"{log}: no such file (give --follow to wait for it)")


class _LogEvents:
    """Prints the events of a watched log as they come; stops on an alarm (exit 13) or lost spins (exit 14)."""

    def __init__(self, run: _WatchRun, log: Path, lw):
        self.run, self.log, self.lw = run, log, lw
        self.idle_since = time.monotonic()  # the last status: --max-idle counts from it
        self.announced = False

    def __call__(self, events) -> None:
        run, log, lw = self.run, self.log, self.lw
        lost = []
        for ev in events:
            if ev.kind == "lost":
                lost.append(ev.text)
                click.echo(f"watch: SPINS LOST: {ev.text}", err=True)
            elif ev.kind == "note":
                click.echo(f"watch: {ev.text}", err=True)
                if run.as_json:
                    _json_line({"event": "note", "table": ev.table, "text": ev.text})
            elif ev.kind == "start":
                if run.as_json:
                    _json_line({"event": "start", "table": ev.table, "source": str(log), "guarantee": ev.text})
                if not self.announced:
                    click.echo(f"watching {log}: {ev.text}", err=True)
                    self.announced = True
            elif ev.kind == "status":
                self.idle_since = time.monotonic()
                run.status_out(ev.table, ev.status)
            elif ev.kind == "alarm":
                lw.close()
                run.alarm_exit(ev.table, ev.watcher, ev.spin_id, str(log))
        if lost:  # the detector's spins have a gap: stop and say so (exit 14), never watch on silently
            lw.close()
            click.echo(f"watch: stopped: {len(lost)} rotation(s) not seen; {sum(lw.spins.values()):,} spin(s) were watched. Poll more often "
                       "(--interval) than the log rotates, or certify the rotated files themselves", err=True)
            sys.exit(EXIT_LOST)


def _watch_log(run: _WatchRun, log: Path) -> None:
    """``rngcert watch LOG``: follow the log (or read it once) and report its end."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.watch import LogWatch

    wheel = load_wheel(run.equipment)
    _refuse_capture(log, run.follow)
    lw = LogWatch(log, wheel, columns=parse_columns(run.columns), fmt=run.fmt, alpha=run.alpha, horizon=run.horizon,
                  block=run.block, settle=run.settle)
    handle = _LogEvents(run, log, lw)
    fifo_limit = run.max_idle if run.max_idle is not None else (None if run.follow else run.fifo_wait)
    is_fifo = log.exists() and stat.S_ISFIFO(os.stat(log).st_mode)
    try:
        cut = _follow_log(run, lw, handle, is_fifo, fifo_limit)
    finally:
        had_writer = lw.follower.fifo_had_writer
        pending = lw.follower.fifo_pending
        lw.close()
    _end_of_log(run, log, lw, is_fifo=is_fifo, fifo_limit=fifo_limit, had_writer=had_writer, pending=pending, cut=cut)


def _follow_log(run: _WatchRun, lw, handle: _LogEvents, is_fifo: bool, fifo_limit) -> bool:
    """Poll the log until it ends (FIFO closed, --max-idle, or one read without --follow); True when a
    FIFO whose writer still held it open was cut by --max-idle."""
    if not run.follow and not is_fifo:
        handle(lw.step(final=True))  # a regular file read once: its last line counts
        return False
    while True:
        handle(lw.step())
        if is_fifo and lw.follower.fifo_ended and not run.follow:
            handle(lw.step(final=True))
            return False
        # FIFO: the default wait (FIFO_WAIT) is for a writer to connect; a connected
        # writer is never cut by it, only by an explicit --max-idle (then exit 3 below)
        limit = (run.max_idle if lw.follower.fifo_connected else fifo_limit) if is_fifo else run.max_idle
        idle = time.monotonic() - handle.idle_since
        if limit is not None and idle > limit:
            cut = is_fifo and lw.follower.fifo_connected  # the writer still holds the pipe: an unfinished line is not a spin
            if not cut:
                handle(lw.step(final=True))  # the watch ends: a last line without newline counts, a rotated file is finished
            if run.max_idle is not None:
                click.echo(f"watch: stopped after {idle:.0f} s without new data (--max-idle {run.max_idle:g})", err=True)
            return cut
        lw.follower.wait(run.interval)


def _end_of_log(run: _WatchRun, log: Path, lw, *, is_fifo, fifo_limit, had_writer, pending, cut) -> None:
    """What the watch of a log says at its end: repeats, conflicts and rejected lines on stderr; an input
    error when nothing was watched or a FIFO was cut; the ``end`` event with --json."""
    from rngcert.errors import InputError

    total = sum(lw.spins.values())
    if is_fifo and total == 0:
        waited = "" if fifo_limit is None else f" within {fifo_limit:g} s"
        raise InputError(
            f"{log} is a FIFO and {'its writer sent no readable spin' if had_writer else 'no writer opened it'}{waited}: nothing was watched "
            "(start the writer first, or give --max-idle SECONDS to wait longer)"
        )
    if lw.repeated:
        click.echo(f"watch: {lw.repeated} row(s) of {log} repeated spins already counted (same table, spin_id and result) and were not counted again", err=True)
    if lw.conflicts:
        click.echo(f"watch: {lw.conflicts} row(s) of {log} gave another result for a spin_id already counted (conflict) and were not counted", err=True)
    if cut:
        raise InputError(
            f"{log} is a FIFO whose writer still held it open after {run.max_idle:g} s without new data (--max-idle): the stream was cut "
            f"after {total} spin(s){f' and {pending} byte(s) of an unfinished line' if pending else ''}; the writer gets a broken pipe and "
            "anything it sends later is not watched. Give a longer --max-idle, or none: then a FIFO is read until its writer closes it"
        )
    if not lw.watchers:  # nothing readable is an input error, as for certify (an empty log, a header, rejected rows only)
        why = f"{lw.rejected} line(s) could not be read" if lw.rejected else "the log holds no spin row"
        raise InputError(f"{log}: no readable spin while it was watched ({why}): nothing to watch; check --equipment and --column")
    if lw.rejected:
        click.echo(f"watch: {lw.rejected} line(s) of {log} could not be read and were not counted", err=True)
    if run.as_json:
        _json_line({"event": "end", "source": str(log), "spins": dict(lw.spins), "repeated": lw.repeated, "conflicts": lw.conflicts,
                    "rejected": lw.rejected, "alarm": False})


def _watch_table(run: _WatchRun, table: str) -> None:
    """``rngcert watch --table T``: poll the stored table for new rows (once without --follow)."""
    import numpy as np

    from rngcert.collect.store import Store
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.watch import Watcher

    db = run.db
    last_seq = 0
    w = None
    idle_since = time.monotonic()
    seen = 0
    while True:
        with Store(db, read_only=True, wait=run.wait, on_wait=_waiting(db)) as st:
            got = st.spins(table, after_seq=last_seq)
        if got.n:
            idle_since = time.monotonic()
            order = np.argsort(got.seq, kind="stable")
            last_seq = int(got.seq.max())
            if w is None:
                w = Watcher(load_wheel(got.equipment).position_space(), alpha=run.alpha, horizon=run.horizon, block=run.block)
                click.echo(f"watching table {table} of {db}: {w.guarantee()}", err=True)
                if run.as_json:
                    _json_line({"event": "start", "table": table, "source": f"store table {table}", "guarantee": w.guarantee()})
            sel = order[(~got.void[order]) & (got.pos[order] >= 0)]
            st_ = w.update(got.pos[sel])
            seen += sel.size
            run.status_out(table, st_)
            if st_.alarm:
                sid_all = got.spin_id.take(sel).to_pylist() if sel.size else []
                j = w.alarm_spin - 1 - (seen - sel.size)
                run.alarm_exit(table, w, sid_all[j] if 0 <= j < len(sid_all) else None, f"store table {table}")
        if not run.follow:
            break
        if run.max_idle is not None and time.monotonic() - idle_since > run.max_idle:
            click.echo(f"watch: stopped after {time.monotonic() - idle_since:.0f} s without new data (--max-idle {run.max_idle:g})", err=True)
            break
        time.sleep(run.interval)
    if run.as_json:
        _json_line({"event": "end", "source": f"store table {table}", "spins": {table: seen}, "alarm": False})
