"""Spin order within a table: result sources, repeated spin ids and exact duplicates, near-duplicate rounds,
the tables assembled in spin order, and the time-order finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from rngcert.collect.spinids import prefixed_numbers
from rngcert.collect.spinlog.columns import _join_kinds
from rngcert.collect.spinlog.core import (
    CONTROL_REASON,
    NO_TIME,
    PRIMARY_SOURCES,
    SECOND_SOURCE_REASON,
    IntIds,
    RejectedRow,
    TableSpins,
    _codes_labels,
    _id_value,
    _merge_codes,
    _reject_rows,
    _small_int,
)
from rngcert.equipment.wheel import Wheel
from rngcert.errors import InputError

#: How the reason of a row rejected as an exact copy of an earlier row begins (see _mark_repeats).
DUPLICATE_REASON = "exact duplicate of"


#: How the reason of a row rejected as a near-duplicate round begins (see _mark_near_duplicates).
NEAR_DUPLICATE_REASON = "near-duplicate of"

#: The rule of the near-duplicate check, as the report states it.
NEAR_DUPLICATE_RULE = (
    "Near-duplicate rounds: two rows of one table with the same result (and the same payout and multiplier, where the log "
    "has those columns) closer in time than the minimum round interval are one round logged twice: counted once, the later "
    "row rejected as a near-duplicate. A round id shared by rows with different results is not a duplicate (a money wheel's "
    "bonus re-spin is a spin of its own); rows with the same spin_id and result are exact duplicates."
)
#: Near-duplicates covering at least this share of a table's rows make its verdict INCONCLUSIVE (the
#: process that logged rounds twice may also have lost or changed others).
NEAR_DUPLICATE_MAX_SHARE = 0.01


def repeat_status(keys: Sequence[np.ndarray], outcome: np.ndarray, consider: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How each row stands among the rows with the same spin identity (the rule of the store's
    ingest, shared by ``certify``): ``0`` the first row of its key (in row order), ``1`` a later
    row that repeats the first exactly (same ``outcome``), ``2`` a later row that differs from the
    first (a conflict); ``-1`` for rows not considered.

    Parameters
    ----------
    keys : sequence of (n,) int arrays
        Together they form the identity, e.g. (table code, spin number, spin label code).
    outcome : (n,) int array
        What must agree between repeats (position, symbol and void flag, combined).
    consider : (n,) bool, optional
        Rows that take part (default all).

    Returns
    -------
    status : (n,) int8
    first : (n,) int64
        Index of the first row of each row's key (-1 for rows not considered).
    """
    n = outcome.size
    status = np.full(n, -1, dtype=np.int8)
    first = np.full(n, -1, dtype=np.int64)
    rows = np.arange(n) if consider is None else np.flatnonzero(consider)
    if rows.size == 0:
        return status, first
    ks = [np.asarray(k)[rows] for k in keys]
    if all(k.size < 2 or (k[0] == k).all() for k in ks[:-1]) and (ks[-1].size < 2 or np.all(ks[-1][1:] > ks[-1][:-1])):
        status[rows] = 0  # the usual log: one table, ids strictly increasing: no repeat
        first[rows] = rows
        return status, first
    order = np.lexsort([rows] + ks[::-1])  # by key, then row order
    srt = rows[order]
    new = np.ones(srt.size, dtype=bool)
    for k in ks:
        kk = k[order]
        new[1:] &= kk[1:] == kk[:-1]
    new = ~new
    new[0] = True
    start = np.flatnonzero(new)
    grp_first = srt[start][np.cumsum(new) - 1]
    first[srt] = grp_first
    same = outcome[srt] == outcome[grp_first]
    status[srt] = np.where(new, 0, np.where(same, 1, 2))
    return status, first


def outcome_key(pos: np.ndarray, sym: np.ndarray, void: np.ndarray) -> np.ndarray:
    """One int64 per row that is equal exactly when position, symbol and void flag all are."""
    return ((np.asarray(pos, dtype=np.int64) + 1) * 65536 + (np.asarray(sym, dtype=np.int64) + 1)) * 2 + np.asarray(void, dtype=np.int64)


