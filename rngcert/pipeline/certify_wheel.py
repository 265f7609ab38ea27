"""Wheel certification end to end: log → per-table battery → verdict → report data.

This module wires the layers together for ``rngcert certify``; it holds no statistics and does
no terminal I/O (the CLI prints). It returns the report dictionary and the figures so that tests
and the store can use the same path as the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from rngcert.battery.core import BatteryOutcome, worst
from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.collect.spinlog import SpinLog, read_spin_log
from rngcert.equipment.wheel import Wheel
from rngcert.report import cite, schema
from rngcert.seeding import root, stream
from rngcert.stats.exploit import power_and_exploitability


def _declared(*, alpha, required_bias, power, n_resamples, max_rejected_share) -> dict:
    """The lab-declared parameters of a wheel certification, as page one states them."""
    return {
        "certification level alpha": alpha,
        "declared minimum bias": "none declared" if required_bias is None else f"{required_bias:.0%} on one pocket",
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
    wheel: Wheel,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    pool: bool = False,
    alpha: float = 0.01,
    seed: int | None = None,
    n_resamples: int = 9999,
    required_bias: float | None = None,
    power: float = 0.9,
    command: str | None = None,
    figures: bool = True,
    progress: Callable[[int, int, str], None] | None = None,
    notes: Sequence[str] = (),
    max_rejected_share: float = 0.05,
) -> Certification:
    """Read ``paths`` for ``wheel`` and certify each table.

    Parameters
    ----------
    paths : sequence of path
        Spin logs (CSV, JSON Lines or permanence lists).
    wheel : Wheel
        Equipment definition.
    columns, fmt, pool
        Passed to :func:`rngcert.collect.spinlog.read_spin_log`.
    alpha : float
        Certification level (default 0.01).
    seed : int, optional
        Root seed; fresh OS entropy (recorded) when None.
    n_resamples : int
        Monte Carlo replicates per test.
    required_bias : float, optional
        Lab's declared minimum detectable single-pocket bias (relative, e.g. 0.2 = +20%); a sample
        too small to detect it with ``power`` makes the verdict INCONCLUSIVE.
    progress : callable, optional
        ``progress(spins_done, spins_total, label)``, called as each table's tests and figures
        finish (the CLI's progress bar counts spins, so a large table moves it too).
    max_rejected_share : float
        When more than this share of a log's data rows cannot be read, every verdict is
        INCONCLUSIVE: a wrong ``--equipment`` or ``--column`` can leave a readable remainder that
        is not the wheel's results (default 5%).
    """
    log = read_spin_log(paths, wheel, columns=columns, fmt=fmt, pool=pool)
    cert = certify_spins(
        log,
        alpha=alpha,
        seed=seed,
        n_resamples=n_resamples,
        required_bias=required_bias,
        power=power,
        command=command,
        figures=figures,
        progress=progress,
        notes=notes,
        max_rejected_share=max_rejected_share,
    )
    # what `rngcert verify --rerun` needs to recompute every statistic from the same logs
    cert.report["rerun"] = {
        "pipeline": "certify_wheel",
        "equipment": wheel.path if wheel.path and not _packaged(wheel) else wheel.id,
        "columns": dict(columns or {}),
        "fmt": fmt,
        "pool": pool,
        "alpha": alpha,
        "seed": int(cert.report["seed"]["entropy"]),
        "n_resamples": n_resamples,
        "required_bias": required_bias,
        "power": power,
        "max_rejected_share": max_rejected_share,
    }
    return cert


def _packaged(wheel: Wheel) -> bool:
    """Whether ``wheel`` is one of the packaged definitions (found again by its id)."""
    return str(wheel.path).startswith("rngcert/equipment/data/")


def certify_spins(
    log: SpinLog,
    *,
    alpha: float = 0.01,
    seed: int | None = None,
    n_resamples: int = 9999,
    required_bias: float | None = None,
    power: float = 0.9,
    command: str | None = None,
    figures: bool = True,
    progress: Callable[[int, int, str], None] | None = None,
    notes: Sequence[str] = (),
    max_rejected_share: float = 0.05,
    kind: str = "certification",
) -> Certification:
    """Certify every table of an already-read :class:`~rngcert.collect.spinlog.SpinLog`
    (the path ``certify`` and store audits share). Parameters as in :func:`certify_log`;
    ``kind`` is ``"audit"`` for store audits (the report's title)."""
    wheel = log.wheel
    ss = root(seed)
    data_rows = sum(s.accepted + s.void + s.rejected for s in log.sources)
    rejected_share = len(log.rejected) / data_rows if data_rows else 0.0
    log_reasons = []
    if rejected_share > max_rejected_share:
        log_reasons.append(
            f"{len(log.rejected)} of {data_rows} data rows ({rejected_share:.1%}) could not be read, more than "
            f"{max_rejected_share:.0%}: check --equipment and --column; a verdict cannot stand on what is left"
        )
    entropy = int(ss.entropy)
    m_specs = WHEEL.size(WheelData(np.zeros(0, dtype=np.int16), log.space))
    floor = 1.0 / (n_resamples + 1)
    if floor >= alpha / m_specs:
        notes = list(notes) + [
            f"with {n_resamples} Monte Carlo replicates the smallest Monte Carlo p-value is {floor:.2g}, "
            f"not below Holm's first threshold alpha/m = {alpha / m_specs:.2g}: a Monte Carlo test alone "
            f"cannot make the verdict FAIL; use --resamples {int(np.ceil(m_specs / alpha * 2))} or more"
        ]
    table_reports, figs, outcomes = [], [], []
    total = sum(t.n for t in log.tables.values()) or 1
    done = 0
    for name, t in log.tables.items():
        if progress:
            progress(done, total, f"table {name}")
        out, report = _certify_table(
            name, t, log, entropy=entropy, alpha=alpha, n_resamples=n_resamples, power=power,
            required_bias=required_bias, extra_reasons=log_reasons,
        )
        outcomes.append(out)
        table_reports.append(report)
        if progress and figures:  # tests done; the figures are the rest of this table's work
            progress(done + (7 * t.n) // 10, total, f"table {name}: figures")
        figs.append(_figures(t.outcomes, log.space, out) if figures else [])
        done += t.n
        if progress:
            progress(done, total, f"table {name}: {out.verdict}")
    verdict = worst([o.verdict for o in outcomes])
    if len(outcomes) > 1:
        m = len(outcomes)
        notes = list(notes) + [
            f"{m} tables certified separately: each table's verdict controls its own family-wise error at alpha = {alpha}; "
            f"the overall verdict is the worst of them, so with {m} fair tables the chance that at least one is FAIL "
            f"is up to {1 - (1 - alpha) ** m:.0%}. Judge each table on its own line."
        ]
    report = schema.header(
        kind=kind,
        subject=wheel.name,
        command=command,
        inputs=[
            {
                **s.to_dict(),
                "summary": f"{s.rows} rows: {s.accepted} accepted, {s.void} void (excluded), {s.rejected} rejected"
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
        declared=_declared(alpha=alpha, required_bias=required_bias, power=power, n_resamples=n_resamples, max_rejected_share=max_rejected_share),
        unit="spins",
        section_word="Table",
        level=log.level,
        policy=schema.policy(alpha, "holm (per table, over all applicable tests)", cite.wheel_requirement(wheel.kind, wheel.id)),
        seed={"entropy": str(entropy), "how": "given with --seed" if seed is not None else "fresh OS entropy, recorded here", "n_resamples": n_resamples},
        notes=list(dict.fromkeys(list(notes) + list(log.notes))),  # a note given twice is printed once
    )
    report["tables"] = table_reports
    report["verdict"] = verdict
    return Certification(report, figs, log, outcomes)


def _certify_table(name, t, log: SpinLog, *, entropy, alpha, n_resamples, power, required_bias, extra_reasons) -> tuple[BatteryOutcome, dict]:
    """Battery, power and exploitability of one table. Its random streams are keyed by the table's
    name, so a table gets the same Monte Carlo p-values whether it is certified alone, within a
    multi-table log, or audited from the store."""
    space = log.space
    group = f"table:{name}"
    data = WheelData(t.outcomes, space, release=t.release, dealer=t.dealer, dealer_labels=t.dealer_labels, direction=t.direction)
    counts = data.counts
    if t.n >= 2 * space.m:
        prng = stream(entropy, group, "power_and_exploitability")
        pe = power_and_exploitability(counts, space, log.wheel, alpha, rng=prng, power=power, required_bias=required_bias)
        inconclusive = list(pe["inconclusive_reasons"])
    else:  # too few spins to certify: no power simulation (a log of thousands of tiny tables stays fast)
        pe = {"power": {"statement": f"{t.n} spins: too few to state a power."}}
        inconclusive = [f"only {t.n} spins for {space.m} outcomes: too few to certify"]
    out = WHEEL.run(data, entropy=entropy, group=group, alpha=alpha, n_resamples=n_resamples, inconclusive=inconclusive + list(extra_reasons))
    out.power = pe["power"]
    sp = out.power.get("single_pocket")
    mdb = sp.get("effect") if isinstance(sp, dict) else None
    if out.verdict == "PASS" and isinstance(mdb, float) and mdb > 0.5:
        out.reasons.append(
            f"low power: only a single-pocket bias above {mdb:.0%} would have been detected with "
            f"{power:.0%} probability; PASS here means no evidence at this sample size, not a fair wheel"
        )
    bd = out.to_dict()
    bd["exploitability"] = pe.get("exploitability")
    bd["exploitability_line"] = pe.get("line", "")
    report = {
        "table": name,
        "n": t.n,
        "void": t.void,
        "notes": t.notes,
        "dealers": list(t.dealer_labels),
        "counts": counts.tolist(),
        "labels": list(space.labels),
        "min_holm": min(out.adjusted.values()) if out.adjusted else None,
        "battery": bd,
    }
    return out, report


def _figures(x, space, out: BatteryOutcome) -> list:
    from rngcert.report import plots  # matplotlib is imported only when figures are drawn

    counts = np.bincount(x, minlength=space.m)
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
            figs.append(plots.distance_figure(x, space.m, space.probs))
    else:
        figs.append(plots.frequency_figure(counts, space.probs, list(space.labels), title="Symbol frequencies", xlabel="symbol"))
    if out.applicable:
        figs.append(plots.pvalue_figure(out.results, out.alpha, out.adjusted))
    return figs
