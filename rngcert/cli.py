"""Command-line interface (click).

Exit codes (one table, documented in the README and in ``rngcert --help``):

====  =========================================================================
code  meaning
====  =========================================================================
0     PASS (or a command that certifies nothing finished normally)
10    SUSPECT: no family-wise rejection, but some raw p-value < alpha
11    INCONCLUSIVE: sample too small for the declared bias, or a test could not run
12    FAIL: some test rejects after Holm's correction at alpha
13    ALARM: ``rngcert watch`` saw the evidence cross its threshold
3     input or storage error: unreadable or empty log, nothing readable, bad option value;
      a store or report folder that cannot be read or written (corrupt, read-only, disk full)
4     equipment error: unknown or invalid wheel/procedure definition
1     unexpected internal error (a bug: please report it with the command line)
2     usage error (click: unknown option, missing argument)
====  =========================================================================
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import click
import numpy as np

from rngcert import __version__
from rngcert.errors import EquipmentError, InputError, RngcertError

EXIT = {"PASS": 0, "SUSPECT": 10, "INCONCLUSIVE": 11, "FAIL": 12}
EXIT_INPUT = 3
EXIT_EQUIPMENT = 4

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL · 13 ALARM (watch) ·
3 input or storage error · 4 equipment error · 2 usage error · 1 internal error."""

DEFAULT_LOG = "default-european-spins.csv"
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


def _fail(code: int, msg: str):
    click.echo(f"rngcert: error: {msg}", err=True)
    sys.exit(code)


def _parse_columns(items) -> dict[str, str]:
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


def _command_line() -> str:
    """The command as typed (for the report's provenance)."""
    ctx = click.get_current_context()
    args = sys.argv[1:] if ctx.info_name in sys.argv else []
    return " ".join(["rngcert"] + [shlex.quote(a) for a in args]) if args else ctx.command_path


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except EquipmentError as exc:
            _fail(EXIT_EQUIPMENT, str(exc))
        except (InputError, RngcertError) as exc:
            _fail(EXIT_INPUT, str(exc))
        except OSError as exc:  # a file the command reads or writes (input or storage error)
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            _fail(EXIT_INPUT, f"{where}{exc.strerror or exc}")
        except UnicodeDecodeError as exc:
            _fail(EXIT_INPUT, str(exc))
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: one line for the user, the traceback on request
            if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):  # a store fault not caught by rngcert.store
                _fail(EXIT_INPUT, f"storage error: {exc}")
            if os.environ.get("RNGCERT_DEBUG"):
                raise
            _fail(1, f"internal error ({type(exc).__name__}: {exc}); please report it with the command line (RNGCERT_DEBUG=1 shows the traceback)")


@click.group(cls=_Group, help=f"rngcert {__version__}: certify the randomness of casino gaming equipment.\n\n{EXIT_TABLE}")
@click.version_option(__version__, prog_name="rngcert")
def main():
    pass


# --------------------------------------------------------------------------- certify
@main.command(
    epilog="""\b
Examples:
  rngcert certify                      # the bundled default log (a simulated fair wheel)
  rngcert certify spins.csv --equipment european
  rngcert certify permanence_t5.txt --seed 1 --json > report.json
  rngcert certify live.csv --column result=number --column table=file
  rngcert certify CleanData.csv --equipment crazy-time \\
      --column result=WheelResult --column timestamp=DateTime
"""
    + "\n"
    + EXIT_TABLE
)
@click.argument("logs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--equipment", "-e", default="european", show_default=True, help="Packaged wheel id (european, american, money-wheel-52, crazy-time) or a wheel TOML file.")
@click.option("--column", "columns", multiple=True, metavar="OURS=THEIRS", help="Map a column name of the file, e.g. result=Number (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl", "permanence"]), default="auto", show_default=True, help="Log format.")
@click.option("--pool", is_flag=True, help="Pool all tables of the log into one sequence (default: certify each table).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification (family-wise) significance level.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed of every Monte Carlo p-value (recorded; default: fresh entropy).")
@click.option("--resamples", type=click.IntRange(min=99), default=9999, show_default=True, help="Monte Carlo replicates per test.")
@click.option("--min-bias", type=click.FloatRange(min=0, min_open=True), default=None, help="Declared minimum detectable single-pocket bias (0.2 = +20%); too small a sample gives INCONCLUSIVE.")
@click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True, help="Power for the power statement and --min-bias.")
@click.option("--max-rejected", type=click.FloatRange(0, 1), default=0.05, show_default=True, help="Share of unreadable rows above which every verdict is INCONCLUSIVE.")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder under which reports/<equipment>-<UTC time>/ is made.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json to standard output instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures (faster; the HTML has tables only).")
def certify(logs, equipment, columns, fmt, pool, alpha, seed, resamples, min_bias, power, max_rejected, outdir, as_json, no_plots):
    """Certify a wheel from spin logs: run the wheel battery per table and write a report.

    LOGS are CSV or JSON Lines spin logs (columns: result, and optionally spin_id, timestamp,
    table, dealer, direction, release_pocket, revolutions, void) or permanence lists (numbers
    separated by commas/whitespace). With no LOGS, the bundled default log is certified: a fair
    European wheel simulated by rngcert itself.

    Writes report.json, report.html and rejects.csv to reports/<equipment>-<UTC time>/ and exits
    with the verdict's code.
    """
    from rngcert.certify import certify_log
    from rngcert.equipment.wheel import load_wheel

    notes = []
    if not logs:
        p = default_log_path()
        logs = (p,)
        msg = f"no log given: certifying the bundled default log {p} (a fair European wheel simulated by rngcert; regenerate with: {DEFAULT_LOG_COMMAND})"
        notes.append(msg)
        click.echo(msg, err=True)
    wheel = load_wheel(equipment)
    cmd = _command_line()
    bar = None
    if interactive():
        from tqdm import tqdm

        bar = tqdm(desc="certifying", unit=" table", file=sys.stderr)

    def progress(msg):
        if bar is not None:
            bar.set_postfix_str(msg[:60])
            bar.update(1)

    cert = certify_log(
        logs,
        wheel,
        columns=_parse_columns(columns),
        fmt=fmt,
        pool=pool,
        alpha=alpha,
        seed=seed,
        n_resamples=resamples,
        required_bias=min_bias,
        power=power,
        command=cmd,
        figures=not no_plots,
        progress=progress,
        notes=notes,
        max_rejected_share=max_rejected,
    )
    if bar is not None:
        bar.close()
    emit_report(cert.report, cert.figures, cert.log.rejected, outdir, wheel.id, as_json)


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


