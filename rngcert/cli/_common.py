"""Helpers shared by every command: exit codes, the error handler, option parsing, the
terminal summary and the report emitter."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from rngcert.errors import EquipmentError, InputError, RngcertError

EXIT = {"PASS": 0, "SUSPECT": 10, "INCONCLUSIVE": 11, "FAIL": 12}
EXIT_INPUT = 3
EXIT_EQUIPMENT = 4

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL · 13 ALARM (watch) ·
3 input or storage error · 4 equipment error · 2 usage error · 1 internal error."""

DEFAULT_LOG = "default-european-spins.csv"
#: The wheel of the bundled default log.
DEFAULT_LOG_WHEEL = "european"
DEFAULT_LOG_COMMAND = (
    "rngcert simulate wheel --equipment european --spins 20000 --seed 2026 --dealers 4 "
    "--release --void-rate 0.01 --table DEMO-1 --out data/default-european-spins.csv"
)


def default_log_path() -> Path:
    """The bundled default spin log (``data/default-european-spins.csv``)."""
    from importlib import resources

    try:
        return Path(str(resources.files("rngcert.data") / DEFAULT_LOG))
    except ModuleNotFoundError:  # running from a source tree that is not installed
        return Path(__file__).resolve().parent.parent / "data" / DEFAULT_LOG


def interactive() -> bool:
    """Progress bars only on a terminal, never when piped or in CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


def fail(code: int, msg: str):
    click.echo(f"rngcert: error: {msg}", err=True)
    sys.exit(code)


def parse_columns(items) -> dict[str, str]:
    out = {}
    for it in items:
        if "=" not in it:
            raise click.BadParameter(f"{it!r} is not OURS=THEIRS, e.g. result=Number", param_hint="--column")
        a, b = it.split("=", 1)
        key = a.strip().lower()
        if key in out:
            raise click.BadParameter(f"{key!r} is mapped twice ({out[key]!r} and {b.strip()!r})", param_hint="--column")
        out[key] = b.strip()
    return out


def command_line() -> str:
    """The command as typed (for the report's provenance)."""
    ctx = click.get_current_context()
    args = sys.argv[1:] if ctx.info_name in sys.argv else []
    return " ".join(["rngcert"] + [shlex.quote(a) for a in args]) if args else ctx.command_path


class Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except EquipmentError as exc:
            fail(EXIT_EQUIPMENT, str(exc))
        except (InputError, RngcertError) as exc:
            fail(EXIT_INPUT, str(exc))
        except BrokenPipeError:  # the reader of our output went away (rngcert ... | head): not an error
            sys.stderr.close()
            sys.exit(0)
        except OSError as exc:  # a file the command reads or writes (input or storage error)
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            fail(EXIT_INPUT, f"{where}{exc.strerror or exc}")
        except UnicodeDecodeError as exc:
            fail(EXIT_INPUT, str(exc))
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: one line for the user, the traceback on request
            if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):  # a store fault not caught by the store layer
                fail(EXIT_INPUT, f"storage error: {exc}")
            if os.environ.get("RNGCERT_DEBUG"):
                raise
            fail(1, f"internal error ({type(exc).__name__}: {exc}); please report it with the command line (RNGCERT_DEBUG=1 shows the traceback)")


def emit_report(report: dict, figures, rejected, outdir: Path, equipment_id: str, as_json: bool) -> None:
    """Write the report folder, print the summary (or report.json with --json), and exit with
    the verdict's code. Shared by every certifying command."""
    from rngcert.report.writer import report_dir, write_report

    paths = write_report(report, figures, rejected, report_dir(outdir, equipment_id))
    if as_json:
        click.echo(paths["json"].read_text(encoding="utf-8"))
    else:
        click.echo(summary_text(report))
        click.echo(f"report: {paths['html']}\n        {paths['json']}\nrejects: {paths['rejects']} ({report.get('rejected_count', 0)} rows)")
    sys.exit(EXIT[report["verdict"]])


def summary_text(report: dict) -> str:
    """The terminal summary: header, verdict, flagged tests, and the count of the rest."""
    lines = []
    eq = report["equipment"]
    lines.append(f"rngcert {report['software']['rngcert']} · {eq['name']} · alpha {report['policy']['alpha']} · Holm · seed {report['seed']['entropy']}")
    for f in report["inputs"]:
        sha = f"  sha256 {f['sha256'][:16]}…" if f.get("sha256") else ""
        lines.append(f"  {f['path']}: {f['summary']}{sha}")
    for n in report["notes"]:
        lines.append(f"  note: {n}")
    for t in report["tables"]:
        b = t["battery"]
        void = f", {t['void']} void" if report.get("unit", "spins") == "spins" else ""
        lines.append(f"{report.get('section_word', 'Table').lower().rstrip(':')} {t['table']}: {t['n']} {report.get('unit', 'spins')}{void} → {b['verdict']}")
        for n in t["notes"]:
            lines.append(f"    note: {n}")
        if b["verdict"] != "PASS":
            for reason in b["reasons"]:
                lines.append(f"    why: {reason[:300]}{'…' if len(reason) > 300 else ''}")
        flagged = [x for x in b["tests"] if x["applicable"] and x["pvalue"] < b["alpha"]]
        for x in flagged:
            tag = "REJECTED (Holm)" if x["rejected_familywise"] else "raw p < alpha"
            p, ph = (f"{v:.3g}" if v >= 1e-300 else "< 1e-300" for v in (x["pvalue"], x["pvalue_holm"]))
            lines.append(f"    {x['requirement']:<16} {x['name']:<22} p = {p}  Holm p = {ph}  {tag}")
        na = [x for x in b["tests"] if not x["applicable"]]
        rest = b["tests_applicable"] - len(flagged)
        lines.append(f"    …and {rest} test(s) without anomalies" + (f"; {len(na)} not applicable" if na else ""))
        if b["power"].get("statement"):
            lines.append(f"    power: {b['power']['statement']}")
        if b.get("exploitability_line"):
            lines.append(f"    {b['exploitability_line']}")
    lines.append(f"VERDICT: {report['verdict']}")
    return "\n".join(lines)


