"""Cards, decks and shoes: card tokens, card values, the baccarat drawing rules, the blackjack dealer.

Card codes
----------
A shoe of ``decks`` 52-card decks is held as integer *codes* ``0 .. 52*decks - 1``::

    code = deck * 52 + suit * 13 + rank        suit: S=0 H=1 D=2 C=3, rank: A=0, 2..9=1..8, T=9, J=10, Q=11, K=12

so that ``code % 52`` is the *face* (which of the 52 cards), ``code % 13`` the *rank* and
``code // 52`` the *deck serial* minus one. A new shoe in "new-deck order" is ``arange(52*decks)``:
deck by deck, by suit, in sequence, the order in which the cards are spread for inspection
(baccarat rules 004_e56c47cd813c1f96.txt §3.1.2, blackjack §3.1.2).

Card tokens (DESIGN §3): rank ``A 2-9 T|10 J Q K`` then suit ``S H D C`` then optional ``#k`` deck
serial (1-based) for serialised test decks, e.g. ``QH#3``; case-insensitive on input.

Values
------
* baccarat (004 §2 rule 1.3.2): A = 1, 2-9 face value, T J Q K = 0; point count = total mod 10.
* blackjack (004 §3 rule 1.5, 003 rule 4.11): A = 1 or 11, 2-10 face value, J Q K = 10.

Game rules used by the game-level tests live here (they are part of the equipment): the baccarat
third-card rules of 004 §2 rule 3.5.1 and the blackjack dealer's drawing rule of 003 rule 4.15
(a: stand on all 17s, "S17"; b: hit soft 17, "H17").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rngcert.equipment.games import GAMES
from rngcert.errors import EquipmentError, InputError

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
MAX_DECKS = 8
_RANK_INDEX = {r: i for i, r in enumerate(RANKS)} | {"10": 9}
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}
_TOKEN_RE = re.compile(r"^\s*(10|[A2-9TJQK])([SHDC])(?:#(\d+))?\s*$", re.IGNORECASE)

#: baccarat value of each rank index (A..K)
BACCARAT_VALUE = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0], dtype=np.int8)
#: blackjack value of each rank index, ace counted 1 (soft totals are handled by the dealer rule)
BLACKJACK_VALUE = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], dtype=np.int8)

OUTCOME_BANKER, OUTCOME_PLAYER, OUTCOME_TIE = 0, 1, 2
BACCARAT_OUTCOMES = ("banker", "player", "tie")
DEALER_TOTALS = ("17", "18", "19", "20", "21", "bust")
DEALER_RULES = ("S17", "H17")


# ----------------------------------------------------------------------------- tokens
def parse_card(token: str) -> tuple[int, int]:
    """Parse one card token.

    Parameters
    ----------
    token : str
        ``<rank><suit>[#k]`` with rank in ``A 2-9 T 10 J Q K``, suit in ``S H D C`` and an
        optional 1-based deck serial ``k``; case-insensitive, surrounding blanks ignored.

    Returns
    -------
    face : int
        ``suit * 13 + rank`` in 0..51.
    serial : int
        Deck serial ``k`` (>= 1), or 0 when the token carries none.

    Raises
    ------
    InputError
        The token is not a card, quoting it and the allowed form.
    """
    m = _TOKEN_RE.match(str(token))
    if m is None:
        raise InputError(
            f"unknown card token {token!r}: expected rank A 2-9 T|10 J Q K, suit S H D C and "
            "optional #k deck serial, e.g. 'QH', '10S', 'QH#3'"
        )
    rank = _RANK_INDEX[m.group(1).upper()]
    suit = _SUIT_INDEX[m.group(2).upper()]
    serial = int(m.group(3)) if m.group(3) is not None else 0
    if m.group(3) is not None and serial < 1:
        raise InputError(f"card token {token!r}: deck serial must be >= 1, got #{serial}")
    return suit * 13 + rank, serial


def parse_cards(tokens) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse many card tokens at once.

    Parameters
    ----------
    tokens : iterable of str

    Returns
    -------
    face : (n,) ndarray of int16
        0..51, or -1 where the token is not a card.
    serial : (n,) ndarray of int16
        Deck serial (>= 1), 0 when absent, -1 where the token is not a card.
    ok : (n,) ndarray of bool
        Whether each token parsed. Bad tokens are reported by the caller (never dropped silently).
    """
    toks = list(tokens)
    face = np.full(len(toks), -1, dtype=np.int16)
    serial = np.full(len(toks), -1, dtype=np.int16)
    cache: dict[str, tuple[int, int]] = {}
    for i, t in enumerate(toks):  # distinct tokens are few (<= 52 * 8); cache the regex work
        key = str(t)
        hit = cache.get(key)
        if hit is None:
            try:
                hit = parse_card(key)
            except InputError:
                hit = (-1, -1)
            cache[key] = hit
        face[i], serial[i] = hit
    return face, serial, face >= 0


def format_card(code: int, *, serial: bool = True) -> str:
    """Token of a card code: ``'QH#3'`` (with serial) or ``'QH'``."""
    code = int(code)
    if code < 0 or code >= 52 * MAX_DECKS:
        raise InputError(f"card code {code} out of range 0..{52 * MAX_DECKS - 1}")
    face = code % 52
    tok = RANKS[face % 13] + SUITS[face // 13]
    return f"{tok}#{code // 52 + 1}" if serial else tok


@lru_cache(maxsize=2)
def token_table(serial: bool = True) -> np.ndarray:
    """Object array mapping every code ``0 .. 52*8-1`` to its token (vectorised formatting)."""
    return np.array([format_card(c, serial=serial) for c in range(52 * MAX_DECKS)], dtype=object)


# ----------------------------------------------------------------------------- codes
def face_of(codes) -> np.ndarray:
    """Face 0..51 of card codes (identity ignoring the deck serial)."""
    return np.asarray(codes) % 52


def rank_of(codes) -> np.ndarray:
    """Rank index 0..12 (A..K) of card codes or faces."""
    return np.asarray(codes) % 13


def deck_of(codes) -> np.ndarray:
    """0-based deck index of card codes."""
    return np.asarray(codes) // 52


def baccarat_value(codes) -> np.ndarray:
    """Baccarat value (A=1, 2-9 face, T J Q K = 0) of card codes, as int8."""
    return BACCARAT_VALUE[np.asarray(codes) % 13]


def blackjack_value(codes) -> np.ndarray:
    """Blackjack value with the ace as 1 (T J Q K = 10) of card codes, as int8."""
    return BLACKJACK_VALUE[np.asarray(codes) % 13]


def new_shoe(decks: int) -> np.ndarray:
    """Codes of a shoe of ``decks`` decks in new-deck order, ``arange(52*decks)`` as int16."""
    _check_decks(decks)
    return np.arange(52 * decks, dtype=np.int16)


def _check_decks(decks) -> int:
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) or not 1 <= decks <= MAX_DECKS:
        raise EquipmentError(f"decks must be an integer in 1..{MAX_DECKS}, got {decks!r}")
    return int(decks)


def value_composition(decks: int, game: str) -> np.ndarray:
    """Number of cards of each game value in a full shoe.

    Returns
    -------
    (10,) ndarray of int64
        baccarat: index = value 0..9 (value 0 has 16 per deck); blackjack: index = value - 1
        for values 1 (ace) .. 10 (ten-valued: 16 per deck); any registered game: index = its value
        category (:attr:`rngcert.equipment.games.Game.value`), at least 10 entries.
    """
    decks = _check_decks(decks)
    if game not in GAMES:
        raise InputError(f"game must be one of {', '.join(repr(g) for g in GAMES)}, got {game!r}")
    table = np.asarray(GAMES[game].value, dtype=np.int64)
    return np.bincount(table, minlength=10).astype(np.int64) * 4 * decks


# ----------------------------------------------------------------------------- shoe
class _ShoeGeometry:
    """Cards, cutting-card position and penetration of a shoe of ``decks`` decks with ``_behind_cut``
    cards behind the cutting card (shared by :class:`Shoe` and the shuffle procedure)."""

    @property
    def n_cards(self) -> int:
        return 52 * self.decks

    @property
    def cut_position(self) -> int:
        """0-based position of the first card behind the cutting card (= cards in front of it, always dealt)."""
        return self.n_cards - self._behind_cut

    @property
    def penetration(self) -> float:
        """Fraction of the shoe in front of the cutting card."""
        return self.cut_position / self.n_cards


@dataclass(frozen=True)
class Shoe(_ShoeGeometry):
    """A dealing shoe: number of decks and where the cutting card sits.

    Parameters
    ----------
    decks : int
        1..8 decks of 52 cards.
    cut_from_back : int
        Cards behind the cutting card (baccarat 004 §2 rule 3.3.4: 7; blackjack 004 §3 rule 3.3 i:
        4 decks = 208). 0 means the whole shoe is dealt.
    """

    decks: int
    cut_from_back: int = 0

    def __post_init__(self) -> None:
        _check_decks(self.decks)
        if not isinstance(self.cut_from_back, (int, np.integer)) or not 0 <= self.cut_from_back < self.n_cards:
            raise EquipmentError(
                f"cut_from_back must be an integer in 0..{self.n_cards - 1} for a {self.decks}-deck shoe, "
                f"got {self.cut_from_back!r}"
            )

    @property
    def _behind_cut(self) -> int:
        return self.cut_from_back


# ----------------------------------------------------------------------------- baccarat
def baccarat_coup(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Play baccarat coups by the drawing rules of 004 §2 rule 3.5.1.

    Parameters
    ----------
    values : (..., k) array_like of int, k >= 6
        Baccarat values of the next cards in the shoe, in dealing order: cards 1 and 3 go to the
        Player, 2 and 4 to the Banker (rule 3.4.3); the Player's third card is card 5; the
        Banker's third card is card 6 if the Player drew, else card 5.

    Returns
    -------
    outcome : (...) ndarray of int8
        0 banker wins, 1 player wins, 2 tie.
    used : (...) ndarray of int8
        Cards used by the coup (4, 5 or 6).

    Notes
    -----
    Rule 3.5.1: a natural (8 or 9 in two cards) on either side stands both; the Player stands
    on 6-7 and draws on 0-5; if the Player stood the Banker draws on 0-5; if the Player drew
    the Banker draws on 0-2 always, on 3 unless the Player's third card is 8, on 4 if it is
    2-7, on 5 if 4-7, on 6 if 6-7, and stands on 7.
    """
    v = np.asarray(values).astype(np.int16)
    if v.shape[-1] < 6:
        raise InputError(f"baccarat_coup needs at least 6 card values per coup, got {v.shape[-1]}")
    return _coup(*(v[..., j] for j in range(6)))


def _coup(v0, v1, v2, v3, v4, v5):
    """:func:`baccarat_coup` on the six card values given as separate arrays (int16)."""
    p = (v0 + v2) % 10
    b = (v1 + v3) % 10
    natural = (p >= 8) | (b >= 8)
    pdraw = ~natural & (p <= 5)
    p3 = v4
    bdraw_if_pstood = b <= 5
    bdraw_if_pdrew = (
        (b <= 2)
        | ((b == 3) & (p3 != 8))
        | ((b == 4) & (p3 >= 2) & (p3 <= 7))
        | ((b == 5) & (p3 >= 4) & (p3 <= 7))
        | ((b == 6) & (p3 >= 6) & (p3 <= 7))
    )
    bdraw = ~natural & np.where(pdraw, bdraw_if_pdrew, bdraw_if_pstood)
    p = np.where(pdraw, (p + p3) % 10, p)
    b3 = np.where(pdraw, v5, v4)
    b = np.where(bdraw, (b + b3) % 10, b)
    outcome = np.where(b > p, OUTCOME_BANKER, np.where(p > b, OUTCOME_PLAYER, OUTCOME_TIE)).astype(np.int8)
    used = (4 + pdraw.astype(np.int8) + bdraw.astype(np.int8)).astype(np.int8)
    return outcome, used


@lru_cache(maxsize=1)
def _coup_table() -> tuple[np.ndarray, np.ndarray]:
    """:func:`_coup` of every (Player total, Banker total, fifth card, sixth card), flattened as
    ``((p * 10 + b) * 10 + c5) * 10 + c6``: a coup depends on its first four cards only through the
    two totals, so one look-up replaces the drawing rules in the deal's loop."""
    p, b, c5, c6 = (x.ravel().astype(np.int16) for x in np.indices((10, 10, 10, 10)))
    zero = np.zeros_like(p)
    return _coup(p, b, zero, zero, c5, c6)


def baccarat_deal(values, limit) -> dict:
    """Deal baccarat coups back to back from shoes, as the game strings them together.

    Parameters
    ----------
    values : (n_shoes, n_cards) array_like of int
        Baccarat values (0..9) in dealing order; entries beyond a shoe's ``limit`` are never
        used to start a coup (they may be -1 for cards that were not dealt).
    limit : int or (n_shoes,) array_like of int
        A coup is dealt while it starts before this position: the cards in front of the cutting
        card (004 §2 rules 3.2.2, 3.5.4: the hand during which the cutting card appears is
        completed). A coup never reads past ``n_cards``.

    Returns
    -------
    dict
        ``starts``, ``used``, ``outcome`` (0 banker, 1 player, 2 tie), ``player_drew`` : arrays
        of shape (n_shoes, max_coups), -1 / 0 / False where a shoe has no such coup;
        ``n_coups`` (n_shoes,) and ``n_dealt`` (n_shoes,) cards dealt.

    Notes
    -----
    Coups are sequential by nature: the loop runs over coups, vectorised over shoes; each coup is
    played by one look-up of its two-card totals and fifth and sixth cards (:func:`_coup_table`).
    """
    v = np.asarray(values)
    if v.ndim != 2 or v.shape[1] < 6:
        raise InputError(f"values must be 2-D (n_shoes, n_cards >= 6), got shape {v.shape}")
    m, n = v.shape
    lim = np.broadcast_to(np.asarray(limit, dtype=np.int64), (m,)).copy()
    if np.any(lim < 1) or np.any(lim > n):
        raise InputError(f"limit must lie in 1..{n}, got {lim.min()}..{lim.max()}")
    max_coups = int(lim.max()) // 4 + 1
    # one row per coup (contiguous writes), transposed at the end
    starts = np.full((max_coups, m), -1, dtype=np.int32)
    used_c = np.zeros((max_coups, m), dtype=np.int8)
    outcomes = np.full((max_coups, m), -1, dtype=np.int8)
    pdrew_c = np.zeros((max_coups, m), dtype=bool)
    pos = np.zeros(m, dtype=np.int64)
    # values (negative ones read as 0) padded with the last card six times: a coup at p reads p..p+5
    # clipped at the last card without a minimum per coup
    vv = np.maximum(np.asarray(v, dtype=np.int16), 0)
    flat = np.concatenate([vv, np.repeat(vv[:, -1:], 6, axis=1)], axis=1).ravel()
    rowbase = np.arange(m) * (n + 6)
    outcome_at, used_at = _coup_table()
    c = 0
    for c in range(max_coups):  # loop over coups (sequential by nature), vectorised over shoes
        active = pos < lim
        if not active.any():
            break
        i0 = rowbase + np.minimum(pos, n)
        w = [flat.take(i0 + j) for j in range(6)]
        ptot = (w[0] + w[2]) % 10
        btot = (w[1] + w[3]) % 10
        cell = ((ptot * 10 + btot) * 10 + w[4]) * 10 + w[5]
        used = np.minimum(used_at.take(cell), n - pos).astype(np.int8)
        starts[c] = np.where(active, pos, -1)
        used_c[c] = used
        pdrew_c[c] = (ptot <= 5) & (btot <= 7)
        outcomes[c] = outcome_at.take(cell)
        pos = np.where(active, pos + used, pos)
    else:
        c = max_coups
    on = starts[:c] >= 0  # the coups of the shoes still dealing; the others' entries are reset
    k = int(on.sum(axis=0).max()) if m else 0
    on = on[:k]
    return {"starts": np.ascontiguousarray(starts[:k].T), "used": np.ascontiguousarray(np.where(on, used_c[:k], 0).T),
            "outcome": np.ascontiguousarray(np.where(on, outcomes[:k], -1).astype(np.int8).T),
            "player_drew": np.ascontiguousarray((on & pdrew_c[:k]).T), "n_coups": on.sum(axis=0), "n_dealt": pos}


def baccarat_exact(composition) -> np.ndarray:
    """Exact banker/player/tie probabilities of the first coup dealt from a shoe.

    Parameters
    ----------
    composition : (10,) array_like of int
        Cards of each baccarat value 0..9 in the shoe (e.g. ``value_composition(8, "baccarat")``).

    Returns
    -------
    (3,) ndarray of float
        P(banker), P(player), P(tie).

    Notes
    -----
    Enumerates all 10**6 ordered value sequences of six cards drawn without replacement, with
    probability ``prod_k (c[v_k] - #{j<k: v_j = v_k}) / (N - k)``, and plays each by
    :func:`baccarat_coup`; cards a coup does not use sum out. Exact up to float rounding
    (the probabilities sum to 1 within 1e-12). Any card at a fixed shoe position is a uniform
    draw from a uniformly shuffled shoe, so this is also the law of a coup dealt from any fixed
    starting position.
    """
    c = np.asarray(composition, dtype=np.int64)
    if c.shape != (10,) or np.any(c < 0) or c.sum() < 6:
        raise InputError(f"composition must be 10 non-negative counts totalling >= 6, got {c.tolist()}")
    return np.array(_baccarat_exact(tuple(int(x) for x in c)))


@lru_cache(maxsize=32)
def _baccarat_exact(comp: tuple) -> tuple:
    factors, outcome = six_card_draws(np.array(comp, dtype=np.int64))
    prob = np.ones(outcome.size)
    for f in factors:
        prob *= f
    out = np.bincount(outcome, weights=prob, minlength=3)
    return tuple(out / out.sum())


@lru_cache(maxsize=1)
def _six_card_sequences() -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], np.ndarray]:
    """The 10**6 ordered value sequences of a coup's six cards (sequence i: the six digits of i, first card
    first): their columns (int8), how many of the cards before each hold its value (int8), and each coup's
    outcome (its two-card totals and cards 5 and 6 looked up in :func:`_coup_table`)."""
    cols = tuple(np.tile(np.repeat(np.arange(10, dtype=np.int8), 10 ** (5 - k)), 10**k) for k in range(6))
    prior = []
    for k in range(6):
        same = np.zeros(10**6, dtype=np.int8)
        for j in range(k):
            same += cols[j] == cols[k]
        prior.append(same)
    p = (cols[0] + cols[2]) % 10
    b = (cols[1] + cols[3]) % 10
    key = ((p.astype(np.intp) * 10 + b) * 10 + cols[4]) * 10 + cols[5]
    return cols, tuple(prior), _coup_table()[0][key]


