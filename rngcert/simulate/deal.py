"""The deal and the pickup: how a dealt shoe becomes the next shuffle's starting order.

A shoe is an integer array ``(n_shoes, n_cards)`` of card codes in dealing order (position 0 is
the first card dealt). Codes may carry the orientation bit :data:`rngcert.simulate.shufflers.ROTATED`;
the game is played on ``code & CODE_MASK`` and the cards (with their bit) are moved as they are.

* baccarat, 004_e56c47cd813c1f96.txt §2: coups P,B,P,B(,P3)(,B3) (rule 3.4.3, drawing rules 3.5.1)
  dealt while the next coup starts in front of the cutting card (3.2.2, 3.5.4); the layout is picked
  up right to left, one card on top of the other (3.6.1), and each coup goes on the discard rack
  (3.6.3).
* blackjack, 004 §3: one card to each player, one to the dealer, a second to each player, the
  dealer's second (3.4); the dealer's cards at the bottom of the round's stack, the players' hands
  right to left on top (3.6).

Each function returns a :class:`Deal`: the discard order, per-coup/round outcomes, how many cards
were dealt and the ``order`` that maps dealt positions to discard positions (so the same pickup can
be applied to a companion array, such as orientations, or to a dealt prefix with unknown cards).
The loops run over coups or rounds, vectorised over shoes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rngcert.equipment.cards import BACCARAT_VALUE, BLACKJACK_VALUE, baccarat_deal
from rngcert.errors import InputError

__all__ = ["Deal", "deal_pickup_baccarat", "deal_pickup_blackjack", "rebuild_before", "complete_shoes", "CODE_MASK"]

#: Strips the orientation bit (see :mod:`rngcert.simulate.shufflers`).
CODE_MASK = 1023
#: Baccarat value of every code less its orientation bit: ``BACCARAT_VALUE[(code & CODE_MASK) % 13]``
#: by one look-up per card.
_BACCARAT_OF_CODE = BACCARAT_VALUE[np.arange(CODE_MASK + 1) % 13].astype(np.int16)


@dataclass(frozen=True)
class Deal:
    """Result of a deal and pickup.

    Attributes
    ----------
    discards : (n_shoes, n_cards) ndarray
        The next shuffle's starting order (top of the face-down discard stack first).
    order : (n_shoes, n_cards) ndarray of intp
        ``discards[i, j] = shoes[i, order[i, j]]``.
    outcomes : (n_shoes, max) ndarray of int8
        Baccarat: 0 banker, 1 player, 2 tie per coup; blackjack: the dealer's final category per
        round (0..4 = 17..21, 5 bust); -1 where a shoe has no such coup or round.
    n_dealt : (n_shoes,) ndarray of int
        Cards dealt (the rest stayed behind the cutting card).
    """

    discards: np.ndarray
    order: np.ndarray
    outcomes: np.ndarray
    n_dealt: np.ndarray


def _shoes_iv(shoes) -> np.ndarray:
    a = np.asarray(shoes)
    if a.ndim != 2 or a.shape[1] < 6 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"shoes must be a 2-D integer array (n_shoes, n_cards >= 6), got shape {a.shape}, dtype {a.dtype}")
    return a


def _limit_iv(cut_position, m: int, lo: int, hi: int) -> np.ndarray:
    lim = np.broadcast_to(np.asarray(cut_position), (m,))
    if not np.issubdtype(lim.dtype, np.integer) or np.any(lim < lo) or np.any(lim > hi):
        raise InputError(f"cut_position must be an integer (or one per shoe) in {lo}..{hi}, got {cut_position!r}")
    return lim.astype(np.int64)


def deal_pickup_baccarat(shoes, *, cut_position, pickup: str = "banker-first", undealt: str = "top") -> Deal:
    """Deal baccarat shoes to the cutting card and pick the cards up into the discard order.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
        Card codes in dealing order (orientation bit allowed).
    cut_position : int or (n_shoes,) array_like of int
        Cards in front of the cutting card: coups are dealt while the next one starts before it.
        Per shoe for a scanner log (the dealt length of each shoe).
    pickup : {"banker-first", "player-first"}
        Which hand the dealer picks up first (it ends at the bottom of the coup's stack). Rule
        3.6.1: "from right to left, one by one placing one on top of the other"; which hand lies
        on the dealer's right depends on the table, hence the parameter (rule 3.6.2: one
        direction per dealer and shift). Within a hand, cards lie left to right in dealing order
        and are picked up right to left.
    undealt : {"top", "bottom"}
        Where the cards left in the shoe go on the discard stack (their order is kept).

    Returns
    -------
    Deal
        ``discards`` with the last coup's stack on top (rule 3.6.3: each coup's stack goes on
        the discard rack); ``outcomes`` per coup.
    """
    a = _shoes_iv(shoes)
    if pickup not in ("banker-first", "player-first"):
        raise InputError(f"pickup must be 'banker-first' or 'player-first', got {pickup!r}")
    if undealt not in ("top", "bottom"):
        raise InputError(f"undealt must be 'top' or 'bottom', got {undealt!r}")
    m, n = a.shape
    lim = _limit_iv(cut_position, m, 1, n)
    vals = _BACCARAT_OF_CODE[a & CODE_MASK]
    d = baccarat_deal(vals, lim)
    starts, used_c, pdrew_c = d["starts"], d["used"], d["player_drew"]
    pos = d["n_dealt"]
    C = starts.shape[1]
    # every dealt card's coup: the coup's first card is marked with (start, cards used, player
    # drew) and the mark carried forward along the row (marks increase with the coup)
    act = used_c > 0
    rr = np.broadcast_to(np.arange(m)[:, None], (m, C))[act]
    cc = starts[act]
    mark = np.zeros(a.shape, dtype=np.int32)
    mark[rr, cc] = (cc * 8 + (used_c[act] - 1)) * 2 + pdrew_c[act]
    mark = np.maximum.accumulate(mark, axis=1)
    start, kind = mark >> 4, mark & 15  # kind = (cards used - 1) * 2 + player drew
    j = np.arange(n, dtype=np.int32)[None, :]
    # where each card lands in the discards (top first): the undealt cards on top or at the bottom
    # in shoe order; the coups with the last one on top, each stacked by _pickup_rank
    top = undealt == "top"
    last = pos[:, None]
    used = (kind >> 1) + 1
    within = _pickup_rank(pickup)[1:].reshape(-1).take(kind * 6 + np.minimum(j - start, 5))
    dest = np.where(j < last, (n if top else last) - start - used + within, j - last if top else j)
    rows = (np.arange(m, dtype=np.intp) * n)[:, None]
    flat = (dest + rows).ravel()
    order = np.empty((m, n), dtype=np.intp)
    order.ravel()[flat] = np.broadcast_to(np.arange(n, dtype=np.intp), (m, n)).ravel()
    discards = np.empty_like(a)
    discards.ravel()[flat] = np.ascontiguousarray(a).ravel()
    return Deal(discards, order, d["outcome"], pos)


@lru_cache(maxsize=2)
def _pickup_rank(pickup: str) -> np.ndarray:
    """``R[u, pd, k]``: place of the coup's k-th dealt card in its picked-up stack (0 = top), for a
    coup of u cards (1..6) where the Player drew (pd) or not.

    Cards 0, 2 (and 4 when the Player drew) are the Player's, the others the Banker's (rule 3.4.3).
    The hand picked up first lies at the bottom, and within each hand the last-dealt card lowest
    (rule 3.6.1: right to left, one on top of the other).
    """
    R = np.zeros((7, 2, 6), dtype=np.int32)
    k = np.arange(6)
    for pd in (0, 1):
        is_player = (k == 0) | (k == 2) | ((k == 4) & bool(pd))
        first = ~is_player if pickup == "banker-first" else is_player
        height = np.where(first, 10 - k, 20 - k)  # higher lies nearer the top
        for u in range(1, 7):
            R[u, pd, :u] = (height[None, :u] > height[:u, None]).sum(axis=1)
    return R


def _gather(a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``a[i, order[i, j]]`` by one flat take (no broadcast index arrays)."""
    m, n = a.shape
    return a.ravel().take(order + (np.arange(m, dtype=np.intp) * n)[:, None])


