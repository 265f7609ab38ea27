"""The live watch (``rngcert watch``): an anytime-valid change detector over a growing spin log,
following the log across truncation and rotation without losing or repeating a spin.

:class:`Watcher` keeps the e-detector of :mod:`rngcert.stats.sequential` and raises an alarm
when the evidence crosses its threshold; guarantee: with ``alpha`` and ``horizon`` N, the
probability of any false alarm during the first N spins of a fair wheel is at most ``alpha``,
and the mean time to a false alarm is at least N/alpha spins.

:class:`LogFollower` reads a log as it grows and hands out each complete line exactly once:

* **Identity.** It keeps the open file and its (device, inode). When the path names another file
  (rotation: ``mv live.csv live.csv.1`` and a new ``live.csv``; or delete and recreate), it
  finishes the old file first — reading it until it has not changed for ``settle`` seconds,
  final line included — and then reads the new file from its first byte.
* **Truncation and rewrite in place.** When the file is shorter than what was read, or when the
  bytes already read have changed (a copy-truncate rotation that regrew past the old offset
  between two polls, as in case c12), the file is read again from its first byte. The lines
  written between the last poll and a copy-truncate are in the copy: a sibling whose name starts
  with the log's name (``live.csv.1``, ``live.csv-20261201``) and whose first bytes are the bytes
  already read is read from the old offset to its end first. Without such a copy those lines
  cannot be seen, and the follower says so. "Changed" is checked on the first and the last
  64 KiB before the offset (SHA-256), at every poll.
* **A final line without a newline** is counted once the file has not changed for ``settle``
  seconds (the writer is idle), or at once when the watch ends (``final=True``). If the writer
  later continues that line, the follower reports it.
* **A lost rotation.** When two rotations happen within one poll, the file between them was
  never opened. At a rotation the follower looks beside the log for a file (``<name>*``) that it
  never followed, that was not there at the previous poll, is not empty, not compressed and has a
  rotated name (a digit after a ``.``, ``-`` or ``_``: ``live.csv.1``, ``live.csv-20261201``; not
  an exporter's ``live.csv.tmp``): such a file is reported in :attr:`LogFollower.lost`. :class:`LogWatch` also compares, per table, the
  first spin id counted from the new file with the last one from the old file: when the ids
  went up by a constant step and the new file's first id skips ahead, the spins between are
  reported as lost (a ``"lost"`` event; ``rngcert watch`` stops with exit code 14).
* **FIFO** (named pipe): read as a stream, without offsets, as the writer sends data; the stream
  ends when the writer closes the pipe. A FIFO on which no writer sent anything is an input error
  (never a quiet exit 0). Directories and devices are refused.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import sequential as sq

__all__ = ["Watcher", "WatchStatus", "LogFollower", "Chunk", "DEFAULT_SETTLE"]

#: Seconds without change after which a final line without a newline is counted, and after which a
#: rotated-away file is considered finished (CLI ``--settle``).
DEFAULT_SETTLE = 5.0

_CHECK = 64 * 1024  # bytes hashed at the start and just before the offset, to see a rewrite
_READ = 32 * 1024 * 1024  # bytes read per step (a longer line is read whole)


@dataclass
class WatchStatus:
    spins: int
    blocks: int
    log_evidence: float
    log_threshold: float
    leader: str
    alarm: bool
    alarm_spin: int | None = None

    def line(self) -> str:
        state = "ALARM" if self.alarm else "ok"
        return (
            f"{self.spins} spins · evidence log M = {self.log_evidence:.2f} / threshold {self.log_threshold:.2f} "
            f"(M/A = {np.exp(self.log_evidence - self.log_threshold):.2g}) · leading: {self.leader} · {state}"
        )


_POSITION = re.compile(r"^position (\d+) ")
_ARC = re.compile(r"^positions (\d+)\.\.(\d+) \(width (\d+)\) ")
_TOWARDS = re.compile(r"^first harmonic towards position (\d+(?:\.\d+)?),")


def alternative_name(name: str, labels, circular: bool) -> str:
    """An alternative's name with the wheel's own labels, for people.

    The statistics name pocket alternatives by wheel position (``position 8 +40%``), which a
    reader takes for pocket 8; this names the result as the log writes it, with its position.

    Parameters
    ----------
    name : str
        A name from :func:`rngcert.stats.sequential.wheel_alternatives`.
    labels : sequence of str
        The outcome space's labels, by position.
    circular : bool
        Whether positions are places on the wheel (else they are symbols).

    Returns
    -------
    str
        e.g. ``result 17 (wheel position 8) +40%``; names of other kinds unchanged.
    """
    m = _POSITION.match(name)
    if m and int(m.group(1)) < len(labels):
        s = int(m.group(1))
        where = f" (wheel position {s})" if circular else ""
        return f"result {labels[s]}{where} " + name[m.end():]
    m = _ARC.match(name)
    if m and max(int(m.group(1)), int(m.group(2))) < len(labels):
        s, e, w = (int(g) for g in m.groups())
        return f"results {labels[s]}..{labels[e]} (wheel positions {s}..{e}, width {w}) " + name[m.end():]
    m = _TOWARDS.match(name)
    if m and circular and labels:
        x = float(m.group(1))
        lo, hi = int(x) % len(labels), (int(x) + 1) % len(labels)
        at = f"result {labels[lo]}" if x == int(x) else f"the arc between results {labels[lo]} and {labels[hi]}"
        return f"first harmonic towards {at} (wheel position {m.group(1)})," + name[m.end():]
    return name


class Watcher:
    """Incremental e-detector over a stream of spins (wheel positions, void spins removed).

    Spins are buffered into blocks of ``block``; after each full block the mixture
    Shiryaev–Roberts e-detector (:func:`rngcert.stats.sequential.e_detector`) is updated.
    Guarantee: :func:`rngcert.stats.sequential.detector_threshold` (any false alarm within
    ``horizon`` spins has probability <= ``alpha``; mean time to false alarm >= horizon/alpha).
    """

    def __init__(self, space, *, alpha: float = 0.01, horizon: int = 100_000, block: int = 100, release: bool = False):
        self.k = space.m
        self.labels, self.circular = tuple(space.labels), bool(space.circular)
        self.block = block
        self.family = sq.wheel_alternatives(space.probs, circular=space.circular, distance=space.circular and bool(np.allclose(space.probs, 1 / space.m)), release=release)
        self.log_threshold = sq.detector_threshold(alpha, horizon, block)
        self.alpha, self.horizon = alpha, horizon
        self.state = sq.DetectorState.start(self.family)
        self.pending = np.zeros(0, dtype=np.int64)
        self.pending_release = np.zeros(0, dtype=np.int64)
        self.previous: int | None = None
        self.spins = 0
        self.log_m = -np.inf
        self.leader = "-"
        self.alarm_spin: int | None = None
        self.use_release = release

    def guarantee(self) -> str:
        return (
            f"P(any false alarm within the first {self.horizon} spins of a fair wheel) <= {self.alpha} "
            f"(within t spins: <= {self.alpha}*t/{self.horizon}); "
            f"mean spins to a false alarm >= {self.horizon / self.alpha:.3g} (mixture Shiryaev-Roberts e-detector, "
            f"Shin-Ramdas-Rinaldo 2022, checked every {self.block} spins, {self.family.size} alternatives)"
        )

    def update(self, positions, release=None) -> WatchStatus:
        """Add spins (in order); returns the status after the last complete block."""
        x = np.concatenate([self.pending, np.asarray(positions, dtype=np.int64)])
        r = np.concatenate([self.pending_release, np.asarray(release if release is not None else np.full(len(positions), -1), dtype=np.int64)])
        nfull = (x.size // self.block) * self.block
        if nfull and self.alarm_spin is None:
            xs, rs = x[:nfull], r[:nfull]
            fv = sq.feature_values(xs, self.k, release=rs if self.use_release else None, previous=self.previous)
            counts = {f: sq.block_counts(fv[f], self.k, self.block) for f in self.family.features}
            path = sq.e_detector(counts, self.family, self.log_threshold, state=self.state)
            if path.alarm >= 0:
                b = int(path.alarm)
                self.alarm_spin = self.spins + (b + 1) * self.block
                self.log_m = float(path.log_m[b])
                self.leader = alternative_name(self.family.names[int(path.leader[b])], self.labels, self.circular)
                # state up to the alarm block only
                nfull = (b + 1) * self.block
                self.state = sq.DetectorState(self.state.log_r, self.state.blocks + b + 1)
            else:
                self.state = path.state
                self.log_m = float(path.log_m[-1])
                self.leader = alternative_name(self.family.names[int(path.leader[-1])], self.labels, self.circular)
            self.previous = int(x[nfull - 1])
            self.spins += nfull
        self.pending, self.pending_release = x[nfull:], r[nfull:]
        return self.status()

    def status(self) -> WatchStatus:
        return WatchStatus(self.spins + self.pending.size, self.state.blocks, self.log_m, self.log_threshold, self.leader, self.alarm_spin is not None, self.alarm_spin)




# ---------------------------------------------------------------------------- following a log
@dataclass
class Chunk:
    """Complete lines of one file, in order, as :class:`LogFollower` hands them out.

    Attributes
    ----------
    data : bytes
        The lines (each ending with a newline), preceded by the file's CSV header when the file
        has one and this is not the chunk that starts the file.
    first_line : int
        Physical line number, in its file, of the first line of ``data`` after the header.
    header_lines : int
        0 or 1: lines of ``data`` that are the repeated header.
    generation : int
        0 for the first file followed, +1 at every rotation or truncation.
    fmt : str
        Log format of the file (detected on its first chunk unless given).
    """

    data: bytes
    first_line: int
    header_lines: int
    generation: int
    fmt: str


@dataclass
class _FileState:
    fd: int
    ident: tuple[int, int]
    fifo: bool
    offset: int = 0  # bytes handed out (complete lines)
    lines: int = 0  # lines handed out
    header: bytes = b""
    fmt: str | None = None
    size_seen: int = -1
    changed_at: float = field(default_factory=time.monotonic)
    forced_partial: bool = False  # the last line handed out had no newline (writer was idle)
    head_hash: bytes = b""
    tail_hash: bytes = b""
    had_writer: bool = False  # FIFO: a writer has been connected
    connected: bool = False  # FIFO: a writer held the pipe open at the last poll
    ended: bool = False  # FIFO: the writer closed the pipe


class LogFollower:
    """Follow a growing spin log and hand out every complete line exactly once.

    Parameters
    ----------
    path : path
        A regular file (may not exist yet) or a FIFO.
    fmt : {"auto", "csv", "jsonl", "permanence"}
        Log format; ``auto`` is detected on each file's first bytes.
    settle : float
        Seconds without change after which a final line without a newline is counted and a
        rotated-away file is finished (default :data:`DEFAULT_SETTLE`).

    Attributes
    ----------
    notes : list of str
        What happened to the file (rotation, truncation, a continued line), for the user; the
        caller empties it.

    Raises
    ------
    InputError
        The path is a directory or a device.
    """

    def __init__(self, path, *, fmt: str = "auto", settle: float = DEFAULT_SETTLE, detect=None):
        self.path = Path(path)
        self.fmt_arg = fmt
        self.settle = float(settle)
        self.detect = detect
        self.cur: _FileState | None = None
        self.old: _FileState | None = None  # rotated away, being finished
        self.generation = 0
        self.notes: list[str] = []
        self.lost: list[str] = []  # rotations that were not seen (a file skipped): the caller empties it
        self.rotations: set[int] = set()  # generations that began a new file after a rotation
        self._polled_at: float | None = None  # wall time of the last poll that found the path unchanged
        self._siblings: dict[str, tuple] = {}  # name -> (dev, inode, size, mtime_ns) of the files beside the log then
        self._followed: set[tuple[int, int]] = set()  # (dev, inode) of every file followed
        self._next_ident = None  # what the path named when a rotation was seen (to be read next)
        self._fifo_buf = b""
        self._check_kind()

    # ------------------------------------------------------------------ public
    @property
    def is_fifo(self) -> bool:
        return self.cur is not None and self.cur.fifo

    def close(self) -> None:
        for fs in (self.old, self.cur):
            if fs is not None:
                os.close(fs.fd)
        self.old = self.cur = None

    def poll(self, *, final: bool = False, now: float | None = None) -> list[Chunk]:
        """Everything new since the last poll, as chunks in reading order.

        ``final=True`` (the watch ends, or the log is read once): a final line without a newline
        is handed out, and a rotated-away file is finished at once.
        """
        now = time.monotonic() if now is None else now
        out: list[Chunk] = []
        if self.cur is None and not self._open():
            return out
        if self.cur.fifo:
            out += self._read_fifo(final, now)
            return out
        # rotation: the path names another file (or no file) than the one open
        if self.old is None:
            wall = time.time()
            ident = self._path_ident()
            if ident != self.cur.ident:
                self.old, self.cur = self.cur, None
                what = "was renamed or deleted" if ident is None else "now names a new file"
                self.notes.append(f"{self.path} {what} (rotation): finishing the old file, then reading the new one from its beginning")
                self._check_skipped(ident)
            else:
                self._polled_at, self._siblings = wall, self._sibling_stats()
        if self.old is not None:
            out += self._read_regular(self.old, final, now, finishing=True)
            idle = now - self.old.changed_at >= self.settle
            if final or idle:
                self.notes.append(f"finished the rotated file after {self.old.lines} line(s)")
                os.close(self.old.fd)
                self.old = None
                self.generation += 1
                self.rotations.add(self.generation)
            else:
                return out  # keep the order: the new file only after the old one is finished
        if self.cur is None and not self._open():
            return out
        out += self._read_regular(self.cur, final, now, finishing=False)
        return out

    # ------------------------------------------------------------------ files
    def _sibling_stats(self) -> dict[str, tuple]:
        """(dev, inode, size, mtime_ns) of the regular files beside the log whose names start with its name."""
        out = {}
        try:
            for p in self.path.parent.iterdir():
                if p.name.startswith(self.path.name) and p.name != self.path.name:
                    try:
                        st = os.stat(p)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        out[p.name] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            pass
        return out

    def _check_skipped(self, new_ident) -> None:
        """At a rotation: a file beside the log that the follower never opened, is not empty, is not
        compressed, and was not there at the last poll, was a log file between two rotations within
        one poll (its lines were never read)."""
        self._next_ident = new_ident
        if self._polled_at is None:
            return
        before = {b[:2] for b in self._siblings.values()}
        skip = {self.old.ident if self.old else None, new_ident} | self._followed | before
        for name, (dev, ino, size, _mtime) in sorted(self._sibling_stats().items()):
            if (dev, ino) in skip or size == 0 or self._compressed(self.path.parent / name):
                continue
            if not re.match(r"[.\-_][0-9]", name[len(self.path.name):]):
                continue  # not a rotated name (LOG.1, LOG-20261201, LOG.2026-12-01): an exporter's LOG.tmp, LOG.lock
            self.lost.append(
                f"{self.path} was rotated more than once between two polls: {self.path.parent / name} ({size:,} bytes, "
                "not there at the last poll) is a log file the watch never read; its spins were not watched")

    def _check_unseen_next(self) -> None:
        """After finishing a rotated file: the file that the path named when the rotation was seen,
        if the path now names another one and that file lies beside the log under a rotated name
        (not empty), was rotated away before it was opened. One that is gone was replaced (an
        exporter that writes a new copy and renames it over the log: its rows are in the new copy),
        or deleted: the spin ids tell (:class:`LogWatch`)."""
        want, self._next_ident = self._next_ident, None
        if want is None or self.cur is None or self.cur.ident == want:
            return
        where = next((n for n, b in self._sibling_stats().items() if b[:2] == want and b[2] > 0), None)
        if where is None or not re.match(r"[.\-_][0-9]", where[len(self.path.name):]) or self._compressed(self.path.parent / where):
            return
        self.lost.append(
            f"{self.path} was rotated again while the watch finished the previous file: the file it named in between (now "
            f"{self.path.parent / where}) is a log file the watch never read; its spins were not watched")

    @staticmethod
    def _compressed(p: Path) -> bool:
        """gzip, bzip2, xz or zstd: an archive logrotate compressed (its lines were read before)."""
        try:
            with open(p, "rb") as fh:
                head = fh.read(6)
        except OSError:
            return True
        return head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd"))

    def _check_kind(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{self.path} is a folder: watch reads a spin log (a regular file or a FIFO)")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise InputError(f"{self.path} is a device or socket, not a regular file or a FIFO: watch cannot follow it")

    def _path_ident(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino)

    def _open(self) -> bool:
        self._check_kind()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        fifo = stat.S_ISFIFO(st.st_mode)
        flags = os.O_RDONLY | (os.O_NONBLOCK if fifo else 0)
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            return False
        fst = os.fstat(fd)
        self.cur = _FileState(fd=fd, ident=(fst.st_dev, fst.st_ino), fifo=fifo)
        self._followed.add(self.cur.ident)
        if self._next_ident is not None:
            self._check_unseen_next()
        return True

    def _pread(self, fs: _FileState, start: int, n: int) -> bytes:
        parts, got = [], 0
        while got < n:
            b = os.pread(fs.fd, n - got, start + got)
            if not b:
                break
            parts.append(b)
            got += len(b)
        return b"".join(parts)

    def _hashes(self, fs: _FileState, offset: int) -> tuple[bytes, bytes]:
        head = self._pread(fs, 0, min(offset, _CHECK))
        lo = max(0, offset - _CHECK)
        tail = self._pread(fs, lo, offset - lo)
        return hashlib.sha256(head).digest(), hashlib.sha256(tail).digest()

    def _restart(self, fs: _FileState, why: str) -> list[Chunk]:
        """The file was truncated or rewritten: the lines after the offset from its copy (if one
        is found beside it), then the file is read again from its first byte."""
        read_before = fs.lines
        recovered = self._from_copy(fs)
        if recovered is None:
            self.notes.append(
                f"{self.path} was {why} after {read_before} line(s): reading it again from its beginning (any lines written between "
                "the last poll and the truncation are only in a copy, and no copy starting with the lines already read was found beside it)"
            )
            out: list[Chunk] = []
        else:
            name, out = recovered
            n = sum(c.data.count(b"\n") - c.header_lines for c in out)
            self.notes.append(f"{self.path} was {why} after {read_before} line(s): read {n} further line(s) from its copy {name}; reading it again from its beginning")
        fs.offset = fs.lines = 0
        fs.header = b""
        fs.fmt = None
        fs.forced_partial = False
        fs.head_hash = fs.tail_hash = b""
        self.generation += 1
        return out

    def _from_copy(self, fs: _FileState):
        """A sibling (``<name>*``, most recent first) that starts with the bytes already read:
        ``(its name, chunks of its lines after the offset)``, or None."""
        try:
            sibs = [p for p in self.path.parent.iterdir() if p.name.startswith(self.path.name) and p.name != self.path.name and p.is_file()]
            sibs.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return None
        lo = max(0, fs.offset - _CHECK)
        for p in sibs[:10]:
            try:
                if p.stat().st_size < fs.offset:
                    continue
                with open(p, "rb") as fh:
                    head = fh.read(min(fs.offset, _CHECK))
                    fh.seek(lo)
                    tail = fh.read(fs.offset - lo)
                    if (hashlib.sha256(head).digest(), hashlib.sha256(tail).digest()) != (fs.head_hash, fs.tail_hash):
                        continue
                    fh.seek(fs.offset)
                    rest = fh.read()
            except OSError:
                continue
            out = []
            if rest:
                partial = not rest.endswith(b"\n")
                c = self._chunk(fs, rest)  # the copy is finished: its final line counts
                if c is not None:
                    if partial:
                        c.data += b"\n"
                        fs.lines += 1
                    out.append(c)
            return p.name, out
        return None

    def _chunk(self, fs: _FileState, data: bytes) -> Chunk | None:
        """Hand out ``data`` (lines starting at ``fs.offset``) and advance past it."""
        if fs.forced_partial and data:
            fs.forced_partial = False
            k = 1 if data.startswith(b"\n") else (2 if data.startswith(b"\r\n") else 0)
            if k:  # the newline of a line already counted
                fs.offset += k
                data = data[k:]
            else:
                self.notes.append(
                    f"line {fs.lines} of {self.path} was counted when the writer had been idle for {self.settle:g} s, but the writer "
                    "then continued it: the continuation is read as a new line"
                )
        if not data:
            return None
        first = fs.offset == 0
        if first:
            fs.fmt = self.fmt_arg if self.fmt_arg != "auto" else (self.detect(self.path, data) if self.detect else "csv")
            if fs.fmt == "csv":
                fs.header = data.split(b"\n", 1)[0] + b"\n"
        with_header = (not first) and bool(fs.header)
        chunk = Chunk(fs.header + data if with_header else data, fs.lines + 1, 1 if with_header else 0, self.generation, fs.fmt or "csv")
        fs.offset += len(data)
        fs.lines += data.count(b"\n")
        return chunk

    def _read_regular(self, fs: _FileState, final: bool, now: float, *, finishing: bool) -> list[Chunk]:
        out: list[Chunk] = []
        size = os.fstat(fs.fd).st_size
        if size != fs.size_seen:
            fs.size_seen = size
            fs.changed_at = now
        if fs.offset and not finishing:
            if size < fs.offset:
                out += self._restart(fs, f"truncated (from {fs.offset} to {size} bytes)")
            elif self._hashes(fs, fs.offset) != (fs.head_hash, fs.tail_hash):
                out += self._restart(fs, "rewritten in place (the bytes already read changed)")
        while fs.offset < size:
            data = self._pread(fs, fs.offset, min(size - fs.offset, _READ))
            if not data:
                break
            cut = data.rfind(b"\n")
            while cut < 0 and fs.offset + len(data) < size:  # a line longer than one read: read it whole
                more = self._pread(fs, fs.offset + len(data), min(size - fs.offset - len(data), _READ))
                if not more:
                    break
                data += more
                cut = data.rfind(b"\n")
            if cut >= 0:
                c = self._chunk(fs, data[: cut + 1])
                if c is not None:
                    out.append(c)
                continue
            # the rest is a final line without a newline: counted once the writer is idle, or at the end
            if final or now - fs.changed_at >= self.settle:
                c = self._chunk(fs, data)
                if c is not None:
                    c.data += b"\n"
                    fs.lines += 1
                    fs.forced_partial = True
                    out.append(c)
            break
        if fs.offset:
            fs.head_hash, fs.tail_hash = self._hashes(fs, fs.offset)
        return out

    def _read_fifo(self, final: bool, now: float) -> list[Chunk]:
        fs = self.cur
        out: list[Chunk] = []
        buf = self._fifo_buf
        while True:
            try:
                b = os.read(fs.fd, 1 << 20)
            except BlockingIOError:  # a writer is connected, nothing to read now
                fs.had_writer = fs.connected = True
                break
            except OSError as exc:  # pragma: no cover - unusual pipe errors
                if exc.errno == errno.EAGAIN:
                    fs.had_writer = fs.connected = True
                    break
                raise
            if not b:  # no writer: before the first one, or the writer closed the pipe
                fs.connected = False
                if fs.had_writer or buf:
                    fs.ended = True
                break
            fs.had_writer = fs.connected = True
            fs.changed_at = now
            buf += b
        cut = buf.rfind(b"\n")
        if (fs.ended or final) and buf and not buf.endswith(b"\n"):
            buf += b"\n"  # the stream ended: its final line counts
            cut = len(buf) - 1
        if cut >= 0:
            c = self._chunk(fs, buf[: cut + 1])
            if c is not None:
                out.append(c)
            buf = buf[cut + 1 :]
        self._fifo_buf = buf
        return out

    def wait(self, timeout: float) -> None:
        """Sleep until the next poll: ``timeout`` seconds, or less when a FIFO has data."""
        if self.cur is not None and self.cur.fifo and not self.cur.ended:
            import select

            t0 = time.monotonic()
            ready, _, _ = select.select([self.cur.fd], [], [], timeout)
            if ready and self._fifo_buf == b"" and time.monotonic() - t0 < 1e-3 and not self.cur.had_writer:
                time.sleep(timeout)  # readable at once without a writer: do not spin
            return
        time.sleep(timeout)

    @property
    def fifo_ended(self) -> bool:
        """A FIFO whose writer closed it (the stream ended)."""
        return self.cur is not None and self.cur.fifo and self.cur.ended

    @property
    def fifo_had_writer(self) -> bool:
        return self.cur is not None and self.cur.fifo and self.cur.had_writer

    @property
    def fifo_connected(self) -> bool:
        """A FIFO whose writer still held it open at the last poll (stopping now cuts the stream)."""
        return self.cur is not None and self.cur.fifo and self.cur.connected

    @property
    def fifo_pending(self) -> int:
        """Bytes of an unfinished line received from a FIFO (no newline yet)."""
        return len(self._fifo_buf)


# ---------------------------------------------------------------------------- a watched log
@dataclass
class Event:
    """What :meth:`LogWatch.step` saw: ``kind`` is ``"status"`` (a table's detector after new
    spins), ``"alarm"`` (``spin_id`` of the spin at which the evidence crossed the threshold),
    ``"note"`` (``text``: rotation, truncation, rejected lines), ``"start"`` (the first spins
    of a table: ``text`` is the guarantee) or ``"lost"`` (``text``: a rotation the watch did not
    see: a file it never read, or a jump of the spin ids from one file to the next)."""

    kind: str
    table: str = ""
    status: WatchStatus | None = None
    watcher: "Watcher | None" = None
    spin_id: str | None = None
    text: str = ""


class LogWatch:
    """The watch of one spin log: a :class:`LogFollower` and one :class:`Watcher` per table.

    Parameters
    ----------
    path : path
        The log (regular file or FIFO).
    wheel : Wheel
        The wheel the log is recorded on.
    columns, fmt
        As in :func:`rngcert.collect.spinlog.read_spin_rows`.
    alpha, horizon, block
        Of every table's :class:`Watcher`.
    settle : float
        See :class:`LogFollower`.

    Attributes
    ----------
    spins : dict
        Spins given to each table's detector (accepted spins with a wheel position, in order).
    rejected : int
        Lines that could not be read (each reported in a ``"note"`` event, the first 20 in full).
    repeated : int
        Rows not counted because they repeat a spin already counted: same table and ``spin_id``
        with the same result (an exact duplicate, e.g. the old rows of a log that an exporter
        rewrote whole: truncated, then written again with the new rows appended).
    conflicts : int
        Rows not counted because their ``spin_id`` was already counted in the same table with
        another result (each reported in a ``"note"`` event, the first 20 in full).
    lost : list of str
        Rotations the watch did not see (each also a ``"lost"`` event): a file beside the log that
        it never read, or, per table, a jump of the whole-number spin ids from the last one of a
        rotated file to the first one of the next file, where the ids went up by a constant step
        (the last three or more of them) and the next file skips ahead.

    Every counted spin with a ``spin_id`` is remembered (table, spin_id -> result; 10 bytes a
    spin with a whole-number id), so that a spin is never counted twice, across truncation and
    rotation too.
    Rows without a ``spin_id`` cannot be recognised: they are counted as they are read.
    """

    def __init__(self, path, wheel, *, columns=None, fmt: str = "auto", alpha: float = 0.01, horizon: int = 100_000, block: int = 100,
                 settle: float = DEFAULT_SETTLE):
        from rngcert.collect.spinlog import detect_format

        self.path = Path(path)
        self.wheel = wheel
        self.space = wheel.position_space()
        self.columns = columns
        self.alpha, self.horizon, self.block = alpha, horizon, block
        self.follower = LogFollower(path, fmt=fmt, settle=settle, detect=detect_format)
        self.watchers: dict[str, Watcher] = {}
        self.rejected = 0
        self.repeated = 0
        self.conflicts = 0
        self._seen: dict[str, _Counted] = {}  # table -> the spins counted, by spin_id
        self.lost: list[str] = []
        self._tail: dict[str, tuple[int, int, int]] = {}  # table -> (last whole-number id, its constant step, run of that step)
        self._after_rotation: set[str] = set()  # tables whose first id after a rotation is still to be compared
        self._gen = 0

    @property
    def spins(self) -> dict[str, int]:
        return {t: w.status().spins for t, w in self.watchers.items()}

    def close(self) -> None:
        self.follower.close()

    def step(self, *, final: bool = False) -> list[Event]:
        """Read what is new and update the detectors; stops at the first alarm."""
        from rngcert.collect.spinlog import read_spin_rows
        from rngcert.errors import NoDataError

        events: list[Event] = []
        chunks = self.follower.poll(final=final)
        events += [Event("note", text=t) for t in self.follower.notes]
        self.follower.notes.clear()
        for t in self.follower.lost:
            self.lost.append(t)
            events.append(Event("lost", text=t))
        self.follower.lost.clear()
        for ch in chunks:
            if ch.generation != self._gen:
                self._gen = ch.generation
                if ch.generation in self.follower.rotations:
                    self._after_rotation = set(self._tail)
            try:
                rows = read_spin_rows(self.path, self.wheel, columns=self.columns, fmt=ch.fmt, data=ch.data)
            except NoDataError:
                continue
            shift = ch.first_line - 1 - ch.header_lines
            for r in rows.rejected:
                self.rejected += 1
                if self.rejected <= 20:
                    events.append(Event("note", text=f"{self.path}:{r.line + shift}: {r.column}: {r.reason} (line not counted)"))
            if not rows.n:
                continue
            line = rows.line + shift
            ok = rows.accepted & (rows.pos >= 0)
            if rows.table is not None:
                enc = rows.table.dictionary_encode()
                tcodes = enc.indices.to_numpy(zero_copy_only=False)
                tnames = enc.dictionary.to_pylist()
            else:
                tcodes, tnames = np.zeros(rows.n, dtype=np.int64), [self.path.stem]
            if rows.spin_id is not None:
                self._id_gaps(events, rows, tcodes, tnames, line)
            used, first_at = np.unique(tcodes[ok], return_index=True)
            for c in used[np.argsort(first_at)].tolist():  # tables in order of appearance (a handful)
                tname = tnames[c] or "(no table)"
                sel = np.flatnonzero(ok & (tcodes == c))
                if rows.spin_id is not None:
                    sel = self._new_spins(events, tname, sel, rows, line)
                    if not sel.size:
                        continue
                w = self.watchers.get(tname)
                if w is None:
                    w = self.watchers[tname] = Watcher(self.space, alpha=self.alpha, horizon=self.horizon, block=self.block)
                    events.append(Event("start", tname, watcher=w, text=w.guarantee()))
                before = w.status().spins
                st = w.update(rows.pos[sel])
                events.append(Event("status", tname, status=st, watcher=w))
                if st.alarm:
                    j = int(sel[w.alarm_spin - 1 - before])
                    sid = rows.spin_id[j].as_py() if rows.spin_id is not None else f"line {int(line[j])}"
                    events.append(Event("alarm", tname, status=st, watcher=w, spin_id=sid))
                    return events
        return events

    def _new_spins(self, events: list[Event], tname: str, sel: np.ndarray, rows, line: np.ndarray) -> np.ndarray:
        """The rows of ``sel`` whose spin was not counted yet; remembers them. An exact repeat
        (same table, spin_id and result) is skipped and counted in one note per chunk; a spin_id
        already counted with another result is a conflict: reported, not counted. Vectorised over
        the rows (a catch-up over a long log is one large chunk); ids that are not whole numbers
        are looked up one by one."""
        import pyarrow as pa
        import pyarrow.compute as pc

        seen = self._seen.get(tname)
        if seen is None:
            seen = self._seen[tname] = _Counted()
        raw = rows.spin_id.take(pa.array(sel))
        raw = pc.utf8_trim_whitespace(raw.cast(pa.string()))
        numeric = pc.match_substring_regex(raw, r"^[0-9]{1,18}$")
        num = pc.cast(pc.if_else(numeric, raw, pa.scalar(None, pa.string())), pa.int64()).to_numpy(zero_copy_only=False)
        is_num = np.asarray(pc.fill_null(numeric, False).to_numpy(zero_copy_only=False), dtype=bool)
        no_id = np.asarray(pc.fill_null(pc.equal(raw, ""), True).to_numpy(zero_copy_only=False), dtype=bool)
        pos = np.asarray(rows.pos[sel], dtype=np.int64)
        ref = np.full(sel.size, -1, dtype=np.int64)  # the result this spin was counted with (-1: not counted yet)
        new = np.zeros(sel.size, dtype=bool)
        k = np.flatnonzero(is_num)
        if k.size:
            ids = num[k].astype(np.int64)
            ref[k] = seen.lookup(ids)
            # repeats within the chunk: a later row of an id refers to its first row in the chunk
            u, first, inv = np.unique(ids, return_index=True, return_inverse=True)
            later = np.arange(k.size) != first[inv]
            fresh = ref[k] < 0
            ref[k[later & fresh]] = pos[k[first[inv]][later & fresh]]
            take = fresh & ~later
            new[k[take]] = True
            seen.add(ids[take], pos[k[take]])
        for i in np.flatnonzero(~is_num & ~no_id).tolist():  # text ids (rare): one by one
            sid = raw[i].as_py()
            old = seen.text.get(sid)
            if old is None:
                seen.text[sid] = int(pos[i])
                new[i] = True
            else:
                ref[i] = old
        repeat = (ref >= 0) & (ref == pos)
        conflict = (ref >= 0) & (ref != pos)
        keep = new | no_id
        for i in np.flatnonzero(conflict).tolist():
            self.conflicts += 1
            if self.conflicts <= 20:
                lab = self.space.labels
                show = lambda q: lab[q] if 0 <= q < len(lab) else q  # noqa: E731
                events.append(Event("note", text=(
                    f"{self.path}:{int(line[sel[i]])}: spin_id {raw[i].as_py()} of table {tname} was already counted with result "
                    f"{show(int(ref[i]))}; this row says {show(int(pos[i]))}: conflict, row not counted")))
        repeated = int(np.count_nonzero(repeat))
        if repeated:
            self.repeated += repeated
            events.append(Event("note", text=(
                f"skipped {repeated} row(s) of table {tname} that repeat spins already counted (same spin_id and result, "
                f"e.g. the old rows of a log rewritten whole): not counted again")))
        return sel[keep]


    def _id_gaps(self, events: list[Event], rows, tcodes: np.ndarray, tnames: list, line: np.ndarray) -> None:
        """:meth:`_id_gap` for every table of a chunk, on the whole-number ids of all its rows in
        file order: void and rejected rows too (a void spin is a spin of the log, not a gap)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        raw = pc.utf8_trim_whitespace(rows.spin_id.cast(pa.string()))
        numeric = np.asarray(pc.fill_null(pc.match_substring_regex(raw, r"^[0-9]{1,18}$"), False).to_numpy(zero_copy_only=False), dtype=bool)
        if not numeric.any():
            return
        num = np.zeros(rows.n, dtype=np.int64)
        num[numeric] = pc.cast(raw.filter(pa.array(numeric)), pa.int64()).to_numpy(zero_copy_only=False)
        for c in np.unique(tcodes[numeric]).tolist():  # tables (a handful)
            r = np.flatnonzero(numeric & (tcodes == c))
            self._id_gap(events, tnames[c] or "(no table)", num[r], line[r])

    def _id_gap(self, events: list[Event], tname: str, ids: np.ndarray, line) -> None:
        """Compare the first id counted after a rotation with the last one before it (see ``lost``),
        then remember the last id and the step the ids went up by."""
        if not ids.size:
            return
        tail = self._tail.get(tname)
        if tname in self._after_rotation:
            self._after_rotation.discard(tname)
            if tail is not None and tail[1] > 0 and tail[2] >= 2 and int(ids[0]) > tail[0] + tail[1]:
                missing = (int(ids[0]) - tail[0]) // tail[1] - 1
                text = (f"{self.path}:{int(line[0])}: table {tname}: the first spin_id of the new file after a rotation is {int(ids[0])}, "
                        f"the last one of the file before was {tail[0]} (ids went up by {tail[1]}): about {missing:,} spin(s) between them "
                        "were never read (a rotation the watch did not see)")
                self.lost.append(text)
                events.append(Event("lost", tname, text=text))
        seq = ids if tail is None else np.concatenate([[tail[0]], ids])
        if seq.size < 2:
            self._tail[tname] = (int(ids[-1]), 0, 0)
            return
        d = np.diff(seq)
        step = int(d[-1])
        neq = np.flatnonzero(d != step)
        run = d.size - (int(neq[-1]) + 1 if neq.size else 0)
        if not neq.size and tail is not None and tail[1] == step:
            run += tail[2]
        self._tail[tname] = (int(ids[-1]), step, run)


