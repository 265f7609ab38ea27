"""rngcert record: record a wheel live from its controller's serial line."""

from __future__ import annotations

from pathlib import Path

import click


@click.command(
    "record",
    epilog="""\b
Examples:
  rngcert record /dev/ttyUSB0 --out wheel-7.csv                 # the controller, 9600 8N1
  rngcert record /dev/ttyUSB0 --out wheel-7.csv --table wheel-7 --baud 19200
  rngcert record socket://10.0.0.7:4001 --out wheel-7.csv       # a serial-to-network adapter
  rngcert record capture.log --out spins.csv                    # a saved capture (read to its end)
  rngcert watch wheel-7.csv --follow                            # beside it: the anytime-valid detector
\b
Exit codes: 0 stopped normally (idle timeout, --max-spins, end of a file, Ctrl-C) · 3 the log cannot be
written or resumed, or the source cannot be opened within --max-wait · 4 unknown or invalid protocol · 2 usage.
""",
)
@click.argument("source")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The CSV spin log to append to (created, or resumed after its last spin).")
@click.option("--protocol", default="slingshot2", show_default=True, metavar="NAME|FILE.toml", help="The controller's protocol (packaged, or a lab's TOML file).")
@click.option("--table", default=None, help="Write a table column with this id (default: none; the log's file name names the table).")
@click.option("--baud", type=click.IntRange(min=50), default=None, help="Baud rate (default: the protocol's, 9600).")
@click.option("--bytesize", type=click.Choice(["5", "6", "7", "8"]), default=None, help="Data bits (default: the protocol's, 8).")
@click.option("--parity", type=click.Choice(["N", "E", "O", "M", "S"]), default=None, help="Parity (default: the protocol's, N).")
@click.option("--stopbits", type=click.Choice(["1", "1.5", "2"]), default=None, help="Stop bits (default: the protocol's, 1).")
@click.option("--reconnect", type=click.FloatRange(min=0.01), default=1.0, show_default=True, metavar="SECONDS", help="Seconds between attempts to reopen a source that went away.")
@click.option("--max-wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS", help="Give up (exit 3) when the source cannot be reopened for this long (default: keep trying).")
@click.option("--idle-timeout", type=click.FloatRange(min=0), default=None, metavar="SECONDS", help="Stop after this long without a byte from the source (default: never).")
@click.option("--max-spins", type=click.IntRange(min=1), default=None, help="Stop after writing this many rows.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print a line per spin.")
def record(source, out, protocol, table, baud, bytesize, parity, stopbits, reconnect, max_wait, idle_timeout, max_spins, quiet):
    """Record a wheel live: read SOURCE, decode the controller's protocol, append one row per game to --out.

    SOURCE is a serial port (/dev/ttyUSB0, COM3), a pyserial URL (socket://host:port,
    rfc2217://host:port), a pseudo-terminal, a FIFO, a capture file, or - (standard input).
    Each game is written (and flushed to disk) when it is decided: at its first result message,
    or, when void (a warning flag, the power switched off, the table closed without a result),
    when the controller shows that it ended, with the reason in void_reason. The result
    state the controller repeats is one game. Lines that are not messages of the protocol go to
    OUT.rejects.csv with their reason.

    The log is a CSV spin log (spin_id, game, timestamp, result, void, void_reason, direction,
    rotor_speed): `rngcert certify`, `ingest` and `watch --follow` read it. spin_id counts the
    games of the log (the controller's game number repeats and wraps; it is kept as game).
    A source that goes away is reopened every --reconnect seconds and the game that was running
    continues; a restarted recorder continues after the log's last spin and does not write that
    game again while the controller repeats its result.
    """
    from rngcert.collect.record import record as run
    from rngcert.equipment.protocol import load_protocol

    proto = load_protocol(protocol)
    settings = dict(proto.serial)
    for key, v in (("baudrate", baud), ("bytesize", None if bytesize is None else int(bytesize)), ("parity", parity),
                   ("stopbits", None if stopbits is None else (1.5 if stopbits == "1.5" else int(stopbits)))):
        if v is not None:
            settings[key] = v

    def spin(s):
        if quiet:
            return
        what = f"VOID ({s.void_reason})" if s.void else s.result
        rs = "" if s.rotor_speed != s.rotor_speed else f" rotor {s.rotor_speed:g} {proto.rotor_unit}"
        click.echo(f"spin {s.spin_id} game {s.game:0{proto.game_digits}d}: {what} {s.direction}{rs} {s.timestamp}")

    def event(text):
        click.echo(f"record: {text}", err=True)

    click.echo(f"record: {source} → {out} (protocol {proto.name}, {settings['baudrate']} {settings['bytesize']}{settings['parity']}{settings['stopbits']:g})",
               err=True)
    try:
        st = run(source, out, proto, table=table, serial_settings=settings, reconnect=reconnect, max_wait=max_wait, idle_timeout=idle_timeout,
                 max_spins=max_spins, on_spin=spin, on_event=event)
    except KeyboardInterrupt:
        click.echo("record: stopped (Ctrl-C); every decided game is in the log", err=True)
        return
    click.echo(f"record: {st.spins} row(s) written ({st.void} void), {st.lines} line(s) read, {st.rejected} rejected, "
               f"{st.disconnects} disconnect(s), {st.reconnects} reconnect(s)", err=True)
