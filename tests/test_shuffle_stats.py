"""Shuffle-quality statistics (rngcert.stats.shuffle): exact laws, cross-checks, calibration."""

import itertools
import json
import math

import numpy as np
import pytest
from _support import shared_file
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.random import PCG64, Generator
from scipy import stats

from rngcert.battery.shuffle import shuffle_results
from rngcert.errors import InputError
from rngcert.simulate import shufflers as S
from rngcert.stats import shuffle as SS
from rngcert.stats.multiple import holm

DECK = np.arange(52, dtype=np.int16)


def test_bayer_diaconis_tv_table_reproduced():
    ref = json.loads(shared_file("reference", "bayer_diaconis_tv.json").read_text())
    got = [row["tv"] for row in SS.riffle_tv_table(ref["n"], ref["riffles"])]
    assert [round(x, 3) for x in got] == ref["total_variation"]


def test_guessing_uniform_deck_is_h52():
    ref = json.loads(shared_file("reference", "guessing_test.json").read_text())
    law = SS.guessing_law(52)
    assert law @ np.arange(53) == pytest.approx(ref["uniform_52_expected_correct"], abs=1e-6)
    # simulated: Fisher-Yates decks against the direction guesser
    x = np.tile(DECK, (20_000, 1))
    perm, _ = SS.card_permutation(x, S.fisher_yates(x, Generator(PCG64(1))))
    assert SS.guess_count(perm).mean() == pytest.approx(4.538, abs=0.05)


def test_eulerian_numbers_and_rising_laws():
    assert SS.eulerian_numbers(4) == (1, 11, 11, 1)
    assert sum(SS.eulerian_numbers(10)) == math.factorial(10)
    for k in (None, 1, 3, 7):
        assert SS.rising_sequence_law(52, k).sum() == pytest.approx(1, abs=1e-12)
    assert SS.rising_sequence_law(52, 1)[2:].sum() == 0  # one riffle: at most 2 rising sequences


def _all_perms(n):
    return np.array(list(itertools.permutations(range(n))), dtype=np.int32)


def test_exact_laws_by_enumeration():
    n = 6
    P = _all_perms(n)
    pos = np.argsort(P, axis=1)
    # successions (adjacent pairs kept)
    k = np.count_nonzero(pos[:, 1:] == pos[:, :-1] + 1, axis=1)
    assert np.allclose(np.bincount(k, minlength=n) / P.shape[0], SS._succession_law(n))
    # rising sequences: Eulerian law
    r = 1 + np.count_nonzero(pos[:, 1:] < pos[:, :-1], axis=1)
    assert np.allclose(np.bincount(r - 1, minlength=n) / P.shape[0], SS.rising_sequence_law(n))
    # footrule moments of Diaconis & Graham (1977)
    d = np.abs(P - np.arange(n)).sum(axis=1)
    assert d.mean() == pytest.approx((n * n - 1) / 3) and d.var() == pytest.approx((n + 1) * (2 * n * n + 7) / 45)
    # any feedback guesser: correct-guess law is the product of Bernoulli(1/m)
    c = SS.guess_count(P)
    assert np.allclose(np.bincount(c, minlength=n + 1) / P.shape[0], SS.guessing_law(n))


def test_spearman_matches_scipy():
    x = np.tile(DECK, (3, 1))
    y = S.riffle(x, Generator(PCG64(2)), times=2)
    perm, _ = SS.card_permutation(x, y)
    res = SS.rank_correlation(perm)
    rhos = [stats.spearmanr(np.arange(52), perm[i]).statistic for i in range(3)]
    assert res.statistic == pytest.approx(np.mean(rhos))


def test_position_chisquare_matches_scipy_on_table():
    x = np.tile(DECK, (400, 1))
    perm, _ = SS.card_permutation(x, S.fisher_yates(x, Generator(PCG64(3))))
    res = SS.position_chisquare(perm, bins=4)
    x2 = stats.chi2_contingency(res.details["observed"], correction=False).statistic
    assert res.statistic == pytest.approx(x2 * 51 / 52) and res.df == 9


def test_card_permutation_with_repeats_and_errors():
    b = np.array([[3, 1, 3, 2]])
    a = np.array([[3, 3, 2, 1]])
    perm, unique = SS.card_permutation(b, a)
    assert not unique and perm.tolist() == [[0, 2, 3, 1]]  # k-th copy matched to k-th copy
    with pytest.raises(InputError, match="shoe 0"):
        SS.card_permutation(b, np.array([[3, 3, 2, 2]]))
    with pytest.raises(InputError, match="equal shape"):
        SS.card_permutation(b, a[:, :3])
    with pytest.raises(InputError, match="not a permutation"):
        SS.rising_sequences(np.array([[0, 0, 1]]))


