"""Out-of-sample predictor test (issue 5, unpredictability). Runtime < 1 s."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.simulate.wheel import WheelBias, simulate_spins
from rngcert.stats.predict import out_of_sample_predictor
from rngcert.stats.result import NotApplicable, Requirement

EURO = load_wheel("european")
K = 37


def test_worked_example_by_hand():
    # one group, k = 10, width 3; reference 0 so offsets = positions.
    # fit half (first 10): offsets 4,4,5,5,5,6,0,1,9,4 -> arc {4,5,6} holds 7 -> start 4
    # test half: 5, 6, 2, 4, 8, 5, 3, 7, 0, 6 -> hits 5,6,4,5,6 = 5 of 10
    pos = np.array([4, 4, 5, 5, 5, 6, 0, 1, 9, 4, 5, 6, 2, 4, 8, 5, 3, 7, 0, 6])
    r = out_of_sample_predictor(pos, np.zeros(20, dtype=int), 10, width=3, min_fit=5)
    g = r.details["groups"][0]
    assert g["arc_start_offset"] == 4 and g["fit_hits"] == 7
    assert r.statistic == 5 and r.n == 10 and r.method == "exact"
    assert r.requirement is Requirement.UNPREDICTABILITY
    # P(Bin(10, 0.3) >= 5), cross-checked against scipy's exact binomial test
    assert r.pvalue == pytest.approx(sps.binom.sf(4, 10, 0.3), rel=1e-12)
    assert r.pvalue == pytest.approx(sps.binomtest(5, 10, 0.3, alternative="greater").pvalue, rel=1e-12)


def test_groups_are_fitted_separately():
    rng = np.random.default_rng(1)
    n = 400
    ref = rng.integers(0, K, n)
    grp = np.repeat([0, 1], n // 2)
    off = np.where(grp == 0, 3, 20)  # each dealer has her own offset
    pos = (ref + off) % K
    r = out_of_sample_predictor(pos, ref, K, groups=grp, group_labels=["D1 cw", "D2 ccw"], width=1)
    assert [g["arc_start_offset"] for g in r.details["groups"]] == [3, 20]
    assert r.statistic == r.n == 200 and r.pvalue < 1e-100
    assert r.details["groups"][1]["label"] == "D2 ccw"


def test_planted_dealer_signature_is_predicted():
    sim = simulate_spins(EURO, 4000, np.random.default_rng(2), bias=WheelBias(signature=(12, 5, 2.0)), with_release=True, dealers=2)
    r = out_of_sample_predictor(sim.positions, sim.release, K, groups=sim.dealer.astype(np.int64), width=5)
    assert r.pvalue < 1e-6 and r.details["hit_rate"] > 1.5 * 5 / K


def test_previous_result_reference():
    sim = simulate_spins(EURO, 4000, np.random.default_rng(3), bias=WheelBias(signature=(12, 5, 2.0)))
    x = sim.positions.astype(np.int64)
    r = out_of_sample_predictor(x[1:], x[:-1], K, width=5)
    assert r.pvalue < 1e-6


def test_calibration_fair_wheel():
    """Under H0 the p-value is exact (discrete, so conservative): P(p <= a) <= a."""
    rng = np.random.default_rng(20261130)
    R, n = 400, 600
    ps = []
    for i in range(R):
        ref = rng.integers(0, K, n)
        pos = rng.integers(0, K, n)
        grp = rng.integers(0, 3, n)
        ps.append(out_of_sample_predictor(pos, ref, K, groups=grp, width=5).pvalue)
    ps = np.array(ps)
    for a in (0.05, 0.1, 0.25, 0.5):
        # binomial bound: share <= a + 3 SE
        assert np.mean(ps <= a) <= a + 3 * np.sqrt(a * (1 - a) / R)
    # hits are Bin(N, 5/37): mean of the standardised statistic near 0 (not conservative in the mean)
    assert 0.2 < np.mean(ps) < 0.7


def test_not_applicable_and_errors():
    r = out_of_sample_predictor(np.arange(10) % K, np.zeros(10, dtype=int), K)
    assert isinstance(r, NotApplicable) and "20 spins" in r.reason
    with pytest.raises(InputError, match="width"):
        out_of_sample_predictor([1, 2], [0, 0], K, width=K)
    with pytest.raises(InputError, match="0..36"):
        out_of_sample_predictor([1, 40], [0, 0], K)
    with pytest.raises(InputError, match="length"):
        out_of_sample_predictor([1, 2, 3], [0, 0], K)
    with pytest.raises(InputError, match="integers"):
        out_of_sample_predictor([1.5, 2.0], [0, 0], K)
    pos = np.random.default_rng(4).integers(0, K, 100)
    before = pos.copy()
    out_of_sample_predictor(pos, np.zeros(100, dtype=int), K)
    assert np.array_equal(pos, before)