# long: per file and table, the secondary result-source rows matched to their primary rounds with a reason for each: one pass over the shared row keys
def _split_sources(parts: list[dict], wheel: Wheel) -> list[dict[str, list[dict]]]:
    """Rows of secondary result sources (``result_source`` not in :data:`PRIMARY_SOURCES`) are
    taken out of the results and compared with the primary row of the same table and spin_id.

    Each secondary row is moved to the rejected rows with a reason that begins with
    :data:`SECOND_SOURCE_REASON` (counted in ``SourceInfo.second_source``, not as unreadable),
    whether its reading agrees, disagrees, cannot be read or has no primary row. Returns, per part,
    the comparisons by table label (the dictionaries of
    :func:`rngcert.collect.feed.compare_sources`)."""
    out: list[dict[str, list[dict]]] = []
    labels_pos = list(wheel.position_space().labels) if wheel.order_known else []
    for pt in parts:  # loop over the files
        src = pt.get("result_source")
        if src is None:
            out.append({})
            continue
        name = pt["name"]
        codes, labels = _codes_labels(src)
        labels = [str(t).strip().lower() for t in labels]
        primary_code = np.array([t in PRIMARY_SOURCES for t in labels] + [True])
        codes = np.where(codes < 0, len(labels), codes)
        secondary = ~primary_code[codes] & ~_corrupt_rows(pt)  # (a corrupted result_source names no source)
        if not secondary.any():
            out.append({})
            continue
        if pt.get("spin_id") is None:
            raise InputError(f"{name}: the result_source column names {', '.join(sorted({labels[c] for c in np.unique(codes[secondary])}))} besides the "
                             f"wheel, but the file has no spin_id column to pair the rows of one spin")
        n = pt["pos"].size
        line_pos = {int(ln): i for i, ln in enumerate(pt["lines"].tolist())} if n else {}
        # secondary rows that _process rejected (an unreadable reading) are a source's failure, not unreadable data
        kept, unreadable = [], np.zeros(n, dtype=bool)
        for r in pt["rejected"]:  # the rejected rows (few)
            i = line_pos.get(int(r.line))
            if i is not None and secondary[i] and r.column != "*":
                unreadable[i] = True
            else:
                kept.append(r)
        pt["rejected"] = kept
        sid = pt["spin_id"]
        sk = sid.values.astype(np.int64) if isinstance(sid, IntIds) else _codes_labels(sid)[0].astype(np.int64)
        if pt.get("table") is not None:
            tk, tlabels = _codes_labels(pt["table"])
        else:
            tk, tlabels = np.zeros(n, dtype=np.int64), [_file_table(pt)]
        live = pt["accepted_mask"] | pt["void_mask"]
        prim = live & ~secondary & (sk >= 0)
        key = tk.astype(np.int64) * (int(sk.max(initial=0)) + 2) + sk
        okey = outcome_key(pt["pos"], pt["sym"], pt["void_mask"])
        order = np.argsort(key[prim], kind="stable")
        pkeys, prow = key[prim][order], np.flatnonzero(prim)[order]
        sec_rows = np.flatnonzero((live | unreadable) & secondary)
        at = np.searchsorted(pkeys, key[sec_rows])
        found = (at < pkeys.size) & (pkeys[np.minimum(at, max(pkeys.size - 1, 0))] == key[sec_rows]) if pkeys.size else np.zeros(sec_rows.size, bool)
        match = np.where(found, prow[np.minimum(at, max(pkeys.size - 1, 0))] if pkeys.size else -1, -1)

        def lab(i):
            if pt["void_mask"][i]:
                return "void"
            if pt["pos"][i] >= 0 and labels_pos:
                return str(labels_pos[pt["pos"][i]])
            return wheel.symbols[pt["sym"][i]] if pt["sym"][i] >= 0 else "?"

        id_labels = None if isinstance(sid, IntIds) else _codes_labels(sid)[1]
        id_text = lambda i: str(int(sk[i])) if id_labels is None else str(id_labels[int(sk[i])])  # noqa: E731
        comp: dict[str, list[dict]] = {}
        reasons = []
        for ti, t in enumerate(tlabels):  # loop over the few tables and sources
            in_t = tk[sec_rows] == ti
            rounds = int(np.count_nonzero(prim & (tk == ti)))
            for sc in np.unique(codes[sec_rows[in_t]]).tolist():
                sname = labels[sc]
                mine = in_t & (codes[sec_rows] == sc)
                rows, m = sec_rows[mine], match[mine]
                bad = unreadable[rows]
                paired = (m >= 0) & ~bad
                agree = paired & (okey[rows] == okey[np.maximum(m, 0)])
                dis = paired & ~agree
                seen = np.unique(m[m >= 0])
                first = [{"line": int(pt["lines"][i]), "round": id_text(i), "result": lab(int(j)), "reading": lab(int(i))}
                         for i, j in zip(rows[dis][:10].tolist(), m[dis][:10].tolist())]
                comp.setdefault(str(t), []).append({
                    "source": sname, "primary": "wheel", "what": f"rows whose result_source is {sname!r}", "rounds": rounds,
                    "read": int(seen.size), "agree": int(agree.sum()), "disagree": int(dis.sum()), "unreadable": int(bad.sum()),
                    "no_reading": ({"no row from this source": rounds - int(seen.size)} if rounds > seen.size else {}),
                    "without_wheel_result": int(np.count_nonzero(m < 0)), "first_disagreements": first,
                })
        for i, j in zip(sec_rows.tolist(), match.tolist()):  # the secondary rows: each gets its reason
            s_ = labels[codes[i]]
            if unreadable[i]:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: its reading is not an outcome of this wheel (compared, not a result)"
            elif j < 0:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: no wheel row for this spin_id (compared, not a result)"
            elif okey[i] == okey[j]:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: agrees with the wheel (line {int(pt['lines'][j])})"
            else:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: read {lab(i)} where the wheel shows {lab(j)} (line {int(pt['lines'][j])}); the wheel's result is used"
            reasons.append(why)
        pt["accepted_mask"] = pt["accepted_mask"].copy()
        pt["void_mask"] = pt["void_mask"].copy()
        pt["accepted_mask"][sec_rows] = False  # (unreadable ones are neither already)
        pt["void_mask"][sec_rows] = False
        pt["void_count"] = int(pt["void_mask"].sum())
        colname = pt.get("colnames", {}).get("result_source", "result_source")
        new = [RejectedRow(name, int(pt["lines"][i]), colname, why, labels[codes[i]]) for i, why in zip(sec_rows.tolist(), reasons)]
        pt["rejected"] = sorted(list(pt["rejected"]) + new, key=lambda r: r.line)
        out.append(comp)
    return out


def _corrupt_rows(pt: dict) -> np.ndarray:
    """(n,) bool: the rows of the part ``pt`` rejected for a control character in a cell (their reason begins with
    :data:`CONTROL_REASON`): corrupted rows, kept with that reason, never a result source's readings."""
    bad = np.zeros(pt["pos"].size, dtype=bool)
    lines = [r.line for r in pt["rejected"] if r.column != "*" and r.reason.startswith(CONTROL_REASON)]  # (the rejected rows: few)
    if lines:
        bad[np.isin(pt["lines"], lines)] = True
    return bad


def _table_keys(pt: dict, tab_ids: dict[str, int]) -> np.ndarray:
    """One integer a row of the part ``pt``: its table's number in ``tab_ids`` (tables are numbered as they are
    first met, across parts; a part without a table column is one table named after its file; a row with no
    table gets -1)."""
    if pt.get("table") is not None:
        codes, labels = _codes_labels(pt["table"])
        lut = np.array([tab_ids.setdefault(t, len(tab_ids)) for t in labels] + [-1], dtype=np.int64)
        return lut[np.where(codes < 0, len(labels), codes)]
    return np.full(pt["pos"].size, tab_ids.setdefault(_file_table(pt), len(tab_ids)), dtype=np.int64)


