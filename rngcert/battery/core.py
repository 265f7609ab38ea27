"""Batteries as data: which tests run, on which data, with which stream; the multiple-testing
policy and the verdict (DESIGN §4).

A :class:`Battery` is a module-level value: a name and a tuple of :class:`Spec` (the shape of
TestU01's SmallCrush, but data rather than code). Each spec names the function that computes it,
its fixed parameters, the requirement it serves and what it ``needs``:

* a need ``"equipment:…"`` is a property of the equipment (a known wheel order, a colour
  partition, a game): a spec whose equipment need fails is not a member of this equipment's
  battery at all (:meth:`Battery.members`);
* any other need is a property of the data (dealer ids, release pockets, the order before a
  shuffle): when it fails, the spec's result is :class:`NotApplicable` with the data's own reason,
  and the report prints it.

The data object of a battery answers ``data.lacks(need) -> str | None`` (None: the need holds;
otherwise the reason). :meth:`Battery.run` calls ``spec.func(data, ctx, **spec.params)`` with a
:class:`Context` whose random stream is :func:`rngcert.seeding.stream` ``(entropy, group,
spec.name)``: every test has its own stream, so adding a test changes no other test's p-value
and a table gets the same p-values wherever it is certified. :func:`decide` applies Holm's
step-down correction and states the verdict:

* **FAIL** — some test rejects after Holm's family-wise correction at the certification level α;
* **INCONCLUSIVE** — the data cannot carry a verdict (reasons given by the caller: too few spins,
  unreadable rows, too little power), a required test family could not run, or a test errored;
* **SUSPECT** — no family-wise rejection, but a rejection by the battery's looser rule;
* **PASS** — otherwise.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rngcert.seeding import key_of, spawn_key, stream
from rngcert.stats.multiple import holm
from rngcert.stats.result import NotApplicable, Requirement, TestResult, jsonable

Result = TestResult | NotApplicable

VERDICTS = ("PASS", "SUSPECT", "INCONCLUSIVE", "FAIL")

#: The looser family-wise level of SUSPECT (DESIGN §4): weighted Holm at 0.05, so that at most 5%
#: of fair sources are SUSPECT or FAIL whatever the dependence between the tests.
SUSPECT_LEVEL = 0.05

POLICY_TEXT = {
    "INCONCLUSIVE": "the data cannot carry a verdict (too few outcomes, too many unreadable rows, labels of another wheel, "
    "a data-integrity finding large enough to change a conclusion, spins that break the game's rules (a procedure finding: "
    "the ball spun with the rotor, not a valid spin under 004 §4 rule 3.1.1), or a core test that cannot run); this takes precedence "
    "over every other verdict. Too little power for the declared minimum effect makes INCONCLUSIVE what would be a PASS; a "
    "rejection stays a FAIL or SUSPECT",
    "FAIL": "some test rejects after the family-wise correction (weighted Holm) at the certification level alpha",
    "SUSPECT": "no rejection at alpha, but a rejection at the looser family-wise level 0.05 (at most 5% of fair sources): "
    "re-test with more data",
    "PASS": "no test rejects at either family-wise level, and the sample has the power to detect the standard's declared "
    "minimum effect where one applies (a sample without it is INCONCLUSIVE, with the sample size needed): no evidence of "
    "non-randomness at this sample size",
}


def test_id(name: str) -> int:
    """Stable integer for a test name (CRC-32 of its stem), used as its seed spawn key.

    The same as :func:`rngcert.seeding.key_of` for a name."""
    return key_of(name)


test_id.__test__ = False  # not a pytest test


@dataclass(frozen=True)
class Context:
    """What a test function gets besides the data.

    Attributes
    ----------
    rng : numpy.random.Generator
        The spec's own stream (Monte Carlo p-values).
    n_resamples : int
        Monte Carlo replicates for the tests that need them.
    alpha : float
        Certification level.
    stop_after : int or None
        Sequential stopping of the scans' Monte Carlo p-values (Besag & Clifford; see
        :class:`rngcert.stats.MonteCarlo`): None draws all ``n_resamples``.
    """

    rng: np.random.Generator
    n_resamples: int = 9999
    alpha: float = 0.01
    stop_after: int | None = None

    def monte_carlo(self, *, sequential: bool = False):
        """The :class:`rngcert.stats.MonteCarlo` of this spec's stream (``stop_after`` only for a test
        that stops early, ``sequential`` True)."""
        from rngcert.stats.montecarlo import MonteCarlo

        return MonteCarlo(self.n_resamples, rng=self.rng, stop_after=self.stop_after if sequential else None)


def sequential_stop(decision_level: float | None, n_resamples: int) -> int | None:
    """The exceedances h after which a scan's Monte Carlo p-value may stop (Besag & Clifford 1991),
    so that no decision at ``decision_level`` or below differs from the full run of ``n_resamples``.

    h = floor(level * R) + 1: a stopped p-value is h / l >= h / R > level, and the full run's is then
    at least (h + 1) / (R + 1) > level too, so neither rejects at that level, and every p-value
    that does reject is the full run's bit for bit (it never stopped). None (no stopping) when
    ``decision_level`` is None or h would exceed R.

    >>> sequential_stop(0.05, 9999)
    500
    >>> sequential_stop(None, 9999) is None
    True
    """
    if decision_level is None:
        return None
    h = int(np.floor(float(decision_level) * n_resamples)) + 1
    return h if h <= n_resamples else None


@dataclass(frozen=True)
class Spec:
    """One test of a battery.

    Attributes
    ----------
    name : str
        Stable test id; also names the random stream.
    func : callable
        ``func(data, ctx, **params) -> TestResult | NotApplicable | list of them``.
    requirement : Requirement
        Which of the three requirements the test serves.
    needs : tuple of str
        What the test requires (see the module docstring).
    params : mapping
        Fixed keyword arguments of ``func``.
    weight : float
        Holm weight (default 1): the spec's share of alpha in the weighted Holm procedure, given
        to the tests with the most power against the physical faults the battery is for.
    """

    name: str
    func: Callable[..., Result | Sequence[Result]]
    requirement: Requirement
    needs: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    weight: float = 1.0

    @classmethod
    def fixed(cls, result: Result) -> "Spec":
        """A spec that returns an already computed result (e.g. SP 800-22's two-level rows)."""
        return cls(result.name, _return_fixed, result.requirement, params=MappingProxyType({"result": result}))


def _return_fixed(data, ctx, *, result):
    return result


class _NoData:
    """Data of a battery whose specs need nothing."""

    def lacks(self, need: str) -> str | None:
        return f"the data do not provide {need!r}"


@dataclass(frozen=True)
class Battery:
    """A named, ordered tuple of specs, and the families without which it cannot certify.

    Attributes
    ----------
    name : str
        Battery id (``"wheel"``, ``"shuffle"``, ``"sp800-22"``).
    specs : tuple of Spec
        In report order.
    required : tuple of str
        Test families (name before ``[`` or ``:``) that must give at least one applicable result;
        otherwise the verdict is INCONCLUSIVE (a test that could not be run), not PASS.
    suspect_level : float or None
        The looser family-wise level of SUSPECT (None: SUSPECT on a raw p < alpha, the old rule).
    """

    name: str
    specs: tuple[Spec, ...]
    required: tuple[str, ...] = ()
    suspect_level: float | None = SUSPECT_LEVEL

    @property
    def weights(self) -> dict[str, float]:
        """Holm weight of each spec by name (results of a multi-result spec share it)."""
        return {s.name: s.weight for s in self.specs}

    def __post_init__(self):
        names = [s.name for s in self.specs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"battery {self.name!r}: duplicate test names {sorted(dup)}")

    def members(self, data) -> list[Spec]:
        """The specs that belong to this battery for ``data``'s equipment (equipment needs hold)."""
        return [s for s in self.specs if not any(n.startswith("equipment:") and data.lacks(n) for n in s.needs)]

    def size(self, data) -> int:
        """Number of member specs for ``data``'s equipment (no test is run)."""
        return len(self.members(data))

    def extended(self, *specs: Spec) -> "Battery":
        """A copy with ``specs`` appended (a lab's own tests)."""
        return replace(self, specs=self.specs + tuple(specs))

    def without(self, *names: str) -> "Battery":
        """A copy without the named specs."""
        return replace(self, specs=tuple(s for s in self.specs if s.name not in names))

    def evaluate(self, data, *, entropy: int, group: int | str = 0, n_resamples: int = 9999, alpha: float = 0.01,
                 threads: int = 1, decision_level: float | None = None) -> tuple[list[Result], list[str], dict]:
        """Run every member spec on ``data``; returns (results, errors, spawn keys by name).

        ``decision_level``: the largest level any decision on these results is taken at (alpha, the
        SUSPECT level, a standard's clause levels). Given, the scans' Monte Carlo p-values stop early
        (:func:`sequential_stop`): every decision at or below that level is the full run's.

        An exception in one test is recorded with its message (and a NotApplicable result saying
        so), never dropped. With ``threads`` > 1 the specs run on that many threads (numpy
        releases the GIL on the long arrays); each spec draws from its own stream and the results
        are collected in the specs' order, so they are those of the serial run."""
        members = self.members(data)
        keys: dict[str, list[int]] = {spec.name: list(spawn_key(group, spec.name)) for spec in members}

        def one(spec) -> tuple[list[Result], str | None]:
            missing = [r for r in (data.lacks(n) for n in spec.needs if not n.startswith("equipment:")) if r]
            if missing:
                return [NotApplicable(spec.name, spec.requirement, 0, "; ".join(missing))], None
            ctx = Context(stream(entropy, group, spec.name), n_resamples, alpha, sequential_stop(decision_level, n_resamples))
            try:
                out = spec.func(data, ctx, **spec.params)
            except MemoryError:  # the run does not fit this machine: the command says so (exit 3), it is no fault of the test
                raise
            except Exception as exc:  # recorded, never dropped
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                return [NotApplicable(spec.name, spec.requirement, 0, f"error while running the test: {tb}")], f"{spec.name}: {tb}"
            return list(out) if isinstance(out, (list, tuple)) else [out], None

        if threads > 1 and len(members) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rngcert-battery") as pool:
                outs = list(pool.map(one, members))
        else:
            outs = [one(spec) for spec in members]
        results = [r for res, _ in outs for r in res]
        errors = [e for _, e in outs if e is not None]
        return results, errors, keys

    def run(
        self,
        data,
        *,
        entropy: int,
        group: int | str = 0,
        alpha: float = 0.01,
        n_resamples: int = 9999,
        inconclusive: Sequence[str] = (),
        suspect: Sequence[str] | None = None,
        suspect_rule: str = "",
        suspect_level: float | None = None,
    ) -> "BatteryOutcome":
        """Evaluate the battery on ``data`` and decide the verdict (:func:`decide`).

        Parameters
        ----------
        data : object with ``lacks(need)``
            The battery's data (e.g. :class:`rngcert.battery.wheel.WheelData`).
        entropy : int
            Root seed entropy (recorded in the report).
        group : int or str
            First stream-key element (``"table:<name>"``), so that tables get distinct streams.
        alpha : float
            Certification (family-wise) level, default 0.01 (labs' 99% level).
        n_resamples : int
            Monte Carlo replicates.
        inconclusive, suspect, suspect_rule
            As in :func:`decide`.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        results, errors, keys = self.evaluate(data, entropy=entropy, group=group, n_resamples=n_resamples, alpha=alpha)
        return decide(
            results, alpha=alpha, errors=errors, inconclusive=inconclusive, suspect=suspect, suspect_rule=suspect_rule,
            suspect_level=self.suspect_level if suspect_level is None else suspect_level, required=self.required,
            weights=self.weights, seeds={"entropy": str(entropy), "spawn_keys": keys},
        )


@dataclass
class BatteryOutcome:
    """Results of one battery run, with the family-wise analysis and the verdict.

    Attributes
    ----------
    results : list of TestResult or NotApplicable
    adjusted : dict
        Weighted-Holm adjusted p-value of each applicable test, by name.
    rejected : list of str
        Tests rejected at the family-wise level ``alpha`` (FAIL).
    raw_below_alpha : list of str
        Tests whose raw p-value is below ``alpha`` (shown, not a verdict by itself).
    suspect_rejected : list of str
        Tests rejected at the looser family-wise level ``suspect_level`` but not at ``alpha``.
    weights : dict
        Holm weight of each applicable test.
    overridden : list of str
        Family-wise rejections that the verdict could not stand on because the data cannot carry
        a verdict (INCONCLUSIVE takes precedence, DESIGN §4).
    """

    results: list[Result]
    adjusted: dict[str, float]
    rejected: list[str]
    raw_below_alpha: list[str]
    errors: list[str]
    verdict: str
    reasons: list[str]
    alpha: float
    seeds: dict[str, Any] = field(default_factory=dict)
    power: dict[str, Any] = field(default_factory=dict)
    suspect_rule: str = ""
    suspect_rejected: list[str] = field(default_factory=list)
    suspect_level: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    overridden: list[str] = field(default_factory=list)
    calibration: dict[str, Any] = field(default_factory=dict)
    data_inconclusive: bool = False
    second_level_flags: list[str] = field(default_factory=list)

    @property
    def applicable(self) -> list[TestResult]:
        return [r for r in self.results if r.applicable]

    def to_dict(self) -> dict:
        tests = []
        for r in self.results:
            d = r.to_dict()
            if r.applicable:
                d["pvalue_holm"] = self.adjusted.get(r.name)
                d["holm_weight"] = self.weights.get(r.name, 1.0)
                d["rejected_familywise"] = r.name in self.rejected
                d["rejected_at_suspect_level"] = r.name in self.suspect_rejected
                d["grade"] = grade(r.pvalue, len(self.applicable), r.name in self.rejected, r.name in self.suspect_rejected)
            tests.append(d)
        return jsonable(
            {
                "verdict": self.verdict,
                "reasons": self.reasons,
                "alpha": self.alpha,
                "correction": "weighted Holm" if len(set(self.weights.values())) > 1 else "Holm",
                "tests_run": len(self.results),
                "tests_applicable": len(self.applicable),
                "rejected_familywise": self.rejected,
                "rejected_at_suspect_level": self.suspect_rejected,
                "suspect_level": self.suspect_level,
                "raw_pvalues_below_alpha": self.raw_below_alpha,
                "overridden_rejections": self.overridden,
                "data_inconclusive": self.data_inconclusive,
                "second_level_flags": self.second_level_flags,
                "suspect_rule": self.suspect_rule,
                "calibration": self.calibration,
                "errors": self.errors,
                "power": self.power,
                "seeds": self.seeds,
                "tests": tests,
            }
        )


def grade(p: float, m: int, rejected: bool = False, suspect: bool = False) -> str:
    """Plain-words grade of a raw p-value among ``m`` results (after PractRand's ladder).

    The grade scales with the number of results: with m tests, a p-value near α/m is
    "unusual", not yet alarming. Two-sided in spirit: only small p-values are graded here
    because every rngcert statistic puts evidence against H0 in its upper tail.
    """
    m = max(1, m)
    if rejected:
        return "FAIL (rejected by Holm)"
    if suspect:
        return "SUSPECT (rejected at the looser family-wise level)"
    q = min(1.0, p * m)  # Bonferroni-scaled
    if q < 1e-6:
        return "FAIL (overwhelming)"
    if q < 1e-3:
        return "very suspicious"
    if q < 1e-2:
        return "suspicious"
    if q < 5e-2:
        return "mildly suspicious"
    if p < 0.01:
        return "unusual"
    return "normal"


def run_battery(
    specs: Sequence[Spec],
    *,
    entropy: int,
    group: int | str = 0,
    alpha: float = 0.01,
    data=None,
    n_resamples: int = 9999,
    inconclusive: Sequence[str] = (),
    suspect: Sequence[str] | None = None,
    suspect_rule: str = "",
    required: Sequence[str] = (),
    suspect_level: float | None = SUSPECT_LEVEL,
) -> BatteryOutcome:
    """Run an ad-hoc list of specs as a battery (``Battery("ad hoc", specs, required, suspect_level).run``)."""
    return Battery("ad hoc", tuple(specs), tuple(required), suspect_level).run(
        data if data is not None else _NoData(), entropy=entropy, group=group, alpha=alpha, n_resamples=n_resamples,
        inconclusive=inconclusive, suspect=suspect, suspect_rule=suspect_rule,
    )


# long: the verdict rule of DESIGN §6 in one place (weighted Holm, SUSPECT level, required families, INCONCLUSIVE reasons); 39 lines are its docstring
#   and 13 its signature
def decide(
    results: Sequence[Result],
    *,
    alpha: float = 0.01,
    errors: Sequence[str] = (),
    inconclusive: Sequence[str] = (),
    suspect: Sequence[str] | None = None,
    suspect_rule: str = "",
    suspect_level: float | None = SUSPECT_LEVEL,
    required: Sequence[str] = (),
    weights: Mapping[str, float] | None = None,
    seeds: Mapping[str, Any] | None = None,
) -> BatteryOutcome:
    """Correct for multiplicity (weighted Holm) and decide the verdict of a battery's results.

    Precedence (DESIGN §4): INCONCLUSIVE when the data cannot carry a verdict (the caller's
    ``inconclusive`` reasons) — even when a test rejects: the rejection is then reported as
    overridden; otherwise FAIL when weighted Holm rejects at ``alpha`` (a grossly non-random
    source can make a core test inapplicable, e.g. SP 800-22's runs test after the frequency
    prerequisite fails: that does not undo a rejection); otherwise INCONCLUSIVE when a required
    family could not run or a test raised; otherwise SUSPECT when weighted Holm rejects at
    ``suspect_level`` (or the caller's ``suspect`` rule flags something); otherwise PASS.

    Parameters
    ----------
    results : sequence of TestResult or NotApplicable
        Every result of the battery, in report order.
    alpha : float
        Certification (family-wise) significance level.
    errors : sequence of str
        Tests that raised.
    inconclusive : sequence of str
        Reasons, established by the caller, why the data cannot carry a verdict.
    suspect : sequence of str, optional
        Replaces the SUSPECT rule by the caller's own second-level check (e.g. SP 800-22's
        proportion and uniformity rules over m sequences); SUSPECT when non-empty.
        ``suspect_rule`` says in words which rule was used, for the report.
    suspect_level : float or None
        The looser family-wise level of SUSPECT (default :data:`SUSPECT_LEVEL` = 0.05, so that at
        most 5% of fair sources are SUSPECT or FAIL). None: SUSPECT when some raw p < alpha (the
        rule of rngcert <= 0.1, kept for comparison).
    required : sequence of str
        Test families without which the battery cannot certify.
    weights : mapping of str to float, optional
        Holm weight per test name (name before ``[``); default 1.
    seeds : mapping, optional
        Recorded in the outcome (entropy and spawn keys).

    Returns
    -------
    BatteryOutcome
    """
    results = list(results)
    errors = list(errors)
    app = [r for r in results if r.applicable]
    w = np.array([float((weights or {}).get(r.name, (weights or {}).get(r.name.split("[", 1)[0], 1.0))) for r in app])
    reject, adj = holm([r.pvalue for r in app], alpha=alpha, weights=w if app else None)
    adjusted = {r.name: float(a) for r, a in zip(app, adj)}
    rejected = [r.name for r, rj in zip(app, reject) if rj]
    raw = [r.name for r in app if r.pvalue < alpha]
    if suspect is None and suspect_level is not None:
        loose = [r.name for r, a in zip(app, adj) if a <= suspect_level and r.name not in rejected]
        flagged = loose
    elif suspect is None:
        loose, flagged = [], [n for n in raw if n not in rejected]
    else:
        loose, flagged = [], list(suspect)
    reasons: list[str] = []
    inconclusive = list(inconclusive)
    missing: list[str] = []  # required families that could not run: no PASS, but a rejection still stands
    for fam in required:
        mine = [r for r in results if r.name.split("[", 1)[0].split(":", 1)[0] == fam]
        if mine and not any(r.applicable for r in mine):
            missing.append(f"{fam} could not be run: {mine[0].reason}")
        elif not mine:
            missing.append(f"{fam} could not be run: no result")
    overridden: list[str] = []
    corr = "weighted Holm" if len(set(w.tolist())) > 1 else "Holm"
    if inconclusive:
        verdict = "INCONCLUSIVE"
        reasons.extend(inconclusive)
        if rejected:
            overridden = list(rejected)
            reasons.append(
                f"{len(rejected)} test(s) reject at family-wise level {alpha} ({corr}: {', '.join(rejected)}), but a verdict "
                f"cannot stand on these data: see the reasons above"
            )
    elif rejected:
        verdict = "FAIL"
        reasons.append(f"{len(rejected)} test(s) reject at family-wise level {alpha} ({corr}): {', '.join(rejected)}")
    elif missing or errors or not app:
        verdict = "INCONCLUSIVE"
        reasons.extend(missing)
        reasons.extend(f"test could not be run: {e}" for e in errors)
        if not app:
            reasons.append("no test was applicable to these data")
    elif flagged:
        verdict = "SUSPECT"
        if suspect is not None:
            reasons.append(f"no family-wise rejection, but {suspect_rule or 'the second-level check'} flags: {', '.join(flagged)}; re-test with more data")
        elif suspect_level is not None:
            reasons.append(
                f"no rejection at family-wise level {alpha}, but {', '.join(flagged)} reject(s) at the looser family-wise level "
                f"{suspect_level} ({corr}); re-test with more data"
            )
        else:
            reasons.append(f"no family-wise rejection, but raw p < {alpha} in: {', '.join(flagged)}; re-test with more data")
    else:
        verdict = "PASS"
        reasons.append(f"no test rejects at family-wise level {alpha}" + (f" nor at the looser level {suspect_level}" if suspect is None and suspect_level else "") + f" ({len(app)} applicable tests)")
    if suspect is not None:
        rule = suspect_rule
    elif suspect_level is not None:
        rule = f"{corr} at the looser family-wise level {suspect_level}: at most {suspect_level:.0%} of fair sources are SUSPECT or FAIL"
    else:
        rule = f"some raw p-value < {alpha}"
    return BatteryOutcome(
        results, adjusted, rejected, raw, errors, verdict, reasons, alpha, seeds=dict(seeds or {}), suspect_rule=rule,
        suspect_rejected=loose, suspect_level=suspect_level if suspect is None else None,
        weights={r.name: float(x) for r, x in zip(app, w)}, overridden=overridden,
        data_inconclusive=bool(inconclusive), second_level_flags=list(suspect) if suspect is not None else [],
    )


def worst(verdicts: Sequence[str]) -> str:
    """The most severe of several verdicts (FAIL > INCONCLUSIVE > SUSPECT > PASS)."""
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    return max(verdicts, key=lambda v: order[v]) if verdicts else "INCONCLUSIVE"


