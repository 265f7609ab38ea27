"""Casino War (issue 27 item 3): a card game added through the game registry, with its deal and
pickup, exact house edge, tie-count tracker and game-level test, certified end to end."""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from rngcert.collect.shoelog import read_shoe_log, write_shoe_log
from rngcert.equipment import games as G
from rngcert.equipment.procedure import load_procedure
from rngcert.errors import EquipmentError
from rngcert.pipeline.certify_shuffle import certify_log
from rngcert.simulate import casino_war as W
from rngcert.simulate.deal import rebuild_before
from rngcert.simulate.games import play
from rngcert.simulate.procedure import simulate_log
from rngcert.stats.trackers import tracker_edge


def _enumerated_edge(decks: int) -> Fraction:
    """Expected return of one unit going to war, by enumerating the ranks of the seat's card, the
    dealer's, and after a tie the two war cards, without replacement from the full shoe."""
    c, N = 4 * decks, 52 * decks
    ev = Fraction(0)
    for p1, d1 in product(range(13), repeat=2):
        pr = Fraction(c, N) * Fraction(c - (p1 == d1), N - 1)
        if p1 != d1:
            ev += pr * (1 if p1 > d1 else -1)
            continue
        left = [c - 2 * (r == p1) for r in range(13)]
        for p2, d2 in product(range(13), repeat=2):
            q = Fraction(left[p2], N - 2) * Fraction(left[d2] - (p2 == d2), N - 3)
            ev += pr * q * (1 if p2 >= d2 else -2)  # war won or tied: the raise pays 1:1, the original pushes
    return ev


@pytest.mark.parametrize("decks, rounded", [(6, 0.0288), (8, 0.0290)])
def test_house_edge_is_the_exact_enumeration(decks, rounded):
    he = W.house_edge(decks, exact=True)
    assert he["exact"]["go_to_war"] == -_enumerated_edge(decks)
    assert round(he["go_to_war"], 4) == rounded  # Wizard of Odds: 2.88% for six decks, going to war
    assert he["exact"]["surrender"] == Fraction(4 * decks - 1, 52 * decks - 1) / 2
    if decks == 6:
        assert round(he["tie_bet"], 4) == 0.1865  # the 10:1 tie bet, 18.65% for six decks
    assert he["edge"] == he["go_to_war"] and "going to war" in he["basis"]


def test_dealt_shoes_return_minus_the_house_edge():
    rng = np.random.default_rng(7)
    shoes = np.stack([rng.permutation(312) % 52 for _ in range(3000)]).astype(np.int16)
    d = W.war_rounds(shoes, cut_position=252, players=7)
    r = d["returns"][d["starts"] >= 0]
    he = W.house_edge(6)
    assert abs(r.mean() + he["go_to_war"]) < 3 * r.std() / np.sqrt(r.size)
    assert abs(r.std() - he["sd_go_to_war"]) < 0.01
    assert np.all(d["starts"][:, 0] == 0) and np.all((d["starts"] < 252) | (d["starts"] == -1))
    # a round with a war burns three cards face down; every dealt card belongs to one round
    fought = (d["ends"] - d["starts"]) > 8
    assert d["burn"].sum() == 3 * fought.sum()
    assert np.array_equal(np.where(d["starts"] >= 0, d["ends"] - d["starts"], 0).sum(axis=1), d["n_dealt"])


@pytest.mark.parametrize("pickup", ["last-on-top", "first-on-top"])
def test_pickup_is_a_permutation_and_the_rebuild_is_exact_where_seen(pickup):
    rng = np.random.default_rng(3)
    shoes = np.stack([rng.permutation(416) for _ in range(40)]).astype(np.int16)  # serialised 8 decks
    d = W.deal_pickup_casino_war(shoes, cut_position=400, pickup=pickup, players=3)
    assert np.array_equal(np.take_along_axis(shoes, d.order, axis=1), d.discards)
    assert np.array_equal(np.sort(d.discards, axis=1), np.sort(shoes, axis=1))
    dealt = np.where(np.arange(416)[None, :] < d.n_dealt[:, None], shoes, -1)
    rb = rebuild_before(W.deal_pickup_casino_war, dealt, d.n_dealt, pickup=pickup, players=3)
    known = rb >= 0
    assert np.array_equal(rb[known], d.discards[known]) and np.array_equal(known.sum(axis=1), d.n_dealt)
    with pytest.raises(Exception, match="pickup"):
        W.deal_pickup_casino_war(shoes, cut_position=400, pickup="sideways")


