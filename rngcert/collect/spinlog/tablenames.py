"""The table of a log without a ``table`` column: one table per file, named after the file.

A file's table is its name without the extension (``perm.txt`` -> ``perm``). Two files of one name in
different folders (``d1/perm.txt``, ``d2/perm.txt``: two wheels' lists, or two days of one) are two tables,
named with as many of their folders as tell them apart (``d1/perm``, ``d2/perm``): before 2026-12-05 they
were one table, their spins concatenated, and two 3,000-spin lists that could each carry no verdict
PASSed as one table of 6,000. ``--pool`` still certifies them as one sequence. A process substitution
(``<(zcat log.csv.gz)``: ``/dev/fd/63``) is named by its path, not ``63``; standard input is
:data:`STDIN_NAME`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

#: The name standard input (a path of ``-``) has in reports and rejects.
STDIN_NAME = "(standard input)"

#: A file descriptor's path (``/dev/fd/63``, ``/proc/self/fd/5``): a shell's process substitution.
_FD_PATH = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|\d+)/fd)/\d+")


def _real(name: str) -> str:
    """The file ``name`` is (a path given twice, or as ``./a.csv`` and ``a.csv``, is one file)."""
    try:
        return os.path.realpath(name)
    except (OSError, ValueError):
        return name


def file_tables(names: Sequence[str]) -> dict[str, str]:
    """The table name of each file of one read, for its rows when it has no ``table`` column.

    Parameters
    ----------
    names : sequence of str
        The files' paths as given (``str(path)``), in reading order; :data:`STDIN_NAME` for standard input.

    Returns
    -------
    dict of str to str
        ``{path: table}``: the file's name without its extension; the path itself for a file descriptor's path
        (``/dev/fd/63``) and for standard input; for files of one name in different folders, that name with as
        many of each file's folders as make the names differ (``d1/perm``, ``d2/perm``), or its name with the extension
        when folders do not (``log.csv`` and ``log.jsonl``); the path itself for files of different stems whose
        names would meet (``log.csv`` so named beside ``log.jsonl``, and ``log.csv.txt``). A path given twice (or two
        paths of one file) gets one name.

    Examples
    --------
    >>> file_tables(["d1/perm.txt", "d2/perm.txt", "T5.csv", "/dev/fd/63"])
    {'d1/perm.txt': 'd1/perm', 'd2/perm.txt': 'd2/perm', 'T5.csv': 'T5', '/dev/fd/63': '/dev/fd/63'}
    """
    out: dict[str, str] = {}
    by_stem: dict[str, dict[str, str]] = {}  # stem -> {real file: first path given}
    for name in names:
        name = str(name)
        if name == STDIN_NAME or _FD_PATH.fullmatch(name):
            out[name] = name
            continue
        by_stem.setdefault(Path(name).stem, {}).setdefault(_real(name), name)
    for stem, files in by_stem.items():
        named = _distinct(stem, list(files.values()))
        for name in names:
            name = str(name)
            if name not in out and Path(name).stem == stem:
                out[name] = named[files[_real(name)]]
    _apart(out)
    return {str(n): out[str(n)] for n in names}


def _apart(out: dict[str, str]) -> None:
    """Files of different stems whose names meet (``log.csv`` and ``log.jsonl`` are named with their extensions, and
    ``log.csv.txt``'s stem is ``log.csv``): each such file is named by its path, so that two files never make one table
    (they were one, their spins concatenated)."""
    owners: dict[str, set[str]] = {}
    for name, table in out.items():
        if name != STDIN_NAME and not _FD_PATH.fullmatch(name):
            owners.setdefault(table, set()).add(_real(name))
    for name, table in list(out.items()):
        if len(owners.get(table, ())) > 1:
            out[name] = name


def tables_of(paths: Sequence, names: Sequence | None = None) -> dict[str, str]:
    """The table name of each file of one read, named as :func:`file_tables` names ``names`` when given.

    Parameters
    ----------
    paths : sequence of str or Path
        The files as read now, in reading order.
    names : sequence of str, optional
        The paths the files had when the report was made, one per path (``verify --rerun`` gives the paths the report
        recorded: a copy read from another folder, by an absolute path or under another name is the table it was);
        None: ``paths``.

    Returns
    -------
    dict of str to str
        ``{str(path): table}`` (and ``str(Path(path))``: ``./a.txt`` is also found as ``a.txt``).

    Examples
    --------
    >>> tables_of(["/lab/copy/perm.txt", "/lab/copy/sub/perm.txt"], ["perm.txt", "sub/perm.txt"])
    {'/lab/copy/perm.txt': 'perm', '/lab/copy/sub/perm.txt': 'sub/perm'}
    """
    paths = [str(p) for p in paths]
    names = paths if names is None else [str(n) for n in names]
    if len(names) != len(paths):
        raise ValueError(f"{len(names)} names for {len(paths)} files")
    by_name = file_tables(names)
    out = {p: by_name[n] for p, n in zip(paths, names)}
    # a str path is also looked up as its Path reads it ("./a.txt" is "a.txt")
    return out | {str(Path(p)): t for p, t in out.items() if str(Path(p)) not in out}


def _distinct(stem: str, paths: list[str]) -> dict[str, str]:
    """``{path: name}`` for distinct files sharing ``stem``: the stem with the fewest trailing folders that tell them apart,
    else the file name with its extension and the fewest folders (``log.csv``, ``log.jsonl``), else the paths given.
    (Trailing parts only: a path given relative or absolute, as ``verify --rerun`` may give it, names the same table.)"""
    if len(paths) == 1:
        return {paths[0]: stem}
    depth = max(len(Path(p).parts) for p in paths)
    for last in (lambda p: stem, lambda p: Path(p).name):
        for k in range(depth):
            named = {p: "/".join((*Path(p).parts[:-1][len(Path(p).parts) - 1 - k:], last(p))).replace("//", "/") for p in paths}
            if len(set(named.values())) == len(paths):
                return named
    return {p: p for p in paths}


def same_name_note(names: Sequence[str]) -> str | None:
    """The note saying which files of one name became separate tables (None when no two did)."""
    tables = file_tables(names)
    groups: dict[str, dict[str, str]] = {}  # stem -> {real file: first path given}
    for name in map(str, names):
        if name != STDIN_NAME and not _FD_PATH.fullmatch(name):
            groups.setdefault(Path(name).stem, {}).setdefault(_real(name), name)
    split = [list(files.values()) for files in groups.values() if len(files) > 1]
    if not split:
        return None
    said = "; ".join(", ".join(f"{n} as table {tables[n]}" for n in group) for group in split)
    return f"files of one name without a table column are separate tables: {said} (--pool certifies them as one sequence)"
