"""Two-level analysis of SP 800-22 results over m sequences (SP 800-22 rev1a section 4.2).

For every result name (e.g. ``nist_runs``, ``nist_non_overlapping_template[000000001]``) the
p-values of the m sequences on which the test was applicable are examined twice:

* **proportion of passing sequences** (section 4.2.1): a sequence passes at alpha = 0.01 when
  its p-value is >= alpha; the proportion must lie in
  :math:`\\hat p \\pm 3\\sqrt{\\hat p(1-\\hat p)/m}`;
* **uniformity of the p-values** (section 4.2.2): chi-square of the counts in 10 equal bins of
  [0, 1] (the last bin closed) against their expected counts; uniform when its P-value is
  >= 0.0001. SP 800-22 recommends at least 55 sequences (section 4.2.2 note); with fewer
  applicable sequences the uniformity check is reported as not applicable and only the
  proportion is judged.

**The law of the p-values under H0** (case c02). SP 800-22 takes :math:`\\hat p = 1 - \\alpha`
and m/10 per bin, true only for a continuous, exactly uniform p-value. At small n the
p-values are discrete (the frequency test's at n = 128 takes 65 values) and a perfect generator
fails. By default (``null_law="exact"``) each name's expected bin counts and
:math:`\\hat p = P(p \\ge \\alpha)` come from the law of that test's p-value at the sequences' n
(:mod:`rngcert.stats.nist.nulllaw`: exact, Monte Carlo from the exact law of the sufficient
statistic, or continuous, per test). Adjacent bins are merged until every expected count is at
least 5 (Cochran's rule; SP 800-22's 55 sequences give 5.5 per bin), df = classes - 1, and a
Monte Carlo law's chi-square is divided by 1 + m/R. Where the law is continuous this is
SP 800-22's check exactly (10 bins, 9 df, m/10 each); where the law is unknown, or fewer than
two classes reach 5 expected, the uniformity check is not applicable, with the reason.
``null_law="uniform"`` gives SP 800-22's arithmetic as published for every name.

With m = 1 there is no second level at all: :func:`two_level` returns a NotApplicable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.frequency import binom_test_pvalue
from rngcert.stats.nist import nulllaw
from rngcert.stats.nist._common import ALPHA
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, jsonable
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

__all__ = ["TwoLevelRow", "TwoLevelResult", "two_level", "run_many", "MIN_UNIFORMITY_SEQUENCES",
           "UNIFORMITY_ALPHA", "MIN_EXPECTED", "minimum_passes", "proportion_rule_text"]

#: SP 800-22 section 4.2.2: uniformity fails when its P-value is below 0.0001.
UNIFORMITY_ALPHA = 1e-4
#: SP 800-22 section 4.2.2 note: at least 55 sequences for the uniformity check.
MIN_UNIFORMITY_SEQUENCES = 55
#: Fewest expected p-values in a class of the uniformity chi-square (bins are merged to reach it).
MIN_EXPECTED = 5.0
BIN_EDGES = tuple(np.linspace(0.0, 1.0, 11).round(1).tolist())


def minimum_passes(m: int, alpha: float = ALPHA, pass_probability: float | None = None) -> tuple[int, int, float]:
    """Fewest passing sequences of m that the proportion rule accepts, rngcert's and sts-2.1.2's.

    SP 800-22 section 4.2.1 states the bound as a real number, :math:`\\hat p - 3\\sqrt{\\hat
    p(1-\\hat p)/m}`; rngcert compares the proportion with it as such. NIST's sts-2.1.2 multiplies
    it by m and stores it in an ``int`` (``proportion_threshold_min`` in ``assess.c``), which
    truncates it, so sts accepts one pass fewer whenever the bound times m is not a whole number.

    Parameters
    ----------
    m : int
        Sequences.
    alpha : float
        Level of each sequence's test (0.01).
    pass_probability : float, optional
        :math:`\\hat p` (default ``1 - alpha``, SP 800-22's).

    Returns
    -------
    (rngcert's minimum, sts-2.1.2's minimum, the bound times m)

    Examples
    --------
    >>> minimum_passes(10)          # 8 of 10 fails here and passes in sts-2.1.2
    (9, 8, 8.956...)
    >>> minimum_passes(100)
    (97, 96, 96.015...)
    """
    phat = 1.0 - alpha if pass_probability is None else pass_probability
    bound = (phat - 3.0 * math.sqrt(phat * (1.0 - phat) / m)) * m
    return max(0, math.ceil(bound - 1e-12)), max(0, int(bound)), bound


def proportion_rule_text(m: int, alpha: float = ALPHA) -> str:
    """The proportion rule in words, with what it means at m and where sts-2.1.2 differs.

    Examples
    --------
    >>> print(proportion_rule_text(10))  # doctest: +ELLIPSIS
    proportion rule (SP 800-22 section 4.2.1): ... at least 9 of 10 ... sts-2.1.2 ... 8 of 10 ...
    """
    ours, sts, bound = minimum_passes(m, alpha)
    text = (f"proportion rule (SP 800-22 section 4.2.1): a test name fails when the share of sequences with p >= {alpha:g} lies "
            f"outside p̂ ± 3·sqrt(p̂(1−p̂)/m), the bound compared as a real number (p̂ is P(p >= {alpha:g}) under H0, from the law of "
            f"each test's p-value: about {1 - alpha:g}, per name in the details). With m = {m} and p̂ = {1 - alpha:g} that is at least "
            f"{ours} of {m} passing (bound {bound:.3f})")
    if sts != ours:
        text += (f"; NIST's sts-2.1.2 truncates the bound to an integer ({sts}), so {sts} of {m} passing fails here and passes in "
                 "sts-2.1.2's finalAnalysisReport")
    else:
        text += "; sts-2.1.2, which truncates the bound to an integer, gives the same count here"
    return text


@dataclass(frozen=True)
class TwoLevelRow:
    """Second-level summary of one result name over the m sequences.

    Attributes
    ----------
    name : str
        Result name, e.g. ``"nist_serial[1]"``.
    requirement : Requirement
    m_total : int
        Sequences examined.
    m : int
        Sequences on which the test was applicable (the sample of the second level).
    not_applicable : int
        ``m_total - m``; ``reasons`` lists the distinct reasons.
    passes : int
        Applicable sequences with p-value >= alpha.
    proportion : float or None
        ``passes / m`` (None when m = 0).
    interval : (float, float) or None
        :math:`\\hat p \\pm 3\\sqrt{\\hat p(1-\\hat p)/m}` (None when m = 0).
    proportion_ok : bool or None
    histogram : tuple of 10 int
        Counts of p-values in [0, .1), [.1, .2), ..., [.9, 1.0].
    uniformity_statistic, uniformity_pvalue : float or None
        Chi-square and its P-value; None when the check is not applicable (see
        ``uniformity_reason``).
    uniformity_ok : bool or None
    uniformity_reason : str or None
        Why the uniformity check is not applicable.
    verdict : {"pass", "fail", "not applicable"}
        "fail" when the proportion or (if applicable) the uniformity check fails.
    reasons : tuple of str
        Distinct reasons of the sequences on which the test was not applicable.
    pass_probability : float or None
        :math:`\\hat p`, the probability under H0 that a sequence passes (1 - alpha for a
        continuous p-value; from the law of the p-value otherwise).
    uniformity_df : int or None
        Degrees of freedom (classes - 1) of the uniformity chi-square.
    expected : tuple of float
        Expected counts of the classes under H0 (m/10 per bin for a continuous law).
    classes : tuple of (int, int)
        First and last bin of each class (bins merged so that each expects >= 5).
    uniformity_method : str
        The law used and how ("continuous: ..." for SP 800-22's check as published).
    law_kind : str
        "exact", "monte-carlo", "approximate", "continuous", "unknown" (several joined by "+"
        when the sequences had different lengths), or "uniform" when null_law="uniform".
    pvalues : tuple of (float or None)
        The p-value of every sequence, in stream order (``m_total`` entries; None where the test
        was not applicable to that sequence): what the proportion and the histogram count.
    """

    name: str
    requirement: Requirement
    m_total: int
    m: int
    not_applicable: int
    passes: int
    proportion: float | None
    interval: tuple[float, float] | None
    proportion_ok: bool | None
    histogram: tuple[int, ...]
    uniformity_statistic: float | None
    uniformity_pvalue: float | None
    uniformity_ok: bool | None
    uniformity_reason: str | None
    verdict: str
    reasons: tuple[str, ...] = ()
    pass_probability: float | None = None
    uniformity_df: int | None = None
    expected: tuple[float, ...] = ()
    classes: tuple[tuple[int, int], ...] = ()
    uniformity_method: str = ""
    law_kind: str = ""
    pvalues: tuple[float | None, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["requirement"] = self.requirement.value
        return jsonable(d)


@dataclass(frozen=True)
class TwoLevelResult:
    """Two-level analysis of a battery run over m sequences; one row per result name."""

    rows: tuple[TwoLevelRow, ...]
    m: int
    alpha: float = ALPHA
    uniformity_alpha: float = UNIFORMITY_ALPHA
    bin_edges: tuple[float, ...] = field(default=BIN_EDGES)

    @property
    def failed(self) -> list[str]:
        """Names whose proportion or uniformity check failed."""
        return [r.name for r in self.rows if r.verdict == "fail"]

    def row(self, name: str) -> TwoLevelRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {"m": self.m, "alpha": self.alpha, "uniformity_alpha": self.uniformity_alpha,
                "bin_edges": list(self.bin_edges), "rows": [r.to_dict() for r in self.rows]}

    def to_test_results(self) -> list[TestResult | NotApplicable]:
        """Express every row as two results for the verdict machinery (DESIGN §4).

        * ``<name>:uniformity`` — statistic the chi-square of the histogram against the
          expected counts of the row (9 df for a continuous law), p-value :math:`p_T`;
          NotApplicable with the row's reason when the check is not applicable.
        * ``<name>:proportion`` — the number of passing sequences against
          Binomial(m, pass probability), exact two-sided binomial test
          (``scipy.stats.binomtest``'s p-value, by :func:`rngcert.stats.frequency.binom_test_pvalue`); the
          pass probability is 1 - alpha for a continuous law,
          P(p >= alpha) under H0 otherwise; details carry the proportion, the 3-sigma interval
          of SP 800-22 and its verdict. NotApplicable when the test was applicable on no
          sequence.
        """
        out: list[TestResult | NotApplicable] = []
        for r in self.rows:
            common = {"m": r.m, "m_total": r.m_total, "passes": r.passes,
                      "proportion": r.proportion, "interval": r.interval,
                      "proportion_ok": r.proportion_ok, "histogram": list(r.histogram),
                      "bin_edges": list(self.bin_edges), "uniformity_pvalue": r.uniformity_pvalue,
                      "uniformity_ok": r.uniformity_ok, "sp800_22_verdict": r.verdict,
                      "pass_probability": r.pass_probability, "expected": list(r.expected),
                      "classes": [list(c) for c in r.classes], "law": r.uniformity_method}
            if r.uniformity_pvalue is None:
                out.append(NotApplicable(f"{r.name}:uniformity", r.requirement, r.m,
                                         r.uniformity_reason or "no applicable sequences"))
            else:
                out.append(TestResult(f"{r.name}:uniformity", r.requirement,
                                      r.uniformity_statistic, r.uniformity_df,
                                      r.uniformity_pvalue, r.m,
                                      f"asymptotic; SP 800-22 4.2.2 chi-square over "
                                      f"{len(r.classes)} classes, {r.uniformity_method}",
                                      common))
            if r.m == 0:
                out.append(NotApplicable(f"{r.name}:proportion", r.requirement, 0,
                                         "; ".join(r.reasons) or "no applicable sequences"))
            else:
                pvalue = binom_test_pvalue(r.passes, r.m, r.pass_probability)  # scipy.stats.binomtest's, same bits
                out.append(TestResult(f"{r.name}:proportion", r.requirement, r.passes, None,
                                      clip_pvalue(pvalue), r.m,
                                      "exact; binomial test of the pass count, SP 800-22 4.2.1 "
                                      "interval in details", common))
        return out


def _merge(expected: np.ndarray, min_expected: float) -> list[tuple[int, int]]:
    """Adjacent bins merged left to right until each class expects >= min_expected."""
    classes, start, acc = [], 0, 0.0
    for i, e in enumerate(expected):
        acc += e
        if acc >= min_expected:
            classes.append((start, i))
            start, acc = i + 1, 0.0
    if start < expected.size:                       # a short tail joins the last class
        if classes:
            classes[-1] = (classes[-1][0], expected.size - 1)
        else:
            classes.append((0, expected.size - 1))
    return classes


def _uniform_law(result, alpha):
    return nulllaw.PValueLaw("uniform", (0.1,) * 10, 1.0 - alpha, alpha,
                             "uniform: SP 800-22 section 4.2.2 as published (10 equal bins)")


def _uniformity(hist: np.ndarray, laws, m: int, method: str, ualpha: float):
    """Uniformity of one name's p-values (SP 800-22 section 4.2.2) against the bins of their null
    laws, classes merged to ``MIN_EXPECTED``: (statistic, p-value, passed, df, expected per class,
    classes, None), or (None, None, None, None, (), (), why) when every bin but one is too small."""
    e = np.zeros(10)
    inflate = 1.0
    for law, c in laws:
        e += c * np.asarray(law.bins)
        if law.replicates:
            inflate += c * c / (m * law.replicates)
    cls = _merge(e, MIN_EXPECTED)
    exp_c = np.array([e[a:b + 1].sum() for a, b in cls])
    obs_c = np.array([hist[a:b + 1].sum() for a, b in cls])
    if len(cls) < 2:
        return None, None, None, None, (), (), (f"the p-values of m = {m} sequences expect fewer than {MIN_EXPECTED:g} "
                                                 "in every bin but one (expected per bin "
                                                 + ", ".join(f"{v:.3g}" for v in e) + f" under H0; {method})")
    df = len(cls) - 1
    ustat = float(np.sum((obs_c - exp_c) ** 2 / exp_c) / inflate)
    up = clip_pvalue(special.gammaincc(df / 2.0, ustat / 2.0))
    return ustat, up, bool(up >= ualpha), df, tuple(float(v) for v in exp_c), tuple((int(a), int(b)) for a, b in cls), None


def _row(name, requirement, pvals: np.ndarray, laws, reasons, m_total, alpha, ualpha, min_u):
    m = int(pvals.size)
    hist = (np.bincount(nulllaw.bin_index(pvals), minlength=10) if m
            else np.zeros(10, dtype=np.int64))
    hist_t = tuple(int(h) for h in hist)
    if m == 0:
        why = sorted(set(reasons))
        return TwoLevelRow(name, requirement, m_total, 0, m_total, 0, None, None, None,
                           hist_t, None, None, None,
                           "the test was not applicable to any sequence" + (f" ({'; '.join(why[:2])}{'; …' if len(why) > 2 else ''})" if why else ""),
                           "not applicable", tuple(why))
    passes = int(np.count_nonzero(pvals >= alpha))
    prop = passes / m
    # laws: list of (PValueLaw, count of sequences under it)
    kinds = "+".join(sorted({law.kind for law, _ in laws}))
    unknown = [law for law, _ in laws if not law.known]
    if unknown:
        phat = 1.0 - alpha
    else:
        phat = min(1.0, sum(law.pass_probability * c for law, c in laws) / m)
    half = 3.0 * math.sqrt(phat * (1.0 - phat) / m)
    lo, hi = phat - half, phat + half
    prop_ok = bool(lo <= prop <= hi) if hi < 1.0 else bool(prop >= lo)
    method = "; ".join(dict.fromkeys(law.method for law, _ in laws))
    ustat = up = uok = df = None
    expected: tuple = ()
    classes: tuple = ()
    ureason = None
    if unknown:
        ureason = ("the law of this p-value under H0 is not available, so the uniformity of "
                   f"its p-values cannot be judged: {unknown[0].reason}")
    elif m < min_u:
        ureason = (f"only m = {m} applicable sequences; the uniformity check of SP 800-22 "
                   f"section 4.2.2 needs at least {min_u} (expected {m / 10:g} per bin)")
    else:
        ustat, up, uok, df, expected, classes, ureason = _uniformity(hist, laws, m, method, ualpha)
    verdict = "pass" if prop_ok and uok is not False else "fail"
    return TwoLevelRow(name, requirement, m_total, m, m_total - m, passes, prop, (lo, hi),
                       prop_ok, hist_t, ustat, up, uok, ureason, verdict,
                       tuple(sorted(set(reasons))), phat, df, expected, classes, method, kinds)


# long: numpydoc docstring, then grouping the results of m sequences by name before the rows
def two_level(results: Sequence[Sequence[TestResult | NotApplicable]], *, alpha: float = ALPHA,
              uniformity_alpha: float = UNIFORMITY_ALPHA,
              min_uniformity: int = MIN_UNIFORMITY_SEQUENCES,
              null_law: str | Callable = "exact"):
    """Two-level analysis (proportion of passes and uniformity of p-values) over m sequences.

    Parameters
    ----------
    results : sequence of m sequences of TestResult / NotApplicable
        ``results[i]`` is the battery output for sequence i (e.g. :func:`run_sp800_22`); the
        same names should appear for every sequence (a name missing for a sequence counts as
        not applicable there).
    alpha : float, default 0.01
        First-level significance level.
    uniformity_alpha : float, default 0.0001
        Level of the uniformity check (SP 800-22 section 4.2.2), for every kind of law.
    min_uniformity : int, default 55
        Fewest applicable sequences for the uniformity check.
    null_law : {"exact", "uniform"} or callable, default "exact"
        Law of each p-value under H0: "exact" uses
        :func:`rngcert.stats.nist.nulllaw.law_for_result` (per result: its name, n and
        details; names outside the SP 800-22 battery have no known law, so their uniformity is
        not applicable); "uniform" takes every p-value as continuous U(0, 1), SP 800-22's
        arithmetic as published; a callable ``f(result, alpha) -> PValueLaw`` supplies laws.

    Returns
    -------
    TwoLevelResult or NotApplicable
        One :class:`TwoLevelRow` per name, in first-seen order. NotApplicable when m < 2:
        a single sequence has no distribution of p-values to examine.

    Raises
    ------
    InputError
        If ``results`` is empty, alpha is outside (0, 1) or ``null_law`` is unknown.

    Notes
    -----
    Proportion interval :math:`\\hat p \\pm 3\\sqrt{\\hat p(1-\\hat p)/m}` (section 4.2.1, from
    the normal approximation to the binomial), :math:`\\hat p` the null pass probability (the
    average over the sequences when their n differ). Uniformity
    :math:`\\chi^2 = \\sum_c (F_c - E_c)^2/E_c` over the classes c of merged bins,
    :math:`p_T = Q(df/2, \\chi^2/2)` (section 4.2.2); for a continuous law :math:`E_c = m/10`
    over 10 bins, df = 9, SP 800-22's formula. When the interval's upper end exceeds 1 only
    the lower end is checked. The laws are cached per (test, n, parameters); at n = 10^6 the
    first call costs a few seconds.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 4.2.
    .. [2] Cochran W. G. (1954) Some methods for strengthening the common chi-square tests.
       Biometrics 10, 417-451 (expected counts of at least 5).
    .. [3] L'Ecuyer P., Simard R. (2007) TestU01. ACM TOMS 33(4) (second-level tests need the
       exact law of discrete statistics).
    """
    if not (0.0 < alpha < 1.0):
        raise InputError(f"alpha={alpha!r}; a level in (0, 1) is required")
    if null_law == "exact":
        law_of = nulllaw.law_for_result
    elif null_law == "uniform":
        law_of = _uniform_law
    elif callable(null_law):
        law_of = null_law
    else:
        raise InputError(f"null_law={null_law!r}; allowed: 'exact', 'uniform' or a callable")
    results = list(results)
    m_total = len(results)
    if m_total == 0:
        raise InputError("two_level: no sequences given (m = 0)")
    if m_total < 2:
        return NotApplicable("nist_two_level", Requirement.UNIFORMITY, m_total,
                             "m = 1 sequence: the two-level analysis needs m >= 2 sequences "
                             "(proportion of passes) and m >= 55 for the uniformity of "
                             "p-values (SP 800-22 section 4.2); judge the single sequence by "
                             "its own p-values")
    names: dict[str, Requirement] = {}
    for seq in results:
        for r in seq:
            names.setdefault(r.name, r.requirement)
    idx = {nm: k for k, nm in enumerate(names)}
    P = np.full((m_total, len(names)), np.nan)
    reasons: dict[str, list[str]] = {nm: [] for nm in names}
    groups: dict[str, dict] = {nm: {} for nm in names}     # name -> {law key: [result, count]}
    for i, seq in enumerate(results):
        for r in seq:
            if r.applicable:
                P[i, idx[r.name]] = r.pvalue
                g = groups[r.name]
                try:
                    k = (r.n,) + nulllaw.law_params(r.name, r.details)
                except (KeyError, TypeError, ValueError):
                    k = ("raw", id(r))
                if k in g:
                    g[k][1] += 1
                else:
                    g[k] = [r, 1]
            else:
                reasons[r.name].append(r.reason)
    rows = []
    for nm, req in names.items():
        col = P[:, idx[nm]]
        laws = [(law_of(r, alpha), c) for r, c in groups[nm].values()]
        row = _row(nm, req, col[~np.isnan(col)], laws, reasons[nm], m_total, alpha, uniformity_alpha, min_uniformity)
        rows.append(replace(row, pvalues=tuple(None if np.isnan(x) else float(x) for x in col)))
    return TwoLevelResult(tuple(rows), m_total, alpha, uniformity_alpha)


def _run_one(args):
    from rngcert.stats.nist import run_sp800_22
    bits, params, constants = args
    return run_sp800_22(bits, params=params, constants=constants)


def run_many(streams: Iterable, *, params=None, constants: str = "reference",
             processes: int = 1, alpha: float = ALPHA, null_law: str | Callable = "exact"):
    """Run the SP 800-22 battery on every stream and the two-level analysis over them.

    Parameters
    ----------
    streams : (m, n) array_like of {0, 1}, or iterable of (n_i,) arrays
        The m sequences (not modified).
    params, constants
        As in :func:`rngcert.stats.nist.run_sp800_22`.
    processes : int, default 1
        Worker processes (``concurrent.futures``); results are collected in stream order, so
        the output does not depend on the number of processes.
    alpha, null_law
        As in :func:`two_level`.

    Returns
    -------
    per_sequence : list of m lists of TestResult / NotApplicable
    summary : TwoLevelResult or NotApplicable
    """
    if isinstance(streams, np.ndarray):
        if streams.ndim != 2:
            raise InputError(f"streams must be (m, n), got shape {streams.shape}")
        items = list(streams)
    else:
        items = list(streams)
    if processes < 1:
        raise InputError(f"processes={processes!r}; an integer >= 1 is required")
    jobs = [(s, params, constants) for s in items]
    if processes == 1 or len(jobs) < 2:
        per = [_run_one(j) for j in jobs]
    else:
        from concurrent.futures import ProcessPoolExecutor  # here: multiprocessing costs a serial caller about 0.02 s to import

        with ProcessPoolExecutor(max_workers=processes) as ex:
            rest = ex.map(_run_one, jobs[1:],
                          chunksize=max(1, (len(jobs) - 1) // (4 * processes)))
            # while the workers run the other streams, this process runs the first one and
            # computes (and caches) the laws of its p-values, which two_level needs next
            first = _run_one(jobs[0])
            if null_law == "exact":
                for r in first:
                    if r.applicable:
                        nulllaw.law_for_result(r, alpha)
            per = [first] + list(rest)
    if not per:
        raise InputError("run_many: no streams given")
    return per, two_level(per, alpha=alpha, null_law=null_law)
