"""What a registered card game does: its deal and pickup, house edge, game-level tests and trackers.

:mod:`rngcert.equipment.games` holds each game as data; this module holds its *play*, the callables
that deal it (:class:`Play`). A game module registers its play with :func:`register_play` when it
is imported; :func:`play` imports the module the game's entry names (:attr:`Game.module`) by name,
so a new game needs no import added anywhere. Baccarat and blackjack are registered here; their
game-level tests and trackers stay in the static shuffle battery (:data:`rngcert.battery.shuffle.SHUFFLE`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from rngcert.equipment import games as G
from rngcert.errors import EquipmentError
from rngcert.simulate import deal as D

__all__ = ["Play", "register_play", "play", "deal_params"]

#: The registered plays, by game name (:func:`register_play`).
_PLAYS: dict[str, "Play"] = {}


@dataclass(frozen=True)
class Play:
    """The callables of one game.

    Attributes
    ----------
    name : str
        The game's registry name.
    deal : callable
        ``deal(shoes, *, cut_position, **params) -> rngcert.simulate.deal.Deal``: deals shoes to the
        cutting card and picks the cards up into the discard order.
    params : callable
        ``params(proc) -> dict``: the keyword parameters of ``deal`` from a procedure (None: the
        game's defaults).
    house_edge : callable
        ``house_edge(decks, rules) -> dict``: the report's ``house_edge`` block (``game``,
        ``decks``, ``method``; a game of a module also ``edge``, ``basis`` and ``sentence``);
        ``rules`` is the blackjack :class:`~rngcert.stats.blackjack.Rules` or None.
    specs : tuple
        Game-level tests and trackers for the shuffle battery: ``(name, func, requirement, needs)``
        with ``func(shoe_data, ctx)`` returning a result (the battery adds them for this game).
    """

    name: str
    deal: Callable
    params: Callable
    house_edge: Callable
    specs: tuple = field(default_factory=tuple)


def register_play(p: Play) -> Play:
    """Register the play of a game of :mod:`rngcert.equipment.games` (called by the game's module)."""
    G.get(p.name)  # the game must be in the registry
    _PLAYS[p.name] = p
    return p


def play(name: str) -> Play:
    """The play of the registered game ``name``, importing its module on first use."""
    game = G.get(name)
    if name not in _PLAYS:
        importlib.import_module(game.module)
    if name not in _PLAYS:
        raise EquipmentError(f"game {name!r}: its module {game.module} registers no play")
    return _PLAYS[name]


def deal_params(name: str, proc) -> dict:
    """Deal parameters of game ``name`` from a procedure ``proc`` (its defaults when ``proc`` is None
    or deals another game)."""
    return play(name).params(proc if proc is not None and proc.game == name else None)


# ----------------------------------------------------------------------------- baccarat, blackjack
def _baccarat_params(proc) -> dict:
    return dict(proc.deal) if proc is not None else {}


def _blackjack_params(proc) -> dict:
    if proc is None:
        return {"players": 7, "rule": "S17"}
    side = proc.deal.get("pickup")
    return {"players": proc.deal.get("players", 7), "rule": proc.dealer_rule} | ({"pickup": side} if side else {})


def _baccarat_edge(decks: int, rules=None) -> dict:
    from rngcert.stats.trackers import baccarat_prefix_returns

    tab = baccarat_prefix_returns(decks)
    he = {s: -float((tab["head"] * tab[s]).sum()) for s in ("player", "banker")}
    return {"game": "baccarat", "decks": decks, "banker": he["banker"], "player": he["player"],
            "method": "exact enumeration of the coup's six cards from the full shoe (004 §2 rules 2.2, 3.5.1)"}


def _blackjack_edge(decks: int, rules=None) -> dict | None:
    if rules is None:
        return None
    from rngcert.stats.blackjack import house_edge

    h = house_edge(rules)
    return {"game": "blackjack", "decks": decks, "basic_strategy": h["house_edge"], "insurance": h["insurance_house_edge"],
            "rules": h["rules"], "method": h["method"], "strategy": h["strategy"].to_dict(),
            "note": "003 rule 4.5: the house edge for the number of decks in play must be displayed at the table"}


register_play(Play("baccarat", D.deal_pickup_baccarat, _baccarat_params, _baccarat_edge))
register_play(Play("blackjack", D.deal_pickup_blackjack, _blackjack_params, _blackjack_edge))
