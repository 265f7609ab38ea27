"""A wheel controller's capture (:mod:`rngcert.collect.protocol`) and a live result feed
(:mod:`rngcert.collect.feed`) read into the spin-log core.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rngcert.collect.spinlog.columns import _decode, _resolve_labels
from rngcert.collect.spinlog.core import KNOWN_COLUMNS, RejectedRow, _process, sha256_of
from rngcert.errors import InputError


def _capture_format(fmt: str) -> str:
    """A wheel controller's capture format (``protocol``, ``protocol:NAME``, ``protocol:FILE.toml``)
    checked here (an unknown or invalid protocol is an :class:`EquipmentError`) and passed on to the
    other format checks as ``auto``; any other format unchanged."""
    if fmt == "protocol" or fmt.startswith("protocol:"):
        from rngcert.collect import protocol

        protocol.resolve(fmt)
        return "auto"
    return fmt


def _read_capture(data: bytes, name: str, fmt: str, wheel, columns, text_codes: bool) -> dict:
    """Read a wheel controller's capture (:mod:`rngcert.collect.protocol`): one row per game, as the
    CSV reader gives rows (result, spin_id, void, direction, rotor_speed, timestamp), with the
    capture's rejected lines and notes (void games by reason, assumed units)."""
    from rngcert.collect import protocol

    proto = protocol.resolve(fmt)
    cols, lines, rej, blank, header, pnotes = protocol.read_capture(data, name, proto)
    rej = [RejectedRow(name, r.line, r.column, r.reason, r.text) for r in rej]
    part = _process(cols, lines, rej, name, wheel, columns, None, header, text_codes=text_codes)
    part.update(format=f"protocol:{proto.name}", sha256=sha256_of(data), blank=blank, size=len(data), rows=int(len(lines) + len(rej)))
    part["notes"] = pnotes + list(part["notes"])
    return part


# ---------------------------------------------------------------------------- main entry
def _options_iv(fmt: str, columns) -> dict[str, str]:
    """Validate the format name and the column mapping; returns the mapping with lower-case keys."""
    if fmt.startswith("feed:"):  # a live result feed: a packaged id or a lab's own definition file
        from rngcert.collect.feed import load_feed

        load_feed(fmt[5:])
    elif fmt not in ("auto", "csv", "jsonl", "permanence"):
        raise InputError(f"format {fmt!r} is not one of 'auto', 'csv', 'jsonl', 'permanence', 'feed:ID-or-TOML'")
    columns = {k.lower(): v for k, v in (columns or {}).items()}
    unknown = sorted(set(columns) - set(KNOWN_COLUMNS))
    if unknown:
        raise InputError(f"--column names {unknown} are not spin-log columns; known: {', '.join(KNOWN_COLUMNS)}")
    return columns


def _read_feed(data: bytes, name: str, feed_id: str, wheel, columns, text_codes: bool, table: str | None = None) -> dict:
    """Read a live result feed (:mod:`rngcert.collect.feed`): its primary result as the spin log's
    ``result``, and each secondary source compared with it per table (``source_comparison``)."""
    from rngcert.collect.feed import compare_sources, load_feed, parse_feed

    feed = load_feed(feed_id)
    cols, lines, bad, blank = parse_feed(data, name, feed)
    rej = [RejectedRow(name, line, "*", reason, text[:200]) for line, text, reason in bad]
    part = _process(cols, lines, rej, name, wheel, columns, None, list(cols), text_codes=text_codes)
    part.update(format=f"feed:{feed.id}", sha256=sha256_of(data), blank=blank, size=len(data))
    part["notes"] = list(part["notes"]) + [f"{name}: read as the {feed.id} feed ({feed.description}; {feed.path})"] + (
        [f"{name}: spin ids: {feed.spin_id_note}"] if feed.spin_id_note else [])
    comp: dict[str, list] = {}
    if feed.secondary:
        tab = cols.get("table")
        codes, labels = _decode(tab) if tab is not None else (np.zeros(len(lines), dtype=np.int64), [table or Path(name).stem])
        for ti, t in enumerate(labels):  # loop over the few tables
            live = part["accepted_mask"] & (codes == ti)
            comp[str(t)] = compare_sources(part["pos"].astype(np.int64), live, cols, feed, lambda c: _resolve_labels(c, wheel)[0],
                                           wheel.position_space().labels, lines=lines, spin_ids=cols.get("spin_id"))
    part["source_comparison"] = comp
    return part