# --------------------------------------------------------------------------- simulate
@main.group()
def simulate():
    """Produce logs from simulated equipment (fair or with planted biases)."""


def _split(spec: str, n: int, what: str) -> list[str]:
    parts = spec.split(":")
    if len(parts) != n:
        raise click.BadParameter(f"{spec!r} must have {n} ':'-separated parts", param_hint=what)
    return parts


@simulate.command(
    "wheel",
    epilog="""\b
Examples:
  rngcert simulate wheel --spins 50000 --seed 7 --out fair.csv
  rngcert simulate wheel --spins 50000 --pocket-bias 17:1.2 --out pocket17.csv
  rngcert simulate wheel --spins 50000 --sector-bias 32:5:1.1 --out sector.csv
  rngcert simulate wheel --spins 20000 --signature 10:7:1.15 --out dealer.csv
  rngcert simulate wheel --spins 100000 --source pcg64 --mapping modulo --word-bits 8 --out byte-mod37.csv
""",
)
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (arrangement must be known).")
@click.option("--spins", "-n", type=click.IntRange(min=1), default=10000, show_default=True, help="Number of spins, void ones included.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in the output's sidecar .json; default fresh entropy).")
@click.option("--source", default="pcg64", show_default=True, help="Bit generator: pcg64, philox, chacha, aes, sfc64, mt19937, threefry, xoshiro256, ...")
@click.option("--pocket-bias", multiple=True, metavar="POCKET:FACTOR", help="Multiply a pocket's weight, e.g. 17:1.2 for +20% (repeatable).")
@click.option("--sector-bias", multiple=True, metavar="START:WIDTH:FACTOR", help="WIDTH adjacent pockets from START get weight FACTOR.")
@click.option("--harmonic", default=None, metavar="AMPLITUDE[:PHASE_DEG]", help="Smooth rotor bias 1 + a·cos(angle − phase).")
@click.option("--signature", default=None, metavar="OFFSET:WIDTH:FACTOR", help="Dealer signature: landing offset sector centred OFFSET pockets past the reference, FACTOR times as likely.")
@click.option("--signature-dealer", type=click.IntRange(min=1), default=None, help="Only this dealer (1-based) has the signature.")
@click.option("--dealers", type=click.IntRange(min=1), default=1, show_default=True, help="Dealers, in shifts of 50 spins.")
@click.option("--release", is_flag=True, help="Also log the release pocket (signature measured from it).")
@click.option("--void-rate", type=click.FloatRange(0, 1, max_open=True), default=0.0, show_default=True, help="Share of void spins (< 3 revolutions).")
@click.option("--table", default="SIM-1", show_default=True, help="Table id written in the log.")
@click.option("--mapping", type=click.Choice(["modulo", "multiply-shift", "rejection"]), default=None, help="Electronic wheel: map raw words of --source to pockets by this method (see rngcert scaling).")
@click.option("--word-bits", type=click.IntRange(1, 64), default=32, show_default=True, help="With --mapping: bits per raw word (8 = a byte).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output CSV spin log.")
def simulate_wheel(equipment, spins, seed, source, pocket_bias, sector_bias, harmonic, signature, signature_dealer, dealers, release, void_rate, table, mapping, word_bits, out):
    """Write a spin log from a fair or deliberately biased simulated wheel.

    Draws come from the named bit generator seeded from one SeedSequence; the seed, source and
    library versions are written to OUT.json beside the log so the log can be regenerated.
    """
    from rngcert.collect.simulate import WheelBias, simulate_spins, write_spin_log
    from rngcert.collect.sources import generator, seed_sequence, versions
    from rngcert.equipment.wheel import load_wheel

    wheel = load_wheel(equipment)
    if not wheel.order_known:
        raise InputError(f"wheel {wheel.id!r} has no known arrangement; simulation needs one")
    positions, _ = wheel.token_table()

    def pos_of(label, what):
        key = str(label).strip().lower()
        if key not in positions:
            raise click.BadParameter(f"{label!r} is not a pocket/section of {wheel.id}", param_hint=what)
        return positions[key]

    try:
        pockets = tuple((pos_of(a, "--pocket-bias"), float(f)) for a, f in (_split(s, 2, "--pocket-bias") for s in pocket_bias))
        sectors = tuple((pos_of(a, "--sector-bias"), int(w), float(f)) for a, w, f in (_split(s, 3, "--sector-bias") for s in sector_bias))
        harm = None
        if harmonic:
            hp = harmonic.split(":")
            harm = (float(hp[0]), np.deg2rad(float(hp[1])) if len(hp) > 1 else 0.0)
        sig = None
        if signature:
            o, w, f = _split(signature, 3, "--signature")
            sig = (int(o), int(w), float(f))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    bias = WheelBias(pockets, sectors, harm, sig, None if signature_dealer is None else signature_dealer - 1)
    ss = seed_sequence(seed)
    rng = generator(source, ss)
    if mapping is not None and bias != WheelBias():
        raise click.BadParameter("--mapping simulates an electronic wheel from raw words; it takes no planted bias", param_hint="--mapping")
    chunk = 1_000_000
    bar = None
    if interactive() and spins > chunk:
        from tqdm import tqdm

        bar = tqdm(total=spins, unit=" spins", desc="simulating", file=sys.stderr)
    prev = None
    with open(out, "wb") as fh:
        for first in range(0, spins, chunk):
            m = min(chunk, spins - first)
            sim = simulate_spins(wheel, m, rng, bias=bias, void_rate=void_rate, dealers=dealers, with_release=release, first_spin=first, start=prev)
            if mapping is not None:
                from rngcert.collect.bits import BIT_GENERATORS as _BG
                from rngcert.collect.simulate import mapped_positions

                sim.positions, _rej = mapped_positions(wheel, m, rng.bit_generator, method=mapping, word_bits=word_bits, native_bits=_BG[source.lower()][1])
            prev = int(sim.positions[-1])
            write_spin_log(fh, wheel, sim, table=table, first_spin=first, header=first == 0)
            if bar is not None:
                bar.update(m)
    if bar is not None:
        bar.close()
    meta = {
        "rngcert": __version__,
        "equipment": wheel.id,
        "spins": spins,
        "seed_entropy": str(ss.entropy),
        "source": source,
        "bias": bias.describe(wheel),
        "void_rate": void_rate,
        "dealers": dealers,
        "release": release,
        "mapping": None if mapping is None else {"method": mapping, "word_bits": word_bits},
        **versions(),
    }
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    click.echo(f"wrote {spins} spins to {out} (seed entropy {ss.entropy}, source {source}); metadata in {out}.json", err=True)


