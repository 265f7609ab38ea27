"""Raw-output certification of an electronic RNG: m bit streams → SP 800-22 → verdict → report.

Wires :mod:`rngcert.stats.nist` (the 15 tests and the two-level analysis) to the same verdict
machinery and report as the wheel. The verdict policy (DESIGN §4) is applied as follows:

* **m ≥ 2 streams** — the battery's results are the two-level results, two per test name
  (``<name>:uniformity``, the chi-square of the p-value histogram, and ``<name>:proportion``, an
  exact binomial test of the pass count), both against the law of that test's p-value under H0
  at the streams' n (:mod:`rngcert.stats.nist.nulllaw`; case c02: at small n the p-values are
  discrete and SP 800-22's flat expectation fails a perfect generator). FAIL when Holm across all of them rejects at α.
  SUSPECT when more test names fail SP 800-22's own rules (proportion outside
  p̂ ± 3·sqrt(p̂(1−p̂)/m), or uniformity p < 0.0001) than a good generator would fail by chance:
  with 188 names, a fair generator fails one or two of them in most runs, so one flagged name is
  no evidence. Each name's chance of failing under H0 is computed exactly (binomial for the
  proportion, 0.0001 for uniformity); their sum E is the expected count, and the run is SUSPECT
  when P(Poisson(E) ≥ observed) < α.
* **m = 1** — the first-level p-values of the one stream; FAIL by Holm; SUSPECT when the number of
  p-values below α is improbably large for N independent tests (P(Binomial(N, α) ≥ count) < α).
* Either way the verdict is INCONCLUSIVE when a test family (other than the two random-excursion
  tests, which SP 800-22 itself makes conditional on the number of cycles) could not run on any
  sequence, e.g. because n is shorter than the test needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rngcert.battery.core import BatteryOutcome, Spec, run_battery
from rngcert.battery.plain import bits_findings
from rngcert.collect.heap import keep_freed_heap
from rngcert.pipeline import lawcache
from rngcert.pipeline.options import BitsOptions
from rngcert.pipeline.parallel import Plan, map_items
from rngcert.report import cite, plots, schema
from rngcert.seeding import sequence
from rngcert.stats.nist import nulllaw, twolevel
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

# Start-up cost matters for one stream (sts-2.1.2 takes about 2 s for all 15 tests): the figures
# are SVG written by rngcert.report.svg (no matplotlib), and scipy.stats (over 1 s to import) is
# not imported at all; binomial and Poisson tails come from scipy.special.


#: Families that must run for a verdict (random excursions are conditional in SP 800-22 itself).
REQUIRED_FAMILIES = (
    "nist_frequency", "nist_block_frequency", "nist_runs", "nist_longest_run", "nist_rank", "nist_dft",
    "nist_non_overlapping_template", "nist_overlapping_template", "nist_universal", "nist_linear_complexity",
    "nist_serial", "nist_approximate_entropy", "nist_cumulative_sums",
)


def _binom_tail(k, n: int, p: float, *, upper: bool = False) -> float:
    """P(Binomial(n, p) <= k), or with ``upper`` P(Binomial(n, p) > k), for any real k (the lower tail
    is 0 below 0 and 1 from n on; the upper tail its complement there)."""
    k = math.floor(k)
    if k < 0 or k >= n:
        return float((k >= n) != upper)
    return float((special.bdtrc if upper else special.bdtr)(k, n, p))


def _binom_cdf(k, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k) for any real k (0 below 0, 1 from n on)."""
    return _binom_tail(k, n, p)


def _binom_sf(k, n: int, p: float) -> float:
    """P(Binomial(n, p) > k) for any real k (1 below 0, 0 from n on)."""
    return _binom_tail(k, n, p, upper=True)


def _flag_count_rule(summary, alpha: float) -> tuple[list[str], str, float]:
    """Names failing SP 800-22's rules, and whether that count is improbable for a good source."""
    failed = summary.failed
    expected = 0.0
    for r in summary.rows:
        if not r.m:
            continue
        lo, hi = r.interval
        q = r.pass_probability  # P(pass) under H0: 1 - alpha, or from the p-value's discrete law
        p_prop = _binom_cdf(np.ceil(lo * r.m) - 1, r.m, q) + (_binom_sf(np.floor(hi * r.m), r.m, q) if hi < 1 else 0.0)
        p_unif = 1e-4 if r.uniformity_pvalue is not None else 0.0
        expected += 1 - (1 - p_prop) * (1 - p_unif)
    p = float(special.pdtrc(len(failed) - 1, expected)) if failed else 1.0
    text = (
        f"{len(failed)} test name(s) fail SP 800-22's second-level rules, against {expected:.2f} expected for a good "
        f"generator (P = {p:.3g})"
    )
    return failed, text, p


