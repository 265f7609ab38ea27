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


def test_dealer_signature_pvalue_does_not_depend_on_group_order():
    """Issue 26 item 7: the Monte Carlo draws the groups in a canonical order (by n, then law), so
    the same groups in another order give the same p-value (it differed: 0.1665 / 0.1748 / 0.1636)."""
    rng = np.random.default_rng(26)
    oc = np.array([rng.multinomial(n, np.full(37, 1 / 37)) for n in (300, 700, 1000, 1500, 2000)])
    ps = {dealer_signature(oc[list(perm)], n_resamples=999, rng=Generator(PCG64(5))).pvalue
          for perm in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3])}
    assert len(ps) == 1


def test_dealer_signature_of_a_log_in_another_row_order_is_the_same(tmp_path):
    """Issue 26 item 7: the same spins (same spin ids and times, so the same spin order) in another
    row order of the file: dealers first appear in another order, so their groups are numbered otherwise;
    every p-value of the battery, the dealer signature's among them, is the same."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    rng = np.random.default_rng(7)
    n = 3000
    dealer = rng.choice(["Zoe", "Adam", "Mia", "Bob"], size=n, p=[0.1, 0.2, 0.3, 0.4])  # unequal shares: groups of unequal n
    rows = [f"{i + 1},2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,{dealer[i]},{rng.integers(37)},{rng.integers(37)}\n"
            for i in range(n)]
    head = "spin_id,timestamp,dealer,release_pocket,result\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = tmp_path / "a" / "spins.csv", tmp_path / "b" / "spins.csv"  # one name: the table (and its streams) named alike
    a.write_text(head + "".join(rows))
    b.write_text(head + "".join(rows[i] for i in rng.permutation(n)))
    eu = load_wheel("european")

    def pvalues(path):
        rep = certify_log([path], eu, seed=3, n_resamples=199, figures=False).report
        return {t["name"]: t.get("pvalue") for t in rep["tables"][0]["battery"]["tests"]}

    pa, pb = pvalues(a), pvalues(b)
    assert pa["dealer_signature"] is not None and len(pa) > 10
    assert pa == pb