def _file_table(pt: dict) -> str:
    """The table of the rows of a part without a table column: ``file_table`` (set by the reader for every file of the
    read: :func:`~rngcert.collect.spinlog.tablenames.file_tables`), else its file's name without the extension."""
    return pt.get("file_table") or Path(pt["name"]).stem


def _result_label(pt: dict, j: int, wheel: Wheel, labels_pos: Sequence[str], bare: bool = False) -> str:
    """Row ``j`` of the part ``pt`` as a finding names it: ``void``, its section's position label where the wheel
    order is known (``bare``: without the ``index:`` prefix a money wheel's labels carry), else its symbol (``?``
    if none)."""
    if pt["void_mask"][j]:
        return "void"
    if pt["pos"][j] >= 0 and labels_pos:
        label = str(labels_pos[pt["pos"][j]])
        return label.split(":", 1)[-1] if bare else label
    return wheel.symbols[pt["sym"][j]] if pt["sym"][j] >= 0 else "?"


# long: repeated spin ids across files (the store's rule): vectorised keys of every file, then one status pass and the notes that name lines
def _mark_repeats(parts: list[dict], wheel: Wheel) -> dict[str, list[str]]:
    """Repeated spin ids of a table, across all files, with the store's rule
    (:func:`repeat_status`): an exact repeat (same result) is counted once, the later copies are
    rejected as duplicates; a spin id with different results is a conflict: every one of its rows
    is rejected and neither result is used. Returns notes per table label."""
    with_ids = [i for i, pt in enumerate(parts) if pt.get("spin_id") is not None]
    if not with_ids:
        return {}
    tab_ids: dict[str, int] = {}
    text_ids: dict[str, int] = {}
    keys_t, keys_s, outs, lives, where = [], [], [], [], []
    for i in with_ids:
        pt = parts[i]
        tk = _table_keys(pt, tab_ids)
        sid = pt["spin_id"]
        if isinstance(sid, IntIds):
            sk = sid.values.astype(np.int64)
        else:
            codes, labels = _codes_labels(sid)
            lut = np.array([-(text_ids.setdefault(t, len(text_ids)) + 2) if t != "" else -1 for t in labels] + [-1], dtype=np.int64)
            sk = lut[np.where(codes < 0, len(labels), codes)]
        lv = (pt["accepted_mask"] | pt["void_mask"]) & (sk != -1) & (tk >= 0)
        if len(with_ids) == 1 and (tk.size < 2 or (tk[0] == tk).all()):
            s_ = sk[lv]
            if s_.size < 2 or np.all(s_[1:] > s_[:-1]):
                return {}  # the usual log: one table, ids strictly increasing: nothing repeats
        keys_t.append(tk)
        keys_s.append(sk)
        outs.append(outcome_key(pt["pos"], pt["sym"], pt["void_mask"]))
        lives.append(lv)
        where.append(np.full(pt["pos"].size, i, dtype=np.int64))
    if len(with_ids) == 1:
        tk, sk, out, live, part_of = keys_t[0], keys_s[0], outs[0], lives[0], where[0]
    else:
        tk, sk, out, live, part_of = (np.concatenate(x) for x in (keys_t, keys_s, outs, lives, where))
    status, first = repeat_status([tk, sk], out, live)
    if not np.any(status > 0):
        return {}
    conflict_first = np.unique(first[status == 2])
    in_conflict = np.isin(first, conflict_first) & live
    dup = (status == 1) & ~in_conflict
    offsets = np.cumsum([0] + [parts[i]["pos"].size for i in with_ids])
    local = np.arange(tk.size) - offsets[np.searchsorted(offsets, np.arange(tk.size), side="right") - 1]
    tab_label = {v: k for k, v in tab_ids.items()}
    text_label = {-(v + 2): k for k, v in text_ids.items()}
    id_text = lambda v: text_label.get(int(v), str(int(v)))  # noqa: E731
    labels_pos = wheel.position_space().labels if wheel.order_known else ()

    def result(g):
        return _result_label(parts[int(part_of[g])], int(local[g]), wheel, labels_pos)

    def at(g, ref):
        pt = parts[int(part_of[g])]
        ln = int(pt["lines"][int(local[g])])
        return f"line {ln}" if part_of[g] == part_of[ref] else f"{pt['name']} line {ln}"

    reasons: dict[int, tuple[str, str]] = {}
    for g in np.flatnonzero(dup).tolist():  # the rows that repeat (few, usually)
        f = int(first[g])
        reasons[g] = ("duplicate", f"{DUPLICATE_REASON} {at(f, g)} (spin_id {id_text(sk[g])}, same result {result(g)}): counted once")
    members = np.flatnonzero(in_conflict)
    members = members[np.lexsort((members, first[members]))]
    bounds = np.flatnonzero(np.r_[True, first[members][1:] != first[members][:-1], True]) if members.size else np.zeros(1, np.int64)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        grp = members[a:b].tolist()
        seen = ", ".join(f"{result(g)} ({at(g, grp[0])})" for g in grp[:4]) + (" …" if len(grp) > 4 else "")
        msg = f"conflict: spin_id {id_text(sk[grp[0]])} has different results: {seen}; neither result is used"
        for g in grp:
            reasons[g] = ("conflict", msg)
    per_part: dict[int, list[int]] = {}
    for g in reasons:
        per_part.setdefault(int(part_of[g]), []).append(g)
    for i, gs in per_part.items():
        pt = parts[i]
        gs.sort()
        rows = np.array([int(local[g]) for g in gs], dtype=np.int64)
        texts = [id_text(sk[g]) for g in gs]
        _reject_rows(pt, rows, pt.get("colnames", {}).get("spin_id", "spin_id"), [reasons[g][1] for g in gs], texts)
    notes: dict[str, list[str]] = {}
    for t in np.unique(tk[dup | in_conflict]).tolist():
        in_t = tk == t
        nd = int(np.count_nonzero(dup & in_t))
        cf = np.unique(first[in_conflict & in_t])
        out_t = []
        if nd:
            ex = ", ".join(id_text(v) for v in np.unique(sk[dup & in_t])[:5])
            out_t.append(f"{nd} exact duplicate row(s) (same spin_id and result; duplicated spin_id(s): {ex}) counted once; the copies are in the rejects")
        if cf.size:
            ex = ", ".join(id_text(sk[f]) for f in cf[:5])
            nr = int(np.count_nonzero(in_conflict & in_t))
            out_t.append(f"{cf.size} spin_id(s) with conflicting results ({ex}): their {nr} rows are left out, neither result is chosen (see the rejects)")
        notes[tab_label[t]] = out_t
    return notes


