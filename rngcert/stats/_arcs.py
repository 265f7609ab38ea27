"""Arc (sector) tables and the scan over contiguous pockets, shared by the sector scan, the
dealer signature and the power simulation (private)."""

from __future__ import annotations

import numpy as np


def _arc_tables(p2: np.ndarray, n: np.ndarray, lengths):
    """Per length: (g, k) arc probabilities, expected counts and null SDs for every start."""
    g, k = p2.shape
    cp = np.concatenate([np.zeros((g, 1)), np.cumsum(np.concatenate([p2, p2], axis=1), axis=1)], axis=1)
    out = []
    for L in lengths:  # loop over arc lengths (<= k/2)
        pa = cp[:, L : L + k] - cp[:, :k]
        e = n[:, None] * pa
        sd = np.sqrt(n[:, None] * pa * (1.0 - pa))
        out.append((pa, e, sd))
    return out


def _scan(x: np.ndarray, tables, lengths):
    """Max |z| over arcs for count arrays ``x`` of shape (..., g, k).

    Returns (max over everything (...,), per-length max (..., L), argmax info for the observed).
    """
    k = x.shape[-1]
    xd = np.concatenate([x, x], axis=-1).astype(np.float64)
    cx = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(xd, axis=-1)], axis=-1)
    zs = []
    for L, (pa, e, sd) in zip(lengths, tables):
        s = cx[..., L : L + k] - cx[..., :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, (s - e) / np.where(sd > 0, sd, 1.0), 0.0)
        zs.append(z)
    return zs
