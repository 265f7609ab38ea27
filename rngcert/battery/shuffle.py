"""The shuffle battery (shoes before/after a shuffle, dealt shoes; DESIGN §5) as data, and its
verdict policy.

:data:`SHUFFLE` runs on :class:`ShoeData`. Each spec has its own random stream
(:mod:`rngcert.seeding`), so adding a shuffle test changes no other test's p-value. The four
card-tracking statistics (rising sequences, adjacent pairs, displacement, rank correlation) are
one spec because, when repeated cards make card identity ambiguous, they share one Monte Carlo
null (the same resampled shoes); they are four results of the family.

Besides the statistics, the battery runs the trackers of :mod:`rngcert.stats.trackers`: each is a
one-sided test that a player who sees only the dealt cards beats a threshold declared in advance
(``tracker_edge:*``). :func:`decide_shuffle` states the verdict:

* standard ``"edge"`` (a manual procedure: no dealer's wash is a perfect shuffle, and every one is
  rejected by a large enough sample): **FAIL** only when a tracker's edge beats the threshold
  (after Holm over the whole battery at alpha); a statistical rejection without such an edge is a
  *finding*: **SUSPECT**, with the plain-words sentence of each finding;
* standard ``"uniform"`` (a machine or an algorithm, which can be exact): **FAIL** on any
  family-wise rejection, trackers included.

A raw p-value below alpha without a family-wise rejection is listed but does not change a PASS
(with ~15 tests it happens to 14% of fair shoes; the SUSPECT level is the Holm rejection of a
finding, so under a uniform shuffle at most alpha of the reports are not PASS).

Needs used here:

=====================  ====================================================================
``before``             the order before the shuffle is known for some shoes
``identity``           every card is identified (serialised decks or one deck): the exact
                       permutation is known
``tracker``            a tracker's view of the order before the shuffle and an offset kernel
``full_shoes``         the dealt shoes are whole (trackers settle bets on every coup/round)
``rotated``            the card orientation is known
``equipment:game:G``   the game is G (``baccarat``, ``blackjack``, a game of the registry)
=====================  ====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rngcert.battery.core import Battery, BatteryOutcome, Context, Spec, decide
from rngcert.equipment import games as G
from rngcert.errors import InputError
from rngcert.simulate import games as plays
from rngcert.stats import games, trackers
from rngcert.stats import shuffle as sh
from rngcert.stats.result import NotApplicable, Requirement

#: Families without which a shuffle cannot be certified (they track the order before the shuffle).
REQUIRED = ("rising_sequences", "adjacent_pairs")
STANDARDS = ("edge", "uniform")

#: House edges used as the "no information" reference of the baccarat trackers (004 §2 rule 2.2,
#: 8 decks; recomputed exactly by rngcert.stats.trackers.baccarat_prefix_returns).
_BACCARAT_SIDES = ("player", "banker")

POLICY_TEXT = {
    "FAIL": "a realistic tracker's edge beats the threshold declared in advance (one-sided test, Holm over the battery at alpha); "
            "under the 'uniform' standard (machines, algorithms) also any test rejecting after Holm",
    "SUSPECT": "'edge' standard (manual procedures): some test rejects after Holm but no tracker beats the threshold: findings, "
               "each stated in words, with what to check",
    "INCONCLUSIVE": "the data cannot carry a verdict: a required test family could not run (no order before the shuffle), "
                    "too few shoes, or a test could not be run",
    "PASS": "no test rejects after Holm (raw p-values below alpha are listed; with this many tests a fair shoe shows one "
            "about 1 - (1 - alpha)^m of the time)",
}


@dataclass
class ShoeData:
    """Shoes as the shuffle battery sees them.

    Attributes
    ----------
    before, after : (n_shoes, n_cards) int arrays or None
        Card codes before and after the shuffle, in dealing order (None when a log has no
        ``before`` stage).
    dealt : (n_dealt, L) int array, optional
        Dealt shoes for the rank and game-level tests when they differ from ``after``.
    decks : int
        Decks per shoe.
    game : None or a game of rngcert.equipment.games ("baccarat", "blackjack", "casino-war", ...)
    rule : {"S17", "H17"}
        Blackjack dealer rule.
    usable : int, optional
        Positions dealt in every shoe (before the cutting card) for the game tests.
    guess_shoes, mc_shoes : int
        Shoes played by the guessing test; shoes used by the Monte Carlo identity tests.
    before_view : (n_shoes, n_cards) int array, optional
        What a tracker knows of ``before``: -1 where it never saw the card.
    kernel : OffsetKernel, optional
        What a tracker knows of the shuffle.
    threshold : float
        Tracker edge (per unit staked) declared in advance; the verdict fails above it.
    bj_rules : rngcert.stats.blackjack.Rules, optional
        Blackjack rules for the trackers' rounds.
    players : int
        Blackjack seats.
    rotated : (n_shoes, L) int array, optional
        Orientation of the dealt cards (1 turned, 0 not, -1 unknown).
    """

    before: np.ndarray | None
    after: np.ndarray | None
    decks: int
    game: str | None = None
    rule: str = "S17"
    usable: int | None = None
    dealt: np.ndarray | None = None
    guess_shoes: int = 2000
    mc_shoes: int = 500
    before_view: np.ndarray | None = None
    kernel: object = None
    threshold: float = 0.0
    bj_rules: object = None
    players: int = 7
    rotated: np.ndarray | None = None

    def __post_init__(self):
        if self.game is not None and self.game not in G.GAMES:
            raise InputError(f"game must be None or one of {', '.join(repr(g) for g in G.GAMES)}, got {self.game!r}")
        a = self.after if self.after is not None else self.dealt
        if a is None or np.asarray(a).ndim != 2:
            raise InputError(f"after must be 2-D (n_shoes, n_cards), got shape {None if a is None else np.asarray(a).shape}")
        if self.dealt is not None and np.asarray(self.dealt).ndim != 2:
            raise InputError(f"dealt must be 2-D (n_shoes, n_cards), got shape {np.asarray(self.dealt).shape}")

    @property
    def shoes_dealt(self) -> np.ndarray:
        """The dealt order used by the rank and game-level tests."""
        return np.asarray(self.dealt if self.dealt is not None else self.after)

    @property
    def n_shoes(self) -> int:
        return int(np.asarray(self.after if self.after is not None else self.dealt).shape[0])

    @property
    def n_cards(self) -> int:
        return 52 * int(self.decks)

    @cached_property
    def permutation(self) -> tuple[np.ndarray, bool]:
        """(perm, unique) of :func:`rngcert.stats.shuffle.card_permutation` on before/after."""
        return sh.card_permutation(self.before, np.asarray(self.after))

    @cached_property
    def rounds(self) -> dict:
        """Blackjack rounds dealt from ``after`` with the basic strategy (one run for every tracker)."""
        from rngcert.stats.blackjack import play_rounds

        return play_rounds(np.asarray(self.after), rules=self.bj_rules, players=self.players, cut_position=self.cut)

    @property
    def cut(self) -> int:
        return int(self.usable if self.usable is not None else self.n_cards)

    def lacks(self, need: str) -> str | None:
        """Reason why ``need`` does not hold for these data, or None."""
        if need == "before":
            return None if self.before is not None and self.after is not None else "no order before the shuffle was given"
        if need == "identity":
            if self.lacks("before"):
                return self.lacks("before")
            return None if self.permutation[1] else "card identity ambiguous (repeated cards, no deck serials)"
        if need == "tracker":
            if self.kernel is None or self.before_view is None:
                return "no tracker view of the order before the shuffle (no previous shoe, no before stage)"
            return self.lacks("full_shoes")
        if need == "full_shoes":
            a = self.after
            if a is None or np.asarray(a).shape[1] != self.n_cards or np.any(np.asarray(a) < 0):
                return "the shoes are not whole (the trackers settle bets on the cards dealt)"
            return None
        if need == "bj_rules":
            return None if self.bj_rules is not None else "no blackjack rules given"
        if need == "rotated":
            if self.rotated is None:
                return "the log has no 'rotated' column"
            return None if np.any(np.asarray(self.rotated) >= 0) else "no card's orientation is known"
        if need.startswith("equipment:game:"):
            g = need.split(":", 2)[2]
            return None if self.game == g else f"the game is not {g}"
        return f"unknown need {need!r}"


def _card_tracking(d: ShoeData, ctx: Context):
    perm, unique = d.permutation
    if unique:
        return [fn(perm, alternative=alt) for name, (fn, _, alt, _) in sh._PERM_TESTS.items()]
    return sh._mc_perm_tests(np.asarray(d.before), np.asarray(d.after), ctx.rng, ctx.n_resamples, d.mc_shoes)


def _position_chisquare(d: ShoeData, ctx: Context):
    return sh.position_chisquare(d.permutation[0])


def _guessing(d: ShoeData, ctx: Context):
    return sh.guessing_test(d.permutation[0], max_shoes=d.guess_shoes)


def _fixed_points(d: ShoeData, ctx: Context):
    return sh.fixed_points(d.before, d.after)


def _position_correlation(d: ShoeData, ctx: Context):
    if d.permutation[1]:  # with card identity it is Spearman's rho: rank_correlation already tests it
        return NotApplicable("position_correlation", Requirement.INDEPENDENCE, d.n_shoes,
                             "card identity is known: the same statistic as rank_correlation")
    return sh.position_correlation(d.before, d.after)


def _position_rank(d: ShoeData, ctx: Context):
    return sh.position_rank_chisquare(d.shoes_dealt, decks=d.decks)


def _baccarat(d: ShoeData, ctx: Context):
    return games.baccarat_outcomes(d.shoes_dealt, decks=d.decks, usable=d.usable)


def _ten_clumping(d: ShoeData, ctx: Context):
    return games.ten_clumping(d.shoes_dealt)


def _dealer_totals(d: ShoeData, ctx: Context):
    return games.dealer_totals(d.shoes_dealt, decks=d.decks, rule=d.rule, usable=d.usable)


def _orientation(d: ShoeData, ctx: Context):
    r = np.asarray(d.rotated)
    dealt = d.shoes_dealt
    L = min(r.shape[1], dealt.shape[1])
    return [sh.orientation_share(r[:, :L]), sh.orientation_rank(r[:, :L], dealt[:, :L])]


# ----------------------------------------------------------------------------- trackers
def _baccarat_tracker(d: ShoeData, ctx: Context):
    trk = trackers.baccarat_sequence_tracker(d.before_view, d.after, d.kernel, decks=d.decks, cut_position=d.cut)
    stake, ret, side = trk.policy(0.0)
    tab = trackers.baccarat_prefix_returns(d.decks)
    he = {s: -float((tab["head"] * tab[s]).sum()) for s in _BACCARAT_SIDES}
    shadow = {s: trackers.edge_summary(*trk.shadow(s, -he[s])) for s in _BACCARAT_SIDES}
    coups = int(trk.coup.sum())
    extra = {"game": "baccarat", "policy": "one unit on Player or Banker when its predicted expected return is above 0",
             "house_edge_by_side": he, "coups": coups, "bets_per_coup": float(stake.sum() / max(coups, 1)),
             "bets_by_side": {"player": int((side == 1).sum()), "banker": int((side == 2).sum())},
             "validation": {"what": "bets on a side whenever its predicted return beats its full-shoe expectation; a tracker "
                                    "without information returns minus the house edge of that side", **shadow}}
    # per-unit sd of a coup, for the power statement when it never bets
    extra["per_coup_sd"] = float(np.sqrt(np.mean(trk.ret_banker[trk.coup] ** 2)))
    return trackers.tracker_edge("tracker_edge:baccarat_sequence", stake, ret, threshold=d.threshold,
                                 house_edge=min(he.values()), extra=extra)


def _bj_house_edge(d: ShoeData) -> float:
    from rngcert.stats.blackjack import house_edge

    return float(house_edge(d.bj_rules, strategy="table")["house_edge"])


def _bj_sequence(d: ShoeData, ctx: Context):
    from rngcert.stats.blackjack import first_deal_ev

    rr = d.rounds
    ev = trackers.blackjack_sequence_tracker(d.before_view, d.after, rr["starts"], d.kernel, first_deal_ev(d.bj_rules),
                                             decks=d.decks, players=d.players)
    bet = np.nan_to_num(ev, nan=-np.inf) > 0
    seat = rr["seat_returns"][:, :, 0]
    he = _bj_house_edge(d)
    sh_bet = np.nan_to_num(ev, nan=-np.inf) > -he
    extra = {"game": "blackjack", "policy": "one unit on the first seat when the predicted value of its deal is above 0",
             "rounds": int((rr["starts"] >= 0).sum()),
             "validation": {"what": "first-seat bets whenever the predicted value beats the house edge; without information "
                                    "they return minus the house edge",
                            "first_seat": trackers.edge_summary(sh_bet.sum(axis=1).astype(float), np.where(sh_bet, seat, 0.0).sum(axis=1))},
             "per_coup_sd": float(np.sqrt(np.mean(seat[rr["starts"] >= 0] ** 2)))}
    return trackers.tracker_edge("tracker_edge:blackjack_sequence", bet.sum(axis=1).astype(float), np.where(bet, seat, 0.0).sum(axis=1),
                                 threshold=d.threshold, house_edge=he, extra=extra)


def _bj_spread(d: ShoeData, name: str, bets: np.ndarray, policy: str):
    rr = d.rounds
    he = _bj_house_edge(d)
    flat = (rr["starts"] >= 0).astype(float)
    seats = rr["seats"]
    extra = {"game": "blackjack", "policy": policy, "spread": [list(x) for x in trackers.SPREAD],
             "rounds": int(flat.sum()), "share_of_rounds_above_minimum": float((bets > trackers.SPREAD[0][1]).sum() / max(flat.sum(), 1)),
             "validation": {"what": "the same rounds at a flat bet: minus the house edge of the strategy",
                            "flat": trackers.edge_summary((flat * seats).sum(axis=1), (flat * rr["returns"]).sum(axis=1))},
             "per_coup_sd": float(np.sqrt(np.mean((rr["returns"][rr["starts"] >= 0] / seats) ** 2)))}
    return trackers.tracker_edge(name, (bets * seats).sum(axis=1), (bets * rr["returns"]).sum(axis=1), threshold=d.threshold,
                                 house_edge=he, extra=extra)


def _bj_zone(d: ShoeData, ctx: Context):
    bets = trackers.blackjack_zone_tracker(d.before_view, d.after, d.rounds["starts"], d.kernel, decks=d.decks)
    return _bj_spread(d, "tracker_edge:blackjack_zone", bets, "every seat, 1-8 units on the predicted true count of the coming zone")


def _hilo(d: ShoeData, ctx: Context):
    bets = trackers.hilo_counter(d.after, d.rounds["starts"], decks=d.decks)
    return _bj_spread(d, "tracker_edge:hilo_count", bets, "every seat, 1-8 units on the Hi-Lo true count of the cards seen")


SHUFFLE = Battery(
    "shuffle",
    (
        Spec("card_tracking", _card_tracking, Requirement.INDEPENDENCE, needs=("before",)),
        Spec("position_chisquare", _position_chisquare, Requirement.INDEPENDENCE, needs=("identity",)),
        Spec("guessing", _guessing, Requirement.UNPREDICTABILITY, needs=("identity",)),
        Spec("fixed_points", _fixed_points, Requirement.INDEPENDENCE, needs=("before",)),
        Spec("position_correlation", _position_correlation, Requirement.INDEPENDENCE, needs=("before",)),
        Spec("position_rank_chisquare", _position_rank, Requirement.INDEPENDENCE),
        Spec("baccarat_outcomes", _baccarat, Requirement.UNIFORMITY, needs=("equipment:game:baccarat",)),
        Spec("ten_clumping", _ten_clumping, Requirement.INDEPENDENCE, needs=("equipment:game:blackjack",)),
        Spec("dealer_totals", _dealer_totals, Requirement.UNIFORMITY, needs=("equipment:game:blackjack",)),
        Spec("orientation", _orientation, Requirement.UNPREDICTABILITY, needs=("rotated",)),
        Spec("tracker_edge:baccarat_sequence", _baccarat_tracker, Requirement.UNPREDICTABILITY, needs=("equipment:game:baccarat", "tracker")),
        Spec("tracker_edge:blackjack_sequence", _bj_sequence, Requirement.UNPREDICTABILITY,
             needs=("equipment:game:blackjack", "tracker", "bj_rules")),
        Spec("tracker_edge:blackjack_zone", _bj_zone, Requirement.UNPREDICTABILITY, needs=("equipment:game:blackjack", "tracker", "bj_rules")),
        Spec("tracker_edge:hilo_count", _hilo, Requirement.UNPREDICTABILITY, needs=("equipment:game:blackjack", "full_shoes", "bj_rules")),
    ),
    required=REQUIRED,
)


_GAME_BATTERIES: dict[str, Battery] = {}


def battery_for(game: str | None) -> Battery:
    """The shuffle battery of a game: :data:`SHUFFLE`, or for a registered game whose play brings its
    own tests and trackers (:attr:`rngcert.simulate.games.Play.specs`), the specs of :data:`SHUFFLE`
    that need no other game followed by the game's own."""
    specs = () if game is None else plays.play(game).specs
    if not specs:
        return SHUFFLE
    if game not in _GAME_BATTERIES:
        other = [s for s in SHUFFLE.specs if not any(n.startswith("equipment:game:") and n != f"equipment:game:{game}" for n in s.needs)]
        own = [Spec(name, func, req, needs=tuple(needs)) for name, func, req, needs in specs]
        _GAME_BATTERIES[game] = Battery("shuffle", tuple(other + own), required=REQUIRED)
    return _GAME_BATTERIES[game]


