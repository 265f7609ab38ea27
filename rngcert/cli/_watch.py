"""``rngcert watch``: a growing spin log or a stored table under an anytime-valid change detector
(registered in ``rngcert/cli/app.py`` as ``store.watch``, re-exported by :mod:`rngcert.cli.store`)."""

from __future__ import annotations

import os
import shlex
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from rngcert.cli._common import Real, parse_columns, refuse_given, sigterm_stops_like_ctrl_c
from rngcert.cli._standard import load_for
from rngcert.cli._storeopts import _DB_OPTION, _WAIT_OPTION, _run, _waiting

#: Exit code of ``rngcert watch`` when the alarm is raised (not in cli.EXIT: a watch has no verdict).
EXIT_ALARM = 13
#: ``rngcert watch`` saw that spins were lost: a rotation it did not see (a file it never read, or
#: the spin ids of the next file skip ahead); it stops rather than watch on with a gap.
EXIT_LOST = 14

#: Seconds a watch of a FIFO waits for its writer when neither --follow nor --max-idle is given.
FIFO_WAIT = 60.0


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
  after each update; {"event": "note", "text"} (rotation, truncation, skipped rows; a gap in the
  spin ids also has "gap": {"first", "last", "missing", "file", "line"});
  and last either {"event": "alarm", ...} (exit 13) or {"event": "end", "spins", ..., "gaps",
  "missing_ids", "late_ids"} (exit 0);
  an error (exit 1-4) ends them with {"event": "error", "error", "exit_code"} instead, its message
  also on standard error.
Messages for people stay on standard error.

Exit codes: 0 no alarm · 13 ALARM · 14 spins lost: a rotation the watch did not see (two
rotations within one poll: a file never read, or the spin ids of the next file skip ahead) ·
3 input error (also: a FIFO cut by --max-idle while its writer still held it open) · 2 usage error.
Spin ids that skip within a log or table (spins the source never carried) are said and counted, exit 0.
""",
)
@click.argument("log", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--table", default=None, help="Watch this stored table instead of a log file (new rows as they are ingested).")
@_DB_OPTION
@click.option("--follow", is_flag=True, help="Keep watching for new rows (like tail -F: across truncation and rotation); without it, read what is there and exit.")
@click.option("--interval", type=Real(min=0.05), default=2.0, show_default=True, help="Seconds between polls with --follow (or of a FIFO); refused for a file or table read once.")
@click.option("--max-idle", type=Real(min=0), default=None, help="With --follow (refused without it, except on a FIFO), stop after this many seconds without new rows (says so on stderr). On a FIFO: the longest wait for a writer (default 60 s without --follow), and, if given, for new rows while the writer holds the pipe open: reaching it then cuts the stream, which is exit 3.")
@click.option("--settle", type=Real(min=0), default=5.0, show_default=True, metavar="SECONDS",
              help="LOG: a final line without a newline is counted once the log has not changed for this long; a rotated-away file is finished after this long without change.")
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (LOG only, refused with --table: a stored table knows its wheel).")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="LOG: map a column name of the file (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="LOG: its format.")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Bound on the probability of any false alarm within --horizon spins.")
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
    Whole-number spin ids that skip within a log or a stored table, per table, are spins the source
    never carried: each gap is said at once (SPIN IDS MISSING: the ids missing, how many, the file and
    line where the ids resume) and counted at the end; an id that arrives late inside a gap is no
    longer missing. The exit code stays 0 for them.
    """
    if bool(log) == bool(table):
        raise click.UsageError("give exactly one of LOG or --table T")
    if not follow and (table or not (log.exists() and stat.S_ISFIFO(os.stat(log).st_mode))):  # read once: nothing is polled
        refuse_given(("interval", "max_idle"), "options of polling with --follow (or of reading a FIFO); without --follow this "
                                               f"{'table' if table else 'file'} is read once")
    if table:  # the store's rows are already read, each table with its wheel
        refuse_given(("equipment", "columns", "fmt", "settle"), "options of reading a LOG file; a stored table knows its wheel and its rows are "
                                                                "read from the store")
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


