"""Two-level analysis of SP 800-22 results over m sequences (SP 800-22 rev1a section 4.2).

For every result name (e.g. ``nist_runs``, ``nist_non_overlapping_template[000000001]``) the
p-values of the m sequences on which the test was applicable are examined twice:

* **proportion of passing sequences** (section 4.2.1): a sequence passes at alpha = 0.01 when
  its p-value is >= alpha; the proportion must lie in
  :math:`\\hat p \\pm 3\\sqrt{\\hat p(1-\\hat p)/m}`, :math:`\\hat p = 1 - \\alpha`;
* **uniformity of the p-values** (section 4.2.2): chi-square over 10 equal bins of [0, 1]
  (the last bin closed), 9 df, :math:`p_T = Q(9/2, \\chi^2/2)`; uniform when
  :math:`p_T \\ge 0.0001`. SP 800-22 recommends at least 55 sequences for this check
  (section 4.2.2 note); with fewer applicable sequences the uniformity check is reported as
  not applicable (expected count per bin m/10 < 5.5), and only the proportion is judged.

With m = 1 there is no second level at all: :func:`two_level` returns a NotApplicable.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import special

from rngcert.errors import InputError
from rngcert.stats.nist._common import ALPHA
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, jsonable

__all__ = ["TwoLevelRow", "TwoLevelResult", "two_level", "run_many", "MIN_UNIFORMITY_SEQUENCES",
           "UNIFORMITY_ALPHA"]

#: SP 800-22 section 4.2.2: uniformity fails when its P-value is below 0.0001.
UNIFORMITY_ALPHA = 1e-4
#: SP 800-22 section 4.2.2 note: at least 55 sequences for the uniformity check.
MIN_UNIFORMITY_SEQUENCES = 55
BIN_EDGES = tuple(np.linspace(0.0, 1.0, 11).round(1).tolist())


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
        Chi-square (9 df) and its P-value; None when m < 55 (see ``uniformity_reason``).
    uniformity_ok : bool or None
    verdict : {"pass", "fail", "not applicable"}
        "fail" when the proportion or (if applicable) the uniformity check fails.
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

        * ``<name>:uniformity`` — statistic the chi-square of the 10-bin histogram (9 df),
          p-value :math:`p_T`; NotApplicable when fewer than 55 applicable sequences.
        * ``<name>:proportion`` — the number of passing sequences against
          Binomial(m, 1 - alpha), exact two-sided binomial test (``scipy.stats.binomtest``);
          details carry the proportion, the 3-sigma interval of SP 800-22 and its verdict.
          NotApplicable when the test was applicable on no sequence.
        """
        from scipy import stats  # imported here: over 1 s, and only needed for m >= 2

        out: list[TestResult | NotApplicable] = []
        for r in self.rows:
            common = {"m": r.m, "m_total": r.m_total, "passes": r.passes,
                      "proportion": r.proportion, "interval": r.interval,
                      "proportion_ok": r.proportion_ok, "histogram": list(r.histogram),
                      "bin_edges": list(self.bin_edges), "uniformity_pvalue": r.uniformity_pvalue,
                      "uniformity_ok": r.uniformity_ok, "sp800_22_verdict": r.verdict}
            if r.uniformity_pvalue is None:
                out.append(NotApplicable(f"{r.name}:uniformity", r.requirement, r.m,
                                         r.uniformity_reason or "no applicable sequences"))
            else:
                out.append(TestResult(f"{r.name}:uniformity", r.requirement,
                                      r.uniformity_statistic, 9, r.uniformity_pvalue, r.m,
                                      "asymptotic; SP 800-22 4.2.2 chi-square over 10 bins",
                                      common))
            if r.m == 0:
                out.append(NotApplicable(f"{r.name}:proportion", r.requirement, 0,
                                         "; ".join(r.reasons) or "no applicable sequences"))
            else:
                bt = stats.binomtest(r.passes, r.m, 1.0 - self.alpha)
                out.append(TestResult(f"{r.name}:proportion", r.requirement, r.passes, None,
                                      clip_pvalue(bt.pvalue), r.m,
                                      "exact; binomial test of the pass count, SP 800-22 4.2.1 "
                                      "interval in details", common))
        return out


