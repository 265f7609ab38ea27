"""Wheel-controller captures: the controller's own protocol read into one spin per game.

A capture is what a wheel controller sent over its serial line, as a program recorded it: the
messages alone (``*X;5;011;27;0;136;1``), or each behind a prefix with a timestamp and a channel
(``[2025-09-10 06:19:38.174] Receive >>> *X;2;001;  ;0;174;0``), with the host's own lines
(``Send <<<``, ``INFO >>>``) in between. The protocol (:mod:`rngcert.equipment.protocol`, a TOML
file) says which messages exist and how a game runs through its states.

How games are read (every line is classified at once with pyarrow's regular expressions; games
are found with numpy on the state messages — linear in the capture):

* a game begins at a state message that is not a closed state when the previous state message
  was closed (or there was none), the state went back (``5 → 2``: the next game), or the game
  number changed; a state that repeats (the result state about eleven times) stays in its game;
* its result is the winning number of its first result-state message; a repeat with another
  number makes the game **void** ("two winning numbers in one game", both named with their lines:
  neither is counted, as a conflict between two exports of a spin is never resolved by choosing one);
  a repeat without a number is rejected (line and reason) and the number stands;
* rotor speed (× the protocol's scale, in its unit) is read from the first message in the launch
  state, direction from the first message from the launch state on (the rotor reverses before the
  launch);
* a game is **void**, with the reason, when a warning flag is raised before its result, the power
  is switched off before its result, its result state gives two winning numbers or none, or it ends
  without a result (table closed, the next game began, or the capture ends);
* a game is **decided** (``complete``) when it has ended: the next game began, the table closed, or
  (a whole capture) the capture ends; only then is it known that no second winning number follows;
* a line from the controller that matches no message is **rejected** with its line and reason; so is
  a message in the result state with another game number than the game running (not after a closed
  state): a game begins before its result, and such a line (a garbled game number) would count the
  running game's result again as a new game.

Spin ids are the capture's game sequence (1, 2, … in the order games began): the controller's game
number repeats (``001`` across days in a self-test) and wraps, so it is kept beside the id (column
``game``), not used as one. But the ids follow the game numbers' jumps: a game whose number is ahead of
the next one expected (``002`` then ``158``) has the missing games' numbers left out of the ids
(game ``002`` spin 21, game ``158`` spin 177 in the self-test capture), so that a certification of the log states the games that
may be missing as a gap in its spin ids. The next number expected after game ``g`` is ``g + 1`` (after
the largest, ``0`` or ``1``: the protocol does not say where the count restarts), or ``g`` again when
game ``g`` ended without reaching its result state (the controller gives an aborted game's number to the
next: the self-test capture's ``001``). A number behind it (a reset of the count, or a wrap with games
missing: how many cannot be told), or the same after a game with a result, is a step back, said in the
notes (:attr:`Games.back`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rngcert.collect import _arrow
from rngcert.equipment.protocol import PROTOCOLS, Protocol, load_protocol, packaged_protocols
from rngcert.errors import EquipmentError, InputError


class LineReject(NamedTuple):
    """A line of a capture that could not be used: its number, the part that was wrong, why, and its text."""

    line: int
    column: str
    reason: str
    text: str


@dataclass
class Games:
    """The games decoded from a capture, in the order they began (one entry per game).

    Attributes
    ----------
    spin_id, game : (n,) int64
        The capture's game sequence (the spin id) and the controller's game number.
    result : (n,) object
        Winning number as sent, stripped ("" when the game has none).
    void : (n,) bool
        The game is void; ``reason`` says why ("" otherwise).
    line : (n,) int64
        The line of the result, or of the message that made the game void or ended it.
    timestamp : (n,) object or None
        ISO 8601 text of that line's prefix, None when the capture has no timestamps.
    direction : (n,) object
        ``cw`` / ``ccw`` (``""`` unknown).
    rotor_speed : (n,) float64
        Rotor speed at the ball's launch in the protocol's unit; NaN when not seen.
    complete : (n,) bool
        A later message ended the game (the next game began, the table closed), or the capture was
        read whole (``final``): a live reader writes only these.
    first_state : (n,) int64
        The state in which the game was first seen.
    """

    spin_id: np.ndarray
    game: np.ndarray
    result: np.ndarray
    void: np.ndarray
    reason: np.ndarray
    line: np.ndarray
    timestamp: np.ndarray | None
    direction: np.ndarray
    rotor_speed: np.ndarray
    complete: np.ndarray
    first_state: np.ndarray
    start_row: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: index (into the decoded lines) of the message that began each game, and of the state message after it (-1: none yet)
    end_row: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the controller's game number of the game before each (-1: none), the games missing between them by their numbers (a
    #: jump forward: the missing games' numbers are left out of the spin ids), and a step back of the number (a reset of
    #: the count, or a wrap with games missing: how many cannot be told) or its repeat after a game with a result
    after: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    missing: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    back: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    #: the message that ended the game is not the last one so far (the message after it shows it was no stray), or a whole
    #: capture: a live reader keeps the lines of a game not settled
    settled: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    #: the game reached its result state (the next game's number follows it, not repeats it)
    reached: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    #: number of games
    n = property(lambda self: int(self.spin_id.size))


@dataclass
class Decoded:
    """A decoded capture: its games, rejected lines, and what was read."""

    games: Games
    rejected: list[LineReject]
    blank: int
    counts: dict
    notes: list[str]


# ---------------------------------------------------------------------------- lines
def split_lines(data: bytes, encoding: str = "ascii") -> tuple[pa.Array, np.ndarray, bool]:
    """The lines of a capture as a pyarrow string array (trailing spaces removed), their
    1-based line numbers, and whether the data end in a line end.

    LF, CR LF and a lone CR (a terminal program's default) each end a line."""
    if encoding.lower().replace("-", "") not in ("ascii", "utf8", "usascii"):
        data = data.decode(encoding, errors="replace").encode("utf-8")
    elif not data.isascii():
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark (a Windows tool's): not part of the first line
        data = data[3:]
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    ends_nl = bool(data.endswith(b"\n"))
    offs = np.concatenate([[0], nl + 1] + ([] if ends_nl or not data else [[len(data)]]))
    lines = _arrow.strings(offs, data) if offs.size > 1 else _strs([])
    lines = pc.utf8_rtrim_whitespace(lines)
    return lines, np.arange(1, len(lines) + 1, dtype=np.int64), ends_nl


def _match(arr: pa.Array, pattern: str, where: str) -> np.ndarray:
    try:
        return _arrow.bools(pc.match_substring_regex(arr, pattern), fill=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise EquipmentError(f"{where}: pattern {pattern!r} cannot be used: {exc}") from None


def _extract(arr: pa.Array, pattern: str, where: str) -> pa.StructArray:
    try:
        out = pc.extract_regex(arr, pattern)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise EquipmentError(f"{where}: pattern {pattern!r} cannot be used: {exc}") from None
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _ints(arr: pa.Array) -> np.ndarray:
    return _arrow.ints(pc.cast(arr, pa.int64()), fill=-1)


def _py(arr) -> np.ndarray:
    return np.asarray(arr.to_pylist(), dtype=object)


def _labels(arr) -> np.ndarray:
    """A string column with few distinct values as an object array (the distinct values are
    converted once, not every row)."""
    enc = pc.dictionary_encode(arr)
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    uniq = np.asarray(enc.dictionary.to_pylist() + [""], dtype=object)
    return uniq[_arrow.ints(enc.indices, fill=len(uniq) - 1)]


def _idx(rows: np.ndarray) -> pa.Array:
    """Row indices for ``take`` (an int64 array made from the numpy buffer)."""
    v = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), v.size, [None, pa.py_buffer(v)])


def _strs(items) -> pa.Array:
    """A list of str as a pyarrow string array (built from its bytes)."""
    enc = [str(x).encode("utf-8") for x in items]
    offs = np.cumsum([0] + [len(e) for e in enc], dtype=np.int64)
    return _arrow.strings(offs, b"".join(enc))


def _first_per(groups: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """For each group 0..n-1, the first of ``rows`` (sorted) whose group it is; -1 if none."""
    out = np.full(n, -1, dtype=np.int64)
    if rows.size:
        g, i = np.unique(groups[rows], return_index=True)
        out[g] = rows[i]
    return out


# ---------------------------------------------------------------------------- decoding
class _Rejects:
    """The rejected lines of a capture, collected stage by stage (called with rows, the column, the reason or reasons)."""

    def __init__(self, lines: pa.Array, line_no: np.ndarray):
        self.lines, self.line_no, self.rows = lines, line_no, []

    def __call__(self, rows: np.ndarray, column: str, reasons) -> None:
        if rows.size == 0:
            return
        texts = self.lines.take(_idx(rows)).to_pylist()
        if isinstance(reasons, str):
            reasons = [reasons] * rows.size
        self.rows.extend(LineReject(int(self.line_no[r]), column, str(w), (t or "")[:200]) for r, w, t in zip(rows.tolist(), reasons, texts))


def _split_prefix(lines: pa.Array, proto: Protocol) -> tuple:
    """(message behind the prefix, line of a receive channel, line has the prefix, timestamp text or None) of each line."""
    n = len(lines)
    where = proto.where
    body = lines
    channel_ok = np.ones(n, dtype=bool)
    has_prefix = np.zeros(n, dtype=bool)
    ts_text = None
    if proto.prefix and n:
        # one pass: the prefix's groups and the message behind it
        ext = _extract(lines, proto.prefix + "(?P<rngcert_body>.*)$", f"{where}: prefix.pattern")
        has_prefix = _arrow.valid(ext)
        names = [ext.type.field(i).name for i in range(ext.type.num_fields)]
        body = pc.if_else(_arrow.mask(has_prefix), ext.field("rngcert_body"), lines)
        if "channel" in names:
            channel_ok = ~has_prefix | _arrow.bools(pc.is_in(ext.field("channel"), value_set=_strs(list(proto.receive))), fill=False)
        if "timestamp" in names:
            ts_text = ext.field("timestamp")
    return body, channel_ok, has_prefix, ts_text


def _classify(body: pa.Array, consider: np.ndarray, proto: Protocol) -> tuple:
    """(message of each line, -1 for none; the considered lines no message matched; the state message's fields of the lines it
    matched, in line order)."""
    where = proto.where
    kind = np.full(len(body), -1, dtype=np.int16)
    si = [m.kind for m in proto.messages].index("state")
    ext = None
    rest = np.flatnonzero(consider)
    for i, m in enumerate(proto.messages):  # each message is tried on the lines no earlier one matched
        if not rest.size:
            break
        sub = body.take(_idx(rest))
        if i == si:  # the state message: its fields in the same pass
            e = _extract(sub, m.pattern, f"{where}: message {i + 1}")
            hit = _arrow.valid(e)
            ext = e.filter(_arrow.mask(hit))
        else:
            hit = _match(sub, m.pattern, f"{where}: message {i + 1}")
        kind[rest[hit]] = i
        rest = rest[~hit]
    return kind, rest, ext


def _state_fields(kind: np.ndarray, ext, proto: Protocol, line_no: np.ndarray, reject: _Rejects) -> tuple:
    """The state messages with a known state and direction (the others rejected): their rows and their state S, direction D,
    game G, result R, warning W, rotor speed V and line L."""
    si = [m.kind for m in proto.messages].index("state")
    sm = proto.messages[si]
    rows = np.flatnonzero(kind == si)
    S = _ints(ext.field("state")) if rows.size else np.zeros(0, np.int64)
    ok = np.isin(S, list(proto.states))
    reject(rows[~ok], "state", [f"state {s} is not a state of protocol {proto.name} ({', '.join(map(str, proto.states))})" for s in S[~ok]])
    D = _labels(ext.field("direction")) if rows.size and "direction" in sm.groups else np.full(rows.size, "", dtype=object)
    if proto.direction_map and rows.size:
        dok = np.isin(D, list(proto.direction_map))
        bad = ok & ~dok
        reject(rows[bad], "direction", [f"direction {d!r} is not one of {', '.join(proto.direction_map)}" for d in D[bad]])
        ok &= dok
    if rows.size:
        ok &= _not_stray_between(S, _ints(ext.field("game")), line_no[rows], rows, ok, proto, reject)
        ok &= _not_stray_results(S, _ints(ext.field("game")), line_no[rows], rows, ok, proto, reject)
    sel = np.flatnonzero(ok)
    rows, S, D = rows[sel], S[sel], D[sel]
    if ext is not None and sel.size != len(ext):
        ext = ext.filter(_arrow.mask(ok))
    G = _ints(ext.field("game")) if rows.size else np.zeros(0, np.int64)
    R = _labels(pc.utf8_trim_whitespace(ext.field("result"))) if rows.size else np.zeros(0, dtype=object)
    W = _ints(ext.field("warning")) if rows.size and "warning" in sm.groups else np.zeros(rows.size, np.int64)
    V = (_ints(ext.field("rotor_speed")).astype(np.float64) * proto.rotor_scale) if rows.size and "rotor_speed" in sm.groups else np.full(rows.size, np.nan)
    return rows, S, D, G, R, W, V, line_no[rows]


def _not_stray_results(S: np.ndarray, G: np.ndarray, L: np.ndarray, rows: np.ndarray, ok: np.ndarray, proto: Protocol,
                       reject: _Rejects) -> np.ndarray:
    """False for the state messages that would begin a game at its result: in the result state, with another game number
    than the game running (its last message not a closed state). A game begins before its result (state 1 or 2 in every
    capture); such a message (a garbled game number, a stray line) would count the running game's result again as a new
    game. Only the result-state messages at the head of a run of one game number are rejected: a real next game that
    follows them begins at its own first state. Messages already rejected (``~ok``) are left out first."""
    keep = np.ones(S.size, dtype=bool)
    idx = np.flatnonzero(ok)
    if idx.size < 2:
        return keep
    s, g = S[idx], G[idx]
    new_run = np.r_[True, g[1:] != g[:-1]]
    run = np.cumsum(new_run) - 1
    start = np.flatnonzero(new_run)
    at_result = s == proto.result_state
    prev_in_game = np.r_[False, ~np.isin(s[:-1], list(proto.closed_states))][start]
    candidate = at_result[start] & prev_in_game  # (the first run has no message before it)
    has_tail = np.bitwise_or.reduceat(~at_result, start)  # the run has a message after its result-state head
    anchor = ~candidate | has_tail  # runs whose last message is kept whatever is decided here
    q = np.maximum.accumulate(np.where(anchor, np.arange(start.size), -1))
    q = np.r_[-1, q[:-1]]  # the nearest anchor run before each run: the game running then
    flagged = candidate & (q >= 0) & (g[start] != g[start[np.maximum(q, 0)]])
    other = np.cumsum(~at_result)
    head = (other - (other[start] - ~at_result[start])[run]) == 0  # the run's leading result-state messages
    bad = np.flatnonzero(flagged[run] & head)
    if bad.size:
        last = np.r_[start[1:], s.size][q[run[bad]]] - 1  # the last message of the game running
        reject(rows[idx[bad]], "game", [f"game {int(g[b]):0{proto.game_digits}d} in the result state while game {int(g[p]):0{proto.game_digits}d} "
                                        f"was running (line {int(L[idx[p]])}, state {int(s[p])}): a game cannot begin at its result; line "
                                        "rejected (a garbled game number or a stray message)" for b, p in zip(bad, last)])
        keep[idx[bad]] = False
    return keep


def _not_stray_between(S: np.ndarray, G: np.ndarray, L: np.ndarray, rows: np.ndarray, ok: np.ndarray, proto: Protocol,
                       reject: _Rejects) -> np.ndarray:
    """False for a lone state message between two messages of the game running, up to its result state, that would end it:
    with another game number, a state lower than the message before, or a closed state (not the result state: a game
    beginning at its result is :func:`_not_stray_results`'s), while the message after it has the game number before it and
    a state not lower; or the game's own result state between two messages before its result (a garbled state: its
    number was counted beside the real one). Before the result such a line cut the game in two, each part a void spin beside the stray's own
    (two phantom void spins for one game); in the result state it made a phantom void game and its repeats rejected, or
    (closed) a second game with the same result. It is rejected with the lines around it. Two such messages in a row (a
    stray line repeated 0.5 s later: :func:`_stray_pairs`) are rejected the same way, both judged against the messages
    around the pair (the same message twice; two different ones are not). Decided by the message after them: a stream's
    game without its result waits for it (up to two messages) before it is written void (:func:`_settled`); one with its
    result is written at once."""
    keep = np.ones(S.size, dtype=bool)
    idx = np.flatnonzero(ok)
    if idx.size < 3:
        return keep
    s, g = S[idx], G[idx]
    closed = np.isin(s, list(proto.closed_states))
    a, m, b = s[:-2], s[1:-1], s[2:]  # the message before, the one in question, the one after
    around = (g[:-2] == g[2:]) & ~closed[:-2] & ~closed[2:] & (a <= proto.result_state) & (b >= a)
    rs = proto.result_state
    ends = ((g[1:-1] != g[:-2]) | (m < a) | closed[1:-1]) & (m != rs)
    ends |= (m == rs) & (g[1:-1] == g[:-2]) & (b < rs)  # the result state between two messages before it: its number is no result
    flag = np.r_[False, around & ends, False]
    flag[1:] &= ~flag[:-1]  # a stray is one message: the one after it is judged against the message before the stray
    pair = _stray_pairs(s, g, closed, proto) & ~flag[:-3] & ~flag[1:-2] & ~flag[2:-1] if s.size >= 4 else np.zeros(0, bool)
    pair[1:] &= ~pair[:-1]
    pair[2:] &= ~pair[:-2]
    two = np.flatnonzero(pair)  # messages two + 1 and two + 2: strays between two and two + 3
    flag[two + 3] = False  # (the message after a pair is the game's own: judged against the second stray, it looked like one)
    one = np.flatnonzero(flag)
    bad, a, b = np.r_[one, two + 1, two + 2], np.r_[one - 1, two, two], np.r_[one + 1, two + 3, two + 3]
    if bad.size:
        d = proto.game_digits
        what = ["a stray or garbled message"] * one.size + ["one of two stray or garbled messages in a row"] * (2 * two.size)
        reject(rows[idx[bad]], "state", [f"game {int(g[i]):0{d}d} in state {int(s[i])} between two messages of game {int(g[j]):0{d}d} "
                                         f"(lines {int(L[idx[j]])} and {int(L[idx[k]])}, state {int(s[j])} then {int(s[k])}) up to its result: "
                                         f"{w}; line rejected, the game goes on" for i, j, k, w in zip(bad.tolist(), a.tolist(), b.tolist(), what)])
        keep[idx[bad]] = False
    return keep


def _stray_pairs(s: np.ndarray, g: np.ndarray, closed: np.ndarray, proto: Protocol) -> np.ndarray:
    """For each message ``i`` (but the last three): messages ``i + 1`` and ``i + 2`` are one stray message repeated (the
    same game number and state, 0.5 s later) between ``i`` and ``i + 3`` of the game running up to its result
    (:func:`_not_stray_between`'s rule, each judged against the message before the pair). Two different messages are not
    taken for strays: a game that closed (or went back) and the next that began with its number would be taken for one."""
    rs = proto.result_state
    a, b, ga = s[:-3], s[3:], g[:-3]
    around = (ga == g[3:]) & ~closed[:-3] & ~closed[3:] & (a <= rs) & (b >= a)

    def ends(k: int) -> np.ndarray:
        m, gm = s[k:s.size - 3 + k], g[k:g.size - 3 + k]
        return (((gm != ga) | (m < a) | closed[k:closed.size - 3 + k]) & (m != rs)) | ((m == rs) & (gm == ga) & (b < rs))

    same = (g[1:-2] == g[2:-1]) & (s[1:-2] == s[2:-1])  # one stray repeated: a game closed, then the next with its number, is no pair
    return around & same & ends(1) & ends(2)


def _segment(S: np.ndarray, G: np.ndarray, proto: Protocol) -> SimpleNamespace:
    """The games among the state messages: each message's game (``seg``, -1 when the table is closed), each game's first and
    last message, the message that ends it, and its first message in the result, launch and later states (-1: none)."""
    closed = np.isin(S, list(proto.closed_states))
    in_game = ~closed
    prev_s = np.r_[-1, S[:-1]]
    prev_g = np.r_[-1, G[:-1]]
    prev_closed = np.r_[True, closed[:-1]]
    boundary = in_game & (prev_closed | (S < prev_s) | (G != prev_g))
    seg = np.cumsum(boundary) - 1
    seg[~in_game] = -1
    ng = int(boundary.sum())
    start = np.flatnonzero(boundary)
    game_rows = np.flatnonzero(in_game)
    last = game_rows[np.searchsorted(seg[game_rows], np.arange(ng), side="right") - 1] if ng else np.zeros(0, np.int64)
    end = last + 1  # the state message after the game (closed or the next game), == S.size if none
    res = _first_per(seg, np.flatnonzero(in_game & (S == proto.result_state)), ng)
    return SimpleNamespace(
        closed=closed, in_game=in_game, seg=seg, ng=ng, start=start, last=last, end=end, has_end=end < S.size, res=res, has_res=res >= 0,
        launch=_first_per(seg, np.flatnonzero(in_game & (S == proto.launch_state)), ng),
        after_launch=_first_per(seg, np.flatnonzero(in_game & (S >= proto.launch_state)), ng),
    )


def _game_values(g: SimpleNamespace, S, D, R, V, L, rows, proto: Protocol, reject: _Rejects) -> tuple:
    """(winning number, rotor speed at launch, direction, the first repeat of its result state with another winning
    number, or with one when the first had none, or -1) of each game; a repeat without a number is rejected (the number stands)."""
    ng, seg, res = g.ng, g.seg, g.res
    result = np.where(g.has_res, R[np.maximum(res, 0)], "") if ng else np.zeros(0, dtype=object)
    result = np.asarray(result, dtype=object)
    rr = np.flatnonzero(g.in_game & (S == proto.result_state))
    second = np.full(ng, -1, dtype=np.int64)
    if rr.size:
        differ = R[rr] != result[seg[rr]]
        blank = differ & (R[rr] == "")
        reject(rows[rr[blank]], "result", [f"the result state repeats without a winning number (the game's is {result[seg[r]]!r}, line {L[res[seg[r]]]})"
                                           for r in rr[blank]])
        # another winning number (or a number after a first message without one): the game's result is in doubt, decided by neither
        second = _first_per(seg, rr[differ & ~blank], ng)
    rotor = np.where(g.launch >= 0, V[np.maximum(g.launch, 0)], np.nan) if ng else np.zeros(0)
    direction = np.where(g.after_launch >= 0, D[np.maximum(g.after_launch, 0)], "") if ng else np.zeros(0, dtype=object)
    if proto.direction_map:
        direction = np.asarray([proto.direction_map.get(d, "") for d in direction], dtype=object)
    return result, rotor, direction, second


def _void_two_numbers(voids: "_Voids", g: SimpleNamespace, second: np.ndarray, result, R, L, rows) -> None:
    """Games whose result state gave two winning numbers: void, both named with their lines (neither is counted)."""
    m = (second >= 0) & (result != "")
    if not m.any():
        return
    why = np.full(g.ng, "", dtype=object)
    for i in np.flatnonzero(m).tolist():
        why[i] = (f"two winning numbers in one game (line {L[g.res[i]]}: {result[i]!r}, then line {L[second[i]]}: {R[second[i]]!r}); "
                  "neither is counted")
    voids.where(m, why, np.where(m, L[np.maximum(second, 0)], 0), np.where(m, rows[np.maximum(second, 0)], 0))


def _void_no_number(voids: "_Voids", g: SimpleNamespace, second: np.ndarray, result, R, L, rows) -> None:
    """Games whose result state has no winning number (in its first message): void; a number a repeat gives later is named
    with its line (not counted)."""
    m = g.has_res & (result == "")
    why = np.full(g.ng, "the result state has no winning number", dtype=object)
    for i in np.flatnonzero(m & (second >= 0)).tolist():
        why[i] = f"the result state has no winning number (line {L[g.res[i]]}), then line {L[second[i]]} gives {R[second[i]]!r}; not counted"
    voids.where(m, why, np.where(g.has_res, L[np.maximum(g.res, 0)], 0), np.where(g.has_res, rows[np.maximum(g.res, 0)], 0))


class _Voids:
    """Each game's void reason ("" none) and the line (and row) that decided it; the first reason given stands."""

    def __init__(self, g: SimpleNamespace, L: np.ndarray, rows: np.ndarray):
        self.reason = np.full(g.ng, "", dtype=object)
        self.decided = np.where(g.has_res, L[np.maximum(g.res, 0)], 0).astype(np.int64)
        self.decided_row = np.where(g.has_res, rows[np.maximum(g.res, 0)], -1).astype(np.int64)

    def where(self, mask, why, line, row) -> None:
        new = mask & (self.reason == "")
        self.reason[new] = why[new] if isinstance(why, np.ndarray) else why
        self.decided[new] = line[new]
        self.decided_row[new] = row[new]


def _void_power_off(voids: _Voids, g: SimpleNamespace, kind, body, rows, S, line_no, proto: Protocol) -> None:
    """Games during which the controller reported a power-off before the result: void."""
    ng, seg, has_res, res = g.ng, g.seg, g.has_res, g.res
    pk = next((i for i, m in enumerate(proto.messages) if m.kind == "power"), None)
    if pk is not None and ng and proto.power_off:
        prow = np.flatnonzero(kind == pk)
        if prow.size:
            pval = _py(_extract(body.take(_idx(prow)), proto.messages[pk].pattern, proto.where).field("power"))
            prow = prow[np.isin(pval, list(proto.power_off))]
            j = np.searchsorted(rows, prow) - 1  # the state message before each power-off
            okp = (j >= 0) & (seg[np.maximum(j, 0)] >= 0)
            prow, j = prow[okp], j[okp]
            k = seg[j]
            before = ~has_res[k] | (res[k] > j)
            prow, j, k = prow[before], j[before], k[before]
            first = _first_per(k, np.arange(k.size), ng)
            m = first >= 0
            fl = np.zeros(ng, np.int64)
            fr = np.zeros(ng, np.int64)
            why = np.full(ng, "", dtype=object)
            fl[m], fr[m] = line_no[prow[first[m]]], prow[first[m]]
            txt = body.take(_idx(fr[m])).to_pylist() if m.any() else []
            why[m] = [f"power off ({t.strip()}, line {ln}) in state {s} ({proto.states.get(s, '?')}) before the result"
                      for t, ln, s in zip(txt, fl[m], S[j[first[m]]])]
            voids.where(m, why, fl, fr)


def _void_warnings(voids: _Voids, g: SimpleNamespace, S, W, L, rows, proto: Protocol) -> None:
    """Games with warning flags raised (in a state that voids) before the result: void."""
    ng, seg, has_res, res = g.ng, g.seg, g.has_res, g.res
    sm = proto.messages[[m.kind for m in proto.messages].index("state")]
    if "warning" in sm.groups and ng:
        wr = np.flatnonzero(g.in_game & (W != 0) & np.isin(S, list(proto.warning_void_states)))
        if wr.size:
            wr = wr[~has_res[seg[wr]] | (wr <= res[seg[wr]])]
        first = _first_per(seg, wr, ng)
        m = first >= 0
        if m.any():
            bits = np.zeros(ng, np.int64)
            np.bitwise_or.at(bits, seg[wr], W[wr])
            why = np.full(ng, "", dtype=object)
            why[m] = [f"warning flags {b} ({_bit_names(b, proto)}) in state {S[f]} ({proto.states.get(S[f], '?')}, line {L[f]})" for b, f in zip(bits[m], first[m])]
            voids.where(m, why, np.where(m, L[np.maximum(first, 0)], 0), np.where(m, rows[np.maximum(first, 0)], 0))


def _void_no_result(voids: _Voids, g: SimpleNamespace, S, L, rows, proto: Protocol, final: bool) -> tuple[np.ndarray, np.ndarray]:
    """Games without a result that ended (table closed, next game) or, in a whole capture, that the capture ends: void.
    Returns (the state message after each game, clipped; the game is complete)."""
    ng, last, has_end, closed = g.ng, g.last, g.has_end, g.closed
    no_res = ~g.has_res
    e = np.minimum(g.end, max(S.size - 1, 0))
    why = np.full(ng, "", dtype=object)
    for i in np.flatnonzero(no_res).tolist():
        ls = int(S[last[i]])
        state = f"state {ls} ({proto.states.get(ls, '?')})"
        if has_end[i] and closed[e[i]]:
            why[i] = f"no result: table closed (state {S[e[i]]}, line {L[e[i]]}) in {state}"
        elif has_end[i]:
            why[i] = f"no result: the next game began (line {L[e[i]]}) in {state}"
        else:
            why[i] = f"no result: the capture ends in {state} (line {L[last[i]]})"
    end_line = np.where(has_end, L[e] if ng else 0, L[last] if ng else 0)
    end_row = np.where(has_end, rows[e] if ng else 0, rows[last] if ng else 0)
    # decided once it has ended: until then a repeat of its result state may still give another number
    complete = has_end
    voids.where(no_res & (complete | final), why, end_line, end_row)
    return e, complete


def _settled(g: SimpleNamespace, S: np.ndarray, final: bool) -> np.ndarray:
    """False for the games of a stream that one of the last two state messages so far ended: it may be a stray (or the first of two)
    (:func:`_not_stray_between`, decided by the message after it). Such a game without its result is not decided yet (a
    game with its result is: watch counts it at once); a live reader keeps the lines of both until the next message."""
    if final or not g.ng:
        return np.ones(g.ng, dtype=bool)
    return ~(g.has_end & (g.end >= S.size - 2))  # (two strays in a row: decided by the message after the second)


def _timestamps(ts_text, has_prefix: np.ndarray, decided_row: np.ndarray, proto: Protocol, ng: int):
    """ISO 8601 text of the prefix of each game's deciding line ("" none), or None when the capture has no timestamps."""
    ts = None
    if ts_text is not None and ng:
        tsv = _py(ts_text.take(_idx(np.maximum(decided_row, 0))))
        tsv = np.where(has_prefix[np.maximum(decided_row, 0)], tsv, None)
        if any(t for t in tsv):
            z = "Z" if proto.timezone == "UTC" else proto.timezone  # the capture's clock has no zone: the protocol file says which
            ts = np.asarray([(t.replace(" ", "T", 1) + z) if t else "" for t in tsv], dtype=object)
    return ts


def _check_result_lines(kind, body, g: SimpleNamespace, rows, S, R, G, L, proto: Protocol, reject: _Rejects, final: bool) -> None:
    """The winning number alone on a line, checked against the result state of the game running when it came (its first
    result-state message after the line, else its first): rejected, the reason naming both lines, when the two disagree, when
    that game reaches no result state (the next game began, the table closed, or a whole capture ends), or when no game is
    running (the table closed). On a live stream a line whose game has neither reached its result state nor ended is checked
    later."""
    ek = next((i for i, m in enumerate(proto.messages) if m.kind == "result"), None)
    erow = np.flatnonzero(kind == ek) if ek is not None else np.zeros(0, np.int64)
    if not erow.size:
        return
    ev = np.asarray([t.strip() for t in _extract(body.take(_idx(erow)), proto.messages[ek].pattern, proto.where).field("result").to_pylist()], dtype=object)
    nxt = np.searchsorted(rows, erow)  # the state message after each line (rows.size: none yet)
    seg = np.r_[g.seg, -1].astype(np.int64)  # (-1 after the last state message: no game)
    game = np.where(nxt > 0, seg[np.maximum(nxt - 1, 0)], -1)  # the game running when it came (-1: none, the table closed)
    rr = np.flatnonzero(g.in_game & (S == proto.result_state))
    res = np.r_[rr, -1][np.searchsorted(rr, nxt)]  # the first result-state message after it (-1: none)
    res = np.where((res >= 0) & (seg[np.maximum(res, 0)] == game), res, np.r_[g.res, -1][game])  # else its game's first, if any
    found = (game >= 0) & (res >= 0)
    ended = (game >= 0) & np.r_[g.has_end, False][game]
    why = {b: _disagree_text(ev[b], reject.line_no[erow[b]], R[res[b]], G[res[b]], L[res[b]], proto)
           for b in np.flatnonzero(found & (R[np.maximum(res, 0)] != ev)).tolist()}
    for b in np.flatnonzero(~found & (ended | final | (game < 0))).tolist():
        k = int(game[b])
        e = int(g.end[k]) if k >= 0 else -1
        end = ("the table is closed" if k < 0 else "the capture ends" if not g.has_end[k] else
               f"the table closed, line {L[e]}" if g.closed[e] else f"the next game began, line {L[e]}")
        what = f"game {int(G[g.start[k]]):0{proto.game_digits}d} reaches no result state" if k >= 0 else "no game is running"
        why[b] = f"winning number {ev[b]!r} alone (line {reject.line_no[erow[b]]}), but {what} ({end}); this line is not counted"
    bad = np.asarray(sorted(why), dtype=np.int64)
    reject(erow[bad], "result", [why[b] for b in bad.tolist()])


def _disagree_text(alone: str, line: int, result: str, game: int, res_line: int, proto: Protocol) -> str:
    """The reason of a winning number alone on a line that disagrees with its game's result state."""
    said = repr(result) if result else "no winning number"
    return (f"winning number {alone!r} alone (line {line}) and the result state of game {int(game):0{proto.game_digits}d} (line {res_line}: "
            f"{said}) disagree: the game's result is the result state's; this line is not counted")


def _number_steps(number: np.ndarray, has_res: np.ndarray, prev: tuple | None, proto: Protocol) -> tuple:
    """(the game number before each game, -1 none; games missing between them by their numbers; a step back) of the games
    (see the module's notes). ``prev``: (game number, reached its result state) of the game before the first, or None."""
    before = np.r_[prev[0] if prev else -1, number[:-1]].astype(np.int64)[: number.size]
    before_res = np.r_[bool(prev[1]) if prev else False, has_res[:-1]].astype(bool)[: number.size]
    top = 10 ** proto.game_digits - 1
    follows = (number == before + 1) | ((number == before) & ~before_res) | ((before == top) & (number <= 1))
    known = (before >= 0) & ~follows
    ahead = known & (number > before)
    return before, np.where(ahead, number - before - 1, 0).astype(np.int64), known & ~ahead


def step_text(after: int, game: int, missing: int, spin_id: int, digits: int) -> str:
    """One game-number finding in words: the games missing before game ``game`` (spin ``spin_id``), or its step back.

    Parameters
    ----------
    after, game : int
        The controller's game numbers of the game before and of this game.
    missing : int
        Games missing between them by their numbers (0: a step back, how many missing cannot be told).
    spin_id : int
        This game's spin id (the one before it is ``spin_id - missing - 1``).
    digits : int
        Digits of the game number.

    Returns
    -------
    str
        ``games 003 to 157 (155) missing between game 002 (spin 21) and game 158 (spin 177): ...``, or the step back.
    """
    a, b = f"{after:0{digits}d}", f"{game:0{digits}d}"
    if not missing:
        return (f"game {a} then game {b} (spin {spin_id}): the game number went back or repeated (a reset of the controller's count, "
                "or a wrap with games missing: how many cannot be told)")
    lo, hi = f"{after + 1:0{digits}d}", f"{game - 1:0{digits}d}"
    which = f"game {lo} (1)" if missing == 1 else f"games {lo} to {hi} ({missing:,})"
    return (f"{which} missing between game {a} (spin {spin_id - missing - 1}) and game {b} (spin {spin_id}): not in the source "
            "(not sent, not captured, or the controller's count jumped); their spin ids are left out")


def decode(lines: pa.Array, line_no: np.ndarray, proto: Protocol, name: str, *, final: bool = True, seq0: int = 1,
           prev: tuple | None = None) -> Decoded:
    """Decode the lines of a capture into games.

    Parameters
    ----------
    lines : pyarrow string array
        The capture's lines (see :func:`split_lines`).
    line_no : (n,) int64
        Their line numbers (named in rejects and reasons).
    proto : Protocol
        The controller's protocol.
    name : str
        The capture's name (file path) for rejects and notes.
    final : bool
        True for a whole capture: a game still running at its end is void ("the capture ends").
        False for a live stream: such a game is returned with ``complete`` False.
    seq0 : int
        The spin id of the first game when its game number follows ``prev`` (the missing games' ids are left out).
    prev : tuple (game number, reached its result state), optional
        The game before the first (a live stream's earlier lines, the log's last row): the first game's number is
        checked against it.

    Returns
    -------
    Decoded
    """
    n = len(lines)
    body, channel_ok, has_prefix, ts_text = _split_prefix(lines, proto)
    blank = _arrow.ints(pc.utf8_length(body)) == 0 if n else np.zeros(0, bool)
    blank &= ~has_prefix
    consider = channel_ok & ~blank
    kind, rest, ext = _classify(body, consider, proto)
    reject = _Rejects(lines, line_no)
    reject(rest, "message", f"not a message of protocol {proto.name} (truncated, garbled, or a message the protocol file does not define)")
    kinds = np.array([m.kind for m in proto.messages] + ["none"])
    k_of = kinds[np.where(kind < 0, len(proto.messages), kind)]
    rows, S, D, G, R, W, V, L = _state_fields(kind, ext, proto, line_no, reject)
    g = _segment(S, G, proto)
    ng, start = g.ng, g.start
    result, rotor, direction, second = _game_values(g, S, D, R, V, L, rows, proto, reject)
    voids = _Voids(g, L, rows)
    _void_power_off(voids, g, kind, body, rows, S, line_no, proto)  # power off before the result
    _void_warnings(voids, g, S, W, L, rows, proto)  # warning flags raised before the result
    _void_two_numbers(voids, g, second, result, R, L, rows)  # the result state gave another winning number
    _void_no_number(voids, g, second, result, R, L, rows)  # a result state without a number
    e, complete = _void_no_result(voids, g, S, L, rows, proto, final)  # no result
    settled = _settled(g, S, final)
    complete = complete & (settled | g.has_res)  # a stray message may have ended a game without its result: the next message decides
    void = voids.reason != ""
    ts = _timestamps(ts_text, has_prefix, voids.decided_row, proto, ng)
    number = G[start] if ng else np.zeros(0, np.int64)
    after, missing, back = _number_steps(number, g.has_res, prev, proto)
    games = Games(spin_id=seq0 + np.arange(ng, dtype=np.int64) + np.cumsum(missing), game=number, result=result,
                  void=void, reason=voids.reason, line=voids.decided, timestamp=ts, direction=np.asarray(direction, dtype=object),
                  rotor_speed=np.asarray(rotor, dtype=np.float64), complete=complete | final, settled=settled, first_state=S[start] if ng else np.zeros(0, np.int64),
                  start_row=rows[start] if ng else np.zeros(0, np.int64), end_row=np.where(g.has_end, rows[e], -1) if ng else np.zeros(0, np.int64),
                  after=after, missing=missing, back=back, reached=g.has_res.copy())
    _check_result_lines(kind, body, g, rows, S, R, G, L, proto, reject, final)
    rejected = reject.rows
    rejected.sort(key=lambda r: r.line)
    counts = {
        "lines": int(n), "blank": int(blank.sum()), "host_lines": int((~channel_ok & ~blank).sum()),
        "messages": int((consider & (kind >= 0)).sum()), "state_messages": int(rows.size),
        "power_messages": int((k_of == "power").sum()), "ignored_messages": int((k_of == "ignore").sum()),
        "games": ng, "with_result": int((~void & g.has_res).sum()) if ng else 0, "void": int(void.sum()), "rejected": len(rejected),
    }
    return Decoded(games, rejected, counts["blank"], counts, [])


def _bit_names(bits: int, proto: Protocol) -> str:
    names = [proto.warning_bits.get(b, f"bit {b}") for b in (1 << i for i in range(31)) if bits & b]
    return ", ".join(names) if names else f"flags {bits}"


def describe(dec: Decoded, proto: Protocol, name: str) -> list[str]:
    """Notes for the report: what the capture held, how spin ids were made, and the void games
    grouped by reason."""
    c = dec.counts
    g = dec.games
    out = [
        f"{name}: wheel-controller capture, protocol {proto.name} ({proto.where}{', sha256 ' + proto.sha256 if proto.sha256 else ''}): {c['lines']:,} lines, {c['messages']:,} messages from the "
        f"controller ({c['state_messages']:,} game-state messages), {c['host_lines']:,} host lines skipped, {c['rejected']:,} rejected; "
        f"{c['games']:,} games: {c['with_result']:,} with a result, {c['void']:,} void",
        f"{name}: spin_id is the capture's game sequence (1 = the first game that began in the capture), leaving out the ids of "
        "games missing by the controller's game number (a jump); the game number (which repeats and wraps) is kept beside it as "
        "column 'game'",
    ]
    out += [f"{name}: {t}" for t in proto.notes]
    out += _describe_steps(g, proto, name)
    if g.n and g.void.any():
        kinds: dict[str, list] = {}
        for sid, gm, why in zip(g.spin_id[g.void].tolist(), g.game[g.void].tolist(), g.reason[g.void].tolist()):
            key = re.split(r" \(| in state", why, maxsplit=1)[0].strip()
            kinds.setdefault(key, []).append((sid, gm, why))
        for key, items in kinds.items():
            ex = "; ".join(f"spin {s} (game {gm:0{proto.game_digits}d}): {w}" for s, gm, w in items[:3])
            more = f"; and {len(items) - 3} more" if len(items) > 3 else ""
            out.append(f"{name}: {len(items)} void game(s), {key}: {ex}{more}")
    return out


def _describe_steps(g: Games, proto: Protocol, name: str) -> list[str]:
    """Notes on the game numbers: the jumps (games missing, their spin ids left out) and the steps back, each named."""
    out = []
    j, b = np.flatnonzero(g.missing), np.flatnonzero(g.back)
    if j.size:
        each = "; ".join(step_text(int(g.after[i]), int(g.game[i]), int(g.missing[i]), int(g.spin_id[i]), proto.game_digits) for i in j[:5])
        out.append(f"{name}: {int(g.missing.sum()):,} game(s) missing in {j.size:,} jump(s) of the controller's game number: {each}"
                   + (f"; and {j.size - 5:,} more" if j.size > 5 else ""))
    if b.size:
        each = "; ".join(f"game {int(g.after[i]):0{proto.game_digits}d} then game {int(g.game[i]):0{proto.game_digits}d} (spin "
                         f"{int(g.spin_id[i])})" for i in b[:5])
        out.append(f"{name}: {b.size:,} step(s) back of the controller's game number (a reset of its count, or a wrap with games "
                   f"missing: how many cannot be told): {each}" + (f"; and {b.size - 5:,} more" if b.size > 5 else ""))
    return out


def to_columns(games: Games, proto: Protocol) -> dict[str, pa.Array]:
    """The games as spin-log columns (the standard names), as the CSV reader gives them."""
    cols = {
        "spin_id": _strs(games.spin_id.tolist()),
        "game": _strs(f"{x:0{proto.game_digits}d}" for x in games.game.tolist()),
        "result": _strs(games.result.tolist()),
        "void": _strs("true" if v else "false" for v in games.void.tolist()),
        "direction": _strs(games.direction.tolist()),
        "rotor_speed": _strs("" if np.isnan(v) else f"{v:g}" for v in games.rotor_speed.tolist()),
    }
    if games.timestamp is not None:
        cols["timestamp"] = _strs(games.timestamp.tolist())
    return cols


# ---------------------------------------------------------------------------- files
def resolve(fmt: str) -> Protocol:
    """The protocol a ``--format`` value names: ``protocol:NAME`` or ``protocol:FILE.toml``."""
    spec = fmt.split(":", 1)[1] if ":" in fmt else ""
    if not spec:
        names = packaged_protocols()
        if len(names) != 1:
            raise InputError(f"name the controller's protocol: --protocol NAME (packaged: {', '.join(names)}) or --protocol FILE.toml")
        spec = names[0]
    return load_protocol(spec)


def sniff(head: bytes) -> str | None:
    """``protocol:NAME`` when a packaged protocol's game-state message is found in the first
    lines of ``head`` (with or without its prefix), else None."""
    starts = (b"\n*", b"\n[", b"\r*", b"\r[")  # a message or a prefix at the start of a line (LF, CR LF or bare CR line ends)
    if head[:1] not in (b"*", b"[") and not any(x in head[:4096] for x in starts):
        return None
    text = head[: 1 << 15].decode("utf-8", errors="replace").splitlines()[:400]
    for nm, proto in PROTOCOLS.items():  # the packaged protocols' registry (one TOML file each)
        pre = re.compile(proto.prefix) if proto.prefix else None
        st = re.compile(proto.state_message.pattern)
        for line in text:
            line = line.rstrip()
            if pre is not None:
                line = pre.sub("", line, count=1)
            if st.search(line):
                return f"protocol:{nm}"
    return None


def read_capture(data: bytes, name: str, proto: Protocol) -> tuple[dict, np.ndarray, list[LineReject], int, list[str], list[str]]:
    """Read a whole capture into spin-log columns, for :func:`rngcert.collect.spinlog.read_spin_log`.

    Returns
    -------
    cols, lines, rejected, blank, header, notes
        The columns (pyarrow strings, the standard names), each spin's line, the rejected lines,
        the blank lines, the column names, and the notes of :func:`describe`.
    """
    lines, line_no, _ = split_lines(data, proto.encoding)
    dec = decode(lines, line_no, proto, name, final=True)
    cols = to_columns(dec.games, proto)
    return cols, dec.games.line, dec.rejected, dec.blank, list(cols), describe(dec, proto, name)
