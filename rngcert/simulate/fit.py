"""Measure a procedure: fit its free parameters (the wash) to recorded shoes by simulated moments.

A wash has no published model; rngcert's (:func:`rngcert.simulate.shufflers.wash`) has two
parameters, the mean clump size and the travel (standard deviation of a clump's move as a share
of the stack). Given shoes before and after the procedure (recorded, or rebuilt from a scanner
log), :func:`fit_procedure` finds the values for which the procedure, run on the *same* orders
before the shuffle, reproduces two summaries of the observed shoes (:func:`rngcert.stats.shuffle.shuffle_moments`:
the share of neighbouring pairs kept, and how far apart former neighbours end up), with the
same loss of information (cards a scanner never saw are filled at random in both).

Method: simulated minimum distance on a grid (McFadden 1989; Pakes and Pollard 1989), common
random numbers across grid points, the criterion J(theta) = g' W g with g the difference of mean
moments and W the inverse of their covariance (observed plus simulated). The 95% interval of a
parameter is the set of values whose profile min J is below the chi-square(1) 95% point (3.84),
by test inversion, so it stays honest when a parameter is weakly identified (a long wash: any
longer travel looks the same); an interval that reaches the grid's edge is reported open.
"""

from __future__ import annotations

import numpy as np

from rngcert.equipment.procedure import Procedure
from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.simulate.deal import complete_shoes
from rngcert.simulate.procedure import SIMULATION_STREAM, shuffle
from rngcert.simulate.shufflers import CODE_MASK
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)
from rngcert.stats.shuffle import card_permutation, gsr_equivalent_riffles, shuffle_moments

__all__ = ["fit_procedure", "wash_parameters", "CLUMP_GRID", "TRAVEL_GRID"]

CLUMP_GRID = np.array([1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0])
TRAVEL_GRID = np.geomspace(0.02, 1.0, 13)


def wash_parameters(proc: Procedure) -> list[str] | None:
    """Names of the first wash step's travel and clump (``steps[i].intensity``, ``steps[i].clump``)."""
    for i, st in enumerate(proc.steps, start=1):
        if st.op == "wash":
            return [f"steps[{i}].intensity", f"steps[{i}].clump"]
    return None


def _moments(before, after, known_before, known_after, decks, serialised, rng):
    b = np.asarray(before)
    a = np.asarray(after)
    if known_before is not None and not np.all(known_before):
        b = complete_shoes(np.where(known_before, b, -1), decks, rng, serialised=serialised)
    if known_after is not None and not np.all(known_after):
        a = complete_shoes(np.where(known_after, a, -1), decks, rng, serialised=serialised)
    perm, _ = card_permutation(b, a)
    return shuffle_moments(perm), perm


