"""Casino War: its deal and pickup, exact house edge, tie-count tracker and game-level test.

Rules (Wizard of Odds, *Casino War*, wizardofodds.com/games/casino-war; the usual 6- or 8-deck
shoe): each seat and then the dealer get one card; the higher rank wins (aces high, suits do not
count) and pays 1:1. On a tie the seat goes to war (or surrenders half its bet, ``tie =
"surrender"``): it doubles its bet, the dealer burns three cards, deals one card to each seat at
war in seat order and one to himself; a seat whose war card is at least the dealer's wins the raise
1:1 and its original bet pushes, otherwise it loses both. A round starts while its first card lies
in front of the cutting card. The optional tie bet pays 10:1 when a seat's first card ties the
dealer's.

House edge, per unit of the original bet, from the full shoe of ``d`` decks (``c = 4 d`` cards of a
rank, ``N = 52 d``; the burn cards are unseen and exchangeable, so the war cards are two cards drawn
from the ``N - 2`` left)::

    t  = (c - 1) / (N - 1)                                   first two cards tie
    t2 = ((c - 2)(c - 3) + 12 c (c - 1)) / ((N - 2)(N - 3))  war cards tie, after a tie
    go to war: -t (1 - 3 t2) / 2          6 decks: 2.877%   8 decks: 2.898%
    surrender: -t / 2                     6 decks: 3.698%
    tie bet (10:1): 1 - 11 t              6 decks: 18.65%

(:func:`house_edge`; ``tests/test_casino_war.py`` checks it against an exact enumeration of the
four cards and against dealt shoes). The tracker (:func:`tie_count_tracker`) sees only the face-up
cards dealt so far and bets the tie bet when the unseen cards make it favourable; the game-level test
(:func:`war_ties`) counts equal ranks dealt side by side, which a pickup of tied pairs and a short
wash leave behind.

The game is registered in :mod:`rngcert.equipment.games` (``"casino-war"``) and its play here.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rngcert.equipment.games import get
from rngcert.errors import InputError
from rngcert.simulate.deal import CODE_MASK, Deal
from rngcert.simulate.games import Play, register_play
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue
from rngcert.stats.trackers import tracker_edge

__all__ = ["war_rounds", "deal_pickup_casino_war", "house_edge", "tie_count_tracker", "war_ties", "TIE_PAYS"]

GAME = "casino-war"
#: Rank order of each code less its orientation bit (2 = 0 ... K = 11, A = 12).
_RANK_OF_CODE = np.asarray(get(GAME).value, dtype=np.int8)[np.arange(CODE_MASK + 1) % 13]
#: The tie bet pays this to 1.
TIE_PAYS = 10
#: Outcome of the first seat per round in :class:`~rngcert.simulate.deal.Deal` ``outcomes``.
OUTCOMES = ("seat wins", "dealer wins", "war won", "war lost", "surrendered")


# long: argument checks, then one vectorised loop over rounds whose deal, war, burn and payout steps update the same per-shoe
#   arrays
def war_rounds(shoes, *, cut_position, players: int = 7, tie: str = "war") -> dict:
    """Deal Casino War rounds from shoes (vectorised over shoes, a loop over rounds).

    Parameters
    ----------
    shoes : (n_shoes, N) array_like of int
        Card codes in dealing order (orientation bit allowed).
    cut_position : int or (n_shoes,) array_like of int
        Cards in front of the cutting card: a round starts while its first card is in front of it.
    players : int
        Seats (1..7); every seat plays every round.
    tie : {"war", "surrender"}
        What a seat does on a tie.

    Returns
    -------
    dict
        ``starts``, ``ends`` (n_shoes, R) first card and one past the last of each round (-1: none);
        ``outcome`` (n_shoes, R) int8 of the first seat (:data:`OUTCOMES`, -1: none); ``returns``
        (n_shoes, R) of one unit on the first seat's original bet; ``burn`` (n_shoes, N) bool, the
        burn cards (face down); ``n_dealt`` (n_shoes,).
    """
    a = np.asarray(shoes)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"shoes must be a 2-D integer array (n_shoes, n_cards), got shape {a.shape}")
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 1 <= players <= 7:
        raise InputError(f"players must be an integer in 1..7, got {players!r}")
    if tie not in ("war", "surrender"):
        raise InputError(f"tie must be 'war' or 'surrender', got {tie!r}")
    m, n = a.shape
    P = int(players)
    lim = np.broadcast_to(np.asarray(cut_position), (m,)).astype(np.int64)
    if np.any(lim < 1) or np.any(lim > n):
        raise InputError(f"cut_position must be in 1..{n}, got {cut_position!r}")
    rk = _RANK_OF_CODE[a & CODE_MASK]
    rows = np.arange(m)
    R = n // (P + 1) + 1
    starts = np.full((m, R), -1, np.int64)
    ends = np.full((m, R), -1, np.int64)
    outcome = np.full((m, R), -1, np.int8)
    returns = np.zeros((m, R))
    burn = np.zeros((m, n), bool)
    pos = np.zeros(m, np.int64)
    seat = np.arange(P)
    for r in range(R):
        act = (pos < lim) & (pos + 2 * P + 5 <= n)  # a round starts before the cutting card and fits in the shoe
        if not act.any():
            break
        s = np.where(act, pos, 0)
        seats = rk[rows[:, None], s[:, None] + seat]
        dealer = rk[rows, s + P]
        war = (seats == dealer[:, None]) & (tie == "war")
        nwar = war.sum(axis=1)
        k = np.cumsum(war, axis=1) - 1
        seat_war = rk[rows[:, None], np.where(war, s[:, None] + P + 4 + k, 0)]
        dpos = s + P + 4 + nwar
        dealer_war = rk[rows, np.minimum(dpos, n - 1)]
        fought = act & (nwar > 0)
        end = np.where(fought, dpos + 1, s + P + 1)
        for b in range(1, 4):
            burn[rows[fought], s[fought] + P + b] = True
        s0, d0, w0 = seats[:, 0], dealer, war[:, 0]
        won_war = seat_war[:, 0] >= dealer_war
        out = np.where(s0 > d0, 0, np.where(s0 < d0, 1, np.where(w0, np.where(won_war, 2, 3), 4)))
        ret = np.select([out == 0, out == 1, out == 2, out == 3], [1.0, -1.0, 1.0, -2.0], -0.5)
        starts[act, r], ends[act, r] = s[act], end[act]
        outcome[act, r] = out[act]
        returns[act, r] = ret[act]
        pos = np.where(act, end, pos)
    used = int((starts >= 0).any(axis=0).sum())
    return {"starts": starts[:, :used], "ends": ends[:, :used], "outcome": outcome[:, :used], "returns": returns[:, :used],
            "burn": burn, "n_dealt": pos}


def deal_pickup_casino_war(shoes, *, cut_position, players: int = 7, pickup: str = "last-on-top", tie: str = "war") -> Deal:
    """Deal Casino War shoes to the cutting card and pick the cards up into the discard order.

    Parameters
    ----------
    shoes, cut_position, players, tie
        As :func:`war_rounds`.
    pickup : {"last-on-top", "first-on-top"}
        How the dealer stacks a round's cards on the discard rack: each card on the one picked up
        before it in dealing order (the round's last card on top), or the round's cards kept in
        dealing order (its first card on top). War rules leave this to the house's procedure.

    Returns
    -------
    Deal
        ``discards`` (top first): the cards left behind the cutting card in shoe order, then the
        rounds, the last round's stack on top; ``outcomes`` of the first seat per round.
    """
    if pickup not in ("last-on-top", "first-on-top"):
        raise InputError(f"pickup must be 'last-on-top' or 'first-on-top', got {pickup!r}")
    a = np.asarray(shoes)
    d = war_rounds(a, cut_position=cut_position, players=players, tie=tie)
    m, n = a.shape
    nd = d["n_dealt"][:, None]
    j = np.arange(n)[None, :]
    if pickup == "last-on-top":
        dest = np.where(j < nd, (n - nd) + (nd - 1 - j), j - nd)
    else:
        st = d["starts"]
        mark = np.zeros((m, n + 1), np.int64)
        ok = st >= 0
        np.add.at(mark, (np.broadcast_to(np.arange(m)[:, None], st.shape)[ok], st[ok]), 1)
        rid = np.maximum(np.cumsum(mark[:, :n], axis=1) - 1, 0)
        s_of = np.take_along_axis(np.where(ok, st, 0), rid, axis=1)
        e_of = np.take_along_axis(np.where(ok, d["ends"], 0), rid, axis=1)
        dest = np.where(j < nd, (n - nd) + (nd - e_of) + (j - s_of), j - nd)
    order = np.empty((m, n), dtype=np.intp)
    np.put_along_axis(order, dest, np.broadcast_to(np.arange(n, dtype=np.intp), (m, n)), axis=1)
    return Deal(np.take_along_axis(a, order, axis=1), order, d["outcome"], d["n_dealt"].astype(np.int64))


def house_edge(decks: int, rules=None, *, exact: bool = False) -> dict:
    """House edge of Casino War from the full shoe (see the module docstring for the formulas).

    Parameters
    ----------
    decks : int
        Decks in the shoe (1..8).
    rules : ignored
        (The registry's signature; War has no rule options here.)
    exact : bool
        Also return the edges as :class:`fractions.Fraction`.

    Returns
    -------
    dict
        The report's ``house_edge`` block: ``go_to_war``, ``surrender``, ``tie_bet`` (per unit of the
        original bet), ``sd_go_to_war`` (of one unit's return), ``edge`` and ``basis`` (the default
        minimum tracker edge: the go-to-war edge), ``sentence`` and ``method``.
    """
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) or not 1 <= decks <= 8:
        raise InputError(f"decks must be an integer in 1..8, got {decks!r}")
    c, N = 4 * int(decks), 52 * int(decks)
    t = Fraction(c - 1, N - 1)
    t2 = Fraction((c - 2) * (c - 3) + 12 * c * (c - 1), (N - 2) * (N - 3))
    war = t * (1 - 3 * t2) / 2
    surrender = t / 2
    tie_bet = 1 - (TIE_PAYS + 1) * t
    # one unit, go to war: +1 or -1 (no tie); +1 (war won or tied) or -2 (war lost) after a tie
    second = (1 - t) + t * ((1 + t2) / 2 + 4 * (1 - t2) / 2)
    sd = float(second - war * war) ** 0.5
    out = {"game": GAME, "decks": int(decks), "go_to_war": float(war), "surrender": float(surrender), "tie_bet": float(tie_bet),
           "sd_go_to_war": sd, "edge": float(war),
           "basis": f"the house edge of the main bet going to war ({decks} decks, exact)",
           "sentence": (f"main bet {100 * float(war):.3f}% going to war on a tie, {100 * float(surrender):.3f}% surrendering; "
                        f"tie bet (pays {TIE_PAYS}:1) {100 * float(tie_bet):.2f}%"),
           "method": "exact from the full shoe: first two cards tie (c-1)/(N-1); war cards drawn from the N-2 left "
                     "(burn cards unseen); a won or tied war pays the raise 1:1 and pushes the original bet"}
    if exact:
        out["exact"] = {"go_to_war": war, "surrender": surrender, "tie_bet": tie_bet}
    return out


def tie_count_tracker(after, *, decks: int, cut_position, players: int = 7, tie: str = "war", chunk: int = 256):
    """A counter at the first seat who bets the tie bet when the unseen cards favour it.

    Before each round it counts, by rank, the face-up cards dealt so far in this shoe (seats' and
    dealer's cards, war cards; the burn cards are face down), and bets one unit on the tie bet when
    ``(TIE_PAYS + 1) * P(tie) > 1`` with ``P(tie) = sum_r u_r (u_r - 1) / (U (U - 1))`` over the unseen
    cards (``u_r`` of rank r, ``U`` in all). It sees nothing of the shuffle: it is what the cutting
    card's depth allows a counter; a shuffle that leaves equal ranks together shows as ties more
    frequent than the count predicts.

    Parameters
    ----------
    after : (n_shoes, N) array_like of int
        Whole shoes in dealing order.
    decks : int
    cut_position, players, tie
        As :func:`war_rounds`.
    chunk : int
        Shoes counted at once.

    Returns
    -------
    stake, ret : (n_shoes,) ndarray
        Units bet and their return per shoe.
    """
    a = np.asarray(after)
    m = a.shape[0]
    if m > chunk:  # chunks of shoes (memory: the counts are (shoes, N, 13))
        cp = np.broadcast_to(np.asarray(cut_position), (m,))
        parts = [tie_count_tracker(a[i:i + chunk], decks=decks, cut_position=cp[i:i + chunk], players=players, tie=tie)
                 for i in range(0, m, chunk)]
        return np.concatenate([x[0] for x in parts]), np.concatenate([x[1] for x in parts])
    d = war_rounds(a, cut_position=cut_position, players=players, tie=tie)
    n = a.shape[1]
    rk = _RANK_OF_CODE[a & CODE_MASK]
    shown = (np.arange(n)[None, :] < d["n_dealt"][:, None]) & ~d["burn"]
    onehot = (rk[:, :, None] == np.arange(13)[None, None, :]) & shown[:, :, None]
    seen = np.concatenate([np.zeros((m, 1, 13), np.int32), np.cumsum(onehot, axis=1, dtype=np.int32)], axis=1)
    st = d["starts"]
    ok = st >= 0
    s = np.where(ok, st, 0)
    u = 4 * decks - np.take_along_axis(seen, s[:, :, None], axis=1)  # unseen by rank before each round
    U = u.sum(axis=2).astype(float)
    p = (u * (u - 1)).sum(axis=2) / np.maximum(U * (U - 1), 1.0)
    bet = ok & ((TIE_PAYS + 1) * p > 1.0)
    rows = np.arange(m)[:, None]
    tied = rk[rows, s] == rk[rows, s + int(players)]
    ret = np.where(tied, float(TIE_PAYS), -1.0)
    return bet.sum(axis=1).astype(float), np.where(bet, ret, 0.0).sum(axis=1)


def war_ties(dealt, *, decks: int, usable: int | None = None) -> TestResult | NotApplicable:
    """Equal ranks side by side: ties among the fixed pairs of positions (0, 1), (2, 3), ... of the dealt shoes.

    Under a uniform shuffle any two positions hold equal ranks with probability ``t = (c-1)/(N-1)``,
    and two disjoint pairs both do with ``t * t2`` (module docstring), so the count per shoe of the
    ``K`` pairs has mean ``K t`` and variance ``K t (1-t) + K (K-1) (t t2 - t^2)`` exactly; shoes are
    independent and the total is compared with its mean by the normal law (two-sided). A pickup that
    keeps tied pairs together and a short wash raise it.
    """
    a = np.asarray(dealt)
    L = a.shape[1] if usable is None else min(int(usable), a.shape[1])
    K = L // 2
    S = a.shape[0]
    if K < 1 or S < 20:
        return NotApplicable("war_ties", Requirement.INDEPENDENCE, S, f"too few shoes ({S} < 20) or cards ({L})")
    rk = _RANK_OF_CODE[a[:, :2 * K] & CODE_MASK]
    if np.any(a[:, :2 * K] < 0):
        return NotApplicable("war_ties", Requirement.INDEPENDENCE, S, "unknown cards among the usable positions")
    ties = (rk[:, 0::2] == rk[:, 1::2]).sum(axis=1)
    c, N = 4 * decks, 52 * decks
    t = (c - 1) / (N - 1)
    t2 = ((c - 2) * (c - 3) + 12 * c * (c - 1)) / ((N - 2) * (N - 3))
    mean = K * t
    var = K * t * (1 - t) + K * (K - 1) * (t * t2 - t * t)
    z = float((ties.sum() - S * mean) / np.sqrt(S * var))
    p = clip_pvalue(float(2 * dist.norm_sf(abs(z))))
    return TestResult("war_ties", Requirement.INDEPENDENCE, z, None, p, S, "asymptotic",
                      {"pairs_per_shoe": K, "ties_per_shoe": float(ties.mean()), "expected_per_shoe": mean,
                       "sd_per_shoe": float(np.sqrt(var))})


# ----------------------------------------------------------------------------- registration
def _params(proc) -> dict:
    if proc is None:
        return {}
    return {k: v for k, v in proc.deal.items() if k in ("players", "pickup", "tie")}


def _ties(d, ctx):
    return war_ties(d.shoes_dealt, decks=d.decks, usable=d.usable)


def _tracker(d, ctx):
    stake, ret = tie_count_tracker(d.after, decks=d.decks, cut_position=d.cut, players=d.players)
    he = house_edge(d.decks)
    return tracker_edge("tracker_edge:casino_war_tie_count", stake, ret, threshold=d.threshold, house_edge=he["tie_bet"],
                        extra={"game": GAME, "policy": f"one unit on the first seat's tie bet ({TIE_PAYS}:1) when the unseen "
                                                       "cards make it favourable", "per_coup_sd": he["sd_go_to_war"]})


register_play(Play(GAME, deal_pickup_casino_war, _params, house_edge, specs=(
    ("war_ties", _ties, Requirement.INDEPENDENCE, ("equipment:game:casino-war",)),
    ("tracker_edge:casino_war_tie_count", _tracker, Requirement.UNPREDICTABILITY, ("equipment:game:casino-war", "full_shoes")),
)))