class _Counted:
    """The spins of one table counted so far, by spin id: whole-number ids in a sorted int64 array
    beside their wheel positions (10 bytes a spin, grown by doubling), other ids in a dict."""

    def __init__(self):
        self.ids = np.zeros(0, dtype=np.int64)
        self.pos = np.zeros(0, dtype=np.int16)
        self.n = 0
        self.text: dict[str, int] = {}

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """The position each id was counted with, -1 where it was not counted."""
        have = self.ids[: self.n]
        i = np.searchsorted(have, ids)
        i = np.minimum(i, max(self.n - 1, 0))
        found = (self.n > 0) & (have[i] == ids) if self.n else np.zeros(ids.size, dtype=bool)
        return np.where(found, self.pos[: self.n][i] if self.n else -1, -1).astype(np.int64)

    def add(self, ids: np.ndarray, pos: np.ndarray) -> None:
        """Remember new, distinct ids (not counted before)."""
        if ids.size == 0:
            return
        order = np.argsort(ids, kind="stable")
        ids, pos = ids[order], pos[order].astype(np.int16)
        n, m = self.n, ids.size
        if n + m > self.ids.size:  # grow by doubling: appending a poll's few spins stays cheap
            cap = max(n + m, 2 * self.ids.size, 1024)
            self.ids = np.concatenate([self.ids[:n], np.zeros(cap - n, dtype=np.int64)])
            self.pos = np.concatenate([self.pos[:n], np.zeros(cap - n, dtype=np.int16)])
        if n == 0 or ids[0] > self.ids[n - 1]:  # the usual case: ids keep increasing
            self.ids[n : n + m], self.pos[n : n + m] = ids, pos
        else:  # an id below the last one: merge
            a = np.concatenate([self.ids[:n], ids])
            b = np.concatenate([self.pos[:n], pos])
            o = np.argsort(a, kind="stable")
            self.ids[: n + m], self.pos[: n + m] = a[o], b[o]
        self.n = n + m
