"""Plot-ready numbers for the shuffle report (no plotting here)."""

from __future__ import annotations

import numpy as np

from rngcert.stats.shuffle.core import card_permutation
from rngcert.stats.shuffle.guessing import guess_count
from rngcert.stats.shuffle.laws import (
    guessing_law,
    rising_sequence_law,
)
from rngcert.stats.shuffle.order import (
    _rising_per_shoe,
)
from rngcert.stats.shuffle.position import _binned_table
from rngcert.stats.shuffle.riffle import gsr_equivalent_riffles


def shuffle_plot_data(before, after, *, bins: int = 8, guess_shoes: int = 2000) -> dict:
    """Plot-ready numbers for the shuffle report (no plotting here).

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
        Orders before and after the shuffle (identity matched in order for repeated cards).
    bins : int
        Zones per axis of the heat map.
    guess_shoes : int
        Shoes played for the guessing distribution.

    Returns
    -------
    dict
        ``heatmap``: {"bins", "observed_over_expected" (bins×bins, rows = zone before,
        columns = zone after), "observed", "expected"};
        ``rising``: {"r" (1..n), "observed" (shoe counts), "null" (expected shoe counts under
        uniform), "gsr" {k: expected counts after k GSR riffles} for k = 1..4};
        ``guessing``: {"correct" (0..n), "observed", "null"};
        ``gsr_equivalent``: :func:`gsr_equivalent_riffles`.
    """
    perm, _ = card_permutation(before, after)
    m, n = perm.shape
    bins = int(min(bins, n))
    obs = _binned_table(perm, bins)
    size = np.bincount((np.arange(n) * bins) // n, minlength=bins).astype(float)
    exp = m * np.outer(size, size) / n
    r = _rising_per_shoe(perm)
    gsr = {k: (m * rising_sequence_law(n, k)) for k in range(1, 5)} if n <= 520 else {}
    c = guess_count(perm[:guess_shoes])
    return {
        "heatmap": {"bins": bins, "observed_over_expected": obs / exp, "observed": obs, "expected": exp},
        "rising": {"r": np.arange(1, n + 1), "observed": np.bincount(r - 1, minlength=n), "null": m * rising_sequence_law(n), "gsr": gsr},
        "guessing": {"correct": np.arange(n + 1), "observed": np.bincount(c, minlength=n + 1), "null": c.size * guessing_law(n)},
        "gsr_equivalent": gsr_equivalent_riffles(perm),
    }