def test_the_counter_bets_the_tie_only_when_the_unseen_cards_favour_it():
    rng = np.random.default_rng(11)
    fair = np.stack([rng.permutation(416) % 52 for _ in range(200)])
    stake, ret = W.tie_count_tracker(fair, decks=8, cut_position=400)
    assert stake.sum() < 0.05 * 200  # a well-shuffled shoe rarely makes the tie bet favourable
    # ranks 2-10 dealt first: the last 128 cards are J, Q, K, A only, a tie about one round in four
    low = np.array([f for f in range(52) if 1 <= f % 13 <= 9])
    high = np.array([f for f in range(52) if f % 13 == 0 or f % 13 >= 10])
    stacked = np.stack([np.concatenate([rng.permutation(np.tile(low, 8)), rng.permutation(np.tile(high, 8))]) for _ in range(50)])
    stake, ret = W.tie_count_tracker(stacked, decks=8, cut_position=400, players=1)
    assert stake.min() > 0 and ret.sum() / stake.sum() > 0.5
    assert tracker_edge("t", stake, ret).pvalue < 1e-6


def test_war_ties_sees_a_pickup_that_keeps_pairs_together():
    rng = np.random.default_rng(5)
    fair = np.stack([rng.permutation(312) % 52 for _ in range(300)])
    assert W.war_ties(fair, decks=6, usable=252).pvalue > 0.001
    clumped = fair.copy()
    clumped[:, 1::2][:, :60] = clumped[:, 0::2][:, :60]  # equal cards side by side in a third of the pairs
    assert W.war_ties(clumped, decks=6, usable=252).pvalue < 1e-6
    assert not W.war_ties(fair[:5], decks=6).applicable


def test_the_game_is_registered_as_data_and_play():
    g = G.get("casino-war")
    assert g.module == "rngcert.simulate.casino_war" and g.pickup_sides[0] == "last-on-top"
    p = play("casino-war")
    assert p.deal is W.deal_pickup_casino_war and {s[0] for s in p.specs} == {"war_ties", "tracker_edge:casino_war_tie_count"}
    with pytest.raises(EquipmentError, match="unknown game 'war'"):
        G.get("war")


@pytest.fixture(scope="module")
def war_procedure():
    return load_procedure("baccarat-004").with_game("casino-war")


@pytest.mark.slow
def test_procedure_certifies_for_casino_war(cli, tmp_path):
    res = cli("shuffle", "certify", "baccarat-004", "--game", "casino-war", "--shoes", "150", "--seed", "1", "--no-sensitivity",
              "--resamples", "99", "--no-plots", "--out", str(tmp_path / "r"))
    assert res.exit_code in (0, 10, 11, 12), res.output
    rep = json.loads(next((tmp_path / "r").rglob("report.json")).read_text())
    assert rep["house_edge"]["game"] == "casino-war" and abs(rep["house_edge"]["go_to_war"] - 0.0290) < 5e-4
    names = {t["name"] for t in rep["tables"][0]["battery"]["tests"]}
    assert {"war_ties", "tracker_edge:casino_war_tie_count"} <= names
    assert not names & {"baccarat_outcomes", "dealer_totals", "tracker_edge:baccarat_sequence"}
    assert "casino-war" in rep["equipment"]["id"] and "house edge" in res.output


@pytest.mark.slow
def test_shoe_log_of_war_rounds_end_to_end(war_procedure, tmp_path, cli):
    seq = simulate_log(war_procedure, 60, 4)
    f = tmp_path / "war.csv"
    write_shoe_log(f, seq.after[0], table="T1", lengths=seq.n_dealt[0])
    log = read_shoe_log(f, decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="casino-war", proc=war_procedure, seed=2, n_resamples=99, figures=False)
    rep = cert.report
    assert rep["house_edge"]["game"] == "casino-war" and rep["power_gate"]["min_edge"] == pytest.approx(W.house_edge(8)["go_to_war"])
    tests = {t["name"]: t for t in rep["tables"][0]["battery"]["tests"]}
    assert tests["war_ties"]["applicable"] and "rising_sequences" in tests
    assert "pickup side" in rep["pickup_side"]["sentence"]
    res = cli("shuffle", "certify", str(f), "--decks", "8", "--game", "casino-war", "--seed", "2", "--resamples", "99",
              "--no-plots", "--out", str(tmp_path / "r"))
    assert res.exit_code in (0, 10, 11, 12), res.output
