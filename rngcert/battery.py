"""Batteries: which tests run for which equipment, the multiple-testing policy, and the verdict.

A battery is a flat, declarative tuple of :class:`Spec` (the shape of TestU01's SmallCrush, but
data rather than code). :func:`run_battery` calls each spec with its own random stream, keeps
every result (an exception in one test is recorded with its message, never dropped), applies
Holm's step-down correction to the applicable p-values, and states the verdict of DESIGN §4:

* **FAIL** — some test rejects after Holm's family-wise correction at the certification level α;
* **SUSPECT** — no family-wise rejection, but some raw p-value < α: re-test with more data;
* **INCONCLUSIVE** — the sample is too small to detect the lab's declared minimum bias with the
  declared power (or a test could not be run);
* **PASS** — otherwise.

Seeds: each test draws from ``SeedSequence(entropy, spawn_key=(group, test_id(name)))`` with a
fixed integer per test name, so adding a test never changes another test's stream, and the same
seed gives the same report.
"""

from __future__ import annotations

import traceback
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

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
    """Stable integer for a test name (CRC-32), used as its seed spawn key."""
    return zlib.crc32(name.split("[", 1)[0].encode())


@dataclass(frozen=True)
class Spec:
    """One test of a battery.

    Attributes
    ----------
    name : str
        Stable test id; also selects the random stream.
    func : callable
        ``func(rng) -> TestResult | NotApplicable | list of them``; the data are bound in.
    """

    name: str
    func: Callable[[np.random.Generator], Result | Sequence[Result]]
    requirement: Requirement


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
    group: int = 0,
    alpha: float = 0.01,
    inconclusive: Sequence[str] = (),
    suspect: Sequence[str] | None = None,
    suspect_rule: str = "",
    required: Sequence[str] = (),
) -> BatteryOutcome:
    """Run every spec, correct for multiplicity (Holm) and decide the verdict.

    Parameters
    ----------
    specs : sequence of Spec
        The battery.
    entropy : int
        Root seed entropy (recorded in the report).
    group : int
        First spawn-key element (e.g. the table's index), so that tables get distinct streams.
    alpha : float
        Certification (family-wise) significance level, default 0.01 (labs' 99% level).
    inconclusive : sequence of str
        Reasons, established by the caller (power analysis), why the sample cannot certify.
    suspect : sequence of str, optional
        Replaces the "some raw p-value < alpha" rule for SUSPECT by the caller's own second-level
        check (e.g. SP 800-22's proportion and uniformity rules over m sequences, where hundreds of
        p-values make a raw p < alpha certain); SUSPECT when non-empty. ``suspect_rule`` says in
        words which rule was used, for the report.
    required : sequence of str
        Test families (name before ``[`` or ``:``) without which the battery cannot certify: when
        none of a required family's results is applicable, the verdict is INCONCLUSIVE (a test
        that could not be run), not PASS.

    Returns
    -------
    BatteryOutcome
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    results: list[Result] = []
    errors: list[str] = []
    keys = {}
    for spec in specs:
        key = (group, test_id(spec.name))
        keys[spec.name] = list(key)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))
        try:
            out = spec.func(rng)
        except Exception as exc:  # recorded, never dropped
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            errors.append(f"{spec.name}: {tb}")
            results.append(NotApplicable(spec.name, spec.requirement, 0, f"error while running the test: {tb}"))
            continue
        results.extend(out if isinstance(out, (list, tuple)) else [out])
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
    out = BatteryOutcome(results, adjusted, rejected, raw, errors, verdict, reasons, alpha, seeds={"entropy": str(entropy), "spawn_keys": keys})
    out.suspect_rule = suspect_rule if suspect is not None else ""
    return out


def worst(verdicts: Sequence[str]) -> str:
    """The most severe of several verdicts (FAIL > INCONCLUSIVE > SUSPECT > PASS)."""
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    return max(verdicts, key=lambda v: order[v]) if verdicts else "INCONCLUSIVE"


# ----------------------------------------------------------------------------- power
# The power computations live in rngcert.stats.power (issue 5); these thin wrappers keep the
# signatures the rest of the package uses.
def chisquare_min_detectable_pocket_bias(n: int, k: int, alpha: float = 0.01, power: float = 0.9) -> float:
    """Smallest relative single-pocket excess the pocket chi-square detects with ``power``.

    See :func:`rngcert.stats.power.chisquare_min_detectable_pocket_bias`.
    """
    from rngcert.stats import power as _power

    return _power.chisquare_min_detectable_pocket_bias(n, k, alpha, power)


def chisquare_spins_needed(delta: float, k: int, alpha: float = 0.01, power: float = 0.9) -> int:
    """Spins the pocket chi-square needs to detect a relative single-pocket excess ``delta``.

    See :func:`rngcert.stats.power.chisquare_spins_needed`.
    """
    from rngcert.stats import power as _power

    return _power.chisquare_spins_needed(delta, k, alpha, power)


def power_statement(n: int, k: int, alpha: float, power: float = 0.9, required_bias: float | None = None) -> tuple[dict, list[str]]:
    """Power of the sample for the report, and INCONCLUSIVE reasons when it falls short.

    See :func:`rngcert.stats.power.power_statement`.
    """
    from rngcert.stats import power as _power

    return _power.power_statement(n, k, alpha, power, required_bias)


# ----------------------------------------------------------------------------- wheels
def wheel_specs(
    outcomes: np.ndarray,
    space,
    *,
    release: np.ndarray | None = None,
    dealer: np.ndarray | None = None,
    dealer_labels: Sequence[str] = (),
    direction: np.ndarray | None = None,
    n_resamples: int = 9999,
    alpha: float = 0.01,
) -> list[Spec]:
    """The wheel battery for one table (issue 2; DESIGN §5).

    Parameters
    ----------
    outcomes : (n,) int array
        Outcome ids in ``space`` (wheel positions, or symbols when the arrangement is unknown).
    space : rngcert.equipment.wheel.OutcomeSpace
        Labels, null probabilities, whether ids are positions on a circle, and the outside-bet /
        symbol partitions.
    release, dealer, direction : (n,) int arrays, optional
        Release pocket (-1 unknown), dealer index, direction (0 cw, 1 ccw, -1 unknown).
    n_resamples : int
        Monte Carlo replicates for the tests that need them.
    """
    from rngcert.stats import frequency, runs, sector, serial

    U, I, P = Requirement.UNIFORMITY, Requirement.INDEPENDENCE, Requirement.UNPREDICTABILITY
    x = np.asarray(outcomes)
    m = space.m
    probs = np.asarray(space.probs)
    counts = np.bincount(x, minlength=m)
    R = n_resamples
    specs = [
        Spec("pocket_chisquare", lambda rng: frequency.pocket_chisquare(counts, probs, n_resamples=R, rng=rng), U),
        Spec("g_test", lambda rng: frequency.g_test(counts, probs, n_resamples=R, rng=rng), U),
        Spec("max_count", lambda rng: frequency.max_count(counts, probs, n_resamples=R, rng=rng), U),
        Spec("pocket_binomial_holm", lambda rng: frequency.pocket_binomial(counts, probs, alpha=alpha), U),
    ]
    cats = dict(space.categories)
    for cname, (ids, _names) in cats.items():
        nm = "outside_" + cname if cname != "symbol" else "symbol_frequency"
        specs.append(
            Spec(nm, lambda rng, ids=ids, nm=nm: frequency.category_frequency(counts, ids, probs, name=nm, n_resamples=R, rng=rng), U)
        )
    if space.circular:
        specs.append(Spec("sector_scan", lambda rng: sector.sector_scan(counts, probs, n_resamples=R, rng=rng), U))
        specs.append(Spec("first_harmonic", lambda rng: sector.first_harmonic(counts, probs), U))
    # Independence
    if "colour" in cats:
        col = cats["colour"][0][x]  # 0 red, 1 black, 2 zero
        binary = np.where(col == 2, -1, col)
        specs.append(Spec("runs_colour", lambda rng: runs.runs_test(binary, name="runs_colour"), I))
        seq3 = np.where(col == 2, 0, col + 1)  # 0 zero, 1 red, 2 black
        p_col = np.array([probs[cats["colour"][0] == c].sum() for c in (2, 0, 1)])
        specs.append(Spec("longest_colour_run", lambda rng: runs.longest_run(seq3, p_col, name="longest_colour_run"), I))
        for cname in ("parity", "low_high"):
            b = cats[cname][0][x]
            nm = f"runs_{cname}"
            specs.append(Spec(nm, lambda rng, b=b, nm=nm: runs.runs_test(b, name=nm), I))
        target = cats["colour"][0] == 0
        specs.append(Spec("gap_test", lambda rng: serial.gap_test(x, target, probs=probs, name="gap_test"), I))
    else:
        # money wheels: the most likely symbol against the rest
        sym = cats["symbol"][0] if "symbol" in cats else np.arange(m)
        sym_p = np.bincount(sym, weights=probs)
        top = int(np.argmax(sym_p))
        target = sym == top
        b = target[x].astype(int)
        specs.append(Spec("runs_top_symbol", lambda rng: runs.runs_test(b, name="runs_top_symbol"), I))
        specs.append(Spec("gap_test", lambda rng: serial.gap_test(x, target, probs=probs, name="gap_test"), I))
    pairs = serial.pair_counts(x, m)
    specs.append(Spec("serial_pair", lambda rng: serial.serial_pair(pairs, n_resamples=R, rng=rng, positions=x), I))
    if space.circular:
        specs.append(Spec("serial_correlation", lambda rng: serial.serial_correlation(x, m), I))
        specs.append(Spec("wheel_distance", lambda rng: serial.wheel_distance(x, m, probs=probs), I))
        # Unpredictability: landing offset from the release pocket (or the previous result),
        # per dealer and direction.
        specs.append(
            Spec(
                "dealer_signature",
                lambda rng: _dealer_signature(x, m, release, dealer, dealer_labels, direction, R, rng),
                P,
            )
        )
        specs.append(Spec("out_of_sample_predictor", lambda rng: _predictor(x, m, release, dealer, dealer_labels, direction), P))
    return specs


def signature_groups(x, release, dealer, dealer_labels, direction):
    """Landing positions, their references and the dealer × direction groups of the signature
    tests: the release pocket when the log has it for at least half the spins, else the
    previous result.

    Returns
    -------
    pos, ref : (m,) int arrays
    groups : (m,) int array of group ids
    labels : list of str, one per group
    ref_name : str
    """
    if release is not None and np.mean(release >= 0) >= 0.5:
        ok = release >= 0
        pos, ref, ref_name = x[ok], release[ok], "release pocket"
        d = dealer[ok] if dealer is not None else None
        dr = direction[ok] if direction is not None else None
    else:
        pos, ref, ref_name = x[1:], x[:-1], "previous result"
        d = dealer[1:] if dealer is not None else None
        dr = direction[1:] if direction is not None else None
    g = np.zeros(pos.size, dtype=np.int64)
    labels = ["all spins"]
    if d is not None or dr is not None:
        dd = d if d is not None else np.zeros(pos.size, dtype=np.int64)
        rr = np.where(dr < 0, 2, dr) if dr is not None else np.zeros(pos.size, dtype=np.int64)
        code = dd.astype(np.int32) * 3 + rr  # small non-negative ints: group by counting, not sorting
        used = np.flatnonzero(np.bincount(code))
        lookup = np.zeros(int(code.max()) + 1 if code.size else 1, dtype=np.int32)
        lookup[used] = np.arange(used.size, dtype=np.int32)
        g = lookup[code]
        del code
        dnames = list(dealer_labels) if dealer_labels else ["all dealers"]
        labels = [f"dealer {dnames[c // 3] if d is not None else 'all'}, {('cw', 'ccw', 'direction unknown')[c % 3]}" for c in used]
    return pos, ref, g, labels, ref_name


def _with_reference(res, ref_name):
    if res.applicable:
        det = dict(res.details)
        det["reference"] = ref_name
        res = TestResult(res.name, res.requirement, res.statistic, res.df, res.pvalue, res.n, res.method, det)
    return res


def _dealer_signature(x, k, release, dealer, dealer_labels, direction, R, rng):
    from rngcert.stats import signature

    pos, ref, g, labels, ref_name = signature_groups(x, release, dealer, dealer_labels, direction)
    oc = signature.offset_counts(pos, ref, k, groups=g, n_groups=len(labels))
    return _with_reference(signature.dealer_signature(oc, group_labels=labels, n_resamples=R, rng=rng), ref_name)


def _predictor(x, k, release, dealer, dealer_labels, direction):
    from rngcert.stats import predict

    pos, ref, g, labels, ref_name = signature_groups(x, release, dealer, dealer_labels, direction)
    return _with_reference(predict.out_of_sample_predictor(pos, ref, k, groups=g, group_labels=labels), ref_name)
