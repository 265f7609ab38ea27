"""Tests of rngcert.stats.signature: offset counts and the dealer-signature scan."""

import numpy as np
import pytest
from numpy.random import PCG64, Generator

from rngcert.errors import InputError
from rngcert.stats.result import Requirement
from rngcert.stats.serial import wheel_distance
from rngcert.stats.signature import dealer_signature, offset_counts

K = 37


def test_offset_counts_hand_example():
    pos = np.array([5, 0, 36, 10])
    ref = np.array([3, 35, 0, 10])
    grp = np.array([0, 1, 1, 0])
    oc = offset_counts(pos, ref, K, groups=grp)
    assert oc.shape == (2, K)
    assert oc[0, 2] == 1 and oc[0, 0] == 1  # 5-3 = 2; 10-10 = 0
    assert oc[1, 2] == 1 and oc[1, 36] == 1  # (0-35) mod 37 = 2; (36-0) = 36
    assert oc.sum() == 4
    assert offset_counts(pos, ref, K, groups=grp, n_groups=4).shape == (4, K)
    with pytest.raises(InputError, match="n_groups"):
        offset_counts(pos, ref, K, groups=grp, n_groups=1)
    with pytest.raises(InputError, match="length"):
        offset_counts(pos, ref[:3], K)


def _signature_wheel(rng, n, boost=1.15, centre=10, width=7):
    """Results whose offset from the previous result favours a 7-pocket sector centred `centre` past it."""
    w = np.ones(K)
    sector = (centre + np.arange(width) - width // 2) % K
    w[sector] *= boost
    d = rng.choice(K, size=n, p=w / w.sum())
    start = rng.integers(0, K)
    return (start + np.cumsum(d)) % K, sector


def test_dealer_signature_power_previous_result_reference():
    rng = Generator(PCG64(2026))
    pos, sector = _signature_wheel(rng, 20_000)
    dealers = rng.integers(0, 4, pos.size - 1)
    oc = offset_counts(pos[1:], pos[:-1], K, groups=dealers)
    r = dealer_signature(oc, group_labels=["a", "b", "c", "d"], n_resamples=999, rng=Generator(PCG64(1)))
    assert r.requirement is Requirement.UNPREDICTABILITY
    assert r.pvalue < 0.01
    assert set(r.details["best_arc"]["positions"]) & set(sector)
    assert [g["label"] for g in r.details["groups"]] == ["a", "b", "c", "d"]
    assert wheel_distance(pos, K).pvalue < 0.01


def test_dealer_signature_pooled_single_group():
    rng = Generator(PCG64(3))
    pos, _ = _signature_wheel(rng, 20_000)
    oc = offset_counts(pos[1:], pos[:-1], K)
    r = dealer_signature(oc[0], n_resamples=999, rng=Generator(PCG64(4)))
    assert r.pvalue < 0.01
    assert r.details["best_arc"]["label"] == "0"


def test_dealer_signature_fair_and_invalid_labels():
    rng = Generator(PCG64(5))
    pos = rng.integers(0, K, 3000)
    oc = offset_counts(pos[1:], pos[:-1], K, groups=rng.integers(0, 2, 2999))
    r = dealer_signature(oc, n_resamples=199, rng=Generator(PCG64(6)))
    assert r.pvalue > 0.01
    with pytest.raises(InputError, match="group_labels"):
        dealer_signature(oc, group_labels=["x"], rng=Generator(PCG64(6)))
