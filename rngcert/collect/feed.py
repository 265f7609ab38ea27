"""Live result feeds: one line per round, the wheel's result beside other sources' (issue 25).

A live table logs each round as a line of text: a timestamp, a round id, the wheel controller's
result and, beside it, what another device read (a camera reader, a display). Each such shape is
described by data, a packaged feed definition (``rngcert/collect/feeds/*.toml``):

``id``, ``description``
    Name and one line.
``detect``
    A regular expression; a file is this feed when one of its first lines matches it.
``comment``
    Lines that match are not rows (counted as blank lines).
``line``
    A regular expression with named groups: ``result`` (the primary source), optionally
    ``timestamp``, ``spin_id``, ``table``, any other spin-log column, and one group per
    secondary source.
``[sources.GROUP]``
    Per source group: ``name`` (``wheel``, ``camera``, ``display``), ``what`` it is,
    ``no_reading`` (cells that mean the source gave no reading, with the reason), ``strip``
    (characters trimmed from a reading, e.g. the brackets of ``['17']``).

The ``result`` source is the result: money-wheel rule 5.5 settles wagers on the result shown
when the wheel comes to rest, whatever the electronic display showed, and rule 5.6 lets the game
continue when that equipment fails. A secondary source is compared with it round by round
(:func:`compare_sources`): rounds it did not read and rounds where it disagrees are counted and
reported as a data-integrity finding, never used as results. Lines that do not match ``line`` are
rejected with their line number. Parsing is vectorised with pyarrow's regular expressions.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Mapping

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa, pc
from rngcert.errors import InputError

__all__ = ["FeedDefinition", "feed_definitions", "load_feed", "detect_feed", "parse_feed", "compare_sources"]


@dataclass(frozen=True)
class FeedDefinition:
    """One feed shape (see the module docstring)."""

    id: str
    description: str
    detect: str
    line: str
    comment: str = r"^\s*#"
    sources: Mapping[str, dict] = field(default_factory=dict)
    spin_id_note: str = ""
    path: str = ""

    @property
    def groups(self) -> list[str]:
        """The named groups of ``line``, in order."""
        return list(re.compile(self.line).groupindex)

    @property
    def secondary(self) -> list[str]:
        """The groups of the secondary sources (every source but ``result``)."""
        return [g for g in self.sources if g != "result"]

    def source_name(self, group: str) -> str:
        return str(self.sources.get(group, {}).get("name", group))


def _definition(raw: dict, path: str) -> FeedDefinition:
    try:
        fd = FeedDefinition(id=str(raw["id"]), description=str(raw.get("description", "")), detect=str(raw["detect"]), line=str(raw["line"]),
                            comment=str(raw.get("comment", r"^\s*#")), sources=dict(raw.get("sources", {})),
                            spin_id_note=str(raw.get("spin_id_note", "")), path=path)
    except KeyError as exc:
        raise InputError(f"{path}: a feed definition needs {exc.args[0]!r}") from None
    try:
        groups = re.compile(fd.line).groupindex
        re.compile(fd.detect)
        re.compile(fd.comment)
    except re.error as exc:
        raise InputError(f"{path}: not a regular expression: {exc}") from None
    if "result" not in groups:
        raise InputError(f"{path}: the line pattern has no (?P<result>...) group")
    missing = [g for g in fd.sources if g not in groups]
    if missing:
        raise InputError(f"{path}: sources {missing} are not groups of the line pattern")
    return fd


@lru_cache(maxsize=1)
def feed_definitions() -> tuple[FeedDefinition, ...]:
    """The packaged feed definitions."""
    out = []
    for f in sorted(resources.files("rngcert.collect").joinpath("feeds").iterdir(), key=lambda p: p.name):
        if f.name.endswith(".toml"):
            out.append(_definition(tomllib.loads(f.read_text(encoding="utf-8")), f"rngcert/collect/feeds/{f.name}"))
    return tuple(out)


def load_feed(spec: str | Path) -> FeedDefinition:
    """A packaged feed by id, or a feed definition file (TOML)."""
    for fd in feed_definitions():
        if fd.id == str(spec):
            return fd
    p = Path(spec)
    if p.is_file():
        try:
            return _definition(tomllib.loads(p.read_text(encoding="utf-8")), str(p))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{p}: not a TOML feed definition: {exc}") from None
    raise InputError(f"unknown feed {spec!r}; packaged: {', '.join(f.id for f in feed_definitions())}")


def detect_feed(data: bytes, lines: int = 20) -> FeedDefinition | None:
    """The packaged feed whose ``detect`` pattern matches one of the first ``lines`` lines."""
    head = data[:1 << 14].decode("utf-8-sig", errors="replace").splitlines()[:lines]
    for fd in feed_definitions():
        pat = re.compile(fd.detect)
        if any(pat.search(ln) for ln in head):
            return fd
    return None


def parse_feed(data: bytes, name: str, feed: FeedDefinition):
    """Split a feed into spin-log columns.

    Parameters
    ----------
    data : bytes
        The file.
    name : str
        Its name (in rejects).
    feed : FeedDefinition

    Returns
    -------
    cols : dict of str to pyarrow string Array
        One column per named group of ``line`` (trimmed), for the matched lines.
    lines : (n,) int64
        1-based line of each matched row.
    rejects : list of (line, text, reason)
        Lines that do not match the pattern.
    blank : int
        Blank and comment lines.
    """
    text = data.decode("utf-8-sig", errors="replace")
    raw = _arrow.texts(text.splitlines())  # (rngcert.collect._arrow: pa.array, a str given to pc or to_numpy would import pandas)
    no = np.arange(1, len(raw) + 1, dtype=np.int64)
    blank = pc.or_(pc.equal(pc.utf8_trim_whitespace(raw), _arrow.text_scalar("")), pc.match_substring_regex(raw, feed.comment))
    blank_np = _arrow.bools(blank)
    rows = pc.filter(raw, pc.invert(blank))
    no = no[~blank_np]
    groups = feed.groups
    ext = pc.extract_regex(rows, feed.line) if len(rows) else None
    if ext is None:
        ok = np.zeros(0, dtype=bool)
    else:
        ok = ~_arrow.bools(ext.is_null())
    bad = np.flatnonzero(~ok)
    rejects = [(int(no[i]), t, f"not a line of the {feed.id} feed") for i, t in zip(bad.tolist(), rows.take(_arrow.array(bad)).to_pylist())]
    keep = _arrow.array(np.flatnonzero(ok))
    cols = {}
    for g in groups:
        col = ext.field(g).take(keep) if ext is not None else _arrow.texts([])
        cols[g] = pc.utf8_trim_whitespace(col)
    return cols, no[ok], rejects, int(blank_np.sum())


def compare_sources(result_pos: np.ndarray, live: np.ndarray, cols: Mapping[str, pa.Array], feed: FeedDefinition, resolve, labels, *,
                    lines: np.ndarray, spin_ids: pa.Array | None = None) -> list[dict]:
    """Compare each secondary source with the result, round by round.

    Parameters
    ----------
    result_pos : (n,) int array
        Wheel position of the result of each row (-1 none).
    live : (n,) bool array
        Rows that are spins (accepted): only these are compared.
    cols : mapping of str to pyarrow string Array
        The feed's columns (:func:`parse_feed`).
    feed : FeedDefinition
    resolve : callable
        ``resolve(cells) -> (n,) int array``: the wheel position of each reading (a pyarrow
        string Array), -1 where it is not a pocket of the wheel.
    labels : sequence of str
        Label of each wheel position.
    lines : (n,) int array
        Line of each row (for the first disagreements).
    spin_ids : pyarrow string Array, optional
        Round id of each row.

    Returns
    -------
    list of dict, one per secondary source
        ``source``, ``what``, ``rounds`` (compared), ``read``, ``agree``, ``disagree``,
        ``unreadable`` (a reading that is not a pocket), ``no_reading`` (reason -> rounds) and
        ``first_disagreements`` (up to 10: line, round, result, reading).
    """
    labels = list(labels)
    out = []
    live = np.asarray(live, dtype=bool)
    for g in feed.secondary:  # loop over the few sources
        src = feed.sources[g]
        no_read = {str(k): str(v) for k, v in dict(src.get("no_reading", {})).items()}
        strip = str(src.get("strip", ""))
        enc = pc.dictionary_encode(cols[g])  # the distinct cells (few) are classified one by one; null is the last slot
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        uniq = ["" if u is None else u for u in enc.dictionary.to_pylist()] + [""]
        idx = _arrow.ints(enc.indices, fill=len(uniq) - 1).astype(np.int64)
        why_u = np.array([no_read.get(t, "") for t in uniq], dtype=object)
        pos_u = np.asarray(resolve(_arrow.texts([t.strip(strip) if strip else t for t in uniq])))
        pos, none_of = pos_u[idx], why_u[idx]
        missing = live & (none_of != "")
        read = live & ~missing
        unreadable = read & (pos < 0)
        both = read & (pos >= 0)
        dis = both & (pos != result_pos)
        reasons = {str(r): int(c) for r, c in zip(*np.unique(none_of[missing].astype(str), return_counts=True))}
        at = np.flatnonzero(dis)[:10]
        ids = spin_ids.take(_arrow.array(at)).to_pylist() if spin_ids is not None else [None] * at.size
        first = [{"line": int(lines[i]), "round": r, "result": labels[int(result_pos[i])], "reading": labels[int(pos[i])]}
                 for i, r in zip(at.tolist(), ids)]
        out.append({
            "source": feed.source_name(g), "primary": feed.source_name("result"), "what": str(src.get("what", "")),
            "rounds": int(live.sum()), "read": int(read.sum()), "agree": int((both & ~dis).sum()), "disagree": int(dis.sum()),
            "unreadable": int(unreadable.sum()), "no_reading": reasons, "first_disagreements": first,
        })
    return out


def comparison_sentence(c: dict) -> str:
    """One plain sentence of a source comparison (:func:`compare_sources`)."""
    nr = sum(c["no_reading"].values())
    parts = [f"the {c['source']} ({c['what']}) read {c['read']:,} of the {c['rounds']:,} rounds"]
    if nr:
        parts.append("gave no reading in " + ", ".join(f"{v:,} ({k})" for k, v in sorted(c["no_reading"].items(), key=lambda kv: -kv[1])))
    if c.get("without_wheel_result"):
        parts.append(f"gave {c['without_wheel_result']:,} reading(s) of spins the {c['primary']} has no row for")
    if c["unreadable"]:
        parts.append(f"gave {c['unreadable']:,} reading(s) that are not a pocket of this wheel")
    if c["read"] - c["unreadable"] > 0:
        parts.append(f"agreed with the {c['primary']} in {c['agree']:,} and disagreed in {c['disagree']:,}")
    else:
        parts.append("so no round could be checked against the " + c["primary"])
    first = c["first_disagreements"][:3]
    ex = ("; first disagreements: " + ", ".join(f"line {d['line']}: {c['primary']} {d['result']}, {c['source']} {d['reading']}" for d in first)) if first else ""
    return (f"Second result source: {'; '.join(parts)}{ex}. The {c['primary']}'s result is the result (money-wheel rule 5.5) and "
            f"is what was tested; a {c['source']} that fails or disagrees is an equipment matter (rule 5.6), not a wheel fault.")
