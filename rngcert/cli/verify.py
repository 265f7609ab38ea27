"""``rngcert verify``: check a report folder (content hash, files, inputs, signature, rerun);
``rngcert keygen``: make the Ed25519 key pair that ``--sign`` and ``verify --key`` use."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from rngcert import __version__
from rngcert.cli._common import EXIT, existing_files, progress_bar
from rngcert.errors import InputError

#: Exit codes of ``verify`` (the verdict codes, read as "the report is ..."): only a signature checked
#: with a trusted key gives 0; a report whose hashes agree but that nothing authenticates is INTACT (10).
VERIFY_EXIT = {"VERIFIED": EXIT["PASS"], "INTACT": EXIT["SUSPECT"], "INCOMPLETE": EXIT["INCONCLUSIVE"], "NOT VERIFIED": EXIT["FAIL"]}


@click.command(
    "verify",
    epilog="""\b
Examples:
  rngcert verify reports/european-20261201T101500Z
  rngcert verify reports/european-20261201T101500Z spins.csv          # the log, wherever it is now
  rngcert verify reports/european-20261201T101500Z spins.csv --rerun  # and recompute every statistic
  rngcert verify reports/bits-20261201T101500Z --key lab.pub          # the lab's signature
  export RNGCERT_TRUSTED_KEYS=/etc/rngcert/keyring.pem                # pin the lab's keys once:
  rngcert verify reports/bits-20261201T101500Z                        # signatures are then required

