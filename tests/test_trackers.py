"""Trackers (rngcert.stats.trackers): exact tables, the ratio estimator, and validation on
Fisher-Yates shoes (no information: minus the house edge, never a bet) and on one riffle (strongly positive)."""

import json
import math

import numpy as np
import pytest
from _support import shared_file
from scipy import stats

from rngcert.equipment.cards import baccarat_exact, value_composition
from rngcert.equipment.procedure import load_procedure, parse_procedure
from rngcert.simulate.procedure import simulate_tables
from rngcert.stats import tracker_kernel as TK
from rngcert.stats import trackers as T
from rngcert.stats.blackjack import Rules, first_deal_ev, house_edge, play_rounds


def _proc(steps, base="baccarat-004"):
    raw = dict(load_procedure(base).raw)
    raw["steps"] = steps
    raw["parameters"] = [p for p in raw.get("parameters", []) if not p["name"].startswith("steps")]
    return parse_procedure(raw, "test")


def test_prefix_tables_reproduce_the_house_edges():
    tab = T.baccarat_prefix_returns(8)
    ref = json.loads(shared_file("reference", "baccarat.json").read_text())["house_edge"]
    assert -(tab["head"] * tab["banker"]).sum() == pytest.approx(ref["banker"], abs=1e-6)
    assert -(tab["head"] * tab["player"]).sum() == pytest.approx(ref["player"], abs=1e-6)
    # the tables by two-card totals give the same edges (they only regroup the prefixes)
    v = np.arange(10)
    head = tab["head"]
    pt = (v[:, None] + v[None, :]) % 10
    w = np.zeros((10, 10))
    np.add.at(w, (pt[:, None, :, None].repeat(10, 1).repeat(10, 3), pt[None, :, None, :].repeat(10, 0).repeat(10, 2)), head)
    assert (w * tab["banker_by_totals"]).sum() == pytest.approx(-ref["banker"], abs=1e-6)
    # knowing the Player's first card: conditional edge of a Player bet when P1 is a 9
    c = value_composition(8, "baccarat").astype(float)
    p1 = head.sum(axis=(1, 2, 3))
    ev9 = (head[9] * tab["player"][9]).sum() / p1[9]
    assert p1[9] == pytest.approx(32 / 416)
    assert 0.18 < ev9 < 0.25  # issue 12 quotes +21.5% for a known first Player card of 9
    assert baccarat_exact(c).sum() == pytest.approx(1.0)


def test_edge_summary_is_the_ratio_estimator():
    stake = np.array([10.0, 0, 5, 20])
    ret = np.array([1.0, 0, -2, 3])
    s = T.edge_summary(stake, ret)
    e = ret.sum() / stake.sum()
    r = ret - e * stake
    se = math.sqrt(4 / 3 * (r ** 2).sum()) / stake.sum()
    assert s["edge"] == pytest.approx(e) and s["se"] == pytest.approx(se) and s["bets_shoes"] == 3
    assert T.edge_summary(np.zeros(3), np.zeros(3))["edge"] is None
    res = T.tracker_edge("tracker_edge:x", np.zeros(20), np.zeros(20))
    assert not res.applicable and "never found a bet" in res.reason


def test_tracker_edge_test_is_calibrated():
    # returns with mean exactly at the threshold: the one-sided p-values are uniform
    rng = np.random.default_rng(3)
    p = []
    for _ in range(400):
        stake = rng.integers(1, 30, 200).astype(float)
        ret = rng.normal(-0.01 * stake, np.sqrt(stake))
        p.append(T.tracker_edge("t", stake, ret, threshold=-0.01).pvalue)
    assert stats.kstest(p, "uniform").pvalue > 0.001


@pytest.fixture(scope="module")
def baccarat_cases():
    out = {}
    for name, steps in (("fy", [{"op": "fisher_yates"}]), ("riffle", [{"op": "riffle"}])):
        p = _proc(steps)
        tr = simulate_tables(p, 300, 7, burn_in=2, key=("train",))
        k = T.learn_kernel(tr.before, tr.after, lags=24)
        ev = simulate_tables(p, 700, 8, burn_in=3, key=("eval",))
        view = np.where(ev.before_unseen, -1, ev.before)
        out[name] = (k, T.baccarat_sequence_tracker(view, ev.after, k, decks=8, cut_position=p.cut_position))
    return out