def six_card_draws(composition) -> tuple[list[np.ndarray], np.ndarray]:
    """The draw probabilities of every ordered sequence of a coup's six card values, from a shoe.

    Parameters
    ----------
    composition : (10,) array_like of int or float
        Cards of each baccarat value 0..9 in the shoe (:func:`value_composition`).

    Returns
    -------
    factors : list of 6 (10**6,) ndarrays of float64
        ``factors[k][i]``: P(card k + 1 has the value of digit k of sequence i | the k cards before it), drawn
        without replacement: ``max(c[v] - (cards before of value v), 0) / (n - k)``. Their product over k is
        the probability of the sequence (sequence i: the six digits of i, the first card first).
    outcome : (10**6,) ndarray of int8
        The coup each sequence plays (:func:`baccarat_coup`): 0 banker, 1 player, 2 tie.

    Notes
    -----
    The enumeration behind :func:`baccarat_exact` and the trackers' exact returns
    (:func:`rngcert.stats.tracker_baccarat.baccarat_prefix_returns`): the repeated cards counted by
    comparing the columns, not by a (10**6, 10) table of cards used.
    """
    c = np.asarray(composition)
    cols, prior, outcome = _six_card_sequences()
    n = float(c.sum())
    return [np.maximum(c[cols[k]] - prior[k], 0) / (n - k) for k in range(6)], outcome