def _row(name, requirement, pvals: np.ndarray, reasons, m_total, alpha, ualpha, min_u):
    m = int(pvals.size)
    hist = np.histogram(pvals, bins=np.linspace(0.0, 1.0, 11))[0] if m else np.zeros(10, int)
    if m == 0:
        return TwoLevelRow(name, requirement, m_total, 0, m_total, 0, None, None, None,
                           tuple(int(h) for h in hist), None, None, None,
                           "the test was not applicable to any sequence", "not applicable",
                           tuple(sorted(set(reasons))))
    passes = int(np.count_nonzero(pvals >= alpha))
    prop = passes / m
    phat = 1.0 - alpha
    half = 3.0 * math.sqrt(phat * (1.0 - phat) / m)
    lo, hi = phat - half, phat + half
    prop_ok = bool(lo <= prop <= hi) if hi < 1.0 else bool(prop >= lo)
    if m < min_u:
        ustat = up = uok = None
        ureason = (f"only m = {m} applicable sequences; the uniformity check of SP 800-22 "
                   f"section 4.2.2 needs at least {min_u} (expected {m / 10:g} per bin)")
    else:
        e = m / 10.0
        ustat = float(np.sum((hist - e) ** 2) / e)
        up = clip_pvalue(special.gammaincc(4.5, ustat / 2.0))
        uok = bool(up >= ualpha)
        ureason = None
    verdict = "pass" if prop_ok and uok is not False else "fail"
    return TwoLevelRow(name, requirement, m_total, m, m_total - m, passes, prop, (lo, hi),
                       prop_ok, tuple(int(h) for h in hist), ustat, up, uok, ureason, verdict,
                       tuple(sorted(set(reasons))))


def two_level(results: Sequence[Sequence[TestResult | NotApplicable]], *, alpha: float = ALPHA,
              uniformity_alpha: float = UNIFORMITY_ALPHA,
              min_uniformity: int = MIN_UNIFORMITY_SEQUENCES):
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
        Level of the uniformity check (SP 800-22 section 4.2.2).
    min_uniformity : int, default 55
        Fewest applicable sequences for the uniformity check.

    Returns
    -------
    TwoLevelResult or NotApplicable
        One :class:`TwoLevelRow` per name, in first-seen order. NotApplicable when m < 2:
        a single sequence has no distribution of p-values to examine.

    Raises
    ------
    InputError
        If ``results`` is empty or alpha is outside (0, 1).

    Notes
    -----
    Proportion interval :math:`\\hat p \\pm 3\\sqrt{\\hat p(1-\\hat p)/m}` with
    :math:`\\hat p = 1-\\alpha` (section 4.2.1, from the normal approximation to the binomial);
    uniformity :math:`\\chi^2 = \\sum_{i=1}^{10} (F_i - m/10)^2/(m/10)`,
    :math:`p_T = Q(9/2, \\chi^2/2)` (section 4.2.2). When the interval's upper end exceeds 1
    only the lower end is checked.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, section 4.2.
    """
    if not (0.0 < alpha < 1.0):
        raise InputError(f"alpha={alpha!r}; a level in (0, 1) is required")
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
    for i, seq in enumerate(results):
        for r in seq:
            if r.applicable:
                P[i, idx[r.name]] = r.pvalue
            else:
                reasons[r.name].append(r.reason)
    rows = []
    for nm, req in names.items():
        col = P[:, idx[nm]]
        rows.append(_row(nm, req, col[~np.isnan(col)], reasons[nm], m_total, alpha,
                         uniformity_alpha, min_uniformity))
    return TwoLevelResult(tuple(rows), m_total, alpha, uniformity_alpha)


def _run_one(args):
    from rngcert.stats.nist import run_sp800_22
    bits, params, constants = args
    return run_sp800_22(bits, params=params, constants=constants)


def run_many(streams: Iterable, *, params=None, constants: str = "reference",
             processes: int = 1, alpha: float = ALPHA):
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
        with ProcessPoolExecutor(max_workers=processes) as ex:
            per = list(ex.map(_run_one, jobs, chunksize=max(1, len(jobs) // (4 * processes))))
    if not per:
        raise InputError("run_many: no streams given")
    return per, two_level(per, alpha=alpha)