def _fy_pvalues(test, reps, shoes, n, seed):
    rng = Generator(PCG64(seed))
    x = np.tile(np.arange(n), (shoes, 1))
    out = []
    for _ in range(reps):  # replicates of the test harness
        perm, _ = SS.card_permutation(x, S.fisher_yates(x, rng))
        out.append(test(perm).pvalue)
    return np.array(out)


@pytest.mark.parametrize("test", [SS.displacement, SS.rank_correlation, SS.position_chisquare, SS.rising_sequences])
def test_calibration_uniform_pvalues(test):
    p = _fy_pvalues(test, 300, 100, 52, 10)  # 100 shoes: asymptotic branches; rising uses normal sums
    assert stats.kstest(p, "uniform").pvalue > 0.001
    assert np.mean(p < 0.01) <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / 300)


@pytest.mark.parametrize("test", [SS.adjacent_pairs, SS.rising_sequences, lambda p: SS.guessing_test(p, max_shoes=10)])
def test_calibration_exact_branches_are_valid(test):
    # small samples use the exact (discrete) laws: P(p <= u) <= u within binomial tolerance
    p = _fy_pvalues(test, 300, 20, 20, 11)
    for u in (0.01, 0.05, 0.2, 0.5):
        assert np.mean(p <= u) <= u + 3 * math.sqrt(u * (1 - u) / 300)
    assert np.mean(p <= 0.5) >= 0.3  # not degenerate


def test_fisher_yates_battery_passes_8_decks():
    rng = Generator(PCG64(12))
    x = np.tile(np.arange(416, dtype=np.int16), (300, 1))
    res = shuffle_results(x, S.fisher_yates(x, rng), decks=8, entropy=int(rng.integers(2**31)), game="baccarat", guess_shoes=100)
    app = [r for r in res if r.applicable]
    assert len(app) == 9  # 4 card tracking, zones, guessing, fixed points, ranks, baccarat (position correlation = Spearman here)
    reject, _ = holm([r.pvalue for r in app], 0.01)
    assert not reject.any()


@pytest.mark.parametrize("k", [1, 2, 3])
def test_few_gsr_riffles_fail(k):
    rng = Generator(PCG64(13 + k))
    x = np.tile(DECK, (300, 1))
    res = shuffle_results(x, S.riffle(x, rng, times=k), decks=1, entropy=int(rng.integers(2**31)), guess_shoes=300)
    app = [r for r in res if r.applicable]
    reject, adj = holm([r.pvalue for r in app], 0.01)
    failed = {r.name for r, rej in zip(app, reject) if rej}
    assert {"rising_sequences", "adjacent_pairs", "guessing"} <= failed


def test_planted_bias_detected_at_stated_size():
    # a wash of intensity 0.3 on one deck (cards travel about 16 positions): 200 shoes must fail
    rng = Generator(PCG64(14))
    x = np.tile(DECK, (200, 1))
    perm, _ = SS.card_permutation(x, S.wash(x, rng, intensity=0.3))
    assert SS.displacement(perm).pvalue < 1e-6 and SS.rank_correlation(perm).pvalue < 1e-6


def test_monte_carlo_branch_without_serials():
    # 2-deck shoes without serials (codes = faces): identity ambiguous -> Monte Carlo p-values
    rng = Generator(PCG64(15))
    x = np.tile(np.arange(104, dtype=np.int16) % 52, (60, 1))
    fair = shuffle_results(x, rng.permuted(x, axis=1), decks=2, entropy=int(rng.integers(2**31)), n_resamples=99, mc_shoes=60)
    mc = [r for r in fair if r.applicable and r.method.startswith("monte-carlo")]
    assert len(mc) == 4 and all(0 < r.pvalue <= 1 for r in mc) and min(r.pvalue for r in mc) > 0.01 / 4
    na = {r.name for r in fair if not r.applicable}
    # 60 shoes < 65 for ranks; no orientation column
    assert na == {"position_chisquare", "guessing", "position_rank_chisquare", "orientation_share", "orientation_rank"}
    weak = shuffle_results(x, S.riffle(x, rng), decks=2, entropy=int(rng.integers(2**31)), n_resamples=99, mc_shoes=60)
    assert {r.name: r.pvalue for r in weak}["rising_sequences"] == pytest.approx(0.01)


def test_not_applicable_and_input_errors():
    x = np.tile(DECK, (2, 1))
    perm, _ = SS.card_permutation(x, x)
    na = SS.position_chisquare(perm[:1, :8])
    assert not na.applicable and "expected" in na.reason
    assert not SS.position_rank_chisquare(x, decks=1).applicable
    with pytest.raises(InputError, match="bins"):
        SS.position_chisquare(perm, bins=1)
    with pytest.raises(InputError, match="alternative"):
        SS.rising_sequences(perm, alternative="bigger")
    with pytest.raises(InputError, match="game"):
        shuffle_results(x, x, decks=1, game="poker")


