"""JSON Lines spin logs: one object per line, with the keys of a CSV log's columns.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from rngcert.collect.spinlog.core import RejectedRow
from rngcert.errors import InputError


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (which value is meant cannot be known)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs):
    """``object_pairs_hook`` of :func:`json.loads` that refuses an object naming a key twice."""
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise _DuplicateKey(k)
        seen[k] = v
    return seen


def json_array_error(name: str) -> InputError:
    """The error for a JSON array given where JSON Lines are read (says what it is and the fix)."""
    stem = Path(name).stem or "log"
    return InputError(
        f"{name}: a JSON array, not JSON Lines (one object per line): convert it with  jq -c '.[]' {name} > {stem}.jsonl  and certify that"
    )


def _text_of(data: bytes) -> tuple[str, str]:
    """The text of a whole-file log and its encoding: UTF-8 (with or without BOM), else Latin-1
    (every byte is a character there: nothing is replaced), as the CSV reader decides."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _read_jsonl(data: bytes, name: str):
    text, _ = _text_of(data)
    if text.lstrip().startswith("["):
        raise json_array_error(name)
    rows: dict[str, list] = {}
    lines: list[int] = []
    rejects: list[RejectedRow] = []
    blank = 0
    n = 0
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            blank += 1
            continue
        try:
            obj = json.loads(line, object_pairs_hook=_no_duplicate_keys)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except _DuplicateKey as exc:
            rejects.append(RejectedRow(name, i, exc.key, f"ambiguous: {exc.key!r} given twice in one object (which value is meant cannot be known; "
                                       "as a CSV header naming a column twice is refused): neither value is used", line[:200]))
            continue
        except ValueError as exc:
            rejects.append(RejectedRow(name, i, "*", f"not a JSON object: {exc}", line[:200]))
            continue
        for k, v in obj.items():
            col = rows.setdefault(k, [None] * n)
            col.append(None if v is None else (str(v).lower() if isinstance(v, bool) else str(v)))
        n += 1
        for col in rows.values():
            if len(col) < n:
                col.append(None)
        lines.append(i)
    cols = {k: pa.array(v, type=pa.string()) for k, v in rows.items()}
    return cols, np.asarray(lines, dtype=np.int64), rejects, blank, list(rows)