# long: near-duplicate rounds: keys of every file, one sort into spin order and the neighbour comparison, then the finding with its examples
def _mark_near_duplicates(parts: list[dict], wheel: Wheel, min_s: float, pool: bool) -> dict[str, dict]:
    """Near-duplicate rounds (:data:`NEAR_DUPLICATE_RULE`): per table, rows taken in time order;
    a row with the same result (and payout, multiplier) as the row before it, less than ``min_s``
    seconds later, is rejected as a near-duplicate of the first row of its run. Tables whose
    timestamps are whole minutes (or dates) cannot resolve ``min_s`` and are left out with a note
    in the finding. Returns the finding per table label ("(all)" when ``pool``)."""
    if not min_s or min_s <= 0:
        return {}
    min_us = int(round(min_s * 1e6))
    use = [i for i, pt in enumerate(parts) if pt.get("ts") is not None]
    if not use:
        return {}
    tab_ids: dict[str, int] = {}
    extra_ids: dict[tuple[str, str], int] = {}
    T, TS, O, P, M, ROW, PART = [], [], [], [], [], [], []
    extra_cols = [c for c in ("payout", "multiplier") if all(parts[i].get(c) is not None for i in use)]
    for i in use:
        pt = parts[i]
        live = np.flatnonzero(pt["accepted_mask"] | pt["void_mask"])
        tk = _table_keys(pt, tab_ids)
        T.append(tk[live])
        TS.append(pt["ts"][live])
        O.append(outcome_key(pt["pos"], pt["sym"], pt["void_mask"])[live])
        for c, dest in zip(("payout", "multiplier"), (P, M)):
            if c in extra_cols:
                codes, labels = _codes_labels(pt[c])
                lut = np.array([extra_ids.setdefault((c, t), len(extra_ids)) for t in labels] + [-1], dtype=np.int64)
                dest.append(lut[np.where(codes < 0, len(labels), codes)][live])
            else:
                dest.append(np.zeros(live.size, dtype=np.int64))
        ROW.append(live)
        PART.append(np.full(live.size, i, dtype=np.int64))
    tk, ts, o, pay, mul, row, part_of = (np.concatenate(x) for x in (T, TS, O, P, M, ROW, PART))
    if ts.size < 2:
        return {}
    # rows compared with their neighbour in spin order: spin-id order where every file has whole-number
    # ids (a clock that repeats an hour interleaves distinct spins in time), else time order
    if all(isinstance(parts[i].get("spin_id"), IntIds) for i in use):
        key = np.concatenate([parts[i]["spin_id"].values[r] for i, r in zip(use, ROW)])
    elif all(np.all(np.diff(x) >= 0) or _clock_change_only(x, parts[i].get("ts_kinds")) for i, x in zip(use, TS)):
        key = np.arange(ts.size)  # file order (files in the order given): time order, or a clock change that repeats an hour
    else:
        key = ts
    order = np.lexsort((row, part_of, key, tk))
    tk, ts, o, pay, mul, row, part_of = (x[order] for x in (tk, ts, o, pay, mul, row, part_of))
    same_t = tk[1:] == tk[:-1]
    dt = np.abs(ts[1:] - ts[:-1])
    near = same_t & (dt < min_us) & (o[1:] == o[:-1]) & (pay[1:] == pay[:-1]) & (mul[1:] == mul[:-1])
    # a table whose timestamps are all whole minutes cannot resolve the interval; one whose rounds are
    # logged closer than twice the interval (median spacing) is not a log of rounds that last longer
    coarse_t: set = set()
    fast_t: dict[int, float] = {}
    bounds = np.flatnonzero(np.r_[True, ~same_t, True])  # rows of each table are contiguous (sorted by table first)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        t = int(tk[a])
        if np.all(ts[a:b] % 60_000_000 == 0):
            coarse_t.add(t)
        elif b - a > 2:
            med = float(np.median(dt[a : b - 1]))
            if med < 2 * min_us:
                fast_t[t] = med / 1e6
    skip = coarse_t | set(fast_t)
    if skip:
        near &= ~np.isin(tk[1:], list(skip))
    tab_label = {v: k for k, v in tab_ids.items()}
    labels_pos = wheel.position_space().labels if wheel.order_known else ()
    compared = ", ".join(["result"] + extra_cols)

    def result(g):
        return _result_label(parts[int(part_of[g])], int(row[g]), wheel, labels_pos, bare=True)

    def line(g):
        pt = parts[int(part_of[g])]
        return int(pt["lines"][int(row[g])])

    pairs_of: dict[int, list] = {}
    rejects: dict[int, list] = {}
    head = -1
    for j in np.flatnonzero(near).tolist():  # (pairs are few: a loop over them only)
        a, b = j, j + 1
        head = a if not (a > 0 and near[a - 1]) else head
        t = int(tk[b])
        pairs_of.setdefault(t, []).append({"first_line": line(a), "second_line": line(b), "seconds_apart": round(float(dt[j]) / 1e6, 3),
                                           "result": result(b), **({"file": parts[int(part_of[b])]["name"]} if len(use) > 1 else {})})
        first = parts[int(part_of[head])]
        at = f"line {line(head)}" if part_of[head] == part_of[b] else f"{first['name']} line {line(head)}"
        why = (f"{NEAR_DUPLICATE_REASON} {at} (same {compared}: {result(b)}; {float(dt[j]) / 1e6:.3f} s after the row before it, "
               f"less than the minimum round interval {min_s:g} s): one round logged twice, counted once")
        rejects.setdefault(int(part_of[b]), []).append((int(row[b]), why, result(b)))
    for i, rr in rejects.items():
        rr.sort()
        _reject_rows(parts[i], np.array([r for r, _, _ in rr], dtype=np.int64), "timestamp", [w for _, w, _ in rr], [x for _, _, x in rr])
    out: dict[str, dict] = {}
    sizes = dict(zip(*[x.tolist() for x in np.unique(tk, return_counts=True)]))
    for t in sorted(set(pairs_of) | skip):
        name = "(all)" if pool else tab_label[t]
        prs = pairs_of.get(t, [])
        n_rows = sizes.get(t, 0)
        if not prs:
            if t in coarse_t:
                note = (f"Near-duplicate rounds not checked: the timestamps are whole minutes (or dates), too coarse to tell rounds "
                        f"less than {min_s:g} s apart.")
            else:
                note = (f"Near-duplicate rounds not checked: rounds are logged every {fast_t[t]:g} s (median), less than twice the "
                        f"minimum round interval {min_s:g} s, so rows that close are this equipment's rounds, not copies "
                        "(--min-round-interval sets the interval).")
            out.setdefault(name, {"name": "near_duplicates", "text": note, "note_only": True})
            continue
        shown = "; ".join(f"lines {p['first_line']} and {p['second_line']} ({p['seconds_apart']:g} s, {p['result']})" for p in prs[:20])
        share = len(prs) / n_rows if n_rows else 0.0
        text = (f"{len(prs):,} near-duplicate round(s): rows with the same {compared} less than {min_s:g} s apart (a round of "
                f"the wheel lasts longer): one round logged twice; each counted once, the later row is in the rejects. Pairs: "
                f"{shown}{' … (all in the evidence)' if len(prs) > 20 else ''}. Rule applied: {NEAR_DUPLICATE_RULE}"
                + ("" if extra_cols else " This log has no payout or multiplier column (map one with --column payout=NAME to compare it too)."))
        reason = "" if share < NEAR_DUPLICATE_MAX_SHARE else (
            f"data integrity: {len(prs):,} near-duplicate rounds ({share:.1%} of the rows): the process that logged rounds twice may "
            "also have lost or changed others")
        f = out.get(name)
        if f is not None and f.get("note_only"):
            f = None
        ev = {"pairs": prs, "min_round_interval_s": min_s, "compared": ["table", "timestamp"] + ["result"] + extra_cols, "rule": NEAR_DUPLICATE_RULE}
        if f is None or not f["evidence"]["pairs"]:
            out[name] = {"name": "near_duplicates", "text": text, "inconclusive": reason, "evidence": ev,
                         "summary": f"{len(prs):,} near-duplicate round(s) (same {compared}, less than {min_s:g} s apart) counted once; "
                                    "the pairs are in the data-integrity section"}
        else:  # pooled tables: one finding listing every table's pairs
            f["evidence"]["pairs"] += prs
            f["text"] = f"{len(f['evidence']['pairs']):,} near-duplicate round(s) in the pooled tables; see the evidence. Rule: {NEAR_DUPLICATE_RULE}"
            f["inconclusive"] = f["inconclusive"] or reason
    return out


