"""Shuffler models (rngcert.simulate.shufflers): permutation property, known laws, worked cases."""

import numpy as np
import pytest
import randomgen
from numpy.random import PCG64, Generator, SeedSequence
from scipy import stats

from rngcert.equipment.cards import baccarat_coup, baccarat_value, new_shoe
from rngcert.errors import InputError
from rngcert.simulate import shufflers as S
from rngcert.stats.shuffle import card_permutation, guess_count, rising_sequence_law

DECK = np.arange(52, dtype=np.int16)

ALL = [
    (S.fisher_yates, {}), (S.riffle, {}), (S.riffle, {"switch": 0.3, "times": 2}), (S.grab_riffle, {"grab": 26}),
    (S.overhand, {"p": 0.2}), (S.strip, {"packet": 5}), (S.box, {"packet": 10}), (S.cut, {"lo": 3, "hi": 40}),
    (S.wash, {"intensity": 0.2, "clump": 3}), (S.pile, {"piles": 5}), (S.pile, {"piles": 4, "random_order": True}),
    (S.shelf, {}), (S.csm, {"compartments": 7}), (S.sattolo, {}), (S.naive_swap, {}), (S.grab_riffle, {"grab": 26, "times": 3}),
    (S.cut, {"lo": 3, "hi": -3}),
]


@pytest.mark.parametrize("fn, kw", ALL)
def test_every_shuffler_permutes_rows_and_leaves_input(fn, kw):
    rng = Generator(randomgen.Xoshiro256(SeedSequence(1)))  # a randomgen bit generator drives everything
    x = np.tile(DECK, (50, 1))
    x_copy = x.copy()
    y = fn(x, rng, **kw)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert np.array_equal(np.sort(y, axis=1), x)
    assert np.array_equal(x, x_copy)  # never modified in place


@pytest.mark.parametrize("fn, kw", ALL)
def test_same_seed_same_shuffle(fn, kw):
    x = np.tile(DECK, (5, 1))
    a = fn(x, Generator(PCG64(7)), **kw)
    b = fn(x, Generator(PCG64(7)), **kw)
    assert np.array_equal(a, b)


def test_fisher_yates_positions_uniform():
    y = S.fisher_yates(np.tile(DECK, (20_000, 1)), Generator(PCG64(2)))
    where_top = np.argmax(y == 0, axis=1)  # position of the original top card
    assert stats.chisquare(np.bincount(where_top, minlength=52)).pvalue > 0.001


def test_gsr_one_riffle_exact_permutation_law():
    # n = 5: identity has probability (n+1)/2^n, every other 2-rising-sequence permutation 1/2^n
    n, m = 5, 64_000
    y = S.riffle(np.tile(np.arange(n), (m, 1)), Generator(PCG64(3)))
    keys = (y * (n ** np.arange(n))).sum(axis=1)
    vals, counts = np.unique(keys, return_counts=True)
    assert vals.size == 2**n - n  # 26 reachable permutations
    ident = (np.arange(n) * n ** np.arange(n)).sum()
    exp = np.where(vals == ident, (n + 1) / 2**n, 1 / 2**n) * m
    assert stats.chisquare(counts, exp).pvalue > 0.001


def test_gsr_rising_sequences_follow_bayer_diaconis_law():
    n, k, m = 13, 2, 40_000
    y = S.riffle(np.tile(np.arange(n), (m, 1)), Generator(PCG64(4)), times=k)
    perm, _ = card_permutation(np.tile(np.arange(n), (m, 1)), y)
    pos = np.argsort(perm, axis=1)
    r = 1 + np.count_nonzero(pos[:, 1:] < pos[:, :-1], axis=1)
    law = rising_sequence_law(n, k)
    counts = np.bincount(r - 1, minlength=n)[: 2**k]
    assert counts.sum() == m  # at most 2^k rising sequences after k riffles
    assert stats.chisquare(counts, law[: 2**k] * m).pvalue > 0.001