def evaluate_shuffle(data: ShoeData, *, entropy: int, n_resamples: int = 1999, alpha: float = 0.01, group: str = "shuffle",
                     battery: Battery | None = None):
    """Results of the game's battery (:func:`battery_for`; default :data:`SHUFFLE`) on ``data`` in report
    order, with the four card-tracking families reported by name (NotApplicable each) when the order
    before the shuffle is unknown.

    Returns
    -------
    results, errors, keys
        As :meth:`rngcert.battery.core.Battery.evaluate`.
    """
    battery = battery_for(data.game) if battery is None else battery
    results, errors, keys = battery.evaluate(data, entropy=entropy, group=group, n_resamples=n_resamples, alpha=alpha)
    out = []
    for r in results:
        if r.name == "card_tracking" and not r.applicable:
            out.extend(NotApplicable(name, req, data.n_shoes, r.reason) for name, (_, _, _, req) in sh._PERM_TESTS.items())
        elif r.name == "orientation" and not r.applicable:
            out.extend(NotApplicable(n, Requirement.UNPREDICTABILITY, data.n_shoes, r.reason) for n in ("orientation_share", "orientation_rank"))
        else:
            out.append(r)
    return out, errors, keys


def is_tracker(name: str) -> bool:
    return name.startswith("tracker_edge:")


