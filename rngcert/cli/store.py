"""CLI commands of the store: ``ingest``, ``rejects``, ``audit``, ``watch``, ``export``.

Standalone click commands; ``rngcert/cli/app.py`` registers them with ``main.add_command(...)``.
Exit codes follow the table in :mod:`rngcert.cli`; ``watch`` adds :data:`EXIT_ALARM`.

Every command holds the store file only briefly and waits for it, at most ``--wait`` seconds,
when another process holds it (see :mod:`rngcert.collect.store`, "Many readers, one writer").
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from rngcert.cli._common import (
    EXIT,
    EXIT_INPUT,
    MAX_RESAMPLES,
    Real,
    audit_overview,
    check_report_options,
    echo_out,
    fail,
    json_partial,
    parse_columns,
    progress_bar,
    refuse_given,
    report_options,
    store_table_id,
    subject_option,
    summary_text,
)
from rngcert.cli._parallel import parallel_options, plan_of, workers_of
from rngcert.cli._standard import load_for, standard_option
from rngcert.cli._storeopts import _DB_OPTION, _WAIT_OPTION, _run, _waiting

# ``rngcert watch`` lives in rngcert.cli._watch; its command and exit codes are importable from here, as before
from rngcert.cli._watch import EXIT_ALARM, EXIT_LOST, FIFO_WAIT, watch  # noqa: F401


def _iso_time(ctx, param, value):
    """--since/--until: a value that is no ISO 8601 date or date-time is a usage error (exit 2), named
    before the store is opened; the text itself is passed on (the store reads it the same way)."""
    if value is None:
        return None
    from rngcert.collect.store.queries import parse_when
    from rngcert.errors import InputError

    try:
        parse_when(value, param.name)
    except InputError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 date or date-time (e.g. 2026-01-31 or 2026-01-31T18:00:00Z)",
                                 ctx=ctx, param=param) from None
    return value


def _cmdline(name: str) -> str:
    return "rngcert " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv and sys.argv[0].endswith("rngcert") else f"rngcert {name}"


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
@click.option("--table", default=None, callback=store_table_id, help="Table id for logs without a table column (default: the file name without extension); a log with a table column is refused with it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: what each file added, conflicts, the store's totals.")
@_WAIT_OPTION
def ingest(logs, db, equipment, columns, fmt, table, as_json, wait):
    """Load spin logs into the store (idempotent, one transaction per file).

    Every row is kept with its source file's SHA-256 and line. A file already ingested adds
    nothing; a log that grew adds only its new rows; a row whose (table, spin_id) is stored with
    a different result is reported as a conflict and never overwritten; unreadable rows go to
    the rejects table (see `rngcert rejects`). Logs without spin_id (permanence lists) are
    numbered by position in the file, so a table holds one such log (and its grown
    versions, told by their bytes: a grown version starts with the stored one's bytes, whatever its name): another
    log for it, an earlier or rewritten version of it and a piped one are refused. A folder written by `rngcert export --parquet` is read
    back source by source with the same rules (it carries its wheels, tables and columns: with
    folders only, --equipment, --column, --format, --table and --protocol are refused). Each file is parsed before the store is opened,
    and the store is held for writing only while that file is stored, so audits and watches
    of the same store run between files. Shoe logs are not stored yet (spins only).
    """
    from dataclasses import asdict

    from rngcert.collect.store import Store, ingest_files

    # "-" is standard input (the Unix convention): a pipe is read as any pipe or FIFO is, and stored under /dev/stdin
    logs = tuple(Path("/dev/stdin") if str(p) == "-" else p for p in logs)
    if all(p.is_dir() for p in logs):  # export folders only: each carries its wheels, tables and columns
        refuse_given(("equipment", "columns", "fmt", "table", "protocol"), "options of reading spin logs; an `rngcert export --parquet` "
                                                                          "folder carries its own wheels, tables and columns")
    unreadable = []
    results = []
    # an error, Ctrl-C or SIGTERM after some files were committed: the JSON error document lists them (each file is its own transaction)
    json_partial(lambda: {"store": str(db), "files": [asdict(r) for r in results],
                          "stored": "the files listed in files were done before the error, each in its own transaction (status 'ingested': "
                          "committed; 'already ingested': stored before, nothing added; 'empty': no spins); no other file given was stored"})

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
                f"this file says {c['new']} (line {c['line']}): neither result is used (both kept, see rngcert rejects)",
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
            listed = st.tables()
            spins, ntables, conflicted = st.count_spins(), len(listed), sum(t["conflicted"] for t in listed)
        error = f"nothing readable in {', '.join(map(str, unreadable))}" if unreadable else None
        if as_json:  # the one document, with the error and the exit code when a file had nothing readable
            echo_out(json.dumps({"store": str(db), "files": [asdict(r) for r in results], "store_spins": spins, "store_tables": ntables,
                                 "store_conflicted": conflicted, "unreadable": [str(u) for u in unreadable],
                                 **({"error": error, "exit_code": EXIT_INPUT} if error else {})}, indent=1, default=str))
        else:
            echo_out(f"store {db}: {spins} spins in {ntables} table(s)"
                     + (f" ({conflicted} of them stored under a spin_id with another result as well: audits use neither)" if conflicted else ""))
        if error:
            click.echo(f"rngcert: error: {error}", err=True)
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
@click.option("--file", "file", default=None, help="Only rows of this file (its stored path, an ending of it after a /: a file name, dir/name, or a path ending with the stored one: ./a.csv, /srv/logs/a.csv).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many rows.")
@click.option("--csv", "as_csv", is_flag=True, help="Write CSV (file, line, column, reason, text).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {store, count (of them all), shown, rejects: [{file, line, column, reason, text}, ...]}.")
@_WAIT_OPTION
def rejects(db, file, limit, as_csv, as_json, wait):
    """List the rows the store rejected on ingest: file, line, column and reason, and both rows of every spin_id stored with
    two results (a conflict: audits use neither) (read-only)."""
    from rngcert.collect.store import Store

    def go():
        from rngcert.errors import InputError

        with Store(db, read_only=True, wait=wait, on_wait=_waiting(db)) as st:
            rows = st.rejects(file=file, conflicts=True)
            if file is not None and not rows and not st.source_paths_ending(file):  # a mistyped name is not 'no rejects'
                stored = [s["path"] for s in st.sources()]
                raise InputError(f"--file {file!r}: no file ingested into {db} is that path or ends with it; files: "
                                 + (", ".join(map(str, stored[:20])) + (f" (and {len(stored) - 20} more)" if len(stored) > 20 else "")
                                    if stored else "(none)"))
        total, rows = len(rows), rows[:limit]  # the count is of them all, --limit only shortens the listing
        if as_csv and as_json:
            raise click.UsageError("give --csv or --json, not both")
        if as_json:
            import json

            keep = ("file", "line", "column", "reason", "text")
            click.echo(json.dumps({"store": str(db), "count": total, "shown": len(rows), "rejects": [{k: r[k] for k in keep} for r in rows]},
                                  indent=1, default=str))
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
        click.echo(f"{len(rows)} of {total} rejected row(s)" if len(rows) < total else f"{total} rejected row(s)", err=True)

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
@click.option("--since", default=None, metavar="DATE", callback=_iso_time, help="First spin time included (ISO 8601, UTC).")
@click.option("--until", default=None, metavar="DATE", callback=_iso_time, help="Spins before this time (ISO 8601, UTC).")
@click.option("--last", type=click.IntRange(min=1), default=None, metavar="N", help="Only the last N (non-void) spins of the window.")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification (family-wise) significance level.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed of every Monte Carlo p-value (recorded; default: fresh entropy).")
@click.option("--resamples", type=click.IntRange(99, MAX_RESAMPLES), default=9999, show_default=True, help="Monte Carlo replicates per test.")
@click.option("--min-bias", type=Real(min=0, min_open=True), default=None, help="Declared minimum detectable single-pocket bias (0.2 = +20%).")
@click.option("--power", type=Real(0, 1, min_open=True, max_open=True), default=None,
              help="Power for the power statement and --min-bias. Default: the standard's declared power (0.9 in every packaged standard).")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder for reports/<equipment>-<table>-<UTC time>/.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, hidden=True, help="Older name of --workers.")
@click.option("--no-record", is_flag=True, help="Do not record the audit in the store: the store is only read (archived or read-only stores).")
@click.option("--json", "as_json", is_flag=True, help="Print the report JSON instead of the summary (with --all, one JSON document: "
              "{\"reports\": [each table's report], \"group\": the group statement}).")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
@_WAIT_OPTION
@parallel_options
@report_options
@standard_option
@click.option("--group-control", type=click.Choice(["holm", "bh", "none"]), default="holm", show_default=True,
              help="--all: the group's statement across tables: Holm (family-wise), Benjamini-Hochberg (false discovery rate) or none; "
                   "each table's p-value is first put on the alpha-spending scale of its audit history (alpha·6/(π²i²) at its i-th audit).")
@click.option("--audits-per-year", type=Real(min=0, min_open=True), default=12.0, show_default=True,
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
    (the worst table's with --all). --all names every table it did not audit, with why; a table
    whose stored spins all have conflicting results makes the run INCONCLUSIVE.
    """
    from rngcert.battery.core import worst
    from rngcert.pipeline.audit import audit_all, audit_table
    from rngcert.pipeline.options import CertifyOptions

    if bool(table) == bool(all_tables):
        raise click.UsageError("give exactly one of --table T or --all")
    if table:  # one table is audited here, alone: the options of the group and of its work items would do nothing
        refuse_given(("group_control", "audits_per_year", "workers", "scheduler", "jobs"),
                     "options of --all (the group statement across tables, the tables as work items); --table T audits one table here")
    plan = plan_of(workers_of(workers, jobs, "--jobs"), scheduler)
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
                results = audit_all(db, since=since, until=until, last=last, plan=plan,
                                    progress=lambda msg: bar.update(1, postfix=msg), on_start=bar.set_total,
                                    record=not no_record, wait=wait, on_wait=_waiting(db), **kw)
        else:
            with progress_bar(total=1, unit="table", desc=f"auditing {table}") as bar:
                results = [audit_table(db, table, since=since, until=until, last=last, record=not no_record, wait=wait, on_wait=_waiting(db), **kw)]
                bar.update(1, postfix=results[0].verdict)
        for r in results:
            if as_json:
                if not all_tables:  # --all: one document with the group statement, below
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
        skipped = _not_audited(db, results, (since, until, last), wait) if all_tables else []
        if not results:  # nothing to audit is an input error, as an empty window of --table is
            fail(EXIT_INPUT, _empty_store_or_window(db, since, until, last, wait, skipped))
        if all_tables:
            g = _group(results, alpha=alpha, control=group_control, audits_per_year=audits_per_year, outdir=outdir, as_json=as_json, std=std, recorded=not no_record, skipped=skipped)
            if as_json:  # one valid JSON document, not the reports one after another
                reports = [json.loads(r.paths["json"].read_text(encoding="utf-8")) for r in results]
                click.echo(json.dumps({"reports": reports, "group": g}, indent=1))
        sys.exit(EXIT[worst([r.verdict for r in results] + ["INCONCLUSIVE" for x in skipped if x["unusable"]])])

    _run(go)


def _not_audited(db, results, window: tuple, wait) -> list[dict]:
    """The tables of the store that ``audit --all`` did not audit, each with why; ``unusable``: it holds spins, but every one
    has conflicting results (no verdict on it could be given, so the run is INCONCLUSIVE)."""
    from rngcert.collect.store import Store

    audited = {r.report["tables"][0]["table"] for r in results}
    with Store(db, read_only=True, wait=wait) as st:
        rows = [t for t in st.tables() if t["table"] not in audited]
    return [_why_not_audited(t, window) for t in rows]


def _why_not_audited(t: dict, window: tuple) -> dict:
    """One table of :func:`_not_audited` (a row of :meth:`Store.tables`)."""
    if t["spins"]:
        since, until, last = window
        reason, unusable = f"no spins in the window (since={since}, until={until}, last={last})", False
    elif t["conflicted"]:
        reason, unusable = (f"its {t['conflicted']} stored spin(s) all have conflicting results in the store (audits use neither result; "
                            "see rngcert rejects)"), True
    elif t["void"]:
        reason, unusable = f"only void spins stored ({t['void']})", False
    else:
        reason, unusable = "no spins stored (every row of its logs was rejected: see rngcert rejects)", False
    return {"table": t["table"], "reason": reason, "unusable": unusable}


def _empty_store_or_window(db, since, until, last, wait, skipped=()) -> str:
    """Why ``audit --all`` found nothing to audit: a store without spins, or a window (--since/--until/--last) without any;
    then each table that was not audited, with why (``skipped``: :func:`_not_audited`)."""
    from rngcert.collect.store import Store

    with Store(db, read_only=True, wait=wait) as st:
        k = len(st.tables_with_spins())
    each = "".join(f"; table {x['table']}: {x['reason']}" for x in skipped)
    if not k or (since, until, last) == (None, None, None):
        return f"no table with spins in the store {db}" + each
    return f"no spins in the window (since={since}, until={until}, last={last}) in any of the {k} table(s) with spins of the store {db}" + each


def _group(results, *, alpha, control, audits_per_year, outdir, as_json, std, recorded=True, skipped=()) -> dict:
    """Print (and write beside the reports) the group statement of ``audit --all``."""
    import json as _json

    from rngcert.pipeline.group_audit import group_statement

    bound = max(std.false_fail_bound("wheel", alpha, [t["name"] for t in r.report["tables"][0]["battery"].get("tests", []) if t.get("applicable")])
                for r in results)
    g = group_statement([r.report for r in results], alpha=alpha, control=control, audits_per_year=audits_per_year, standard_id=std.id,
                        per_table=bound, recorded=recorded)
    g["not_audited"] = list(skipped)
    if skipped:
        g["statement"] += " Not audited: " + "; ".join(f"table {x['table']} ({x['reason']})" for x in skipped) + "."
    if outdir is not None:
        g["file"] = str(_write_new(Path(outdir), "audit-group", _json.dumps(g, indent=1)))
    if not as_json:
        for x in skipped:
            click.echo(f"NOT AUDITED: table {x['table']}: {x['reason']}")
        click.echo(f"GROUP: {g['statement']}" + (f" ({g['file']})" if g.get("file") else ""))
    return g


def _write_new(outdir: Path, stem: str, text: str) -> Path:
    """Write ``text`` to a new file ``outdir/<stem>-<UTC timestamp>.json`` (``-2``, ``-3``, … when that name is taken:
    two runs in one second never overwrite each other's file)."""
    from rngcert.report.writer import utc_stamp

    outdir.mkdir(parents=True, exist_ok=True)
    base = f"{stem}-{utc_stamp()}"
    for i in range(1, 10_000):
        p = outdir / (f"{base}.json" if i == 1 else f"{base}-{i}.json")
        try:
            with open(p, "x", encoding="utf-8") as fh:  # exclusive: an existing file is never replaced
                fh.write(text)
            return p
        except FileExistsError:
            continue
    raise FileExistsError(f"{outdir}: no free name for {base}.json")


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
    spin's id, time, result, dealer, direction, release, void flag, conflict flag (a spin id stored
    with two results: audits use neither), wheel and provenance (source file, SHA-256, line), and
    DIR/_rngcert/ with the manifest, the sources, the rejected rows and the conflicts.
    `rngcert ingest DIR` reads it back. The store is only read; the folder appears complete or
    not at all.
    """
    from rngcert.collect.store import Store

    def go():
        with Store(db, read_only=True, wait=wait, on_wait=_waiting(db)) as st:
            man = st.export_parquet(folder, tables=list(tables) or None, on_stale=lambda p, pid, gone: click.echo(
                f"{'removed' if gone else 'could not remove'} {p}: the temporary folder of an export to the same folder whose process "
                f"({pid}) no longer runs (killed before it could remove it){'' if gone else '; remove it by hand'}", err=True))
        if as_json:
            import json

            click.echo(json.dumps(man, indent=1))
            return
        click.echo(f"exported {man['spins']:,} spins of {len(man['tables'])} table(s) from {man['sources']} source(s) to {folder} "
                   f"({man['rejects']} rejected row(s) in {folder / '_rngcert' / 'rejects.jsonl'})")
        if man.get("conflicts"):
            click.echo(f"{man['conflicts']} conflict(s) in {folder / '_rngcert' / 'conflicts.jsonl'}: their stored spins have conflict = true "
                       "in the data (audits use neither result)")

    _run(go)
