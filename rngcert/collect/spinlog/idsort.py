"""Spin ids in no order (a shuffled export, files joined out of order, rows exported late), in bounded
memory: the compact log (:class:`_CompactLog`) writes, per table, a small record for every row with an id
to a temporary file as it reads, and at the end sorts them out of core by id to put the table's spins in
spin-id order, as the exact path's sort does.

Each record is the row's id, its place among the table's live (accepted or void) rows and among its
accepted rows (-1 where it is not one), and its timestamp. The sort splits a table's records into buckets
of id ranges (float arithmetic that is monotone in the id, so a bucket's ids all lie below the next
bucket's), splits a bucket again while it holds more than :data:`BUCKET_ROWS` records, and sorts each
bucket in memory, stably (equal ids keep their file order). The sorted stream gives, with a few numbers
carried from chunk to chunk: whether the live rows were already in id order, the distinct ids (gaps),
and the accepted rows in id order, which reorder the table's columns. A repeated id among the live rows,
a timestamp that goes back in spin-id order, or (with a minimum round interval) rounds closer than twice
that interval or timestamps in whole minutes raise :class:`NotInRuns`: the exact path reads the log then
(it reports those as rejects, findings and notes).

Memory: one bucket at a time (about 60 bytes a record of it); disk: two copies of the records (16 bytes
a row, 24 with timestamps).
"""

from __future__ import annotations

import os

import numpy as np

import rngcert.scratch as scratch
from rngcert.collect.spinlog.columns import NO_TIME
from rngcert.collect.spinlog.idorder import NotInRuns

#: Records a bucket holds at most before it is sorted in memory (else it is split by id range again).
BUCKET_ROWS = 1_000_000
#: Records read from a temporary file at a time.
READ_ROWS = 1 << 19
#: Repeated spin ids of a table at most (beyond, the exact path reads the log).
MAX_REPEATS = 1_000_000