@dataclass
class BitsCertification:
    report: dict
    figures: list[list]
    outcome: BatteryOutcome
    summary: object

    @property
    def verdict(self) -> str:
        return self.report["verdict"]


def _fixed(result):
    return Spec.fixed(result)


@dataclass(frozen=True)
class GeneratedStreams:
    """m streams of n bits from a named bit generator, made where they are tested.

    Stream i is ``generate_bits(name, n, seed=SeedSequence(entropy).spawn(m)[i])``, i.e. the
    same bits as row i of ``generate_bits(name, n, seed=SeedSequence(entropy), streams=m)``; a
    Dask worker makes its own stream from (name, entropy, i), so no bits cross the network.
    """

    name: str
    entropy: int
    m: int
    n: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.m, self.n)

    def stream(self, i: int) -> np.ndarray:
        """Stream ``i`` as an (n,) uint8 array of 0/1."""
        from rngcert.simulate.sources import generate_bits

        return generate_bits(self.name, self.n, seed=sequence(self.entropy, int(i)))


def _stream_item(item) -> list:
    """SP 800-22 on one stream (a Dask work item) → its 188 first-level results.

    ``item`` is ``(kind, payload, n, constants)``: kind ``"bits"`` (payload the (n,) 0/1 array),
    ``"packed"`` (``numpy.packbits`` of it, 8 times smaller for the trip to a worker) or
    ``"generated"`` (payload ``(GeneratedStreams, i)``: the worker makes the stream itself)."""
    from rngcert.battery.bits import run_stream

    keep_freed_heap()  # the tests' temporaries (some MB a stream) reuse the heap, not fresh pages (rngcert.collect.heap)
    kind, payload, n, constants = item
    if kind == "generated":
        gen, i = payload
        bits = gen.stream(i)
    elif kind == "packed":
        bits = np.unpackbits(payload, count=n)
    else:
        bits = payload
    return run_stream(bits, constants=constants)


#: Serial seconds per bit of one stream's SP 800-22 tests (16.8 s for 100 streams of 10**6 bits,
#: README), and of all the exact null laws of one run per 10**6 bits (about 10 s), on the 2-core machine:
#: the estimates by which the default plan decides whether a local cluster pays.
STREAM_BIT_S = 1.7e-7
LAWS_S = 10.0


def _law_key(result, alpha: float) -> tuple:
    key, params = nulllaw.law_params(result.name, result.details)
    return (key, int(result.n), params, float(alpha))


def _law_item(key: tuple):
    """One exact null law, a work item: ``(key, n, params, alpha)`` → :func:`rngcert.pipeline.lawcache.cached_law`."""
    return lawcache.cached_law(*key)


#: Modules a stream's work item imports lazily: imported here before a local pool forks its workers.
_PRELOAD = ("rngcert.battery.bits", "rngcert.simulate.sources", "numpy.fft")


def _import_report_modules() -> None:
    """Import what this process needs after the streams (the report's writer, its sealing, the
    standards: about 0.03 s), while a local pool's workers run the streams."""
    import rngcert.pipeline.standards  # noqa: F401
    import rngcert.report.verify  # noqa: F401
    import rngcert.report.writer  # noqa: F401


