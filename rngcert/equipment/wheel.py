"""Wheels: roulette wheels and money (segment) wheels, loaded from packaged or lab TOML files.

A wheel is a circle of k pockets (roulette) or sections (money wheel) in **wheel order**: position 0
is the layout's reference pocket (the zero on a roulette wheel, section 0 on a money wheel) and
positions i and i+1 (mod k) are physically adjacent. Tests that use geometry (sector scan, first
harmonic, wheel distance, dealer signature) work on positions; frequency tests may also work on
symbols.

Formats
-------
Roulette (``kind = "roulette"``)::

    id = "european"
    name = "European single-zero roulette wheel"
    kind = "roulette"
    wheel_order = ["0", "32", "15", ...]     # labels clockwise from the reference pocket
    red = ["1", "3", ...]                    # the rest are black, except
    green = ["0"]                            # zero pockets

Money wheel with known arrangement (``kind = "money-wheel"``)::

    sections = ["F", "A", "B", ...]          # symbol of each section clockwise from section 0

Money wheel whose arrangement is not known (only symbol frequencies and sequences can be
tested)::

    [segment_counts]
    "1" = 21
    "2" = 13

An optional ``[aliases]`` table maps other spellings of a label to the label, e.g.::

    [aliases]
    "zero" = "0"
    "O" = "0"

Aliases are matched case-insensitively after trimming spaces and quotes. An alias must name a
label of the wheel, may not be another label of the wheel, and may not name two labels (``Zero``
and ``ZERO`` are one alias). A zero-padded number (``07``) needs no alias; a string of zeros only
(``00``) is never read as ``0`` unless the wheel declares it (it is the American double zero).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Mapping

import numpy as np

from rngcert.equipment import check_keys, parse_toml, read_equipment_file
from rngcert.errors import EquipmentError

#: Labels a log may carry for a spin that is void (rules 5.1-5.4 of the money-wheel rules).
VOID_TOKENS = frozenset({"void", "no spin", "nospin", "no-spin", "peg"})


@dataclass(frozen=True)
class OutcomeSpace:
    """What the battery tests: outcome ids ``0..m-1`` with their null probabilities.

    Attributes
    ----------
    labels : tuple of str, length m
        Label of each outcome id.
    probs : (m,) ndarray of float
        Null probability of each outcome (sums to 1).
    circular : bool
        True when outcome ids are wheel positions, so that ids i and i+1 (mod m) are adjacent
        sections of the wheel; False for symbol-level outcomes (no geometry).
    categories : mapping of str to (ids, names)
        Named partitions of the outcomes, e.g. ``"colour"``: ``((m,) int array, ("red",
        "black", "zero"))``. An id of -1 means "in no category" (zero for odd/even).
    """

    labels: tuple[str, ...]
    probs: np.ndarray
    circular: bool
    categories: Mapping[str, tuple[np.ndarray, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def m(self) -> int:
        """Number of outcomes."""
        return len(self.labels)


@dataclass(frozen=True)
class Wheel:
    """A wheel definition (validated).

    Attributes
    ----------
    id, name, kind, source : str
        Identifier, human name, ``"roulette"`` or ``"money-wheel"``, and where the layout comes
        from.
    labels : tuple of str, length k
        For a roulette wheel the pocket labels in wheel order; for a money wheel with known
        arrangement the symbol of each section in wheel order. Empty when the order is unknown.
    symbols : tuple of str
        Distinct symbols (money wheel): most sections first, ties in wheel order (``sections``)
        or in file order (``segment_counts``); for roulette, empty.
    symbol_counts : tuple of int
        Sections per symbol (money wheel).
    colours : tuple of str, length k
        ``"red"``, ``"black"`` or ``"green"`` per position (roulette only).
    aliases : mapping of str to str
        Other spellings of labels (case-insensitive).
    path : str
        The TOML file it was loaded from.
    sha256 : str
        SHA-256 of a lab's wheel file as read (empty for a packaged wheel, named by its id).
    """

    id: str
    name: str
    kind: str
    source: str
    labels: tuple[str, ...]
    symbols: tuple[str, ...]
    symbol_counts: tuple[int, ...]
    colours: tuple[str, ...]
    aliases: Mapping[str, str]
    path: str
    sha256: str = ""

    @property
    def order_known(self) -> bool:
        """Whether the arrangement of sections around the wheel is known."""
        return len(self.labels) > 0

    @property
    def k(self) -> int:
        """Number of pockets/sections on the wheel."""
        return len(self.labels) if self.labels else int(sum(self.symbol_counts))

    def symbol_of_position(self) -> np.ndarray:
        """(k,) int array: symbol id of each position (money wheel with known order)."""
        index = {s: i for i, s in enumerate(self.symbols)}
        return np.array([index[s] for s in self.labels], dtype=np.int64)

    # ------------------------------------------------------------------ outcome spaces
    def position_space(self) -> OutcomeSpace:
        """Outcome space of wheel positions (requires a known arrangement)."""
        if not self.order_known:
            raise EquipmentError(f"{self.id}: the arrangement of sections is not known")
        k = self.k
        probs = np.full(k, 1.0 / k)
        cats: dict[str, tuple[np.ndarray, tuple[str, ...]]] = {}
        if self.kind == "roulette":
            cats.update(_roulette_categories(self.labels, self.colours))
            labels = self.labels
        else:
            sym = self.symbol_of_position()
            cats["symbol"] = (sym, self.symbols)
            labels = tuple(f"{i}:{s}" for i, s in enumerate(self.labels))
        return OutcomeSpace(labels=labels, probs=probs, circular=True, categories=cats)

    def symbol_space(self) -> OutcomeSpace:
        """Outcome space of symbols, with probabilities sections/k (money wheel)."""
        counts = np.asarray(self.symbol_counts, dtype=float)
        return OutcomeSpace(labels=self.symbols, probs=counts / counts.sum(), circular=False)

    # ------------------------------------------------------------------ label resolution
    def token_table(self) -> tuple[dict[str, int], dict[str, int]]:
        """Maps from normalised (lower-case) tokens to position ids and to symbol ids.

        Returns
        -------
        positions : dict
            Token → wheel position. Roulette: pocket labels. Money wheel with known order:
            section indices ``"0"``..``"k-1"``.
        symbols : dict
            Token → symbol id (money wheels only).
        """
        positions: dict[str, int] = {}
        symbols: dict[str, int] = {}
        if self.kind == "roulette":
            for i, lab in enumerate(self.labels):
                positions[lab.lower()] = i
        else:
            if self.order_known:
                for i in range(self.k):
                    positions[str(i)] = i
            for j, s in enumerate(self.symbols):
                symbols[s.lower()] = j
        for alias, target in self.aliases.items():
            a, t = _alias_token(alias), _alias_token(target)
            if t in positions:
                positions.setdefault(a, positions[t])
            elif t in symbols:
                symbols.setdefault(a, symbols[t])
        return positions, symbols

    def with_aliases(self, extra: Mapping[str, str], where: str = "--alias") -> "Wheel":
        """This wheel with more label aliases (validated as the TOML ``[aliases]`` table is).

        Parameters
        ----------
        extra : mapping of str to str
            ``{spelling: label}``, e.g. ``{"zero": "0"}``.
        where : str
            Named in the error message.

        Raises
        ------
        EquipmentError
            An alias that names no label, is another label, or names two labels.
        """
        if not extra:
            return self
        own = {_alias_token(a): a for a in self.aliases}
        for a, t in extra.items():
            mine = own.get(_alias_token(str(a)))
            if mine is not None and _alias_token(self.aliases[mine]) != _alias_token(str(t)):
                # the same key would replace the wheel's own alias silently; another spelling of it is refused below
                raise EquipmentError(f"{where}: [aliases] {mine!r} = {self.aliases[mine]!r} (the wheel's) and {a!r} = {t!r} "
                                     "read the same: an alias cannot name two pockets")
        merged = dict(self.aliases)
        merged.update({str(a).strip(): str(t).strip() for a, t in extra.items()})
        _check_aliases(merged, self, where)
        return replace(self, aliases=merged)

    def describe(self) -> dict:
        """JSON-able description for reports."""
        d = {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "k": self.k,
            "order_known": self.order_known,
            "file": self.path,
        }
        if self.sha256:
            d["sha256"] = self.sha256
        if self.labels:
            d["wheel_order"] = list(self.labels)
        if self.symbols:
            d["symbol_sections"] = dict(zip(self.symbols, self.symbol_counts))
        if self.aliases:
            d["aliases"] = dict(self.aliases)
        return d


def _roulette_categories(labels, colours):
    """Outside-bet partitions of a roulette wheel (rule 3.2 of 003_099d15f6604b638d.txt).

    Zero pockets belong to no even-money/dozen/column category (id -1), and so do the pockets of a lab's
    wheel numbered above 36 (those bets cover 1-36: a pocket 37 is no dozen's, nor "high 19-36"); the colour
    partition keeps zero as its own category so that its share is tested too.
    """
    k = len(labels)
    colour = np.array([{"red": 0, "black": 1, "green": 2}[c] for c in colours])
    num = np.array([int(lab) if lab.isdigit() and len(lab) <= 3 else 0 for lab in labels])
    zero = (num < 1) | (num > 36)
    parity = np.where(zero, -1, (num % 2 == 0).astype(int))  # 0 odd, 1 even
    lowhigh = np.where(zero, -1, (num > 18).astype(int))  # 0 low 1-18, 1 high 19-36
    dozen = np.where(zero, -1, (num - 1) // 12)
    column = np.where(zero, -1, (num - 1) % 3)
    assert colour.shape == (k,)
    return {
        "colour": (colour, ("red", "black", "zero")),
        "parity": (parity, ("odd", "even")),
        "low_high": (lowhigh, ("low 1-18", "high 19-36")),
        "dozen": (dozen, ("1st 12", "2nd 12", "3rd 12")),
        "column": (column, ("column 1", "column 2", "column 3")),
    }


# ---------------------------------------------------------------------- loading
def packaged_wheels() -> list[str]:
    """Ids of the wheel definitions shipped with rngcert."""
    folder = resources.files("rngcert.equipment") / "data"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_wheel(spec: str | Path) -> Wheel:
    """Load a wheel by packaged id (``european``, ``american``, ``money-wheel-52``,
    ``crazy-time``) or from a TOML file path (a packaged id is always the packaged wheel: a file of
    that name in the current folder is given as ``./NAME``).

    Raises
    ------
    EquipmentError
        Unknown id, unreadable file, or a definition that does not validate (the message names
        the file and the key).
    """
    spec = str(spec)
    path = Path(spec)
    # a packaged id names the packaged wheel whatever the current folder holds (a file or folder ``european`` there was
    # read in its place, or was "not a file"); a lab's file of such a name is given as a path (./european)
    if spec not in packaged_wheels() and (path.suffix == ".toml" or path.exists()):
        digest: list = []
        text = read_equipment_file(path, "equipment file", digest)
        w = _not_posing_as_packaged(wheel_from_dict(parse_toml(text, str(path)), str(path)))
        return replace(w, sha256=digest[0])
    else:
        ids = packaged_wheels()
        if spec not in ids:
            raise EquipmentError(f"unknown equipment {spec!r}; packaged wheels: {', '.join(ids)}; or give a .toml file")
        res = resources.files("rngcert.equipment") / "data" / f"{spec}.toml"
        text = res.read_text(encoding="utf-8")
        where = f"rngcert/equipment/data/{spec}.toml"
    return wheel_from_dict(parse_toml(text, where), where)


def _not_posing_as_packaged(w: Wheel) -> Wheel:
    """A lab's wheel file ``w`` unless its id is a packaged wheel's and its wheel differs from that
    one: a report and the store name a wheel by its id (``ingest`` checks a stored table's wheel by
    it), so a 4-pocket file with ``id = "european"`` would be reported as, and stored into, European tables."""
    if w.id not in packaged_wheels():
        return w
    p = load_wheel(w.id)
    shape = ("kind", "labels", "symbols", "symbol_counts", "colours")
    if all(getattr(w, a) == getattr(p, a) for a in shape):
        return w  # the packaged wheel, written out again (its own aliases, say)
    what = f"{len(w.labels or w.symbols)} {'pockets' if w.kind == 'roulette' else 'sections'}" if w.kind != p.kind or len(w.labels) != len(p.labels) \
        else "another arrangement, colours or symbols"
    raise EquipmentError(f"{w.path}: id {w.id!r} is the packaged wheel's, and this file's wheel differs from it ({what}): "
                         f"give the lab's wheel its own id")


def _req(doc: dict, key: str, where: str, typ=str):
    if key not in doc:
        raise EquipmentError(f"{where}: missing key {key!r}")
    val = doc[key]
    if not isinstance(val, typ):
        raise EquipmentError(f"{where}: key {key!r} must be {typ.__name__}, got {type(val).__name__}")
    return val


def _label_list(doc, key, where) -> list[str]:
    vals = _req(doc, key, where, list)
    out = []
    for i, v in enumerate(vals):
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise EquipmentError(f"{where}: {key}[{i}] must be a string label, got {v!r}")
        s = str(v).strip()
        if not s:
            raise EquipmentError(f"{where}: {key}[{i}] is empty")
        out.append(s)
    return out


#: The keys a wheel file of each kind may have (any other is a misspelling, refused: ``gren`` would leave the zero black).
_KEYS = {"roulette": {"id", "name", "kind", "source", "wheel_order", "red", "green", "aliases"},
         "money-wheel": {"id", "name", "kind", "source", "sections", "segment_counts", "aliases"}}

MAX_POSITIONS = 32767  #: pockets/sections a wheel may have (positions are stored as int16)


def _check_sizes(doc: dict, where: str) -> None:
    """Size limits, checked before any per-pocket work (a 40,000-pocket file is refused at once)."""
    if not isinstance(doc, dict):
        raise EquipmentError(f"{where}: not a table of keys")
    for key in ("wheel_order", "sections", "red", "green"):
        v = doc.get(key)
        if isinstance(v, list) and len(v) > MAX_POSITIONS:
            raise EquipmentError(f"{where}: {key} has {len(v):,} entries; rngcert handles wheels of at most {MAX_POSITIONS:,} pockets/sections")
    for key in ("segment_counts", "aliases"):
        v = doc.get(key)
        if isinstance(v, dict) and len(v) > MAX_POSITIONS:
            raise EquipmentError(f"{where}: [{key}] has {len(v):,} entries; at most {MAX_POSITIONS:,}")
    sc = doc.get("segment_counts")
    if isinstance(sc, dict):
        total = sum(c for c in sc.values() if isinstance(c, int) and not isinstance(c, bool) and c > 0)
        if total > MAX_POSITIONS:
            raise EquipmentError(f"{where}: segment_counts add up to {total:,} sections; rngcert handles at most {MAX_POSITIONS:,}")


def _alias_token(t: str) -> str:
    """An alias or label as the reader compares it: trimmed of spaces and quotes, lower-case."""
    return t.strip().strip("\"'").strip().lower()


def _number_spelling(token: str) -> str | None:
    """The label a log's numeric ``token`` is read as without an alias (``07`` and ``7.0`` are ``7``; a
    token of zeros only other than ``0`` stays itself, ``00`` being the double zero), or None if not a number."""
    m = re.fullmatch(r"(\d+)(?:[.,]0*)?", token)
    if not m:
        return None
    digits = m.group(1)
    return digits.lstrip("0") if digits.strip("0") else ("0" if digits == "0" else token)


def _check_aliases(aliases: Mapping[str, str], wheel: Wheel, where: str) -> None:
    """Validate a wheel's aliases in linear time: each names a label of the wheel, is not itself
    another label nor a void word (:data:`VOID_TOKENS`), and no two spellings that read the same (case, spaces, quotes) name different
    labels. Raises :class:`EquipmentError` naming the alias."""
    if wheel.kind == "roulette":
        labels = {_alias_token(x): x for x in wheel.labels}
    else:
        labels = {_alias_token(x): x for x in wheel.symbols}
        if wheel.order_known:
            labels.update({str(i): str(i) for i in range(wheel.k)})
    seen: dict[str, tuple[str, str]] = {}
    for alias, target in aliases.items():
        a, t = _alias_token(str(alias)), _alias_token(str(target))
        if not a:
            raise EquipmentError(f"{where}: [aliases] has an empty alias (for {target!r})")
        if a in VOID_TOKENS:  # (rule 5.2: a result written void, no spin or peg is a void spin, never a pocket's)
            raise EquipmentError(f"{where}: [aliases] {alias!r} = {target!r}: {alias!r} marks a void spin (money-wheel rules 5.2); "
                                 "it cannot be read as a pocket")
        if t not in labels:
            raise EquipmentError(f"{where}: [aliases] {alias!r} = {target!r}: {target!r} is not a label of wheel {wheel.id!r}")
        if a in labels and a != t:
            raise EquipmentError(f"{where}: [aliases] {alias!r} = {target!r}: {alias!r} is itself the label {labels[a]!r}; an alias cannot name two pockets")
        num = _number_spelling(a)
        if num is not None and num != a and num in labels and num != t:  # (a log's 07 or 7.0 is pocket 7 without an alias)
            raise EquipmentError(f"{where}: [aliases] {alias!r} = {target!r}: {alias!r} is how a log writes the label {labels[num]!r}; "
                                 "an alias cannot name two pockets")
        if a in seen and seen[a][1] != t:
            raise EquipmentError(
                f"{where}: [aliases] {seen[a][0]!r} = {labels[seen[a][1]]!r} and {alias!r} = {target!r} read the same: an alias cannot name two pockets"
            )
        seen[a] = (str(alias), t)


def wheel_from_dict(doc: dict, where: str = "<dict>") -> Wheel:
    """Validate a parsed TOML document and build a :class:`Wheel` (see module docstring).
    Sizes are checked first; every check after that is linear in the number of pockets."""
    _check_sizes(doc, where)
    w = _wheel_from_dict(doc, where)
    if w.k > MAX_POSITIONS:
        raise EquipmentError(f"{where}: {w.k} pockets/sections; rngcert handles at most {MAX_POSITIONS}")
    _check_aliases(w.aliases, w, where)
    return w


def _no_two_read_the_same(labels, where: str, key: str) -> None:
    """Refuse two labels a log cannot tell apart: the same after case, spaces and quotes (``A`` and ``a``),
    or the same number (``7`` and ``07``). Linear in the labels; exact repeats are the callers' to count."""
    seen: dict[str, str] = {}
    for lab in labels:
        tok = _alias_token(lab)
        if tok in VOID_TOKENS:  # (as for aliases: money-wheel rules 5.2, a result written void, no spin or peg is a void spin)
            raise EquipmentError(f"{where}: {key}: {lab!r} marks a void spin in a log (money-wheel rules 5.2); it cannot be a label")
        tok = _number_spelling(tok) or tok
        if tok in seen and seen[tok] != lab:
            raise EquipmentError(f"{where}: {key}: {seen[tok]!r} and {lab!r} read the same in a log (case, spaces and "
                                 "zero-padding are ignored): give them labels that differ")
        seen[tok] = lab


