"""Roulette Rage rounds counted on a log of spins (003 rules 3.14-3.31; issue 25).

The Roulette Rage side wager is placed after an *establishing spin*, a number of the other colour
than the spin before it (rule 3.15), or the first number after one or more zeros (rule 3.17); no
new wager is taken until the run of that colour is broken (rule 3.16). The wager is settled on
the run length L: the further spins of the establishing colour (the establishing spin does not
count, rule 3.18), counted up to 14 (rule 3.27), paid from L = 4 on (rules 3.26, 3.28).

So the rounds of a log are its colour runs that follow another run (the first run of the log has
no known spin before it), and L is each run's length minus one. On a fair wheel the L of the
rounds are independent (each round's spins come after the spins that started it) and follow
the exact law of :func:`rngcert.equipment.paytables.rage_run_length_law` with p = 18/37.
These functions count the rounds, test their run lengths against that law and state the return
each pay table would have paid on them.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import arrayops
from rngcert.stats.frequency import pocket_chisquare
from rngcert.stats.result import NotApplicable, Requirement, TestResult

__all__ = ["rage_rounds", "rage_run_length_test", "rage_returns", "rage_run_length_test_counts", "rage_returns_counts"]


def rage_rounds(colour, max_run: int = 14) -> dict:
    """The Roulette Rage rounds of a spin sequence.

    Parameters
    ----------
    colour : (n,) int array
        Colour of each spin in spin order: 0 red, 1 black, anything else zero.
    max_run : int
        Cap on the counted run length after the establishing spin (rule 3.27: 14).

    Returns
    -------
    dict
        ``run_lengths``: (r,) int64, L of each complete round (capped at ``max_run``), in order;
        ``rounds``: r; ``censored``: 1 when the log ends inside a round's run (that round is left
        out: its wager is not settled), else 0; ``first_run``: spins of the first run (no round: the
        spin before it is not in the log); ``by_colour``: rounds established on red and on black.
    """
    c = np.asarray(colour)
    if c.ndim != 1:
        raise InputError(f"colour must be one-dimensional, got shape {c.shape}")
    if isinstance(max_run, bool) or int(max_run) != max_run or max_run < 1:
        raise InputError(f"max_run must be a positive integer, got {max_run!r}")
    c = np.where((c == 0) | (c == 1), c, -1).astype(np.int8)
    n = c.size
    if n == 0:
        return {"run_lengths": np.zeros(0, np.int64), "rounds": 0, "censored": 0, "first_run": 0, "by_colour": {"red": 0, "black": 0}}
    # runs: where each starts after the first, as int32 when that holds n (about n/2 runs: 2 bytes a spin, not 12)
    s = np.flatnonzero(c[1:] != c[:-1]).astype(np.int32 if n < 2**31 - 1 else np.int64)
    s += 1
    vals = np.empty(s.size + 1, dtype=np.int8)
    vals[0] = c[0]
    vals[1:] = c[s]
    lengths = np.empty(s.size + 1, dtype=s.dtype)
    if s.size:
        lengths[0], lengths[-1] = s[0], n - s[-1]
        np.subtract(s[1:], s[:-1], out=lengths[1:-1])
    else:
        lengths[0] = n
    del s
    is_round = vals >= 0
    is_round[0] = False  # the first run: the spin before it is unknown
    censored = bool(is_round[-1])
    is_round[-1] = False  # the log ends before the last run is broken: not settled
    L = lengths[is_round].astype(np.int64, copy=False)  # (one array of the rounds, changed in place)
    L -= 1
    np.minimum(L, int(max_run), out=L)
    v = vals[is_round]
    return {"run_lengths": L, "rounds": int(L.size), "censored": int(censored), "first_run": int(lengths[0]),
            "by_colour": {"red": int(np.count_nonzero(v == 0)), "black": int(np.count_nonzero(v == 1))}}


def _pooled(counts: np.ndarray, law: np.ndarray, min_expected: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Counts and law with the tail from the first length whose tail expectation is below
    ``min_expected`` pooled into one cell (at least two cells)."""
    n = counts.sum()
    tail = np.cumsum(law[::-1])[::-1]  # P(L >= j)
    low = np.flatnonzero(n * tail < min_expected)
    j = int(low[0]) if low.size else law.size - 1
    j = min(max(j, 1), law.size - 1)
    return np.r_[counts[:j], counts[j:].sum()], np.r_[law[:j], law[j:].sum()], j


def rage_run_length_test(run_lengths, law, *, n_resamples: int = 9999, rng: np.random.Generator | None = None,
                         name: str = "rage_run_lengths") -> TestResult | NotApplicable:
    """Chi-square test of the Roulette Rage run lengths against their exact law.

    Parameters
    ----------
    run_lengths : (r,) int array
        L of each complete round, 0..len(law)-1 (from :func:`rage_rounds`).
    law : (m + 1,) float array
        ``law[j] = P(L = j)`` (capped at m), e.g. ``rage_run_length_law(18/37)``.
    n_resamples, rng
        Monte Carlo replicates when an expected count is below 5 (multinomial draws of the law).
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        Pearson X^2 over the run lengths, the tail from the first length expected fewer than 5
        times pooled into one cell (``details["pooled_from"]``); details also give ``observed``
        and ``expected`` of every length 0..m. NotApplicable with fewer than 2 rounds.

    Notes
    -----
    H0: the run lengths are i.i.d. with the law (a fair wheel whose spins are independent). The
    count of rounds of a log of fixed length is random, and the test conditions on it (the rounds'
    lengths are exchangeable given their number up to the end effect of a finite log).
    """
    L = np.asarray(run_lengths, dtype=np.int64)
    law = np.asarray(law, dtype=float)
    if L.size and (L.min() < 0 or L.max() >= law.size):
        raise InputError(f"{name}: run lengths must be in 0..{law.size - 1}")
    return rage_run_length_test_counts(np.bincount(L, minlength=law.size), law, n_resamples=n_resamples, rng=rng, name=name)