def _sort_key_of_ids(spin_id) -> np.ndarray:
    """Per row, a number that orders spin ids (numbers by value, text ids by text; -1 none)."""
    if isinstance(spin_id, IntIds):
        return spin_id.values
    codes, labels = spin_id
    rank = np.empty(len(labels) + 1, dtype=np.int64)
    rank[np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.int64)] = np.arange(len(labels))
    rank[-1] = -1
    codes = np.asarray(codes, dtype=np.int64)
    return rank[np.where(codes < 0, len(labels), codes)]


def _text_id_numbers(spin_id) -> tuple[np.ndarray, np.ndarray] | None:
    """Per row, the prefix (a code) and number of text spin ids that are letters and a whole number
    (``R1200``: :func:`rngcert.collect.spinlog.idorder.text_id_numbers`), -1 where a row has no id; None
    when the ids are whole numbers or some text id is of another shape (then the ids are labels)."""
    if isinstance(spin_id, IntIds):
        return None
    from rngcert.collect.spinlog.idorder import text_id_numbers

    codes, labels = spin_id
    keep = [i for i, t in enumerate(labels) if t != ""]
    got = text_id_numbers([labels[i] for i in keep]) if keep else None
    if got is None:
        return None
    num_u = np.full(len(labels) + 1, -1, dtype=np.int64)
    pre_u = np.full(len(labels) + 1, -1, dtype=np.int64)
    num_u[keep], pre_u[keep] = got[1], got[2]
    codes = np.asarray(codes, dtype=np.int64)
    codes = np.where(codes < 0, len(labels), codes)
    return pre_u[codes], num_u[codes]


def _id_numbers(spin_id) -> np.ndarray | None:
    """Per row, the spin id as a number (-1 where it has none); None when the ids are text."""
    if isinstance(spin_id, IntIds):
        return spin_id.values
    codes, labels = spin_id
    vals = np.array([_id_value(t)[0] if t != "" else -1 for t in labels] + [-1], dtype=np.int64)
    if any(v < 0 and t != "" for v, t in zip(vals, labels)):
        return None  # text ids: no gap check
    codes = np.asarray(codes, dtype=np.int64)
    return vals[np.where(codes < 0, len(labels), codes)]


