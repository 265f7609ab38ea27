"""Runs tests on categorical wheel outcomes (colour, parity, high/low)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats import chunks as _chunks
from rngcert.stats.chunks import lookup, spans
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue

__all__ = ["runs_test", "longest_run", "longest_run_chunks", "ColourRuns", "colour_runs"]

_REQ = Requirement.INDEPENDENCE


def _seq_iv(seq, allowed, name: str) -> np.ndarray:
    x = np.asarray(seq)
    if x.ndim != 1:
        raise InputError(f"{name}: the sequence must be one-dimensional, got shape {x.shape}")
    if x.size and x.dtype.kind not in "iu":
        raise InputError(f"{name}: the sequence must hold integer category ids, got dtype {x.dtype}")
    lo, hi = min(allowed), max(allowed)  # the allowed sets are ranges of consecutive integers
    if x.size and (x.min() < lo or x.max() > hi):
        bad = x[(x < lo) | (x > hi)][0]
        raise InputError(f"{name}: values must be in {sorted(allowed)}, found {bad!r}")
    return x


def runs_test(
    categories_seq,
    *,
    name: str = "runs",
    correction: bool = True,
) -> TestResult | NotApplicable:
    r"""Wald–Wolfowitz runs test of a two-category sequence.

    Parameters
    ----------
    categories_seq : (n,) array_like of int or bool
        Values 0/1 in spin order; -1 entries (e.g. zero for colour, parity, high/low) are removed
        first. A boolean array (``np.isin(spins, RED)``) is read as 0/1, as statsmodels'
        ``runstest_1samp`` reads it.
    name : str
        Identifier carried by the result (e.g. ``"colour_runs"``).
    correction : bool
        Continuity correction of 0.5 when fewer than 50 values remain (as in statsmodels / SAS).

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` is the standardized number of runs z (two-sided normal p-value); details:
        runs, expected runs, variance, n0, n1. NotApplicable when only one category occurs.

    Notes
    -----
    H0: the 0/1 sequence is exchangeable (implied by i.i.d.). With :math:`n_0, n_1` the counts,
    :math:`N = n_0 + n_1` and R runs, conditionally on :math:`n_0, n_1`,
    :math:`E R = 2n_0n_1/N + 1` and
    :math:`\mathrm{Var} R = 2n_0n_1(2n_0n_1 - N)/(N^2(N-1))` [1]_; :math:`z = (R - ER)/\sqrt{\mathrm{Var}R}`
    is asymptotically N(0, 1). With ``correction`` and N < 50, :math:`|R - ER|` is reduced by 0.5
    (never below 0; statsmodels adds 0.5 when :math:`0 < R - ER < 0.5`, we do not).

    References
    ----------
    .. [1] Wald, A. & Wolfowitz, J. (1940), "On a test whether two samples are from the same
           population", Ann. Math. Statist. 11, 147-162, eqs. (14)-(15).
    .. [2] statsmodels.sandbox.stats.runs.Runs.runs_test.

    Examples
    --------
    >>> from rngcert.stats import runs_test
    >>> res = runs_test([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0])  # red, black in blocks: too few runs
    >>> res.details["runs"], round(res.statistic, 3), round(res.pvalue, 4)
    (4, -2.329, 0.0199)
    """
    seq = np.asarray(categories_seq)
    x = _seq_iv(seq.astype(np.int8) if seq.dtype.kind == "b" else seq, [-1, 0, 1], name)  # a boolean mask (is red) is 0/1
    x = x[x >= 0].astype(np.int8)
    n1 = int(np.count_nonzero(x))
    runs = int(1 + np.count_nonzero(x[1:] != x[:-1])) if x.size else 0
    return runs_test_from_counts(runs, x.size - n1, n1, name=name, correction=correction)


def runs_test_from_counts(runs: int, n0: int, n1: int, *, name: str = "runs", correction: bool = True) -> TestResult | NotApplicable:
    """Wald–Wolfowitz runs test from its sufficient statistics (a tally's run boundaries).

    Parameters
    ----------
    runs : int
        Number of runs of the 0/1 sequence (after removing -1 entries).
    n0, n1 : int
        Counts of 0 and 1.
    name, correction
        As in :func:`runs_test`, which this function backs: ``runs_test(seq)`` equals
        ``runs_test_from_counts(*counts of seq)`` exactly.

    Returns
    -------
    TestResult or NotApplicable

    Raises
    ------
    TypeError
        ``runs``, ``n0`` or ``n1`` not an integer (``5.5``, ``"5"``, a bool).
    rngcert.errors.InputError
        (a ``ValueError``) a negative count, or with both categories present a number of runs no
        sequence of them has: below 2 or above ``2 min(n0, n1) + (n0 != n1)`` (21 runs of 10
        zeros and 10 ones gave p = 1.3e-05).

    Examples
    --------
    >>> from rngcert.stats import runs_test, runs_test_from_counts
    >>> seq = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    >>> a = runs_test_from_counts(16, 8, 8)  # 16 runs of 8 zeros and 8 ones
    >>> b = runs_test(seq)
    >>> a.statistic == b.statistic and a.pvalue == b.pvalue
    True
    >>> round(a.pvalue, 5)
    0.00077
    """
    runs, n0, n1 = _runs_counts_iv(runs, n0, n1, name)
    N = n0 + n1
    if n0 == 0 or n1 == 0:
        return NotApplicable(name, _REQ, N, f"constant sequence (n0={n0}, n1={n1}); runs are undefined")
    npn = float(n0) * float(n1)
    mean = 2.0 * npn / N + 1.0
    var = 2.0 * npn * (2.0 * npn - N) / (N * N * (N - 1.0))
    if var <= 0:
        return NotApplicable(name, _REQ, N, f"variance of the number of runs is 0 (n0={n0}, n1={n1})")
    d = runs - mean
    if correction and N < 50:
        d = math.copysign(max(abs(d) - 0.5, 0.0), d)
    z = d / math.sqrt(var)
    pvalue = clip_pvalue(2.0 * _dist.norm_sf(abs(z)))
    details = dict(runs=runs, expected_runs=mean, variance=var, n0=n0, n1=n1,
                   continuity_correction=bool(correction and N < 50))
    return TestResult(name, _REQ, z, None, pvalue, N, "asymptotic", details)


def _runs_counts_iv(runs, n0, n1, name: str) -> tuple[int, int, int]:
    """``runs, n0, n1`` as Python ints: integers >= 0, and with both categories present a number
    of runs a sequence of them can have (2 .. 2 min(n0, n1) + [n0 != n1]); else the error naming it."""
    vals = {"runs": runs, "n0": n0, "n1": n1}
    for arg, v in vals.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name}: {arg} must be an integer, got {v!r} ({type(v).__name__})")
        if v < 0:
            raise InputError(f"{name}: {arg} must be >= 0, got {v!r}")
    runs, n0, n1 = (int(v) for v in vals.values())
    top = 2 * min(n0, n1) + (n0 != n1)
    if n0 and n1 and not 2 <= runs <= top:
        raise InputError(f"{name}: runs={runs} is impossible with n0={n0} and n1={n1} (a sequence of them has 2..{top} runs)")
    return runs, n0, n1


# ----------------------------------------------------------------------------------------------
# longest run of one colour
# ----------------------------------------------------------------------------------------------
def _transfer_matrix(m: int, p) -> np.ndarray:
    """Transition matrix of the run-length chain with runs capped at m, plus an absorbing state.

    States: 0 = "no colour run" (start, or last result zero); 1..m = colour 1 run of that length;
    m+1..2m = colour 2 run of length 1..m; 2m+1 = absorbing "a run of length m+1 occurred".
    When p1 == p2 the two colours are lumped (states 0, 1..m, absorbing m+1). The absorbing
    state is always the last one.
    """
    p0, p1, p2 = p
    if p1 == p2:
        # equal colour probabilities: the colour of the current run can be lumped (m + 2 states:
        # 0 = no run, r = run of length r, m + 1 = absorbing)
        T = np.zeros((m + 2, m + 2))
        T[m + 1, m + 1] = 1.0
        T[0, 0] = p0
        T[0, 1] = p1 + p2
        for r in range(1, m + 1):
            T[r, 0] = p0
            T[r, r + 1] += p1  # same colour (r + 1 == m + 1 is the absorbing state)
            T[r, 1] += p2  # the other colour starts a new run
        return T
    S = 2 * m + 2
    T = np.zeros((S, S))
    absorb = S - 1
    T[absorb, absorb] = 1.0
    for s in range(S - 1):  # O(m) states, m ~ tens
        T[s, 0] += p0
        if 1 <= s <= m:  # colour 1 run of length s
            T[s, s + 1 if s < m else absorb] += p1
            T[s, m + 1] += p2
        elif s > m:  # colour 2 run of length s - m
            r = s - m
            T[s, 1] += p1
            T[s, s + 1 if r < m else absorb] += p2
        else:
            T[s, 1] += p1
            T[s, m + 1] += p2
    return T


#: Entries below this are set to 0 during the matrix powers: subnormal floats would slow the
#: products down by orders of magnitude, and such probabilities are far below any p-value of use.
_TINY = 1e-250


def _vec_matpow(v: np.ndarray, T: np.ndarray, n: int) -> np.ndarray:
    """v T^n by repeated squaring (O(log n) matrix products)."""
    out = v.copy()
    P = T.copy()
    while n:
        if n & 1:
            out = out @ P
            out[out < _TINY] = 0.0
        n >>= 1
        if n:
            P = P @ P
            P[P < _TINY] = 0.0
    return out


def _prob_longest_exceeds(m: int, n: int, p) -> float:
    """P(L > m): probability that some colour run of length m+1 occurs in n results."""
    if m < 0:
        return 1.0
    if m == 0:
        return 1.0 - p[0] ** n
    T = _transfer_matrix(m, p)
    v = np.zeros(T.shape[0])
    v[0] = 1.0
    return float(min(1.0, max(0.0, _vec_matpow(v, T, n)[-1])))


def longest_run(
    categories_seq,
    p,
    *,
    name: str = "longest_colour_run",
    mid_p: bool = False,
) -> TestResult | NotApplicable:
    r"""Exact test of the longest run of one colour (zero breaks a run).

    Parameters
    ----------
    categories_seq : (n,) array_like of int
        0 = zero/green (breaks any run), 1 = red, 2 = black, in spin order.
    p : (3,) array_like of float
        Null probabilities (p0, p1, p2) of the three values, > 0 where used, summing to 1;
        single-zero roulette: (1/37, 18/37, 18/37).
    name : str
        Identifier carried by the result.
    mid_p : bool
        Use Lancaster's mid-p, :math:`\min(1, 2\min(P(L > l) + P(L = l)/2, P(L < l) + P(L = l)/2))`.
        L takes a dozen likely values, so the exact p-value is far from uniform and a test at level
        alpha/m almost never rejects; the mid-p is close to uniform (its size is checked by
        calibration) and is what the wheel battery uses.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` = the longest run L; two-sided exact p-value
        :math:`\min(1, 2\min(P(L \ge l), P(L \le l)))` (or the mid-p); details: the run's colour
        and start index, :math:`E L`, both tails. NotApplicable for an empty sequence.

    Notes
    -----
    H0: i.i.d. results with probabilities p. The event :math:`L \le m` is that a Markov chain
    on the state "colour and current run length (capped at m)" never enters an absorbing
    "run of length m+1" state; so :math:`P(L > m) = (e_0 T_m^n)_{\mathrm{abs}}` with the
    :math:`(2m+2) \times (2m+2)` transfer matrix :math:`T_m`, computed by repeated squaring
    in :math:`O(m^3 \log n)` [1]_ [2]_. The absorbing mass is a sum of positive terms, so tiny
    upper-tail probabilities keep their relative precision. :math:`E L = \sum_{m \ge 0} P(L > m)`,
    summed until the terms are below 1e-13.

    References
    ----------
    .. [1] Fu, J. C. & Koutras, M. V. (1994), "Distribution theory of runs: a Markov chain
           approach", JASA 89, 1050-1058.
    .. [2] Schilling, M. F. (1990), "The longest run of heads", College Math. J. 21, 196-207.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import longest_run
    >>> seq = np.random.default_rng(7).choice(3, size=370, p=[1 / 37, 18 / 37, 18 / 37])  # 0 zero, 1 red, 2 black
    >>> res = longest_run(seq, [1 / 37, 18 / 37, 18 / 37])
    >>> res.statistic, res.method, res.pvalue > 0.01
    (8.0, 'exact (Markov-chain transfer matrix)', True)
    """
    x = _seq_iv(categories_seq, [0, 1, 2], name)
    return longest_run_chunks((x[lo:hi] for lo, hi in spans(x.size)), x.size, p, name=name, mid_p=mid_p)


def _longest_colour_run(chunks) -> tuple[int, int, int]:
    """(L, colour, start) of the first longest colour run (values > 0) of the concatenated spans;
    (0, 0, -1) when there is none. Carries the run that is open at a span's end into the next."""
    L, colour, start = 0, 0, -1
    open_val, open_len, open_start = -1, 0, 0
    at = 0
    for y in chunks:  # loop over spans (vectorised run-length encoding within each)
        m = int(y.size)
        if m == 0:
            continue
        starts = np.flatnonzero(y[1:] != y[:-1])
        starts += 1
        starts = np.concatenate([[0], starts])
        lengths = np.diff(np.append(starts, m))
        vals = y[starts]
        starts += at
        if int(vals[0]) == open_val:  # the open run goes on
            lengths[0] += open_len
            starts[0] = open_start
        lr = np.where(vals > 0, lengths, -1)
        i = int(np.argmax(lr))  # the first of the span's longest colour runs
        if lr[i] > L:  # a tie keeps the earlier run
            L, colour, start = int(lengths[i]), int(vals[i]), int(starts[i])
        open_val, open_len, open_start = int(vals[-1]), int(lengths[-1]), int(starts[-1])
        at += m
    return L, colour, start