def test_baccarat_tracker_on_fisher_yates_never_beats_the_house(baccarat_cases):
    k, trk = baccarat_cases["fy"]
    assert k.concentration()[1] < 0.05  # a uniform shuffle leaves no offset memory (sampling noise only)
    stake, ret, _ = trk.policy(0.0)
    assert stake.sum() == 0  # never sees a positive expected return
    tab = T.baccarat_prefix_returns(8)
    for side in ("player", "banker"):
        he = -(tab["head"] * tab[side]).sum()
        s = T.edge_summary(*trk.shadow(side, -he))
        lo, hi = s["ci95"]
        assert lo - 0.002 <= -he <= hi + 0.002, (side, s)  # minus the house edge within the interval


def test_baccarat_tracker_on_one_riffle_is_strongly_positive(baccarat_cases):
    k, trk = baccarat_cases["riffle"]
    assert k.probs[1, 1] > 0.4  # a riffle keeps half the neighbours
    s = T.edge_summary(*trk.policy(0.0)[:2])
    assert s["ci95"][0] > 0.01 and s["units"] > 10_000


def test_blackjack_trackers_validation():
    res = {}
    for name, steps in (("fy", [{"op": "fisher_yates"}]), ("riffle", [{"op": "riffle"}])):
        p = _proc(steps, "blackjack-004")
        rules = Rules.from_procedure(p)
        tr = simulate_tables(p, 300, 7, burn_in=2, key=("train",))
        k = T.learn_kernel(tr.before, tr.after, lags=24)
        ev = simulate_tables(p, 1500, 9, burn_in=3, key=("eval",))
        view = np.where(ev.before_unseen, -1, ev.before)
        rr = play_rounds(ev.after, rules=rules, players=7, cut_position=p.cut_position)
        pe = T.blackjack_sequence_tracker(view, ev.after, rr["starts"], k, first_deal_ev(rules), decks=8, players=7)
        bet = np.nan_to_num(pe, nan=-1) > 0
        seq = T.edge_summary(bet.sum(1).astype(float), np.where(bet, rr["seat_returns"][:, :, 0], 0).sum(1))
        zone = T.blackjack_zone_tracker(view, ev.after, rr["starts"], k, decks=8)
        hilo = T.hilo_counter(ev.after, rr["starts"], decks=8)
        flat = (rr["starts"] >= 0).astype(float)
        res[name] = {"seq": seq, "zone": zone, "hilo": hilo, "flat": T.edge_summary((flat * 7).sum(1), (flat * rr["returns"]).sum(1)),
                     "he": house_edge(rules, strategy="table")["house_edge"]}
    fy = res["fy"]
    assert fy["seq"]["edge"] is None  # no information: the first-seat tracker never bets
    assert np.all(fy["zone"][fy["zone"] > 0] == 1)  # and the zone tracker never raises its bet
    lo, hi = fy["flat"]["ci95"]
    assert lo <= -fy["he"] <= hi  # flat play returns minus the house edge of the strategy
    assert res["riffle"]["seq"]["ci95"][0] > 0.01  # ace sequencing on one riffle: strongly positive
    assert (res["riffle"]["zone"] > 1).mean() > 0.05
    # Hi-Lo bets spread by the true count of the seen cards, whatever the shuffle
    assert (fy["hilo"] > 1).mean() > 0.02 and set(np.unique(fy["hilo"])) <= {0.0, 1.0, 2.0, 4.0, 8.0}