# long: the concatenation of the files into tables in spin order, with the gap and time-order findings: every optional column is joined and split the
#   same way
def _assemble_tables(parts, key, pool, notes, repeat_notes=None) -> dict[str, TableSpins]:
    """Concatenate files, split per table, put rows in spin order, report gaps in spin ids.

    Spin order: with whole-number spin ids, spin-id order (then file and line); timestamps that go
    back against it are a data-integrity finding (:func:`time_order_finding`), not a re-sort (c18); text
    ids of one prefix and a whole number (``R1200``) the same, by their number (but no gap check).
    Without ids, when the rows have timestamps, by (timestamp, file and line); otherwise file
    order. Either way a shuffled copy of a log gives the same sequence."""
    repeat_notes = repeat_notes or {}
    # a file without a table column is one table, named after the file (as the store names it)
    parts = [dict(pt) for pt in parts]
    for pt in parts:
        if pt["table"] is None:
            pt["table"] = (np.zeros(pt["pos"].size, dtype=np.int32), [_file_table(pt)])
    has = {c: all(pt.get(c) is not None for pt in parts) for c in ("ts", "table", "dealer", "spin_id", "direction", "release", "line_no", "rotor_speed", "ball_direction")}
    cat = {}
    def joined(key):  # no copy for a single file
        return parts[0][key] if len(parts) == 1 else np.concatenate([pt[key] for pt in parts])

    for c in ("ts", "direction", "release", "line_no", "rotor_speed", "ball_direction"):
        if has[c]:
            cat[c] = joined(c)
    for c in ("table", "dealer", "spin_id"):
        if has[c]:
            cat[c] = _merge_codes([pt[c] for pt in parts])
    outcome = joined(key)
    acc = joined("accepted_mask")
    void = joined("void_mask")
    tab_all, tab_labels_all = cat["table"]
    if has["table"] and not pool:
        tab, tab_labels = tab_all, list(tab_labels_all)
    else:
        tab, tab_labels = np.zeros(outcome.size, dtype=np.int64), ["(all)"]
        if pool and (len(parts) > 1 or len(tab_labels_all) > 1):
            notes.append("tables pooled on request (--pool): tested as one sequence")
    if len(tab_labels) == 1:  # one table: no sort needed
        order, bounds = None, (0, tab.size)
    else:
        order = np.argsort(tab, kind="stable")
        bounds = np.searchsorted(tab[order], np.arange(len(tab_labels) + 1))
    id_sort = _sort_key_of_ids(cat["spin_id"]) if has["spin_id"] else None
    id_num = _id_numbers(cat["spin_id"]) if has["spin_id"] else None
    # text ids of one prefix and a number (``R1200``) order the spins as whole numbers do (no gap check: labels)
    id_txt = _text_id_numbers(cat["spin_id"]) if has["spin_id"] and id_num is None else None
    # ids of rows with no table value (rejected) and of rows the reader could not split are present in the file: not gaps
    tabless = np.zeros(0, dtype=np.int64)
    tabless_rows = np.zeros(0, dtype=np.int64)
    if "" in tab_labels_all:
        tabless_rows = np.flatnonzero(np.asarray(tab_all) == tab_labels_all.index(""))
        if id_num is not None:
            tabless = id_num[tabless_rows]
    extra, extra_text = {}, {}
    for pt in parts:
        for t, v in pt.get("extra_ids", []):
            extra.setdefault(t, []).append(v)
        for t, v in pt.get("extra_text_ids", []):
            extra_text.setdefault(t, []).append(v)
    ts_kinds_all = _join_kinds([pt.get("ts_kinds") for pt in parts])
    tables: dict[str, TableSpins] = {}
    for ti, t in enumerate(tab_labels):
        all_idx = np.arange(tab.size) if order is None else order[bounds[ti] : bounds[ti + 1]]
        idx = all_idx[acc[all_idx] | void[all_idx]]
        if idx.size == 0:
            continue
        tnotes = []
        order_finding = None
        txt = None  # text ids of one prefix: (its code, its text), for the gap count
        if pool:
            for tn, rn in repeat_notes.items():
                tnotes.extend(f"table {tn}: {x}" for x in rn)
        else:
            tnotes.extend(repeat_notes.get(str(t), []))
        if id_num is not None and idx.size > 1 and np.all(id_num[idx] >= 0):
            # spin ids are the order (a controller's counter is set at the spin; a wall clock can be
            # changed, or repeat an hour when daylight-saving time ends): where the timestamps disagree
            # with it, that is a data-integrity finding, not a reason to re-sort (c18)
            ids_t = id_num[idx]
            if np.any(np.diff(ids_t) < 0):
                idx = idx[np.lexsort((idx, ids_t))]
                tnotes.append("rows were not in spin_id order in the file; put in spin_id order")
            order_finding = time_order_finding(cat["ts"][idx], id_num[idx], ts_kinds_all) if has["ts"] else None
        elif id_txt is not None and idx.size > 1 and np.all(id_txt[1][idx] >= 0) and np.all(id_txt[0][idx] == id_txt[0][idx[0]]):
            nums = id_txt[1][idx]  # (one prefix: the number is the id, as a counter's)
            if np.any(np.diff(nums) < 0):
                idx = idx[np.lexsort((idx, nums))]
                tnotes.append("rows were not in spin_id order in the file; put in spin_id order")
            first = cat["spin_id"][1][int(cat["spin_id"][0][idx[0]])]
            prefix = first[: len(first) - len(str(int(id_txt[1][idx[0]])))]
            txt = (int(id_txt[0][idx[0]]), prefix)
            order_finding = time_order_finding(cat["ts"][idx], id_txt[1][idx], ts_kinds_all, prefix) if has["ts"] else None
        elif has["ts"] and _clock_change_only(cat["ts"][idx], ts_kinds_all):
            # no ids, and the only steps back are a daylight-saving change of zone-less times: the file
            # order is the spin order (a sort by time would interleave the two passes of the repeated hour)
            order_finding = time_order_finding(cat["ts"][idx], None, ts_kinds_all)
        elif has["ts"]:
            tsv = cat["ts"][idx]
            d = np.diff(tsv)
            back = bool(np.any(d < 0))
            ties = False
            if not back and id_sort is not None:
                s_ = id_sort[idx]
                ties = bool(np.any((d == 0) & (s_[1:] < s_[:-1])))
            if back or ties:
                keys = [idx] + ([id_sort[idx]] if id_sort is not None else []) + [tsv]
                idx = idx[np.lexsort(keys)]
                if back:
                    tnotes.append("rows were not in time order; sorted by timestamp (then spin_id, then file and line)")
                else:
                    tnotes.append("rows with the same timestamp were put in spin_id order")
            del tsv, d
        keep = idx[acc[idx]]
        small = _small_int(max(int(outcome.max(initial=0)), 1))
        ts_ = TableSpins(table=str(t), outcomes=outcome[keep].astype(small), void=int(void[idx].sum()), notes=tnotes)
        if order_finding is not None:
            ts_.findings.append(order_finding)
        if has["release"]:
            ts_.release = cat["release"][keep].astype(_small_int(max(int(cat["release"].max(initial=0)), 1)))
        if has["line_no"] and keep.size:
            ln = cat["line_no"][keep]
            ts_.line_start = np.r_[True, ln[1:] != ln[:-1]]
        if has["direction"]:
            ts_.direction = cat["direction"][keep]
        if has["rotor_speed"]:
            ts_.rotor_speed = cat["rotor_speed"][keep]
        if has["ball_direction"]:
            ts_.ball_direction = cat["ball_direction"][keep]
        if has["dealer"]:
            codes, labels = cat["dealer"]
            sel = codes[keep]
            used = np.flatnonzero(np.bincount(sel, minlength=len(labels))) if sel.size else np.zeros(0, np.int64)
            lookup = np.zeros(len(labels), dtype=_small_int(max(used.size - 1, 1)))
            lookup[used] = np.arange(used.size)
            ts_.dealer = lookup[sel]
            ts_.dealer_labels = tuple(labels[u] if labels[u] else "(none)" for u in used)
        if has["spin_id"]:
            if id_num is not None:
                # every row of the table with a valid id counts as present, rejected ones too
                names = ([str(t)] if not pool else list(tab_labels_all)) + [None]
                unsplit = np.asarray([v for nm in names for v in extra.get(nm, [])], dtype=np.int64)
                present = np.concatenate([id_num[all_idx], tabless, unsplit])
                present = np.sort(present[present >= 0])
                if present.size > 1:
                    distinct = 1 + int(np.count_nonzero(present[1:] != present[:-1]))
                    gaps = int(present[-1]) - int(present[0]) + 1 - distinct  # Python ints: ids near 2**63 - 1 do not overflow
                    if gaps:
                        tnotes.append(f"{gaps} spin_id(s) missing between {present[0]} and {present[-1]} (gaps in the sequence)")
            elif txt is not None and not pool:
                unsplit = prefixed_numbers(extra_text.get(str(t), []) + extra_text.get(None, []), txt[1])
                _text_gaps(tnotes, id_txt, txt, np.concatenate([all_idx, tabless_rows]), unsplit)
            elif not pool:
                tnotes.extend(_two_shapes(cat["spin_id"], all_idx, parts))
        tables[str(t)] = ts_
    return tables