def _bj_total(hard, ace):
    soft = ace & (hard + 10 <= 21)
    return np.where(soft, hard + 10, hard), soft


# long: 28 lines of docstring; the blackjack deal (rounds, hands, dealer rule) and pickup are one vectorised pass over the shoes
def deal_pickup_blackjack(shoes, *, cut_position, players: int = 7, rule: str = "S17", pickup: str = "right-to-left") -> Deal:
    """Deal blackjack shoes to the cutting card and pick the cards up into the discard order.

    Each round follows 004 §3 rule 3.4: one card to each player, one to the dealer, a second
    to each player, the dealer's second card. Players then draw in seat order, modelled as
    "mimic the dealer" (draw while under 17; a documented model of the table, not a strategy);
    the dealer draws by ``rule`` (003 rule 4.15). Rounds are dealt while the next round starts in
    front of the cutting card and fits in the shoe (004 §3 rule 3.2.2). Pickup (004 §3 rule 3.6):
    the dealer's cards at the bottom of the round's stack, then the players' hands from the
    dealer's right (last seat) to left (first seat), each hand's cards in dealing order; each
    round's stack on top of the discards; the undealt cards on top, in shoe order. Rule 3.6 also
    lets each dealer keep one direction for a shift: ``pickup="left-to-right"`` picks the players'
    hands up from the first seat to the last instead (the dealer's cards still at the bottom).

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    cut_position : int or (n_shoes,) array_like of int
        Cards in front of the cutting card.
    players : int in 1..7
    rule : {"S17", "H17"}
    pickup : {"right-to-left", "left-to-right"}
        Direction of the pickup over the players' hands (004 §3 rule 3.6).

    Returns
    -------
    Deal
        ``outcomes``: the dealer's final category per round (0..4 = 17..21, 5 bust, -1 none).
    """
    a = _shoes_iv(shoes)
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 1 <= players <= 7:
        raise InputError(f"players must be an integer in 1..7, got {players!r}")
    rule = str(rule).upper()
    if rule not in ("S17", "H17"):
        raise InputError(f"rule must be 'S17' or 'H17', got {rule!r}")
    if pickup not in ("right-to-left", "left-to-right"):
        raise InputError(f"pickup must be 'right-to-left' or 'left-to-right', got {pickup!r}")
    ltr = pickup == "left-to-right"
    m, n = a.shape
    lim = _limit_iv(cut_position, m, 1, n)
    vals = BLACKJACK_VALUE[(a & CODE_MASK) % 13].astype(np.int16)
    P = int(players)
    max_rounds = int(lim.max()) // (2 * P + 2) + 1
    hand_key = np.full(a.shape, -1, dtype=np.int32)  # (round, hand order, index within hand)
    dealer_out = np.full((m, max_rounds), -1, dtype=np.int8)
    pos = np.zeros(m, dtype=np.intp)
    rows = np.arange(m)

    def take(r, p, hand_rank, idx, rnd):
        hand_key[r, p] = ((max_rounds - rnd) * (P + 1) + (P - hand_rank)) * 32 + (31 - idx)

    for rnd in range(max_rounds):  # loop over rounds and hands, vectorised over shoes
        active = (pos + 2 * P + 2 <= n) & (pos < lim)
        if not active.any():
            break
        r = rows[active]
        p0 = pos[active].copy()
        hard = np.zeros((r.size, P + 1), dtype=np.int16)
        ace = np.zeros((r.size, P + 1), dtype=bool)
        ncard = np.zeros((r.size, P + 1), dtype=np.int16)
        order = list(range(P)) + [P]  # seats 0..P-1 then the dealer (hand P), twice
        for rep in range(2):
            for h in order:
                p = p0 + rep * (P + 1) + h
                v = vals[r, p]
                hard[:, h] += v
                ace[:, h] |= v == 1
                hand_rank = 0 if h == P else (h + 1 if ltr else P - h)  # dealer bottom; right to left: seat P-1 next, seat 0 top
                take(r, p, hand_rank, ncard[:, h], rnd)
                ncard[:, h] += 1
        cur = p0 + 2 * (P + 1)
        for h in order:
            while True:
                total, soft = _bj_total(hard[:, h], ace[:, h])
                if h == P and rule == "H17":
                    draw = (total < 17) | ((total == 17) & soft)
                else:
                    draw = total < 17
                draw &= cur < n
                if not draw.any():
                    break
                rr = r[draw]
                v = vals[rr, cur[draw]]
                hard[draw, h] += v
                ace[draw, h] |= v == 1
                hand_rank = 0 if h == P else (h + 1 if ltr else P - h)
                take(rr, cur[draw], hand_rank, ncard[draw, h], rnd)
                ncard[draw, h] += 1
                cur[draw] += 1
        total, _ = _bj_total(hard[:, P], ace[:, P])
        dealer_out[r, rnd] = np.where(total > 21, 5, total - 17)
        pos[active] = cur
    dealt = hand_key >= 0
    big = np.int32((max_rounds + 2) * (P + 1) * 32 + n)
    key = np.where(dealt, hand_key, -big + np.arange(n, dtype=np.int32)[None, :])
    if big + n < np.iinfo(np.int16).max:  # numpy's stable sort of 16-bit keys is a radix sort
        key = key.astype(np.int16)
    order = np.argsort(key, axis=1, kind="stable")
    return Deal(_gather(a, order), order, dealer_out, pos.astype(np.int64))


