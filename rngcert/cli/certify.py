"""rngcert certify: wheel certification from spin logs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

# Every statistic of a certification runs with one BLAS thread (each table is a work item inside
# rngcert.pipeline.parallel.pinned: the same sums on any machine), so the process starts no OpenBLAS
# worker threads: imported with numpy, they spin idle for about 0.03 CPU-s (issue 26 item 1). Set before
# numpy's import (rngcert.cli.controller imports it); a value the user set is kept.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import rngcert.cli.controller as controller  # noqa: E402 (after the BLAS setting)
from rngcert.cli._common import (
    DEFAULT_LOG_COMMAND,
    DEFAULT_LOG_WHEEL,
    EXIT_TABLE,
    MAX_RESAMPLES,
    Real,
    check_report_options,
    command_line,
    default_log_path,
    emit_report,
    given,
    parse_columns,
    progress_bar,
    report_options,
)
from rngcert.cli._parallel import parallel_options, plan_of
from rngcert.cli._standard import load_for, standard_option
from rngcert.errors import InputError


def parse_duration(text: str) -> float:
    """``--min-round-interval``: seconds from ``5s``, ``500ms``, ``1m`` or a bare number of seconds."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|sec|m|min)?\s*", str(text))
    if not m:
        raise click.BadParameter(f"{text!r} is not a duration such as 5s, 500ms or 1m", param_hint="--min-round-interval")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, None: 1}[m.group(2)]


def parse_aliases(items) -> dict[str, str]:
    """``--alias SPELLING=LABEL`` options as a mapping (the last ``=`` separates the label)."""
    out: dict[str, str] = {}
    for it in items:
        a, sep, b = it.rpartition("=")
        if not sep or not a.strip() or not b.strip():
            raise click.BadParameter(f"{it!r} is not SPELLING=LABEL, e.g. zero=0", param_hint="--alias")
        out[a.strip()] = b.strip()
    return out


@click.command(
    epilog="""\b
Examples:
  rngcert certify                      # the bundled default log (a simulated fair wheel)
  rngcert certify spins.csv --equipment european
  rngcert certify permanence_t5.txt --seed 1 --json > report.json
  rngcert certify live.csv --column result=number --column table=file
  rngcert certify CleanData.csv --equipment crazy-time \\
      --column result=WheelResult --column timestamp=DateTime
  rngcert certify casino.csv --column table=wheel --workers 2    # tables on 2 worker processes
  rngcert certify casino.csv --scheduler tcp://10.0.0.5:8786     # tables on a Dask cluster
  rngcert certify spins.csv --pdf --sign lab.pem   # report.pdf and a signed report.json
"""
    + "\n"
    + EXIT_TABLE
)
@controller.protocol_option
@click.argument("logs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--equipment", "-e", default="european", show_default=True, help="Packaged wheel id (european, american, money-wheel-52, crazy-time) or a wheel TOML file.")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file, e.g. result=Number (repeatable).")
@click.option("--alias", "aliases", multiple=True, metavar="SPELLING=LABEL", help="Read another spelling of a pocket/section label, e.g. zero=0 or \"Null=0\" (repeatable; as [aliases] in a wheel TOML).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--pool", is_flag=True, help="Pool all tables of the log into one sequence (default: certify each table).")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification (family-wise) significance level.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed of every Monte Carlo p-value (recorded; default: fresh entropy).")
@click.option("--resamples", type=click.IntRange(99, MAX_RESAMPLES), default=9999, show_default=True, help="Monte Carlo replicates per test.")
@click.option("--min-bias", type=Real(min=0, min_open=True), default=None, help="Declared minimum detectable single-pocket bias (0.2 = +20%); too small a sample gives INCONCLUSIVE. Default: the standard's declared minimum effect (rngcert-default: +50%).")
@click.option("--power", type=Real(0, 1, min_open=True, max_open=True), default=None,
              help="Power for the power statement and --min-bias. Default: the standard's declared power (0.9 in every packaged standard).")
@click.option("--max-rejected", type=Real(0, 1), default=0.05, show_default=True, help="Share of unreadable rows above which every verdict is INCONCLUSIVE.")
@click.option("--min-round-interval", "min_round_interval", default="5s", show_default=True, metavar="DURATION",
              help="Rows of a table with the same result closer in time than this (e.g. 5s, 500ms, 1m) are one round logged twice: counted once and reported; 0 turns the check off. Given for a log without timestamps: an input error (exit 3).")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder under which reports/<equipment>-<UTC time>/ is made.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json to standard output instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures (faster; the HTML has tables only).")
@click.option("--tests", "tests", default=None, metavar="NAME,…", callback=lambda c, p, v: _tests_option(v),
              help="Follow-up: rerun only these battery tests (comma-separated) on new data; the correction's family is these tests. "
                   "A --standard clause none of whose tests is chosen is refused.")