\b
Levels and exit codes:
  0  VERIFIED      every hash matches and the signature verifies with a trusted key (--key,
                   --keyring or RNGCERT_TRUSTED_KEYS): intact, and signed by that key's holder
  10 INTACT        every hash matches, but no trusted key was given (or the report is unsigned
                   and --allow-unsigned): the files agree with each other, nothing more; anyone
                   with rngcert can re-seal an edited report (--rerun recomputes the verdict)
  11 INCOMPLETE    something could not be checked (an input not found, nothing to rerun,
                   a recorded file missing, a file in the folder that no hash covers)
  12 NOT VERIFIED  a hash, the signature, the signing policy (a pinned key and no signature)
                   or a recomputed statistic differs
  3 no report there or an unreadable key · 2 usage error · 1 internal error.""",
)
@click.argument("report_dir", type=click.Path(path_type=Path))
@click.argument("logs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--key", "public_key", type=click.Path(dir_okay=False, path_type=Path), multiple=True, metavar="PUB", callback=existing_files,
              help="A trusted Ed25519 public key (PEM): the report must be signed by it (or by another trusted key). Repeatable.")
@click.option("--keyring", type=click.Path(dir_okay=False, path_type=Path), multiple=True, metavar="FILE", callback=existing_files,
              help="A keyring of trusted public keys (PEM blocks and/or base64 lines); default: the files named by "
                   "RNGCERT_TRUSTED_KEYS (separated by the path separator). With trusted keys, an unsigned report fails.")
@click.option("--allow-unsigned", is_flag=True, help="With trusted keys, accept an unsigned report as INTACT instead of failing it.")
@click.option("--rerun", is_flag=True, help="Recompute the report from its inputs (LOGS or the recorded paths) and compare every statistic.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def verify(report_dir, logs, public_key, keyring, allow_unsigned, rerun, as_json):
    """Check that a report folder is what rngcert wrote, for the inputs it names.

    Checks the SHA-256 of report.json's canonical content (and that the file is in the layout
    rngcert writes, so any changed byte is caught), the SHA-256 of report.html, report.pdf and
    rejects.csv, the SHA-256 of every input (LOGS given here, matched by hash or name, else the
    path recorded in the report), and the Ed25519 signature when there is one (against --key when
    given). A file in the folder that the report does not record fails when it is named as
    rngcert's own files are (report.pdf, report.html, rejects.csv) and is "not checked" otherwise.
    With --rerun, the report is recomputed from the inputs with the recorded options and
    seed, and every test's statistic, df, p-value, Holm p-value and n, and every verdict, must
    be the same; a lab's standard file is given among LOGS (matched by its SHA-256) or read at
    its recorded path.

    Only a signature checked with a trusted key makes a report VERIFIED; without one the best
    result is INTACT (exit 10), which an edited and re-sealed report also reaches.
    """
    from rngcert.report import verify as vmod

    trusted = [vmod.load_public_key(k) for k in public_key]
    if keyring:
        for f in keyring:
            trusted += vmod.load_keyring(f)
        sources = [str(f) for f in keyring]
    else:
        env_keys, sources = vmod.trusted_keys_from_env()
        trusted += env_keys
    v = vmod.verify_report(report_dir, logs, trusted_keys=trusted, require_signature=not allow_unsigned)
    if rerun:
        _rerun(v, logs)
    if as_json:
        d = v.to_dict()
        d["trusted_keys"] = {"count": len(trusted), "from": [str(k) for k in public_key] + sources}
        click.echo(json.dumps(d, indent=1))
    else:
        rep = v.report or {}
        integ = rep.get("integrity") if isinstance(rep.get("integrity"), dict) else {}
        click.echo(f"rngcert verify {v.folder}")
        if rep:
            click.echo(f"  {rep.get('title', 'report')}: {rep.get('subject', '')} · verdict {rep.get('verdict')} · report id {integ.get('report_id', '–')}")
        if v.signed:
            click.echo(f"  signed: {v.signed_line}")
        where = ", ".join([str(k) for k in public_key] + sources)
        click.echo(f"  trusted keys: {len(trusted)}" + (f" ({where})" if where else " (none pinned: give --key or --keyring, or set RNGCERT_TRUSTED_KEYS)"))
        for line in vmod.iter_lines(v):
            click.echo(line)
        click.echo(f"RESULT: {v.result} ({len(v.checks) - len(v.failed) - len(v.unchecked)} ok, {len(v.failed)} failed, {len(v.unchecked)} not checked)")
        click.echo(f"  {v.result} means: {v.meaning}")
    sys.exit(VERIFY_EXIT[v.result])


def _input_files(v, logs) -> list[Path] | None:
    """The input files of the report, as verified (None when one is missing or differs)."""
    from rngcert.report.schema import sha256_file

    given = {sha256_file(p): Path(p) for p in logs if Path(p).is_file()}
    out = []
    for inp in v.report.get("inputs", []):
        want = inp.get("sha256")
        if not want:
            continue
        if want in given:
            out.append(given[want])
        elif inp.get("path") and Path(inp["path"]).is_file() and sha256_file(inp["path"]) == want:
            out.append(Path(inp["path"]))
        else:
            return None
    return out


def _lab_files(rep: dict, recipe: dict, logs) -> tuple[dict[str, str], str]:
    """The lab's own files a rerun reads besides the logs, each found among ``logs`` by the SHA-256 the report carries,
    else at the path it recorded (an edited file there is named by the rerun): the standard's TOML (``standard``) and, for
    a wheel, the wheel's TOML (``equipment``). Returns ({recipe key: path found}, "") or ({}, why) when one is nowhere;
    packaged ones are not files of the lab's."""
    from rngcert.report.schema import sha256_file

    std, eq = rep.get("standard") or {}, rep.get("equipment") if isinstance(rep.get("equipment"), dict) else {}
    wanted = []
    if std and not std.get("packaged", True):
        wanted.append(("standard", f"the lab's standard {std.get('id')!r}", std.get("sha256"), str(std.get("source") or "")))
    if recipe.get("pipeline") == "certify_wheel" and eq.get("sha256"):
        wanted.append(("equipment", f"the lab's wheel {eq.get('id')!r}", eq["sha256"], str(eq.get("file") or "")))
    out = {}
    for key, what, want, recorded in wanted:
        found = next((str(g) for g in logs if Path(g).is_file() and sha256_file(g) == want), None)
        if found is None and recorded and Path(recorded).is_file():
            found = recorded
        if found is None:
            return {}, f"{what} ({recorded}, SHA-256 {str(want)[:16]}…) is not found from here: give its file beside the logs to recompute the report"
        out[key] = found
    return out, ""


def _recorded_paths(rep: dict) -> list[str]:
    """The input paths the report recorded, in the order of :func:`_input_files` (the tables of files without a table
    column are named after them: a copy read from another folder, or under another name, is the table it was)."""
    return [str(inp.get("path", "")) for inp in rep.get("inputs", []) if inp.get("sha256")]


