"""PASS needs power, for shoes (issue 23 item 3; DESIGN §4): a shoe sample is PASS only when it
would detect the declared minimum tracker edge with the declared power.

The effect a shoe sample must be able to see is a *player's edge*: a tracker whose return per unit
staked is ``min_edge`` above the threshold declared in advance. The default ``min_edge`` is the
game's house edge (blackjack: basic strategy under the table's rules, from
:func:`rngcert.stats.blackjack.house_edge`; baccarat: the smaller of the Banker and Player house
edges, exact by enumeration). Why the house edge: with the default threshold 0 it is a player's
edge equal to the house's own margin reversed, an advantage at which a tracker profits from the
table at the rate the house does, so plainly exploitable; it is the margin the game is designed and
displayed around (003 rule 4.5 requires the house edge at the table), so it needs no new number;
and a sample that cannot see an edge that large cannot support "no exploitable edge". A standard
can pass another value (``min_edge``) and power.

For every tracker that bet (an applicable ``tracker_edge:*`` result), the edge detectable with the
declared power at Holm's first threshold is ``threshold + (z_level + z_power) * se``; the sample has
the power when every such tracker's detectable edge is at most ``threshold + min_edge``. When no
tracker bet, the bound is that of a bettor staking one unit on every coup or round of the sample
(the smallest standard error any tracker could have): if even that bettor could not see the edge,
no tracker could. Otherwise a PASS becomes INCONCLUSIVE with the edge that could not be excluded
(the upper end of the trackers' 95% intervals, or the detectable edge) and the shoes needed
(standard errors shrink as one over the square root of the shoes). FAIL and SUSPECT stand: they
rest on what was seen, not on what could have been missed. No statistics are computed here that
the battery did not already compute, except the every-round bound.
"""

from __future__ import annotations

import math
import re

from rngcert.battery.shuffle import is_tracker
from rngcert.equipment import games as G
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)

__all__ = ["default_min_edge", "power_gate", "ROUND_MODEL"]

#: Per-round model of the every-round bettor (when no tracker bet): expected cards per coup or
#: round and the standard deviation of one unit's return, from the game registry
#: (:attr:`rngcert.equipment.games.Game.round_model`). Baccarat: 4.94 cards a coup (exact
#: expectation of the third-card rules), Banker bet s.d. 0.93 (ties push). Blackjack: about 2.7
#: cards a hand, one hand per seat and the dealer's, s.d. 1.15 a hand (Griffin, *The Theory of
#: Blackjack*, 6th ed., 1999, ch. 12), one unit on the first seat.
ROUND_MODEL = {g.name: g.round_model for g in G.GAMES.values() if g.round_model}


def default_min_edge(house_edge: dict | None) -> tuple[float | None, str]:
    """The default minimum tracker edge of a game and where it comes from.

    Parameters
    ----------
    house_edge : dict or None
        The report's ``house_edge`` block (:func:`rngcert.pipeline.certify_shuffle._house_edges`).

    Returns
    -------
    (float or None, str)
        The edge per unit staked (None: no game, nothing to gate) and its basis in words.
    """
    if not house_edge:
        return None, "no game: no player's edge to measure"
    if "edge" in house_edge:  # a game of the registry states its own reference edge and basis
        return float(house_edge["edge"]), str(house_edge["basis"])
    if house_edge["game"] == "baccarat":
        side = min(("banker", "player"), key=lambda s: house_edge[s])
        return float(house_edge[side]), (f"the house edge of the {side.capitalize()} bet, the smaller of the two "
                                         f"({house_edge['decks']} decks, exact enumeration)")
    return float(house_edge["basic_strategy"]), (f"the basic-strategy house edge of the table's rules ({house_edge['decks']} decks, "
                                                 f"{house_edge['rules']['dealer']}; rngcert.stats.blackjack.house_edge)")


