"""Game-level tests of dealt shoes (rngcert.stats.games): calibration, cross-checks, planted bias."""

import math

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from scipy import stats
from statsmodels.sandbox.stats.runs import runstest_1samp

from rngcert.equipment.cards import new_shoe
from rngcert.errors import InputError
from rngcert.simulate import shufflers as S
from rngcert.stats import games as G


def _fy(shoes, decks, seed):
    return Generator(PCG64(seed)).permuted(np.tile(new_shoe(decks), (shoes, 1)), axis=1)


def _pvals(test, reps, shoes, n_decks, seed, **kw):
    rng = Generator(PCG64(seed))
    x = np.tile(new_shoe(n_decks), (shoes, 1))
    return np.array([test(rng.permuted(x, axis=1), **kw).pvalue for _ in range(reps)])


@pytest.mark.parametrize("test, kw", [
    (G.baccarat_outcomes, {"decks": 8, "usable": 409}),
    (G.dealer_totals, {"decks": 8, "rule": "S17", "usable": 208}),
    (G.dealer_totals, {"decks": 8, "rule": "H17", "usable": 208}),
    (G.ten_clumping, {}),
])
def test_calibration_fisher_yates(test, kw):
    p = _pvals(test, 200, 60, 8, 1, **kw)
    assert stats.kstest(p, "uniform").pvalue > 0.001
    assert np.mean(p < 0.01) <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / 200)


def test_one_coup_per_shoe_uses_pearson():
    after = _fy(400, 1, 2)
    res = G.baccarat_outcomes(after, decks=1, usable=6)
    assert res.df == 2 and res.details["hands_per_shoe"] == 1
    x2 = stats.chisquare(res.details["observed"], res.details["expected"]).statistic
    assert res.statistic == pytest.approx(x2)


def test_ten_clumping_matches_statsmodels_for_one_shoe():
    after = _fy(1, 6, 3)
    res = G.ten_clumping(after)
    x = ((after[0] % 13) >= 9).astype(float)
    z, _ = runstest_1samp(x, cutoff=0.5, correction=False)
    assert res.details["z"] == pytest.approx(z)


def test_planted_bias_detected():
    rng = Generator(PCG64(4))
    fresh = np.tile(new_shoe(8), (300, 1))
    weak = S.riffle(S.wash(fresh, rng, intensity=0.02, clump=8), rng)  # new-deck order barely mixed
    assert G.baccarat_outcomes(weak, decks=8).pvalue < 1e-6
    assert G.ten_clumping(weak).pvalue < 1e-6
    assert G.dealer_totals(weak, decks=8).pvalue < 1e-6


def test_not_applicable_and_errors():
    after = _fy(10, 8, 5)
    na = G.baccarat_outcomes(after, decks=8)
    assert not na.applicable and "shoes" in na.reason
    assert not G.dealer_totals(after, decks=8, usable=10).applicable
    with pytest.raises(InputError, match="decks"):
        G.baccarat_outcomes(after, decks=9)
    with pytest.raises(InputError, match="usable"):
        G.baccarat_outcomes(after, decks=8, usable=500)
    with pytest.raises(InputError, match="dealer rule"):
        G.dealer_totals(_fy(40, 8, 6), decks=8, rule="soft")
