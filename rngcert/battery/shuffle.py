"""The shuffle battery (shoes before/after a shuffle, dealt shoes; DESIGN §5) as data.

:data:`SHUFFLE` runs on :class:`ShoeData`. Each spec has its own random stream
(:mod:`rngcert.seeding`), so adding a shuffle test changes no other test's p-value. The four
card-tracking statistics (rising sequences, adjacent pairs, displacement, rank correlation) are
one spec because, when repeated cards make card identity ambiguous, they share one Monte Carlo
null (the same resampled shoes); they are four results of the family.

Needs used here:

=====================  ====================================================================
``before``             the order before the shuffle is known for some shoes
``identity``           every card is identified (serialised decks or one deck): the exact
                       permutation is known
``equipment:game:G``   the game is G (``baccarat``, ``blackjack``)
=====================  ====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rngcert.battery.core import Battery, Context, Spec
from rngcert.errors import InputError
from rngcert.stats import games
from rngcert.stats import shuffle as sh
from rngcert.stats.result import NotApplicable, Requirement

#: Families without which a shuffle cannot be certified (they track the order before the shuffle).
REQUIRED = ("rising_sequences", "adjacent_pairs")


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
    game : {None, "baccarat", "blackjack"}
    rule : {"S17", "H17"}
        Blackjack dealer rule.
    usable : int, optional
        Positions dealt in every shoe (before the cutting card) for the game tests.
    guess_shoes, mc_shoes : int
        Shoes played by the guessing test; shoes used by the Monte Carlo identity tests.
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

    def __post_init__(self):
        if self.game not in (None, "baccarat", "blackjack"):
            raise InputError(f"game must be None, 'baccarat' or 'blackjack', got {self.game!r}")
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

    @cached_property
    def permutation(self) -> tuple[np.ndarray, bool]:
        """(perm, unique) of :func:`rngcert.stats.shuffle.card_permutation` on before/after."""
        return sh.card_permutation(self.before, np.asarray(self.after))

    def lacks(self, need: str) -> str | None:
        """Reason why ``need`` does not hold for these data, or None."""
        if need == "before":
            return None if self.before is not None and self.after is not None else "no order before the shuffle was given"
        if need == "identity":
            if self.lacks("before"):
                return self.lacks("before")
            return None if self.permutation[1] else "card identity ambiguous (repeated cards, no deck serials)"
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


def _position_rank(d: ShoeData, ctx: Context):
    return sh.position_rank_chisquare(d.shoes_dealt, decks=d.decks)


def _baccarat(d: ShoeData, ctx: Context):
    return games.baccarat_outcomes(d.shoes_dealt, decks=d.decks, usable=d.usable)


def _ten_clumping(d: ShoeData, ctx: Context):
    return games.ten_clumping(d.shoes_dealt)


def _dealer_totals(d: ShoeData, ctx: Context):
    return games.dealer_totals(d.shoes_dealt, decks=d.decks, rule=d.rule, usable=d.usable)


def _card_tracking_na(d: ShoeData) -> list[NotApplicable]:
    reason = d.lacks("before")
    return [NotApplicable(name, req, d.n_shoes, reason) for name, (_, _, _, req) in sh._PERM_TESTS.items()]


SHUFFLE = Battery(
    "shuffle",
    (
        Spec("card_tracking", _card_tracking, Requirement.INDEPENDENCE, needs=("before",)),
        Spec("position_chisquare", _position_chisquare, Requirement.INDEPENDENCE, needs=("identity",)),
        Spec("guessing", _guessing, Requirement.UNPREDICTABILITY, needs=("identity",)),
        Spec("position_rank_chisquare", _position_rank, Requirement.INDEPENDENCE),
        Spec("baccarat_outcomes", _baccarat, Requirement.UNIFORMITY, needs=("equipment:game:baccarat",)),
        Spec("ten_clumping", _ten_clumping, Requirement.INDEPENDENCE, needs=("equipment:game:blackjack",)),
        Spec("dealer_totals", _dealer_totals, Requirement.UNIFORMITY, needs=("equipment:game:blackjack",)),
    ),
    required=REQUIRED,
)


def evaluate_shuffle(data: ShoeData, *, entropy: int, n_resamples: int = 1999, alpha: float = 0.01):
    """Results of :data:`SHUFFLE` on ``data`` in report order, with the four card-tracking
    families reported by name (NotApplicable each) when the order before the shuffle is unknown.

    Returns
    -------
    results, errors, keys
        As :meth:`rngcert.battery.core.Battery.evaluate`.
    """
    results, errors, keys = SHUFFLE.evaluate(data, entropy=entropy, group="shuffle", n_resamples=n_resamples, alpha=alpha)
    out = []
    for r in results:
        if r.name == "card_tracking" and not r.applicable:
            out.extend(_card_tracking_na(data))
        else:
            out.append(r)
    return out, errors, keys


def shuffle_results(before, after, *, decks: int, entropy: int = 0, game: str | None = None, rule: str = "S17",
                    usable: int | None = None, dealt=None, guess_shoes: int = 2000, n_resamples: int = 199,
                    mc_shoes: int = 500) -> list:
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

    Returns
    -------
    list of TestResult or NotApplicable
        In report order.
    """
    data = ShoeData(None if before is None else np.asarray(before), None if after is None else np.asarray(after), decks,
                    game, rule, usable, None if dealt is None else np.asarray(dealt), guess_shoes, mc_shoes)
    results, errors, _ = evaluate_shuffle(data, entropy=entropy, n_resamples=n_resamples)
    if errors:
        raise InputError("; ".join(errors))
    return results