def test_plot_data_shapes():
    rng = Generator(PCG64(16))
    x = np.tile(DECK, (100, 1))
    d = SS.shuffle_plot_data(x, S.riffle(x, rng, times=2), bins=4, guess_shoes=50)
    assert d["heatmap"]["observed_over_expected"].shape == (4, 4)
    assert d["rising"]["observed"].sum() == 100 and d["rising"]["null"].sum() == pytest.approx(100)
    assert d["rising"]["gsr"][2][4:].sum() == 0 and d["guessing"]["observed"].sum() == 50


def test_battery_false_fail_rate_at_most_alpha():
    # DESIGN §4: under a fair source the battery's family-wise (Holm) false-FAIL rate is <= alpha
    rng = Generator(PCG64(17))
    x = np.tile(DECK, (150, 1))
    fails, raw_p = 0, []
    reps = 100
    for _ in range(reps):  # replicates of the whole battery
        res = shuffle_results(x, S.fisher_yates(x, rng), decks=1, entropy=int(rng.integers(2**31)), game="blackjack", guess_shoes=30)
        app = [r for r in res if r.applicable]
        raw_p += [r.pvalue for r in app]
        fails += bool(holm([r.pvalue for r in app], 0.01)[0].any())
    assert fails <= 0.01 * reps + 3 * math.sqrt(0.01 * 0.99 * reps)
    assert 0.3 < np.mean(np.array(raw_p) > 0.5) < 0.7


@pytest.mark.parametrize("decks, cols", [(1, 52), (8, 409)])
def test_position_rank_chisquare_calibration(decks, cols):
    rng = Generator(PCG64(18 + decks))
    x = np.tile(np.arange(52 * decks, dtype=np.int16), (100, 1))
    p = np.array([SS.position_rank_chisquare(rng.permuted(x, axis=1)[:, :cols], decks=decks).pvalue for _ in range(200)])
    assert stats.kstest(p, "uniform").pvalue > 0.001
    assert np.mean(p < 0.01) <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / 200)


@pytest.mark.parametrize("decks, shoes", [(1, 30), (2, 7), (8, 25)])
def test_monte_carlo_null_statistics_equal_those_of_card_permutation(decks, shoes):
    """The Monte Carlo loop reads the four statistics from one stable sort a replicate
    (``_null_perm_stats``): they equal, bit for bit, the statistics of ``card_permutation``'s
    permutation (repeated cards matched in order), and the p-values equal those of the loop that
    built the permutation every replicate."""
    from rngcert.stats.result import monte_carlo_pvalue
    from rngcert.stats.shuffle.order import _null_perm_stats

    rng = Generator(PCG64(40 + decks))
    b = rng.permuted(np.tile(np.arange(52 * decks, dtype=np.int16) % 52, (shoes, 1)), axis=1)
    stats_of = _null_perm_stats(b)
    for a in [b, b[:, ::-1].copy()] + [rng.permuted(b, axis=1) for _ in range(20)]:
        perm, _ = SS.card_permutation(b, a)
        want = {k: f[1](perm) for k, f in SS._PERM_TESTS.items()}
        assert stats_of(a) == want
    after = S.riffle(b, rng)
    got = SS._mc_perm_tests(b, after, Generator(PCG64(7)), 99, shoes)
    r2 = Generator(PCG64(7))
    null = {k: [] for k in SS._PERM_TESTS}
    for _ in range(99):  # the loop as it was: a permutation a replicate
        pr, _ = SS.card_permutation(b, r2.permuted(b, axis=1))
        for k, f in SS._PERM_TESTS.items():
            null[k].append(f[1](pr))
    for r in got:
        nk, obs = np.array(null[r.name]), r.statistic
        centre = float(np.mean(nk))
        two = SS._PERM_TESTS[r.name][2] == "two-sided"
        p = monte_carlo_pvalue(abs(obs - centre), np.abs(nk - centre)) if two else monte_carlo_pvalue(obs, nk)
        assert (r.pvalue, r.details["null_mean"]) == (p, centre), r.name