def power_gate(outcome, *, n_shoes: int, game: str | None, min_edge: float | None, power: float, threshold: float,
               basis: str, usable: int | None = None, players: int = 7, apply: bool = True) -> dict:
    """Check that a shoe sample could detect ``min_edge``; turn a PASS without that power into
    INCONCLUSIVE (in place, when ``apply``).

    Parameters
    ----------
    outcome : BatteryOutcome
        The sample's outcome (its ``power['level']`` is Holm's first threshold).
    n_shoes : int
        Shoes in the sample.
    game : {"baccarat", "blackjack"} or None
    min_edge : float or None
        Declared minimum tracker edge above ``threshold`` (per unit staked); None: not gated.
    power : float
        Declared power.
    threshold : float
        The trackers' threshold declared in advance.
    basis : str
        Where ``min_edge`` comes from (for the report).
    usable : int, optional
        Cards dealt in every shoe (for the every-round bound).
    players : int
        Blackjack seats (for the every-round bound).
    apply : bool
        Change the verdict (the sample the report's verdict rests on) or only state the power (a
        dealer's share of the shoes).

    Returns
    -------
    dict
        ``status`` ("powered", "underpowered", "not gated"), ``min_edge``, ``power``, ``level``,
        ``detectable`` (per tracker, or the every-round bettor), ``shoes_needed``,
        ``not_excluded`` and ``sentence``.
    """
    info = {"min_edge": min_edge, "power": power, "threshold": threshold, "basis": basis, "n_shoes": int(n_shoes)}
    if min_edge is None or game is None:
        return _floor_gate(outcome, info, f"not gated on power: {basis}", apply)
    level = float((outcome.power or {}).get("level") or outcome.alpha)
    z = float(dist.norm_isf(level) + dist.norm_isf(1.0 - power))
    info["level"] = level
    rows = []
    for r in outcome.results:
        if is_tracker(r.name) and r.applicable and r.details.get("se"):
            se = float(r.details["se"])
            rows.append({"tracker": r.name.split(":", 1)[1], "se": se, "detectable_edge": threshold + z * se,
                         "ci95_high": float(r.details["ci95"][1]),
                         "shoes_needed": int(math.ceil(n_shoes * (z * se / min_edge) ** 2))})
    if not rows and game in ROUND_MODEL and usable:
        cards, sd = ROUND_MODEL[game]
        per_round = cards * ((players + 1) if G.get(game).cards_scale_with_seats else 1)
        rounds = max(n_shoes * usable / per_round, 1.0)
        se = sd / math.sqrt(rounds)
        rows.append({"tracker": "every-round bettor (no tracker bet)", "se": se, "detectable_edge": threshold + z * se,
                     "ci95_high": None, "rounds": rounds,
                     "shoes_needed": int(math.ceil(n_shoes * (z * se / min_edge) ** 2))})
    info["detectable"] = rows
    if not rows:
        return _floor_gate(outcome, info, "not gated on power: no tracker and no round model for this game", apply)
    worst = max(rows, key=lambda x: x["detectable_edge"])
    needed = max(x["shoes_needed"] for x in rows)
    info["shoes_needed"] = needed
    want = threshold + min_edge
    ok = worst["detectable_edge"] <= want * (1 + 1e-12)
    highs = [x["ci95_high"] for x in rows if x["ci95_high"] is not None]
    not_excl = max(highs) if highs else worst["detectable_edge"]
    info["not_excluded"] = not_excl
    det = ", ".join(f"{x['tracker'].replace('_', ' ')} {100 * x['detectable_edge']:+.2f}%" for x in rows)
    if ok:
        info["status"] = "powered"
        info["sentence"] = (f"{n_shoes} shoes detect, with {100 * power:.0f}% power at level {level:.2g}, the declared minimum "
                            f"tracker edge of {100 * want:+.2f}% ({basis}): detectable {det}")
        return info
    info["status"] = "underpowered"
    info["sentence"] = (f"too few shoes ({n_shoes}; about {needed:,} needed) to exclude the minimum tracker edge of {100 * want:+.2f}% "
                        f"of the stake with {100 * power:.0f}% power at level {level:.2g}: a tracker edge up to {100 * not_excl:+.2f}% "
                        "is not excluded" + (" (upper end of the 95% interval)" if highs else "")
                        + f"; these shoes detect only {det}; minimum edge: {basis}")
    if apply and outcome.verdict == "PASS":
        outcome.verdict = "INCONCLUSIVE"
        outcome.reasons = gated_reasons(info["sentence"], outcome.reasons)
    return info


#: How a test of the shuffle battery says it needs more shoes to run (``need >= 65 shoes``, ``needs >= 30 shoes``).
_NEEDS_SHOES = re.compile(r"needs? >= ([0-9][0-9,]*)")


def _floor_gate(outcome, info: dict, sentence: str, apply: bool) -> dict:
    """The gate of a sample with no tracker edge to gate on (no game, or no tracker and no round model): its PASS
    still needs the shoes every test of its battery needs to run. A test left out because the sample is too small
    (the per-position rank chi-square needs 65 shoes) makes a PASS INCONCLUSIVE, with the shoes needed: one shoe
    must not PASS on what the tests that could run on it did not see (DESIGN §4: too few outcomes). Otherwise
    ``info`` with status "not gated" and ``sentence``."""
    short = []
    for r in outcome.results:
        m = None if r.applicable else _NEEDS_SHOES.search(str(getattr(r, "reason", "") or ""))
        if m:
            short.append((int(m.group(1).replace(",", "")), r.name, str(r.reason)))
    short = [x for x in short if x[0] > info["n_shoes"]]
    if not short:
        return info | {"status": "not gated", "sentence": sentence}
    needed = max(x[0] for x in short)
    info |= {"status": "underpowered", "shoes_needed": needed, "level": float((outcome.power or {}).get("level") or outcome.alpha),
             "detectable": [], "not_run": [{"test": name, "reason": why} for _, name, why in short]}
    info["sentence"] = (f"too few shoes ({info['n_shoes']:,}; at least {needed:,} needed) for the whole battery: "
                        + "; ".join(f"{name} could not run ({why})" for _, name, why in short)
                        + f"; and nothing else can gate a PASS ({sentence.removeprefix('not gated on power: ')}), so a PASS would "
                        "rest on the tests that such a sample lets run")
    if apply and outcome.verdict == "PASS":
        outcome.verdict = "INCONCLUSIVE"
        outcome.reasons = gated_reasons(info["sentence"], outcome.reasons)
    return info


def gated_reasons(sentence: str, reasons) -> list[str]:
    """The reasons of a PASS made INCONCLUSIVE by the power gate: the gate's sentence first; the PASS
    reason ("no test rejects ...") kept as what the tests alone say, not as a reason for no verdict (c22:
    the INCONCLUSIVE read "why: no test rejects at family-wise level 0.01")."""
    return [sentence] + [("the tests alone would PASS: " + r if str(r).startswith("no test rejects") else r)
                         for r in reasons if r != sentence]