def _roulette_from_dict(doc: dict, where: str, wid: str, name: str, kind: str, source: str, aliases: dict) -> Wheel:
    """A roulette wheel: its wheel_order and the red and green pockets, checked."""
    labels = _label_list(doc, "wheel_order", where)
    if len(labels) < 3:
        raise EquipmentError(f"{where}: wheel_order has {len(labels)} pockets; a wheel needs at least 3")
    dup = sorted(x for x, c in Counter(labels).items() if c > 1)
    if dup:
        raise EquipmentError(f"{where}: wheel_order lists pockets more than once: {dup[:20]}{' …' if len(dup) > 20 else ''}")
    _no_two_read_the_same(labels, where, "wheel_order")
    red = set(_label_list(doc, "red", where))
    green = set(_label_list(doc, "green", where)) if "green" in doc else set()
    unknown = sorted((red | green) - set(labels))
    if unknown:
        raise EquipmentError(f"{where}: red/green name pockets not on the wheel: {unknown[:20]}")
    both = sorted(red & green)
    if both:
        raise EquipmentError(f"{where}: pockets both red and green: {both[:20]}")
    for lab in labels:
        if lab not in green and not lab.isdigit():
            raise EquipmentError(f"{where}: pocket label {lab!r} is not a number; roulette pockets are 0-36 and 00")
        if lab.isdigit() and lab[0] == "0" and lab.strip("0"):  # (a log's 07 is pocket 7: a pocket 07 beside it cannot be told apart)
            raise EquipmentError(f"{where}: wheel_order: pocket label {lab!r} is zero-padded; write {lab.lstrip('0')!r} "
                                 "(only a label of zeros, 0, 00, 000, is a pocket of its own)")
    colours = tuple("red" if x in red else "green" if x in green else "black" for x in labels)
    return Wheel(wid, name, kind, source, tuple(labels), (), (), colours, aliases, where)