def test_markov_riffle_switch_rate():
    # after one riffle of the identity the two packets are the two rising sequences; the drop
    # pattern is "card came from the top packet" read down the new deck
    y = S.riffle(np.tile(DECK, (5000, 1)), Generator(PCG64(5)), switch=0.25)
    pos = np.argsort(y, axis=1)
    desc = pos[:, 1:] < pos[:, :-1]
    ok = desc.any(axis=1)
    c = 1 + np.argmax(desc, axis=1)  # first card of the bottom packet
    pkt = y[ok] >= c[ok, None]
    rate = np.mean(pkt[:, 1:] != pkt[:, :-1])
    assert rate == pytest.approx(0.25, abs=0.01)


def test_overhand_box_cut_pile_worked_cases():
    x = np.arange(6)[None, :]
    rng = Generator(PCG64(0))
    assert S.overhand(x, rng, p=1.0).tolist() == [[5, 4, 3, 2, 1, 0]]  # every card its own packet
    assert S.box(x, packet=2).tolist() == [[4, 5, 2, 3, 0, 1]]
    assert S.cut(x, rng, lo=2, hi=2).tolist() == [[2, 3, 4, 5, 0, 1]]
    assert S.pile(x, piles=2).tolist() == [[4, 2, 0, 5, 3, 1]]
    assert np.array_equal(S.wash(x, rng, intensity=0.0), x)


def test_grab_riffle_keeps_cards_in_their_grab():
    x = np.tile(np.arange(104, dtype=np.int16), (20, 1))
    y = S.grab_riffle(x, Generator(PCG64(6)), grab=52)
    # grab 1 (cards 0-25 and 52-77) is set down first, so it is the bottom deck of the result
    assert set(y[0, 52:].tolist()) == set(range(26)) | set(range(52, 78))
    with pytest.raises(InputError, match="grab"):
        S.grab_riffle(x, Generator(PCG64(6)), grab=50)


def test_shelf_piles_are_unimodal():
    # one shelf: the original order read from the top rises then falls
    y = S.shelf(np.tile(DECK, (100, 1)), Generator(PCG64(8)), shelves=1)
    d = np.diff(y.astype(int), axis=1) > 0
    assert np.all(np.count_nonzero(d[:, 1:] != d[:, :-1], axis=1) <= 1)


def test_shelf_one_pass_guessing_about_9_5():
    # Diaconis-Fulman-Holmes (2013): one pass of a 10-shelf machine from an ordered 52-card deck
    # lets a guesser with feedback get about 9.5 right (a uniform deck: H_52 = 4.54)
    x = np.tile(DECK, (20_000, 1))
    y = S.shelf(x, Generator(PCG64(9)), shelves=10)
    perm, _ = card_permutation(x, y)
    mean = guess_count(perm).mean()
    assert 9.2 <= mean <= 9.8


def test_deal_pickup_baccarat():
    rng = Generator(PCG64(10))
    shoes = S.fisher_yates(np.tile(new_shoe(8), (200, 1)), rng)
    disc, outcomes = S.deal_pickup_baccarat(shoes, cut_position=409)
    assert np.array_equal(np.sort(disc, axis=1), np.sort(shoes, axis=1))
    # the first coup's outcome is the coup of the first six cards
    first, used = baccarat_coup(baccarat_value(shoes[:, :6]))
    assert np.array_equal(outcomes[:, 0], first)
    # worked case: ordered shoe, first coup uses 6 cards, picked up banker-first: the last coup is on top
    d1, _ = S.deal_pickup_baccarat(new_shoe(8)[None, :], cut_position=409)
    assert d1[0, :4].tolist() == [412, 413, 414, 415]  # undealt cards on top
    assert d1[0, 4:10].tolist() == [406, 408, 410, 407, 409, 411]  # player hand over banker hand


def test_deal_pickup_blackjack():
    rng = Generator(PCG64(11))
    shoes = S.fisher_yates(np.tile(new_shoe(8), (100, 1)), rng)
    disc, dealer = S.deal_pickup_blackjack(shoes, cut_position=208, players=7, rule="H17")
    assert np.array_equal(np.sort(disc, axis=1), np.sort(shoes, axis=1))
    assert np.all((dealer >= -1) & (dealer <= 5)) and np.all(dealer[:, 0] >= 0)