# long: 30 lines of docstring; the fit (moments, grid, interval) shares the observed statistics of the shoes
def fit_procedure(proc: Procedure, before, after, entropy: int, *, known_before=None, known_after=None, serialised: bool = False,
                  n_fit: int = 400, clump_grid=CLUMP_GRID, travel_grid=TRAVEL_GRID, level: float = 0.95) -> dict | None:
    """Fit the wash travel and clump size of ``proc`` to shoes before and after it.

    Parameters
    ----------
    proc : Procedure
        The procedure with its other steps as declared; None is returned when it has no wash.
    before, after : (n_shoes, N) array_like of int
        Orders before and after the shuffle (faces, or serialised codes); unseen cards already
        filled at random (see ``known_*``).
    entropy : int
        Root entropy; the simulations use ``stream(entropy, "shuffle-simulation", "fit")``.
    known_before, known_after : (n_shoes, N) array_like of bool, optional
        Positions whose card was really observed.
    serialised : bool
        Codes are unique serialised codes (else faces with ``decks`` copies).
    n_fit : int
        Shoes used (the first ``n_fit``).
    clump_grid, travel_grid : array_like
        Grid of the two parameters.
    level : float
        Confidence level of the intervals.

    Returns
    -------
    dict or None
        ``parameters``: {name: {"value", "interval" [lo, hi], "open_low", "open_high"}},
        ``observed`` moments, ``fitted`` moments, ``n_shoes``, ``method``, ``criterion_min``,
        ``gsr_equivalent_riffles``, ``share_adjacent_kept`` (on identified cards: measured when
        ``serialised``, else those of the fitted wash, simulated; ``summaries_basis`` says which).
    """
    names = wash_parameters(proc)
    if names is None:
        return None
    b = np.asarray(before)[:n_fit]
    a = np.asarray(after)[:n_fit]
    kb = None if known_before is None else np.asarray(known_before)[:n_fit]
    ka = None if known_after is None else np.asarray(known_after)[:n_fit]
    m, n = b.shape
    if m < 20:
        raise InputError(f"a fit needs at least 20 shoes before and after the shuffle, got {m}")
    decks = n // 52
    obs, perm_obs = _moments(b, a, None, None, decks, serialised, None)  # observed data are already filled
    mo = obs.mean(axis=0)
    co = np.cov(obs, rowvar=False) / m
    cg = np.asarray(clump_grid, float)
    tg = np.asarray(travel_grid, float)
    J = np.full((tg.size, cg.size), np.inf)
    fitted = np.zeros((tg.size, cg.size, 2))
    for i, tr in enumerate(tg):  # grid points (each a vectorised simulation of n_fit shoes)
        for j, cl in enumerate(cg):
            p = proc.with_params({names[0]: float(tr), names[1]: float(cl)})
            rng = stream(entropy, SIMULATION_STREAM, "fit")  # common random numbers across the grid
            sim_after = shuffle(p, b, rng) & CODE_MASK
            sim, _ = _moments(b, sim_after, kb, ka, decks, serialised, rng)
            ms = sim.mean(axis=0)
            cs = np.cov(sim, rowvar=False) / m
            g = mo - ms
            try:
                J[i, j] = float(g @ np.linalg.solve(co + cs, g))
            except np.linalg.LinAlgError:
                J[i, j] = np.inf
            fitted[i, j] = ms
    crit = float(dist.chi2_ppf(level, 1))
    i0, j0 = np.unravel_index(np.argmin(J), J.shape)
    prof_t = J.min(axis=1)
    prof_c = J.min(axis=0)

    def interval(grid, prof):
        ok = np.flatnonzero(prof <= prof.min() + crit)
        lo, hi = int(ok.min()), int(ok.max())
        # widen to the neighbouring grid points (the criterion is only sampled on the grid)
        lo_v = grid[max(lo - 1, 0)] if lo > 0 else grid[0]
        hi_v = grid[min(hi + 1, grid.size - 1)] if hi < grid.size - 1 else grid[-1]
        return [float(lo_v), float(hi_v)], lo == 0, hi == grid.size - 1

    it, olt, oht = interval(tg, prof_t)
    ic, olc, ohc = interval(cg, prof_c)
    if serialised:  # the permutation of identified cards is observed: the summaries are measurements
        share, gsr = float(mo[0]), gsr_equivalent_riffles(perm_obs, drop_law=_declared_drop_law(proc))
        basis = "measured on the log's identified cards (serialised decks)"
    else:
        # With faces only, copies of a face are matched in position order: the moments on faces are
        # what the fit compares with its simulations (the same matching on both sides), but they are
        # not the share of pairs kept (a wash keeping a third of the pairs shows about 2% on faces).
        # The summaries on identified cards are those of the fitted wash, simulated on serialised cards.
        ident = np.tile(np.arange(n, dtype=np.int16), (m, 1))
        best = proc.with_params({names[0]: float(tg[i0]), names[1]: float(cg[j0])})
        perm_id, _ = card_permutation(ident, shuffle(best, ident, stream(entropy, SIMULATION_STREAM, "fit-identified")) & CODE_MASK)
        share, gsr = float(shuffle_moments(perm_id).mean(axis=0)[0]), gsr_equivalent_riffles(perm_id, drop_law=_declared_drop_law(proc))
        basis = ("implied by the fitted wash (simulated on identified cards): this log's cards are not serialised, so the copies "
                 f"of a face cannot be told apart and the share seen on faces ({100 * float(mo[0]):.2f}%) is not the share kept")
    return {
        "parameters": {names[0]: {"label": "wash travel (s.d. of a clump's move, share of the stack)", "value": float(tg[i0]),
                                  "interval": it, "open_low": olt, "open_high": oht},
                       names[1]: {"label": "wash mean clump size (cards)", "value": float(cg[j0]), "interval": ic,
                                  "open_low": olc, "open_high": ohc}},
        "observed": {"share_adjacent_kept": float(mo[0]), "neighbour_distance": float(mo[1])},
        "fitted": {"share_adjacent_kept": float(fitted[i0, j0, 0]), "neighbour_distance": float(fitted[i0, j0, 1])},
        "criterion_min": float(J[i0, j0]), "n_shoes": int(m), "level": level,
        "grid": {"travel": tg.tolist(), "clump": cg.tolist()},
        "gsr_equivalent_riffles": gsr.get("riffles"), "gsr_equivalent_withheld": gsr.get("withheld"),
        "share_adjacent_kept": share, "summaries_basis": basis,
        "method": ("simulated minimum distance on a grid: two moments (neighbours kept; spread of former neighbours), the "
                   "procedure's other steps as declared, common random numbers, the same unseen cards filled at random; "
                   f"{int(level * 100)}% intervals by profile test inversion (chi-square(1) {crit:.2f})"),
    }


def _declared_drop_law(proc) -> str | None:
    """Why the procedure's riffles are not GSR riffles (a riffle step whose drop-switch probability is
    not 1/2, recorded or declared), or None."""
    for i, st in enumerate(proc.steps, 1):
        if st.op == "riffle" and abs(float(st.full_params()["switch"]) - 0.5) > 1e-12:
            sw = float(st.full_params()["switch"])
            return (f"the procedure's riffle (step {i}) drops cards with switch probability {sw:g}, not GSR's 1/2"
                    + (" (perfect alternation)" if sw >= 1.0 else ""))
    return None