def _path_map(rep: dict, files: list[Path], lab: dict[str, str] | None = None) -> dict[str, str]:
    """Each input file as read now (its path as given, and absolute) -> the path the report recorded for it (and the
    lab's files ``lab`` of :func:`_lab_files` -> their recorded paths)."""
    recorded = _recorded_paths(rep)
    out = {}
    where = {"standard": ("standard", "source"), "equipment": ("equipment", "file")}
    for key, found in (lab or {}).items():
        block, field = where[key]
        files, recorded = [*files, Path(found)], [*recorded, str((rep.get(block) or {}).get(field) or "")]
    for f, path in zip(files, recorded):
        for used in (str(f), str(Path(f).resolve())):
            if used != path:
                out[used] = path
    return out


def _rerun(v, logs) -> None:
    from rngcert.report.verify import compare_content, compare_statistics

    rep = v.report
    recipe = (rep or {}).get("rerun")
    if not rep or not recipe:
        v.add("rerun", None, "this report records no rerun recipe (audit reports are checked by hash only: re-audit the store instead)")
        return
    std = rep.get("standard") or {}
    if "standard" not in recipe and std.get("id"):  # a bits recipe written before it recorded its standard: the report names it
        recipe = dict(recipe, standard=std["id"] if std.get("packaged") else std.get("source"))
    files = _input_files(v, logs)
    if files is None:
        v.add("rerun", None, "an input is missing or differs from the recorded one: nothing to recompute from")
        return
    lab, missing = _lab_files(rep, recipe, logs)
    if missing:
        v.add("rerun", None, missing)
        return
    try:
        new = _recompute(dict(recipe, **lab, input_paths=_recorded_paths(rep)), files)
    except InputError as exc:  # a lab's file that no longer loads, an input refused: the rerun could not be made; the checks stand
        v.add("rerun", None, f"could not recompute the report: {exc}")
        return
    if new is None:
        v.add("rerun", None, f"unknown pipeline {recipe['pipeline']!r} in the recipe")
        return
    # every recomputed field is compared (the statistics among them); the statistics' and verdicts' differences are named first
    _, stat_diffs = compare_statistics(rep, new)
    count, content_diffs = compare_content(rep, new, paths=_path_map(rep, files, lab))
    diffs = stat_diffs + content_diffs
    n_diff = len(content_diffs) or len(stat_diffs)
    made_by = str((rep.get("software") or {}).get("rngcert") or "")
    if not diffs:
        v.add("rerun", True, f"{count} values recomputed, all equal" + (f" (the report was made by rngcert {made_by}, recomputed with {__version__})"
                                                                          if made_by and made_by != __version__ else ""))
    elif made_by and made_by != __version__:
        # another version may compute a statistic another way (e.g. 0.2.0's sequential Monte Carlo p-values of the scans):
        # this is not a reproduction, and not evidence against the report either; the verdicts are compared on their own
        v.add("rerun", None, f"the report was made by rngcert {made_by} and this is {__version__}, which computes some statistics "
                             f"otherwise (see the README's changes): {n_diff} of {count} values differ (" + "; ".join(diffs[:3])
                             + f"); to reproduce the report, rerun with rngcert=={made_by}")
        verdict_diffs = [d for d in stat_diffs if "verdict" in d]
        v.add("rerun verdicts", not verdict_diffs, "every verdict recomputed by this version is the report's" if not verdict_diffs
              else "; ".join(verdict_diffs[:5]))
    else:
        v.add("rerun", False, f"{n_diff} of {count} values differ: " + "; ".join(diffs[:5]))


def _recompute(recipe: dict, files: list[Path]) -> dict | None:
    """The report recomputed from ``files`` by the recipe's pipeline (None: unknown pipeline)."""
    if recipe["pipeline"] == "certify_shuffle":  # its own progress bar, by stage
        return _rerun_shuffle(recipe, files)
    with progress_bar(unit="spin", desc="recomputing", scale=True) as bar:
        return _rerun_counted(recipe, files, bar)


def _rerun_counted(recipe: dict, files: list[Path], bar) -> dict | None:
    """Recompute a wheel or bits report with a spin/stream progress bar (None: unknown pipeline)."""
    if recipe["pipeline"] == "certify_wheel":
        return _rerun_wheel(recipe, files, bar)
    if recipe["pipeline"] == "certify_bits":
        return _rerun_bits(recipe, files, bar)
    return None


