"""Simulated streams for the live watch: the false-alarm rate and detection delay of
:class:`rngcert.pipeline.watch.Watcher`'s e-detector, measured on simulated wheels."""

from __future__ import annotations

import numpy as np

from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins
from rngcert.stats import sequential as sq

__all__ = ["simulate_watch"]


def simulate_watch(
    wheel,
    *,
    runs: int,
    n_fair: int,
    n_biased: int = 0,
    bias=None,
    seed: int = 0,
    alpha: float = 0.01,
    horizon: int = 100_000,
    block: int = 100,
    chunk: int = 20,
) -> np.ndarray:
    """Spin at which the watch's detector alarms in ``runs`` simulated streams (-1: no alarm).

    Each run is ``n_fair`` fair spins followed by ``n_biased`` spins with ``bias``
    (:class:`rngcert.simulate.wheel.WheelBias`), drawn with
    :func:`rngcert.simulate.wheel.simulate_spins` from its own stream
    ``rngcert.seeding.stream(seed, i)`` (the i-th child of ``SeedSequence(seed)``). The
    detector is the one :class:`rngcert.pipeline.watch.Watcher` uses, run on all runs of a
    chunk at once (array operations over runs x blocks x alternatives; no loop over spins).

    Returns
    -------
    (runs,) ndarray of int64
        1-based spin index of the alarm (a multiple of ``block``), or -1.
    """
    space = wheel.position_space()
    k = space.m
    fam = sq.wheel_alternatives(space.probs, circular=True, distance=True)
    log_a = sq.detector_threshold(alpha, horizon, block)
    out = np.full(runs, -1, dtype=np.int64)
    for c0 in range(0, runs, chunk):  # chunks of runs bound the memory
        xs = []
        for i in range(c0, min(c0 + chunk, runs)):  # loop over runs: one vectorised draw each
            rng = stream(seed, i)
            parts = [simulate_spins(wheel, n_fair, rng).positions]
            if n_biased:
                parts.append(simulate_spins(wheel, n_biased, rng, bias=bias or WheelBias()).positions)
            xs.append(np.concatenate(parts))
        x = np.stack(xs)
        fv = sq.feature_values(x, k)
        counts = {f: sq.block_counts(fv[f], k, block) for f in fam.features}
        path = sq.e_detector(counts, fam, log_a)
        out[c0 : c0 + len(xs)] = np.where(path.alarm >= 0, (path.alarm + 1) * block, -1)
    return out