def _note_out(run: _WatchRun, table: str, text: str, gap: dict | None = None) -> None:
    """A note on standard error (a gap in the spin ids as SPIN IDS MISSING) and, with --json, a ``note``
    event (with ``gap``: first, last, missing, file, line, for a gap)."""
    click.echo(f"watch: {'SPIN IDS MISSING: ' if gap else ''}{text}", err=True)
    if run.as_json:
        _json_line({"event": "note", "table": table, "text": text, **({"gap": gap} if gap else {})})


def _gap_summary(source: str, id_gaps: dict) -> dict:
    """The end's count of the gaps in the spin ids (said on standard error when there is one), for ``end``:
    ``gaps`` said, ``missing_ids`` still missing per table, ``late_ids`` that arrived inside a gap said before."""
    gaps = sum(g.gaps for g in id_gaps.values())
    missing = {t: g.missing for t, g in id_gaps.items() if g.missing}
    late = sum(g.late for g in id_gaps.values())
    if gaps:
        per = ", ".join(f"table {t}: {m:,}" for t, m in missing.items()) or "none"
        click.echo(f"watch: {gaps} gap(s) in the spin ids of {source}: {sum(missing.values()):,} spin id(s) missing at the end ({per}); "
                   f"{late:,} arrived late inside a gap. The missing spins were not watched", err=True)
    return {"gaps": gaps, "missing_ids": missing, "late_ids": late}


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
            elif ev.kind in ("note", "gap"):
                _note_out(run, ev.table, ev.text, ev.detail if ev.kind == "gap" else None)
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
            _gap_summary(str(log), lw.id_gaps)
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


def _stopped(exc: KeyboardInterrupt) -> None:
    """Say that a followed watch was stopped from outside (Ctrl-C, or SIGTERM: a service manager's stop) and ends as
    at --max-idle: what it watched is summed up, the ``end`` event written, exit 0."""
    from rngcert.errors import Terminated

    click.echo(f"watch: stopped ({'SIGTERM' if isinstance(exc, Terminated) else 'Ctrl-C'}); what was read is summed up below", err=True)


def _follow_log(run: _WatchRun, lw, handle: _LogEvents, is_fifo: bool, fifo_limit) -> bool:
    """Poll the log until it ends (FIFO closed, --max-idle, Ctrl-C or SIGTERM, or one read without --follow); True when
    a FIFO whose writer still held it open was cut by --max-idle."""
    if not run.follow and not is_fifo:
        handle(lw.step(final=True))  # a regular file read once: its last line counts
        return False
    sigterm_stops_like_ctrl_c()  # a followed log or a FIFO is watched until stopped: a stop, not a failure
    try:
        return _poll_log(run, lw, handle, is_fifo, fifo_limit)
    except KeyboardInterrupt as exc:  # (an unfinished last line is not a spin: the writer may still be writing it)
        _stopped(exc)
        return False


def _poll_log(run: _WatchRun, lw, handle: _LogEvents, is_fifo: bool, fifo_limit) -> bool:
    """The polls of :func:`_follow_log`."""
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
                click.echo(f"watch: stopped after {idle:.1f} s without new data (--max-idle {run.max_idle:g})", err=True)
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
    if lw.void:
        click.echo(f"watch: {lw.void} void spin(s) of {log} (no result: rows marked void) are not given to the detector", err=True)
    if not lw.watchers:  # nothing readable is an input error, as for certify (an empty log, a header, void or rejected rows only)
        why = "; ".join(([f"{lw.void} void spin(s), without a result"] if lw.void else [])
                        + ([f"{lw.rejected} row(s) (a value, in a permanence list) could not be read"] if lw.rejected else [])) or "the log holds no spin row"
        hint = "" if lw.void and not lw.rejected else "; check --equipment and --column"
        raise InputError(f"{log}: no readable spin while it was watched ({why}): nothing to watch{hint}")
    if lw.rejected:
        click.echo(f"watch: {lw.rejected} row(s) of {log} (a value, in a permanence list) could not be read and were not counted", err=True)
    gaps = _gap_summary(str(log), lw.id_gaps)
    if run.as_json:
        _json_line({"event": "end", "source": str(log), "spins": dict(lw.spins), "repeated": lw.repeated, "conflicts": lw.conflicts,
                    "rejected": lw.rejected, "void": lw.void, **gaps, "alarm": False})