class IdSort:
    """The per-table records of a log's spin ids, spilled to a temporary folder (see the module docstring)."""

    def __init__(self):
        self.dir: str | None = None
        self.dtype: np.dtype | None = None
        self.n: dict[int, int] = {}  # per table: records written
        self.lo: dict[int, int] = {}
        self.hi: dict[int, int] = {}
        self.live_n: dict[int, int] = {}
        self.acc_n: dict[int, int] = {}
        self._fh: dict[int, object] = {}
        self._serial = 0
        self.span: dict[int, tuple[int, int]] = {}  # per sorted table: first and last timestamp of its live rows left

    # -- writing, in file order
    def _path(self, t: int) -> str:
        return os.path.join(self.dir, f"table{t}.rec")

    def add(self, t: int, v: np.ndarray, live: np.ndarray, acc: np.ndarray, ts: np.ndarray | None, lines: np.ndarray, okey: np.ndarray,
            file_no: int) -> None:
        """The rows of table ``t`` in one batch, in file order: ids ``v``, which are live and
        accepted, their timestamps (or None), lines, outcomes (:func:`outcome_key`) and file (an index)."""
        if v.size == 0:
            return
        if self.dtype is None:
            self.dtype = np.dtype([("id", "<i8"), ("live", "<i4"), ("acc", "<i4"), ("line", "<i8"), ("okey", "<i8"), ("file", "<i2")]
                                  + ([("ts", "<i8")] if ts is not None else []))
            self.dir = scratch.make("rngcert-idsort-")
        if ("ts" in self.dtype.names) != (ts is not None):  # (e.g. a key first seen late, the file read again: the exact path reads it)
            raise NotInRuns("timestamps in some batches only")
        l0, a0 = self.live_n.get(t, 0), self.acc_n.get(t, 0)
        cl, ca = np.cumsum(live), np.cumsum(acc)
        if l0 + v.size >= 2**31 - 1:
            raise NotInRuns("more than 2^31 rows in a table")
        rec = np.empty(v.size, dtype=self.dtype)
        rec["id"] = v
        rec["live"] = np.where(live, l0 + cl - 1, -1)
        rec["acc"] = np.where(acc, a0 + ca - 1, -1)
        rec["line"] = lines
        rec["okey"] = okey
        rec["file"] = file_no
        if "ts" in self.dtype.names:
            rec["ts"] = ts
        fh = self._fh.get(t)
        if fh is None:
            fh = self._fh[t] = open(self._path(t), "ab")
        rec.tofile(fh)
        self.n[t] = self.n.get(t, 0) + v.size
        lo, hi = int(v.min()), int(v.max())
        self.lo[t] = min(self.lo.get(t, lo), lo)
        self.hi[t] = max(self.hi.get(t, hi), hi)
        self.live_n[t] = l0 + int(cl[-1])
        self.acc_n[t] = a0 + int(ca[-1])

    def state(self):
        return dict(self.n), dict(self.lo), dict(self.hi), dict(self.live_n), dict(self.acc_n)

    def restore(self, st) -> None:
        """Forget the records written after :meth:`state` gave ``st`` (a file read again)."""
        self.n, self.lo, self.hi, self.live_n, self.acc_n = (dict(x) for x in st)
        for t, fh in list(self._fh.items()):
            fh.flush()
            fh.truncate(self.n.get(t, 0) * self.dtype.itemsize)
            fh.seek(0, os.SEEK_END)

    def close(self) -> None:
        """Delete the temporary folder."""
        for fh in self._fh.values():
            fh.close()
        self._fh = {}
        if self.dir is not None:
            scratch.remove(self.dir)
            self.dir = None

    # -- the sort
    def _sorted(self, path: str, n: int, lo: int, hi: int):
        """The ``n`` records of ``path`` (ids ``lo`` … ``hi``) in id order, chunk by chunk (equal ids in
        file order); the file is deleted once read."""
        if lo == hi:  # one id: file order is id order
            with open(path, "rb") as fh:
                for a in range(0, n, READ_ROWS):
                    yield np.fromfile(fh, dtype=self.dtype, count=min(READ_ROWS, n - a))
            os.remove(path)
            return
        if n <= BUCKET_ROWS:
            rec = np.fromfile(path, dtype=self.dtype, count=n)
            os.remove(path)
            yield rec[np.argsort(rec["id"], kind="stable")]
            return
        k = -(-n // max(BUCKET_ROWS // 2, 1)) + 1  # buckets of about half the limit, if the ids are even
        width = np.uint64((hi - lo) // k + 1)  # (integer ranges: the lowest id in bucket 0, the highest in a later one)
        base = np.uint64(lo % 2**64)
        self._serial += 1
        paths = [os.path.join(self.dir, f"b{self._serial}_{j}.rec") for j in range(k)]
        cnt = np.zeros(k, dtype=np.int64)
        blo = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
        bhi = np.full(k, np.iinfo(np.int64).min, dtype=np.int64)
        outs = [open(p, "wb") for p in paths]
        try:
            with open(path, "rb") as fh:
                for a in range(0, n, READ_ROWS):
                    rec = np.fromfile(fh, dtype=self.dtype, count=min(READ_ROWS, n - a))
                    b = ((rec["id"].astype(np.uint64) - base) // width).astype(np.int64)  # (id - lo, exact in 64 bits unsigned)
                    order = np.argsort(b, kind="stable")
                    bs = b[order]
                    cut = np.flatnonzero(np.r_[True, bs[1:] != bs[:-1], True])
                    for s, e in zip(cut[:-1].tolist(), cut[1:].tolist()):
                        j = int(bs[s])
                        part = rec[order[s:e]]
                        part.tofile(outs[j])
                        cnt[j] += e - s
                        blo[j] = min(blo[j], int(part["id"].min()))
                        bhi[j] = max(bhi[j], int(part["id"].max()))
        finally:
            for o in outs:
                o.close()
        os.remove(path)
        for j in range(k):
            if cnt[j]:
                yield from self._sorted(paths[j], int(cnt[j]), int(blo[j]), int(bhi[j]))
            else:
                os.remove(paths[j])

    def check_unique(self, t: int) -> None:
        """Raise :class:`NotInRuns` when two live rows of table ``t`` have the same key (a repeat)."""
        n = self.n.get(t, 0)
        if n == 0:
            return
        self._fh.pop(t).close()
        prev = None
        for rec in self._sorted(self._path(t), n, self.lo[t], self.hi[t]):
            k = rec["id"][rec["live"] >= 0]
            if k.size and (np.any(k[1:] == k[:-1]) or k[0] == prev):
                raise NotInRuns("a spin id repeats")
            if k.size:
                prev = int(k[-1])

    # long: one pass over the sorted records carries the repeat, order, time and gap checks and the reorder of every column from chunk to chunk
    def _whole_groups(self, t: int):
        """The sorted records of table ``t`` in chunks that end where an id ends (a repeated id is in one chunk)."""
        pending = None
        for rec in self._sorted(self._path(t), self.n[t], self.lo[t], self.hi[t]):
            if pending is not None:
                rec = np.concatenate([pending, rec])
            cut = int(np.searchsorted(rec["id"], rec["id"][-1], side="left"))
            pending = rec[cut:]
            if cut:
                yield rec[:cut]
        if pending is not None and pending.size:
            yield pending

    def _repeats(self, lv: np.ndarray) -> np.ndarray:
        """The live records of a chunk (sorted) with their repeats taken out, as the store's rule takes them
        (:func:`repeat_status`): the first row of an id is kept when every later row has its result (exact
        duplicates), else every row of the id is left out (a conflict); the records of repeated ids are
        kept in :attr:`groups` for the rejects."""
        li = lv["id"]
        new = np.r_[True, li[1:] != li[:-1]]
        if new.all():
            return lv
        gid = np.cumsum(new) - 1
        start = np.flatnonzero(new)
        size = np.diff(np.r_[start, li.size])
        differs = lv["okey"] != lv["okey"][start][gid]
        conflict = np.zeros(start.size, dtype=bool)
        conflict[gid[differs]] = True
        self.groups.append(lv[size[gid] > 1])
        self.n_repeated += int(np.count_nonzero(size > 1))
        if self.n_repeated > MAX_REPEATS:
            raise NotInRuns("too many repeated spin ids")
        return lv[new & ~conflict[gid]]

    # long: one pass over the sorted records carries the repeat, order, time and gap checks and the reorder of every column from chunk to chunk
    def sort_table(self, t: int, columns: list[np.ndarray], min_us: int, unsplit: np.ndarray, repeats: bool = True):
        """Put the accepted rows of table ``t`` in spin-id order in ``columns`` (its arrays, in file
        order; changed in place), without the rows a repeated id leaves out. ``unsplit``: ids of rows the
        reader could not split (present, not gaps).

        Returns
        -------
        moved : bool
            Whether the live rows were out of spin-id order in the file (the exact path's note).
        gaps : (missing, first, last) or None
            The spin ids missing between the lowest and the highest, as the exact path counts them.
        kept : int
            The accepted rows in ``columns`` (the first ``kept``).
        groups : (m,) records
            The live rows of the repeated ids, in id order, each id's in file order (see :meth:`_repeats`).

        Raises
        ------
        NotInRuns
            A repeated id (when not ``repeats``, or more than :data:`MAX_REPEATS`), a timestamp that
            goes back in spin-id order, or (``min_us`` > 0) rounds closer than twice ``min_us`` or
            timestamps in whole minutes (the exact path's findings and notes).
        """
        n = self.n.get(t, 0)
        self.groups, self.n_repeated = [], 0
        if n == 0:
            return False, None, 0, np.zeros(0, dtype=self.dtype)
        fh = self._fh.pop(t)
        fh.close()
        src = [c.copy() for c in columns]
        u = np.unique(unsplit)
        has_ts = "ts" in self.dtype.names
        prev_id = prev_live = prev_ts = first_ts = None
        distinct = found = out = 0
        moved = False
        minute_only = True
        for rec in self._whole_groups(t):
            ids = rec["id"]
            new = np.r_[prev_id is None or ids[0] != prev_id, ids[1:] != ids[:-1]]
            distinct += int(np.count_nonzero(new))
            if u.size:
                found += int(np.count_nonzero(np.isin(u, ids[new], assume_unique=True)))
            prev_id = int(ids[-1])
            lv = rec[rec["live"] >= 0]
            if lv.size and not repeats and np.any(lv["id"][1:] == lv["id"][:-1]):
                raise NotInRuns("a spin id repeats")
            lv = self._repeats(lv) if lv.size else lv
            if lv.size:
                pos = lv["live"]
                moved = moved or bool(np.any(pos[1:] < pos[:-1])) or (prev_live is not None and pos[0] < prev_live)
                if has_ts:
                    tsv = lv["ts"] if prev_ts is None else np.r_[prev_ts, lv["ts"]]
                    d = np.diff(tsv)
                    if np.any(d < 0):
                        raise NotInRuns("timestamps out of order")
                    if min_us > 0:
                        if np.any(d < 2 * min_us):
                            raise NotInRuns("rounds closer than twice the minimum round interval")
                        minute_only = minute_only and bool(np.all(lv["ts"] % 60_000_000 == 0))
                    prev_ts = int(lv["ts"][-1])
                    if first_ts is None and lv["ts"][-1] != NO_TIME:  # (void rows without a time, the least, come first: not in the span)
                        first_ts = int(lv["ts"][lv["ts"] != NO_TIME][0])
                prev_live = int(pos[-1])
            a = lv["acc"][lv["acc"] >= 0]
            for c, s in zip(columns, src):
                c[out : out + a.size] = s[a]
            out += a.size
        if has_ts and min_us > 0 and minute_only and prev_ts is not None:
            raise NotInRuns("timestamps in whole minutes")
        if first_ts is not None:  # (in spin-id order the timestamps never go back: the first and the last are the span)
            self.span[t] = (first_ts, prev_ts)
        lo, hi = self.lo[t], self.hi[t]
        if u.size:
            lo, hi = min(lo, int(u[0])), max(hi, int(u[-1]))
        missing = hi - lo + 1 - (distinct + u.size - found)
        groups = np.concatenate(self.groups) if self.groups else np.zeros(0, dtype=self.dtype)
        return moved, ((missing, lo, hi) if missing and n + unsplit.size > 1 else None), out, groups


#: Labels longer than this (characters) are not given keys (the exact path reads such a log).
MAX_LABEL = 256


def label_keys(labels) -> np.ndarray | None:
    """A 64-bit key of each spin id that is a label (a UUID, ``T1-5``): equal texts have equal keys (two
    texts may share one: then the log is read on the exact path, as for a repeat). None when a label is
    a whole number (the exact path's file-level check may count the ids as numbers) or is longer than
    :data:`MAX_LABEL`. ``labels``: a list, or a pyarrow string array without nulls."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rngcert.collect import _arrow

    arr = labels if isinstance(labels, pa.Array) else _arrow.texts(labels)  # (not pa.array: that imports pandas, 0.5 s)
    if arr.type == pa.large_string():
        arr = arr.cast(pa.string())
    if not len(arr):
        return np.zeros(0, dtype=np.int64)
    if pc.any(pc.match_substring_regex(arr, r"^[0-9]+$")).as_py():
        return None
    off = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4).astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(1, np.uint8)
    ln = np.diff(off)
    if ln.max(initial=0) > MAX_LABEL:
        return None
    h = np.full(len(arr), 0xCBF29CE484222325, dtype=np.uint64) ^ ln.astype(np.uint64)
    prime = np.uint64(0x100000001B3)
    for j in range(int(ln.max(initial=0))):  # FNV-1a over the bytes, one position of every label at a time
        has = ln > j
        byte = data[np.minimum(off[:-1] + j, data.size - 1)].astype(np.uint64)
        h = np.where(has, (h ^ byte) * prime, h)
    h ^= h >> np.uint64(33)  # (a final mix: the high bits depend on every byte)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return h.view(np.int64)
