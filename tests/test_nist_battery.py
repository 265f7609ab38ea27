"""SP 800-22 as a declarative battery (issue 9 item 2): rngcert.battery.bits.SP800_22 gives
exactly run_sp800_22's results (every name, statistic and p-value), a subset is a smaller
battery, and a stream too short for a section gets one NotApplicable per name with the reason."""

from __future__ import annotations

import numpy as np

from rngcert.battery.bits import SP800_22, BitsData, run_stream
from rngcert.simulate.sources import generate_bits
from rngcert.stats.nist import DEFAULT_PARAMS, run_sp800_22
from rngcert.stats.nist import test_names as result_names
from rngcert.stats.result import TestResult


def _same(a, b):
    assert [r.name for r in a] == [r.name for r in b]
    for x, y in zip(a, b):
        assert type(x) is type(y)
        if isinstance(x, TestResult):
            assert x.pvalue == y.pvalue and x.statistic == y.statistic, x.name
        else:
            assert x.reason == y.reason


def test_battery_equals_the_reference_runner():
    bits = generate_bits("pcg64", 1_000_000, seed=11)
    ref = run_sp800_22(bits)
    got = run_stream(bits)
    assert len(got) == 188
    _same(got, ref)
    assert [s.name for s in SP800_22.specs] == list(DEFAULT_PARAMS)


def test_a_short_stream_and_a_subset():
    bits = generate_bits("philox", 20_000, seed=3)
    got = run_stream(bits)
    _same(got, run_sp800_22(bits))
    names = result_names()
    exc = [r for r in got if r.name in names["random_excursions"]]
    assert len(exc) == 8 and all("minimum length" in r.reason for r in exc)
    sub = SP800_22.without(*[k for k in DEFAULT_PARAMS if k not in ("frequency", "runs")])
    res, errors, _ = sub.evaluate(BitsData(bits), entropy=0)
    assert [r.name for r in res] == ["nist_frequency", "nist_runs"] and not errors
    _same(res, run_sp800_22(bits, tests=["frequency", "runs"]))


def test_constants_are_passed_through():
    bits = (np.random.default_rng(5).random(200_000) < 0.5).astype(np.uint8)
    _same(run_stream(bits, constants="corrected"), run_sp800_22(bits, constants="corrected"))