#: Rejections that are findings under every standard: the share of cards turned says whether the
#: procedure randomises orientation (a safeguard against edge sorting), not that outcomes are biased.
FINDING_ONLY = ("orientation_share",)


def decide_shuffle(results, *, alpha: float, standard: str, errors=(), inconclusive=(), seeds=None) -> BatteryOutcome:
    """The verdict of the shuffle battery under a standard (see the module docstring).

    Parameters
    ----------
    results : sequence of TestResult / NotApplicable
    alpha : float
        Family-wise level (Holm over every applicable result, trackers included).
    standard : {"edge", "uniform"}
    errors, inconclusive : sequences of str
        As in :func:`rngcert.battery.core.decide`.

    Returns
    -------
    BatteryOutcome
        With ``suspect_rule`` stating the rule used.
    """
    if standard not in STANDARDS:
        raise InputError(f"standard must be one of {STANDARDS}, got {standard!r}")
    rule = ("edge standard: FAIL on a tracker edge above the threshold; a test rejecting without such an edge is a finding (SUSPECT)"
            if standard == "edge" else "uniform standard: FAIL on any family-wise rejection")
    out = decide(results, alpha=alpha, errors=errors, inconclusive=inconclusive, suspect=[], suspect_rule=rule,
                 required=REQUIRED, seeds=seeds)
    edge_rej = [n for n in out.rejected if is_tracker(n)]
    stat_rej = [n for n in out.rejected if not is_tracker(n)]
    # the edge standard clears a statistical rejection only when a tracker measured the player's edge
    # (it bet and did not beat the threshold); a game without a tracker, or trackers that could not
    # bet, measured nothing, and the rejection stays a FAIL
    measured = any(is_tracker(r.name) and r.applicable for r in results)
    if out.verdict == "FAIL":
        if edge_rej:
            out.reasons = [f"a tracker beats the threshold declared in advance: {', '.join(edge_rej)} (Holm at {alpha:.3g})"]
            if stat_rej:
                out.reasons.append(f"also rejected: {', '.join(stat_rej)}")
        elif all(n in FINDING_ONLY for n in stat_rej) or (standard == "edge" and measured):
            out.verdict = "SUSPECT"
            out.reasons = [f"findings: {len(stat_rej)} test(s) reject at family-wise level {alpha:.3g} (Holm): {', '.join(stat_rej)}; "
                           "no tracker beats the threshold, so under the edge standard these are findings, not a FAIL"]
        elif standard == "edge":
            out.reasons = [f"rejected after Holm at {alpha:.3g}: {', '.join(stat_rej)}; no tracker measured the player's edge (the game has "
                           "no tracker, or none could bet on these shoes), so the edge standard cannot clear the rejection: it stays a FAIL"]
    if out.verdict == "PASS" and out.raw_below_alpha:
        out.reasons.append(f"raw p < {alpha} without a family-wise rejection (expected by chance): {', '.join(out.raw_below_alpha)}")
    out.suspect_rule = rule
    return out


