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
  an exporter's ``live.csv.tmp``): such a file is reported in :attr:`LogFollower.lost`. The same
  look is taken at a truncation (two copy-truncates within one poll: the later copy, which does not
  start with the lines read, is the one never read). :class:`LogWatch` also compares, per table, the
  first spin id counted from the new file with the last one from the old file: when the ids
  went up by a constant step and the new file's first id skips ahead, the spins between are
  reported as lost (a ``"lost"`` event; ``rngcert watch`` stops with exit code 14).
* **Gaps in the spin ids.** Within a file, per table, whole-number spin ids that skip are spins the
  log never carried: each gap is a ``"gap"`` event at once (:mod:`rngcert.pipeline.watch.id_gaps`);
  an id that arrives later inside it fills it; the jump of a lost rotation is said only as lost.
* **FIFO** (named pipe): read as a stream, without offsets, as the writer sends data; the stream
  ends when the writer closes the pipe. A FIFO on which no writer sent anything is an input error
  (never a quiet exit 0). Directories and devices are refused.
"""

from __future__ import annotations

from rngcert.pipeline.watch.detector import _ARC as _ARC
from rngcert.pipeline.watch.detector import _POSITION as _POSITION
from rngcert.pipeline.watch.detector import _TOWARDS as _TOWARDS
from rngcert.pipeline.watch.detector import Watcher, WatchStatus
from rngcert.pipeline.watch.detector import alternative_name as alternative_name
from rngcert.pipeline.watch.follow import _CHECK as _CHECK
from rngcert.pipeline.watch.follow import _READ as _READ
from rngcert.pipeline.watch.follow import DEFAULT_SETTLE, Chunk, LogFollower
from rngcert.pipeline.watch.follow import _FileState as _FileState
from rngcert.pipeline.watch.log_watch import Event as Event
from rngcert.pipeline.watch.log_watch import LogWatch as LogWatch
from rngcert.pipeline.watch.log_watch import _Counted as _Counted

__all__ = ["Watcher", "WatchStatus", "LogFollower", "Chunk", "DEFAULT_SETTLE"]
