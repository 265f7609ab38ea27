"""Wheel-controller protocols as data: what a controller sends over its serial line, and how a game
is read from it (DESIGN §3 "Wheel-controller protocol").

A protocol file (``protocols/*.toml``, packaged; a lab passes its own ``.toml``) names:

* ``[prefix]`` (optional): the pattern a capture program writes before each message (timestamp and
  channel groups), and which channels came from the controller (``receive``);
* ``[[message]]``: the messages, each a regular expression with named groups and a ``kind``:
  ``state`` (exactly one: groups ``state``, ``game``, ``result`` and optionally ``warning``,
  ``rotor_speed``, ``direction``), ``power`` (group ``power``), ``result`` (the winning number
  alone, checked against the result state), ``ignore`` (read and counted, not used); a line that
  matches none is rejected;
* ``[states]``: the game states by number; ``[game]``: which state carries the result, which
  is the ball's launch, which close the table, which power values switch the wheel off;
* ``[fields]``: the rotor speed's unit and scale (and whether they are assumed), the direction
  digits, the warning bits and the states in which a warning voids the game.

Patterns must be understood by both Python's ``re`` and RE2 (pyarrow's engine, used to read
captures vectorised): named groups ``(?P<name>...)`` yes, look-arounds and back-references no.
This module validates a definition; :mod:`rngcert.collect.protocol` reads captures with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rngcert.equipment import check_keys
from rngcert.equipment.packaged import Packaged
from rngcert.errors import EquipmentError

#: Kinds of message a protocol may define.
MESSAGE_KINDS = ("state", "power", "result", "ignore")
#: Groups the state message may have beyond the required ``state``, ``game`` and ``result``.
STATE_GROUPS = ("warning", "rotor_speed", "direction")
_RE2_UNSUPPORTED = re.compile(r"\(\?(?:[=!]|<[=!])|\\[1-9]")  # look-arounds and back-references


@dataclass(frozen=True)
class Message:
    """One message of a protocol: its kind and its pattern (with named groups)."""

    kind: str
    pattern: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class Protocol:
    """A validated wheel-controller protocol.

    Attributes
    ----------
    name, description, source : str
        Identity and provenance of the definition.
    where : str
        The file it was read from (named in errors and reports).
    encoding : str
        Text encoding of the serial line.
    serial : dict
        Default line settings: ``baudrate``, ``bytesize``, ``parity``, ``stopbits``.
    prefix : str or None
        Pattern of a capture program's line prefix (groups ``timestamp``, ``channel``).
    receive : tuple of str
        Channels that came from the controller.
    messages : tuple of Message
        In the order they are tried.
    states : dict of int to str
        Game states and their meanings.
    result_state, launch_state : int
        The state carrying the winning number; the state of the ball's launch.
    closed_states : tuple of int
        States in which no game runs.
    game_digits : int
        Digits of the game number (it wraps after ``10**game_digits - 1``).
    power_off : tuple of str
        Values of the power message that switch the wheel off.
    rotor_unit : str
        Unit of the rotor speed after ``rotor_scale``; ``rotor_assumed`` says whether inferred.
    direction_map : dict of str to str
        Direction digit to ``cw`` / ``ccw``; ``direction_assumed`` likewise.
    warning_void_states : tuple of int
        States in which a raised warning flag voids the game.
    warning_bits : dict of int to str
        Names of the warning bits.
    notes : tuple of str
        Statements for the report (assumed units and directions).
    """

    name: str
    description: str
    source: str
    where: str
    encoding: str
    serial: dict
    prefix: str | None
    receive: tuple[str, ...]
    messages: tuple[Message, ...]
    states: dict[int, str]
    result_state: int
    launch_state: int
    closed_states: tuple[int, ...]
    game_digits: int
    power_off: tuple[str, ...]
    rotor_unit: str = ""
    rotor_scale: float = 1.0
    rotor_assumed: bool = False
    direction_map: dict[str, str] = field(default_factory=dict)
    direction_assumed: bool = False
    warning_void_states: tuple[int, ...] = ()
    warning_bits: dict[int, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: zone of the prefix's timestamps ("UTC" or an offset "+08:00"); they carry none themselves
    timezone: str = "UTC"
    #: SHA-256 of a lab's protocol file as read (empty for a packaged protocol, named by its name)
    sha256: str = ""

    @property
    def state_message(self) -> Message:
        """The game-state message."""
        return next(m for m in self.messages if m.kind == "state")

    def describe(self) -> dict:
        """A JSON-ready summary for reports."""
        return {"name": self.name, "description": self.description, "source": self.source, "file": self.where,
                "result_state": self.result_state, "launch_state": self.launch_state,
                "rotor_speed_unit": self.rotor_unit, "rotor_speed_assumed": self.rotor_assumed,
                "direction_map": dict(self.direction_map), "direction_assumed": self.direction_assumed, "notes": list(self.notes)} | (
                    {"sha256": self.sha256} if self.sha256 else {})


def packaged_protocols() -> list[str]:
    """Names of the protocols shipped with rngcert (:data:`PROTOCOLS`: one TOML file each)."""
    return PROTOCOLS.names()


def load_protocol(spec: str | Path) -> Protocol:
    """Load a protocol by packaged name (see :func:`packaged_protocols`) or from a TOML file.

    Parameters
    ----------
    spec : str or Path
        A packaged name (``slingshot2``) or the path of a ``.toml`` file.

    Returns
    -------
    Protocol

    Raises
    ------
    EquipmentError
        Unknown name, unreadable file, or a definition that does not validate (the message says
        which key and why).
    """
    return PROTOCOLS.load(spec)


def _pattern(text, where: str) -> tuple[str, tuple[str, ...]]:
    if not isinstance(text, str) or not text:
        raise EquipmentError(f"{where}: a pattern must be a non-empty string, got {text!r}")
    if _RE2_UNSUPPORTED.search(text):
        raise EquipmentError(f"{where}: pattern {text!r} uses a look-around or back-reference; protocol patterns must be RE2 regular expressions")
    try:
        rx = re.compile(text)
    except re.error as exc:
        raise EquipmentError(f"{where}: pattern {text!r} is not a regular expression: {exc}") from None
    return text, tuple(rx.groupindex)


def _nested_group(pattern: str) -> tuple[str, str] | None:
    """``(inner, outer)`` when a named group lies inside another named group (``(?P<game>\\d(?P<result>\\d\\d))``:
    the result would be read out of the game number), else None. One pass over the pattern, escapes and
    character classes skipped."""
    stack: list[str | None] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a character class: up to its closing ']' (a ']' first in the class is literal)
            j = i + 1 + (pattern[i + 1:i + 2] == "^")
            j += pattern[j:j + 1] == "]"
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            m = re.match(r"\(\?P<(\w+)>", pattern[i:])
            name = m.group(1) if m else None
            outer = next((g for g in reversed(stack) if g), None)
            if name and outer:
                return name, outer
            stack.append(name)
        elif c == ")" and stack:
            stack.pop()
        i += 1
    return None


def _int_keys(d, where: str) -> dict[int, object]:
    if not isinstance(d, dict) or not d:
        raise EquipmentError(f"{where}: must be a table of number = value, got {d!r}")
    out = {}
    for k, v in d.items():
        try:
            out[int(k)] = v
        except ValueError:
            raise EquipmentError(f"{where}: key {k!r} is not a whole number") from None
    return out


def _state_list(v, states, where: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise EquipmentError(f"{where}: must be a list of state numbers, got {v!r}")
    bad = [x for x in v if x not in states]
    if bad:
        raise EquipmentError(f"{where}: {bad} are not states of [states] ({', '.join(map(str, states))})")
    return tuple(v)


def _need(d, key, typ, at, where):
    """``d[key]`` checked to be of type ``typ`` (``at`` is the key's section, e.g. ``"game."``)."""
    if key not in d:
        raise EquipmentError(f"{where}: missing key {at}{key!r}")
    v = d[key]
    if not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool):
        raise EquipmentError(f"{where}: key {at}{key!r} must be {getattr(typ, '__name__', typ)}, got {v!r}")
    return v


