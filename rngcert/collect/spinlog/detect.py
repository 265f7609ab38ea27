"""Which format a spin-log file is in (CSV, JSON Lines, permanence list, a controller capture or a live feed).
"""

from __future__ import annotations

import re
from pathlib import Path


# ---------------------------------------------------------------------------- readers
def detect_format(path: Path, data: bytes) -> str:
    suf = path.suffix.lower()
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"*", b"[") or b"\n*" in data[:4096] or b"\n[" in data[:4096]:
        from rngcert.collect.protocol import sniff  # a wheel controller's capture

        proto = sniff(data[: 1 << 15])
        if proto is not None:
            return proto
    if suf in (".jsonl", ".ndjson"):
        return "jsonl"
    head = data[:4096].lstrip(b"\xef\xbb\xbf").lstrip()
    first = head.split(b"\n", 1)[0]
    if first.startswith((b"{", b"[")):  # (a JSON array is named as such by the JSON Lines reader)
        return "jsonl"
    from rngcert.collect.feed import detect_feed

    fd = detect_feed(data)
    if fd is not None:  # a live result feed described by a packaged definition
        return "feed:" + fd.id
    if re.search(rb"[A-Za-z_]", first) and suf not in (".csv", ".tsv") and _numbers_under_a_title(head):
        return "permanence"  # a titled permanence list without its .txt name (standard input, .dat): c20's kind
    if re.search(rb"[A-Za-z_]", first) and suf != ".txt":
        return "csv"
    if suf in (".csv", ".tsv") and re.search(rb"[A-Za-z_]", first):
        return "csv"
    return "permanence"


def _numbers_under_a_title(head: bytes) -> bool:
    """True when the first line is a title (words, no CSV delimiter) and every following line of the
    head (at least 3) holds two or more whole numbers and nothing else: a permanence list, which a
    CSV header of one column over rows of many fields cannot be."""
    lines = [ln.strip() for ln in head.splitlines()]
    if not lines or re.search(rb"[,;\t]", lines[0]):
        return False
    body = [ln for ln in lines[1:-1] if ln]  # the last line of the head may be cut
    return len(body) >= 3 and all(re.fullmatch(rb"\d+(?:[ ,;\t]+\d+)+[ ,;\t]*", ln) for ln in body)