def shuffle_results(before, after, *, decks: int, entropy: int = 0, game: str | None = None, rule: str = "S17",
                    usable: int | None = None, dealt=None, guess_shoes: int = 2000, n_resamples: int = 199,
                    mc_shoes: int = 500, **extra) -> list:
    """Every result of the shuffle battery on shoes before/after a shuffle (no verdict).

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int or None
        Card codes before and after the shuffle.
    decks : int
        Decks per shoe.
    entropy : int
        Root entropy of the Monte Carlo streams.
    game, rule, usable, dealt, guess_shoes, mc_shoes
        As in :class:`ShoeData`.
    n_resamples : int
        Monte Carlo replicates when card identity is ambiguous.
    **extra
        Further :class:`ShoeData` fields (``before_view``, ``kernel``, ``bj_rules``, ``rotated``...).

    Returns
    -------
    list of TestResult or NotApplicable
        In report order.
    """
    data = ShoeData(None if before is None else np.asarray(before), None if after is None else np.asarray(after), decks,
                    game, rule, usable, None if dealt is None else np.asarray(dealt), guess_shoes, mc_shoes, **extra)
    results, errors, _ = evaluate_shuffle(data, entropy=entropy, n_resamples=n_resamples)
    if errors:
        raise InputError("; ".join(errors))
    return results