def baccarat_house_edge(probs) -> dict[str, float]:
    """House edge per unit staked from banker/player/tie probabilities (004 §2 rule 2.2).

    Banker pays 1:1 less 5% commission, Player 1:1, both push on a tie; Tie pays 8:1.
    """
    pb, pp, pt = (float(x) for x in probs)
    return {"banker": pp - 0.95 * pb, "player": pb - pp, "tie": 1.0 - 9.0 * pt}


# ----------------------------------------------------------------------------- blackjack
#: Hi-Lo count tag of each rank index A..K (2-6: +1, 7-9: 0, T-K and A: -1); Thorp (1966),
#: Griffin, *The Theory of Blackjack* (6th ed., 1999), ch. 4.
HILO_TAG = np.array([-1, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1, -1, -1], dtype=np.int8)

#: Dealer's hole-card rules: "none" (003 rule 4.10: one card only to the dealer, the second after
#: the players; a dealer blackjack takes every bet), "peek-ace" (004 §3 rules 3.4 iv and 3.7: a hole
#: card, checked for blackjack when the up card is an ace), "peek-all" (checked under an ace or a ten).
HOLE_CARD_RULES = ("none", "peek-ace", "peek-all")


def _check_rule(rule: str) -> str:
    r = str(rule).upper()
    if r not in DEALER_RULES:
        raise InputError(f"dealer rule must be one of {DEALER_RULES} (003 rule 4.15 a/b), got {rule!r}")
    return r


