"""The anytime-valid change detector of one table (:class:`Watcher`) and its status line: the
e-detector of :mod:`rngcert.stats.sequential`, the alarm when the evidence crosses its threshold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from rngcert.stats import sequential as sq


@dataclass
class WatchStatus:
    spins: int
    blocks: int
    log_evidence: float
    log_threshold: float
    leader: str
    alarm: bool
    alarm_spin: int | None = None

    def line(self) -> str:
        state = "ALARM" if self.alarm else "ok"
        return (
            f"{self.spins} spins · evidence log M = {self.log_evidence:.2f} / threshold {self.log_threshold:.2f} "
            f"(M/A = {np.exp(self.log_evidence - self.log_threshold):.2g}) · leading: {self.leader} · {state}"
        )


_POSITION = re.compile(r"^position (\d+) ")
_ARC = re.compile(r"^positions (\d+)\.\.(\d+) \(width (\d+)\) ")
_TOWARDS = re.compile(r"^first harmonic towards position (\d+(?:\.\d+)?),")


def alternative_name(name: str, labels, circular: bool) -> str:
    """An alternative's name with the wheel's own labels, for people.

    The statistics name pocket alternatives by wheel position (``position 8 +40%``), which a
    reader takes for pocket 8; this names the result as the log writes it, with its position.

    Parameters
    ----------
    name : str
        A name from :func:`rngcert.stats.sequential.wheel_alternatives`.
    labels : sequence of str
        The outcome space's labels, by position.
    circular : bool
        Whether positions are places on the wheel (else they are symbols).

    Returns
    -------
    str
        e.g. ``result 17 (wheel position 8) +40%``; names of other kinds unchanged.
    """
    m = _POSITION.match(name)
    if m and int(m.group(1)) < len(labels):
        s = int(m.group(1))
        where = f" (wheel position {s})" if circular else ""
        return f"result {labels[s]}{where} " + name[m.end():]
    m = _ARC.match(name)
    if m and max(int(m.group(1)), int(m.group(2))) < len(labels):
        s, e, w = (int(g) for g in m.groups())
        return f"results {labels[s]}..{labels[e]} (wheel positions {s}..{e}, width {w}) " + name[m.end():]
    m = _TOWARDS.match(name)
    if m and circular and labels:
        x = float(m.group(1))
        lo, hi = int(x) % len(labels), (int(x) + 1) % len(labels)
        at = f"result {labels[lo]}" if x == int(x) else f"the arc between results {labels[lo]} and {labels[hi]}"
        return f"first harmonic towards {at} (wheel position {m.group(1)})," + name[m.end():]
    return name


class Watcher:
    """Incremental e-detector over a stream of spins (wheel positions, void spins removed).

    Spins are buffered into blocks of ``block``; after each full block the mixture
    Shiryaev–Roberts e-detector (:func:`rngcert.stats.sequential.e_detector`) is updated.
    Guarantee: :func:`rngcert.stats.sequential.detector_threshold` (any false alarm within
    ``horizon`` spins has probability <= ``alpha``; mean time to false alarm >= horizon/alpha).
    """

    def __init__(self, space, *, alpha: float = 0.01, horizon: int = 100_000, block: int = 100, release: bool = False):
        self.k = space.m
        self.labels, self.circular = tuple(space.labels), bool(space.circular)
        self.block = block
        self.family = sq.wheel_alternatives(space.probs, circular=space.circular, distance=space.circular and bool(np.allclose(space.probs, 1 / space.m)), release=release)
        self.log_threshold = sq.detector_threshold(alpha, horizon, block)
        self.alpha, self.horizon = alpha, horizon
        self.state = sq.DetectorState.start(self.family)
        self.pending = np.zeros(0, dtype=np.int64)
        self.pending_release = np.zeros(0, dtype=np.int64)
        self.previous: int | None = None
        self.spins = 0
        self.log_m = -np.inf
        self.leader = "-"
        self.alarm_spin: int | None = None
        self.use_release = release

    def guarantee(self) -> str:
        return (
            f"P(any false alarm within the first {self.horizon} spins of a fair wheel) <= {self.alpha} "
            f"(within t spins: <= {self.alpha}*t/{self.horizon}); "
            f"mean spins to a false alarm >= {self.horizon / self.alpha:.3g} (mixture Shiryaev-Roberts e-detector, "
            f"Shin-Ramdas-Rinaldo 2022, checked every {self.block} spins, {self.family.size} alternatives)"
        )

    def update(self, positions, release=None) -> WatchStatus:
        """Add spins (in order); returns the status after the last complete block."""
        x = np.concatenate([self.pending, np.asarray(positions, dtype=np.int64)])
        r = np.concatenate([self.pending_release, np.asarray(release if release is not None else np.full(len(positions), -1), dtype=np.int64)])
        nfull = (x.size // self.block) * self.block
        if nfull and self.alarm_spin is None:
            xs, rs = x[:nfull], r[:nfull]
            fv = sq.feature_values(xs, self.k, release=rs if self.use_release else None, previous=self.previous)
            counts = {f: sq.block_counts(fv[f], self.k, self.block) for f in self.family.features}
            path = sq.e_detector(counts, self.family, self.log_threshold, state=self.state)
            if path.alarm >= 0:
                b = int(path.alarm)
                self.alarm_spin = self.spins + (b + 1) * self.block
                self.log_m = float(path.log_m[b])
                self.leader = alternative_name(self.family.names[int(path.leader[b])], self.labels, self.circular)
                # state up to the alarm block only
                nfull = (b + 1) * self.block
                self.state = sq.DetectorState(self.state.log_r, self.state.blocks + b + 1)
            else:
                self.state = path.state
                self.log_m = float(path.log_m[-1])
                self.leader = alternative_name(self.family.names[int(path.leader[-1])], self.labels, self.circular)
            self.previous = int(x[nfull - 1])
            self.spins += nfull
        self.pending, self.pending_release = x[nfull:], r[nfull:]
        return self.status()

    def status(self) -> WatchStatus:
        return WatchStatus(self.spins + self.pending.size, self.state.blocks, self.log_m, self.log_threshold, self.leader, self.alarm_spin is not None, self.alarm_spin)
