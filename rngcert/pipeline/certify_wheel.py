"""Wheel certification end to end: log → per-table battery → verdict → report data.

This module wires the layers together for ``rngcert certify``; it holds no statistics and does
no terminal I/O (the CLI prints). It returns the report dictionary and the figures so that tests
and the store can use the same path as the command.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from rngcert.battery.core import BatteryOutcome, decide, worst
from rngcert.battery.findings import order_findings, table_findings
from rngcert.battery.followup import family_line, followup, parse_tests
from rngcert.battery.power import declared_pct, standard_levels, verdict_power_statement
from rngcert.battery.standard import DEFAULT, StandardError
from rngcert.battery.uniform import too_uniform
from rngcert.battery.wheel import WHEEL, WheelData, calibration_line, run_fingerprint
from rngcert.collect.heap import keep_freed_heap
from rngcert.collect.spinlog import SpinLog, read_spin_log
from rngcert.equipment.paytables import paytables_for_wheel
from rngcert.equipment.wheel import Wheel, load_wheel
from rngcert.errors import InputError
from rngcert.pipeline import checks
from rngcert.pipeline.options import CertifyOptions
from rngcert.pipeline.parallel import Plan, map_items, table_cost
from rngcert.pipeline.standards import apply_standard, resolve
from rngcert.report import cite, schema
from rngcert.seeding import root, stream
from rngcert.stats.exploit import exploitability, power_and_exploitability
from rngcert.stats.integrity import duplicated_blocks
from rngcert.stats.result import jsonable
from rngcert.stats.tally import SpinTally


def _declared(*, alpha, required_bias, power, n_resamples, max_rejected_share, source="--min-bias", unit="pocket") -> dict:
    """The lab-declared parameters of a wheel certification, as page one states them."""
    return {
        "certification level alpha": alpha,
        "declared minimum bias": "none declared" if required_bias is None else f"{declared_pct(required_bias)} on one {unit} ({source})",
        "power for the power statement": f"{power:.0%}",
        "Monte Carlo replicates": n_resamples,
        "largest unreadable share": f"{max_rejected_share:.0%}",
    }


@dataclass
class Certification:
    """The result of :func:`certify_log`."""

    report: dict
    figures: list[list]  # of rngcert.report.plots.Figure
    log: SpinLog
    outcomes: list[BatteryOutcome]

    @property
    def verdict(self) -> str:
        return self.report["verdict"]

    def write(self, outdir="reports", *, pdf: bool = False, sign_key=None) -> dict:
        """Write the report folder as ``rngcert certify`` does; returns the paths written."""
        from rngcert.report.writer import report_dir, write_report

        return write_report(self.report, self.figures, self.log.rejected, report_dir(outdir, self.log.wheel.id), pdf=pdf, sign_key=sign_key)

    def _repr_html_(self) -> str:
        """Page one and the summary of the report, for Jupyter."""
        from rngcert.report.writer import summary_html

        return summary_html(self.report)

    def __repr__(self) -> str:
        t = self.report["tables"]
        return f"<Certification {self.report['subject']}: {self.verdict}, {len(t)} table(s), {sum(x['n'] for x in t)} spins>"


def certify_log(
    paths: Sequence[str | Path],
    wheel: Wheel | str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    pool: bool = False,
    min_round_interval: float = 5.0,
    round_interval_declared: bool = False,
    names: Sequence[str] | None = None,
    options: CertifyOptions | None = None,
    **keywords,
) -> Certification:
    """Read ``paths`` for ``wheel`` and certify each table.

    Parameters
    ----------
    paths : sequence of path
        Spin logs (CSV, JSON Lines or permanence lists).
    wheel : Wheel, str or Path
        Equipment definition: a loaded :class:`~rngcert.equipment.wheel.Wheel`, a packaged wheel
        id (``"european"``, as ``--equipment`` and :func:`rngcert.certify_outcomes` take it) or a
        wheel TOML path.
    columns, fmt, pool
        Passed to :func:`rngcert.collect.spinlog.read_spin_log`.
    min_round_interval : float
        Seconds; rows of a table with the same result closer in time than this are one round
        logged twice (counted once, reported as a data-integrity finding; 0: no check). The
        default, 5 s, is far below any real round (a roulette spin or a live money-wheel round
        lasts 20 s or more) and far above a scraper's double read (under a second apart).
    round_interval_declared : bool
        ``min_round_interval`` was declared by the user (``--min-round-interval``): a log without
        timestamps, where it cannot apply, is then an input error instead of a check silently skipped.
    names : sequence of str, optional
        The paths the files' tables are named by, one per path (:func:`rngcert.collect.spinlog.read_spin_log`);
        ``verify --rerun`` gives the paths the report recorded.
    options : CertifyOptions, optional
        The certification's options as one object (:class:`rngcert.pipeline.options.CertifyOptions`,
        what ``rngcert certify`` builds); keywords given beside it replace its fields.
    **keywords
        The fields of :class:`~rngcert.pipeline.options.CertifyOptions` (documented there), as
        keywords: ``alpha`` (certification level, 0.01), ``seed`` (root seed; fresh OS entropy,
        recorded, when None), ``n_resamples``, ``required_bias`` (a sample too small to detect it with
        ``power`` makes the verdict INCONCLUSIVE; None: the standard's minimum effect), ``power``,
        ``command``, ``figures``, ``progress`` (``progress(spins_done, spins_total, label)`` as each
        table finishes), ``notes``, ``max_rejected_share`` (above it every verdict is INCONCLUSIVE: a
        wrong ``--equipment`` or ``--column`` can leave a readable remainder that is not the wheel's
        results), ``plan`` (where the tables run; the report is the same, bit for bit, wherever they
        run), ``standard`` (a packaged id or a TOML path; None: ``rngcert-default``) and ``tests``
        (a follow-up on these tests of the battery; the correction's family is these tests).
    """
    opts = CertifyOptions.of(options, where="certify_log", **keywords)
    wheel = wheel if isinstance(wheel, Wheel) else _wheel_of(wheel)
    log = read_spin_log(paths, wheel, columns=columns, fmt=fmt, pool=pool, min_round_interval=min_round_interval, names=names)
    if round_interval_declared and min_round_interval > 0 and log.period is None:
        raise InputError(f"{', '.join(map(str, paths))}: --min-round-interval {min_round_interval:g}s finds a round logged twice by the time "
                         "of its rows, and the log has no timestamps (no timestamp column, or none readable; map one with "
                         "--column timestamp=NAME): nothing would be checked; leave --min-round-interval out (or give 0)")
    cert = certify_spins(log, options=opts)
    # what `rngcert verify --rerun` needs to recompute every statistic from the same logs
    cert.report["rerun"] = {
        "pipeline": "certify_wheel",
        "equipment": wheel.path if wheel.path and not _packaged(wheel) else wheel.id,
        "columns": dict(columns or {}),
        "aliases": dict(wheel.aliases),
        "fmt": fmt,
        "pool": pool,
        "alpha": opts.alpha,
        "seed": int(cert.report["seed"]["entropy"]),
        "n_resamples": opts.n_resamples,
        "required_bias": opts.required_bias,
        "power": opts.power,
        "max_rejected_share": opts.max_rejected_share,
        "standard": cert.report["standard"]["id"] if cert.report["standard"]["packaged"] else cert.report["standard"]["source"],
        "min_round_interval": min_round_interval,
    }
    if opts.tests is not None:  # a follow-up is rerun as the same follow-up
        cert.report["rerun"]["tests"] = list(cert.report["follow_up"]["tests"])
    return cert


#: Largest table whose battery runs on several threads. Tests on threads hold their temporaries at
#: once (several bytes a spin each); above this, one thread keeps the 100 M-spin certify in its
#: memory target (issue 11: 1.5 GB). At 10 M spins the peak was the same either way (380 MB).
THREADED_MAX_SPINS = 20_000_000


def _wheel_of(spec) -> Wheel:
    """A wheel id or TOML path loaded (``certify_log(paths, "european")`` raised AttributeError: 'str' object has no
    attribute 'k'); anything else is a TypeError naming the argument."""
    if isinstance(spec, (str, Path)):
        return load_wheel(spec)
    raise TypeError(f"certify_log(): wheel must be a Wheel, a packaged wheel id or a TOML path, got {spec!r} ({type(spec).__name__})")


def _packaged(wheel: Wheel) -> bool:
    """Whether ``wheel`` is one of the packaged definitions (found again by its id)."""
    return str(wheel.path).startswith("rngcert/equipment/data/")


def _check_possible_bias(bias: float, wheel, std) -> None:
    """Refuse a standard's minimum single-pocket bias that no outcome of ``wheel`` can have (it would come up on more than
    every spin): the power gate of a PASS would be met by any sample."""
    top = float(wheel.k - 1)  # one of k equally likely pockets (sections) coming up on every spin
    if bias >= top:
        raise StandardError(f"{std.path or std.id}: key 'minimum_effect.wheel_single_pocket_bias': {declared_pct(bias)} is more than any "
                            f"outcome of the {wheel.id} wheel can be biased ({declared_pct(top)}: it would come up on every spin), so no "
                            "sample could fail to detect it and the power a PASS needs would be met by any sample")


#: Peak bytes of a table's certification per cell of its (m, m) table of consecutive pairs (int64, in about 16 arrays at
#: once: the tally, its merges, the pair-based tests; measured: 2.1 GB at m = 4,000, 7.8 GB at m = 8,000).
PAIR_TABLE_PEAK_BYTES_PER_CELL = 128


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_pair_table_memory(m: int, wheel_id: str) -> None:
    """Refuse, before any work, a wheel whose dense (m, m) pair table cannot fit in this machine's memory: a 32,767-pocket
    lab wheel grew past 24 GB and was killed by the kernel (exit 137, nothing said), where a run that does not fit must
    stop with "not enough memory" (exit 3). Raises :class:`MemoryError` with the sizes."""
    need, have = PAIR_TABLE_PEAK_BYTES_PER_CELL * m * m, _available_memory()
    if have is not None and need > have:
        raise MemoryError(f"wheel {wheel_id}: {m:,} outcomes need a {m:,} x {m:,} table of consecutive pairs, about "
                          f"{need / 2**30:.1f} GiB at peak; {have / 2**30:.1f} GiB is available")


# long: one linear pass (standard, log-level reasons, tables as work items, report header); each table's work is _certify_table
def certify_spins(log: SpinLog, *, options: CertifyOptions | None = None, kind: str = "certification", **keywords) -> Certification:
    """Certify every table of an already-read :class:`~rngcert.collect.spinlog.SpinLog`
    (the path ``certify`` and store audits share). ``options`` and ``keywords`` as in
    :func:`certify_log`; ``kind`` is ``"audit"`` for store audits (the report's title)."""
    opts = CertifyOptions.of(options, where="certify_spins", **keywords)
    check_pair_table_memory(log.space.m, log.wheel.id)
    alpha, seed, n_resamples, power, notes = opts.alpha, opts.seed, opts.n_resamples, opts.power, opts.notes
    required_bias, standard, progress, plan, figures = opts.required_bias, opts.standard, opts.progress, opts.plan, opts.figures
    wheel = log.wheel
    std = resolve(standard)
    std.check_applies("wheel", "certify")
    suspect_level = std.suspect_level(alpha)  # refuses a SUSPECT level that is not looser than alpha
    if power is None:  # the standard's declared power, as for shoes (strictest over the clauses for wheels)
        power = std.power("wheel")
        opts = opts.replace(power=power)
    bias_source = "--min-bias"
    if required_bias is None and std.wheel_min_bias() is not None:
        required_bias, bias_source = std.wheel_min_bias(), f"standard {std.id}"
        _check_possible_bias(required_bias, wheel, std)
    elif required_bias is None:  # PASS needs power under every standard (DESIGN §4): a lab's file that declares none gets the default's
        required_bias = resolve(DEFAULT).wheel_min_bias()
        bias_source = f"{DEFAULT}'s: standard {std.id} declares none"
    edge_levels = sorted({c.level_of(alpha, suspect_level) for c in std.clauses_for("wheel") if "exploitability" in c.tests})
    # the largest level any decision on the battery's p-values is taken at: the scans' Monte Carlo p-values stop
    # early above it (Besag & Clifford), and every verdict and clause result is that of the full R replicates
    decision_level = max([alpha, suspect_level] + [c.level_of(alpha, suspect_level) for c in std.clauses_for("wheel")])
    tests = _chosen_tests(opts.tests, log)
    ss = root(seed)
    log_reasons, per_table_reasons = checks.unreadable_reasons(log, opts.max_rejected_share)
    hint = checks.other_wheel_hint(log) if log_reasons else None
    if hint:
        log_reasons.insert(0, hint)  # the cause first: the unreadable share follows from it
    else:  # rejected labels that concentrate on a few values, or spell a pocket never seen: never a FAIL (c16); the cause first
        labels = checks.label_reasons(log)
        # `00` of an American list: not `--alias 00=0`; a European list as American: '00' never came up, not a FAIL
        hint = checks.other_wheel_hint(log, labels_flagged=True) if labels else checks.missing_pockets_hint(log)
        log_reasons[:0] = [hint] if hint else labels
    log_reasons += checks.rejected_counter_reasons(log)  # a numbering past the largest pocket: rejected, and read below it
    entropy = int(ss.entropy)
    members = _battery(tests).members(WheelData(np.zeros(0, dtype=np.int16), log.space))
    W = sum(s.weight for s in members)
    first = alpha * min(s.weight for s in members) / W
    floor = 1.0 / (n_resamples + 1)
    if floor >= first:
        notes = list(notes) + [
            f"with {n_resamples} Monte Carlo replicates the smallest Monte Carlo p-value is {floor:.2g}, "
            f"not below the first threshold of weighted Holm, {first:.2g}: a Monte Carlo test alone "
            f"may not make the verdict FAIL; use --resamples {int(np.ceil(2 / first))} or more"
        ]
    # tables are independent work items (serial, or on Dask: see rngcert.pipeline.parallel); each
    # item carries one table's compact arrays, never the whole log
    names = list(log.tables)
    plan = plan or Plan(workers=1)
    # a single table's tests on threads, where their temporaries at once stay small beside the log
    threads = plan.item_threads(len(names)) if sum(t.n for t in log.tables.values()) <= THREADED_MAX_SPINS else 1
    # what a table's work item needs of the options (no progress callback, plan or standard: they stay here)
    table_opts = CertifyOptions(alpha=alpha, n_resamples=n_resamples, power=power, required_bias=required_bias, tests=tests)
    # the power of the verdict is the standard's: its clauses with their levels at this alpha (battery/power.py)
    power_rule = (std.id, tuple((c, c.level_of(alpha, suspect_level)) for c in std.clauses_for("wheel")))
    kw = dict(options=table_opts, entropy=entropy, threads=threads, other_wheel=hint, suspect_level=suspect_level, edge_levels=tuple(edge_levels),
              decision_level=decision_level, power_rule=power_rule)
    if tests is not None:
        notes = [family_line(tests)] + list(notes)
    items = [(name, _table_log(log, name), dict(kw, extra_reasons=log_reasons + per_table_reasons.get(name, [])), figures) for name in names]
    total = sum(t.n for t in log.tables.values()) or 1
    finished = [0]

    def done(i, res):
        if progress:
            name = names[i]
            finished[0] += log.tables[name].n
            progress(finished[0], total, f"table {name}: {res[0].verdict}")

    if progress:
        progress(0, total, f"{len(names)} table(s)")
    costs = [table_cost(log.tables[name].n) for name in names]
    # on a local pool this process imports the report's writer while the workers run the tables, not after them
    results = map_items(_table_item, items, plan=plan, progress=done, preload=_PRELOAD + (("rngcert.report.plots",) if figures else ()),
                        costs=costs, largest_first=True, meanwhile=_import_writer if plan.runs_parallel(len(items), costs) else None)
    outcomes = [r[0] for r in results]
    table_reports = [r[1] for r in results]
    figs = [r[2] for r in results]
    del items, results
    verdict = worst([o.verdict for o in outcomes])
    if len(outcomes) > 1:
        m = len(outcomes)
        # a table's chance of a false FAIL under the standard: alpha under rngcert-default, more under per-test clauses
        # (West Virginia: six tests each at 0.01), as audit --all's group statement says
        bound = max(std.false_fail_bound("wheel", alpha, list(o.weights)) for o in outcomes)
        each = (f"each table's verdict controls its own family-wise error at alpha = {alpha}" if bound == alpha else
                f"under standard {std.id} a fair table's verdict is FAIL with probability up to {bound:g} (the levels of its FAIL "
                f"clauses summed over their tests)")
        notes = list(notes) + [
            f"{m} tables certified separately: {each}; "
            f"the overall verdict is the worst of them, so with {m} fair tables the chance that at least one is FAIL "
            f"is up to {1 - (1 - bound) ** m:.0%}. Judge each table on its own line."
        ]
    report = schema.header(
        kind=kind,
        subject=wheel.name,
        command=opts.command,
        inputs=[
            {
                **s.to_dict(),
                "summary": f"{s.rows} rows: {s.accepted} accepted, {s.void} void (excluded), {s.rejected} rejected"
                + (f" ({s.duplicates - s.near_duplicates} of them exact duplicates of earlier rows, counted once)" if s.duplicates > s.near_duplicates else "")
                + (f" ({s.near_duplicates} of them near-duplicate rounds, counted once)" if s.near_duplicates else "")
                + (f" ({s.second_source} of them a second result source's readings, compared with the wheel's)" if s.second_source else "")
                + (f"; {s.blank_lines} blank lines" if s.blank_lines else ""),
            }
            for s in log.sources
        ],
        rows={"accepted": log.accepted, "void": log.void, "rejected": len(log.rejected)},
        rejected_count=len(log.rejected),
        rejected_sample=[r.to_dict() for r in log.rejected[:10]],
        equipment=wheel.describe(),
        equipment_line=(
            f"{wheel.name} ({wheel.id}, {wheel.k} {'pockets' if wheel.kind == 'roulette' else 'sections'}); "
            f"tested at the level of {log.level}s"
        ),
        rules=cite.wheel_rules(wheel.kind, wheel.id),
        declared=_declared(alpha=alpha, required_bias=required_bias, power=power, n_resamples=n_resamples, max_rejected_share=opts.max_rejected_share,
                           source=bias_source, unit="pocket" if wheel.kind == "roulette" else "section"),
        unit="spins",
        section_word="Table",
        level=log.level,
        period=_period(log.period),
        policy=dict(
            schema.policy(alpha, "weighted Holm (per table, over all applicable tests; weights in each test's holm_weight)" if tests is None else
                          f"weighted Holm (per table, over the {len(tests)} chosen tests of this follow-up; weights in each test's holm_weight)",
                          cite.wheel_requirement(wheel.kind, wheel.id)),
            suspect_level=suspect_level, integrity=checks.INTEGRITY_RULE, min_spins_per_outcome=checks.MIN_PER_OUTCOME,
        ),
        seed={"entropy": str(entropy), "how": "given with --seed" if seed is not None else "fresh OS entropy, recorded here", "n_resamples": n_resamples},
        notes=list(dict.fromkeys(list(notes) + list(log.notes))),  # a note given twice is printed once
    )
    if tests is not None:
        report["follow_up"] = {"tests": list(tests), "family_size": len(tests), "statement": family_line(tests)}
    report["tables"] = table_reports
    report["verdict"] = verdict
    # the SUSPECT rule at this run's level (derived from alpha by the standard, always looser than alpha)
    report["policy"]["verdicts"]["SUSPECT"] = (
        f"no rejection at alpha = {alpha:g}, but a rejection at the looser family-wise level {suspect_level:g} ({std.suspect_rule} of "
        f"standard {std.id}): at most {suspect_level:.0%} of fair sources are SUSPECT or FAIL; re-test with more data")
    apply_standard(report, std, kind="wheel", alpha=alpha)
    for o, t in zip(outcomes, table_reports):
        o.verdict = t["battery"]["verdict"]
    return Certification(report, figs, log, outcomes)


def _battery(tests: Sequence[str] | None):
    """The wheel battery, or its follow-up on the chosen ``tests``."""
    return WHEEL if tests is None else followup(WHEEL, tests)


def _chosen_tests(tests: Sequence[str] | None, log: SpinLog) -> tuple[str, ...] | None:
    """The follow-up's test names, checked against the battery of this log's wheel: a name
    outside the battery, or of a test this wheel's battery does not hold (e.g. ``symbol_frequency``
    on a roulette wheel), is an input error naming the tests that can be chosen."""
    if tests is None:
        return None
    names = parse_tests(list(tests), WHEEL)
    own = [s.name for s in WHEEL.members(WheelData(np.zeros(0, dtype=np.int16), log.space))]
    other = [n for n in names if n not in own]
    if other:
        raise InputError(f"--tests: {', '.join(other)} not in the battery of the {log.wheel.id} wheel "
                         f"(at the level of {log.level}s); its tests are: {', '.join(own)}")
    return names


def _period(span: tuple[int, int] | None) -> dict | None:
    """The report's ``period``: first and last timestamp of the spins (ISO 8601, UTC), or None."""
    if span is None:
        return None
    import datetime as dt

    iso = lambda us: (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(us))).isoformat()  # noqa: E731 (exact, no float)
    return {"first": iso(span[0]), "last": iso(span[1])}


#: What a table's work item imports beyond this module (imported before workers are forked).
_PRELOAD = ("rngcert.pipeline.rage", "numpy.fft", "numpy.ma")


def _import_writer() -> None:
    """Import the report's writer (jinja2, the report's modules: about 0.03 s), as ``rngcert certify`` does after the tables."""
    import rngcert.report.writer  # noqa: F401


def _table_log(log: SpinLog, name: str) -> SpinLog:
    """The work item of one table: the log with only this table's arrays (same wheel, level,
    space, sources and notes; no rejected rows: the log-level reasons derived from them are
    passed to :func:`_certify_table` as ``extra_reasons``)."""
    return SpinLog(log.wheel, log.level, log.space, {name: log.tables[name]}, list(log.sources), [], list(log.notes))


def _table_item(item) -> tuple[BatteryOutcome, dict, list]:
    """Certify one table (a Dask work item): ``(name, one-table log, keywords, figures?)`` →
    (battery outcome, the table's report section, its figures)."""
    name, one, kw, figures = item
    t = one.tables[name]
    keep_freed_heap()  # (a Dask worker, or a store audit, read no file here: its spans' temporaries reuse the heap too)
    # the line-start comparison and the tally are made once, for the battery and the figures
    line_starts = checks.line_start_evidence(t, one.space) if t.n >= 2 else None
    tally = chunked_tally(t.outcomes, one.space)
    out, report = _certify_table(name, t, one, line_starts=line_starts, tally=tally, **kw)
    if not figures:
        return out, report, []
    # the figures show the data their tests used: the pairs across a transcribed list's line starts that the
    # pair-based tests excluded are left out of the wheel-distance figure too
    return out, report, wheel_figures(t.outcomes, one.space, out, pair_mask=checks.pair_mask_of(line_starts), tally=tally)


def procedure_check(t) -> tuple[dict | None, str | None]:
    """The rule checks over every spin of one table (not statistical tests: no p-value, DESIGN §4).

    Today one: the ball spun against the rotor (003 rule 3.6; 004 §4 rule 3.1.1), where the log records
    both directions (:func:`rngcert.stats.rotor.ball_against_wheel`).

    Parameters
    ----------
    t : TableSpins

    Returns
    -------
    record, reason : dict or None, str or None
        ``record``: the check as the report carries it (``name``, ``rule``, ``known``, ``violations``,
        ``first_spins`` as 1-based spin numbers in spin order), None when the log has no ball direction.
        ``reason``: when some spin breaks the rule, the INCONCLUSIVE reason that says how many, which
        and under which rule (such a spin is not a valid spin under 004, so a verdict on the wheel cannot
        stand on a log that mixes them with valid spins); else None.
    """
    from rngcert.stats.rotor import ball_against_wheel

    if t.direction is None or t.ball_direction is None:
        return None, None
    rc = ball_against_wheel(t.direction, t.ball_direction)
    rec = rc.to_dict()
    rec["first_spins"] = [i + 1 for i in rc.first]
    if not rc.broken:
        return rec, None
    first = ", ".join(f"{i:,}" for i in rec["first_spins"]) + (" …" if rc.violations > len(rc.first) else "")
    why = (f"procedure: the ball was spun the same way as the rotor in {rc.violations:,} of {rc.known:,} spins (spin no. {first}, "
           f"counted in spin order), against 003 rule 3.6 and 004 §4 rule 3.1.1 (under 004 such a spin is not a valid spin): a "
           f"rule check, not a chance event; the log mixes valid and invalid spins, so no verdict on the wheel stands on it: correct "
           f"the procedure, or record those spins as void, then certify again")
    return rec, why


# long: a table's verdict in the order of precedence (reasons, battery, integrity, power, calibration, findings); power and the practical edge are _table_power and _practical_edges
def _certify_table(name, t, log: SpinLog, *, options: CertifyOptions, entropy, extra_reasons, threads=1,
                   other_wheel: str | None = None, suspect_level: float = 0.05, edge_levels: tuple = (),
                   line_starts: dict | None | bool = False, tally: SpinTally | None = None,
                   decision_level: float | None = None, power_rule: tuple | None = None) -> tuple[BatteryOutcome, dict]:
    """Integrity checks, battery, power of the verdict, exploitability and findings of one table.

    Its random streams are keyed by the table's name, so a table gets the same Monte Carlo
    p-values whether it is certified alone, within a multi-table log, or audited from the store.
    Precedence (DESIGN §4): the reasons why the data cannot carry a verdict (``extra_reasons``,
    too few spins, a large data-integrity artefact, too little power for ``--min-bias``) make the
    verdict INCONCLUSIVE whatever the tests say. With ``other_wheel`` (the reason saying that the
    labels are another wheel's: :func:`rngcert.pipeline.checks.other_wheel_hint`) the tests ran on
    the wrong wheel: no finding of theirs and no exploitability claim is stated, only the reasons.
    ``options`` gives ``alpha``, ``n_resamples``, ``power``, ``required_bias`` (already the standard's
    when none was declared) and ``tests`` (checked against the battery).
    ``line_starts`` (:func:`rngcert.pipeline.checks.line_start_evidence`) and ``tally`` (:func:`chunked_tally`)
    may be given when already made; by default they are made here. ``decision_level`` (the largest level a
    decision is taken at) lets the scans' Monte Carlo p-values stop early (:func:`rngcert.battery.core.sequential_stop`).
    ``power_rule`` (the standard's id and its wheel clauses with their levels) makes the power statement that of the
    standard's verdict (:func:`rngcert.battery.power.standard_levels`); None: the battery's.
    """
    alpha, n_resamples, power, tests = options.alpha, options.n_resamples, options.power, options.tests
    space = log.space
    group = f"table:{name}"
    reasons = list(extra_reasons) + checks.too_few_reasons(t, space.m)
    # the line-start comparison decides the pairs the battery may use; the scan for duplicated blocks
    # (a third of a large table's checks) changes no test's data, so with threads it runs beside the battery
    if line_starts is False:
        line_starts = checks.line_start_evidence(t, space) if t.n >= 2 else None
    mask = checks.pair_mask_of(line_starts)
    side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rngcert-integrity") if threads > 1 and t.n >= 2 else None
    dup_job = side.submit(duplicated_blocks, t.outcomes, space.m) if side is not None else None
    data = WheelData(t.outcomes, space, release=t.release, dealer=t.dealer, dealer_labels=t.dealer_labels, direction=t.direction,
                     rotor_speed=t.rotor_speed, ball_direction=t.ball_direction,
                     tally=tally if tally is not None else chunked_tally(t.outcomes, space), pair_mask=mask, pair_mask_reason="pairs across line starts (data-integrity finding)" if mask is not None else "")
    counts = data.counts
    try:
        battery = _battery(tests)
        results, errors, keys = battery.evaluate(data, entropy=entropy, group=group, n_resamples=n_resamples, alpha=alpha, threads=threads,
                                                 decision_level=decision_level)
        dup = dup_job.result() if dup_job is not None else None
    finally:
        if side is not None:
            side.shutdown(wait=True)
    empty = {"findings": [], "checks": [], "rule": checks.INTEGRITY_RULE, "pair_mask": None, "inconclusive": []}
    integrity = checks.integrity_findings(t, space, line_starts=line_starts, dup=dup) if t.n >= 2 else empty
    reasons += integrity["inconclusive"]
    procedure, breach = procedure_check(t)  # a spin against the game's rules: a procedure finding, never a p-value
    if breach:
        reasons.append(breach)
    # a log too uniform to be true (issue 27): a data-integrity finding, never a FAIL. It makes the verdict INCONCLUSIVE
    # (DESIGN §4 lists data-integrity findings among its reasons): counts more even than a fair wheel gives once in
    # 1,000 tables are no evidence of a good wheel but of a record that is not the wheel's raw output (made up,
    # filtered), and a PASS on it would certify the record, not the equipment
    tu = too_uniform(results, unit="pocket" if log.wheel.kind == "roulette" else ("section" if space.circular else "symbol"))
    if tu is not None and not other_wheel:
        integrity = dict(integrity, findings=list(integrity["findings"]) + [tu])
        reasons.append("data integrity: the counts are too even to be the wheel's raw results (see the data-integrity "
                       "section): the data cannot carry a verdict")
    integrity = _with_source_comparison(integrity, t)
    seeds = {"entropy": str(entropy), "spawn_keys": keys}
    out = decide(results, alpha=alpha, errors=errors, inconclusive=reasons, weights=battery.weights, seeds=seeds, suspect_level=suspect_level)
    first_reasons = list(reasons)
    if mask is not None:
        touched = [r for r in checks.UNMASKABLE if r in out.rejected or r in out.suspect_rejected]
        if touched:
            reasons.append(
                f"data integrity: {', '.join(touched)} reject(s), but these tests see whole sequences and the record has a "
                f"transcription artefact at its line starts (see the data-integrity section): the wheel and the artefact cannot "
                f"be told apart"
            )
    pw, pe = _table_power(out, data, t, log, options=options, entropy=entropy, group=group, reasons=reasons, power_rule=power_rule)
    if reasons != first_reasons:  # reasons found after the battery ran (power, integrity): decide again
        out = decide(results, alpha=alpha, errors=errors, inconclusive=reasons, weights=battery.weights, seeds=seeds, suspect_level=suspect_level)
    out.power = pw
    # the calibration was measured on the full battery: a follow-up's family is another, so none is printed for it
    out.calibration = calibration_line(t.n, fingerprint=run_fingerprint(alpha=alpha, suspect_level=suspect_level, n_resamples=n_resamples, data=data)) \
        if space.circular and log.wheel.kind == "roulette" and tests is None else {}
    if tests is None and not out.calibration:  # a money wheel's PASS must not read as calibrated by silence
        out.calibration = {"calibrated": False, "statement": (
            f"Not calibrated for this wheel: the share of fair wheels that are SUSPECT or FAIL was measured on roulette wheels "
            f"tested at the level of positions only, not on {log.wheel.id} "
            f"({'positions' if space.circular else 'symbols'}); the limits of the policy still hold by construction (FAIL at most "
            f"alpha, SUSPECT or FAIL at most the SUSPECT level, by weighted Holm).")}
    sp = pw.get("single_pocket")
    mdb = sp.get("effect") if isinstance(sp, dict) else None
    if out.verdict == "PASS" and isinstance(mdb, float) and mdb > 0.5:
        out.reasons.append(
            f"low power: the battery would FAIL a single pocket {mdb:+.0%} more likely than fair with only {power:.0%} "
            f"probability; PASS here means no evidence at this sample size, not a fair wheel"
        )
    bd = out.to_dict()
    if pe.get("exploitability", {}).get("applicable", True) and pe.get("exploitability") and not other_wheel:
        # the practical edge at the standard's level(s): the best bet's simultaneous interval at 1 - level
        edges = _practical_edges(counts, space, log.wheel, entropy=entropy, group=group, levels=sorted(set(edge_levels) | {alpha}))
        bd["practical_edge"] = edges[f"{alpha:g}"]
        bd["practical_edge_levels"] = edges
    bd["exploitability"] = pe.get("exploitability")
    bd["exploitability_line"] = pe.get("line", "")
    unit = "pocket" if log.wheel.kind == "roulette" else ("section" if space.circular else "symbol")
    key_findings, next_steps = table_findings(bd, n=t.n, labels=list(space.labels), power=pw, unit=unit)
    if other_wheel:  # tests and pay table of the wrong wheel: what they say is not about this wheel
        why = f"the pay table of {log.wheel.id} does not apply: {other_wheel}"
        bd["exploitability"] = {"applicable": False, "reason": why}
        bd["exploitability_line"] = f"Could a player beat this wheel? Not assessed: {why}."
        key_findings = [f for f in key_findings if f.startswith("No verdict:")]
        next_steps = [other_wheel.rsplit(": ", 1)[-1].capitalize() + " (the wheel the labels belong to)."]
        for x in bd["tests"]:
            x.pop("plain", None)
    rage_part = _rage_part(t, log, other_wheel, entropy=entropy, group=group, n_resamples=n_resamples, alpha=alpha, data=data)
    if rage_part is not None:
        bd["rage_line"] = rage_part["line"]
        rt = rage_part["run_length_test"]
        if rt.get("applicable") and rt["pvalue"] < alpha:  # the side wager's own law fails: said among the findings
            key_findings.append(rage_part["line"])
    at = 1 if out.verdict == "PASS" and key_findings else 0  # a PASS is said first; a finding that qualifies another verdict leads
    for f in integrity["findings"][::-1] if at else integrity["findings"]:
        key_findings.insert(at, "Data integrity (not a wheel fault): " + f.get("summary", f["text"]))
    key_findings = order_findings(key_findings, out.verdict)  # the finding that decided the verdict first (stable within a rank)
    integ = {"findings": integrity["findings"], "checks": integrity["checks"], "rule": integrity["rule"],
             "summary": (f"{len(integrity['findings'])} data-integrity finding(s)" if integrity["findings"] else "no data-integrity finding")}
    report = {
        "table": name,
        "n": t.n,
        "void": t.void,
        "notes": t.notes,
        "dealers": list(t.dealer_labels),
        "counts": counts.tolist(),
        "labels": list(space.labels),
        "min_holm": min(out.adjusted.values()) if out.adjusted else None,
        "integrity": jsonable(integ),
        "procedure": [procedure] if procedure else [],
        "key_findings": key_findings,
        "next_steps": next_steps,
        "battery": bd,
    }
    if rage_part is not None:
        report["roulette_rage"] = rage_part
    return out, report


def _table_power(out: BatteryOutcome, data: WheelData, t, log: SpinLog, *, options: CertifyOptions, entropy: int, group: str,
                 reasons: list, power_rule: tuple | None = None) -> tuple[dict, dict]:
    """The power statement of one table's verdict and the power and exploitability of :func:`power_and_exploitability`
    (``(pw, pe)``); the reasons why a PASS would lack power are appended to ``reasons``. ``power_rule``: as in
    :func:`_certify_table`."""
    alpha, n_resamples, power, required_bias, tests = options.alpha, options.n_resamples, options.power, options.required_bias, options.tests
    space, counts = log.space, data.counts
    if t.n >= checks.MIN_PER_OUTCOME * space.m:
        pw, pw_reasons = verdict_power_statement(out, data, alpha=alpha, power=power, n_resamples=n_resamples, required_bias=required_bias,
                                                   unit="pocket" if log.wheel.kind == "roulette" else "section", rule=_rule(out, t.n, power_rule))
        # PASS needs power (issue 23): a sample that cannot detect the declared minimum effect is INCONCLUSIVE instead of PASS.
        # A rejection stays a rejection (FAIL or SUSPECT), as for shoes (pipeline/shoe_power.py): the same evidence gets the
        # same verdict on a wheel and a shoe; the power statement is printed either way
        gate = out.verdict in ("PASS", "INCONCLUSIVE")
        if gate:
            reasons += pw_reasons
        # kept whatever the verdict: a standard whose clauses are met where the battery rejected must not PASS without power
        pw = dict(pw, gate_reasons=list(pw_reasons))
        if gate and tests is not None and required_bias is not None and space.circular and "effect" not in pw.get("single_pocket", {}):
            # a follow-up without a count-based test cannot show the power that --min-bias asks of a PASS
            reasons.append(f"the declared minimum bias of {declared_pct(required_bias)} on one {'pocket' if log.wheel.kind == 'roulette' else 'section'} cannot be verified: none of the "
                           f"chosen tests ({', '.join(tests)}) has a stated power against a single-pocket bias")
        paytable, rage = paytables_for_wheel(log.wheel)
        symbol_level = not space.circular
        pe = power_and_exploitability(counts, space, log.wheel, alpha, rng=stream(entropy, group, "power_and_exploitability"), power=power,
                                      required_bias=required_bias if symbol_level else None, paytable=paytable, rage_paytable=rage,
                                      with_power=symbol_level, confidence=1.0 - alpha)  # the practical edge's level: one answer on a page
        if symbol_level:  # the verdict's power is not modelled for symbol-level money wheels: the symbol chi-square's
            reasons += pe["inconclusive_reasons"]
            pw = dict(pe["power"], method="power of the symbol chi-square alone at alpha (the verdict's power is at most this)",
                      statement="Power of the symbol chi-square alone (the battery's verdict has at most this power): " + pe["power"].get("statement", ""))
    else:  # too few spins to certify: no power simulation (a log of thousands of tiny tables stays fast)
        pw = {"statement": f"{t.n} spins: too few to state a power."}
        why = f"{t.n:,} spins, fewer than the {checks.MIN_PER_OUTCOME * space.m:,} needed to certify: too few to estimate a bet's edge"
        pe = {"exploitability": {"applicable": False, "reason": why}, "line": f"Could a player beat this wheel? Not assessed: {why}."}
    return pw, pe


def _rule(out: BatteryOutcome, n: int, power_rule: tuple | None) -> tuple | None:
    """(standard id, levels of its FAIL clauses, levels of its finding clauses) on this table's battery, leaving out a
    clause whose minimum sample the table does not reach (it cannot be "not met"); None without a standard."""
    if power_rule is None:
        return None
    sid, clauses = power_rule
    live = [(c, lv) for c, lv in clauses if c.min_sample is None or n >= c.min_sample]
    return (sid, standard_levels(out, [x for x in live if x[0].rejection == "FAIL"]),
            standard_levels(out, [x for x in live if x[0].rejection != "FAIL"]))


def _practical_edges(counts, space, wheel: Wheel, *, entropy: int, group: str, levels) -> dict:
    """The best bet's edge and its simultaneous interval at 1 - level for each level (keyed ``f"{level:g}"``)."""
    paytable, rage = paytables_for_wheel(wheel)
    edges = {}
    for lv in levels:
        ex = exploitability(counts, space, paytable, rng=stream(entropy, group, f"practical_edge:{lv:g}"), wheel=wheel,
                            rage_paytable=rage, confidence=1.0 - lv, n_draws=200)
        edges[f"{lv:g}"] = {"level": lv, "confidence": 1.0 - lv, "bet": ex.best_bet, "expected_return": ex.expected_return,
                            "ci": list(ex.ci), "demonstrated": ex.positive_expectation_demonstrated,
                            "demonstrated_bet": ex.demonstrated_bet, "bets": ex.bets_considered}
    return edges


def _rage_part(t, log: SpinLog, other_wheel, *, entropy, group, n_resamples, alpha, data: WheelData | None = None) -> dict | None:
    """The Roulette Rage section of a table (:mod:`rngcert.pipeline.rage`) when the equipment offers
    the wager (single-zero roulette), the spins are wheel positions and the labels are this wheel's."""
    _, rage = paytables_for_wheel(log.wheel)
    if rage is None or other_wheel or "colour" not in log.space.categories or not log.space.circular or t.n < 2:
        return None
    from rngcert.pipeline.rage import rage_section

    return rage_section(t.outcomes, log.space, rng=stream(entropy, group, "roulette_rage"), n_resamples=n_resamples, alpha=alpha,
                        runs=data.colour_runs if data is not None else None)  # (the runs the longest-run test read)


def _with_source_comparison(integrity: dict, t) -> dict:
    """The table's integrity findings with its secondary result sources (camera, display) compared
    with the result: a source that failed to read or disagreed is a data-integrity finding with its
    counts (it never changes the results tested, rule 5.5); one that agreed everywhere is a check."""
    comps = getattr(t, "source_comparison", None) or []
    if not comps:
        return integrity
    from rngcert.collect.feed import comparison_sentence

    integrity = dict(integrity, findings=list(integrity["findings"]), checks=list(integrity["checks"]))
    for c in comps:
        integrity["checks"].append(f"results of the {c['source']} against the {c['primary']}, round by round")
        if c["disagree"] or c["unreadable"] or c["read"] < c["rounds"]:
            integrity["findings"].append({"name": f"second_source_{c['source']}", "text": comparison_sentence(c), "evidence": c})
    return integrity


def chunked_tally(x: np.ndarray, space, chunk: int = 1 << 18) -> SpinTally:
    """The table's :class:`~rngcert.stats.tally.SpinTally` (the one :class:`WheelData` makes),
    summed over chunks of ``chunk`` spins: the same tally (addition joins the chunks), without
    whole-table int64 temporaries (about 25 bytes a spin at once: 6 MB for 256 Ki spins, in the heap
    :func:`rngcert.collect.heap.keep_freed_heap` keeps; a quarter of the calls of 64 Ki chunks, 0.057 ->
    0.046 CPU-s at 10 M spins)."""
    parts = WheelData(np.zeros(0, dtype=np.int8), space).run_partitions
    total = SpinTally.of(x[:0], space.m, partitions=parts)
    for a in range(0, x.size, chunk):
        total = total + SpinTally.of(x[a : a + chunk], space.m, partitions=parts)
    return total


def wheel_figures(x, space, out: BatteryOutcome, pair_mask=None, tally: SpinTally | None = None) -> list:
    """The figures of one wheel table; ``pair_mask`` (:func:`rngcert.pipeline.checks.pair_mask_of`) gives the
    consecutive pairs the pair-based tests used, and the wheel-distance figure counts only those. With the
    table's ``tally`` (:func:`chunked_tally` of ``x``) the counts and, when every pair is used, the wheel
    distances come from it, not from another pass over the spins."""
    from rngcert.report import plots  # imported only when figures are drawn (the wheel figures need no matplotlib)

    counts = np.bincount(x, minlength=space.m) if tally is None else tally.counts
    figs = []
    if space.circular:
        title = "Pocket frequencies in wheel order"
        figs.append(plots.frequency_figure(counts, space.probs, list(space.labels), title=title, xlabel="pocket (wheel order)"))
        best = None
        for r in out.results:
            if r.name == "sector_scan" and r.applicable:
                best = r.details.get("best_arc")
        figs.append(plots.sector_figure(counts, space.probs, list(space.labels), best if isinstance(best, dict) else None))
        if x.size > 1:
            figs.append(plots.distance_figure(x, space.m, space.probs, pair_mask, distances=None if tally is None or pair_mask is not None
                                              else tally.distance_counts(),
                                              excluded="pairs across the line starts of a transcribed list: data-integrity finding"))
    else:
        figs.append(plots.frequency_figure(counts, space.probs, list(space.labels), title="Symbol frequencies", xlabel="symbol"))
    if out.applicable:
        figs.append(plots.pvalue_figure(out.results, out.alpha, out.adjusted))
    return figs