@pytest.mark.parametrize("fn, kw, msg", [
    (S.riffle, {"switch": 0.0}, "switch"), (S.overhand, {"p": -0.1}, "p must"), (S.wash, {"intensity": -1}, "intensity"),
    (S.shelf, {"shelves": 0}, "shelves"), (S.cut, {"lo": 5, "hi": 2}, "hi"), (S.strip, {"packet": 0.5}, "packet"),
])
def test_bad_parameters_raise(fn, kw, msg):
    with pytest.raises(InputError, match=msg):
        fn(np.tile(DECK, (2, 1)), Generator(PCG64(0)), **kw)


def test_bad_shoes_and_rng():
    with pytest.raises(InputError, match="2-D"):
        S.fisher_yates(DECK, Generator(PCG64(0)))
    with pytest.raises(InputError, match="Generator"):
        S.fisher_yates(np.tile(DECK, (2, 1)), 42)


def test_strong_wash_tends_to_uniform():
    # the key keeps a correlation of about 0.29/intensity with the old position, so "uniform"
    # needs a very strong wash; a moderate one is detected
    from rngcert.stats.shuffle import displacement, position_chisquare, rising_sequences

    x = np.tile(DECK, (400, 1))
    perm, _ = card_permutation(x, S.wash(x, Generator(PCG64(12)), intensity=1000.0))
    for test in (rising_sequences, displacement, position_chisquare):
        assert test(perm).pvalue > 0.001
    perm, _ = card_permutation(x, S.wash(x, Generator(PCG64(12)), intensity=6.0))
    assert displacement(perm).pvalue < 1e-6


def test_sattolo_is_a_uniform_single_cycle():
    # Sattolo (1986): a uniform random n-cycle; n = 4 has (n-1)! = 6 of them, none with a fixed point
    n, m = 4, 60_000
    y = S.sattolo(np.tile(np.arange(n), (m, 1)), Generator(PCG64(21)))
    assert not np.any(y == np.arange(n))
    x = y.copy()
    j = np.zeros(m, dtype=int)
    for step in range(1, n):  # follow the cycle from position 0: back at 0 only after n steps
        j = x[np.arange(m), j]
        assert not np.any(j == 0)
    keys = (y * n ** np.arange(n)).sum(axis=1)
    vals, counts = np.unique(keys, return_counts=True)
    assert vals.size == 6 and stats.chisquare(counts).pvalue > 0.001


def test_naive_swap_has_the_biased_law():
    # brute force over the n**n swap sequences of "swap card i with any card" (Robbins & Bolker 1981)
    import itertools

    n, m = 3, 81_000
    law = {}
    for js in itertools.product(range(n), repeat=n):
        a = list(range(n))
        for i, j in enumerate(js):
            a[i], a[j] = a[j], a[i]
        law[tuple(a)] = law.get(tuple(a), 0) + 1
    assert sorted(law.values()) == [4, 4, 4, 5, 5, 5]  # 27 sequences cannot spread evenly over 6 orders
    y = S.naive_swap(np.tile(np.arange(n), (m, 1)), Generator(PCG64(22)))
    perms = sorted(law)
    keys = {p: i for i, p in enumerate(perms)}
    counts = np.bincount([keys[tuple(r)] for r in y.tolist()], minlength=6)
    exp = np.array([law[p] for p in perms]) / 27 * m
    assert stats.chisquare(counts, exp).pvalue > 0.001
    assert stats.chisquare(counts).pvalue < 1e-6  # and it is detectably not uniform


def test_wash_rotates_clumps_and_keeps_cards():
    x = np.tile(np.arange(416, dtype=np.int16), (200, 1))
    y = S.wash(x, Generator(PCG64(23)), intensity=0.2, clump=4, rotate=0.5)
    assert np.array_equal(np.sort(y & S.CODE_MASK, axis=1), x)
    rot = (y & S.ROTATED) > 0
    assert 0.45 < rot.mean() < 0.55
    # clumps turn together: neighbours after the wash share their orientation more often than 1/2
    assert np.mean(rot[:, 1:] == rot[:, :-1]) > 0.6
    assert np.array_equal(S.wash(y, Generator(PCG64(1)), intensity=0.0, rotate=0.0), y)
