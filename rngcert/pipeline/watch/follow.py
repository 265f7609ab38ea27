"""Following a growing log (:class:`LogFollower`): every complete line handed out exactly once across
truncation, rewrite in place, rotation (lost rotations reported) and FIFOs (see :mod:`rngcert.pipeline.watch`).
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

from rngcert.errors import InputError

#: Seconds without change after which a final line without a newline is counted, and after which a
#: rotated-away file is considered finished (CLI ``--settle``).
DEFAULT_SETTLE = 5.0

_CHECK = 64 * 1024  # bytes hashed at the start and just before the offset, to see a rewrite
_READ = 32 * 1024 * 1024  # bytes read per step (a longer line is read whole)


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
        self._siblings_before: dict[str, tuple] | None = None  # ... at the poll before that one (None: no such poll)
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
                self._siblings_before = self._siblings if self._polled_at is not None else None
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
        self._report_unread({self.old.ident if self.old else None, new_ident} | before, "was rotated more than once between two polls")

    def _report_unread(self, skip: set, what: str, skip_name: str | None = None) -> None:
        """Report as lost every file beside the log under a rotated name that is not empty, not
        compressed, not ``skip_name``, and whose (dev, inode) is neither in ``skip`` nor followed."""
        skip = skip | self._followed
        for name, (dev, ino, size, _mtime) in sorted(self._sibling_stats().items()):
            if (dev, ino) in skip or name == skip_name or size == 0 or self._compressed(self.path.parent / name):
                continue
            if not re.match(r"[.\-_][0-9]", name[len(self.path.name):]):
                continue  # not a rotated name (LOG.1, LOG-20261201, LOG.2026-12-01): an exporter's LOG.tmp, LOG.lock
            self.lost.append(
                f"{self.path} {what}: {self.path.parent / name} ({size:,} bytes, "
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
        if self._siblings_before is not None:  # copy-truncated twice within one poll: the later copy was never read
            before = {b[:2] for b in self._siblings_before.values()}
            self._report_unread(before, "was truncated more than once between two polls (copy-truncate)", recovered[0] if recovered else None)
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