def _watch_table(run: _WatchRun, table: str) -> None:
    """``rngcert watch --table T``: poll the stored table for new rows (once without --follow)."""
    tw = _TableWatch(run, table)
    idle_since = time.monotonic()
    if run.follow:
        sigterm_stops_like_ctrl_c()
    try:
        while True:
            if tw.poll():
                idle_since = time.monotonic()
            if not run.follow:
                break
            if run.max_idle is not None and time.monotonic() - idle_since > run.max_idle:
                click.echo(f"watch: stopped after {time.monotonic() - idle_since:.1f} s without new data (--max-idle {run.max_idle:g})", err=True)
                break
            time.sleep(run.interval)
    except KeyboardInterrupt as exc:
        if not run.follow:  # a single read interrupted: exit 130 as any command
            raise
        _stopped(exc)
    gaps = _gap_summary(f"store table {table}", {table: tw.gaps} if tw.gaps.gaps or tw.gaps.late else {})
    if run.as_json:
        _json_line({"event": "end", "source": f"store table {table}", "spins": {table: tw.seen}, **gaps, "alarm": False})


class _TableWatch:
    """The watch of one stored table: its detector fed the rows ingested since the last poll (by ``seq``),
    and its spin ids checked for gaps (:class:`~rngcert.pipeline.watch.id_gaps.IdGaps`; whole numbers, or text ids of one prefix)."""

    def __init__(self, run: _WatchRun, table: str):
        from rngcert.pipeline.watch.id_gaps import IdGaps

        self.run, self.table = run, table
        self.last_seq, self.seen, self.w = 0, 0, None
        self.gaps = IdGaps()
        self.prefix: str | None = None  # its spin ids' prefix: "" whole numbers, "R" for R1200 (None: none seen yet)
        self.labels = False  # its text ids are of two shapes: labels, not checked for gaps
        self.other: str | None = None  # the first id of neither shape stored before its prefix was known

    def poll(self) -> bool:
        """Read and watch the new rows; True when there were any (exit 13 on an alarm)."""
        import numpy as np

        from rngcert.collect.store import Store

        run, table = self.run, self.table
        with Store(run.db, read_only=True, wait=run.wait, on_wait=_waiting(run.db)) as st:
            got = st.spins(table, after_seq=self.last_seq)
            if got.n:
                self._check_ids(st, got)
        if not got.n:
            return False
        order = np.argsort(got.seq, kind="stable")
        self.last_seq = int(got.seq.max())
        w = self.w or self._start(got.equipment)
        sel = order[(~got.void[order]) & (got.pos[order] >= 0)]
        st_ = w.update(got.pos[sel])
        self.seen += sel.size
        run.status_out(table, st_)
        if st_.alarm:
            sid_all = got.spin_id.take(sel).to_pylist() if sel.size else []
            j = w.alarm_spin - 1 - (self.seen - sel.size)
            run.alarm_exit(table, w, sid_all[j] if 0 <= j < len(sid_all) else None, f"store table {table}")
        return True

    def _start(self, equipment: str):
        from rngcert.equipment.wheel import load_wheel
        from rngcert.pipeline.watch import Watcher

        run = self.run
        self.w = Watcher(load_wheel(equipment).position_space(), alpha=run.alpha, horizon=run.horizon, block=run.block)
        click.echo(f"watching table {self.table} of {run.db}: {self.w.guarantee()}", err=True)
        if run.as_json:
            _json_line({"event": "start", "table": self.table, "source": f"store table {self.table}", "guarantee": self.w.guarantee()})
        return self.w

    def _check_ids(self, st, got) -> None:
        """Say the gaps in the spin ids of the new rows (whole numbers, or text ids of the table's one prefix and a
        number, ``R1200``; void ones included; a spin id stored with two results, left out of the rows, is no gap), each
        with the file and line where the ids resume."""
        import numpy as np
        import pyarrow as pa

        from rngcert.collect.spinids import counter_ids

        if self.labels:
            return
        num, numeric, pre = counter_ids(got.spin_id, self.prefix)
        numeric = self._until_labels(st, got, numeric, pre)
        ids = num[numeric]
        if not ids.size:
            return
        self.prefix = pre
        if pre:
            texts = st.conflicted_ids(self.table, text=True)
            cnum, cok, _ = counter_ids(pa.array(texts, pa.string()), pre) if texts else (np.zeros(0, np.int64), np.zeros(0, bool), pre)
            conflicted = cnum[cok]
        else:
            conflicted = np.asarray(st.conflicted_ids(self.table), dtype=np.int64)
        ids = np.concatenate([ids, conflicted[conflicted <= ids.max()]])
        gaps, late = self.gaps.update(ids)
        full, rest = self.gaps.to_say(gaps)
        sid = (lambda x: int(x)) if not pre else (lambda x: f"{pre}{x}")  # noqa: E731 - the id as stored
        for g in full:
            file, line = st.spin_origin(self.table, sid(g.resume)) or (f"store {self.run.db}", 0)
            ids_ = f"spin_id {sid(g.first)}" if g.first == g.last else f"spin_id {sid(g.first)} to {sid(g.last)}"
            text = (f"{file}:{line}: table {self.table}: {ids_} missing ({g.missing:,}): the stored ids go from {sid(g.after)} to "
                    f"{sid(g.resume)} here; {self._why_missing(st, sid(g.after), sid(g.resume))}, not watched")
            _note_out(self.run, self.table, text, {"first": sid(g.first), "last": sid(g.last), "missing": g.missing, "file": file, "line": line})
        if rest:
            file, line = st.spin_origin(self.table, sid(rest[-1].resume)) or (f"store {self.run.db}", 0)
            _note_out(self.run, self.table, self.gaps.more(self.table, rest, f"{file}:{line}", prefix=pre))
        if late.size:
            _note_out(self.run, self.table, f"table {self.table}: {late.size} spin_id(s) arrived late in the store, inside a gap said "
                                            f"before: no longer missing; {self.gaps.missing:,} still missing")

    def _until_labels(self, st, got, numeric, pre):
        """``numeric`` without the rows from the first stored id of another shape on, in a table of text ids (``r10`` among
        ``R`` ids, ``X``): certify counts gaps in text ids only when every id is the table's one prefix and a number, so
        from there the table's ids are labels, no longer checked, and a note says so."""
        import numpy as np

        from rngcert.collect.spinids import whole_number_ids

        other = np.flatnonzero(~numeric & ~whole_number_ids(got.spin_id)[3])
        first = int(other[np.argmin(got.seq[other])]) if other.size else -1
        if pre is None and other.size and self.other is None:
            self.other = str(got.spin_id[first])  # (an id of neither shape before the table's prefix is known)
        if not pre or (first < 0 and self.other is None):
            return numeric
        sid = self.other if self.other is not None else str(got.spin_id[first])
        self.labels = True
        file, line = st.spin_origin(self.table, sid) or (f"store {self.run.db}", 0)
        _note_out(self.run, self.table, f"{file}:{line}: table {self.table}: spin_id {sid!r} is not {pre} and a number, as the table's "
                                        "other ids are: ids of two shapes, no longer checked for gaps (certify counts gaps in text ids only where all are of one prefix)")
        return numeric & (got.seq < got.seq[first]) if self.other is None else numeric & False

    def _why_missing(self, st, after, resume) -> str:
        """Why ids between two stored ids are missing, in words: spins the source never carried, or, where rows read
        between the two were rejected on ingest (their spin ids are not stored), possibly those rows."""
        rej = st.rejected_between(self.table, after, resume)
        if rej is None:
            return "spins the source never carried (lost by the wheel controller, the recorder or the export)"
        path, n, lines = rej
        shown = ", ".join(map(str, lines)) + (", …" if n > len(lines) else "")
        return (f"not stored: {n} row(s) of {path} between them (line(s) {shown}) were rejected on ingest and may hold them "
                f"(rngcert rejects --db {self.run.db} --file {path}); else spins the source never carried")