@pytest.mark.slow
def test_monte_carlo_branch_is_valid_under_h0():
    # no serials (2 decks, codes = faces): the matched-identity tests use Monte Carlo p-values,
    # which must satisfy P(p <= u) <= u under Fisher-Yates shoes
    rng = Generator(PCG64(19))
    x = np.tile(np.arange(104, dtype=np.int16) % 52, (20, 1))
    ps = {k: [] for k in ("rising_sequences", "adjacent_pairs", "displacement", "rank_correlation")}
    reps = 300
    for _ in range(reps):  # replicates of the test harness
        for r in SS._mc_perm_tests(x, rng.permuted(x, axis=1), rng, 49, 20):
            ps[r.name].append(r.pvalue)
    for name, p in ps.items():
        p = np.array(p)
        for u in (0.02, 0.1, 0.5):
            assert np.mean(p <= u) <= u + 3 * math.sqrt(u * (1 - u) / reps), name


def test_gsr_equivalent_riffles_recovers_k():
    rng = Generator(PCG64(21))
    x = np.tile(DECK, (2000, 1))
    for k in (1, 3, 6):
        perm, _ = SS.card_permutation(x, S.riffle(x, rng, times=k))
        fit = SS.gsr_equivalent_riffles(perm)
        assert fit["riffles"] == pytest.approx(k) and fit["tv_distance"] == pytest.approx(SS.riffle_tv_distance(52, k))
    perm, _ = SS.card_permutation(x, S.fisher_yates(x, rng))
    assert SS.gsr_equivalent_riffles(perm)["riffles"] > 12


# ----------------------------------------------------------------------------- issue 12: faults and orientation
def test_fixed_points_and_position_correlation_calibrated_and_crosschecked():
    from rngcert.stats.shuffle import fixed_points, position_correlation

    rng = Generator(PCG64(31))
    pf, pc = [], []
    for _ in range(200):
        b = rng.permuted(np.tile(np.arange(416, dtype=np.int16), (30, 1)), axis=1) % 52  # faces: 8 copies each
        a = rng.permuted(b, axis=1)
        pf.append(fixed_points(b, a).pvalue)
        pc.append(position_correlation(b, a).pvalue)
    assert stats.kstest(pf, "uniform").pvalue > 0.001 and stats.kstest(pc, "uniform").pvalue > 0.001
    # with distinct cards the correlation is Spearman's rho of the permutation
    b = np.tile(np.arange(52, dtype=np.int16), (5, 1))
    a = rng.permuted(b, axis=1)
    r = position_correlation(b, a)
    rho = np.mean([stats.spearmanr(np.arange(52), np.argsort(row)).statistic for row in a])
    assert r.statistic == pytest.approx(rho) and r.details["uses"] == "identity"
    assert fixed_points(b, b).statistic == 5 * 52


def test_sattolo_and_naive_swap_are_caught_on_faces():
    from rngcert.stats.shuffle import fixed_points, position_correlation

    rng = Generator(PCG64(32))
    b = rng.permuted(np.tile(np.arange(416, dtype=np.int16), (400, 1)), axis=1)
    sat = S.sattolo(b, rng) % 52
    nai = S.naive_swap(b, rng) % 52
    assert fixed_points(b % 52, sat).pvalue < 1e-8 and fixed_points(b % 52, sat).details["z"] < 0
    assert position_correlation(b % 52, nai).pvalue < 1e-8


def test_orientation_tests():
    from rngcert.stats.shuffle import orientation_rank, orientation_share

    rng = Generator(PCG64(33))
    x = np.tile(np.arange(416, dtype=np.int16), (200, 1))
    y = S.wash(S.fisher_yates(x, rng), rng, intensity=0.3, clump=4, rotate=0.5)
    rot = ((y & S.ROTATED) > 0).astype(np.int8)
    cards = y & S.CODE_MASK
    assert orientation_share(rot).pvalue > 0.001 and orientation_rank(rot, cards).pvalue > 0.001
    # edge sorting: the high cards turned before a wash that never turns anything
    sorted_rot = ((cards % 13) >= 9).astype(np.int8)
    assert orientation_rank(sorted_rot, cards).pvalue < 1e-10
    assert orientation_share(np.zeros_like(rot)).pvalue < 1e-10
    assert not orientation_rank(np.zeros_like(rot), cards).applicable


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(2, 120), st.integers(1, 20), st.integers(0, 2**32 - 1), st.sampled_from(["uniform", "riffle", "identity", "reversed"]))
def test_guess_count_linked_list_equals_the_quadratic_scan(n, m, seed, kind):
    from rngcert.simulate.shufflers import riffle
    from rngcert.stats.shuffle import _guess_count_quadratic, guess_count

    rng = np.random.default_rng(seed)
    base = np.tile(np.arange(n), (m, 1))
    perm = {"uniform": np.argsort(rng.random((m, n)), axis=1), "riffle": riffle(base, rng),
            "identity": base, "reversed": base[:, ::-1].copy()}[kind]
    assert np.array_equal(guess_count(perm), _guess_count_quadratic(perm))