def _rerun_wheel(r: dict, files: list[Path], bar) -> dict:
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    cert = certify_log(
        files, load_wheel(r["equipment"]).with_aliases(r.get("aliases") or {}), columns=r.get("columns") or None, fmt=r.get("fmt", "auto"), pool=bool(r.get("pool")),
        alpha=r["alpha"], seed=int(r["seed"]), n_resamples=int(r["n_resamples"]), required_bias=r.get("required_bias"),
        power=r.get("power", 0.9), figures=False, max_rejected_share=r.get("max_rejected_share", 0.05), progress=bar.callback(),
        standard=r.get("standard"),
        min_round_interval=r.get("min_round_interval", 0.0),
        tests=r.get("tests"),
        names=r.get("input_paths") or None,
    )
    return cert.report


def _rerun_shuffle(r: dict, files: list[Path]) -> dict:
    from rngcert.cli.shuffle import _certify_shuffle

    # a shoe log is read from the verified copy (its hash was checked); a procedure by its id or TOML path
    source = str(files[0]) if files else r["source"]
    keys = ("shoes", "burn_in", "decks", "game", "procedure", "before", "standard", "rule", "threshold", "sensitivity", "sensitivity_shoes",
            "seed", "resamples", "alpha")
    cert, _, _ = _certify_shuffle(source, **{k: r.get(k) for k in keys}, min_edge=r.get("min_edge"), power=r.get("power", 0.9),
                                  pickup=r.get("pickup"), max_rejected=r.get("max_rejected", 0.05), figures=False)
    return cert.report


def _rerun_bits(r: dict, files: list[Path], bar) -> dict:

    from rngcert.collect import bits as bitsmod
    from rngcert.pipeline.certify_bits import certify_streams
    from rngcert.seeding import root
    from rngcert.simulate import sources

    if r.get("source"):
        ss = root(int(r["seed"]))
        arr = sources.generate_bits(r["source"], int(r["length"]), seed=ss, streams=int(r["streams"]))
        prov = {"generator": r["source"].lower(), "seed_entropy": str(ss.entropy)}
        entropy = int(ss.entropy)
    else:
        arr, dump = bitsmod.read_bit_streams(files[0], int(r["streams"]), int(r["length"]), fmt=r["format"], bit_order=r.get("bit_order", "big"))
        prov = dump.provenance()
        entropy = None
    bar.set_total(int(arr.shape[0]))
    cert = certify_streams(arr, source=prov, alpha=r["alpha"], constants=r["constants"], figures=False, seed_entropy=entropy, progress=bar.callback() if bar.enabled else None)
    from rngcert.pipeline.standards import apply_standard

    # the standard the command applied after the pipeline
    apply_standard(cert.report, r.get("standard"), kind="bits", alpha=r["alpha"])
    return cert.report


@click.command(
    "keygen",
    epilog="""\b
Example:
  rngcert keygen lab.pem        # writes lab.pem (private, mode 600) and lab.pub
  rngcert certify spins.csv --sign lab.pem
  rngcert verify reports/european-20261201T101500Z --key lab.pub
  cat lab.pub >> keyring.pem && export RNGCERT_TRUSTED_KEYS=$PWD/keyring.pem   # pin it for every verify""",
)
@click.argument("private_key", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--public", "public_key", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Where the public key goes (default: PRIVATE_KEY with .pub).")
@click.option("--force", is_flag=True, help="Overwrite existing key files.")
def keygen(private_key, public_key, force):
    """Make an Ed25519 key pair (PEM) for signing reports.

    Keep the private key with the lab; give the public key to whoever checks the reports
    (`rngcert verify --key`). The same files work with OpenSSL (`openssl genpkey -algorithm
    ed25519` makes an equivalent private key).
    """
    from rngcert.cli._common import EXIT_INPUT, fail
    from rngcert.report.verify import generate_key

    pub = public_key or private_key.with_suffix(".pub")
    if pub.resolve() == private_key.resolve():  # the public key would be written over the private one (keygen lab.pub)
        raise click.UsageError(f"the private and the public key would be the same file, {pub}: name the private key otherwise "
                               "(e.g. lab.pem) or give --public another file")
    for p in (private_key, pub):
        if p.exists() and not force:
            fail(EXIT_INPUT, f"{p} exists; use --force to overwrite it")
    priv, pub = generate_key(private_key, pub)
    click.echo(f"private key: {priv} (keep it secret)\npublic key:  {pub}")