@click.option("--strict", is_flag=True, help="Refuse (exit 4) a wheel TOML that breaks the seeds' equipment rules, instead of warning in the report.")
@standard_option
@parallel_options
@report_options
def certify(logs, equipment, columns, aliases, fmt, pool, alpha, seed, resamples, min_bias, power, max_rejected, min_round_interval, outdir, as_json, no_plots, tests,
            strict, standard, pdf, sign_key, workers, scheduler):
    """Certify a wheel from spin logs: run the wheel battery per table and write a report.

    LOGS are CSV or JSON Lines spin logs (columns: result, and optionally spin_id, timestamp,
    table, dealer, direction, release_pocket, revolutions, void) or permanence lists (numbers
    separated by commas/whitespace). With no LOGS, the bundled default log is certified: a fair
    European wheel simulated by rngcert itself.

    Writes report.json, report.html and rejects.csv (and report.pdf with --pdf) to
    reports/<equipment>-<UTC time>/ and exits with the verdict's code. `rngcert verify` checks
    the folder later. The tables of a multi-table
    log are independent work items: they run on every core (a local process pool) by default, on
    an existing cluster with --scheduler, or serially with --workers 1; the report is the same.
    """
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log
    from rngcert.pipeline.options import CertifyOptions

    std = load_for(standard, "wheel", "certify", alpha)
    _refuse_unmet_clauses(std, tests)
    key = check_report_options(pdf, sign_key)
    notes = []
    if not logs and load_wheel(equipment).id != DEFAULT_LOG_WHEEL:
        # the bundled log is a European wheel's: certifying it as another wheel would be a verdict on the wrong data
        raise InputError(
            f"no log given, and rngcert bundles a default log only for the {DEFAULT_LOG_WHEEL} wheel: name the spin log of "
            f"the {equipment} wheel to certify, e.g. rngcert certify spins.csv --equipment {equipment}"
        )
    if not logs:
        p = default_log_path()
        logs = (p,)
        msg = f"no log given: certifying the bundled default log {p} (a fair European wheel simulated by rngcert; regenerate with: {DEFAULT_LOG_COMMAND})"
        notes.append(msg)  # printed once, with the summary (and on stderr when stdout carries --json)
        if as_json:
            click.echo(msg, err=True)
    wheel = load_wheel(equipment).with_aliases(parse_aliases(aliases))
    from rngcert.equipment.paytables import seed_checks

    # a lab-supplied wheel is checked against the seeds' equipment rules (the packaged ones pass)
    for w in seed_checks(wheel=wheel, strict=strict):
        notes.append(f"equipment check (warning): {w}")
        if not as_json:
            click.echo(f"rngcert: warning: {w}", err=True)
    # the certification's options, built once here and passed down as one object
    options = CertifyOptions(alpha=alpha, seed=seed, n_resamples=resamples, required_bias=min_bias, power=power, command=command_line(),
                             figures=not no_plots, notes=tuple(notes), max_rejected_share=max_rejected, plan=plan_of(workers, scheduler),
                             standard=std, tests=tests)
    with progress_bar(unit="spin", desc="reading the log", scale=True) as bar:
        moved = bar.callback()

        def on_progress(done, total=None, postfix=None):  # the pipeline's first call comes once the log is read
            if not stage[0]:
                stage[0] = True
                bar.set_description("certifying")
            moved(done, total, postfix)

        stage = [False]
        cert = certify_log(logs, wheel, columns=parse_columns(columns), fmt=fmt, pool=pool, min_round_interval=parse_duration(min_round_interval),
                           round_interval_declared=bool(given("min_round_interval")), options=options.replace(progress=on_progress))
    emit_report(cert.report, cert.figures, cert.log.rejected, outdir, wheel.id, as_json, pdf=pdf, sign_key=key)


def _tests_option(value: str | None) -> tuple[str, ...] | None:
    """``--tests``: the chosen names of the wheel battery, or a usage error (exit 2) listing the valid ones."""
    if value is None:
        return None
    from rngcert.battery.followup import parse_tests
    from rngcert.battery.wheel import WHEEL

    try:
        return parse_tests(value, WHEEL)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--tests") from None


def _refuse_unmet_clauses(std, tests: tuple[str, ...] | None) -> None:
    """A follow-up (``--tests``) under a standard with a clause whose wheel tests are all left out: the clause
    would be "not applicable" and the verdict taken without it, so the combination is a usage error (exit 2)."""
    if tests is None:
        return
    from rngcert.battery.followup import test_names
    from rngcert.battery.wheel import WHEEL

    every = test_names(WHEEL)
    unmet = [c for c in std.clauses_for("wheel") if "exploitability" not in c.tests and any(c.selects(n) for n in every)
             and not any(c.selects(n) for n in tests)]
    if unmet:
        raise click.UsageError(
            f"--standard {std.id} with --tests {','.join(tests)}: none of the chosen tests is in its clause(s) "
            + "; ".join(f"{c.id} ({', '.join(n for n in every if c.selects(n))})" for c in unmet)
            + ": the follow-up could not meet them; add their tests to --tests, or follow up under the default standard"
        )