def _streams_and_laws(items: list, alpha: float, plan: Plan, progress) -> tuple[list, object]:
    """The first-level results of every stream, then the exact null laws of their p-values that
    are not on disk yet, each a run of work items on the plan's workers.

    The laws depend only on each test, n and its parameters, not on the bits: after a first run
    at this n they are read from the disk cache (:mod:`rngcert.pipeline.lawcache`), and every
    stream runs on the workers (no stream runs here first to name them). The laws the streams name
    that are not on disk (the first run at an n: at n = 10**6 about 5 CPU-s, as much as 40 streams)
    are then computed on the workers, beside each other; the laws are exact, so the report is the
    same either way."""
    per_seq = map_items(_stream_item, items, plan=plan, progress=progress, preload=_PRELOAD, meanwhile=_import_report_modules)
    named = dict.fromkeys(_law_key(r, alpha) for seq in per_seq for r in seq if r.applicable and _has_law(r))
    keys = [k for k in named if not lawcache.is_cached(*k)]  # laws on disk from an earlier run are read, not computed
    laws = dict(zip(keys, map_items(_law_item, keys, plan=plan))) if keys else {}

    def law_of(result, a):
        try:
            return laws[_law_key(result, a)]
        except (KeyError, TypeError, ValueError):
            return lawcache.law_for_result(result, a)

    return per_seq, law_of


def _has_law(result) -> bool:
    if not result.name.startswith("nist_"):
        return False
    try:
        nulllaw.law_params(result.name, result.details)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _stream_items(streams, constants: str, packed: bool) -> list:
    if isinstance(streams, GeneratedStreams):
        return [("generated", (streams, i), streams.n, constants) for i in range(streams.m)]
    n = streams.shape[1]
    if packed:
        return [("packed", np.packbits(row), n, constants) for row in streams]
    return [("bits", row, n, constants) for row in streams]


def bits_verdict(per_seq, summary, *, alpha: float = 0.01, seed_entropy: int | None = None) -> BatteryOutcome:
    """Verdict of an SP 800-22 run from its first-level results and two-level summary.

    Parameters
    ----------
    per_seq : list of m lists of TestResult / NotApplicable
        First-level results per stream (:func:`rngcert.stats.nist.twolevel.run_many`).
    summary : TwoLevelResult or NotApplicable
        :func:`rngcert.stats.nist.twolevel.two_level` of ``per_seq`` (NotApplicable for m = 1).
    alpha : float, default 0.01
        Certification level.
    seed_entropy : int, optional
        Recorded in the outcome.

    Returns
    -------
    BatteryOutcome
        The verdict policy of the module docstring (Holm for FAIL, the flag-count rule for
        SUSPECT, INCONCLUSIVE when a required family never ran).

    Raises
    ------
    ValueError
        From :func:`rngcert.battery.core.run_battery` for an invalid alpha.
    """
    if isinstance(summary, twolevel.TwoLevelResult):
        results = summary.to_test_results()
        failed, text, p_count = _flag_count_rule(summary, alpha)
        suspect = failed if p_count < alpha else []
        rule = (
            "more test names failing SP 800-22's second-level rules (proportion outside p̂ ± 3·sqrt(p̂(1−p̂)/m), "
            "or uniformity below 0.0001) than a good generator fails by chance (Poisson, at alpha); here " + text
        )
    else:
        results = per_seq[0]
        app = [r for r in results if r.applicable]
        low = [r.name for r in app if r.pvalue < alpha]
        p_count = _binom_sf(len(low) - 1, len(app), alpha) if low else 1.0
        suspect = low if p_count < alpha else []
        rule = (
            f"more p-values below alpha than {len(app)} independent tests give by chance; here {len(low)} "
            f"against {alpha * len(app):.1f} expected (P = {p_count:.3g})"
        )
    return run_battery(
        [_fixed(r) for r in results], entropy=seed_entropy or 0, alpha=alpha, suspect=suspect, suspect_rule=rule,
        required=REQUIRED_FAMILIES,
    )


def _unused_tail(source: dict, m: int, n: int) -> list[str]:
    """A note when a dump holds bits beyond the m streams of n bits tested (never silently dropped)."""
    total = source.get("bits_in_file")
    if not total or total <= m * n:
        return []
    rest = int(total) - m * n
    whole, partial = divmod(int(total), n)
    why = []
    if whole > m:  # --streams asked for fewer than the file holds
        why.append(f"--streams {m} of the {whole:,} whole streams of {n:,} bits the file holds; give --streams {whole} to test them all")
    if partial:
        why.append(f"{partial:,} bit(s) after the last whole stream: {total:,} in the file is not a multiple of --length {n:,}")
    return [f"{rest:,} bit(s) of the file after the {m} stream(s) of {n:,} bits were not tested ({'; '.join(why)})"]