def dealer_play(values: np.ndarray, rule: str = "S17") -> tuple[np.ndarray, np.ndarray]:
    """Play the blackjack dealer's hand from consecutive cards (003 rule 4.14-4.15).

    Parameters
    ----------
    values : (m, k) array_like of int
        Blackjack values (ace = 1, ten-valued = 10) of the next k cards for each of m hands, in
        dealing order; the dealer draws until standing.
    rule : {"S17", "H17"}
        003 rule 4.15 a) stand on every 17 ("S17"); b) soft 17 counts 7, so the dealer hits it
        ("H17").

    Returns
    -------
    category : (m,) ndarray of int8
        0..4 for final totals 17..21, 5 for bust, -1 when the k cards ran out first.
    used : (m,) ndarray of int16
        Cards the dealer used.
    """
    rule = _check_rule(rule)
    v = np.asarray(values, dtype=np.int16)
    if v.ndim != 2:
        raise InputError(f"values must be 2-D (hands, cards), got shape {v.shape}")
    m, k = v.shape
    hard = np.zeros(m, dtype=np.int16)
    ace = np.zeros(m, dtype=bool)
    active = np.ones(m, dtype=bool)
    used = np.zeros(m, dtype=np.int16)
    for j in range(k):  # at most ~20 draws; vectorised over hands
        hard = np.where(active, hard + v[:, j], hard)
        ace |= active & (v[:, j] == 1)
        used += active
        soft = ace & (hard + 10 <= 21)
        total = np.where(soft, hard + 10, hard)
        stand = total >= 17
        if rule == "H17":
            stand &= ~((total == 17) & soft)
        active &= ~stand
        if not active.any():
            break
    soft = ace & (hard + 10 <= 21)
    total = np.where(soft, hard + 10, hard)
    cat = np.where(total > 21, 5, total - 17).astype(np.int8)
    cat[active] = -1
    return cat, used