class _Starts:
    """The first spin of each run of a span, looked up one at a time (no array of them): ``bounds[i] + offset``,
    or ``first`` for run 0 when given (a run open at the span's start began in an earlier span)."""

    __slots__ = ("bounds", "offset", "first")

    def __init__(self, bounds, offset: int, first):
        self.bounds, self.offset, self.first = bounds, offset, first

    def __getitem__(self, i: int) -> int:
        return int(self.first) if i == 0 and self.first is not None else int(self.bounds[i]) + self.offset


class ColourRuns:
    """The colour runs of a spin sequence read span by span, once for every statistic that needs them:
    the first longest colour run (:func:`longest_run_chunks`) and the Roulette Rage rounds
    (:func:`rngcert.stats.rage.rage_rounds`, as their histogram).

    Parameters
    ----------
    chunks : iterable of (m,) int arrays
        Consecutive spans of the sequence: 0 zero (breaks a run), 1 red, 2 black.
    max_run : int
        Cap on a round's counted run length (Roulette Rage rule 3.27: 14).

    Attributes
    ----------
    n : int
        Spins read.
    longest, colour, start : int
        The first longest colour run: its length, colour (1, 2) and first spin; ``(0, 0, -1)`` when
        there is none (as :func:`longest_run_chunks` finds it).
    first_run : int
        Spins of the first run (of any value).
    round_counts : (max_run + 1,) int64
        Rounds by L: colour runs after the first and before the last, ``L = min(length - 1, max_run)``.
    red, black : int
        Those rounds established on red (1) and on black (2).
    censored : int
        1 when the last run is a colour run other than the first (a round the log ends inside).
    """

    def __init__(self, chunks, max_run: int = 14):
        self.max_run = int(max_run)
        self.n = 0
        self.longest, self.colour, self.start = 0, 0, -1
        self.first_run = 0
        self.round_counts = np.zeros(self.max_run + 1, dtype=np.int64)
        self.red = self.black = 0
        self.censored = 0
        runs = 0  # runs closed so far
        open_val, open_len, open_start = -1, 0, 0
        for y in chunks:  # loop over spans (vectorised run-length encoding within each)
            m = int(y.size)
            if m == 0:
                continue
            b = np.flatnonzero(y[1:] != y[:-1])
            bounds = np.empty(b.size + 2, dtype=np.int64)
            bounds[0], bounds[-1] = 0, m
            np.add(b, 1, out=bounds[1:-1])
            vals = y[bounds[:-1]]
            lengths = np.diff(bounds)
            # the runs' first spins: bounds[:-1] + self.n, but the first run's is open_start when it goes on
            starts = _Starts(bounds, self.n, None)
            if int(vals[0]) == open_val:  # the open run goes on
                lengths[0] += open_len
                starts.first = open_start
            elif open_val >= 0:  # the open run ended at the span's end
                runs = self._closed(np.array([open_val]), np.array([open_len]), _Starts(None, 0, open_start), runs)
            runs = self._closed(vals[:-1], lengths[:-1], starts, runs)
            open_val, open_len, open_start = int(vals[-1]), int(lengths[-1]), starts[int(vals.size) - 1]
            self.n += m
        if open_val >= 0:  # the last run: its length counts for the longest run, it is no settled round
            if runs == 0:
                self.first_run = open_len
            elif open_val > 0:
                self.censored = 1
            self._longest(np.array([open_val]), np.array([open_len]), _Starts(None, 0, open_start))

    def _longest(self, vals, lengths, starts) -> None:
        i = int(np.argmax(lengths))  # the first of the longest runs: the first longest colour run when it is one
        if vals[i] <= 0:
            lr = lengths * (vals > 0)  # zero runs as length 0
            i = int(np.argmax(lr))  # the first of the longest colour runs here
            if lr[i] <= 0:
                return
        if lengths[i] > self.longest:  # a tie keeps the earlier run
            self.longest, self.colour, self.start = int(lengths[i]), int(vals[i]), starts[i]

    def _closed(self, vals, lengths, starts, runs: int) -> int:
        """Count closed runs (in order); ``runs`` closed before them; returns the new count."""
        if vals.size == 0:
            return runs
        self._longest(vals, lengths, starts)
        # one count of (value, L + 1) over the runs, no selection: L + 1 = min(length, max_run + 1), rows 0 zero, 1 red, 2 black
        w = self.max_run + 2
        key = vals.astype(np.int64)
        key *= w
        key += np.minimum(lengths, w - 1)
        h = np.bincount(key, minlength=3 * w).reshape(3, w)[:, 1:]
        if runs == 0:  # the first run of the sequence: no round (the spin before it is unknown)
            self.first_run = int(lengths[0])
            h[int(vals[0]), min(int(lengths[0]), w - 1) - 1] -= 1
        self.round_counts += h[1] + h[2]
        self.red += int(h[1].sum())
        self.black += int(h[2].sum())
        return runs + int(vals.size)