def _locate_reference(before_faces, after_faces, anchors, kernel, copies, known_counts, decks, back):
    """The copy posterior as first written (a take per lag and a product per copy): the reference
    the byte-pattern look-up of rngcert.stats.tracker_kernel._locate must reproduce bit for bit."""
    m, n = before_faces.shape
    ok = anchors >= 0
    a = np.where(ok, anchors, 0)
    rows = np.arange(m)[:, None]
    f = after_faces[rows, a]
    pos = copies[rows, f]
    valid = (pos >= 0) & ok[:, :, None]
    flat = np.concatenate([before_faces, before_faces], axis=1).astype(np.int16).ravel()
    base = (np.arange(m) * 2 * n)[:, None, None] + np.where(valid, pos, 0) + n
    inv_bg = n / np.maximum(known_counts, 1).astype(np.float64)
    lr = np.ones(pos.shape)
    for lag in range(1, min(back, kernel.lags) + 1):
        prev = a - lag
        has = ok & (prev >= 0)
        g = after_faces[rows, np.maximum(prev, 0)].astype(np.int16)
        d = kernel.top[lag]
        w = kernel.probs[lag, d]
        match = flat.take(base[..., None] - d[None, None, None, :]) == g[:, :, None, None]
        term = 1.0 + (match.astype(np.float64) @ w) * inv_bg[rows, g][:, :, None] - w.sum()
        lr *= np.where(has[:, :, None], np.maximum(term, 1e-6), 1.0)
    lr = np.where(valid, lr, 0.0)
    unseen = np.maximum(decks - known_counts[rows, f], 0)
    post = lr / (lr.sum(axis=2) + unseen + 1e-300)[:, :, None]
    return np.where(valid, pos, 0), post


@pytest.mark.parametrize("top", [3, 6, 8, 10])
def test_locate_reproduces_the_product_per_copy_bit_for_bit(top):
    p = load_procedure("baccarat-004")
    tr = simulate_tables(p, 60, 5, burn_in=2, key=("train",))
    k = T.learn_kernel(tr.before, tr.after, lags=24, top=top)
    ev = simulate_tables(p, 30, 6, burn_in=3, key=("eval",))
    bf, af = TK._iv(np.where(ev.before_unseen, -1, ev.before), ev.after, 8)
    copies, counts = TK._copies(bf, 8)
    rng = np.random.default_rng(top)
    anchors = np.where(rng.random((30, 90)) < 0.1, -1, rng.integers(0, 416, (30, 90)))
    pos, post = TK._locate(bf, af, anchors, k, copies, counts, 8, 5)
    pos0, post0 = _locate_reference(bf, af, anchors, k, copies, counts, 8, 5)
    assert np.array_equal(pos, pos0) and np.array_equal(post, post0)


def test_one_order_before_the_shuffle_is_computed_once_with_the_same_results():
    # first shoes of new decks: every table starts from the same order, whose fields and neighbours
    # the trackers compute once per chunk; shoe by shoe (chunk=1) they are computed for each shoe.
    # The bets are the same; the predicted returns agree to rounding (within 1e-12 of the stake):
    # the baccarat tracker's small float64 matrix products are blocked by their number of rows, so
    # on some CPUs (one seen here on 2026-12-02) a chunk of 16 and a chunk of 1 differ in the last bit.
    bac = load_procedure("baccarat-004")
    tr = simulate_tables(bac, 60, 5, burn_in=2, key=("train",))
    k = T.learn_kernel(tr.before, tr.after, lags=24)
    tab = simulate_tables(bac, 12, 6, burn_in=1, key=("eval",))
    assert (tab.first_before == tab.first_before[:1]).all()
    a = T.baccarat_sequence_tracker(tab.first_before, tab.first_after, k, decks=8, cut_position=bac.cut_position)
    b = T.baccarat_sequence_tracker(tab.first_before, tab.first_after, k, decks=8, cut_position=bac.cut_position, chunk=1)
    for x, y in ((a.ev_player, b.ev_player), (a.ev_banker, b.ev_banker)):
        assert np.array_equal(np.isnan(x), np.isnan(y)) and np.nanmax(np.abs(x - y)) <= 1e-12
    assert np.array_equal(a.ret_player, b.ret_player, equal_nan=True) and np.array_equal(a.ret_banker, b.ret_banker, equal_nan=True)
    assert np.array_equal(a.coup, b.coup)
    bj = load_procedure("blackjack-004")
    rules = Rules.from_procedure(bj)
    tab = simulate_tables(bj, 12, 6, burn_in=1, key=("eval",))
    rr = play_rounds(tab.first_after, rules=rules, players=7, cut_position=bj.cut_position)
    for fn in (lambda c: T.blackjack_zone_tracker(tab.first_before, tab.first_after, rr["starts"], k, decks=8, chunk=c),
               lambda c: T.blackjack_sequence_tracker(tab.first_before, tab.first_after, rr["starts"], k, first_deal_ev(rules),
                                                      decks=8, players=7, chunk=c)):
        assert np.array_equal(fn(64), fn(1), equal_nan=True)
