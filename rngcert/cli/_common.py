"""Helpers shared by every command: exit codes, the error handler, option parsing, the
terminal summary and the report emitter."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import sys
import warnings
from pathlib import Path
from typing import Callable, Sequence

import click

from rngcert.errors import EquipmentError, InputError, RngcertError
from rngcert.report.bidi import visible_bidi

EXIT = {"PASS": 0, "SUSPECT": 10, "INCONCLUSIVE": 11, "FAIL": 12}
EXIT_INPUT = 3
EXIT_EQUIPMENT = 4

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL · 13 ALARM (watch) ·
14 spins lost (watch: a rotation not seen) · 3 input or storage error · 4 equipment error · 2 usage error · 1 internal error ·
130 stopped by Ctrl-C · 143 stopped by SIGTERM (temporary folders removed; record and watch --follow: stop as on Ctrl-C, exit 0)."""

DEFAULT_LOG = "default-european-spins.csv"
#: The wheel of the bundled default log.
DEFAULT_LOG_WHEEL = "european"
DEFAULT_LOG_COMMAND = (
    "rngcert simulate wheel --equipment european --spins 20000 --seed 2026 --dealers 4 "
    "--release --void-rate 0.01 --table DEMO-1 --out data/default-european-spins.csv --force"
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


def bar_size() -> tuple[int, int] | None:
    """(columns, rows) for a progress bar on standard error: None when the terminal reports its
    size (the bar then follows resizes), else ``COLUMNS``/``LINES`` or 80x24. A terminal that
    reports 0x0 (a pty opened without a window size: ``docker exec -t``, ``script``, some IDE
    consoles and CI runners with a tty) made tqdm draw nothing at all."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        if size.columns > 0 and size.lines > 0:
            return None
    except (OSError, ValueError, AttributeError):
        pass

    def env(name: str, default: int) -> int:
        try:
            v = int(os.environ.get(name, ""))
        except ValueError:
            return default
        return v if v > 0 else default

    return env("COLUMNS", 80), env("LINES", 24)


def echo_out(message: str = "") -> None:
    """``click.echo`` to standard output that outlives its reader: after a broken pipe (``rngcert
    ingest … | head`` has read enough) the rest of the output is discarded and the command goes on.
    A command that stores or records (ingest, record) must not stop half-way, with exit 0, because
    the reader of its progress lines went away; a command that only prints may stop (see ``invoke``)."""
    try:
        click.echo(message)
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file descriptor (a test runner's stream)
            pass


def fail(code: int, msg: str):
    """Say ``msg`` on standard error (and, with ``--json``, as a JSON error document on standard output: :func:`json_error`)
    and exit with ``code``."""
    json_error(code, msg)
    click.echo(f"rngcert: error: {msg}", err=True)
    sys.exit(code)


#: ``ctx.meta`` key (shared by every context of one run): "document" or "lines" when the command was given ``--json``.
JSON_META = "rngcert.json"
_JSON_DONE = "rngcert.json_error_done"
_JSON_PARTIAL = "rngcert.json_partial"


def json_mode(group: click.Group, ctx: click.Context, tokens: Sequence[str]) -> str | None:
    """Whether the command that ``tokens`` (the arguments after ``rngcert``) name was given ``--json``: "lines" for
    ``watch`` (JSON Lines), "document" for any other command that has the option, else None. Read from the tokens
    themselves, so that an error while the options are parsed (exit 2) is answered in JSON too."""
    cmd, i = group, 0
    while isinstance(cmd, click.Group) and i < len(tokens):
        cmd, i = cmd.get_command(ctx, tokens[i]), i + 1
    if cmd is None or not any(p.name == "as_json" for p in cmd.params):
        return None
    rest = list(tokens[i:])
    rest = rest[:rest.index("--")] if "--" in rest else rest
    return ("lines" if cmd.name == "watch" else "document") if "--json" in rest else None


def json_error(code: int, msg: str) -> None:
    """With ``--json``, the error as a JSON document on standard output, ``{"error": msg, "exit_code": code}``
    (``watch``'s JSON Lines: one more line, ``{"event": "error", ...}``), so that a program reading the
    output gets JSON on every exit; once per run, nothing without ``--json``. What the command had done
    (:func:`json_partial`) comes first in it."""
    ctx = click.get_current_context(silent=True)
    mode = ctx.meta.get(JSON_META) if ctx is not None else None
    if not mode or ctx.meta.get(_JSON_DONE):
        return
    ctx.meta[_JSON_DONE] = True
    doc = {"event": "error"} if mode == "lines" else {}
    done = ctx.meta.get(_JSON_PARTIAL)
    try:
        part = done() if done is not None else {}
    except Exception:  # noqa: BLE001 - an error being reported: never a second one from what was done
        part = {}
    echo_out(json.dumps({**doc, **part, "error": msg, "exit_code": code}, ensure_ascii=False, default=str))


def json_partial(done: Callable[[], dict]) -> None:
    """Name what the command has done so far, for its ``--json`` error document (:func:`json_error`): ``done()``, called
    when an error, Ctrl-C or SIGTERM stops it, gives the keys to add (``ingest``: the files committed before the stop)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_JSON_PARTIAL] = done


#: Largest values of the options that size a run's arrays or its length (a usage error above, exit 2): a typo of a few
#: zeros (``--shoes 20000000000``) is refused at once instead of hanging, or failing with an internal error, minutes later.
#: Each is far above what a lab runs and near what this kind of machine can hold (a run that still does not fit in memory
#: stops with exit 3, "not enough memory").
MAX_RESAMPLES = 10_000_000
MAX_SHOES = 1_000_000
MAX_SHOE_TABLES = 100_000
MAX_BURN_IN = 1_000
MAX_BITS_LENGTH = 1_000_000_000
MAX_BITS_STREAMS = 1_000_000
#: ``bits --source``: streams x length (each option under its own largest value, their product was 10^15 bits: years of work)
MAX_BITS_TOTAL = 100_000_000_000
MAX_SIMULATED_SPINS = 10_000_000_000


class Real(click.FloatRange):
    """click's ``FloatRange`` that also refuses ``nan``, ``inf`` and ``-inf`` (a usage error, exit 2): ``nan`` passes
    every comparison of a range check, and no option of rngcert means "forever" by ``inf``.

    Parameters
    ----------
    *args, **kwargs
        Those of :class:`click.FloatRange` (none: any finite number).
    """

    def _describe_range(self) -> str:
        # click writes an unbounded range as "x<=None" in --help; an unbounded Real has no range to state
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv


def known_source(ctx, param, value):
    """Callback of ``--source``: a bit generator rngcert does not know is a usage error (exit 2) that lists the names."""
    if value is None:
        return value
    from rngcert.simulate.sources import BIT_GENERATORS

    if str(value).lower() not in BIT_GENERATORS:
        raise click.BadParameter(f"{value!r} is not a known bit generator; valid names: {', '.join(sorted(BIT_GENERATORS))}", ctx, param)
    return value


def _table_id(check: str):
    """A callback of ``--table`` that refuses, as a usage error (exit 2), a table id that ``check`` (``"store"``: the
    store's rule, :func:`rngcert.collect.store.ingest.check_table_name`; ``"csv"``: a written log's,
    :func:`rngcert.simulate.wheel.check_written_table`) refuses."""

    def callback(ctx, param, value):
        if value is None:
            return value
        if check == "store":
            from rngcert.collect.store.ingest import check_table_name as rule
        else:
            from rngcert.simulate.wheel import check_written_table as rule
        try:
            rule(value)
        except InputError as exc:
            raise click.BadParameter(str(exc).removeprefix(f"--table {value!r}: "), ctx, param) from None
        return value

    return callback


#: ``--table`` of ingest (the store's rule) and of the commands that write a log (simulate, record).
store_table_id, written_table_id = _table_id("store"), _table_id("csv")


def existing_files(_ctx, param, value):
    """Callback of an option naming files that must exist (``--sign``, ``verify --key``): one that is not there is an
    input error (exit 3, as a missing log is), named with the option; a folder is still a usage error (exit 2)."""
    for p in value if isinstance(value, tuple) else (value,):
        if p is not None and not Path(p).exists():
            raise InputError(f"{param.opts[0]} {p}: no such file")
    return value


def refuse_existing(out: Path, force: bool, *extra: Path) -> None:
    """Refuse (exit 3) to write ``out`` or a file written beside it (its ``.json`` sidecar, ``extra``) that exists,
    unless ``force``: a simulated log never replaces a lab's file without being asked to, as ``keygen`` does."""
    if force:
        return
    for p in (Path(out), Path(str(out) + ".json"), *extra):
        if p.exists() or p.is_symlink():
            fail(EXIT_INPUT, f"{p} exists; use --force to overwrite it")


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
    if not out:
        return out
    from rngcert.collect.spinlog.core import KNOWN_COLUMNS  # here: a command given --column reads a log anyway

    unknown = sorted(set(out) - set(KNOWN_COLUMNS))
    if unknown:  # wrong on the command line alone, whatever the log holds: a usage error, as a malformed mapping is
        raise click.BadParameter(f"{', '.join(map(repr, unknown))} {'is not a spin-log column' if len(unknown) == 1 else 'are not spin-log columns'}; "
                                 f"known: {', '.join(KNOWN_COLUMNS)}", param_hint="--column")
    return out


def given(*names: str) -> list[str]:
    """The options among ``names`` (parameter names, e.g. ``"bit_order"``) that the user gave on the
    command line or in the environment, as they are typed (``--bit-order``); a default is not given."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    spelled = {p.name: (p.opts[0] if p.opts else p.name) for p in ctx.command.params}
    out = []
    for n in names:
        src = ctx.get_parameter_source(n)
        if src is not None and src not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            out.append(spelled.get(n, n))
    return out


def refuse_given(names: Sequence[str], why: str) -> None:
    """A usage error (exit 2) when the user gave any of the options ``names`` where they would take no
    effect: an option a user gives is applied or refused, never silently ignored."""
    used = given(*names)
    if used:
        raise click.UsageError(f"{', '.join(used)}: {why}")


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


#: Exit codes after which the process ends at once (:func:`exit_now`): nothing is left to write.
HARD_EXIT_CODES = (1, EXIT_INPUT, EXIT_EQUIPMENT)


def exit_now(code) -> None:
    """End the process with ``code`` right away after an error (exit 1, 3 or 4), standard output
    and error flushed, without the interpreter's shutdown.

    A library's native thread that is still busy at shutdown (pyarrow's CSV read-ahead calling
    into a Python file after the first batch raised an error) made the interpreter abort with
    SIGABRT (exit 134) in about half the runs of a mistyped ``--column``. The readers are closed
    on error (:func:`rngcert.collect.csvstream.iter_csv_batches`); this is the guarantee that the
    documented code is the one returned. Only in the rngcert process itself (the ``rngcert``
    script or ``python -m rngcert``): under click's test runner (standard streams replaced), when
    another program calls ``main``, or with ``RNGCERT_DEBUG``, the normal ``SystemExit`` goes on."""
    if not isinstance(code, int) or code not in HARD_EXIT_CODES or os.environ.get("RNGCERT_DEBUG"):
        return
    if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    if not (argv0.name in ("rngcert", "rngcert.exe") or argv0.parts[-2:] in (("rngcert", "__main__.py"), ("cli", "__main__.py"))):
        return  # rngcert's main called from another program: its SystemExit is that program's to handle
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            pass
    os._exit(code)


class _VisibleBidi:
    """A terminal's text stream that shows Unicode bidirectional controls as ``[U+202E]`` instead of passing them to
    the terminal (one in a table id read from a log would reorder the verdict line around it where the terminal
    implements the bidirectional algorithm, as the HTML report would: :mod:`rngcert.report.bidi`)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(visible_bidi(text) if isinstance(text, str) else text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def show_bidi_on_terminals() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`_VisibleBidi` where they are terminals (once); a pipe or a
    file gets the text as read (``--json`` output is report.json's text)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):  # a closed or unusual stream
            tty = False
        if tty and not isinstance(stream, _VisibleBidi):
            setattr(sys, name, _VisibleBidi(stream))


#: Exit codes of a run stopped from outside: Ctrl-C (SIGINT) and SIGTERM, the shell's 128 + the signal's number.
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


#: Whether SIGTERM stops the running command as Ctrl-C does (:func:`sigterm_stops_like_ctrl_c`: ``record``).
_SIGTERM_LIKE_CTRL_C = False


def _on_sigterm(signum, frame):
    """SIGTERM handler of the command line (:class:`_SigtermHandled`). ``record`` (:func:`sigterm_stops_like_ctrl_c`)
    stops as on Ctrl-C (:class:`rngcert.errors.Terminated`: the running game written); a second SIGTERM, or any other
    command, ends at once like the default action, after removing the temporary folders this process made
    (:func:`rngcert.scratch.remove_own`), saying so (in JSON too with ``--json``), with exit 143 (128 + 15).
    Unwinding every command by an exception was tried: raised where the main thread stood, it can land in a
    finalizer, where Python ignores it (a shuffle certification ran on to its end)."""
    global _SIGTERM_LIKE_CTRL_C
    if _SIGTERM_LIKE_CTRL_C:
        _SIGTERM_LIKE_CTRL_C = False  # the next SIGTERM ends the process at once
        from rngcert.errors import Terminated

        raise Terminated()
    import rngcert.scratch as scratch

    if "rngcert.pipeline.parallel" in sys.modules:  # a pool may run: its workers end (and are waited for) first
        sys.modules["rngcert.pipeline.parallel"].end_workers()
    gone = scratch.remove_own()
    msg = "stopped by SIGTERM before the command ended: what it had not finished was not written" + (
        f" (its {len(gone)} temporary folder(s) removed)" if gone else "")
    try:
        json_error(EXIT_TERMINATED, msg)
        click.echo(f"rngcert: error: {msg}", err=True)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said there
        pass
    os._exit(EXIT_TERMINATED)


def sigterm_stops_like_ctrl_c() -> None:
    """Make SIGTERM stop this command as Ctrl-C does (a :class:`rngcert.errors.Terminated`, a KeyboardInterrupt): for
    ``record``, which a service manager stops with SIGTERM and which then writes the running game with its result, and
    for ``watch`` that follows a log, which then sums up what it read."""
    global _SIGTERM_LIKE_CTRL_C
    _SIGTERM_LIKE_CTRL_C = True


class _SigtermHandled:
    """While a command runs in the main thread, SIGTERM goes to :func:`_on_sigterm` instead of ending the process
    where it stood: the temporary ``rngcert-*`` folders of the remedies, of an id sort, of an ingest's spool or of an
    export were left behind. The handler before is put back at the end (a program or test runner calling ``main``
    keeps its own). Pool workers put their own in its place (:func:`rngcert.pipeline.parallel._worker_sigterm`)."""

    def __enter__(self):
        import signal
        import threading

        global _SIGTERM_LIKE_CTRL_C
        _SIGTERM_LIKE_CTRL_C = False
        self.before = None
        if threading.current_thread() is threading.main_thread():
            self.before = signal.signal(signal.SIGTERM, _on_sigterm)
        return self

    def __exit__(self, *exc):
        import signal

        global _SIGTERM_LIKE_CTRL_C
        _SIGTERM_LIKE_CTRL_C = False
        if self.before is not None:
            signal.signal(signal.SIGTERM, self.before)
        return False


def _ctrl_c_in_a_query(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) is DuckDB's answer to Ctrl-C during a query: DuckDB handles
    SIGINT itself while a query runs and raises ``RuntimeError('Query interrupted')`` (``duckdb.InterruptException``
    in some versions) instead of KeyboardInterrupt, which was reported as an internal error (exit 1)."""
    seen = 0
    while exc is not None and seen < 8:
        duckdb = sys.modules.get("duckdb")
        if duckdb is not None and isinstance(exc, getattr(duckdb, "InterruptException", ())):
            return True
        if type(exc) is RuntimeError and str(exc) == "Query interrupted":
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class Group(click.Group):
    def main(self, *args, **kwargs):
        show_bidi_on_terminals()
        try:
            with _SigtermHandled():
                return super().main(*args, **kwargs)
        except SystemExit as exc:
            exit_now(exc.code)
            raise

    def invoke(self, ctx):
        try:
            if ctx.parent is None:  # (a command module that cannot be imported is an internal error, below)
                ctx.meta[JSON_META] = json_mode(self, ctx, [*getattr(ctx, "_protected_args", ()), *ctx.args])
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                try:
                    return super().invoke(ctx)
                except Exception as exc:
                    if _ctrl_c_in_a_query(exc):  # DuckDB turns Ctrl-C during a query into an error of its own
                        raise KeyboardInterrupt from exc
                    raise
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
        except MemoryError as exc:  # a log or an option's value too large for this machine: not a bug, and said so
            fail(EXIT_INPUT, "not enough memory for this run: the input, or an option's value (--shoes, --length, --streams, "
                             "--resamples …), is too large for this machine's memory; the run stopped and its report was not written"
                             + (f" ({exc})" if str(exc) else ""))
        except click.ClickException as exc:  # a usage error (exit 2): click says it on standard error
            json_error(exc.exit_code, exc.format_message())
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C (or SIGTERM as Ctrl-C, record): the run unwound; said, with its own exit code
            from rngcert.errors import Terminated

            how, code = ("SIGTERM", EXIT_TERMINATED) if isinstance(exc, Terminated) else ("Ctrl-C", EXIT_INTERRUPTED)
            fail(code, f"stopped by {how} before the command ended: what it had not finished was not written")
        except (click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except Exception as exc:  # a bug: one line for the user, the traceback on request
            if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):  # a store fault not caught by the store layer
                fail(EXIT_INPUT, f"storage error: {exc}")
            if os.environ.get("RNGCERT_DEBUG"):
                raise
            fail(1, f"internal error ({type(exc).__name__}: {exc}); please report it with the command line (RNGCERT_DEBUG=1 shows the traceback)")


def report_options(f):
    """``--pdf`` and ``--sign KEY``: options of every command that writes a report."""
    f = click.option("--sign", "sign_key", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="KEY", callback=existing_files,
                     help="Sign report.json with this Ed25519 private key (PEM; make one with `rngcert keygen`).")(f)
    f = click.option("--pdf", "pdf", is_flag=True, help="Also write report.pdf: a one-page certificate, then the report (needs the pdf extra).")(f)
    f = click.option("--subject", "subject_text", default=None, metavar="TEXT", expose_value=False, callback=_keep_subject,
                     help="The unit under test in words (e.g. a wheel's serial number and make), named on the certificate and in report.json.")(f)
    return f


def _keep_subject(ctx: click.Context, _param, value):
    """``--subject``: kept in the context for :func:`emit_report` (every command with :func:`report_options`)."""
    if value is not None:
        ctx.meta["rngcert.subject"] = value
    return value


def subject_option() -> str | None:
    """The ``--subject`` of the running command, or None."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("rngcert.subject") if ctx is not None else None


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

    paths = write_report(report, figures, rejected, report_dir(outdir, equipment_id), pdf=pdf, sign_key=sign_key, subject=subject_option())
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
    from rngcert.report.text import clip

    return clip(s, n)


#: Width the summary's free text (notes, findings, next steps, reasons) is wrapped to when standard
#: output is not a terminal (the text was cut here with "…" before); on a terminal, its width.
WRAP_WIDTH = 240


def _wrap_width() -> int:
    try:
        if sys.stdout.isatty():
            return max(60, os.get_terminal_size(sys.stdout.fileno()).columns or WRAP_WIDTH)
    except (OSError, ValueError, AttributeError):
        pass
    return WRAP_WIDTH
_COMMAND = re.compile(r"rngcert (?:certify|simulate|bits|scaling|shuffle|power|house-edge|ingest|rejects|audit|watch|export|verify|keygen|equipment)"
                      r"(?: [^;)\n]*[^;)\n.,\s])?")


def _wrap(prefix: str, s: str, width: int | None = None) -> list[str]:
    """``prefix + s`` wrapped to ``width`` columns, continuation lines indented under the text;
    never cut. A command quoted in the text (``rngcert …`` up to a ``;``, ``)`` or the end) is
    kept whole on one line so that it can be copied, and no option is split at its hyphens."""
    import textwrap

    width = width or _wrap_width() + len(prefix)  # (the text alone was cut at WRAP_WIDTH characters before)
    kept = _COMMAND.sub(lambda m: m.group(0).replace(" ", "\u00a0"), s)
    out = textwrap.wrap(kept, width=width, initial_indent=prefix, subsequent_indent=" " * len(prefix), break_long_words=False,
                        break_on_hyphens=False)
    return [ln.replace("\u00a0", " ") for ln in out] or [prefix.rstrip()]


def _input_name(path: str, inputs: list) -> str:
    """An input as the terminal names it: its file name, or the path given where the name alone would not tell it
    (two inputs of one name in different folders, a process substitution's ``/dev/fd/63``, a generator)."""
    name = Path(path).name
    if path.startswith(("generator:", "/dev/fd/", "/proc/")) or sum(Path(str(g["path"])).name == name for g in inputs) > 1:
        return path
    return name


# long: the terminal summary in the report's order, one short block per part; splitting it scatters the order
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
        lines += _wrap("  rule: ", rule)
    for f in report["inputs"]:
        sha = f"  sha256 {f['sha256'][:16]}…" if f.get("sha256") else ""
        lines.append(f"data: {_input_name(str(f['path']), report['inputs'])}: {f['summary']}{sha}")
    if report.get("period"):
        # the times are UTC (a timestamp without a zone read as UTC, as a note says): without the zone they read as local times
        lines.append(f"  period: {report['period'].get('first')} to {report['period'].get('last')} (UTC)")
    for n in report["notes"]:
        lines += _wrap("  note: ", n)
    word = report.get("section_word", "Table").lower().rstrip(":")
    unit = report.get("unit", "spins")
    # the tables that are not PASS first, a line that several tables share said once with their names (issue 24)
    for key, head, cap in (("key_findings", "key findings:", 8), ("next_steps", "next steps:", 5)):
        items = text.grouped(tables, key)
        if items:
            lines.append(head)
            lines += [ln for k in items[:cap] for ln in _wrap("  - ", f"{text.tables_label(k['tables'], word, 12) + ': ' if multi else ''}{k['text']}")]
            if len(items) > cap:
                lines.append(f"  …and {len(items) - cap} more in the report")
    if multi:
        wid = min(36, max(len(str(t["table"])) for t in tables))  # a longer id is cut with "…", never to a bare prefix
        lines.append(f"{word}s ({len(tables)}):")
        for t in text.by_severity(tables):
            b = t["battery"]
            if b["verdict"] == "PASS":
                continue
            lines.append(f"  {_clip(str(t['table']), wid):<{wid}} {t['n']:>8,} {unit}  {b['verdict']:<12} {_clip(text.headline(t), 110)}")
        for g in text.grouped([t for t in tables if t["battery"]["verdict"] == "PASS"], "headline"):
            if len(g["tables"]) == 1:
                t = next(t for t in tables if t["table"] == g["tables"][0])
                lines.append(f"  {_clip(str(t['table']), wid):<{wid}} {t['n']:>8,} {unit}  {'PASS':<12} {_clip(g['text'], 110)}")
            else:
                n = sum(int(t["n"]) for t in tables if t["table"] in g["tables"])
                lines.append(f"  {len(g['tables'])} {word}s PASS ({n:,} {unit}): {_clip(g['text'], 160)}")
                lines.append(f"    {', '.join(map(str, g['tables']))}")
    else:
        t = tables[0]
        b = t["battery"]
        void = f", {t['void']} void" if unit == "spins" else ""
        one = unit[:-1] if t["n"] == 1 and unit.endswith("s") else unit  # "1 stream", not "1 streams"
        lines.append(f"{word} {t['table']}: {t['n']:,} {one}{void} → {b['verdict']}")
        for n in t["notes"]:
            if n not in report["notes"]:  # a note of the run and of its one table is printed once
                lines += _wrap("    note: ", n)
        if b["verdict"] != "PASS":
            for reason in b["reasons"]:
                lines += _wrap("    why: ", reason)
        flagged = text.flagged(b)
        for x in flagged[:12]:
            tag = "REJECTED (Holm)" if x["rejected_familywise"] else "raw p < alpha"
            lines.append(f"    {x['requirement']:<16} {x['name']:<24} p {text.p_is(x)}  Holm p {text.p_is(x, 'pvalue_holm')}  {tag}")
        if len(flagged) > 12:
            lines.append(f"    …{len(flagged) - 12} more flagged tests in the report")
        na = [x for x in b["tests"] if not x["applicable"]]
        rest = b["tests_applicable"] - len(flagged)
        lines.append((f"    …and {rest} test(s) without anomalies" if flagged else f"    all {rest} applicable test(s) without anomalies" if rest
                      else "    no test could run")
                     + (f"; {len(na)} not applicable" if na else ""))
        if b["power"].get("statement"):
            lines.append(f"    power: {b['power']['statement']}")
        if b.get("exploitability_line"):
            lines.append(f"    {b['exploitability_line']}")
        if b.get("rage_line"):
            lines.append(f"    {b['rage_line']}")
    from rngcert.pipeline.standards import terminal_lines

    lines += terminal_lines(report)
    demo = " (DEMONSTRATION DATA: a wheel simulated by rngcert, no equipment certified)" if (report.get("unit_under_test") or {}).get("demonstration") else ""
    lines.append(f"VERDICT: {report['verdict']}{demo} — {_without_verdict(overall_line(report), report['verdict'])}")
    return "\n".join(lines)


def _without_verdict(line: str, verdict: str) -> str:
    """``line`` without a leading ``"VERDICT: "`` that the caller has just printed ("FAIL — Pocket 9 ...", not
    "FAIL — FAIL: pocket 9 ...")."""
    if not line.startswith(f"{verdict}: "):
        return line
    rest = line[len(verdict) + 2:]
    return rest[:1].upper() + rest[1:]


def audit_overview(tables: Sequence[dict]) -> list[str]:
    """The closing lines of ``audit --all``: the tables that are not PASS first, each with what decided it,
    then the PASS tables, identical lines said once with the count and every name (issue 24)."""
    from rngcert.battery.core import worst
    from rngcert.report import text

    lines = [f"audit of {len(tables)} tables: {worst([t['battery']['verdict'] for t in tables])} ({text.verdict_counts(tables)})"]
    for t in text.by_severity(tables):
        if t["battery"]["verdict"] != "PASS":
            lines.append(f"  {t['table']}: {t['battery']['verdict']} — {_clip(_without_verdict(text.deciding(t), t['battery']['verdict']), 200)}")
    for g in text.grouped([t for t in tables if t["battery"]["verdict"] == "PASS"], "headline"):
        lines.append(f"  {len(g['tables'])} table{'s' if len(g['tables']) > 1 else ''} PASS: {_clip(g['text'], 160)}")
        lines.append(f"    {', '.join(map(str, g['tables']))}")
    return lines


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

            size = bar_size()
            self._bar = tqdm(total=total, unit=f" {unit}", desc=desc, file=sys.stderr, unit_scale=scale, dynamic_ncols=size is None,
                             ncols=size and size[0], nrows=size and size[1], leave=False, mininterval=mininterval)
            # a stage that reports only when it ends (one large table) would freeze the bar for minutes:
            # a daemon thread redraws it every second, so the elapsed time moves
            import threading

            self._stop = threading.Event()
            self._ticker = threading.Thread(target=self._tick, name="rngcert-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            bar = self._bar
            if bar is not None:
                try:
                    bar.refresh()
                except (AttributeError, ValueError, OSError):  # closed meanwhile
                    return

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
            self._stop.set()
            self._ticker.join()
            self._bar.close()
            self._bar = None


def progress_bar(total: int | None = None, *, unit: str = "it", desc: str = "", scale: bool = False, enabled: bool | None = None) -> Progress:
    """A :class:`Progress` bar (silent when piped or in CI). ``scale=True`` prints 1.2M for big totals;
    ``enabled=False`` silences it (None: on a terminal only)."""
    return Progress(total, unit=unit, desc=desc, scale=scale, enabled=enabled)
