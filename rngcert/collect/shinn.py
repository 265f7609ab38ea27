"""Max Shinn's recorded hand riffles (``shared/data/shuffles-shinn``): which packet each card dropped
from, the permutation and the cut of every riffle, read to fit and check the riffle model."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rngcert.errors import InputError, NoDataError

__all__ = ["ShinnRiffles", "read_shinn_riffles"]


# ----------------------------------------------------------------------------- Shinn riffles
@dataclass(frozen=True)
class ShinnRiffles:
    """Max Shinn's recorded hand riffles (shared/data/shuffles-shinn/).

    Attributes
    ----------
    drops : (n_riffles, n_cards) ndarray of int8
        The file's strings as 0/1 digits: ``drops[i, t]`` = packet (hand) of the t-th card
        dropped in riffle i.
    perms : (n_riffles, n_cards) ndarray of int32
        ``perms[i, j]`` = position before the riffle (0 = top) of the card at position j after it.
    cuts : (n_riffles,) ndarray of int
        Cards in packet "1" (the file's ``sum(line)``), taken as the top packet.
    path, sha256 : str
    """

    drops: np.ndarray
    perms: np.ndarray
    cuts: np.ndarray
    path: str
    sha256: str


def read_shinn_riffles(path: str | Path) -> ShinnRiffles:
    """Load Shinn's packet-of-origin riffle records and turn each into a permutation.

    Mapping (documented assumption). Each line is a string of '0'/'1' of length n; character t
    is the packet the t-th *dropped* card came from. In a riffle the first card dropped lands at
    the bottom of the new deck, and each packet drops from its own bottom up. Packet '1' is
    taken to be the top packet (its size ``sum(line)`` is the author's "cut fraction"), i.e.
    the original cards 0..c-1, packet '0' the cards c..n-1. Reading the string backwards gives
    the new deck from the top; the positions marked '1' receive cards 0, 1, ..., c-1 in order
    and those marked '0' receive c, ..., n-1 in order. The rising-sequence count (2 unless the
    string is constant), the cut sizes and the drop-run statistics do not depend on which
    packet is called the top.

    Raises
    ------
    InputError
        A line that is not a 0/1 string, or lines of different lengths (naming file and line).
    """
    path = Path(path)
    data = path.read_bytes()
    rows = []
    for i, raw in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if set(s) - {"0", "1"}:
            raise InputError(f"{path}:{i}: expected a string of 0 and 1, got {s[:60]!r}")
        if rows and len(s) != rows[0][1].size:
            raise InputError(f"{path}:{i}: riffle of {len(s)} cards, previous lines have {rows[0][1].size}")
        rows.append((i, np.frombuffer(s.encode(), dtype=np.uint8) - ord("0")))
    if not rows:
        raise NoDataError(f"{path}: no riffle lines")
    drops = np.stack([r[1] for r in rows]).astype(np.int8)
    m, n = drops.shape
    top_down = drops[:, ::-1]
    c = drops.sum(axis=1).astype(np.int64)
    ones = np.cumsum(top_down, axis=1)
    zeros = np.cumsum(1 - top_down, axis=1)
    perms = np.where(top_down == 1, ones - 1, c[:, None] + zeros - 1).astype(np.int32)
    return ShinnRiffles(drops, perms, c, str(path), hashlib.sha256(data).hexdigest())
