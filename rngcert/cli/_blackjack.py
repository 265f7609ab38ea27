"""The blackjack rule options that ``house-edge`` and ``shuffle house-edge`` share (one definition)."""

from __future__ import annotations

import click

#: (flags, keywords, help) of each rule option, in the order ``--help`` lists them.
_RULES = (
    (("--rule",), dict(type=click.Choice(["S17", "H17"]), default=None), "Dealer rule (003 rule 4.15)."),
    (("--hole-card",), dict(type=click.Choice(["none", "peek-ace", "peek-all"]), default=None),
     "No hole card (003 rule 4.10), peek under an ace (004 §3 rule 3.7), or under an ace or a ten."),
    (("--double",), dict(type=click.Choice(["any", "9-11", "10-11"]), default=None), "Totals a player may double (003 rule 4.24)."),
    (("--das/--no-das",), dict(default=None), "Double after split."),
    (("--split-hands",), dict(type=click.IntRange(1, 4), default=None), "Most hands from one pair (1: no split)."),
    (("--resplit-aces",), dict(is_flag=True), "Aces may be resplit."),
    (("--obo",), dict(is_flag=True), "Without a peek, a dealer blackjack takes the original bet only."),
)


def blackjack_rule_options(prefix: str = ""):
    """Decorator adding ``--rule``, ``--hole-card``, ``--double``, ``--das``, ``--split-hands``,
    ``--resplit-aces`` and ``--obo`` to a click command; ``prefix`` (e.g. ``"Blackjack: "``) starts each help."""

    def deco(f):
        for flags, kw, text in reversed(_RULES):
            f = click.option(*flags, help=prefix + (text[0].lower() + text[1:] if prefix else text), **kw)(f)
        return f

    return deco