def colour_runs(outcomes, colour, max_run: int = 14) -> ColourRuns:
    """The :class:`ColourRuns` of wheel positions, read span by span.

    Parameters
    ----------
    outcomes : (n,) int array
        Wheel positions 0..k-1 in spin order (not checked here).
    colour : (k,) int array
        Colour of each position: 0 red, 1 black, anything else zero (the wheel's ``colour`` partition).
    max_run : int
        Cap on a Roulette Rage round's L.
    """
    col = np.asarray(colour)
    seq3 = np.select([col == 0, col == 1], [1, 2], 0).astype(np.int8)  # per position: 0 zero, 1 red, 2 black
    x = np.asarray(outcomes)
    return ColourRuns((lookup(seq3, x[lo:hi]) for lo, hi in spans(x.size, 4 * _chunks.CHUNK)), max_run)  # (256 Ki spins a span)


def longest_run_chunks(chunks, n: int, p, *, name: str = "longest_colour_run", mid_p: bool = False) -> TestResult | NotApplicable:
    """:func:`longest_run` on a sequence read span by span.

    Parameters
    ----------
    chunks : iterable of (m,) int arrays, or ColourRuns
        Consecutive spans of the sequence (values 0, 1, 2 as in :func:`longest_run`, not
        checked here), or their :class:`ColourRuns` when already read.
    n : int
        Total length of the sequence.
    p, name, mid_p
        As in :func:`longest_run`.

    Returns
    -------
    TestResult or NotApplicable
        Equal to :func:`longest_run` on the concatenated spans, whatever their lengths.
    """
    pr = np.asarray(p, dtype=float)
    if pr.shape != (3,) or not np.all(np.isfinite(pr)) or np.any(pr < 0) or abs(pr.sum() - 1) > 1e-9:
        raise InputError(f"{name}: p must be 3 probabilities >= 0 summing to 1, got {p!r}")
    if pr[1] <= 0 or pr[2] <= 0:
        raise InputError(f"{name}: both colours need probability > 0, got p={p!r}")
    n = int(n)
    if n == 0:
        return NotApplicable(name, _REQ, 0, "empty sequence")
    L, colour, start = (chunks.longest, chunks.colour, chunks.start) if isinstance(chunks, ColourRuns) else _longest_colour_run(chunks)
    p_ge = _prob_longest_exceeds(L - 1, n, pr)  # P(L >= l)
    p_le = 1.0 - _prob_longest_exceeds(L, n, pr)  # P(L <= l)
    if mid_p:
        p_eq = max(0.0, p_ge + p_le - 1.0)  # P(L = l)
        pvalue = clip_pvalue(min(1.0, 2.0 * min(p_ge - 0.5 * p_eq, p_le - 0.5 * p_eq)))
    else:
        pvalue = clip_pvalue(min(1.0, 2.0 * min(p_ge, p_le)))
    # expected value
    mean = 0.0
    m = 0
    while m <= n:
        t = _prob_longest_exceeds(m, n, pr)
        mean += t
        if t < 1e-13 and m > 0:
            break
        m += 1
    details = dict(longest_run=L, colour=colour, start_index=start, expected_longest=mean,
                   p_upper=p_ge, p_lower=p_le, pvalue_rule="mid-p" if mid_p else "exact")
    method = "exact mid-p (Markov-chain transfer matrix)" if mid_p else "exact (Markov-chain transfer matrix)"
    return TestResult(name, _REQ, L, None, pvalue, n, method, details)
