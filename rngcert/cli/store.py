"""CLI commands of the store: ``ingest``, ``rejects``, ``audit``, ``watch``.

Standalone click commands; ``rngcert/cli.py`` registers them with ``main.add_command(...)``.
Exit codes follow the table in :mod:`rngcert.cli`; ``watch`` adds :data:`EXIT_ALARM`.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import click
import numpy as np

from rngcert.cli._common import EXIT, EXIT_EQUIPMENT, EXIT_INPUT, fail, parse_columns, summary_text
from rngcert.collect.store import DEFAULT_DB

#: Exit code of ``rngcert watch`` when the alarm is raised (not in cli.EXIT: a watch has no verdict).
EXIT_ALARM = 13

_DB_OPTION = click.option(
    "--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True, help="The store (a DuckDB file)."
)


def _run(fn):
    """Map rngcert errors to the documented exit codes when the command runs outside cli.main."""
    from rngcert.errors import EquipmentError, InputError, RngcertError

    try:
        return fn()
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except (InputError, RngcertError, OSError, UnicodeDecodeError) as exc:
        fail(EXIT_INPUT, str(exc))


def _cmdline(name: str) -> str:
    return "rngcert " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv and sys.argv[0].endswith("rngcert") else f"rngcert {name}"


# --------------------------------------------------------------------------- ingest
@click.command(
    "ingest",
    epilog="""\b
Examples:
  rngcert ingest spins-2026-01.csv spins-2026-02.csv
  rngcert ingest spielbank-wiesbaden_t5_190424.txt --table wiesbaden-5
  rngcert ingest live_roulette_spins.csv --column result=number \\
      --column table=file --column spin_id=seq_in_file
  rngcert ingest live.csv --db /srv/rngcert/casino.duckdb   # a grown export adds only new rows
""",
)
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@_DB_OPTION
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file the logs were recorded on.")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file, e.g. result=Number (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--table", default=None, help="Table id for logs without a table column (default: the file name without extension).")
def ingest(logs, db, equipment, columns, fmt, table):
    """Load spin logs into the store (idempotent, one transaction per file).

    Every row is kept with its source file's SHA-256 and line. A file already ingested adds
    nothing; a log that grew adds only its new rows; a row whose (table, spin_id) is stored with
    a different result is reported as a conflict and never overwritten; unreadable rows go to
    the rejects table (see `rngcert rejects`). Logs without spin_id (permanence lists) are
    numbered by position in the file. Shoe logs are not stored yet (spins only).
    """
    from rngcert.collect.store import Store

    def go():
        with Store(db) as st:
            for p in logs:
                (res,) = st.ingest([p], equipment, columns=parse_columns(columns), fmt=fmt, table=table)
                click.echo(res.summary())
                if res.status == "empty" or (res.status == "ingested" and res.accepted + res.void == 0):
                    unreadable.append(str(p))
                for c in res.conflict_sample:
                    click.echo(
                        f"  conflict: table {c['table']} spin {c['spin_id']}: stored {c['stored']} (line {c['stored_line']}), "
                        f"this file says {c['new']} (line {c['line']}): kept the stored row",
                        err=True,
                    )
                if res.conflicts > len(res.conflict_sample):
                    click.echo(f"  … {res.conflicts - len(res.conflict_sample)} more conflict(s) in the store's conflicts table", err=True)
            click.echo(f"store {db}: {st.count_spins()} spins in {len(st.tables())} table(s)")
            return unreadable

    unreadable = []

    def go_checked():
        from rngcert.collect.csvstream import is_stream

        for p in logs:  # before the store is opened (or created): a missing log leaves no empty store
            is_stream(p)
        bad = go()
        if bad:

            click.echo(f"rngcert: error: nothing readable in {', '.join(bad)}", err=True)
            sys.exit(EXIT_INPUT)

    _run(go_checked)


# --------------------------------------------------------------------------- rejects
@click.command(
    "rejects",
    epilog="""\b
Examples:
  rngcert rejects
  rngcert rejects --file live.csv --limit 20
  rngcert rejects --csv > rejects.csv
""",
)
@_DB_OPTION
@click.option("--file", "file", default=None, help="Only rows of this file (path or its ending).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many rows.")
@click.option("--csv", "as_csv", is_flag=True, help="Write CSV (file, line, column, reason, text).")
def rejects(db, file, limit, as_csv):
    """List the rows the store rejected on ingest: file, line, column and reason."""
    from rngcert.collect.store import Store

    def go():
        with Store(db, read_only=True) as st:
            rows = st.rejects(file=file, limit=limit)
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
@click.command(
    "audit",
    epilog="""\b
