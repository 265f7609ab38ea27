"""Tests of rngcert.stats.runs: Wald-Wolfowitz runs test and the exact longest-run law."""

import itertools

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from statsmodels.sandbox.stats.runs import runstest_1samp

from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement
from rngcert.stats.runs import _prob_longest_exceeds, longest_run, runs_test

ROULETTE = (1 / 37, 18 / 37, 18 / 37)


def test_runs_hand_worked():
    # 0 0 1 1 1 0 1 0 0 1: n0 = 5, n1 = 5, R = 6; E R = 6, Var R = 2*25*(50-10)/(100*9) = 20/9
    x = [0, 0, 1, 1, 1, 0, 1, 0, 0, 1]
    r = runs_test(x, name="colour_runs", correction=False)
    assert r.details["runs"] == 6
    assert r.details["expected_runs"] == pytest.approx(6.0)
    assert r.details["variance"] == pytest.approx(20 / 9)
    assert r.statistic == pytest.approx(0.0)
    assert r.pvalue == pytest.approx(1.0)
    assert r.requirement is Requirement.INDEPENDENCE


@pytest.mark.parametrize("n, seed", [(30, 1), (45, 2), (200, 3), (5000, 4)])
def test_runs_matches_statsmodels(n, seed):
    rng = Generator(PCG64(seed))
    x = rng.integers(0, 2, n)
    z_sm, p_sm = runstest_1samp(x, cutoff=0.5, correction=True)
    r = runs_test(x, name="runs")
    d = r.details["runs"] - r.details["expected_runs"]
    assert n >= 50 or abs(d) >= 0.5  # statsmodels adds 0.5 when 0 < d < 0.5; documented difference
    assert r.statistic == pytest.approx(z_sm)
    assert r.pvalue == pytest.approx(p_sm)
    z0, p0 = runstest_1samp(x, cutoff=0.5, correction=False)
    r0 = runs_test(x, name="runs", correction=False)
    assert r0.statistic == pytest.approx(z0)
    assert r0.pvalue == pytest.approx(p0)


def test_runs_drops_minus_one_and_constant_is_not_applicable():
    a = runs_test([1, -1, 0, 1, 1, -1, 0, 0, 1], name="x")
    b = runs_test([1, 0, 1, 1, 0, 0, 1], name="x")
    assert a.statistic == b.statistic and a.n == 7
    na = runs_test([1, -1, 1, 1], name="x")
    assert isinstance(na, NotApplicable) and "constant" in na.reason
    with pytest.raises(InputError, match="2"):
        runs_test([0, 1, 2], name="x")


def test_runs_detects_alternation():
    x = np.tile([0, 1], 500)
    assert runs_test(x, name="x").pvalue < 1e-10


# ---------------------------------------------------------------- longest run
def _brute_longest_law(n, p):
    """Exact law of the longest colour run by enumeration of all 3^n sequences."""
    law = {}
    for seq in itertools.product(range(3), repeat=n):
        pr = np.prod([p[s] for s in seq])
        best = cur = 0
        prev = None
        for s in seq:
            cur = cur + 1 if (s != 0 and s == prev) else (1 if s != 0 else 0)
            prev = s
            best = max(best, cur)
        law[best] = law.get(best, 0.0) + pr
    return law


@pytest.mark.parametrize("n, p", [(6, ROULETTE), (7, (0.2, 0.5, 0.3)), (1, (0.1, 0.6, 0.3))])
def test_longest_run_law_matches_enumeration(n, p):
    law = _brute_longest_law(n, p)
    for m in range(n + 1):
        tail = sum(v for L, v in law.items() if L > m)
        assert _prob_longest_exceeds(m, n, np.array(p)) == pytest.approx(tail, abs=1e-14)


def test_longest_run_result_and_expected_value():
    n, p = 7, (0.2, 0.5, 0.3)
    law = _brute_longest_law(n, p)
    x = np.array([1, 1, 0, 2, 2, 2, 1])
    r = longest_run(x, p)
    assert r.statistic == 3
    assert r.details["colour"] == 2 and r.details["start_index"] == 3
    ge = sum(v for L, v in law.items() if L >= 3)
    le = sum(v for L, v in law.items() if L <= 3)
    assert r.pvalue == pytest.approx(min(1, 2 * min(ge, le)))
    assert r.details["expected_longest"] == pytest.approx(sum(L * v for L, v in law.items()))


def test_longest_run_law_matches_simulation():
    rng = Generator(PCG64(5))
    n, R = 500, 20_000
    seqs = rng.choice(3, size=(R, n), p=ROULETTE)
    # longest run per row, vectorised over rows by a running-length scan over columns
    cur = np.zeros(R, int)
    best = np.zeros(R, int)
    prev = np.full(R, -1)
    for j in range(n):
        s = seqs[:, j]
        cur = np.where((s != 0) & (s == prev), cur + 1, (s != 0).astype(int))
        best = np.maximum(best, cur)
        prev = s
    for m in (5, 7, 9, 11):
        exact = _prob_longest_exceeds(m, n, np.array(ROULETTE))
        emp = np.mean(best > m)
        assert abs(emp - exact) < 4 * np.sqrt(exact * (1 - exact) / R) + 1e-4


def test_longest_run_large_n_and_planted_long_run():
    rng = Generator(PCG64(6))
    x = rng.choice(3, size=1_000_000, p=ROULETTE)
    r = longest_run(x, ROULETTE)
    assert 0 < r.pvalue <= 1
    assert r.details["expected_longest"] == pytest.approx(19.5, abs=1.5)
    x[1000:1040] = 1  # a run of 40 reds
    r = longest_run(x, ROULETTE)
    assert r.statistic >= 40 and r.pvalue < 1e-6


def test_longest_run_validation():
    with pytest.raises(InputError, match="sum"):
        longest_run([1, 2], (0.5, 0.5, 0.5))
    with pytest.raises(InputError, match="values"):
        longest_run([1, 3], ROULETTE)
    assert isinstance(longest_run(np.array([], dtype=int), ROULETTE), NotApplicable)
    r = longest_run([0, 0, 0], ROULETTE)
    assert r.statistic == 0
