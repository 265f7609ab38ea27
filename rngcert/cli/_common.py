"""Helpers shared by every command: exit codes, the error handler, option parsing, the
terminal summary and the report emitter."""

from __future__ import annotations

import os
import shlex
import sys
import warnings
from pathlib import Path
from typing import Sequence

import click

from rngcert.errors import EquipmentError, InputError, RngcertError

EXIT = {"PASS": 0, "SUSPECT": 10, "INCONCLUSIVE": 11, "FAIL": 12}
EXIT_INPUT = 3
EXIT_EQUIPMENT = 4

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL · 13 ALARM (watch) ·
14 spins lost (watch: a rotation not seen) · 3 input or storage error · 4 equipment error · 2 usage error · 1 internal error."""

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
    except ModuleNotFoundError:  # run from a source tree (python -m rngcert.cli in the checkout): data/ at its root
        return Path(__file__).resolve().parents[2] / "data" / DEFAULT_LOG


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


_PY_SHOWWARNING = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """rngcert's own warnings as one line on stderr (``rngcert: warning: ...``); others as Python shows them."""
    if category.__module__.split(".")[0] == "rngcert":
        click.echo(f"rngcert: warning: {message}", err=True)
    else:
        _PY_SHOWWARNING(message, category, filename, lineno, file, line)


class Group(click.Group):
    def invoke(self, ctx):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
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


def report_options(f):
    """``--pdf`` and ``--sign KEY``: options of every command that writes a report."""
    f = click.option("--sign", "sign_key", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None, metavar="KEY",
                     help="Sign report.json with this Ed25519 private key (PEM; make one with `rngcert keygen`).")(f)
    f = click.option("--pdf", "pdf", is_flag=True, help="Also write report.pdf: a one-page certificate, then the report (needs the pdf extra).")(f)
    return f


def check_report_options(pdf: bool, sign_key) -> object | None:
    """Fail fast (before a long run) when --pdf cannot work or --sign's key is unusable;
    returns the loaded signing key."""
    if pdf:
        from rngcert.report.pdf import available

        ok, why = available()
        if not ok:
            fail(EXIT_INPUT, f"--pdf: {why}")
    if sign_key is not None:
        from rngcert.report.verify import load_private_key

        return load_private_key(sign_key)
    return None


def emit_report(report: dict, figures, rejected, outdir: Path, equipment_id: str, as_json: bool, *, pdf: bool = False, sign_key=None,
                details: Sequence[str] = ()) -> None:
    """Write the report folder, print the summary (or report.json with --json), and exit with
    the verdict's code. Shared by every certifying command. ``details`` (a command's own lines,
    e.g. a shuffle's trackers and parameters) are printed after the summary's header and findings,
    before its closing VERDICT line: the verdict is read first and last."""
    from rngcert.report.writer import report_dir, write_report

    paths = write_report(report, figures, rejected, report_dir(outdir, equipment_id), pdf=pdf, sign_key=sign_key)
    if as_json:
        click.echo(paths["json"].read_text(encoding="utf-8"), nl=False)
    else:
        text = summary_text(report).splitlines()
        if details:
            at = max((i for i, ln in enumerate(text) if ln.startswith("VERDICT:")), default=len(text))
            text[at:at] = list(details)
        click.echo("\n".join(text))
        lines = [f"report: {paths['html']}", f"        {paths['json']}"]
        if "pdf" in paths:
            lines.append(f"        {paths['pdf']}")
        nrej = report.get("rejected_count", 0)
        lines.append(f"rejects: {paths['rejects']} ({nrej:,} row{'' if nrej == 1 else 's'})")
        integ = report.get("integrity") or {}
        if integ:
            lines.append(f"report id {integ['report_id']}" + (" (signed)" if integ.get("signature") else "") + f"; check it with: rngcert verify {paths['json'].parent}")
        click.echo("\n".join(lines))
    sys.exit(EXIT[report["verdict"]])


