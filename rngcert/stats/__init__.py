"""rngcert's statistics as a Python API: pure functions on numpy arrays, each returning a
:class:`TestResult` (or :class:`NotApplicable`, with the reason and no p-value).

Nothing in this package reads files, prints or plots. Results behave like scipy.stats results:
they unpack as ``(statistic, pvalue)``, have a short repr, and show as a table in Jupyter.
Tests that need randomness (Monte Carlo p-values) take ``rng=``: pass a stream from
:func:`rngcert.seeding.stream` so the p-value can be reproduced. Without ``rng=`` they draw from
the fixed-seed stream :func:`rngcert.seeding.default_stream` of the test's name, so a call gives
the same p-value every time (``sector_scan(counts)`` works as it stands). Every function below
has numpydoc Examples, run as doctests by ``tests/test_stats_doctests.py``.

The curated API (``from rngcert.stats import ...``):

=============================  ==============================================================
uniformity                     :func:`pocket_chisquare`, :func:`g_test`, :func:`max_count`,
                               :func:`pocket_binomial`, :func:`category_frequency`,
                               :func:`sector_scan`, :func:`first_harmonic`
independence                   :func:`runs_test`, :func:`runs_test_from_counts`,
                               :func:`longest_run`, :func:`gap_test`, :func:`serial_pair`,
                               :func:`pair_counts`, :func:`serial_correlation`,
                               :func:`wheel_distance`
unpredictability               :func:`dealer_signature`, :func:`offset_counts`,
                               :func:`out_of_sample_predictor`
shuffles                       :func:`rising_sequences`, :func:`adjacent_pairs`,
                               :func:`displacement`, :func:`rank_correlation`,
                               :func:`position_chisquare`, :func:`guessing_test`,
                               :func:`riffle_tv_distance`
homogeneity, multiplicity      :func:`homogeneity_chisquare`, :func:`holm`
Monte Carlo options            :class:`MonteCarlo`, passed as ``method=``
results                        :class:`TestResult`, :class:`NotApplicable`, :class:`Requirement`
=============================  ==============================================================

Examples
--------
Pocket frequencies of a wheel, in wheel order (37 pockets, 16,808 spins of live tables would do;
here 370 made-up spins):

>>> import numpy as np
>>> from rngcert.stats import pocket_chisquare, sector_scan, runs_test
>>> counts = np.full(37, 10)
>>> counts[:3] = (13, 7, 10)
>>> stat, p = pocket_chisquare(counts)
>>> print(f"X2 = {stat:.2f}, p = {p:.4f}")
X2 = 1.80, p = 1.0000
>>> pocket_chisquare(counts)
TestResult(pocket_chisquare: statistic=1.8, df=36, pvalue=1, n=370, method='asymptotic')

An arc of adjacent pockets, with a reproducible Monte Carlo p-value:

>>> from rngcert.seeding import stream
>>> res = sector_scan(counts, rng=stream(2026, "example", "sector_scan"), n_resamples=999)
>>> res.method, res.pvalue > 0.5
('monte-carlo, R=999', True)

Runs of red (1) and black (0); -1 (zero) is removed first. 16 alternating colours make 16
runs against 9 expected (Wald–Wolfowitz, with the continuity correction below 50 values):

>>> stat, p = runs_test([1, 0, 1, 0, 1, 0, 1, 0, -1, 1, 0, 1, 0, 1, 0, 1, 0])
>>> round(stat, 3), round(p, 4)
(3.364, 0.0008)

A test that cannot be applied says why, and has no p-value to unpack:

>>> r = runs_test([1, 1, 1, 1])
>>> r.applicable, r.pvalue
(False, None)
>>> stat, p = r
Traceback (most recent call last):
...
ValueError: runs is not applicable (constant sequence (n0=0, n1=4); runs are undefined): it has no statistic or p-value
"""

from __future__ import annotations

import importlib

from rngcert.stats.result import NotApplicable, Requirement, TestResult

#: name -> submodule, for the curated functions (imported on first use: scipy.stats is slow to load)
_API = {
    "pocket_chisquare": "frequency", "g_test": "frequency", "max_count": "frequency", "pocket_binomial": "frequency",
    "category_frequency": "frequency",
    "sector_scan": "sector", "first_harmonic": "sector",
    "runs_test": "runs", "runs_test_from_counts": "runs", "longest_run": "runs",
    "gap_test": "serial", "serial_pair": "serial", "pair_counts": "serial", "serial_correlation": "serial", "wheel_distance": "serial",
    "dealer_signature": "signature", "offset_counts": "signature",
    "out_of_sample_predictor": "predict",
    "rising_sequences": "shuffle", "adjacent_pairs": "shuffle", "displacement": "shuffle", "rank_correlation": "shuffle",
    "position_chisquare": "shuffle", "guessing_test": "shuffle", "riffle_tv_distance": "shuffle",
    "homogeneity_chisquare": "sequential",
    "holm": "multiple",
    "MonteCarlo": "montecarlo",
}

__all__ = ["NotApplicable", "Requirement", "TestResult", *_API]


def __getattr__(name: str):
    mod = _API.get(name)
    if mod is None:
        raise AttributeError(f"module 'rngcert.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rngcert.stats.{mod}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