def _serial_section(doc: dict, where: str) -> dict:
    """The [serial] settings with their defaults, each checked."""
    serial = dict(doc.get("serial", {}))
    serial = {"baudrate": serial.get("baudrate", 9600), "bytesize": serial.get("bytesize", 8), "parity": serial.get("parity", "N"),
              "stopbits": serial.get("stopbits", 1)}
    if not isinstance(serial["baudrate"], int) or serial["baudrate"] <= 0:
        raise EquipmentError(f"{where}: serial.baudrate must be a positive whole number, got {serial['baudrate']!r}")
    if serial["bytesize"] not in (5, 6, 7, 8):
        raise EquipmentError(f"{where}: serial.bytesize must be 5, 6, 7 or 8, got {serial['bytesize']!r}")
    if serial["parity"] not in ("N", "E", "O", "M", "S"):
        raise EquipmentError(f"{where}: serial.parity must be one of N E O M S, got {serial['parity']!r}")
    if serial["stopbits"] not in (1, 1.5, 2):
        raise EquipmentError(f"{where}: serial.stopbits must be 1, 1.5 or 2, got {serial['stopbits']!r}")
    return serial


def _prefix_section(doc: dict, where: str) -> tuple:
    """(prefix pattern or None, receive channels, timezone) of the optional [prefix] table."""
    prefix, receive, zone = None, (), "UTC"
    if "prefix" in doc:
        pre = _need(doc, "prefix", dict, "", where)
        prefix, groups = _pattern(pre.get("pattern"), f"{where}: prefix.pattern")
        if not prefix.startswith("^"):
            raise EquipmentError(f"{where}: prefix.pattern must be anchored at the start of the line (begin with '^')")
        if "channel" in groups:
            receive = tuple(_need(pre, "receive", list, "prefix.", where))
            if not receive or not all(isinstance(r, str) for r in receive):
                raise EquipmentError(f"{where}: prefix.receive must list the channel names that came from the controller")
        zone = str(pre.get("timezone", "UTC"))
        if not re.fullmatch(r"UTC|[+-]\d\d:\d\d", zone):
            raise EquipmentError(f"{where}: prefix.timezone must be 'UTC' or an offset such as '+08:00', got {zone!r}")
    return prefix, receive, zone


