"""Temporary folders of a run, known to the process that made them.

A run stopped by SIGTERM (a batch system's time limit, ``kill``) removes the folders its own process made
(:func:`remove_own`, called by the command line's SIGTERM handler) before it ends: left to the default action,
the signal ended the process where it stood and left ``rngcert-remedies-*``, ``rngcert-idsort-*`` (up to a
log's size of sort records), ``rngcert-ingest-*`` (a spooled Parquet copy of a log) and an export's
``.NAME.rngcert-export-HOST-PID`` folder behind. A folder is removed only by the process that made it: a pool
worker forked from it never removes its parent's folders. Standard library only (any layer may use it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

#: Folders made and not yet removed: path -> the pid of the process that made it.
_LIVE: dict[str, int] = {}


def make(prefix: str, *, at: str | os.PathLike | None = None) -> str:
    """Make a new temporary folder (:func:`tempfile.mkdtemp`; in ``TMPDIR`` unless ``at`` names the folder to put it in)
    and remember it for :func:`remove_own`. Returns its path."""
    d = tempfile.mkdtemp(prefix=prefix, dir=None if at is None else os.fspath(at))
    _LIVE[d] = os.getpid()
    return d


def keep(path: str | os.PathLike) -> None:
    """Remember a folder this process made by other means (e.g. an export's folder beside its destination)."""
    _LIVE[os.fspath(path)] = os.getpid()


def remove(path: str | os.PathLike) -> None:
    """Remove a folder and everything in it (nothing if it is gone) and forget it."""
    p = os.fspath(path)
    _LIVE.pop(p, None)
    shutil.rmtree(p, ignore_errors=True)


def forget(path: str | os.PathLike) -> None:
    """Forget a folder without removing it (it was renamed into place: it is a result now)."""
    _LIVE.pop(os.fspath(path), None)


@contextmanager
def folder(prefix: str) -> Iterator[str]:
    """A temporary folder for the ``with`` block (:func:`make`), removed at its end, on an error too."""
    d = make(prefix)
    try:
        yield d
    finally:
        remove(d)


def remove_own() -> list[str]:
    """Remove every folder this process made and has not removed; returns their paths. Called on SIGTERM."""
    me = os.getpid()
    gone = [d for d, pid in list(_LIVE.items()) if pid == me]
    for d in gone:
        remove(d)
    return gone


def live() -> list[Path]:
    """The folders this process made and has not removed (for tests)."""
    me = os.getpid()
    return [Path(d) for d, pid in _LIVE.items() if pid == me]
