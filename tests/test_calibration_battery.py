"""Calibration of the whole wheel battery on 1,000 fair simulated wheels (issue 2, done means 1).

Each fair wheel has 1,000 spins and three dealers; Monte Carlo tests use R = 199 to keep the run
near a minute. Checked:

* the battery's false-FAIL rate is at most alpha = 0.01 within binomial tolerance;
* every test's size at alpha = 0.01 is at most alpha within binomial tolerance;
* p-values are uniform (KS, p > 0.001) for the tests whose null law is continuous in the limit;
  the exact discrete tests (max_count, min-Holm binomial, longest run) and the Monte Carlo tests
  with R = 199 are only required to be valid (P(p <= u) <= u), which the size check covers.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.equipment.wheel import load_wheel

pytestmark = pytest.mark.slow  # 1,000 fair wheels through the whole battery

N_WHEELS = 1000
N_SPINS = 1000
ALPHA = 0.01

CONTINUOUS = {
    "pocket_chisquare",
    "outside_colour",
    "outside_parity",
    "outside_low_high",
    "outside_dozen",
    "outside_column",
    "first_harmonic",
    "runs_colour",
    "runs_parity",
    "runs_low_high",
    "gap_test",
    "serial_correlation",
    "wheel_distance",
}


@pytest.fixture(scope="module")
def fair_runs():
    space = load_wheel("european").position_space()
    rng = np.random.Generator(np.random.PCG64(20261130))
    dealer = (np.arange(N_SPINS) // 50 % 3).astype(np.int32)
    verdicts, pvals = [], {}
    for i in range(N_WHEELS):
        x = rng.integers(0, 37, N_SPINS)
        data = WheelData(x, space, dealer=dealer, dealer_labels=("a", "b", "c"))
        out = WHEEL.run(data, entropy=10_000 + i, alpha=ALPHA, n_resamples=199)
        assert not out.errors
        verdicts.append(out.verdict)
        for r in out.results:
            if r.applicable:
                pvals.setdefault(r.name, []).append(r.pvalue)
    return np.array(verdicts), {k: np.array(v) for k, v in pvals.items()}


def test_false_fail_rate_at_most_alpha(fair_runs):
    verdicts, _ = fair_runs
    fails = int(np.sum(verdicts == "FAIL"))
    limit = sps.binom.ppf(0.999, N_WHEELS, ALPHA)  # 21 of 1,000
    assert fails <= limit, f"{fails} false FAILs in {N_WHEELS} fair wheels (limit {limit})"
    assert np.sum(verdicts == "INCONCLUSIVE") == 0


def test_each_test_is_valid_at_alpha(fair_runs):
    _, pvals = fair_runs
    limit = sps.binom.ppf(0.999, N_WHEELS, ALPHA) / N_WHEELS
    assert len(pvals) >= 19
    for name, p in pvals.items():
        assert p.size == N_WHEELS, name
        assert np.mean(p < ALPHA) <= limit, f"{name}: size {np.mean(p < ALPHA):.3f} at alpha {ALPHA}"
        assert np.mean(p < 0.05) <= sps.binom.ppf(0.999, N_WHEELS, 0.05) / N_WHEELS, name


def test_continuous_tests_have_uniform_pvalues(fair_runs):
    _, pvals = fair_runs
    for name in CONTINUOUS:
        ks = sps.kstest(pvals[name], "uniform").pvalue
        assert ks > 0.001, f"{name}: KS p = {ks:.2g}"
