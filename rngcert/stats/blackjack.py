"""Blackjack: the house edge of basic strategy under the seeds' rules, and rounds played from shoes.

Rules (:class:`Rules`) cover the options of 003_099d15f6604b638d.txt rules 4.9-4.25 and
004_e56c47cd813c1f96.txt §3 rules 2.3-2.7, 3.4-3.7, 4.4: decks, the dealer's soft 17 (003 rule
4.15 a/b; 004 allows only standing, rule 4.4 ii), the hole card (003 rule 4.10: none, the UK
European game; 004 rules 3.4 iv and 3.7: a hole card checked under an ace), doubling (any two
cards, or 9-11 only: 003 rule 4.24), splitting (hands, aces), blackjack 3 to 2, insurance 2 to 1.

:func:`house_edge` computes the expected loss per unit of initial bet of a player who plays the
best strategy for each first-two-card composition (and a total-dependent basic strategy table
for :func:`play_rounds`). Method (documented approximation, the usual "two-card
composition-dependent" analysis):

* every first deal (player's two cards, dealer's up card) is weighted by its exact probability
  from the full shoe, without replacement;
* the dealer's final total, and whether the dealer has blackjack, are computed exactly by
  recursion over the dealer's draws from the shoe less those three cards;
* the player's further cards are drawn from that same composition (their removal from the
  dealer's cards is ignored), and split hands use the composition less both pair cards;
* resplits (to ``split_hands``) follow the expected number of hands of the "split whenever
  allowed" process.

Without a peek (003 rule 4.10, or a ten up under 004's ace-only peek) a dealer blackjack is seen
after the players act; ``enhc_takes_all`` says whether it then takes doubled and split bets too
(the European convention) or the initial bet only. :func:`play_rounds` deals rounds from real or
simulated shoes with that strategy table and settles every hand on the cards dealt: the trackers'
returns (:mod:`rngcert.stats.trackers`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from rngcert.equipment.cards import BLACKJACK_VALUE, HOLE_CARD_RULES
from rngcert.errors import InputError

__all__ = ["Rules", "house_edge", "Strategy", "play_rounds", "insurance_edge", "first_deal_ev"]

_ACE, _TEN = 0, 9  # rank indices of the value table: 0 = ace, 1..8 = 2..9, 9 = ten-valued
_VAL = np.arange(1, 11)


@dataclass(frozen=True)
class Rules:
    """Blackjack rules.

    Attributes
    ----------
    decks : int
    dealer : {"S17", "H17"}
        003 rule 4.15 a) stand on soft 17, b) hit it.
    hole_card : {"none", "peek-ace", "peek-all"}
        See :data:`rngcert.equipment.cards.HOLE_CARD_RULES`.
    double : {"any", "9-11", "10-11"}
        First-two-card hard totals that may double ("any": every two-card hand, soft too).
    double_after_split : bool
    split_hands : int in 1..4
        Most hands from one pair (1: no splitting; 2: split once, 004 §3 rule 2.7).
    split_aces_one_card : bool
        Split aces get one card each (an ace and a ten then count 21, not blackjack).
    resplit_aces : bool
    blackjack_pays : float
        3 to 2 is 1.5 (003 rule 4.18 a, 004 §3 rule 2.3 i).
    insurance_pays : float
    enhc_takes_all : bool
        Without a peek, a dealer blackjack also takes doubled and split bets.
    """

    decks: int = 8
    dealer: str = "S17"
    hole_card: str = "none"
    double: str = "any"
    double_after_split: bool = False
    split_hands: int = 2
    split_aces_one_card: bool = True
    resplit_aces: bool = False
    blackjack_pays: float = 1.5
    insurance_pays: float = 2.0
    enhc_takes_all: bool = True

    def __post_init__(self):
        if isinstance(self.decks, bool) or not isinstance(self.decks, (int, np.integer)) or not 1 <= self.decks <= 8:
            raise InputError(f"decks must be an integer in 1..8, got {self.decks!r}")
        if self.dealer not in ("S17", "H17"):
            raise InputError(f"dealer must be 'S17' or 'H17' (003 rule 4.15 a/b), got {self.dealer!r}")
        if self.hole_card not in HOLE_CARD_RULES:
            raise InputError(f"hole_card must be one of {HOLE_CARD_RULES}, got {self.hole_card!r}")
        if self.double not in ("any", "9-11", "10-11"):
            raise InputError(f"double must be 'any', '9-11' or '10-11', got {self.double!r}")
        if not 1 <= int(self.split_hands) <= 4:
            raise InputError(f"split_hands must be in 1..4, got {self.split_hands!r}")

    @classmethod
    def from_procedure(cls, proc, decks: int | None = None) -> "Rules":
        """The rules of a blackjack procedure (its ``[rules]`` and dealer rule)."""
        r = proc.rules
        return cls(decks=int(decks or proc.decks), dealer=proc.dealer_rule, hole_card=r["hole_card"], double=r["double"],
                   double_after_split=r["double_after_split"], split_hands=r["split_hands"],
                   split_aces_one_card=r["split_aces_one_card"], blackjack_pays=r["blackjack_pays"],
                   insurance_pays=r["insurance_pays"], enhc_takes_all=r["enhc_takes_all"])

    def peeks(self, up: int) -> bool:
        """The dealer checks for blackjack before the players act with this up card (rank index)."""
        return (self.hole_card == "peek-all" and up in (_ACE, _TEN)) or (self.hole_card == "peek-ace" and up == _ACE)

    def may_double(self, hard_total: int, soft: bool) -> bool:
        if self.double == "any":
            return True
        lo = 9 if self.double == "9-11" else 10
        return not soft and lo <= hard_total <= 11


def _composition(decks: int) -> np.ndarray:
    c = np.full(10, 4 * decks, dtype=np.int64)
    c[_TEN] = 16 * decks
    return c


# ----------------------------------------------------------------------------- the dealer
@lru_cache(maxsize=32)
def _dealer_sequences(up: int, h17: bool):
    """Every ordered sequence of cards the dealer can draw after up card ``up`` until standing.

    Returns (ranks (S, L) padded with 0, prior (S, L) copies of the same rank drawn earlier in the
    sequence, used (S, L) bool, outcome (S,) 0..4 = 17..21, 5 bust, 6 blackjack)."""
    seqs, outs = [], []
    stack = [((), up + 1, up == _ACE)]
    while stack:  # depth-first enumeration (at most ~19,000 sequences per up card)
        seq, hard, ace = stack.pop()
        soft = ace and hard + 10 <= 21
        total = hard + 10 if soft else hard
        if seq and total >= 17 and not (h17 and total == 17 and soft):
            natural = len(seq) == 1 and {up, seq[0]} == {_ACE, _TEN}
            seqs.append(seq)
            outs.append(6 if natural else (5 if total > 21 else total - 17))
            continue
        for r in range(10):
            stack.append((seq + (r,), hard + r + 1, ace or r == _ACE))
    L = max(len(q) for q in seqs)
    S = len(seqs)
    ranks = np.zeros((S, L), dtype=np.int64)
    prior = np.zeros((S, L), dtype=np.int64)
    used = np.zeros((S, L), dtype=bool)
    for i, q in enumerate(seqs):
        seen = [0] * 10
        for j, r in enumerate(q):
            ranks[i, j] = r
            prior[i, j] = seen[r]
            used[i, j] = True
            seen[r] += 1
    return ranks, prior, used, np.array(outs)


@lru_cache(maxsize=4096)
def _dealer_law(up: int, comp: tuple, h17: bool) -> tuple[float, np.ndarray]:
    """(P(dealer blackjack), law of the final total 17..21, bust given no blackjack) for up card
    ``up`` and the shoe ``comp`` the hole card and draws come from.

    Exact without replacement: every draw sequence of :func:`_dealer_sequences` weighted by
    prod_i (c[r_i] - copies drawn before) / (N - i)."""
    ranks, prior, used, out = _dealer_sequences(up, h17)
    c = np.asarray(comp, dtype=float)
    n = c.sum()
    num = np.where(used, np.maximum(c[ranks] - prior, 0.0), 1.0)
    den = np.where(used, n - np.arange(ranks.shape[1])[None, :], 1.0)
    p = np.prod(num / den, axis=1)
    tot = np.bincount(out, weights=p, minlength=7)
    p_bj = float(tot[6])
    return p_bj, tot[:6] / max(1.0 - p_bj, 1e-300)


# ----------------------------------------------------------------------------- the player
class _Hand:
    """Player values against one dealer law, drawing from fixed probabilities ``p``."""

    def __init__(self, p: np.ndarray, law: np.ndarray):
        self.p = p
        self.law = law  # 17..21, bust
        cum_below = np.concatenate([[0.0], np.cumsum(law[:5])])  # P(dealer total < 17 + k)
        self.stand_ev = np.full(32, -1.0)
        for t in range(4, 22):
            if t < 17:
                self.stand_ev[t] = law[5] - (1 - law[5])
            else:
                k = t - 17
                below = cum_below[k]
                above = law[:5].sum() - below - law[k]
                self.stand_ev[t] = law[5] + below - above
        self._best = {}

    @staticmethod
    def total(hard: int, ace: bool) -> tuple[int, bool]:
        soft = ace and hard + 10 <= 21
        return (hard + 10 if soft else hard), soft

    def stand(self, hard: int, ace: bool) -> float:
        t, _ = self.total(hard, ace)
        return self.stand_ev[t] if t <= 21 else -1.0

    def best(self, hard: int, ace: bool) -> float:
        """Optimal hit/stand value of a hand (no doubling or splitting)."""
        key = (hard, ace)
        if key in self._best:
            return self._best[key]
        t, _ = self.total(hard, ace)
        if t > 21:
            v = -1.0
        elif t == 21:
            v = self.stand(hard, ace)
        else:
            v = max(self.stand(hard, ace), self.hit(hard, ace))
        self._best[key] = v
        return v

    def hit(self, hard: int, ace: bool) -> float:
        return float(sum(self.p[r] * (self.best(hard + r + 1, ace or r == _ACE) if hard + r + 1 <= 21 else -1.0)
                         for r in range(10) if self.p[r] > 0))

    def double(self, hard: int, ace: bool) -> float:
        return 2.0 * float(sum(self.p[r] * self.stand(hard + r + 1, ace or r == _ACE) for r in range(10) if self.p[r] > 0))

    def hit_stand_action(self, hard: int, ace: bool) -> str:
        t, _ = self.total(hard, ace)
        return "S" if t >= 21 or self.stand(hard, ace) >= self.hit(hard, ace) else "H"


def _two_card_options(h: _Hand, hard: int, ace: bool, rules: Rules, can_double: bool) -> dict:
    """Value (given no dealer blackjack) and stake of stand / hit / double for a two-card hand."""
    t, soft = h.total(hard, ace)
    opts = {"S": (h.stand(hard, ace), 1.0), "H": (h.hit(hard, ace), 1.0)}
    if can_double and rules.may_double(hard if not soft else t, soft):
        opts["D"] = (h.double(hard, ace), 2.0)
    return opts


def _split_counts(p_pair: float, max_hands: int, can_resplit: bool) -> tuple[float, float]:
    """Expected completed hands (second card not a pair card, and pair card that could not be
    resplit) of the "split whenever allowed" process starting from two hands."""

    @lru_cache(maxsize=None)
    def go(hands: int, pending: int) -> tuple[float, float]:
        if pending == 0:
            return 0.0, 0.0
        a, b = go(hands, pending - 1)  # this hand gets a non-pair card
        non = (1 - p_pair) * (1 + a) + 0.0
        pr = (1 - p_pair) * b
        if can_resplit and hands < max_hands:
            c, d = go(hands + 1, pending + 1)
            non += p_pair * c
            pr += p_pair * d
        else:
            c, d = go(hands, pending - 1)
            non += p_pair * c
            pr += p_pair * (1 + d)
        return non, pr

    return go(2, 2)


def _split_value(pair: int, comp_after: np.ndarray, law: np.ndarray, rules: Rules) -> tuple[float, float]:
    """(value given no dealer blackjack, expected stake) of splitting a pair of rank ``pair``."""
    n = comp_after.sum()
    p = comp_after / n
    h = _Hand(p, law)
    aces = pair == _ACE
    values = {}
    for r in range(10):
        if p[r] <= 0:
            continue
        hard, ace = pair + 1 + r + 1, aces or r == _ACE
        if aces and rules.split_aces_one_card:
            values[r] = (h.stand(hard, ace), 1.0)
        else:
            opts = _two_card_options(h, hard, ace, rules, rules.double_after_split)
            k = max(opts, key=lambda a: opts[a][0])
            values[r] = opts[k]
    can_resplit = rules.split_hands > 2 and (not aces or rules.resplit_aces)
    p_pair = p[pair]
    non, prh = _split_counts(float(p_pair), int(rules.split_hands), can_resplit)
    q = 1 - p_pair
    v_non = sum(p[r] * values[r][0] for r in values if r != pair) / q if q > 0 else 0.0
    s_non = sum(p[r] * values[r][1] for r in values if r != pair) / q if q > 0 else 1.0
    v_pr, s_pr = values.get(pair, (0.0, 1.0))
    return non * v_non + prh * v_pr, non * s_non + prh * s_pr


def _deal_value(a: int, b: int, up: int, comp: np.ndarray, rules: Rules, strategy=None):
    """Expected return (per initial unit) of the first deal (a, b) against up card ``up``, and
    the chosen action; ``comp`` is the full shoe."""
    c = comp.copy()
    c[a] -= 1
    c[b] -= 1
    c[up] -= 1
    if np.any(c < 0):
        return 0.0, "-"
    p_bj, law = _dealer_law(up, tuple(int(x) for x in c), rules.dealer == "H17")
    natural = {a, b} == {_ACE, _TEN}
    if natural:
        return (1 - p_bj) * rules.blackjack_pays, "BJ"
    h = _Hand(c / c.sum(), law)
    hard, ace = a + 1 + b + 1, a == _ACE or b == _ACE
    opts = _two_card_options(h, hard, ace, rules, True)
    if a == b and rules.split_hands >= 2:
        c2 = c.copy()
        opts["P"] = _split_value(a, c2, law, rules)
    peek = rules.peeks(up)

    def total_ev(action):
        v, stake = opts[action]
        if p_bj == 0:
            return v
        loss = -1.0 if (peek or not rules.enhc_takes_all) else -stake
        return p_bj * loss + (1 - p_bj) * v

    if strategy is None:
        act = max(opts, key=total_ev)
    else:
        act = strategy.first_action(a, b, up)
        if act not in opts:  # doubling not allowed here: the hit/stand table
            t, soft = h.total(hard, ace)
            act = str((strategy.soft if soft else strategy.hard)[t, up])
    return total_ev(act), act


@dataclass(frozen=True)
class Strategy:
    """A total-dependent basic strategy table (computed by :func:`house_edge` for its rules).

    Attributes
    ----------
    hard2, soft2 : (22, 10) ndarrays of str
        First-two-card action by total and dealer up card (rank index 0 = ace .. 9 = ten):
        "S" stand, "H" hit, "D" double (hit when doubling is not allowed).
    hard, soft : (22, 10) ndarrays of str
        Hit/stand with three or more cards.
    pair : (10, 10) ndarray of bool
        Split this pair against this up card.
    """

    hard2: np.ndarray
    soft2: np.ndarray
    hard: np.ndarray
    soft: np.ndarray
    pair: np.ndarray

    def first_action(self, a: int, b: int, up: int) -> str:
        if a == b and self.pair[a, up]:
            return "P"
        hard = a + b + 2
        ace = a == _ACE or b == _ACE
        if ace and hard + 10 <= 21:
            return str(self.soft2[hard + 10, up])
        return str(self.hard2[hard, up])

    def codes(self) -> dict:
        """Integer tables for :func:`play_rounds`: 0 stand, 1 hit, 2 double."""
        enc = {"S": 0, "H": 1, "D": 2}
        f = np.vectorize(lambda x: enc.get(x, 0))
        return {"hard2": f(self.hard2), "soft2": f(self.soft2), "hard": f(self.hard), "soft": f(self.soft), "pair": self.pair.copy()}

    def to_dict(self) -> dict:
        ups = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T"]
        return {"up_cards": ups,
                "hard_first_two": {str(t): "".join(self.hard2[t]) for t in range(5, 22)},
                "soft_first_two": {str(t): "".join(self.soft2[t]) for t in range(13, 22)},
                "hard": {str(t): "".join(self.hard[t]) for t in range(4, 22)},
                "soft": {str(t): "".join(self.soft[t]) for t in range(12, 22)},
                "split": {ups[r]: "".join("P" if x else "-" for x in self.pair[r]) for r in range(10)}}


def _basic_strategy(rules: Rules) -> Strategy:
    """Total-dependent table: each decision at the full shoe less the up card (and, for the
    first two cards, weighted over the two-card hands with that total)."""
    comp = _composition(rules.decks)
    hard2 = np.full((22, 10), "S", dtype="<U1")
    soft2 = np.full((22, 10), "S", dtype="<U1")
    hard = np.full((22, 10), "S", dtype="<U1")
    soft = np.full((22, 10), "S", dtype="<U1")
    pair = np.zeros((10, 10), dtype=bool)
    for up in range(10):
        c = comp.copy()
        c[up] -= 1
        p_bj, law = _dealer_law(up, tuple(int(x) for x in c), rules.dealer == "H17")
        h = _Hand(c / c.sum(), law)
        for t in range(4, 22):
            hard[t, up] = h.hit_stand_action(t, False)
        for t in range(12, 22):
            soft[t, up] = h.hit_stand_action(t - 10, True)
        # first two cards: weigh each two-card hand with this total by its probability
        ev = {}
        for a in range(10):
            for b in range(a, 10):
                if {a, b} == {_ACE, _TEN}:
                    continue
                w = c[a] * (c[b] - (a == b)) * (1 if a == b else 2)
                if w <= 0:
                    continue
                hh, ace = a + b + 2, a == _ACE or b == _ACE
                t, soft_ = h.total(hh, ace)
                opts = _two_card_options(h, hh, ace, rules, True)
                peek = rules.peeks(up)
                for k, (v, stake) in opts.items():
                    loss = -1.0 if (peek or not rules.enhc_takes_all) else -stake
                    tot = p_bj * loss + (1 - p_bj) * v
                    key = ("soft" if soft_ else "hard", t, k)
                    ev[key] = ev.get(key, 0.0) + w * tot
                if a == b and rules.split_hands >= 2:
                    v, stake = _split_value(a, c.copy(), law, rules)
                    loss = -1.0 if (peek or not rules.enhc_takes_all) else -stake
                    best_other = max(p_bj * (-1.0 if (peek or not rules.enhc_takes_all) else -s_) + (1 - p_bj) * v_
                                     for v_, s_ in opts.values())
                    pair[a, up] = p_bj * loss + (1 - p_bj) * v > best_other
        for (kind, t, k) in list(ev):
            table = soft2 if kind == "soft" else hard2
            cands = {kk: ev[(kind, t, kk)] for (kd, tt, kk) in ev if kd == kind and tt == t}
            table[t, up] = max(cands, key=cands.get)
    return Strategy(hard2, soft2, hard, soft, pair)


def insurance_edge(rules: Rules) -> float:
    """House edge of the insurance bet (003 rule 4.19, 004 §3 rule 2.5): it wins ``insurance_pays``
    when the dealer's hole card is ten-valued, from the full shoe less the dealer's ace."""
    c = _composition(rules.decks)
    p_ten = c[_TEN] / (c.sum() - 1)
    return 1.0 - (rules.insurance_pays + 1.0) * p_ten


def house_edge(rules: Rules, *, strategy: str = "optimal") -> dict:
    """House edge of blackjack per unit of initial bet under ``rules``.

    Parameters
    ----------
    rules : Rules
    strategy : {"optimal", "table"}
        "optimal": the best play for each first deal (two-card composition-dependent); "table":
        the total-dependent basic strategy table the round engine plays.

    Returns
    -------
    dict
        ``house_edge`` (float, per initial unit), ``method`` (text), ``rules`` (dict),
        ``strategy`` (:class:`Strategy`), ``insurance_house_edge``, ``p_blackjack``.

    Notes
    -----
    See the module docstring for the method and its approximations. Reference (test):
    6 decks, S17, no hole card, double 9-11, double after split, resplit any pair (aces too) to
    4 hands, no surrender, 3 to 2: 0.55% (Wizard of Odds, Ask the Wizard #294).
    """
    comp = _composition(rules.decks)
    N = comp.sum()
    table = _basic_strategy_cached(rules)
    use = table if strategy == "table" else None
    ev = 0.0
    for a in range(10):
        for up in range(10):
            for b in range(10):
                w = comp[a] / N * (comp[up] - (up == a)) / (N - 1) * (comp[b] - (b == a) - (b == up)) / (N - 2)
                if w <= 0:
                    continue
                lo, hi = min(a, b), max(a, b)
                v, _ = _cached_deal(lo, hi, up, rules, use is not None)
                ev += w * v
    pbj = 2 * comp[_ACE] * comp[_TEN] / (N * (N - 1))
    method = ("two-card composition-dependent: first deals weighted exactly without replacement; dealer's outcome "
              "exact for the shoe less the player's two cards and the up card; the player's further cards from that "
              "composition; splits by the expected hands of 'split whenever allowed'; "
              + ("optimal play per first deal" if use is None else "the total-dependent table the round engine plays"))
    return {"house_edge": -ev, "method": method, "rules": asdict(rules), "strategy": table,
            "insurance_house_edge": insurance_edge(rules), "p_blackjack": float(pbj)}


_DEAL_CACHE: dict = {}


def first_deal_ev(rules: Rules) -> np.ndarray:
    """Expected return per unit bet of each first deal under the basic strategy table.

    Returns
    -------
    (10, 10, 10) ndarray
        ``ev[a, b, up]`` for the player's cards a, b and the dealer's up card (rank indices
        0 = ace .. 9 = ten-valued), the dealer's blackjack included (as the rules settle it).
    """
    out = np.zeros((10, 10, 10))
    for a in range(10):
        for b in range(a, 10):
            for up in range(10):
                out[a, b, up] = out[b, a, up] = _cached_deal(a, b, up, rules, True)[0]
    return out


def _cached_deal(a, b, up, rules, use_table):
    key = (a, b, up, rules, use_table)
    if key not in _DEAL_CACHE:
        st = _basic_strategy_cached(rules) if use_table else None
        _DEAL_CACHE[key] = _deal_value(a, b, up, _composition(rules.decks), rules, st)
    return _DEAL_CACHE[key]


@lru_cache(maxsize=16)
def _basic_strategy_cached(rules: Rules) -> Strategy:
    return _basic_strategy(rules)


# ----------------------------------------------------------------------------- rounds from shoes
# long: one vectorised loop over rounds for all shoes at once (deal, peek, splits, doubles, draws, settlement) on shared shoe arrays
def play_rounds(after, *, rules: Rules, players: int = 7, cut_position: int) -> dict:
    """Deal blackjack rounds from shoes with every seat playing the basic strategy table.

    Parameters
    ----------
    after : (n_shoes, N) array_like of int
        Card codes in dealing order.
    rules : Rules
    players : int in 1..7
        Seats played (every seat bets the same: the tracker's bet multiplies the round).
    cut_position : int
        Rounds start while in front of the cutting card (004 §3 rule 3.2.2) and fit in the shoe.

    Returns
    -------
    dict
        ``starts`` (n_shoes, R) first card of each round (-1: none); ``returns`` (n_shoes, R) net
        return of the round summed over seats, per unit bet per seat; ``seat_returns``
        (n_shoes, R, seats); ``seats`` int; ``n_rounds``.

    Notes
    -----
    Deal order of 004 §3 rule 3.4: a card to each seat, the dealer's up card, a second card to
    each seat, then the hole card when ``rules.hole_card`` is not "none" (003 rule 4.10 deals the
    dealer's second card after the players). A peeked dealer blackjack ends the round at once.
    Each seat then plays in turn: split (to two hands, both second cards dealt first), double (one
    card), hit or stand by the table; the dealer draws by ``rules.dealer``. Settlement: blackjack
    pays ``blackjack_pays``; an unpeeked dealer blackjack takes doubled and split bets when
    ``enhc_takes_all``. No insurance is taken. Hands are split at most once (more split hands in
    ``rules`` are played as two). The loop runs over rounds, seats and draws, vectorised over shoes.
    """
    a = np.asarray(after)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"after must be a 2-D integer array (n_shoes, N), got shape {a.shape}")
    m, n = a.shape
    P = int(players)
    if not 1 <= P <= 7:
        raise InputError(f"players must be in 1..7, got {players!r}")
    tab = _basic_strategy_cached(rules).codes()
    rk = (BLACKJACK_VALUE[a % 13] - 1).astype(np.int64)  # rank index 0 = ace .. 9 = ten
    rk = np.concatenate([rk, np.zeros((m, 40), np.int64)], axis=1)  # guard: reads past the shoe end are masked
    R_max = cut_position // (2 * P + 2) + 2
    starts = np.full((m, R_max), -1, dtype=np.int64)
    returns = np.zeros((m, R_max))
    seat_returns = np.zeros((m, R_max, P))
    pos = np.zeros(m, dtype=np.int64)
    rows = np.arange(m)
    hole = rules.hole_card != "none"
    bj_pay = float(rules.blackjack_pays)
    h17 = rules.dealer == "H17"

    def card(r, p):
        return rk[r, p]

    for rnd in range(R_max):  # rounds are sequential, vectorised over shoes
        act = (pos < cut_position) & (pos + 2 * P + 2 <= n)
        if not act.any():
            break
        r = rows[act]
        p0 = pos[act]
        k = r.size
        starts[r, rnd] = p0
        first = np.stack([card(r, p0 + s) for s in range(P)], axis=1)
        up = card(r, p0 + P)
        second = np.stack([card(r, p0 + P + 1 + s) for s in range(P)], axis=1)
        cur = p0 + 2 * P + 1
        if hole:
            hole_c = card(r, cur)
            cur = cur + 1
        dealer_bj_known = np.zeros(k, bool)
        if hole:
            dealer_bj_known = ((up == _ACE) & (hole_c == _TEN)) | ((up == _TEN) & (hole_c == _ACE))
        peek = np.zeros(k, bool)
        if rules.hole_card == "peek-ace":
            peek = up == _ACE
        elif rules.hole_card == "peek-all":
            peek = (up == _ACE) | (up == _TEN)
        ended = peek & dealer_bj_known  # the round ends at once
        natural = ((first == _ACE) & (second == _TEN)) | ((first == _TEN) & (second == _ACE))
        # per seat, up to two hands: hard total (aces as 1), ace held, stake, done, cards
        hard = np.zeros((k, P, 2), np.int64)
        ace = np.zeros((k, P, 2), bool)
        stake = np.zeros((k, P, 2))
        live = np.zeros((k, P, 2), bool)
        ncards = np.zeros((k, P, 2), np.int64)
        hard[:, :, 0] = first + second + 2
        ace[:, :, 0] = (first == _ACE) | (second == _ACE)
        stake[:, :, 0] = 1.0
        live[:, :, 0] = ~ended[:, None] & ~natural
        ncards[:, :, 0] = 2
        split_ace = np.zeros((k, P, 2), bool)
        for s in range(P):  # seats in order, vectorised over shoes
            # split?
            can_split = live[:, s, 0] & (first[:, s] == second[:, s]) & (rules.split_hands >= 2)
            do_split = can_split & tab["pair"][first[:, s], up]
            if do_split.any():
                i = np.flatnonzero(do_split)
                c1 = card(r[i], cur[i])
                c2 = card(r[i], cur[i] + 1)
                cur[i] += 2
                pr = first[i, s]
                hard[i, s, 0] = pr + c1 + 2
                hard[i, s, 1] = pr + c2 + 2
                ace[i, s, 0] = (pr == _ACE) | (c1 == _ACE)
                ace[i, s, 1] = (pr == _ACE) | (c2 == _ACE)
                stake[i, s, 1] = 1.0
                live[i, s, 1] = True
                ncards[i, s, 1] = 2
                split_ace[i, s, :] = (pr == _ACE)[:, None]
            for hnd in range(2):
                alive = live[:, s, hnd].copy()
                sa = split_ace[:, s, hnd] & rules.split_aces_one_card
                alive &= ~sa
                splitted = live[:, s, 1] if hnd == 0 else np.ones(k, bool)
                first_move = True
                while alive.any():
                    hh = hard[:, s, hnd]
                    soft = ace[:, s, hnd] & (hh + 10 <= 21)
                    tot = np.where(soft, hh + 10, hh)
                    u = up
                    if first_move:
                        t2 = np.clip(tot, 0, 21)
                        a2 = np.where(soft, tab["soft2"][t2, u], tab["hard2"][t2, u])
                        may_d = np.where(soft, rules.double == "any",
                                         (rules.double == "any") | ((rules.double == "9-11") & (hh >= 9) & (hh <= 11))
                                         | ((rules.double == "10-11") & (hh >= 10) & (hh <= 11)))
                        may_d &= ~splitted | rules.double_after_split
                        hs = np.where(soft, tab["soft"][t2, u], tab["hard"][t2, u])
                        action = np.where((a2 == 2) & ~may_d, hs, a2)
                    else:
                        t2 = np.clip(tot, 0, 21)
                        action = np.where(soft, tab["soft"][t2, u], tab["hard"][t2, u])
                    action = np.where(tot >= 21, 0, action)
                    draw = alive & (action >= 1)
                    if not draw.any():
                        break
                    i = np.flatnonzero(draw)
                    c = card(r[i], cur[i])
                    cur[i] += 1
                    hard[i, s, hnd] += c + 1
                    ace[i, s, hnd] |= c == _ACE
                    ncards[i, s, hnd] += 1
                    dbl = action[i] == 2
                    stake[i[dbl], s, hnd] *= 2.0
                    alive[i[dbl]] = False
                    bust = hard[i, s, hnd] > 21
                    alive[i[bust]] = False
                    alive &= action >= 1
                    first_move = False
        # dealer
        if not hole:
            hole_c = card(r, cur)
            cur = cur + 1
            dealer_bj_known = ((up == _ACE) & (hole_c == _TEN)) | ((up == _TEN) & (hole_c == _ACE))
        dbj = dealer_bj_known
        dh = up + hole_c + 2
        dace = (up == _ACE) | (hole_c == _ACE)
        # the dealer draws only while a hand that has not busted awaits (004 §3 rule 4.4 iii)
        need = ~ended & ~dbj & (live & (hard <= 21)).any(axis=(1, 2))
        while True:
            soft = dace & (dh + 10 <= 21)
            tot = np.where(soft, dh + 10, dh)
            drw = need & ((tot < 17) | (h17 & (tot == 17) & soft))
            if not drw.any():
                break
            i = np.flatnonzero(drw)
            c = card(r[i], cur[i])
            cur[i] += 1
            dh[i] += c + 1
            dace[i] |= c == _ACE
        soft = dace & (dh + 10 <= 21)
        dtot = np.where(soft, dh + 10, dh)
        # settle
        ptot = np.where(ace & (hard + 10 <= 21), hard + 10, hard)
        res = np.zeros((k, P, 2))
        pbust = ptot > 21
        dbust = dtot > 21
        win = ~pbust & (dbust[:, None, None] | (ptot > dtot[:, None, None]))
        lose = pbust | (~dbust[:, None, None] & (ptot < dtot[:, None, None]))
        res = np.where(win, stake, np.where(lose, -stake, 0.0)) * live
        # naturals and dealer blackjacks
        nat_res = np.where(dbj[:, None], 0.0, bj_pay)
        res[:, :, 0] = np.where(natural, nat_res, res[:, :, 0])
        if rules.enhc_takes_all:
            bj_loss = -(stake * live).sum(axis=2)
        else:
            bj_loss = -np.ones((k, P))
        seat_res = np.where(dbj[:, None], np.where(natural, 0.0, np.where(ended[:, None], -1.0, bj_loss)), res.sum(axis=2))
        returns[r, rnd] = seat_res.sum(axis=1)
        seat_returns[r, rnd] = seat_res
        pos[act] = cur
    keep = int((starts >= 0).any(axis=0).sum())
    return {"starts": starts[:, :keep], "returns": returns[:, :keep], "seat_returns": seat_returns[:, :keep], "seats": P,
            "n_rounds": (starts >= 0).sum(axis=1)}