# long: numpydoc a fifth; then one pass: plan, streams and laws, two-level analysis, verdict, report
def certify_streams(
    streams: "np.ndarray | GeneratedStreams",
    *,
    source: dict,
    processes: int | None = None,
    rerun: dict | None = None,
    options: BitsOptions | None = None,
    **keywords,
) -> BitsCertification:
    """Run SP 800-22 on ``streams`` (m, n) of 0/1 and build the report.

    Parameters
    ----------
    streams : (m, n) ndarray of uint8, or GeneratedStreams
        m bit streams of n bits each (not modified), or the name and seed of a bit generator
        whose streams are made by the workers that test them.
    source : dict
        Provenance: ``{"path", "sha256", "format", "bit_order", ...}`` for a dump, or
        ``{"generator", "seed_entropy", ...}`` for a named bit generator.
    processes : int, optional
        Older name of ``plan=Plan(workers=processes)`` (kept for callers of the library).
    rerun : dict, optional
        What ``rngcert verify --rerun`` needs to regenerate or re-read the streams (recorded).
    options : BitsOptions, optional
        The certification's options as one object (:class:`rngcert.pipeline.options.BitsOptions`,
        what ``rngcert bits`` builds); keywords given beside it replace its fields.
    **keywords
        The fields of :class:`~rngcert.pipeline.options.BitsOptions`: ``alpha``, ``constants``,
        ``null_law`` (see :func:`rngcert.stats.nist.twolevel.two_level`), ``command``, ``figures``,
        ``seed_entropy``, ``plan`` (where the m streams run, see :mod:`rngcert.pipeline.parallel`;
        the first-level results are collected in stream order and the two-level analysis runs
        here, so the report does not depend on where the streams ran) and ``progress``.
    """
    o = BitsOptions.of(options, where="certify_streams", **keywords)
    alpha, constants, null_law, command, figures = o.alpha, o.constants, o.null_law, o.command, o.figures
    seed_entropy, plan, progress = o.seed_entropy, o.plan, o.progress
    m, n = streams.shape
    if plan is None:
        plan = Plan(workers=processes or 1)
    # the default plan: a cluster only where it pays (the streams' cost, and the exact laws' at this n)
    costs = [STREAM_BIT_S * n] * m + ([LAWS_S * n / 1e6] if null_law == "exact" else [])
    if not plan.runs_parallel(m, costs):
        plan = Plan(workers=1)
    items = _stream_items(streams, constants, packed=not plan.serial and m > 1)
    finished = [0]

    def done(i, res):
        finished[0] += 1
        progress(finished[0], m)

    # the exact laws through the disk cache (rngcert.pipeline.lawcache): computed once per (test, n)
    law_of: "str | object" = lawcache.law_for_result if null_law == "exact" else null_law
    if null_law == "exact" and m > 1 and not plan.serial:
        per_seq, law_of = _streams_and_laws(items, alpha, plan, done if progress else None)
    else:
        per_seq = map_items(_stream_item, items, plan=plan, progress=done if progress else None)
    del items
    summary = twolevel.two_level(per_seq, alpha=alpha, null_law=law_of)
    out = bits_verdict(per_seq, summary, alpha=alpha, seed_entropy=seed_entropy)
    bd = out.to_dict()
    section = {
        "table": f"{m} stream(s) × {n:,} bits",
        "n": int(m),
        "void": 0,
        "notes": [f"constants: {constants} ({'sts-2.1.2, reproduces Appendix B' if constants == 'reference' else 'corrected after publication'})"]
        + _unused_tail(source, m, n),
        "labels": [],
        "min_holm": min(out.adjusted.values()) if out.adjusted else None,
        "battery": bd,
    }
    if isinstance(summary, twolevel.TwoLevelResult):
        section["two_level"] = summary.to_dict()
        tested = [r for r in summary.rows if r.m]
        # a standard's second-level clause is judged only where the analysis ran, and says where the uniformity rule did not
        bd["second_level"] = {"applicable": True, "names": len(tested),
                              "uniformity_checked": sum(r.uniformity_pvalue is not None for r in tested)}
        kinds = sorted({k for r in summary.rows if r.m for k in r.law_kind.split("+") if k})
        section["notes"].append(
            "two-level analysis: expected bin counts and pass probabilities from the law of each test's p-value "
            f"under H0 at this n ({', '.join(kinds)}; per name in the details), not SP 800-22's flat 1/10 and "
            "1 - alpha, which fail a perfect generator when the p-values are discrete" if null_law == "exact" else
            "two-level analysis: SP 800-22 as published (every p-value taken as continuous and uniform)")
        section["notes"].append(twolevel.proportion_rule_text(m, alpha))
        section["notes"].append("per-stream p-values: two_level.rows[*].pvalues in report.json, in stream order (null where a test did not apply)")
    else:
        section["notes"].append(f"two-level analysis not applicable: {summary.reason}")
        bd["second_level"] = {"applicable": False, "reason": str(summary.reason)}  # the standard's clause says so (issue 24)
    ones, nbits = _ones(per_seq)
    needed = _length_needed(per_seq, n)
    if needed:
        section["length_needed"] = needed
    section["key_findings"], section["next_steps"] = bits_findings(section, ones=ones, bits=nbits)
    figs = [_figures(per_seq, summary, out)] if figures else [[]]
    src_line = (
        f"bit generator {source.get('generator')} (seed entropy {source.get('seed_entropy')})"
        if "generator" in source
        else f"raw dump {source.get('path')} ({source.get('format')}, bit order {source.get('bit_order') or 'n/a'})"
    )
    inputs = []
    if "path" in source:
        inputs.append(
            {
                "path": source["path"],
                "sha256": source.get("sha256", ""),
                "format": source.get("format", ""),
                "summary": f"{source.get('bits_in_file', 0):,} bits in the file; {m} stream(s) of {n:,} bits used ({m * n:,} bits), bit order {source.get('bit_order') or 'n/a'}",
            }
        )
    else:
        inputs.append({"path": f"generator:{source.get('generator')}", "sha256": "", "format": "bit generator", "summary": f"{m} stream(s) of {n:,} bits from SeedSequence({source.get('seed_entropy')}).spawn({m})"})
    report = schema.header(
        subject=f"electronic RNG raw output — {src_line}",
        command=command,
        inputs=inputs,
        rejected_count=0,
        equipment={"id": "bits", "name": "electronic RNG, raw output", "kind": "rng", "source": source},
        equipment_line=f"{src_line}; NIST SP 800-22 rev1a, 15 tests with its default parameters",
        rules=[f"{cite.SP800_22}: the 15 tests of section 2 with their default parameters, and the two-level analysis of section 4.2"],
        declared={"certification level alpha": alpha, "streams m": m, "bits per stream n": f"{n:,}", "constants": constants},
        unit="streams",
        section_word="Battery",
        level="bits",
        policy=schema.policy(alpha, "holm (over every applicable p-value of the battery)", cite.bits_requirement()),
        seed={"entropy": str(source.get("seed_entropy", "n/a")), "how": "bit generator seed" if "generator" in source else "not used (a dump)", "n_resamples": 0},
        notes=[],
        **({"rerun": dict(rerun)} if rerun else {}),
    )
    report["tables"] = [section]
    report["verdict"] = out.verdict
    return BitsCertification(report, figs, out, summary)