def _two_shapes(spin_id, rows: np.ndarray, parts) -> list[str]:
    """The note of a table whose text spin ids are mostly one prefix and a number (``R1200``) but not all (``abc``, ``R2.5``,
    ``r7``): they are read as labels, so their gaps are not counted; the note names the first id of the other shape with
    its file and line (case c06: a bad id is named). ``rows``: the table's rows (rejected ones too) in the files joined
    in order. Empty for ids of one shape, or mostly of another."""
    import re
    from collections import Counter

    from rngcert.collect.spinids import PREFIXED_ID

    codes, labels = spin_id
    codes = np.asarray(codes, dtype=np.int64)
    codes = np.where(codes[rows] < 0, len(labels), codes[rows])
    text = np.array([t or "" for t in labels] + [""], dtype=object)[codes]
    prefix_u = [m.group("prefix") if (m := re.fullmatch(PREFIXED_ID, t or "")) else None for t in labels] + [None]
    common = Counter(prefix_u[c] for c in codes.tolist()).most_common()
    prefix = next((p for p, _ in common if p is not None), None)
    shaped_u = np.array([p is not None and p == prefix for p in prefix_u])[codes]
    have = text != ""
    n, k = int(have.sum()), int(shaped_u.sum())
    if not 0 < n - k < k:
        return []
    odd = np.flatnonzero(have & ~shaped_u)
    ends = np.cumsum([pt["pos"].size for pt in parts])
    row = int(rows[odd[0]])
    i = int(np.searchsorted(ends, row, side="right"))
    where = f"{parts[i]['name']}:{int(parts[i]['lines'][row - (int(ends[i - 1]) if i else 0)])}"
    examples = ", ".join(text[np.flatnonzero(shaped_u)[:2]].tolist())
    other = f"{text[odd[0]]!r} ({where}) is not" if odd.size == 1 else f"{odd.size} are not (the first: {text[odd[0]]!r}, {where})"
    return [f"spin ids of two shapes: {k} of {n} are {prefix} and a number ({examples}, ...), {other}: all are read as labels "
            "(repeats are checked, gaps are not)"]


def _text_gaps(tnotes: list, id_txt, txt: tuple, rows: np.ndarray, unsplit: np.ndarray) -> None:
    """The gap note of a table whose text ids are of one prefix (``txt``: its code and text): the numbers of ``rows`` (every
    row of the table, rejected ones too, and the rows with no table value) with that prefix count as present, as whole-number
    ids do, and so do ``unsplit`` (the numbers of that prefix's ids in rows the reader could not split); the note names the
    ids with their prefix (``R101``)."""
    code, prefix = txt
    ok = (id_txt[0][rows] == code) & (id_txt[1][rows] >= 0)
    present = np.sort(np.concatenate([id_txt[1][rows][ok], unsplit]))
    if present.size > 1:
        distinct = 1 + int(np.count_nonzero(present[1:] != present[:-1]))
        gaps = int(present[-1]) - int(present[0]) + 1 - distinct
        if gaps:
            tnotes.append(f"{gaps} spin_id(s) missing between {prefix}{present[0]} and {prefix}{present[-1]} (gaps in the sequence)")


#: A backward step of the clock this close to one hour, at zone-less timestamps, is a daylight-saving change.
DST_TOLERANCE_S = 120
#: A backward step of at most this many seconds is a clock adjustment (a time server's correction).
CLOCK_ADJUST_S = 60


#: The largest step back that a zone-less time read as UTC beside zoned ones can explain (UTC-12 to UTC+14).
ZONE_SPAN_US = 26 * 3600 * 10**6


