"""Record a wheel live: read a controller's serial line (or any byte stream), decode its protocol,
and append one spin-log row per game as it happens (``rngcert record``).

* **Sources.** A serial port (``/dev/ttyUSB0``, ``COM3``; pyserial, the protocol's line settings
  by default: 9600 8N1), a pyserial URL (``socket://host:port``, ``rfc2217://…``), a
  pseudo-terminal, a FIFO, a regular file (read to its end), or ``-`` (standard input).
* **The log.** CSV with the standard spin-log columns ``spin_id, game, timestamp, result, void,
  void_reason, direction, rotor_speed`` (and ``table`` when given): certify, ingest and watch
  read it as they read any spin log. Each row is written and flushed (and, from a live source,
  fsync'ed) when its game is decided: when the next message shows that it ended (the next game began, the table
  closed), so that a second winning number in its result state voids it instead of being lost; a game with its
  result when the recording stops (the source ends, the idle timeout, Ctrl-C; not when ``max_spins`` rows are written:
  exactly that many are) is written then. Lines that are not messages go to ``LOG.rejects.csv`` with their reason;
  ``LOG.json`` keeps the protocol (with its assumed units) and every session's source, settings and counts.
* **Disconnects.** A device that goes away (a USB adapter unplugged, the other end of a pty or
  FIFO closed) is reopened every ``reconnect`` seconds; the game that was running continues:
  the decoder keeps it, so a game cut by a disconnect is written once, when it ends.
  A line cut off by the disconnect is rejected ("truncated by a disconnect").
* **Restarts.** On start the log's last row is read: spin ids continue after it, and a game the
  controller is still repeating (its result state, same game number as the last row, a row with a
  winning number: void or not) is recognised as already written, not written again (repeated with another
  number than the row's, at once or in a later repeat, a CONFLICT note says so: two winning numbers in one
  game, the row written before the restart is not changed). After a void row without a number (a game
  void before its result, written when the recording stopped, or one that ended so), a game with the same
  game number cannot be told from the same game continuing: it is written, with a note saying so. A game
  running while the recorder was stopped is written from the messages that arrive after the restart (its
  launch may be missed: rotor speed then empty). A last row cut off by a crash (no newline) is removed and said so.
  A capture file is not a stream that goes on: one already recorded into the log (``LOG.json`` keeps each capture's
  size and SHA-256), or one that starts with such a capture's bytes (grown since), is refused: its games would be
  written a second time as new spins.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow.compute as pc

from rngcert.collect import csvsafe
from rngcert.collect.csvsafe import safe_cell
from rngcert.collect.protocol import Games, LineReject, _strs, decode
from rngcert.equipment.protocol import Protocol
from rngcert.errors import InputError, StorageError, Terminated

#: Longest line read from a stream (bytes): a longer run without a line end is rejected as it arrives, not kept growing.
MAX_LINE = 1 << 16

#: Columns of the recorded spin log, in order (``table`` is added when a table is named).
COLUMNS = ("spin_id", "game", "timestamp", "result", "void", "void_reason", "direction", "rotor_speed")


@dataclass
class Spin:
    """One decided game, as written to the log."""

    spin_id: int
    game: int
    timestamp: str
    result: str
    void: bool
    void_reason: str
    direction: str
    rotor_speed: float
    line: int
    #: the controller's game number of the game before (-1: none), the games missing between them by their numbers (their spin
    #: ids left out), and a step back of the number (see :mod:`rngcert.collect.protocol`)
    after_game: int = -1
    missing: int = 0
    back: bool = False


class LiveDecoder:
    """Incremental decoding of a controller's stream: lines in, decided games out.

    It keeps the lines of the game still running (and nothing older), re-decodes them with
    :func:`rngcert.collect.protocol.decode` whenever lines arrive (so the rules are exactly those
    of a capture read whole), and returns each game once, when it is decided.

    Parameters
    ----------
    proto : Protocol
    name : str
        Source name for notes.
    last : tuple (spin_id, game, result, void) or None
        The log's last row when resuming.
    clock : bool
        A game whose deciding line has no timestamp of the capture program gets the time its line arrived (a live
        source); False (a capture file read now): none.
    """

    def __init__(self, proto: Protocol, name: str = "stream", last: tuple | None = None, clock: bool = True):
        self.proto = proto
        self.clock = clock  # a game without its capture's timestamp gets the time its line arrived (a live source), else none
        self.name = name
        self.lines: list[str] = []
        self.line_no: list[int] = []
        self.when: list[str] = []
        self.next_line = 1
        self.last = last
        self.emitted = int(last[0]) if last else 0
        self.base = self.emitted + 1
        self.prev = (int(last[1]), bool(str(last[2]))) if last else None  # (game number, reached its result) of the game before the kept lines
        self.resume_checked = last is None
        self.resumed: tuple | None = None  # (spin id, game, result) of the last row's game repeated after a restart
        self.reported: set[int] = set()
        self.notes: list[str] = []
        self.written: tuple | None = None  # (spin id, result) of the last row written with a result

    def feed(self, lines: list[str], when: str | None = None) -> tuple[list[Spin], list[LineReject]]:
        """Add received lines (without their newlines); returns the games decided and the new rejects."""
        if not lines:
            return [], []
        when = when or utc_now()
        for ln in lines:
            self.lines.append(ln.rstrip("\r\n"))
            self.line_no.append(self.next_line)
            self.when.append(when)
            self.next_line += 1
        return self._run()

    def reject_fragment(self, text: str, why: str) -> LineReject:
        """A partial line (cut by a disconnect): counted as a line and rejected."""
        r = LineReject(self.next_line, "message", why, text[:200])
        self.next_line += 1
        return r

    def _decode(self):
        arr = pc.utf8_rtrim_whitespace(_strs(self.lines))  # line ends trimmed as a whole capture's are (split_lines)
        return decode(arr, np.asarray(self.line_no, dtype=np.int64), self.proto, self.name, final=False, seq0=self.base, prev=self.prev)

    def _run(self):
        dec = self._decode()
        g = dec.games
        if not self.resume_checked and g.n:
            self.resume_checked = True
            if self._resume(g):
                dec = self._decode()
                g = dec.games
        self._check_resumed(g)
        self._check_written(g)
        out = self._spins(g, g.complete & (g.spin_id > self.emitted))
        rej = [r for r in dec.rejected if r.line not in self.reported]
        self.reported.update(r.line for r in rej)
        self._cut(g)
        return out, rej

    def _resume(self, g: Games) -> bool:
        """The first game after a restart: the log's last row when the controller still repeats its result state with the
        row's game number, and the row has a winning number (void or not: a void row that has one reached the result state
        too, and its game is not written again). True when it is."""
        sid, game, result, void = self.last
        gg = f"{int(game):0{self.proto.game_digits}d}"
        if int(g.game[0]) == int(game) and void and not str(result):  # which it is cannot be told: written, and said so
            self.notes.append(f"game {gg} after the restart has the game number of the log's last row (spin {sid}, void without a "
                              "number): written as a new game; if the controller was still in that game when the recording stopped, "
                              "the log has it twice (the second from the messages after the restart): check it")
        if int(g.first_state[0]) != self.proto.result_state or int(g.game[0]) != int(game) or not str(result):
            return False  # (a void row without a number may have ended before the result state: a game in it now may be the next one)
        self.base = int(sid)  # the game the controller still repeats is the log's last row
        self.prev = None  # (its number is the row's: no step from the row to itself)
        now = str(g.result[0])
        if void:  # nothing of it is counted: a number the controller repeats now changes nothing
            self.notes.append(f"game {gg} is the log's last row (spin {sid}, void): not written again"
                              + ("" if now == str(result) else f" (the controller now repeats it with {now}, the row's result is {result})"))
        elif now == str(result):
            self.notes.append(f"game {gg} (result {result}) is the log's last row (spin {sid}): not written again")
            self.resumed = (int(sid), gg, str(result))  # a later repeat with another number is a conflict too
        else:  # written before the stop with one number, repeated after the restart with another
            self.notes.append(f"CONFLICT: game {gg} is the log's last row (spin {sid}) with result {result}, and the controller now "
                              f"repeats it with {now}: two winning numbers in one game; the row was written before the "
                              "restart and is not changed: check it")
        return True

    def _check_resumed(self, g: Games) -> None:
        """A CONFLICT note when the log's last row's game, repeated after the restart with the row's number at first, turns
        void (another number in a later repeat)."""
        if self.resumed is None or not g.n or int(g.spin_id[0]) != self.resumed[0]:
            return
        if g.complete[0] or g.void[0]:
            sid, gg, result = self.resumed
            self.resumed = None
            if g.void[0]:
                self.notes.append(f"CONFLICT: game {gg} is the log's last row (spin {sid}) with result {result}, and after the restart "
                                  f"the controller's repeats make it void: {g.reason[0]}; the row was written before the restart and is "
                                  "not changed: check it")

    def _check_written(self, g: Games) -> None:
        """A CONFLICT note when the last row written with a result, its game still kept (the message that ended it may be
        a stray), turns void: a repeat of its result state after the stray gave another number."""
        w = self.written
        i = np.flatnonzero(g.spin_id == w[0]) if w is not None else np.zeros(0, np.int64)
        if i.size and bool(g.void[i[0]]):
            self.written = None
            self.notes.append(f"CONFLICT: game {g.game[i[0]]:0{self.proto.game_digits}d} (spin {w[0]}) was written with result {w[1]} when "
                              f"a message of another game ended it, which the next message showed to be a stray; its result state then "
                              f"repeats: {g.reason[i[0]]}; the row is not changed: check it")

    def _spins(self, g: Games, which: np.ndarray) -> list[Spin]:
        out = []
        for i in np.flatnonzero(which).tolist():
            ln = int(g.line[i])
            try:
                ts = g.timestamp[i] if g.timestamp is not None and g.timestamp[i] else self.when[self.line_no.index(ln)] if self.clock else ""
            except ValueError:
                ts = self.when[-1] if self.clock else ""
            out.append(Spin(int(g.spin_id[i]), int(g.game[i]), ts, str(g.result[i]), bool(g.void[i]), str(g.reason[i]), str(g.direction[i]),
                            float(g.rotor_speed[i]), ln, int(g.after[i]), int(g.missing[i]), bool(g.back[i])))
            self.emitted = int(g.spin_id[i])
            self.written = None if g.void[i] else (self.emitted, str(g.result[i]))
        return out

    def stop(self) -> list[Spin]:
        """At the end of a recording: the running game when it has its result (or is void already), written now, before
        it has ended (a second winning number after the stop cannot void it; a restart that sees one says so)."""
        if not self.lines:
            return []
        g = self._decode().games
        if not g.n or g.complete[-1] or int(g.spin_id[-1]) <= self.emitted:
            return []
        which = ~g.complete & (g.spin_id > self.emitted)  # (a game before the last one waited for the message after its end: void)
        which[-1] = bool(g.result[-1] != "" or g.void[-1])
        return self._spins(g, which)

    def _cut(self, g: Games) -> None:
        """Forget the lines before the last game that began (they can change nothing any more)."""
        open_ = np.flatnonzero(~g.complete | ~g.settled)  # the running game, and one a stray message may have ended
        if g.n and not open_.size and g.end_row[-1] >= 0:  # the last game has ended (the table closed): no line before that can matter
            cut = int(g.end_row[-1])
            self.base = int(g.spin_id[-1]) + 1
            self.prev = (int(g.game[-1]), bool(g.reached[-1]))
        elif g.n:  # the first game not decided is decoded again with the game before it (its number checked against that game's)
            k = int(open_[0]) if open_.size else g.n - 1
            cut = int(g.start_row[k])
            self.base = int(g.spin_id[k]) - int(g.missing[k])
            self.prev = (int(g.game[k - 1]), bool(g.reached[k - 1])) if k > 0 else self.prev
        else:
            cut = len(self.lines)  # no game running: nothing to keep
        if cut:
            first_kept = self.line_no[cut] if cut < len(self.line_no) else self.next_line
            del self.lines[:cut], self.line_no[:cut], self.when[:cut]
            self.reported = {x for x in self.reported if x >= first_kept}

    @property
    def running(self) -> Games | None:
        """The game still running (not decided), or None."""
        if not self.lines:
            return None
        g = self._decode().games
        return g if g.n and not g.complete[-1] else None


def take_lines(buf: bytes, after_cr: bool = False) -> tuple[list[bytes], bytes, bool]:
    """The complete lines of a stream's bytes: LF, CR LF and a lone CR each end a line.

    Parameters
    ----------
    buf : bytes
        The bytes not yet read as lines (the previous call's rest, then what arrived).
    after_cr : bool
        The previous call's bytes ended with a CR: an LF at the start of ``buf`` ends that line, not a new one.

    Returns
    -------
    lines, rest, after_cr
        The lines (without their line ends), the bytes after the last line end, and whether ``buf`` ended with a CR.
    """
    if after_cr and buf.startswith(b"\n"):
        buf = buf[1:]
    if not buf:
        return [], b"", after_cr
    ends_cr = buf.endswith(b"\r")
    buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    cut = buf.rfind(b"\n")
    return buf[: cut + 1].split(b"\n")[:-1], buf[cut + 1:], ends_cr


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------- the log
class SpinLogWriter:
    """Appends decided games to a CSV spin log, one flushed (and fsync'ed) row per game.

    Parameters
    ----------
    path : Path
        The log; created with its header when missing or empty, appended to otherwise (its
        header must be this writer's).
    table : str, optional
        A ``table`` column with this value.
    timed : bool
        The source tells when each game ran (a live line, or a capture with its capture program's timestamps): the log
        has a ``timestamp`` column. A capture file of bare messages does not: its log has none (the time the file was read
        is not the games' time).
    """

    def __init__(self, path: Path, table: str | None = None, fsync: bool = True, timed: bool = True):
        self.path = Path(path)
        self.table = table
        self.fsync = fsync
        self.columns = tuple(c for c in COLUMNS if timed or c != "timestamp") + (("table",) if table is not None else ())
        self.notes: list[str] = []
        self.last: tuple | None = None
        #: the log and its rejects file were made by this writer (none was there, or an empty one): a session that never
        #: opened its source removes them (:func:`record`)
        self.created = not (self.path.exists() and self.path.stat().st_size)
        rp = self.path.with_name(self.path.name + ".rejects.csv")
        self.rejects_created = not (rp.exists() and rp.stat().st_size)
        self._open()

    def _open(self) -> None:
        p = self.path
        try:
            if p.exists() and p.stat().st_size:
                self._check_existing()
                self.fh = open(p, "a", encoding="utf-8", newline="")
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                self.fh = open(p, "a", encoding="utf-8", newline="")  # (appending: after a copy-truncate, rows go on at its end)
                self.fh.write(",".join(self.columns) + "\n")
                self._sync()
        except OSError as exc:
            raise StorageError(f"{p}: cannot write the spin log: {exc.strerror or exc}") from None
        st = os.fstat(self.fh.fileno())
        self._ident = (st.st_dev, st.st_ino)
        rp = self.path.with_name(self.path.name + ".rejects.csv")
        new = not rp.exists() or rp.stat().st_size == 0
        self.rej = open(rp, "a", encoding="utf-8", newline="")
        if new:
            self.rej.write("received_utc,line,column,reason,text\n")
            self.rej.flush()

    def _check_existing(self) -> None:
        """Read the existing log's header and last row (resume); cut a last row a crash left half-written."""
        p = self.path
        with open(p, "rb+") as fh:
            head = fh.readline().decode("utf-8", errors="replace").strip()
            have = [c.strip().lower() for c in head.split(",")]
            if have != list(self.columns):
                raise InputError(f"{p}: not a log this recorder wrote (header {head[:120]!r}; expected {','.join(self.columns)}); "
                                 "record into a new file or give the same --table as before (a capture file without timestamps "
                                 "makes a log without a timestamp column, a live line or a capture with them one with it)")
            size = fh.seek(0, os.SEEK_END)
            back = min(size, 1 << 16)
            fh.seek(size - back)
            tail = fh.read(back)
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = size - back + cut + 1
                fh.truncate(keep)
                self.notes.append(f"{p}: the last row was cut off (no newline; a crash while writing): removed, {size - keep} bytes")
                tail = tail[: cut + 1]
            rows = tail.rstrip(b"\n").split(b"\n")
        last = rows[-1].decode("utf-8", errors="replace") if rows else ""
        if last and last.strip().lower() != head.lower():
            rec = next(csv.reader([last]))
            d = dict(zip(self.columns, rec))
            try:
                self.last = (int(d["spin_id"]), int(d["game"]), d["result"], d["void"].strip().lower() == "true")
            except (KeyError, ValueError):
                raise InputError(f"{p}: its last row {last[:120]!r} has no whole-number spin_id and game; cannot resume after it") from None

    def _follow_path(self, spin_id: int) -> None:
        """The log's path renamed or deleted while recording (a rotation): later rows go to the file at the path (made
        with its header), said in ``notes``; writing on into the renamed file would hide them from ``watch LOG``."""
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._ident:
                return
        except FileNotFoundError:
            pass
        except OSError:  # pragma: no cover - the path cannot be looked at: write on where we are
            return
        self.close()
        self._open()
        self.notes.append(f"{self.path} was renamed or deleted while recording (a rotation): spin {spin_id} and later go to a "
                          f"new {self.path}")

    def write(self, s: Spin) -> None:
        """Append one decided game (flushed, fsync'ed for a live source); follows the path after a rotation, and writes the
        header again in a log emptied under it (logrotate's copytruncate)."""
        self._follow_path(s.spin_id)
        if self._emptied(self.fh, ",".join(self.columns)):
            self.notes.append(f"{self.path} was emptied while recording (a copy-truncate rotation): its header is written again, "
                              f"spin {s.spin_id} and later follow it")
        buf = io.StringIO()
        cells = {"spin_id": s.spin_id, "game": f"{s.game:03d}", "timestamp": s.timestamp, "result": s.result,
                 "void": "true" if s.void else "false", "void_reason": s.void_reason, "direction": s.direction,
                 "rotor_speed": "" if np.isnan(s.rotor_speed) else f"{s.rotor_speed:g}",
                 "table": None if self.table is None else safe_cell(self.table)}  # (--table '=T1': read back as written)
        row = [cells[c] for c in self.columns]
        csv.writer(buf, lineterminator="\n").writerow(row)
        try:
            self.fh.write(buf.getvalue())
            self._sync()
        except OSError as exc:
            raise StorageError(f"{self.path}: cannot append spin {s.spin_id}: {exc.strerror or exc}") from None

    def reject(self, r: LineReject, when: str) -> None:
        self._emptied(self.rej, "received_utc,line,column,reason,text")
        buf = io.StringIO()
        csvsafe.writer(buf, lineterminator="\n").writerow([when, r.line, r.column, r.reason, r.text])  # a line from the wire as text: `=...` is not run
        self.rej.write(buf.getvalue())
        self.rej.flush()

    @staticmethod
    def _emptied(fh, header: str) -> bool:
        """The file was emptied under ``fh`` (every row written is flushed, so size 0 means truncated): its header written
        again (the file is appended to, so that it begins at byte 0, not after a hole of the old size). True when it was."""
        try:
            if os.fstat(fh.fileno()).st_size:
                return False
            fh.write(header + "\n")
            fh.flush()
        except OSError:  # pragma: no cover - the write that follows says why
            return False
        return True

    def _sync(self) -> None:
        self.fh.flush()
        if not self.fsync:
            return
        try:
            os.fsync(self.fh.fileno())
        except OSError:  # pragma: no cover - a pipe or a file system without fsync
            pass

    def close(self) -> None:
        for f in (getattr(self, "fh", None), getattr(self, "rej", None)):
            if f is not None and not f.closed:
                f.close()


# ---------------------------------------------------------------------------- sources
class Source:
    """A byte stream that can be reopened: a serial port (or pyserial URL), a tty, a FIFO, a file or stdin.

    ``read()`` returns bytes (``b""`` when nothing arrived within the timeout), and raises
    :class:`Disconnected` when the device went away or the writer closed; ``ended`` is True for
    a source that has a real end (a regular file, stdin).
    """

    def __init__(self, spec: str, serial_settings: dict, timeout: float = 0.2):
        self.spec = spec
        self.settings = serial_settings
        self.timeout = timeout
        self.kind = self._kind()
        self.h = None
        self.ended = False

    def _kind(self) -> str:
        if self.spec == "-":
            return "stdin"
        if "://" in self.spec:
            return "serial"
        p = Path(self.spec)
        try:
            mode = os.stat(p).st_mode
        except OSError:
            # a port that is not there (yet) is retried (an adapter not plugged in); any other missing path is a mistake
            if self.spec.startswith("/dev/") or re.fullmatch(r"(?i)COM\d+|\\\\\.\\COM\d+", self.spec):
                return "serial"
            raise InputError(f"{self.spec}: no such file, FIFO or serial port (a port that is not there yet must be a /dev/... or COMn name)")
        if stat.S_ISCHR(mode):
            return "serial"
        if stat.S_ISFIFO(mode):
            return "fifo"
        return "file"

    def open(self) -> None:
        """Open the source; raises :class:`Disconnected` when it cannot be opened now."""
        try:
            if self.kind == "stdin":
                self.h = sys.stdin.buffer
            elif self.kind == "serial":
                import serial

                s = self.settings
                kw = dict(baudrate=s["baudrate"], bytesize=s["bytesize"], parity=s["parity"], stopbits=s["stopbits"], timeout=self.timeout)
                self.h = serial.serial_for_url(self.spec, **kw) if "://" in self.spec else serial.Serial(self.spec, **kw)
            elif self.kind == "fifo":
                fd = os.open(self.spec, os.O_RDONLY | os.O_NONBLOCK)
                self.h = os.fdopen(fd, "rb", buffering=0)
                self._writer_seen = False
            else:
                self.h = open(self.spec, "rb")
        except (OSError, ValueError) as exc:  # serial.SerialException is an OSError (IOError)
            self.h = None
            raise Disconnected(f"{self.spec}: cannot open: {getattr(exc, 'strerror', None) or exc}") from None

    def read(self) -> bytes:
        h = self.h
        if h is None:
            raise Disconnected(f"{self.spec}: not open")
        try:
            if self.kind == "serial":
                data = h.read(max(1, getattr(h, "in_waiting", 0) or 1))
                if data:
                    more = h.in_waiting
                    if more:
                        data += h.read(more)
                return data
            if self.kind == "fifo":
                import select

                r, _, _ = select.select([h], [], [], self.timeout)
                if not r:
                    return b""
                data = h.read(65536)
                if data is None:
                    return b""
                if data == b"":
                    if not self._writer_seen:  # no writer yet (a FIFO reads as ended until one opens it)
                        time.sleep(self.timeout)
                        return b""
                    raise Disconnected(f"{self.spec}: the writer closed the FIFO")
                self._writer_seen = True
                return data
            data = h.read1(65536) if hasattr(h, "read1") else h.read(65536)
            if not data:
                self.ended = True
            return data
        except Disconnected:
            raise
        except (OSError, ValueError) as exc:
            raise Disconnected(f"{self.spec}: {getattr(exc, 'strerror', None) or exc}") from None

    def close(self) -> None:
        if self.h is not None and self.h is not getattr(sys.stdin, "buffer", None):
            try:
                self.h.close()
            except OSError:  # pragma: no cover
                pass
        self.h = None


class Disconnected(Exception):
    """The source went away (or could not be opened)."""


# ---------------------------------------------------------------------------- the loop
@dataclass
class RecordStats:
    """What a recording session did (updated as it runs)."""

    bytes: int = 0
    lines: int = 0
    spins: int = 0
    void: int = 0
    rejected: int = 0
    disconnects: int = 0
    reconnects: int = 0
    #: the source was opened at least once in this session
    opened: bool = False
    #: the last row written (``spin_id``, ``game``, ``result``, ``void``), kept in ``LOG.json`` at the session's end
    last_row: dict | None = None
    notes: list[str] = field(default_factory=list)
    #: the game numbers' jumps and steps back among the rows written, in order: dicts with ``spin_id``, ``game``,
    #: ``after_game``, ``missing`` (games missing by their numbers; 0 for a step back) and ``first_missing``,
    #: ``last_missing`` (None for a step back)
    number_steps: list[dict] = field(default_factory=list)

    def steps_summary(self, digits: int) -> str | None:
        """The game numbers' jumps and steps back in one sentence (None when there was none)."""
        if not self.number_steps:
            return None
        j = [d for d in self.number_steps if d["missing"]]
        b = [d for d in self.number_steps if not d["missing"]]
        f = lambda x: f"{x:0{digits}d}"  # noqa: E731
        out = []
        if j:
            each = ", ".join((f"{f(d['first_missing'])}" if d["missing"] == 1 else f"{f(d['first_missing'])}-{f(d['last_missing'])}")
                             + f" ({d['missing']:,})" for d in j[:10])
            out.append(f"{sum(d['missing'] for d in j):,} game(s) missing by the controller's game numbers, in {len(j)} jump(s): "
                       f"{each}{' …' if len(j) > 10 else ''} (their spin ids left out of the log: certify states the gap)")
        if b:
            each = ", ".join(f"{f(d['after_game'])} then {f(d['game'])} (spin {d['spin_id']})" for d in b[:10])
            out.append(f"{len(b)} step(s) back of the game number (a reset of the count, or a wrap with games missing: how many "
                       f"cannot be told): {each}{' …' if len(b) > 10 else ''}")
        return "; ".join(out)


# long: the recording loop (connect, read, decode, write, reconnect, stop conditions) keeps its state in locals that every branch updates; 33 lines
#   are its docstring
def record(source: str, out: Path, proto: Protocol, *, table: str | None = None, serial_settings: dict | None = None, reconnect: float = 1.0,
           max_wait: float | None = None, idle_timeout: float | None = None, max_spins: int | None = None,
           stop: Callable[[], bool] | None = None, on_spin: Callable[[Spin], None] | None = None,
           on_event: Callable[[str], None] | None = None, stats: RecordStats | None = None) -> RecordStats:
    """Record a wheel: read ``source``, decode ``proto``, append each decided game to ``out``.

    Parameters
    ----------
    source : str
        Serial port, pyserial URL, pty, FIFO, file, or ``-``.
    out : Path
        The CSV spin log (created or resumed).
    proto : Protocol
        The controller's protocol.
    table : str, optional
        Value of a ``table`` column.
    serial_settings : dict, optional
        ``baudrate``, ``bytesize``, ``parity``, ``stopbits`` (default: the protocol's).
    reconnect : float
        Seconds between attempts to reopen a source that went away.
    max_wait : float, optional
        Give up (InputError) after this long without being able to reopen the source.
    idle_timeout : float, optional
        Stop after this long without a byte (default: never).
    max_spins : int, optional
        Stop after writing this many rows.
    stop : callable, optional
        Polled between reads; True stops the recording.
    on_spin, on_event : callable, optional
        Called with each row written and each event text (connect, disconnect, notes).
    stats : RecordStats, optional
        Updated in place as the recording runs (a caller may watch it from another thread).

    Returns
    -------
    RecordStats
    """
    st = stats if stats is not None else RecordStats()
    say = on_event or (lambda text: None)
    src = Source(source, serial_settings or proto.serial)  # (a missing file is an error before the log is touched)
    capture = None
    if src.kind == "file":
        _refuse_utf16(source)
        capture = _capture_identity(source)
        _refuse_recorded_again(Path(out), source, capture)
    timed = capture is None or _capture_timed(source, proto)
    # a saved capture can be read again: flushed, not fsync'ed per row
    writer = SpinLogWriter(out, table, fsync=src.kind != "file", timed=timed)
    if not timed:
        say(f"{source}: the capture has no timestamps (no capture program's prefix): the log has no timestamp column "
            "(the time the file is read now is not when its games ran)")
    for n in writer.notes:
        say(n)
        st.notes.append(n)
    writer.notes.clear()
    side_created = not Path(str(out) + ".json").exists()
    if writer.created and writer.last is None:  # a new log beside the provenance of earlier sessions: rotated away or removed
        writer.last = _after_earlier_sessions(Path(out), proto, say, st)
    for n in _note_session(Path(out), proto, source, serial_settings or proto.serial, resumed_after=writer.last, capture=capture):
        say(n)
        st.notes.append(n)
    dec = LiveDecoder(proto, str(source), writer.last, clock=capture is None)
    if writer.last:
        say(f"resuming {out} after spin {writer.last[0]} (game {writer.last[1]:0{proto.game_digits}d})")
    partial = b""
    after_cr = False  # the last line read ended with a CR: an LF that follows it is that line's end
    idle = False  # stopped by --idle-timeout
    last_byte = time.monotonic()
    connected = False
    down_since = None

    warned = False

    def emit(spins, rejects):
        nonlocal warned
        for r in rejects:
            writer.reject(r, utc_now())
            st.rejected += 1
        if not warned and st.lines >= 20 and st.rejected >= st.lines:
            warned = True
            settings = serial_settings or proto.serial
            check = ("--protocol (a capture file is read as it is: no line settings apply)" if src.kind == "file" else
                     f"the line settings ({settings['baudrate']} {settings['bytesize']}{settings['parity']}{settings['stopbits']:g}; "
                     "--baud, --parity, ...) and --protocol")
            say(f"none of the first {st.lines} lines is a message of protocol {proto.name}: check {check}")
        if max_spins is not None and len(spins) > max_spins - st.spins:  # one read can decide several games: no more than asked
            left, spins = spins[max_spins - st.spins:], spins[:max_spins - st.spins]
            say(f"--max-spins {max_spins} reached: {len(left)} later game(s) decided in the same read (from game "
                f"{left[0].game:0{proto.game_digits}d}) not written")
        for s in spins:
            writer.write(s)
            st.spins += 1
            st.void += int(s.void)
            st.last_row = {"spin_id": s.spin_id, "game": s.game, "result": s.result, "void": s.void}
            if s.missing or s.back:
                _number_step(st, s, proto, say)
            if on_spin:
                on_spin(s)
        for n in writer.notes:  # (a rotation of the log)
            say(n)
            st.notes.append(n)
        writer.notes.clear()
        for n in dec.notes:
            say(n)
            st.notes.append(n)
        dec.notes.clear()

    try:
        while True:
            if stop is not None and stop():
                break
            if max_spins is not None and st.spins >= max_spins:
                break
            if not connected:
                try:
                    src.open()
                    connected = st.opened = True
                    down_since = None
                    if st.disconnects:
                        st.reconnects += 1
                    say(f"connected to {source}" + (f" ({src.kind})" if src.kind != "serial" else ""))
                except Disconnected as exc:
                    if src.kind in ("file", "stdin"):
                        raise InputError(str(exc)) from None
                    if down_since is None:
                        say(f"{exc}; retrying every {reconnect:g} s" + ("" if max_wait is None else f" for up to {max_wait:g} s"))
                    down_since = down_since or time.monotonic()
                    if max_wait is not None and time.monotonic() - down_since > max_wait:
                        raise InputError(f"{exc}; gave up after {max_wait:g} s") from None
                    _sleep(reconnect, stop)
                    continue
            try:
                data = src.read()
            except Disconnected as exc:
                src.close()
                connected = False
                st.disconnects += 1
                say(f"disconnected: {exc}; reconnecting every {reconnect:g} s")
                if partial:
                    emit([], [dec.reject_fragment(partial.decode(proto.encoding, errors="replace"), "line cut off by a disconnect (truncated)")])
                    partial = b""
                continue
            if not data:
                if src.ended:
                    break
                if idle_timeout is not None and time.monotonic() - last_byte > idle_timeout:
                    say(f"no data for {idle_timeout:g} s: stopping")
                    idle = True
                    break
                continue
            last_byte = time.monotonic()
            st.bytes += len(data)
            raw, partial, after_cr = take_lines(partial + data, after_cr)
            if len(partial) > MAX_LINE:  # no line end for that long: wrong line settings or protocol, or noise (memory bounded)
                _reject_cut(dec, emit, st, partial, proto, f"no line end within {MAX_LINE:,} bytes ({len(partial):,} so far): not a "
                            "message (wrong line settings or protocol, or noise on the line); the bytes up to the next line end follow as a line")
                partial = b""
            if not raw:
                continue
            if not st.lines and raw[0].startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark: not part of the first line (whatever
                raw[0] = raw[0][3:]  # the reads its bytes came in: a serial port may give one byte at a time)
            lines = b"\n".join(raw).decode(proto.encoding, errors="replace").split("\n")
            st.lines += len(lines)
            emit(*dec.feed(lines))
        if partial and src.ended:  # the stream ended inside a line: the line is read as it is
            partial = partial[3:] if not st.lines and partial.startswith(b"\xef\xbb\xbf") else partial
            st.lines += 1
            emit(*dec.feed([partial.decode(proto.encoding, errors="replace")]))
        elif partial and idle:  # the controller went silent inside a line: a truncated message
            _reject_cut(dec, emit, st, partial, proto, f"line cut off: no line end within --idle-timeout {idle_timeout:g} s")
        elif partial:  # a stop asked for: these bytes are the start of what was not read
            say(f"{len(partial)} byte(s) of a line whose end had not arrived when the recording stopped were not read: {_short(partial, proto)}")
        _at_stop(dec, emit, say, proto, full=max_spins is not None and st.spins >= max_spins, capture_end=src.kind == "file" and src.ended)
    except KeyboardInterrupt as exc:  # Ctrl-C (or SIGTERM, raised as Terminated by the command line) is a stop like the others: the running game with its result is written, then the caller is told
        if partial:
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            say(f"{len(partial)} byte(s) of a line whose end had not arrived at {how} were not read: {_short(partial, proto)}")
        _at_stop(dec, emit, say, proto, full=max_spins is not None and st.spins >= max_spins)
        raise
    finally:
        src.close()
        writer.close()
        if not st.opened and writer.created:  # nothing was read: the files this session made are not left behind
            _remove_unopened(Path(out), writer.rejects_created, side_created, say)
        if st.opened or not writer.created or not side_created:
            _end_session(Path(out), st, say)
    return st


def _after_earlier_sessions(out: Path, proto: Protocol, say, st: RecordStats) -> tuple | None:
    """The last row that the earlier sessions of ``OUT.json`` wrote, as ``(spin_id, game, result, void)``, for a log that is
    new (it was rotated away or removed while the recorder was stopped): its spin ids continue after that row instead of
    starting again at 1 (a watch across the rotation took the new 1, 2, ... for repeats or conflicts of the old ones, and
    a store of both files used neither result), and the games played meanwhile are found by their numbers. None (said)
    when the last session that wrote rows did not end (a crash: how far it wrote is not known), or there is none."""
    import json

    side = out.with_name(out.name + ".json")
    try:
        sessions = json.loads(side.read_text(encoding="utf-8")).get("sessions", []) if side.exists() else []
    except (OSError, ValueError, AttributeError):
        return None  # (kept aside and said by _note_session)
    for ses in reversed([x for x in sessions if isinstance(x, dict)]):
        row = ses.get("last_row")
        if "ended_utc" not in ses:
            text = (f"{out} is new, and the last session in {side} (started {ses.get('started_utc')}) did not end (a crash): how "
                    "far it wrote is not known, so spin ids start at 1 again and may repeat those of the earlier log: check it")
        elif not ses.get("rows_written"):
            continue
        elif isinstance(row, dict):
            try:
                last = (int(row["spin_id"]), int(row["game"]), str(row["result"]), bool(row["void"]))
            except (KeyError, TypeError, ValueError):
                return None
            text = (f"{out} is new (rotated away or removed since the last session), and {side} says this log's earlier sessions "
                    f"wrote up to spin {last[0]} (game {last[1]:0{proto.game_digits}d}): spin ids continue after it")
            say(text)
            st.notes.append(text)
            return last
        else:
            return None  # (a session of a version that did not keep its last row)
        say(text)
        st.notes.append(text)
        return None
    return None


def resumed_after(log: Path) -> set[int]:
    """The spin ids after which a session of ``rngcert record`` resumed writing ``log`` (``LOG.json`` beside it; empty when
    there is none or it cannot be read).

    A jump of the spin ids right after such an id is the recorder's restart: the games played while it was stopped, found
    by the controller's game numbers and left out of the ids, not a file that ``watch`` never read.

    Parameters
    ----------
    log : Path
        The spin log.

    Returns
    -------
    set of int
    """
    import json

    try:
        sessions = json.loads(Path(str(log) + ".json").read_text(encoding="utf-8")).get("sessions", [])
        return {int(x["resumed_after_spin"]) for x in sessions if isinstance(x, dict) and x.get("resumed_after_spin") is not None}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return set()


def _remove_unopened(out: Path, rejects: bool, side: bool, say) -> None:
    """A session that never opened its source (``--max-wait`` gave up, or it was stopped while waiting for the port) and
    that made a new log: the log (its header only), its rejects file and ``OUT.json`` made by this session are removed, so
    that no empty log of a recording that never ran is left (an existing log, resumed, is kept; its session ends as any)."""
    paths = [out] + ([out.with_name(out.name + ".rejects.csv")] if rejects else []) + ([out.with_name(out.name + ".json")] if side else [])
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # pragma: no cover - a file that cannot be removed is said, not hidden
            say(f"{p}: made for this recording, which never opened its source, and cannot be removed: {exc.strerror or exc}")
    say(f"the source was never opened: no log written ({out} not created)")


def _number_step(st: RecordStats, s: Spin, proto: Protocol, say) -> None:
    """A row whose game number jumps ahead of the game before (games missing) or goes back: said at once, kept in ``st``."""
    from rngcert.collect.protocol import step_text

    st.number_steps.append({"spin_id": s.spin_id, "game": s.game, "after_game": s.after_game, "missing": s.missing,
                            "first_missing": s.after_game + 1 if s.missing else None,
                            "last_missing": s.game - 1 if s.missing else None, "line": s.line})
    say(("GAMES MISSING: " if s.missing else "GAME NUMBER WENT BACK: ") + step_text(s.after_game, s.game, s.missing, s.spin_id, proto.game_digits))


def _capture_timed(path: str, proto: Protocol, head: int = 1 << 20) -> bool:
    """Whether a capture file's lines carry the capture program's timestamps (the protocol's ``[prefix]`` with its
    ``timestamp`` group, on a line of its first ``head`` bytes)."""
    import re

    if not proto.prefix or "(?P<timestamp>" not in proto.prefix:
        return False
    try:
        with open(path, "rb") as fh:
            text = fh.read(head).decode(proto.encoding, errors="replace")
    except OSError:
        return True  # (reading it says why)
    pattern = re.compile(proto.prefix)
    return any((m := pattern.match(ln)) is not None and m.group("timestamp") for ln in re.split(r"\r\n|\r|\n", text))


def _refuse_utf16(path: str) -> None:
    """A capture file that starts with a UTF-16 byte-order mark cannot be the controller's bytes: an input error (as certify says)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
    except OSError:
        return  # (opening it says why)
    if head in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"{path}: the capture file is UTF-16 (a byte-order mark at byte 0), not the controller's bytes; "
                         "save it as ASCII or UTF-8 and record that")


def _reject_cut(dec: LiveDecoder, emit, st: RecordStats, partial: bytes, proto: Protocol, why: str) -> None:
    """The bytes of a line whose end never came: counted as a line and rejected with ``why``."""
    st.lines += 1
    emit([], [dec.reject_fragment(partial.decode(proto.encoding, errors="replace"), why)])


def _short(partial: bytes, proto: Protocol) -> str:
    text = partial.decode(proto.encoding, errors="replace")
    return repr(text if len(text) <= 60 else text[:60] + "...")


def _at_stop(dec: LiveDecoder, emit, say, proto: Protocol, full: bool, capture_end: bool = False) -> None:
    """When the recording stops: the running game is written when it has its result (or is void already), unless
    ``full`` (--max-spins rows written); otherwise it is said not written, and (``capture_end``: a capture file read
    to its end) what becomes of it: a capture that continues it, recorded into the same log, writes it when it ends;
    certify of this capture alone counts it void."""
    run = dec.running
    if run is None:
        return
    gg = f"{int(run.game[-1]):0{proto.game_digits}d}"
    if int(run.spin_id[-1]) <= dec.emitted:  # the log's last row's game, still repeated after a restart
        say(f"game {gg} (the log's last row, spin {int(run.spin_id[-1])}) was still running when the recording stopped: already written")
        return
    if full:
        say(f"game {gg} was running when the recording stopped at --max-spins: not written")
        return
    now = dec.stop()
    sid = int(run.spin_id[-1])
    for s in now[:-1] if now and now[-1].spin_id == sid else now:  # a game whose end waited for the message after it
        say(f"game {s.game:0{proto.game_digits}d} ended void before the recording stopped ({s.void_reason}): written now")
    emit(now, [])
    if now and now[-1].spin_id == sid:
        what = f"was void ({now[-1].void_reason})" if now[-1].void else f"had its result ({now[-1].result})"
        say(f"game {gg} {what} when the recording stopped, before it ended: written now")
    else:
        later = ("the capture file ends inside it; a capture that continues it, recorded into this log, writes it when it ends "
                 "(certify of this capture counts it void: 'the capture ends')" if capture_end else "a restart writes it when it ends")
        say(f"game {gg} was running when the recording stopped (state {int(run.first_state[-1])} first seen): not written; {later}")


def _note_session(out: Path, proto: Protocol, source: str, settings: dict, resumed_after, capture: dict | None = None) -> list[str]:
    """Provenance beside the log (``OUT.json``): the protocol (with its assumed units) and, per
    recording session, the source, line settings, start time, the spin it resumed after and, for a
    capture file, its size and SHA-256 (``capture``) when the session began.

    Returns notes for the user: an existing ``OUT.json`` that cannot be read is kept aside
    (``OUT.json.unreadable``), never overwritten; the new file is written whole (then renamed).
    """
    import json

    side = out.with_name(out.name + ".json")
    notes: list[str] = []
    try:
        meta = json.loads(side.read_text(encoding="utf-8")) if side.exists() else {}
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        kept = _aside(side)
        notes.append(f"{side} cannot be read ({getattr(exc, 'strerror', None) or exc}): kept as {kept} with the earlier sessions' "
                     "provenance; a new one is written")
        meta = {}
    meta["protocol"] = proto.describe()
    line = None if capture else dict(settings)  # a capture file is read as it is: no line settings applied
    meta.setdefault("sessions", []).append({"source": str(source), "serial": line, "started_utc": utc_now(),
                                            "resumed_after_spin": None if not resumed_after else int(resumed_after[0]),
                                            **({"capture": capture} if capture else {})})
    try:
        _write_whole(side, meta)
    except OSError as exc:
        raise StorageError(f"{side}: cannot write the recording's provenance: {exc.strerror or exc}") from None
    return notes


def _write_whole(side: Path, meta: dict) -> None:
    """Write ``OUT.json`` whole, then rename it into place (a crash mid-write leaves the earlier file, not a cut one)."""
    import json

    tmp = side.with_name(side.name + ".tmp")
    tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    os.replace(tmp, side)


def _end_session(out: Path, st: RecordStats, say) -> None:
    """Write the session's counts into its entry of ``OUT.json`` (the last one): rows written, void, lines read, rejected,
    disconnects, the games missing by the controller's game numbers and each jump or step back of them, and the end time. A session without them (a crash) wrote an unknown number of rows."""
    import json

    side = out.with_name(out.name + ".json")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
        meta["sessions"][-1].update({"ended_utc": utc_now(), "rows_written": st.spins, "void": st.void, "lines": st.lines,
                                     "rejected": st.rejected, "disconnects": st.disconnects,
                                     "games_missing": sum(d["missing"] for d in st.number_steps), "game_number_steps": st.number_steps,
                                     **({"last_row": st.last_row} if st.last_row else {})})
        _write_whole(side, meta)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:  # pragma: no cover - the start of the session was written
        say(f"{side}: this session's counts could not be written ({getattr(exc, 'strerror', None) or exc}); its start is there")


def _capture_identity(path: str) -> dict:
    """``{"bytes": size, "sha256": hex}`` of a capture file as it is now."""
    from rngcert.collect.csvstream import sha256_file

    try:
        sha, n = sha256_file(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the capture file: {exc.strerror or exc}") from None
    return {"bytes": n, "sha256": sha}


def _prefix_sha256(path: str, n: int) -> str:
    import hashlib

    h, left = hashlib.sha256(), n
    with open(path, "rb") as fh:
        while left and (chunk := fh.read(min(left, 1 << 20))):
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def _refuse_recorded_again(out: Path, source: str, capture: dict) -> None:
    """A capture file whose first bytes are a capture already recorded into ``out`` (the same file, or it grown since):
    recording it again would write its games a second time as new spins. An input error naming the earlier session."""
    import json

    side = out.with_name(out.name + ".json")
    try:
        has_rows = out.is_file() and out.stat().st_size > 0  # (a FIFO, or a log emptied since, holds none of the games)
        sessions = json.loads(side.read_text(encoding="utf-8")).get("sessions", []) if side.exists() and has_rows else []
    except (OSError, ValueError, AttributeError):
        return  # (an unreadable provenance file is kept aside and said by _note_session)
    for k, ses in enumerate(sessions, 1):
        old = ses.get("capture") if isinstance(ses, dict) else None
        if not isinstance(old, dict) or not 0 < int(old.get("bytes", 0)) <= capture["bytes"] or ses.get("rows_written") == 0:
            continue  # (a session that wrote no row put none of the capture's games into the log)
        if _prefix_sha256(source, int(old["bytes"])) == old.get("sha256"):
            same = "the whole file" if old["bytes"] == capture["bytes"] else f"its first {int(old['bytes']):,} bytes"
            raise InputError(f"{source}: already recorded into {out} ({same}, sha256 {old['sha256'][:16]}…: session {k}, from "
                             f"{ses.get('source')}, started {ses.get('started_utc')}): recording it again would write its games a second "
                             "time as new spins; record it into a new --out file")


def _aside(path: Path) -> Path:
    """Rename ``path`` to the first free ``PATH.unreadable``, ``PATH.unreadable-2``, ...; returns the new name."""
    k = 1
    while True:
        dest = path.with_name(path.name + (".unreadable" if k == 1 else f".unreadable-{k}"))
        if not dest.exists():
            try:
                os.replace(path, dest)
            except OSError as exc:
                raise StorageError(f"{path}: cannot be read, and cannot be kept aside as {dest}: {exc.strerror or exc}") from None
            return dest
        k += 1


def _sleep(seconds: float, stop) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if stop is not None and stop():
            return
        time.sleep(min(0.05, max(0.0, end - time.monotonic())))