def _clip(s: str, n: int = 240) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def summary_text(report: dict) -> str:
    """The terminal summary, in the report's order: verdict; what was certified; the data; key
    findings and next steps; one line per table (multi-table) or the flagged tests (one table);
    then a one-line overall result."""
    from rngcert.report import text
    from rngcert.report.writer import overall_line

    lines = []
    eq = report["equipment"]
    tables = report["tables"]
    multi = len(tables) > 1
    lines.append(f"rngcert {report['software']['rngcert']} · {report.get('title', 'Certification report')} · {report['verdict']}")
    lines.append(f"certified: {report.get('equipment_line') or eq['name']}")
    for rule in (report.get("certified") or {}).get("rules", [])[:2]:
        lines.append(f"  rule: {_clip(rule, 160)}")
    for f in report["inputs"]:
        sha = f"  sha256 {f['sha256'][:16]}…" if f.get("sha256") else ""
        lines.append(f"data: {Path(str(f['path'])).name if not str(f['path']).startswith('generator:') else f['path']}: {f['summary']}{sha}")
    if report.get("period"):
        lines.append(f"  period: {report['period'].get('first')} to {report['period'].get('last')}")
    for n in report["notes"]:
        lines.append(f"  note: {_clip(n)}")
    kf = [(t["table"], k) for t in tables for k in (t.get("key_findings") or [])]
    if kf:
        lines.append("key findings:")
        lines += [f"  - {tn + ': ' if multi else ''}{_clip(k)}" for tn, k in kf[:8]]
        if len(kf) > 8:
            lines.append(f"  …and {len(kf) - 8} more in the report")
    ns = [(t["table"], k) for t in tables for k in (t.get("next_steps") or [])]
    if ns:
        lines.append("next steps:")
        lines += [f"  - {tn + ': ' if multi else ''}{_clip(k)}" for tn, k in ns[:5]]
    word = report.get("section_word", "Table").lower().rstrip(":")
    unit = report.get("unit", "spins")
    if multi:
        wid = min(36, max(len(str(t["table"])) for t in tables))
        lines.append(f"{word}s ({len(tables)}):")
        for t in tables:
            b = t["battery"]
            lines.append(f"  {str(t['table'])[:wid]:<{wid}} {t['n']:>8,} {unit}  {b['verdict']:<12} {_clip(text.headline(t), 110)}")
    else:
        t = tables[0]
        b = t["battery"]
        void = f", {t['void']} void" if unit == "spins" else ""
        lines.append(f"{word} {t['table']}: {t['n']:,} {unit}{void} → {b['verdict']}")
        for n in t["notes"]:
            if n not in report["notes"]:  # a note of the run and of its one table is printed once
                lines.append(f"    note: {_clip(n)}")
        if b["verdict"] != "PASS":
            for reason in b["reasons"]:
                lines.append(f"    why: {_clip(reason, 300)}")
        flagged = text.flagged(b)
        for x in flagged[:12]:
            tag = "REJECTED (Holm)" if x["rejected_familywise"] else "raw p < alpha"
            lines.append(f"    {x['requirement']:<16} {x['name']:<24} p {text.p_is(x)}  Holm p {text.p_is(x, 'pvalue_holm')}  {tag}")
        if len(flagged) > 12:
            lines.append(f"    …{len(flagged) - 12} more flagged tests in the report")
        na = [x for x in b["tests"] if not x["applicable"]]
        rest = b["tests_applicable"] - len(flagged)
        lines.append((f"    …and {rest} test(s) without anomalies" if flagged else f"    all {rest} applicable test(s) without anomalies")
                     + (f"; {len(na)} not applicable" if na else ""))
        if b["power"].get("statement"):
            lines.append(f"    power: {b['power']['statement']}")
        if b.get("exploitability_line"):
            lines.append(f"    {b['exploitability_line']}")
    lines.append(f"VERDICT: {report['verdict']} — {overall_line(report)}")
    return "\n".join(lines)


class Progress:
    """A progress bar with a total and a rate on a terminal (tqdm), silent when standard error is
    not a terminal or ``CI`` is set. Use it as a context manager::

        with progress_bar(total=len(tables), unit="table", desc="certifying") as bar:
            for t in tables:
                ...
                bar.update(1, postfix=t.name)

    ``bar.callback()`` gives ``f(done, total)`` for pipelines that report absolute progress.
    """

    def __init__(self, total: int | None = None, *, unit: str = "it", desc: str = "", enabled: bool | None = None, scale: bool = False, mininterval: float = 0.1):
        self.enabled = interactive() if enabled is None else enabled
        self._bar = None
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=f" {unit}", desc=desc, file=sys.stderr, unit_scale=scale, dynamic_ncols=True, leave=False, mininterval=mininterval)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1, postfix: str | None = None) -> None:
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix_str(postfix[:40], refresh=False)
            self._bar.update(n)

    def set_total(self, total: int) -> None:
        if self._bar is not None:
            self._bar.total = total
            self._bar.refresh()

    def set_description(self, desc: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(desc)

    def to(self, done: int, total: int | None = None, postfix: str | None = None) -> None:
        """Move to ``done`` of ``total`` (absolute)."""
        if self._bar is not None:
            if total is not None and self._bar.total != total:
                self._bar.total = total
            self.update(done - self._bar.n, postfix)

    def callback(self):
        return lambda done, total=None, postfix=None: self.to(done, total, postfix)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def progress_bar(total: int | None = None, *, unit: str = "it", desc: str = "", scale: bool = False, enabled: bool | None = None) -> Progress:
    """A :class:`Progress` bar (silent when piped or in CI). ``scale=True`` prints 1.2M for big totals;
    ``enabled=False`` silences it (None: on a terminal only)."""
    return Progress(total, unit=unit, desc=desc, scale=scale, enabled=enabled)
