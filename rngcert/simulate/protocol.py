"""A simulated wheel controller: spins written as the controller's own serial protocol (issue 25),
so that captures, ``rngcert record`` and the rotor tests have fair and biased inputs.

Each game is written as the controller of the real captures sends it (``slingshot2``): the next
game's number and the previous result in state 2 while the rotor slows, stops and reverses; the
ball's launch (state 3) at the rotor speed of the spin; no more bets (state 4); the winning number
alone, then the result state repeated. A void spin is a game whose ball is not sensed: warning flag
4 in state 4, then the table closes (state 6) without a result. Optionally each line carries the
capture program's prefix (``[2026-01-01 00:00:00.000] Receive >>> ``), one message every 0.5 s.

The writer is vectorised: one numpy string operation per message slot of a game.
"""

from __future__ import annotations

import numpy as np

from rngcert.equipment.protocol import Protocol
from rngcert.equipment.wheel import Wheel
from rngcert.errors import InputError

__all__ = ["protocol_lines", "write_protocol"]

#: Messages a game takes (state 2 ×4, 3 ×2, 4 ×2, the number alone, 5 ×3): the timing of a capture
#: is one message every MESSAGE_SECONDS.
SLOTS = 12
MESSAGE_SECONDS = 0.5


def _fmt(state, game, nn, warn, speed, direction, digits: int) -> np.ndarray:
    parts = [np.char.mod("*X;%d;", state), np.char.zfill(np.char.mod("%d", game), digits), np.char.add(";", nn),
             np.char.mod(";%d;", warn), np.char.zfill(np.char.mod("%d", speed), 3), np.char.add(";", direction)]
    out = parts[0]
    for p in parts[1:]:
        out = np.char.add(out, p)
    return out


def protocol_lines(wheel: Wheel, positions: np.ndarray, direction: np.ndarray, rotor_speed: np.ndarray, void: np.ndarray, proto: Protocol, *,
                   first_game: int = 1) -> np.ndarray:
    """The controller's messages for a sequence of games, in order (an array of str).

    Parameters
    ----------
    wheel : Wheel
        The wheel (results are written as its pocket labels).
    positions : (n,) int
        Wheel position of each game's result.
    direction : (n,) int
        Rotor direction of each game, 0 clockwise, 1 counter-clockwise.
    rotor_speed : (n,) float
        Rotor speed at the launch in the protocol's unit (written as raw = speed / scale, 3 digits).
    void : (n,) bool
        Games whose ball is not sensed (no result; warning flag 4, table closed).
    proto : Protocol
        The protocol (its ``slingshot2``-shaped state message, game digits, direction digits and
        rotor scale are used).
    first_game : int
        Game number of the first game (it wraps after ``10**game_digits - 1``).

    Returns
    -------
    (m,) ndarray of str
        Lines without newlines.
    """
    n = int(positions.size)
    if not (direction.size == rotor_speed.size == void.size == n):
        raise InputError("positions, direction, rotor_speed and void must have the same length")
    if proto.states.get(proto.result_state) is None or not {1, 2, 3, 4, 5, 6} <= set(proto.states) or "direction" not in proto.state_message.groups:
        raise InputError(f"protocol {proto.name}: the simulator writes the slingshot2 game states 1-6 with a direction field")
    inv = {v: k for k, v in proto.direction_map.items()} or {"cw": "0", "ccw": "1"}
    dchar = np.where(np.asarray(direction) == 0, inv.get("cw", "0"), inv.get("ccw", "1")).astype(object)
    labels = np.asarray(wheel.position_space().labels, dtype=object)
    nn = np.char.rjust(labels[np.asarray(positions)].astype(str), 2)
    shown = np.where(void, "", nn)  # the result the display keeps: the last real one
    last_idx = np.maximum.accumulate(np.where(~void, np.arange(n), -1))
    prev_idx = np.r_[-1, last_idx[:-1]]
    prev_nn = np.where(prev_idx >= 0, np.asarray(shown, dtype=object)[np.maximum(prev_idx, 0)], "  ").astype(str)
    digits = proto.game_digits
    game = (first_game + np.arange(n)) % (10**digits)
    raw = np.clip(np.rint(np.asarray(rotor_speed, dtype=float) / proto.rotor_scale), 0, 999).astype(np.int64)
    prev_raw = np.r_[raw[:1], raw[:-1]]
    prev_d = np.r_[dchar[:1], dchar[:-1]]
    z = np.zeros(n, dtype=np.int64)
    slow = np.maximum(raw - 3, 0)
    w4 = np.where(void, 4, 0)
    st45 = lambda s: np.where(void, 6, s)  # noqa: E731 - a void game closes instead of showing a result
    slots = [
        _fmt(2 + z, game, prev_nn, z, prev_raw, prev_d, digits),  # place bets: the rotor still turns the old way
        _fmt(2 + z, game, prev_nn, z, prev_raw // 2, prev_d, digits),
        _fmt(2 + z, game, prev_nn, z, z, prev_d, digits),  # stopped
        _fmt(2 + z, game, prev_nn, z, raw // 2, dchar, digits),  # reversed
        _fmt(3 + z, game, prev_nn, z, raw, dchar, digits),  # the ball's launch
        _fmt(3 + z, game, prev_nn, z, raw, dchar, digits),
        _fmt(4 + z, game, prev_nn, w4, slow, dchar, digits),
        _fmt(4 + z, game, prev_nn, w4, slow, dchar, digits),
        np.where(void, _fmt(6 + z, game, prev_nn, w4, z, dchar, digits), nn),  # the number alone (or the table closes)
    ] + [_fmt(st45(5 + z), game, np.where(void, prev_nn, nn), w4, np.where(void, 0, slow), dchar, digits)] * 3
    body = np.stack(slots, axis=1).reshape(-1)
    g0 = int(game[0]) if n else first_game
    head = np.array(["*P 1", f"*X;6;{g0:0{digits}d};  ;0;000;0", f"*X;6;{g0:0{digits}d};  ;0;000;0", "*P OK"])
    tail_g = int(game[-1]) if n else g0
    tail = np.array([f"*X;6;{tail_g:0{digits}d};{prev_nn[-1] if n and void[-1] else (nn[-1] if n else '  ')};0;000;0"] * 2)
    return np.concatenate([head, body, tail])


def write_protocol(out, lines: np.ndarray, *, timestamps: bool = False, start: str = "2026-01-01T00:00:00", crlf: bool = True) -> int:
    """Write protocol lines to ``out`` (a path or a binary file), optionally each behind a capture
    program's prefix with a timestamp (one message every 0.5 s from ``start``). Returns the number
    of lines."""
    lines = np.asarray(lines, dtype=str)
    if timestamps:
        t0 = np.datetime64(start.replace("Z", ""), "ms")
        ts = (t0 + (np.arange(lines.size) * int(MESSAGE_SECONDS * 1000)).astype("timedelta64[ms]")).astype(str)
        ts = np.char.replace(ts, "T", " ")
        lines = np.char.add(np.char.add(np.char.add("[", ts), "] Receive >>> "), lines)
    eol = "\r\n" if crlf else "\n"
    data = (eol.join(lines.tolist()) + eol).encode("ascii")
    if hasattr(out, "write"):
        out.write(data)
    else:
        with open(out, "wb") as fh:
            fh.write(data)
    return int(lines.size)
