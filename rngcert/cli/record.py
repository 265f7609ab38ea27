"""rngcert record: record a wheel live from its controller's serial line."""

from __future__ import annotations

from pathlib import Path

import click

from rngcert.cli._common import Real, echo_out, refuse_given, sigterm_stops_like_ctrl_c, written_table_id


@click.command(
    "record",
    epilog="""\b
Examples:
  rngcert record /dev/ttyUSB0 --out wheel-7.csv                 # the controller, 9600 8N1
  rngcert record /dev/ttyUSB0 --out wheel-7.csv --table wheel-7 --baud 19200
  rngcert record socket://10.0.0.7:4001 --out wheel-7.csv       # a serial-to-network adapter
  rngcert record capture.log --out spins.csv                    # a saved capture (read to its end)
  rngcert watch wheel-7.csv --follow                            # beside it: the anytime-valid detector
  rngcert record /dev/ttyUSB0 --out wheel-7.csv --watch         # or both in one process
\b
Exit codes: 0 stopped normally (idle timeout, --max-spins, end of a file, Ctrl-C or SIGTERM; games missing by the game numbers are
said, exit 0) · 13 ALARM (--watch) · 3 the log
cannot be written or resumed, or the source cannot be opened within --max-wait · 4 unknown or invalid protocol or
wheel · 2 usage.
""",
)
@click.argument("source")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The CSV spin log to append to (created, or resumed after its last spin).")
@click.option("--protocol", default="slingshot2", show_default=True, metavar="NAME|FILE.toml", help="The controller's protocol (packaged, or a lab's TOML file).")
@click.option("--table", default=None, callback=written_table_id, help="Write a table column with this id (default: none; the log's file name names the table).")
@click.option("--baud", type=click.IntRange(min=50), default=None, help="Baud rate (default: the protocol's, 9600). Serial settings are refused for a capture file.")
@click.option("--bytesize", type=click.Choice(["5", "6", "7", "8"]), default=None, help="Data bits (default: the protocol's, 8).")
@click.option("--parity", type=click.Choice(["N", "E", "O", "M", "S"]), default=None, help="Parity (default: the protocol's, N).")
@click.option("--stopbits", type=click.Choice(["1", "1.5", "2"]), default=None, help="Stop bits (default: the protocol's, 1).")
@click.option("--reconnect", type=Real(min=0.01), default=1.0, show_default=True, metavar="SECONDS", help="Seconds between attempts to reopen a source that went away.")
@click.option("--max-wait", type=Real(min=0), default=None, metavar="SECONDS", help="Give up (exit 3) when the source cannot be reopened for this long (default: keep trying).")
@click.option("--idle-timeout", type=Real(min=0), default=None, metavar="SECONDS", help="Stop after this long without a byte from the source (default: never).")
@click.option("--max-spins", type=click.IntRange(min=1), default=None, help="Stop after writing this many rows (exactly: later games, and the running one, are not written).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print a line per spin.")
@click.option("--watch", "watch", is_flag=True, help="Run watch's anytime-valid change detector on the spins as they are written (the log's earlier spins first); exit 13 on an alarm.")
@click.option("--equipment", "-e", default="european", show_default=True, help="With --watch (refused without it): the wheel (id or TOML file).")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="With --watch (refused without it): bound on any false alarm within --horizon spins.")
@click.option("--horizon", type=click.IntRange(min=1), default=100_000, show_default=True, help="With --watch (refused without it): spins over which --alpha bounds false alarms.")
@click.option("--block", type=click.IntRange(min=1), default=100, show_default=True, help="With --watch (refused without it): the detector is checked after every block of this many spins.")
def record(source, out, protocol, table, baud, bytesize, parity, stopbits, reconnect, max_wait, idle_timeout, max_spins, quiet, watch, equipment, alpha,
           horizon, block):
    """Record a wheel live: read SOURCE, decode the controller's protocol, append one row per game to --out.

    SOURCE is a serial port (/dev/ttyUSB0, COM3), a pyserial URL (socket://host:port,
    rfc2217://host:port), a pseudo-terminal, a FIFO, a capture file, or - (standard input).
    Each game is written (and flushed to disk) when it is decided: when the controller shows that
    it ended (the next game began, the table closed), void with the reason in void_reason when it
    was (a warning flag, the power switched off, no result, or two winning numbers in its result
    state). The result state the controller repeats is one game; a game with its result when the
    recording stops is written then. Lines that are not messages of the protocol go to
    OUT.rejects.csv with their reason.

    The log is a CSV spin log (spin_id, game, timestamp, result, void, void_reason, direction,
    rotor_speed): `rngcert certify`, `ingest` and `watch --follow` read it. spin_id counts the
    games of the log (the controller's game number repeats and wraps; it is kept as game). A game
    number that jumps ahead (002 then 158) means games missing from the source: said when the row
    is written and at the end (first missing, last missing, how many), kept in OUT.json, and their
    spin ids left out of the log (certify of it states the gap); one that goes back is said too.
    A source that goes away is reopened every --reconnect seconds and the game that was running
    continues; a restarted recorder continues after the log's last spin and does not write that
    game again while the controller repeats its result. A capture file already recorded into
    --out (the same bytes, or that capture grown since) is refused: its games would be written twice.
    A recording in which no line was a message of the protocol (every one rejected) exits 3.
    """
    if not watch:  # the detector's options: a recording without --watch runs no detector
        refuse_given(("equipment", "alpha", "horizon", "block"), "options of the change detector, which runs only with --watch")
    if Path(source).is_file():  # a saved capture: its bytes are read as they are, no serial line is opened
        refuse_given(("baud", "bytesize", "parity", "stopbits"), f"settings of a serial line; {source} is a capture file, read as it is")
    from rngcert.collect.record import record as run
    from rngcert.equipment.protocol import load_protocol

    proto = load_protocol(protocol)
    settings = _line_settings(proto, baud, bytesize, parity, stopbits)

    detector = _Detector(out, equipment, alpha, horizon, block) if watch else None

    def spin(s):
        if not quiet:
            what = f"VOID ({s.void_reason})" if s.void else s.result
            rs = "" if s.rotor_speed != s.rotor_speed else f" rotor {s.rotor_speed:g} {proto.rotor_unit}"
            echo_out(f"spin {s.spin_id} game {s.game:0{proto.game_digits}d}: {what} {s.direction}{rs} {s.timestamp}")
        if detector is not None and not s.void:
            detector.add(s)

    def event(text):
        click.echo(f"record: {text}", err=True)

    line = "a capture file, read as it is" if Path(source).is_file() else f"{settings['baudrate']} {settings['bytesize']}{settings['parity']}{settings['stopbits']:g}"
    click.echo(f"record: {source} → {out} (protocol {proto.name}, {line})", err=True)
    from rngcert.collect.record import RecordStats

    st = RecordStats()
    sigterm_stops_like_ctrl_c()  # a service manager's stop writes the running game, as Ctrl-C does
    try:
        run(source, out, proto, table=table, serial_settings=settings, reconnect=reconnect, max_wait=max_wait, idle_timeout=idle_timeout,
            max_spins=max_spins, on_spin=spin, on_event=event, stop=None if detector is None else detector.alarmed, stats=st)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (a service manager's stop: rngcert.errors.Terminated)
        from rngcert.errors import Terminated

        click.echo(f"record: stopped ({'SIGTERM' if isinstance(exc, Terminated) else 'Ctrl-C'}); every decided game is in the log", err=True)
        _summary(st, proto)
        return
    _summary(st, proto)
    _refuse_nothing_recorded(st, source, out, proto)
    if detector is not None and detector.alarmed():
        _alarm_exit(detector, out)


def _alarm_exit(detector, out) -> None:
    """``record --watch`` whose detector raised the alarm: say where and why, exit 13."""
    import sys

    from rngcert.cli.store import EXIT_ALARM

    w = detector.watcher
    click.echo(f"ALARM: evidence crossed the threshold at spin {w.alarm_spin} of {out} ({detector.alarm_at}); leading alternative: "
               f"{w.leader}", err=True)
    click.echo(f"  guarantee: {w.guarantee()}", err=True)
    sys.exit(EXIT_ALARM)


def _line_settings(proto, baud, bytesize, parity, stopbits) -> dict:
    """The serial line's settings: the protocol's, with the options given instead."""
    settings = dict(proto.serial)
    for key, v in (("baudrate", baud), ("bytesize", None if bytesize is None else int(bytesize)), ("parity", parity),
                   ("stopbits", None if stopbits is None else (1.5 if stopbits == "1.5" else int(stopbits)))):
        if v is not None:
            settings[key] = v
    return settings


def _summary(st, proto) -> None:
    """The session's counts on standard error, and the games missing by the controller's game numbers (first, last, how
    many, per jump) and its steps back."""
    click.echo(f"record: {st.spins} row(s) written ({st.void} void), {st.lines} line(s) read, {st.rejected} rejected, "
               f"{st.disconnects} disconnect(s), {st.reconnects} reconnect(s)", err=True)
    if (steps := st.steps_summary(proto.game_digits)) is not None:
        click.echo(f"record: {steps}", err=True)


def _refuse_nothing_recorded(st, source: str, out: Path, proto) -> None:
    """A recording in which every line was rejected (no message of the protocol) is an input error (exit 3), not a
    recording that went well: another controller, the wrong --protocol or line settings."""
    if st.lines and st.rejected >= st.lines and not st.spins:
        from rngcert.errors import InputError

        check = "--protocol" if Path(source).is_file() else "--protocol and the line settings (--baud, --parity, ...)"
        raise InputError(f"{source}: none of its {st.lines} lines is a message of protocol {proto.name}: every one rejected, with "
                         f"its reason, in {Path(str(out) + '.rejects.csv')}; check {check}")


class _Detector:
    """watch's detector fed by the recorder: the log's earlier spins first, then each new one."""

    def __init__(self, out: Path, equipment: str, alpha: float, horizon: int, block: int):
        from rngcert.equipment.wheel import load_wheel
        from rngcert.pipeline.watch import Watcher

        self.wheel = load_wheel(equipment)
        self.positions, _ = self.wheel.token_table()
        self.watcher = Watcher(self.wheel.position_space(), alpha=alpha, horizon=horizon, block=block)
        self.blocks = 0
        self.alarm_at = None  # where the alarm came: "spin_id N", or in the log's spins before this recording
        click.echo(f"record: watching: {self.watcher.guarantee()}", err=True)
        if Path(out).exists() and Path(out).stat().st_size:
            from rngcert.collect.spinlog import read_spin_log
            from rngcert.errors import NoDataError

            try:
                log = read_spin_log(out, self.wheel)
            except NoDataError:
                return
            for t in log.tables.values():
                st = self.watcher.update(t.outcomes.astype("int64"))
                if st.alarm and self.alarm_at is None:
                    self.alarm_at = "among the log's spins written before this recording"
                self._show(st, "the log so far")

    def add(self, s) -> None:
        pos = self.positions.get(s.result.strip().lower())
        if pos is None:
            click.echo(f"record: spin {s.spin_id}: {s.result!r} is not a pocket of {self.wheel.id}; not watched", err=True)
            return
        st = self.watcher.update([pos])
        if st.alarm and self.alarm_at is None:
            self.alarm_at = f"spin_id {s.spin_id}"
        self._show(st, f"spin {s.spin_id}")

    def _show(self, st, where: str) -> None:
        if st.blocks != self.blocks:
            self.blocks = st.blocks
            click.echo(f"record: watch after {where}: {st.line()}", err=True)

    def alarmed(self) -> bool:
        return self.watcher.alarm_spin is not None
