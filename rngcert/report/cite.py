"""Rules cited in reports, by document title and rule number (never by a file name).

The regulations rngcert implements, as a reader finds them:

* :data:`GB_RULES` — Gambling Commission, *Rules of casino games in Great Britain* (roulette,
  blackjack, baccarat; roulette rules 3.2-3.31, the wheel in rule 3.5 and Figure 3);
* :data:`NZ_MONEY_WHEEL` — Department of Internal Affairs (New Zealand), casino game rules,
  *Division 10 – Money Wheel* (the randomness requirement is its rule 2.4);
* :data:`LIVE_CASINO` — *Rules for the Live Casino* (baccarat section 2 and blackjack section 3,
  shuffle procedures in rules 3.2-3.6).
"""

from __future__ import annotations

GB_RULES = "Gambling Commission, Rules of casino games in Great Britain"
NZ_MONEY_WHEEL = "Department of Internal Affairs (NZ), casino game rules, Division 10 – Money Wheel"
LIVE_CASINO = "Rules for the Live Casino"
SP800_22 = "NIST Special Publication 800-22 rev. 1a, A Statistical Test Suite for Random and Pseudorandom Number Generators"

_REQ = "outcomes must be statistically independent, uniformly distributed over their range, and unpredictable"


def wheel_rules(kind: str, wheel_id: str) -> list[str]:
    """Rules a wheel report cites, for a wheel of ``kind`` (roulette / money-wheel) and id."""
    if kind == "roulette":
        if wheel_id == "european":
            return [f"{GB_RULES}, rule 3.5 and Figure 3: 37 equal compartments, zero and 1 to 36 in the wheel's sequence"]
        if wheel_id == "american":
            return ["double-zero wheel: 38 equal pockets in the standard American sequence (no rule of the documents above defines it)"]
        return ["roulette wheel defined by the lab's own equipment file"]
    if wheel_id == "money-wheel-52":
        return [
            f"{NZ_MONEY_WHEEL}, rule 2.4: the wheel must act as a random number generator whose outcomes are "
            "statistically independent, uniformly distributed over their range, and unpredictable",
            f"{NZ_MONEY_WHEEL}, rules 2.2 and 2.3: 52 equally spaced sections, 24/12/8/4/2/1/1 per symbol",
        ]
    if wheel_id == "crazy-time":
        return ["Crazy Time wheel: 54 segments as published by the game's operator (1: 21, 2: 13, 5: 7, 10: 4, CoinFlip: 4, CashHunt: 2, Pachinko: 2, Crazy Time: 1)"]
    return ["money wheel defined by the lab's own equipment file"]


def wheel_requirement(kind: str, wheel_id: str) -> str:
    """The requirement a wheel battery answers, citing the rule that states it for that wheel."""
    if kind == "money-wheel" and wheel_id == "money-wheel-52":
        return f"Requirement ({NZ_MONEY_WHEEL}, rule 2.4): {_REQ}. Every test below is filed under one of the three."
    if kind == "roulette":
        return (
            f"Requirement: {_REQ}; for roulette, every pocket of the wheel's equal compartments ({GB_RULES}, rule 3.5) "
            "equally likely on every spin. Every test below is filed under one of the three."
        )
    return f"Requirement: {_REQ}. Every test below is filed under one of the three."


def bits_requirement() -> str:
    return (
        "Requirement: the RNG's raw output must be statistically independent and uniformly distributed (and so unpredictable); "
        f"tested with {SP800_22}, and its two-level analysis over m sequences."
    )


def shuffle_requirement() -> str:
    return (
        "Requirement: a shuffle must leave every order of the shoe equally likely: the dealt cards statistically "
        "independent of the order they were picked up in, uniformly distributed over positions, and unpredictable "
        "to a player who saw the previous shoe (the shuffle-tracking threat)."
    )