def _message_section(doc: dict, where: str) -> list:
    """The [[message]] tables as :class:`Message` (exactly one of kind 'state')."""
    msgs = _need(doc, "message", list, "", where)
    messages = []
    for i, m in enumerate(msgs, 1):
        at = f"message {i}"
        if not isinstance(m, dict):
            raise EquipmentError(f"{where}: {at} must be a table with kind and pattern")
        kind = m.get("kind")
        if kind not in MESSAGE_KINDS:
            raise EquipmentError(f"{where}: {at}: kind {kind!r} is not one of {', '.join(MESSAGE_KINDS)}")
        pat, groups = _pattern(m.get("pattern"), f"{where}: {at}")
        required = {"state": ("state", "game", "result"), "power": ("power",), "result": ("result",), "ignore": ()}[kind]
        nested = _nested_group(pat)
        if nested:
            raise EquipmentError(f"{where}: {at} ({kind}): group {nested[0]!r} lies inside group {nested[1]!r}; each field is its own "
                                 "part of the message")
        missing = [g for g in required if g not in groups]
        if missing:
            raise EquipmentError(f"{where}: {at} ({kind}): the pattern has no group {', '.join(missing)} (write (?P<{missing[0]}>...))")
        messages.append(Message(kind, pat, groups))
    n_state = sum(m.kind == "state" for m in messages)
    if n_state != 1:
        raise EquipmentError(f"{where}: a protocol has exactly one message of kind 'state' (it has {n_state})")
    return messages


def _game_section(doc: dict, states: dict, where: str) -> tuple:
    """(result_state, launch_state, closed_states, game_digits, power_off) of the [game] table."""
    game = _need(doc, "game", dict, "", where)
    result_state = _need(game, "result_state", int, "game.", where)
    launch_state = _need(game, "launch_state", int, "game.", where)
    for key, v in (("result_state", result_state), ("launch_state", launch_state)):
        if v not in states:
            raise EquipmentError(f"{where}: game.{key} = {v} is not a state of [states]")
    if launch_state > result_state:
        raise EquipmentError(f"{where}: game.launch_state ({launch_state}) comes after game.result_state ({result_state}); states are numbered in game order")
    closed = _state_list(game.get("closed_states", []), states, f"{where}: game.closed_states")
    if result_state in closed or launch_state in closed:
        raise EquipmentError(f"{where}: game.closed_states may not contain the result or launch state")
    digits = game.get("game_digits", 3)
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 9:
        raise EquipmentError(f"{where}: game.game_digits must be a whole number 1-9, got {digits!r}")
    power_off = game.get("power_off", [])
    if not isinstance(power_off, list) or not all(isinstance(x, str) for x in power_off):
        raise EquipmentError(f"{where}: game.power_off must be a list of strings, got {power_off!r}")
    return result_state, launch_state, closed, digits, power_off


