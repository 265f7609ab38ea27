"""Holm's adjustment: worked example and cross-check against statsmodels."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from rngcert.stats.multiple import holm


def test_worked_example():
    # Holm (1979) style example: m = 4, sorted p = .01 .02 .03 .04 -> adjusted .04 .06 .06 .06
    rej, adj = holm([0.03, 0.01, 0.04, 0.02], alpha=0.05)
    assert np.allclose(adj, [0.06, 0.04, 0.06, 0.06])
    assert rej.tolist() == [False, True, False, False]


@pytest.mark.parametrize("seed", range(20))
def test_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    p = rng.random(rng.integers(1, 60)) ** 3
    p[rng.random(p.size) < 0.2] = p[0]  # ties
    for alpha in (0.01, 0.05):
        rej, adj = holm(p, alpha)
        r2, a2, _, _ = multipletests(p, alpha=alpha, method="holm")
        assert np.allclose(adj, a2, rtol=0, atol=1e-15)
        assert (rej == r2).all()


def test_validation():
    assert holm([])[0].size == 0
    with pytest.raises(ValueError):
        holm([0.5, 1.5])
    with pytest.raises(ValueError):
        holm([[0.5]])
