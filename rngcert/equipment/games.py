"""The card games a shoe is certified for, as data: one :class:`Game` entry per game.

Every place that needs to know a game reads it here: the ``--game`` choices of ``rngcert shuffle``,
the ``game`` and ``[deal]`` keys a procedure file may use (:mod:`rngcert.equipment.procedure`), the
value composition of a shoe (:func:`rngcert.equipment.cards.value_composition`), the pickup sides
the rules leave to the dealer (:mod:`rngcert.pipeline.pickup_side`), the every-round model of the
shoe power gate (:mod:`rngcert.pipeline.shoe_power`) and the default standard.

Equipment is the lowest layer (DESIGN §2), so an entry holds data only. What a game *does* (its
deal and pickup, house edge, game-level tests and trackers) lives in the module named by
:attr:`Game.module`, in the layer that owns it; that module registers its callables with
:func:`rngcert.simulate.games.register_play`, and :func:`rngcert.simulate.games.play` imports it by
name. Imports still point one way: nothing here imports a higher layer.

Adding a card game: one module (deal and pickup, house edge, tracker, tests; see
:mod:`rngcert.simulate.casino_war`), one :func:`register` entry below, one test file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rngcert.errors import EquipmentError

__all__ = ["Game", "register", "get", "names", "GAMES"]

#: Standards a game may default to (the shuffle battery's own rules, :mod:`rngcert.battery.shuffle`).
_STANDARDS = ("edge", "uniform")


@dataclass(frozen=True)
class Game:
    """A card game dealt from a shoe, as data.

    Attributes
    ----------
    name : str
        The name used on the command line, in procedure files and in reports (``"baccarat"``).
    title : str
        Human name.
    rules : str
        The rules it follows (citation).
    value : tuple of 13 int
        Game value category of each rank A, 2, ..., K (index into the composition of
        :func:`rngcert.equipment.cards.value_composition`).
    deal_keys : dict
        ``[deal]`` keys a procedure may set: ``{key: tuple of allowed values}`` or, for an integer
        range, ``{key: (low, high)}`` with ``key`` listed in ``int_keys``.
    int_keys : tuple of str
        The ``deal_keys`` that are integer ranges.
    pickup_sides : tuple of str
        The ``pickup`` values the rules leave to the dealer for a shift (first: the default);
        empty when the pickup is fixed.
    pickup_rule : str
        The rule that leaves the pickup side to the dealer (for reports).
    round_name : str
        What one deal is called ("coup", "round").
    min_cards : int
        Cards a procedure must leave in front of the cutting card (one deal needs them).
    round_model : (float, float) or None
        Every-round bettor of the power gate: expected cards a seat uses per deal, and the
        standard deviation of one unit's return; None: no model.
    cards_scale_with_seats : bool
        The cards of a deal are ``round_model[0] * (players + 1)`` (every seat and the dealer).
    default_standard : {"edge", "uniform"}
        Standard of a manual procedure dealing this game.
    module : str
        Dotted name of the module that registers the game's play (deal and pickup, house edge,
        tests, trackers) with :func:`rngcert.simulate.games.register_play`.
    """

    name: str
    title: str
    rules: str
    value: tuple
    deal_keys: dict = field(default_factory=dict)
    int_keys: tuple = ()
    pickup_sides: tuple = ()
    pickup_rule: str = ""
    round_name: str = "round"
    min_cards: int = 2
    round_model: tuple | None = None
    cards_scale_with_seats: bool = False
    default_standard: str = "edge"
    module: str = "rngcert.simulate.games"

    def __post_init__(self) -> None:
        if not self.name or self.name == "none" or not all(c.isalnum() or c == "-" for c in self.name):
            raise EquipmentError(f"game name must be letters, digits and '-' (not 'none'), got {self.name!r}")
        if len(self.value) != 13 or any(not isinstance(v, int) or v < 0 for v in self.value):
            raise EquipmentError(f"game {self.name}: 'value' must give 13 non-negative categories (A..K), got {self.value!r}")
        if self.default_standard not in _STANDARDS:
            raise EquipmentError(f"game {self.name}: default_standard must be one of {_STANDARDS}, got {self.default_standard!r}")
        if self.pickup_sides and tuple(self.deal_keys.get("pickup", ())) != tuple(self.pickup_sides):
            raise EquipmentError(f"game {self.name}: the pickup sides must be the [deal] pickup values")


#: The registry: game name -> :class:`Game`, in registration order.
GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add a game to the registry (a name registered twice is an error)."""
    if game.name in GAMES:
        raise EquipmentError(f"game {game.name!r} is registered twice")
    GAMES[game.name] = game
    return game


def get(name: str) -> Game:
    """The registered game called ``name``; raises naming the known games."""
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise EquipmentError(f"unknown game {name!r}; known games: {', '.join(GAMES)} (or 'none')") from None


def names() -> tuple[str, ...]:
    """Names of the registered games, in registration order."""
    return tuple(GAMES)


register(Game(
    "baccarat", "Baccarat (punto banco)", "004_e56c47cd813c1f96.txt §2 (drawing rules 3.5.1)",
    value=(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0),
    deal_keys={"pickup": ("banker-first", "player-first"), "undealt": ("top", "bottom")},
    pickup_sides=("banker-first", "player-first"), pickup_rule="004 §2 rule 3.6.2", round_name="coup", min_cards=6,
    # 4.94 cards a coup (exact expectation of the third-card rules), Banker bet s.d. 0.93 (ties push)
    round_model=(4.94, 0.93)))
register(Game(
    "blackjack", "Blackjack", "004_e56c47cd813c1f96.txt §3; 003 (house edge display, rule 4.5)",
    value=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9),
    deal_keys={"players": (1, 7), "rule": ("S17", "H17"), "pickup": ("right-to-left", "left-to-right")}, int_keys=("players",),
    pickup_sides=("right-to-left", "left-to-right"), pickup_rule="004 §3 rule 3.6", min_cards=2,
    # about 2.7 cards a hand, one hand per seat and the dealer's, s.d. 1.15 a hand (Griffin, The Theory of
    # Blackjack, 6th ed., 1999, ch. 12), one unit on the first seat
    round_model=(2.7, 1.15), cards_scale_with_seats=True))
register(Game(
    "casino-war", "Casino War", "Wizard of Odds, Casino War (rules and house edge; wizardofodds.com/games/casino-war)",
    value=(12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),  # rank order 2 < 3 < ... < K < A
    deal_keys={"players": (1, 7), "pickup": ("last-on-top", "first-on-top"), "tie": ("war", "surrender")}, int_keys=("players",),
    pickup_sides=("last-on-top", "first-on-top"), pickup_rule="the house's War table procedure",
    min_cards=16,
    # about 1.25 cards a seat (one card per seat and the dealer's; 3 burns and a card per warring seat and the
    # dealer's after a tie); one unit's return +-1, +1 on a won war, -2 on a lost one: s.d. 1.05 (casino_war.house_edge)
    round_model=(1.25, 1.05), cards_scale_with_seats=True, module="rngcert.simulate.casino_war"))
