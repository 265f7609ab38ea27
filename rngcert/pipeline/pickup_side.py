"""The pickup side of a dealt-only shoe log, fitted from the log (issue 23 item 6).

004 §2 rule 3.6.2 lets each dealer choose the direction of the pickup for a shift ("Each dealer must
consistently pick up cards in only one direction during any shift"). A dealt-only log's order before
each shuffle is rebuilt from the previous shoe *through* the pickup, so a wrong side rebuilds a wrong
order and the trackers and tests then look for the wrong thing (a player-first log read banker-first:
a tracker edge of +1.12% became -0.92%). The side is therefore not assumed: it is measured where the
log can tell, and swept where it cannot.

Evidence (per group of shoes: the dealer and shift of the shoe whose discards were picked up, when
the log has those columns, else the whole log): every side's rebuild predicts which pairs of cards lie
next to each other before the shuffle; a shuffle that does not randomise completely keeps some of them
together, and the true side's rebuild finds more of them in the next shoe's dealt cards. The
comparison is paired over shoes (the same dealt cards, two rebuilds): z = mean(d) / (sd(d) / sqrt(n))
with d the per-shoe difference of kept pairs (ordered face pairs, next to each other in the dealt
shoe). Under a uniform shuffle both rebuilds' pairs are kept at the chance rate (d has mean about 0,
whatever the side); under a shuffle that keeps neighbours the true side's rebuild finds more, so a
large |z| names the side, and a z within ±z_crit leaves both sides plausible. This is a score comparison of the two rebuilds, the same summary the wash fit
uses (:func:`rngcert.simulate.fit.fit_procedure`), not a full likelihood of the shuffle.

Statistics only; no I/O.
"""

from __future__ import annotations

import math

import numpy as np

from rngcert.equipment import games as G
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)

__all__ = ["SIDES", "kept_pairs", "fit_sides"]

#: Pickup sides a game's rules leave to the dealer for a shift (004 §2 rule 3.6.2 for baccarat: which
#: hand first; §3 rule 3.6 for blackjack: the direction over the players' hands, the dealer's cards at
#: the bottom either way), from the game registry (:attr:`rngcert.equipment.games.Game.pickup_sides`).
SIDES = {g.name: g.pickup_sides for g in G.GAMES.values() if g.pickup_sides}


def kept_pairs(view: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per shoe: how many ordered face pairs next to each other in ``view`` (the order before the
    shuffle, -1 unknown) are next to each other, in the same order, in ``after`` (dealt, -1 unknown).

    Parameters
    ----------
    view, after : (m, N) ndarray of int
        Card codes (faces are taken modulo 52).

    Returns
    -------
    (m,) ndarray of int
    """
    m = view.shape[0]
    a = np.where(after >= 0, after % 52, -1)
    b = np.where(view >= 0, view % 52, -1)
    adj = np.zeros((m, 52 * 52), dtype=bool)
    a0, a1 = a[:, :-1], a[:, 1:]
    r, c = np.nonzero((a0 >= 0) & (a1 >= 0))
    adj[r, a0[r, c] * 52 + a1[r, c]] = True
    b0, b1 = b[:, :-1], b[:, 1:]
    okb = (b0 >= 0) & (b1 >= 0)
    key = np.where(okb, b0.astype(np.int64) * 52 + b1, 0)
    return (np.take_along_axis(adj, key, axis=1) & okb).sum(axis=1)


def fit_sides(kept: dict, groups: np.ndarray, labels: list[str], *, level: float = 0.01) -> dict:
    """The pickup side of each group of shoes, or both when the log cannot tell.

    Parameters
    ----------
    kept : {side: (m,) ndarray}
        :func:`kept_pairs` of the shoes rebuilt with each of the two sides.
    groups : (m,) ndarray of int
        Group of each shoe (index into ``labels``).
    labels : list of str
        Group names ("dealer D1, shift 2", "whole log").
    level : float
        Two-sided level of the paired comparison (per group).

    Returns
    -------
    dict
        ``groups``: per group ``{"group", "shoes", "kept": {side: mean per shoe}, "z", "p", "side"
        (None when not identified), "status" ("measured" / "not identifiable from this log"),
        "evidence"}`` (``p`` None with ``"p_bound": "< 1e-300"`` when it underflowed); ``assignments``: the plausible assignments of sides to groups, best first
        (the fitted one, then the one with every unidentified group on its other side; with
        several unidentified groups they are flipped together, not in all 2^k combinations, and
        ``note`` says so).
    """
    s1, s2 = list(kept)
    out = []
    best, alt = {}, {}
    crit = float(dist.norm_isf(level / 2))
    for g, name in enumerate(labels):
        rows = np.flatnonzero(groups == g)
        n = rows.size
        d = (kept[s2][rows] - kept[s1][rows]).astype(float)
        means = {s: float(kept[s][rows].mean()) if n else 0.0 for s in (s1, s2)}
        sd = float(d.std(ddof=1)) if n > 1 else 0.0
        if n > 1 and sd > 0:
            z = float(d.mean() / (sd / math.sqrt(n)))
        elif n > 1 and d.mean() != 0:
            z = math.copysign(math.inf, d.mean())
        else:
            z = 0.0
        p = float(2 * dist.norm_sf(abs(z)))
        lead = s2 if z > 0 else s1
        other = s1 if lead == s2 else s2
        ident = abs(z) > crit
        tiny = p < 1e-300  # (a p-value that underflowed is stated as a bound, never as 0: report/schema.py)
        ev = (f"{n} shoe(s): the {s1} rebuild finds {means[s1]:.1f} of its neighbouring pairs kept per shoe, the {s2} rebuild "
              f"{means[s2]:.1f} (paired z = {z:+.2f}, two-sided p {'< 1e-300' if tiny else f'= {p:.2g}'})")
        out.append({"group": name, "shoes": int(n), "kept": means, "z": z, "p": None if tiny else p, "side": lead if ident else None,
                    "status": "measured" if ident else "not identifiable from this log", "evidence": ev}
                   | ({"p_bound": "< 1e-300"} if tiny else {}))
        best[g] = lead
        alt[g] = lead if ident else other
    assignments = [best] + ([alt] if alt != best else [])
    n_unid = sum(1 for g in out if g["side"] is None)
    note = (f"{n_unid} groups could not tell the side: they were flipped together (each group's leading side, then each one's "
            "other side), not in every combination" if n_unid > 1 else "")
    return {"groups": out, "assignments": assignments, "level": level, "sides": [s1, s2], "note": note,
            "method": "paired comparison over shoes of the neighbouring pairs each side's rebuild predicts and the next shoe keeps"}