def _counts_agree(declared, count: Counter, where: str) -> None:
    """A file giving both ``sections`` and ``[segment_counts]``: the counts must be those of the sections
    (the arrangement is what is certified; a contradicting count is refused, not ignored).

    Raises
    ------
    EquipmentError
        Naming the file, ``segment_counts``, and each symbol whose count differs.
    """
    if declared is None:
        return
    if not isinstance(declared, dict):
        raise EquipmentError(f"{where}: segment_counts must be a table of symbol = count, got {declared!r}")
    given = {str(k).strip(): v for k, v in declared.items()}
    diff = [f"{sym} {given.get(sym, 0)!r} (sections: {count.get(sym, 0)})" for sym in sorted(set(given) | set(count))
            if given.get(sym, 0) != count.get(sym, 0)]
    if diff:
        raise EquipmentError(f"{where}: segment_counts contradict the sections listed: " + ", ".join(diff[:20])
                             + "; give the arrangement (sections) alone, or counts that agree with it")


def _money_wheel_from_dict(doc: dict, where: str, wid: str, name: str, kind: str, source: str, aliases: dict) -> Wheel:
    """A money wheel: its sections in wheel order, or its [segment_counts], checked."""
    if "sections" in doc:
        labels = _label_list(doc, "sections", where)
        if len(labels) < 3:
            raise EquipmentError(f"{where}: sections has {len(labels)} entries; a wheel needs at least 3")
        _no_two_read_the_same(labels, where, "sections")
        count = Counter(labels)  # insertion order = first appearance in wheel order
        if len(count) < 2:
            raise EquipmentError(f"{where}: sections name one symbol only ({labels[0]!r}); a money wheel needs at least two symbols, "
                                 "as under [segment_counts]")
        symbols = sorted(count, key=lambda s: -count[s])  # most sections first; ties keep wheel order (stable)
        counts = tuple(count[s] for s in symbols)
        _counts_agree(doc.get("segment_counts"), count, where)
        return Wheel(wid, name, kind, source, tuple(labels), tuple(symbols), counts, (), aliases, where)
    if "segment_counts" in doc:
        sc = _req(doc, "segment_counts", where, dict)
        symbols, counts = [], []
        for s, c in sc.items():
            if isinstance(c, bool) or not isinstance(c, int) or c <= 0:
                raise EquipmentError(f"{where}: segment_counts[{s!r}] must be a positive integer, got {c!r}")
            symbols.append(str(s).strip())
            counts.append(c)
        if len(symbols) < 2:
            raise EquipmentError(f"{where}: segment_counts needs at least two symbols")
        if len(set(symbols)) < len(symbols):
            raise EquipmentError(f"{where}: segment_counts names a symbol twice (spaces around it are ignored): "
                                 f"{sorted(x for x, c in Counter(symbols).items() if c > 1)[:20]}")
        _no_two_read_the_same(symbols, where, "segment_counts")
        return Wheel(wid, name, kind, source, (), tuple(symbols), tuple(counts), (), aliases, where)
    raise EquipmentError(f"{where}: a money wheel needs 'sections' (arrangement) or [segment_counts]")