def dealer_exact(composition, rule: str = "S17") -> np.ndarray:
    """Exact law of the dealer's final total (17..21, bust) from a shoe, drawing without replacement.

    Parameters
    ----------
    composition : (10,) array_like of int
        Cards of each blackjack value 1 (ace) .. 10 in the shoe.
    rule : {"S17", "H17"}
        003 rule 4.15 a) / b).

    Returns
    -------
    (6,) ndarray of float
        P(17), P(18), P(19), P(20), P(21), P(bust) for a dealer hand started at a fixed shoe
        position (the dealer's own cards only, no hole-card peek: 003 rule 4.10).

    Notes
    -----
    Depth-first enumeration over the value sequences the dealer can draw, with exact
    without-replacement probabilities; states are memoised on (cards removed, hard total,
    ace held).
    """
    rule = _check_rule(rule)
    c0 = tuple(int(x) for x in np.asarray(composition).ravel())
    if len(c0) != 10 or min(c0) < 0 or sum(c0) < 12:
        raise InputError(f"composition must be 10 non-negative counts totalling >= 12, got {list(c0)}")
    return np.array(_dealer_exact(c0, rule))


@lru_cache(maxsize=32)
def _dealer_exact(c0: tuple, rule: str) -> tuple:

    @lru_cache(maxsize=None)
    def go(removed: tuple, hard: int, ace: bool) -> tuple:
        soft = ace and hard + 10 <= 21
        total = hard + 10 if soft else hard
        stand = total >= 17 and not (rule == "H17" and total == 17 and soft)
        if stand:
            out = [0.0] * 6
            out[5 if total > 21 else total - 17] = 1.0
            return tuple(out)
        left = sum(c0) - sum(removed)
        acc = [0.0] * 6
        for i in range(10):
            cnt = c0[i] - removed[i]
            if cnt <= 0:
                continue
            r = list(removed)
            r[i] += 1
            sub = go(tuple(r), hard + i + 1, ace or i == 0)
            w = cnt / left
            for j in range(6):
                acc[j] += w * sub[j]
        return tuple(acc)

    return go((0,) * 10, 0, False)