def _clock_change_only(ts: np.ndarray, kinds: dict | None) -> bool:
    """Whether timestamps in file order go back, and only where the clock, not the file, is in doubt:
    by daylight-saving changes (about one hour, at zone-less timestamps), or anywhere in a log that
    mixes zone-less timestamps with zoned ones (the zone-less ones, read as UTC, may be local times:
    a sort by time would interleave rows hours apart and take rows of different rounds for one
    round logged twice), in a few places (at most 1% of the rows, each step at most :data:`ZONE_SPAN_US`).
    The file order is then the spin order, and the disagreement a finding."""
    if ts.size < 2 or not (kinds and kinds.get("zoneless")):
        return False
    d = np.diff(ts)
    back = d[d < 0]
    if back.size and kinds.get("offsets") and back.size <= max(1, ts.size // 100) and np.all(-back <= ZONE_SPAN_US):
        return True  # (a few steps back, each at most the span of the world's zones: a shuffled file is still sorted)
    return bool(back.size) and bool(np.all(np.abs(-back / 1e6 - 3600) <= DST_TOLERANCE_S))


def _timed(ts: np.ndarray, ids: np.ndarray | None):
    """``(ts, ids, place)`` of the spins that have a time (void rows may have none: :data:`NO_TIME`);
    ``place(j)``: the 1-based place in the table of the ``j``-th of them."""
    if not ts.size or ts.min() != NO_TIME:
        return ts, ids, lambda j: j + 1
    pos = np.flatnonzero(ts != NO_TIME)
    return ts[pos], (None if ids is None else ids[pos]), lambda j: int(pos[j]) + 1


def time_order_finding(ts: np.ndarray, ids: np.ndarray | None, kinds: dict | None, prefix: str = "") -> dict | None:
    """The disagreement between spin-id order (or, without ids, file order) and time order of one
    table, or None when the timestamps never go back in that order.

    Parameters
    ----------
    ts : (n,) int64
        Timestamps (microseconds, UTC) of the table's spins, in spin-id order.
    ids : (n,) int64 or None
        Their spin ids (same order); None when the log has none and the order is the file's.
    kinds : dict or None
        :func:`timestamp_kinds` of the log (zone-less, date-only, offsets).
    prefix : str
        The letters before the number of text spin ids (``R`` of ``R1200``), in the texts that name spins.

    Returns
    -------
    dict or None
        ``name`` ``"time_order"``, ``text`` (counts and where), ``evidence``, and ``inconclusive``:
        a reason when the disagreement is not explained, "" when it is. Explained: every backward
        step is a daylight-saving change (about one hour, at zone-less timestamps) or a clock
        adjustment of at most :data:`CLOCK_ADJUST_S` s. The tests use the spin-id order either way;
        an unexplained disagreement leaves open whether the ids or the clock are wrong, so the
        order-dependent tests cannot be trusted (DESIGN §4: timestamps out of order).
    """
    ts, ids, at = _timed(ts, ids)
    if ts.size < 2:
        return None
    d = np.diff(ts)
    steps = np.flatnonzero(d < 0)
    if steps.size == 0:
        return None
    runmax = np.maximum.accumulate(ts)
    behind = int(np.count_nonzero(ts[1:] < runmax[:-1]))  # spins a sort by time would move back
    size_s = -d[steps] / 1e6
    zoneless = bool(kinds and kinds.get("zoneless"))
    dst = zoneless & (np.abs(size_s - 3600) <= DST_TOLERANCE_S)
    adjust = size_s <= CLOCK_ADJUST_S
    import datetime as _dt

    def when(us):
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=int(us))).isoformat(sep=" ")

    what = "spin-id order" if ids is not None else "file order (the log has no spin ids)"
    name = (lambda j: f"spin_id {prefix}{int(ids[j])}") if ids is not None else (lambda j: f"spin {at(j)} of the table")  # noqa: E731
    places = [f"after {name(j)} ({when(ts[j])}) comes {name(j + 1)} ({when(ts[j + 1])}), "
              f"{(ts[j] - ts[j + 1]) / 1e6:,.0f} s earlier" for j in steps[:5].tolist()]
    if bool(np.all(dst)):
        cause = "a clock change: the local time repeats an hour when daylight-saving time ends (the timestamps have no zone)"
    elif bool(np.all(dst | adjust)):
        cause = "clock changes and adjustments (daylight-saving time and corrections of at most a minute)" if dst.any() else \
            "clock adjustments of at most a minute (e.g. a time server's correction)"
    elif kinds and len(kinds.get("offsets", ())) + bool(kinds.get("zoneless")) > 1:
        cause = "timestamps in mixed time zones"
    elif kinds and kinds.get("dateonly"):
        cause = "date-only timestamps"
    else:
        cause = None
    order = what.split(" (")[0]
    text = (f"Time order disagrees with {what}: the timestamps go back {steps.size:,} time(s) in {order} "
            f"({behind:,} spin(s) would move if sorted by time); {'; '.join(places)}{' …' if steps.size > 5 else ''}. "
            f"Cause: {cause or 'not explained by a clock change'}. The spins are tested in {order}.")
    reason = "" if cause and cause != "date-only timestamps" else (
        f"data integrity: the timestamps go back {steps.size:,} time(s) against the {order} ({behind:,} spins), "
        "not explained by a clock change: whether the spin ids or the clock are wrong cannot be told, so the order the wheel produced is not known")
    summary = (f"the timestamps go back {steps.size:,} time(s) against the {order} ({behind:,} spins); "
               f"{cause or 'not explained by a clock change'}; the spins are tested in {order}")
    return {"name": "time_order", "text": text, "summary": summary, "inconclusive": reason,
            "evidence": {"backward_steps": int(steps.size), "spins_out_of_time_order": behind, "cause": cause or "not explained",
                         "steps_seconds": [round(float(x), 3) for x in size_s[:20]],
                         "order": order,
                         "first_places": [({"after_spin_id": int(ids[j]), "spin_id": int(ids[j + 1])} if ids is not None else
                                           {"after_spin": at(j), "spin": at(j + 1)}) for j in steps[:20].tolist()]}}