def _length_needed(per_seq, n: int) -> int | None:
    """The stream length every required family needs (the largest minimum of those that ran on no sequence), when it
    is above n; else None. The INCONCLUSIVE next step names it (it said "a dump long enough for every test")."""
    from rngcert.stats.nist import MIN_LENGTH

    ran = {r.name.partition("[")[0] for seq in per_seq for r in seq if r.applicable}
    need = max((MIN_LENGTH.get(f.removeprefix("nist_"), 0) for f in REQUIRED_FAMILIES if f not in ran), default=0)
    return need if need > n else None


def _ones(per_seq) -> tuple[int | None, int | None]:
    """Ones and bits over every sequence, from the monobit results' details (None when none ran)."""
    ones = bits = 0
    for seq in per_seq:
        for r in seq:
            if r.name == "nist_frequency" and r.applicable and "ones" in r.details:
                ones += int(r.details["ones"])
                bits += int(r.n)
                break
    return (ones, bits) if bits else (None, None)


def _figures(per_seq, summary, out):

    figs = []
    if isinstance(summary, twolevel.TwoLevelResult):
        figs.append(plots.nist_histograms(summary.to_dict()))
        figs.append(plots.nist_proportions(summary.to_dict()))
    # no chart of every p-value: the report's table lists them all (a chart of 188 names cannot be read)
    return figs