def rebuild_before(deal_fn, dealt, n_dealt, **deal_params) -> np.ndarray:
    """The order a shuffle started from, rebuilt from the previous shoe's dealt cards and the pickup.

    Parameters
    ----------
    deal_fn : callable
        :func:`deal_pickup_baccarat` or :func:`deal_pickup_blackjack` (or any function with their
        signature returning a :class:`Deal`).
    dealt : (n_shoes, N) array_like of int
        The previous shoes' cards in dealing order, -1 beyond what was dealt (a scanner sees only
        the dealt cards).
    n_dealt : (n_shoes,) array_like of int
        Cards dealt from each previous shoe.
    **deal_params
        The procedure's deal parameters (pickup, undealt / players, rule).

    Returns
    -------
    (n_shoes, N) ndarray of int16
        The discard order, -1 at the positions of the cards that stayed behind the cutting card
        (their order is unknown).

    Notes
    -----
    The coups (rounds) are replayed from the dealt cards up to ``n_dealt``; blackjack hands are
    replayed with the pickup's player model, so where real players decided otherwise the rebuilt
    order is wrong in places. Under a uniform shuffle every test stays valid whatever the order
    before it (a uniform shuffle is independent of its input); a wrong rebuild only costs power.
    """
    d0 = np.asarray(dealt)
    nd = np.asarray(n_dealt, dtype=np.int64)
    x = np.where(d0 >= 0, d0, 0).astype(np.int16)
    d = deal_fn(x, cut_position=np.maximum(nd, 1), **deal_params)
    return np.where(d.order >= nd[:, None], -1, d.discards).astype(np.int16)