Examples:
  rngcert audit --table wiesbaden-5
  rngcert audit --table T7 --since 2026-01-01 --until 2026-07-01 --seed 1
  rngcert audit --table T7 --last 20000
  rngcert audit --all --jobs 2 --no-plots
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
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Tables audited in parallel (with --all).")
@click.option("--json", "as_json", is_flag=True, help="Print the report JSON(s) instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
def audit(db, table, all_tables, since, until, last, alpha, seed, resamples, min_bias, power, outdir, jobs, as_json, no_plots):
    """Audit stored spins of a table with the certify battery, and record the audit.

    Writes the same report as `rngcert certify` (plus an audit-trend section: earlier audits of
    the table, homogeneity of pocket frequencies between this window and the previous one and
    across dealers) and an audit record in the store (window, verdict, every p-value, bias
    estimates, report path). Exits with the verdict's code (the worst table's with --all).
    """
    from rngcert.battery.core import worst
    from rngcert.collect.store import Store
    from rngcert.pipeline.audit import audit_all, audit_table

    if bool(table) == bool(all_tables):
        raise click.UsageError("give exactly one of --table T or --all")

    def go():
        kw = dict(alpha=alpha, seed=seed, n_resamples=resamples, required_bias=min_bias, power=power, outdir=outdir, figures=not no_plots, command=_cmdline("audit"))
        with Store(db) as st:
            if all_tables:
                results = audit_all(st, since=since, until=until, last=last, jobs=jobs, **kw)
            else:
                results = [audit_table(st, table, since=since, until=until, last=last, **kw)]
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
            click.echo(f"    earlier audits of this table: {len(tr['earlier_audits'])}; audit id {r.audit_id}; report {r.paths.get('html')}")
        if not results:  # nothing to audit is an input error, as an empty window of --table is

            click.echo(f"rngcert: error: no table with spins in the store {db}", err=True)
            sys.exit(EXIT_INPUT)
        sys.exit(EXIT[worst([r.verdict for r in results])])

    _run(go)


# --------------------------------------------------------------------------- watch
class _LogTail:
    """Reads the complete new lines of a growing log and returns them as SpinRows."""

    def __init__(self, path: Path, wheel, columns, fmt):
        self.path, self.wheel, self.columns, self.fmt = path, wheel, columns, fmt
        self.offset = 0
        self.header = b""
        self.lines_before = 0

    def poll(self):
        from rngcert.collect.spinlog import detect_format, read_spin_rows
        from rngcert.errors import InputError, NoDataError

        size = self.path.stat().st_size
        if size < self.offset:
            raise InputError(f"{self.path} shrank from {self.offset} to {size} bytes while watched (log rotated?): restart the watch")
        if size == self.offset:
            return None
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(size - self.offset)
        cut = data.rfind(b"\n")
        if cut < 0:
            return None  # no complete line yet
        chunk = data[: cut + 1]
        first = self.offset == 0
        if first:
            if self.fmt == "auto":
                self.fmt = detect_format(self.path, chunk)
            if self.fmt == "csv":
                self.header = chunk.split(b"\n", 1)[0] + b"\n"
        payload = chunk if first or not self.header else self.header + chunk
        shift = self.lines_before - (0 if first or not self.header else 1)
        self.offset += len(chunk)
        self.lines_before += chunk.count(b"\n")
        try:
            rows = read_spin_rows(self.path, self.wheel, columns=self.columns, fmt=self.fmt, data=payload)
        except NoDataError:
            return None
        rows.line = rows.line + shift
        return rows


@click.command(
    "watch",
    epilog="""\b
Examples:
  rngcert watch live.csv --follow                    # tail a growing export
  rngcert watch live.csv --follow --interval 5 --max-idle 3600
  rngcert watch --table T7                           # replay a stored table once
  rngcert watch --table T7 --follow --alpha 0.001 --horizon 1000000

Exit codes: 0 no alarm · 13 ALARM · 3 input error · 2 usage error.
""",
)
@click.argument("log", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--table", default=None, help="Watch this stored table instead of a log file (new rows as they are ingested).")
@_DB_OPTION
@click.option("--follow", is_flag=True, help="Keep watching for new rows (like tail -f); without it, process what is there and exit.")
@click.option("--interval", type=click.FloatRange(min=0.05), default=2.0, show_default=True, help="Seconds between polls with --follow.")
@click.option("--max-idle", type=click.FloatRange(min=0), default=None, help="With --follow, stop after this many seconds without new rows.")
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (LOG only; a stored table knows its wheel).")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Bound on the probability of any false alarm within --horizon spins.")
@click.option("--horizon", type=click.IntRange(min=1), default=100_000, show_default=True, help="Spins over which --alpha bounds false alarms (mean spins to a false alarm >= horizon/alpha).")
@click.option("--block", type=click.IntRange(min=1), default=100, show_default=True, help="The detector is updated and checked after every block of this many spins.")
@click.option("--no-record", is_flag=True, help="Do not write the alarm record into the store.")
def watch(log, table, db, follow, interval, max_idle, equipment, columns, fmt, alpha, horizon, block, no_record):
    """Watch a growing spin log (or a stored table) with an anytime-valid change detector.

    Keeps a mixture Shiryaev-Roberts e-detector (Shin, Ramdas & Rinaldo 2022) over structured
    alternatives: single pockets and sectors (widths 1, 3, 5, 9), first harmonics, and sectors
    of the distance between consecutive results (the wheel-distance distribution). Checking after
    every block does not inflate false alarms: for a fair wheel, P(any alarm within --horizon
    spins) <= --alpha (Doob/Ville maximal inequality), and the mean time to a false alarm is at
    least horizon/alpha spins. Prints a status line per update; on alarm, writes an alarm record
    in the store and exits with code 13. Each table of a log is watched separately.
    """
    from rngcert.collect.store import Store
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.audit import Watcher

    if bool(log) == bool(table):
        raise click.UsageError("give exactly one of LOG or --table T")

    def record(tname, w: Watcher, spin_id, source):
        if no_record:
            return None
        import datetime as _dt

        with Store(db) as st:
            return st.record_alarm(
                {
                    "table_id": tname, "source": source, "created_utc": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
                    "spin_count": w.alarm_spin, "spin_id": spin_id, "ts": None, "log_evidence": w.log_m, "log_threshold": w.log_threshold,
                    "alternative": w.leader, "guarantee": w.guarantee(),
                }
            )

    def alarm_exit(tname, w, spin_id, source):
        aid = record(tname, w, spin_id, source)
        click.echo(f"ALARM table {tname}: evidence crossed the threshold at spin {w.alarm_spin} (spin_id {spin_id}); leading alternative: {w.leader}", err=True)
        click.echo(f"  guarantee: {w.guarantee()}", err=True)
        if aid is not None:
            click.echo(f"  alarm record {aid} written to {db}", err=True)
        sys.exit(EXIT_ALARM)

    def go_log():
        wheel = load_wheel(equipment)
        space = wheel.position_space()
        tail = _LogTail(log, wheel, parse_columns(columns), fmt)
        watchers: dict[str, Watcher] = {}
        idle_since = time.monotonic()
        announced = False
        while True:
            rows = tail.poll()
            if rows is not None and rows.n:
                idle_since = time.monotonic()
                ok = rows.accepted & (rows.pos >= 0)
                if rows.table is not None:
                    enc = rows.table.dictionary_encode()
                    tcodes = enc.indices.to_numpy(zero_copy_only=False)
                    tnames = enc.dictionary.to_pylist()
                else:
                    tcodes, tnames = np.zeros(rows.n, dtype=np.int64), [log.stem]
                used, first_at = np.unique(tcodes[ok], return_index=True)
                for c in used[np.argsort(first_at)].tolist():  # tables in order of appearance (a handful)
                    tname = tnames[c] or "(no table)"
                    sel = np.flatnonzero(ok & (tcodes == c))
                    w = watchers.get(tname)
                    if w is None:
                        w = watchers[tname] = Watcher(space, alpha=alpha, horizon=horizon, block=block)
                        if not announced:
                            click.echo(f"watching {log}: {w.guarantee()}", err=True)
                            announced = True
                    before = w.status().spins
                    st = w.update(rows.pos[sel])
                    click.echo(f"[{tname}] {st.line()}")
                    if st.alarm:
                        j = sel[w.alarm_spin - 1 - before]
                        sid = rows.spin_id[int(j)].as_py() if rows.spin_id is not None else f"line {int(rows.line[j])}"
                        alarm_exit(tname, w, sid, str(log))
            if not follow:
                break
            if max_idle is not None and time.monotonic() - idle_since > max_idle:
                break
            time.sleep(interval)
        if not watchers:
            click.echo(f"{log}: no readable spin yet", err=True)

    def go_table():
        from rngcert.errors import InputError

        last_seq = 0
        w = None
        idle_since = time.monotonic()
        seen = 0
        while True:
            got = None
            try:
                with Store(db, read_only=True) as st:
                    stored = st.spins(table, after_seq=last_seq)
                    got = stored
            except InputError as exc:  # store busy (an ingest holds the write lock): retry later
                if not (follow and "in use" in str(exc)):
                    raise
            if got is not None and got.n:
                idle_since = time.monotonic()
                order = np.argsort(got.seq, kind="stable")
                last_seq = int(got.seq.max())
                if w is None:
                    wheel = load_wheel(got.equipment)
                    w = Watcher(wheel.position_space(), alpha=alpha, horizon=horizon, block=block)
                    click.echo(f"watching table {table} of {db}: {w.guarantee()}", err=True)
                ok = (~got.void[order]) & (got.pos[order] >= 0)
                sel = order[ok]
                st_ = w.update(got.pos[sel])
                seen += sel.size
                click.echo(f"[{table}] {st_.line()}")
                if st_.alarm:
                    sid_all = got.spin_id.take(sel).to_pylist() if sel.size else []
                    before = seen - sel.size
                    j = w.alarm_spin - 1 - before
                    alarm_exit(table, w, sid_all[j] if 0 <= j < len(sid_all) else None, f"store table {table}")
            if not follow:
                break
            if max_idle is not None and time.monotonic() - idle_since > max_idle:
                break
            time.sleep(interval)

    _run(go_log if log else go_table)