def rage_run_length_test_counts(counts, law, *, n_resamples: int = 9999, rng: np.random.Generator | None = None,
                                name: str = "rage_run_lengths") -> TestResult | NotApplicable:
    """:func:`rage_run_length_test` of the rounds counted by run length: ``counts[j]`` rounds of L = j
    (``len(law)`` entries; e.g. :attr:`rngcert.stats.runs.ColourRuns.round_counts`). The same result."""
    counts = np.asarray(counts, dtype=np.int64)
    law = np.asarray(law, dtype=float)
    if counts.shape != law.shape or (counts.size and counts.min() < 0):
        raise InputError(f"{name}: counts must be {law.size} non-negative round counts, one per run length")
    r = int(counts.sum())
    if r < 2:
        return NotApplicable(name, Requirement.INDEPENDENCE, r, f"{r} complete Roulette Rage round(s): too few to test")
    pc_, pl, j = _pooled(counts, law, 5.0)
    res = pocket_chisquare(pc_, pl / pl.sum(), n_resamples=n_resamples, rng=rng, name=name)
    if not res.applicable:
        return res
    # the mean of the rounds' L: their exact integer sum over r (what numpy's mean of the lengths gives)
    mean_run = float(np.float64(int(counts @ np.arange(counts.size))) / r)
    det = {"observed": counts, "expected": law * r, "pooled_from": j, "mean_run": mean_run,
           "expected_mean_run": float(np.arange(law.size) @ law), "min_expected": res.details.get("min_expected")}
    return TestResult(name, Requirement.INDEPENDENCE, res.statistic, res.df, res.pvalue, res.n, res.method, det)


def rage_returns(run_lengths, law, nets: Mapping[str, np.ndarray], *, n_resamples: int = 9999,
                 rng: np.random.Generator | None = None) -> dict:
    """The return each Roulette Rage pay table paid on the rounds of a log, against its exact value.

    Parameters
    ----------
    run_lengths : (r,) int array
        L of each complete round.
    law : (m + 1,) float array
        Exact law of L on a fair wheel.
    nets : mapping of str to (m + 1,) float array
        Per pay table, the net result of a unit wager by run length (-1 below the paying runs).
    n_resamples : int
        Replicates of r fair rounds (multinomial draws of the law) for the p-value and range.
    rng : numpy.random.Generator

    Returns
    -------
    dict of str to dict
        Per pay table: ``observed`` (mean net per unit wagered), ``expected`` (exact, = minus the
        house edge), ``range95`` (2.5% and 97.5% quantiles of the return of r fair rounds),
        ``pvalue`` (two-sided Monte Carlo: a fair wheel's r rounds as far from the expected
        return), ``wins`` (rounds paid), ``rounds``.
    """
    L = np.asarray(run_lengths, dtype=np.int64)
    law = np.asarray(law, dtype=float)
    return rage_returns_counts(np.bincount(L, minlength=law.size), law, nets, n_resamples=n_resamples, rng=rng)


def rage_returns_counts(counts, law, nets: Mapping[str, np.ndarray], *, n_resamples: int = 9999,
                        rng: np.random.Generator | None = None) -> dict:
    """:func:`rage_returns` of the rounds counted by run length (``counts[j]`` rounds of L = j). The same result."""
    counts = np.asarray(counts, dtype=np.int64)
    law = np.asarray(law, dtype=float)
    r = int(counts.sum())
    out: dict[str, dict] = {}
    if r == 0:
        return {k: {"rounds": 0, "observed": None, "expected": float(law @ np.asarray(v, float)), "range95": None, "pvalue": None, "wins": 0}
                for k, v in nets.items()}
    if rng is None:
        raise InputError("rage_returns needs a random generator for the Monte Carlo range")
    sims = rng.multinomial(r, law / law.sum(), size=int(n_resamples))  # (R, m + 1), shared by the pay tables
    for k, v in nets.items():  # loop over the few pay tables
        net = np.asarray(v, dtype=float)
        exp = float(law @ net)
        obs = float(counts @ net / r)
        whole = bool(np.all(net == np.round(net))) and float(np.abs(net).max(initial=0.0)) < 2.0**31
        # whole-unit nets (every pay table today): the sums are integers below 2**53, exact in any order, so the
        # integer product gives the float product's numbers without a BLAS call (and its worker threads' spinning)
        sim = (sims @ net.astype(np.int64) if whole else sims @ net) / r
        tol = 1e-12 * max(1.0, abs(obs - exp))
        b = int(np.count_nonzero(np.abs(sim - exp) >= abs(obs - exp) - tol))
        out[k] = {"rounds": r, "observed": obs, "expected": exp, "range95": arrayops.quantile(sim, [0.025, 0.975]),
                  "pvalue": (b + 1) / (sim.size + 1), "wins": int(counts[net > 0].sum())}
    return out
