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

POLICY_TEXT = {
    "FAIL": "some test rejects after Holm's family-wise correction at the certification level alpha",
    "SUSPECT": "no family-wise rejection, but some raw p-value < alpha: re-test with more data",
    "INCONCLUSIVE": "the sample is too small to detect the declared minimum bias with the declared power, or a test could not be run",
    "PASS": "no test rejects and no raw p-value is below alpha",
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
    """

    rng: np.random.Generator
    n_resamples: int = 9999
    alpha: float = 0.01


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
    """

    name: str
    func: Callable[..., Result | Sequence[Result]]
    requirement: Requirement
    needs: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

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
    """

    name: str
    specs: tuple[Spec, ...]
    required: tuple[str, ...] = ()

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

    def evaluate(self, data, *, entropy: int, group: int | str = 0, n_resamples: int = 9999, alpha: float = 0.01) -> tuple[list[Result], list[str], dict]:
        """Run every member spec on ``data``; returns (results, errors, spawn keys by name).

        An exception in one test is recorded with its message (and a NotApplicable result saying
        so), never dropped."""
        results: list[Result] = []
        errors: list[str] = []
        keys: dict[str, list[int]] = {}
        for spec in self.members(data):
            keys[spec.name] = list(spawn_key(group, spec.name))
            missing = [r for r in (data.lacks(n) for n in spec.needs if not n.startswith("equipment:")) if r]
            if missing:
                results.append(NotApplicable(spec.name, spec.requirement, 0, "; ".join(missing)))
                continue
            ctx = Context(stream(entropy, group, spec.name), n_resamples, alpha)
            try:
                out = spec.func(data, ctx, **spec.params)
            except Exception as exc:  # recorded, never dropped
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                errors.append(f"{spec.name}: {tb}")
                results.append(NotApplicable(spec.name, spec.requirement, 0, f"error while running the test: {tb}"))
                continue
            results.extend(out if isinstance(out, (list, tuple)) else [out])
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
            required=self.required, seeds={"entropy": str(entropy), "spawn_keys": keys},
        )


@dataclass
class BatteryOutcome:
    """Results of one battery run, with the family-wise analysis and the verdict."""

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

    @property
    def applicable(self) -> list[TestResult]:
        return [r for r in self.results if r.applicable]

    def to_dict(self) -> dict:
        tests = []
        for r in self.results:
            d = r.to_dict()
            if r.applicable:
                d["pvalue_holm"] = self.adjusted.get(r.name)
                d["rejected_familywise"] = r.name in self.rejected
                d["grade"] = grade(r.pvalue, len(self.applicable), r.name in self.rejected)
            tests.append(d)
        return jsonable(
            {
                "verdict": self.verdict,
                "reasons": self.reasons,
                "alpha": self.alpha,
                "tests_run": len(self.results),
                "tests_applicable": len(self.applicable),
                "rejected_familywise": self.rejected,
                "raw_pvalues_below_alpha": self.raw_below_alpha,
                "suspect_rule": self.suspect_rule,
                "expected_share_of_fair_sources_with_a_raw_p_below_alpha": 1 - (1 - self.alpha) ** len(self.applicable),
                "errors": self.errors,
                "power": self.power,
                "seeds": self.seeds,
                "tests": tests,
            }
        )


def grade(p: float, m: int, rejected: bool = False) -> str:
    """Plain-words grade of a raw p-value among ``m`` results (after PractRand's ladder).

    The grade scales with the number of results: with m tests, a p-value near α/m is
    "unusual", not yet alarming. Two-sided in spirit: only small p-values are graded here
    because every rngcert statistic puts evidence against H0 in its upper tail.
    """
    m = max(1, m)
    if rejected:
        return "FAIL (rejected by Holm)"
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
) -> BatteryOutcome:
    """Run an ad-hoc list of specs as a battery (``Battery("ad hoc", specs, required).run``)."""
    return Battery("ad hoc", tuple(specs), tuple(required)).run(
        data if data is not None else _NoData(), entropy=entropy, group=group, alpha=alpha, n_resamples=n_resamples,
        inconclusive=inconclusive, suspect=suspect, suspect_rule=suspect_rule,
    )


def decide(
    results: Sequence[Result],
    *,
    alpha: float = 0.01,
    errors: Sequence[str] = (),
    inconclusive: Sequence[str] = (),
    suspect: Sequence[str] | None = None,
    suspect_rule: str = "",
    required: Sequence[str] = (),
    seeds: Mapping[str, Any] | None = None,
) -> BatteryOutcome:
    """Correct for multiplicity (Holm) and decide the verdict of a battery's results.

    Parameters
    ----------
    results : sequence of TestResult or NotApplicable
        Every result of the battery, in report order.
    alpha : float
        Certification (family-wise) significance level.
    errors : sequence of str
        Tests that raised (each makes the verdict INCONCLUSIVE unless a test rejects).
    inconclusive : sequence of str
        Reasons, established by the caller, why the data cannot carry a verdict.
    suspect : sequence of str, optional
        Replaces the "some raw p-value < alpha" rule for SUSPECT by the caller's own second-level
        check (e.g. SP 800-22's proportion and uniformity rules over m sequences); SUSPECT when
        non-empty. ``suspect_rule`` says in words which rule was used, for the report.
    required : sequence of str
        Test families without which the battery cannot certify.
    seeds : mapping, optional
        Recorded in the outcome (entropy and spawn keys).

    Returns
    -------
    BatteryOutcome
    """
    results = list(results)
    errors = list(errors)
    app = [r for r in results if r.applicable]
    reject, adj = holm([r.pvalue for r in app], alpha=alpha)
    adjusted = {r.name: float(a) for r, a in zip(app, adj)}
    rejected = [r.name for r, rj in zip(app, reject) if rj]
    raw = [r.name for r in app if r.pvalue < alpha]
    reasons: list[str] = []
    flagged = raw if suspect is None else list(suspect)
    inconclusive = list(inconclusive)
    for fam in required:
        mine = [r for r in results if r.name.split("[", 1)[0].split(":", 1)[0] == fam]
        if mine and not any(r.applicable for r in mine):
            inconclusive.append(f"{fam} could not be run: {mine[0].reason}")
        elif not mine:
            inconclusive.append(f"{fam} could not be run: no result")
    if rejected:
        verdict = "FAIL"
        reasons.append(f"{len(rejected)} test(s) reject at family-wise level {alpha} (Holm): {', '.join(rejected)}")
    elif errors or inconclusive or not app:
        verdict = "INCONCLUSIVE"
        reasons.extend(inconclusive)
        reasons.extend(f"test could not be run: {e}" for e in errors)
        if not app:
            reasons.append("no test was applicable to these data")
    elif flagged:
        verdict = "SUSPECT"
        if suspect is None:
            reasons.append(f"no family-wise rejection, but raw p < {alpha} in: {', '.join(raw)}; re-test with more data")
        else:
            reasons.append(f"no family-wise rejection, but {suspect_rule or 'the second-level check'} flags: {', '.join(flagged)}; re-test with more data")
    else:
        verdict = "PASS"
        reasons.append(f"all {len(app)} applicable tests have raw p >= {alpha}")
    out = BatteryOutcome(results, adjusted, rejected, raw, errors, verdict, reasons, alpha, seeds=dict(seeds or {}))
    out.suspect_rule = suspect_rule if suspect is not None else ""
    return out


def worst(verdicts: Sequence[str]) -> str:
    """The most severe of several verdicts (FAIL > INCONCLUSIVE > SUSPECT > PASS)."""
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    return max(verdicts, key=lambda v: order[v]) if verdicts else "INCONCLUSIVE"


