"""The sector scan's Monte Carlo decides each replicate by integer bounds on its arc sums
(``_exceed_bounds``/``_scan_exceeds``, issue 26 item 1): exactly ``_scan_max(x) >= threshold``, ties included,
so the p-values are those of the max |z| of every replicate, with the same draws."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.stats._arcs import _arc_tables, _exceed_bounds, _flat_arcs, _scan_exceeds, _scan_max


@pytest.mark.parametrize(
    ("n", "probs", "lengths"),
    [
        (10_000, None, range(2, 19)),  # the wheel's sector scan: uint16 sums
        (1_250, None, range(1, 19)),  # one dealer group of the signature
        (40_000, None, range(2, 19)),  # uint32 sums
        (300, "zero", range(1, 5)),  # a pocket of probability 0: arcs with SD 0 (z = 0)
        (5_000, "skew", range(1, 10)),  # another null law: every arc its own e and SD
    ],
)
def test_the_bounds_decide_exactly_as_the_max_abs_z(n, probs, lengths):
    rng = np.random.default_rng(26)
    k = 37
    if probs is None:
        p = np.full(k, 1.0 / k)
    elif probs == "zero":
        p = np.full(k, 1.0 / (k - 1))
        p[5] = 0.0
    else:
        p = rng.dirichlet(np.full(k, 20.0))
    lengths = list(lengths)
    tables = _arc_tables(p[None, :], np.array([float(n)]), lengths)
    flat = _flat_arcs(tables, lengths, k, 0)
    x = rng.multinomial(n, p, size=4000)
    null = _scan_max(x, flat)
    # thresholds: replicates' own maxima (exact ties), the next doubles either side, and quantiles
    qs = np.quantile(null, [0.01, 0.5, 0.9, 0.99])
    ties = np.sort(null)[[0, 100, 2000, 3900, -1]]
    thresholds = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf), qs, [1e-9, 50.0]])
    for t in thresholds:
        got = _scan_exceeds(x, _exceed_bounds(flat, float(t), n))
        assert np.array_equal(got, null >= t), (t, int(np.count_nonzero(got != (null >= t))))