def _wheel_from_dict(doc: dict, where: str) -> Wheel:
    wid = _req(doc, "id", where)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", wid):
        raise EquipmentError(f"{where}: id {wid!r} may only hold letters, digits, '_', '.', '-'")
    kind = _req(doc, "kind", where)
    name = doc.get("name", wid)
    source = doc.get("source", "")
    for key, val in (("name", name), ("source", source)):
        if not isinstance(val, str):
            raise EquipmentError(f"{where}: key {key!r} must be str, got {type(val).__name__}")
    aliases_raw = doc.get("aliases", {})
    if not isinstance(aliases_raw, dict):
        raise EquipmentError(f"{where}: [aliases] must be a table")
    bad_alias = [a for a, t in aliases_raw.items() if not isinstance(t, (str, int)) or isinstance(t, bool)]
    if bad_alias:
        raise EquipmentError(f"{where}: [aliases] {bad_alias[0]!r} must name a label (a string), got {type(aliases_raw[bad_alias[0]]).__name__}")
    aliases = {str(a).strip(): str(t).strip() for a, t in aliases_raw.items()}
    if kind in _KEYS:
        check_keys(doc, _KEYS[kind], where)
    if kind == "roulette":
        return _roulette_from_dict(doc, where, wid, name, kind, source, aliases)
    if kind == "money-wheel":
        return _money_wheel_from_dict(doc, where, wid, name, kind, source, aliases)
    raise EquipmentError(f"{where}: kind {kind!r} is not one of 'roulette', 'money-wheel'")