def _fields_section(doc: dict, messages: list, states: dict, closed: tuple, where: str) -> tuple[dict, list]:
    """The [fields] table: the Protocol keywords it sets, and the notes it makes (rotor speed, direction)."""
    fields = doc.get("fields", {})
    if not isinstance(fields, dict):
        raise EquipmentError(f"{where}: [fields] must be a table")
    notes = []
    rs = fields.get("rotor_speed", {})
    rotor_unit = str(rs.get("unit", ""))
    rotor_scale = rs.get("scale", 1.0)
    if not isinstance(rotor_scale, (int, float)) or isinstance(rotor_scale, bool) or not rotor_scale > 0:
        raise EquipmentError(f"{where}: fields.rotor_speed.scale must be a positive number, got {rotor_scale!r}")
    rotor_assumed = bool(rs.get("assumed", False))
    if "rotor_speed" in messages[[m.kind for m in messages].index("state")].groups:
        what = f"rotor speed in {rotor_unit or 'controller units'} (raw value × {rotor_scale:g})"
        notes.append(f"{what}: {'assumed — ' + str(rs.get('note', 'inferred, not documented')) if rotor_assumed else 'as documented'}")
    dr = fields.get("direction", {})
    dmap = dr.get("map", {})
    if not isinstance(dmap, dict) or not all(isinstance(v, str) and v in ("cw", "ccw") for v in dmap.values()):
        raise EquipmentError(f"{where}: fields.direction.map must map the direction values to 'cw' or 'ccw', got {dmap!r}")
    direction_assumed = bool(dr.get("assumed", False))
    if dmap and direction_assumed:
        notes.append(f"rotor direction: {dr.get('note', 'which value is clockwise is assumed')}")
    wr = fields.get("warning", {})
    void_states = _state_list(wr.get("void_states", sorted(set(states) - set(closed))), states, f"{where}: fields.warning.void_states")
    bits = {k: str(v) for k, v in _int_keys(wr["bits"], f"{where}: fields.warning.bits").items()} if "bits" in wr else {}
    kw = dict(rotor_unit=rotor_unit, rotor_scale=float(rotor_scale), rotor_assumed=rotor_assumed, direction_map={str(k): v for k, v in dmap.items()},
              direction_assumed=direction_assumed, warning_void_states=void_states, warning_bits=bits)
    return kw, notes


#: The keys of a protocol file and of its tables (any other is a misspelling, refused: ``encodng`` would read ascii).
_KEYS = {"": {"name", "description", "source", "encoding", "serial", "prefix", "message", "states", "game", "fields"},
         "serial": {"baudrate", "bytesize", "parity", "stopbits"}, "prefix": {"pattern", "receive", "timezone"},
         "message": {"kind", "pattern"}, "game": {"result_state", "launch_state", "closed_states", "game_digits", "power_off"},
         "fields": {"rotor_speed", "direction", "warning"}, "fields.rotor_speed": {"unit", "scale", "assumed", "note"},
         "fields.direction": {"map", "assumed", "note"}, "fields.warning": {"void_states", "bits", "assumed", "note"}}


def _check_protocol_keys(doc: dict, where: str) -> None:
    """Every key of the file and of its tables is one the reader knows; each table that should be one is a table."""
    check_keys(doc, _KEYS[""], where)
    for at, allowed in _KEYS.items():
        if not at:
            continue
        head, _, sub = at.partition(".")
        tables = doc.get(head, {})
        if sub:
            tables = tables.get(sub, {}) if isinstance(tables, dict) else {}
        for i, t in enumerate(tables if isinstance(tables, list) else [tables]):
            name = f"{at}[{i}]" if isinstance(tables, list) else at
            if head != "message" and not isinstance(t, dict):
                raise EquipmentError(f"{where}: [{name}] must be a table, got {t!r}")
            if isinstance(t, dict):
                check_keys(t, allowed, where, f"[{name}] ")


def protocol_from_dict(doc: dict, where: str = "<dict>") -> Protocol:
    """Validate a parsed protocol document and build a :class:`Protocol`.

    Raises
    ------
    EquipmentError
        The first key that is missing or wrong, with the file and the reason.
    """
    _check_protocol_keys(doc, where)
    name = _need(doc, "name", str, "", where)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise EquipmentError(f"{where}: name {name!r} must be letters, digits, '-', '_' or '.'")
    encoding = str(doc.get("encoding", "ascii"))
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise EquipmentError(f"{where}: encoding {encoding!r} is not a known text encoding") from None
    serial = _serial_section(doc, where)
    prefix, receive, zone = _prefix_section(doc, where)
    messages = _message_section(doc, where)
    states_raw = _int_keys(_need(doc, "states", dict, "", where), f"{where}: [states]")
    states = {k: str(v) for k, v in sorted(states_raw.items())}
    result_state, launch_state, closed, digits, power_off = _game_section(doc, states, where)
    fields, notes = _fields_section(doc, messages, states, closed, where)
    if prefix is not None:
        notes.append(f"capture timestamps carry no zone: read as {zone} (prefix.timezone of the protocol file)")
    return Protocol(name=name, description=str(doc.get("description", "")), source=str(doc.get("source", "")), where=where, encoding=encoding,
                    serial=serial, prefix=prefix, receive=receive, messages=tuple(messages), states=states, result_state=result_state,
                    launch_state=launch_state, closed_states=closed, game_digits=digits, power_off=tuple(power_off),
                    notes=tuple(notes), timezone=zone, **fields)


#: The packaged wheel-controller protocols: ``rngcert/equipment/protocols/NAME.toml``, one file each
#: (adding a controller is adding its TOML file). ``PROTOCOLS.get(name)``, ``PROTOCOLS.names()``.
PROTOCOLS = Packaged("protocols", "wheel-controller protocol", "protocols", "protocol file", protocol_from_dict)
