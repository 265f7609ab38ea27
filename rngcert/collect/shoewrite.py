"""Write a card-scanner shoe log (the format :func:`rngcert.collect.shoelog.read_shoe_log` reads):
one row per card, safe to open in a spreadsheet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rngcert.collect.csvsafe import safe_column
from rngcert.equipment.cards import token_table
from rngcert.errors import InputError

__all__ = ["write_shoe_log"]


def write_shoe_log(path: str | Path, after, *, before=None, shoe_ids=None, table: str | None = None,
                   serial: bool = True, lengths=None, rotated=None, dealer=None) -> int:
    """Write shoes in the scanner format (DESIGN §3), the inverse of :func:`read_shoe_log`.

    Parameters
    ----------
    path : str or Path
        Output CSV.
    after : (n_shoes, n) array_like of int
        Card codes after the shuffle, dealing order (stage ``after``).
    before : (n_shoes, 52·decks) array_like of int, optional
        Orders before the shuffle (stage ``before``); when given a ``stage`` column is written.
    shoe_ids : sequence of str, optional
        Default ``"1" .. "n_shoes"``.
    table : str, optional
        Written as a ``table`` column.
    serial : bool
        Write ``#k`` deck serials (codes must then be unique serialised codes).
    lengths : (n_shoes,) array_like of int, optional
        Cards of each ``after`` shoe to write (a scanner logs the dealt cards only).
    rotated : (n_shoes, n) array_like of bool, optional
        Orientation of the ``after`` cards, written as a ``rotated`` column (0/1).
    dealer : sequence of str, optional
        Dealer of each shoe, written as a ``dealer`` column.

    Returns
    -------
    int
        Rows written.
    """
    a = np.asarray(after)
    if a.ndim != 2:
        raise InputError(f"after must be 2-D (n_shoes, n_cards), got shape {a.shape}")
    m, n = a.shape
    ids = np.array([str(i + 1) for i in range(m)] if shoe_ids is None else [str(s) for s in shoe_ids], dtype=object)
    if ids.size != m:
        raise InputError(f"{ids.size} shoe ids for {m} shoes")
    for v in list(ids[:]) + ([str(table)] if table is not None else []):
        if any(ch in v for ch in ',"\n\r') or v != v.strip() or not v:
            raise InputError(f"shoe id / table {v!r} must be non-empty and free of commas, quotes, newlines and edge blanks")
    tok = pa.array(token_table(serial).tolist(), type=pa.string())
    id_arr = pa.array(ids.tolist(), type=pa.string())
    dl = None
    if dealer is not None:
        dl = [str(x) for x in dealer]
        if len(dl) != m or any(any(ch in v for ch in ',"\n\r') or not v for v in dl):
            raise InputError(f"dealer must give {m} non-empty names free of commas, quotes and newlines")
    blocks = []
    stages = [("after", a)] if before is None else [("before", np.asarray(before)), ("after", a)]
    for st, arr in stages:
        mm, nn = arr.shape
        keep = np.ones((mm, nn), dtype=bool)
        if st == "after" and lengths is not None:
            ln = np.asarray(lengths).astype(np.int64)
            if ln.shape != (mm,) or np.any(ln < 1) or np.any(ln > nn):
                raise InputError(f"lengths must give 1..{nn} cards for each of the {mm} shoes")
            keep = np.arange(nn)[None, :] < ln[:, None]
        si, pj = np.nonzero(keep)
        cols = {"shoe_id": pc.take(id_arr, pa.array(si.astype(np.int32))),
                "position": pa.array((pj + 1).astype(np.int32)),
                "card": pc.take(tok, pa.array(arr[si, pj].astype(np.int32)))}
        if table is not None:
            cols = {"table": pc.take(pa.array([str(table)]), pa.array(np.zeros(si.size, dtype=np.int32)))} | cols
        if before is not None:
            cols["stage"] = pc.take(pa.array([st]), pa.array(np.zeros(si.size, dtype=np.int32)))
        if dl is not None:
            cols["dealer"] = pc.take(pa.array(dl), pa.array(si.astype(np.int32)))
        if rotated is not None:
            rv = np.asarray(rotated).astype(np.int8)
            vals = rv[si, pj] if st == "after" else np.zeros(si.size, np.int8)
            cols["rotated"] = pa.array(vals.astype(np.int32))
        blocks.append(pa.table({k: safe_column(v) for k, v in cols.items()}))  # no cell runs as a formula
    tbl = pa.concat_tables(blocks)
    with open(path, "wb") as fh:
        fh.write((",".join(tbl.column_names) + "\n").encode())
        pacsv.write_csv(tbl, fh, write_options=pacsv.WriteOptions(include_header=False, quoting_style="none"))
    return tbl.num_rows