# --------------------------------------------------------------------------- equipment
@main.command("equipment", epilog="Example:\n\n  rngcert equipment european")
@click.argument("wheel", required=False)
def equipment_cmd(wheel):
    """List the packaged wheels, or show one wheel's definition as JSON."""
    from rngcert.equipment.wheel import load_wheel, packaged_wheels

    if wheel is None:
        for w in packaged_wheels():
            d = load_wheel(w)
            click.echo(f"{w:<16} {d.k:>3} {'pockets' if d.kind == 'roulette' else 'sections'}  {d.name}")
        return
    click.echo(json.dumps(load_wheel(wheel).describe(), indent=1))


from rngcert.commands.rng import bits as _bits_cmd, scaling as _scaling_cmd  # noqa: E402

from rngcert.commands.power import house_edge as _house_edge_cmd, power as _power_cmd  # noqa: E402
from rngcert.commands.shuffle import shuffle as _shuffle_grp  # noqa: E402

main.add_command(_bits_cmd)
main.add_command(_scaling_cmd)
main.add_command(_shuffle_grp)
main.add_command(_power_cmd)
main.add_command(_house_edge_cmd)
from rngcert.commands.store import audit as _audit_cmd, ingest as _ingest_cmd, rejects as _rejects_cmd, watch as _watch_cmd  # noqa: E402

for _c in (_ingest_cmd, _rejects_cmd, _audit_cmd, _watch_cmd):
    main.add_command(_c)

if __name__ == "__main__":  # pragma: no cover
    main()