def complete_shoes(partial, decks: int, rng: np.random.Generator, *, serialised: bool = False) -> np.ndarray:
    """Fill the unknown cards (-1) of shoes with the missing cards, in a uniformly random order.

    Parameters
    ----------
    partial : (n_shoes, N) array_like of int
        Codes (faces 0..51, or serialised codes) with -1 where unknown.
    decks : int
        The shoe holds ``decks`` copies of each face (serialised: each code once).
    rng : numpy.random.Generator
    serialised : bool
        Codes are ``deck * 52 + face`` (unique); otherwise faces.

    Returns
    -------
    (n_shoes, N) ndarray of int16

    Notes
    -----
    Under the hypothesis of a uniform shuffle the unseen cards of a shoe are a uniformly random
    arrangement of the cards not seen, so a random fill gives exactly the null law; it dilutes
    what a weak shuffle leaves in those positions. Raises when a shoe holds more copies of a card
    than the decks do.
    """
    p = np.asarray(partial).astype(np.int64)
    m, n = p.shape
    if serialised:
        full = np.arange(n)
        width = n
    else:
        full = np.repeat(np.arange(52), decks)
        width = 52
    cnt = np.zeros((m, width + 1), dtype=np.int64)
    np.add.at(cnt, (np.repeat(np.arange(m), n), np.where(p >= 0, p, width).ravel()), 1)
    cnt = cnt[:, :width]
    per = 1 if serialised else decks
    if np.any(cnt > per):
        i = int(np.flatnonzero((cnt > per).any(axis=1))[0])
        raise InputError(f"shoe {i} holds a card more often than {decks} deck(s) do")
    copy_idx = np.tile(np.arange(per), width) if not serialised else np.zeros(n, np.int64)
    missing = copy_idx[None, :] >= cnt[:, full]  # (m, N) over the full sorted multiset
    keys = np.where(missing, rng.random((m, n)), 2.0 + np.arange(n)[None, :])
    miss_sorted = np.take_along_axis(np.broadcast_to(full, (m, n)), np.argsort(keys, axis=1), axis=1)
    holes = p < 0
    if not np.array_equal(holes.sum(axis=1), missing.sum(axis=1)):
        raise InputError("a shoe's unknown positions do not match its missing cards")
    hole_rank = np.cumsum(holes, axis=1) - 1
    fill = np.take_along_axis(miss_sorted, np.maximum(hole_rank, 0), axis=1)
    return np.where(holes, fill, p).astype(np.int16)
