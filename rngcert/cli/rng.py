"""CLI commands for electronic RNGs: ``rngcert bits`` (SP 800-22) and ``rngcert scaling``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rngcert.cli._common import (
    MAX_BITS_LENGTH,
    MAX_BITS_STREAMS,
    MAX_BITS_TOTAL,
    Real,
    check_report_options,
    command_line,
    emit_report,
    known_source,
    progress_bar,
    refuse_given,
    report_options,
)
from rngcert.cli._parallel import parallel_options, plan_of, workers_of
from rngcert.cli._standard import load_for, standard_option
from rngcert.seeding import root


@click.command(
    "bits",
    epilog="""\b
Examples:
  rngcert bits --source pcg64 --streams 100 --length 1000000 --seed 1
  rngcert bits data.e --format ascii --streams 1 --length 1000000
  rngcert bits dump.bin --format binary --bit-order big --streams 50 --length 1000000
  rngcert bits --source philox --streams 200 --seed 7 --json > report.json
  rngcert bits --source aes --streams 1000 --seed 7 --scheduler tcp://10.0.0.5:8786
  rngcert bits --source pcg64 --streams 20 --seed 1 --pdf --sign lab.pem

\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL ·
3 input error (not enough memory too) · 4 equipment error (a --standard that is unknown or invalid) · 2 usage error · 1 internal error ·
130 stopped by Ctrl-C · 143 stopped by SIGTERM.""",
)
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--source", default=None, callback=known_source, help="A named bit generator instead of FILE: pcg64, philox, chacha, aes, sfc64, mt19937, ...")
@click.option("--format", "fmt", type=click.Choice(["ascii", "binary"]), default=None, help="FILE format (required with FILE; refused with --source): ASCII 0/1 with whitespace ignored, or raw bytes.")
@click.option("--bit-order", type=click.Choice(["big", "little"]), default="big", show_default=True, help="Binary FILE: most (big) or least (little) significant bit of each byte first (refused with --source and --format ascii).")
@click.option("--streams", "-m", type=click.IntRange(1, MAX_BITS_STREAMS), default=None, help="Number of sequences m (default: 100 for --source; for FILE as many whole streams as it holds).")
@click.option("--length", "-n", type=click.IntRange(1, MAX_BITS_LENGTH), default=1_000_000, show_default=True, help="Bits per sequence n.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed for --source (recorded; default fresh entropy; refused with FILE, where nothing is random).")
@click.option("--constants", type=click.Choice(["reference", "corrected"]), default="reference", show_default=True, help="sts-2.1.2 constants (reproduce Appendix B) or the corrected ones.")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification level (also SP 800-22's pass level).")
@click.option("--processes", type=click.IntRange(min=1), default=None, hidden=True, help="Older name of --workers.")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder for reports/bits-<UTC time>/.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json to standard output instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
@standard_option
@parallel_options
@report_options
def bits(file, source, fmt, bit_order, streams, length, seed, constants, alpha, processes, outdir, as_json, no_plots, standard, pdf, sign_key, workers,
         scheduler):
    """Certify an RNG's raw output with NIST SP 800-22 rev1a and its two-level analysis.

    Give either FILE (a device's raw dump) or --source NAME (a bit generator). The battery's 15
    tests run on each of m sequences of n bits; over m >= 2 sequences the two-level analysis
    (proportion of passes; uniformity of p-values from m >= 55) decides, with Holm across all of it for FAIL.
    A dump shorter than m × n bits is an error: it is never rewound or replayed. The m streams
    are independent work items: every core by default (a local process pool), an existing
    cluster with --scheduler, serial with --workers 1; the report does not depend on it. With
    --source, each worker generates the streams it tests.
    """

    from rngcert.collect import bits as bitsmod
    from rngcert.errors import InputError
    from rngcert.pipeline.certify_bits import GeneratedStreams, certify_streams
    from rngcert.pipeline.options import BitsOptions
    from rngcert.simulate.sources import bit_generator

    if (file is None) == (source is None):
        raise click.UsageError("give exactly one of FILE or --source NAME")
    _refuse_unused(file is not None, fmt)
    plan = plan_of(workers_of(workers, processes, "--processes"), scheduler)
    std = load_for(standard, "bits", "bits", alpha)
    key = check_report_options(pdf, sign_key)
    if file is not None and str(file) == "-":  # was "-: cannot read: No such file or directory" (exit 3)
        raise click.UsageError("bits does not read standard input (-): the report hashes the dump and --rerun reads it again; "
                               "save the dump to a file and give its name")
    if file is not None:
        if fmt is None:
            raise click.UsageError("--format ascii|binary is required with FILE (a text file is never guessed to be bits)")
        whole = None
        if streams is None:
            whole = bitsmod.read_bits(file, fmt=fmt, bit_order=bit_order)  # read once: a pipe (/dev/stdin) cannot be read again
            streams = whole.n_bits // length
            if streams < 1:
                raise InputError(f"{file}: holds {whole.n_bits} bits, fewer than one stream of {length} bits; use a smaller --length")
        arr, dump = bitsmod.read_bit_streams(file, streams, length, fmt=fmt, bit_order=bit_order, dump=whole)
        prov = dump.provenance()
        entropy = None
    else:
        ss = root(seed)
        entropy = int(ss.entropy)
        streams = _within_total(streams or 100, length)
        bit_generator(source, ss)  # an unknown name is an input error here, not on a worker
        arr = GeneratedStreams(source.lower(), entropy, streams, length)
        prov = {"generator": source.lower(), "seed_entropy": str(entropy)}
    rerun = {
        "pipeline": "certify_bits", "file": None if file is None else str(file), "format": fmt, "bit_order": bit_order, "source": source,
        "seed": entropy, "streams": int(arr.shape[0]), "length": int(arr.shape[1]), "constants": constants, "alpha": alpha,
        "standard": std.id if std.packaged else std.path}  # verify --rerun applies the standard
    # the certification's options, built once here and passed down as one object
    options = BitsOptions(alpha=alpha, constants=constants, command=command_line(), figures=not no_plots, seed_entropy=entropy,
                          plan=plan)
    with progress_bar(total=int(arr.shape[0]), unit="stream", desc="SP 800-22") as bar:
        cert = certify_streams(arr, source=prov, rerun=rerun, options=options.replace(progress=bar.callback() if bar.enabled else None))
    from rngcert.pipeline.standards import apply_standard

    apply_standard(cert.report, std, kind="bits", alpha=alpha)
    emit_report(cert.report, cert.figures, [], outdir, "bits", as_json, pdf=pdf, sign_key=key)



def _within_total(streams: int, length: int) -> int:
    """``streams``, when ``streams`` x ``length`` bits of a generator is at most :data:`MAX_BITS_TOTAL` (a usage error, exit 2,
    beyond: each option under its own largest value, 10^6 streams of 10^9 bits was accepted, years of work)."""
    if streams * length > MAX_BITS_TOTAL:
        raise click.BadParameter(f"{streams:,} streams of {length:,} bits are {streams * length:.3g} bits, more than {MAX_BITS_TOTAL:.0e} "
                                 "(100 times SP 800-22's 1,000 streams of 10^6 bits); give fewer streams or shorter ones",
                                 param_hint="'--streams' x '--length'")
    return streams


def _refuse_unused(from_file: bool, fmt: str | None) -> None:
    """``--format`` and ``--bit-order`` read a FILE (``--bit-order`` a binary one), ``--seed`` seeds a
    ``--source``: given where they do nothing, they are a usage error, not a report that did not use them."""
    if not from_file:
        refuse_given(("fmt", "bit_order"), "options of a FILE dump; --source NAME generates its bits (give FILE instead, or leave them out)")
    elif fmt == "ascii":
        refuse_given(("bit_order",), "the bit order of the bytes of a --format binary FILE; an ASCII file's 0/1 characters are read in order")
    if from_file:
        refuse_given(("seed",), "seeds the generator of --source NAME; a FILE's bits are tested as they are and no test draws "
                                "random numbers")


@click.command(
    "scaling",
    epilog="""\b
Examples:
  rngcert scaling --bits 8 --outcomes 37 --method modulo
  rngcert scaling --bits 32 --outcomes 37 --method multiply-shift
  rngcert scaling --bits 32 --outcomes 52 --method rejection --json""",
)
@click.option("--bits", "nbits", type=click.IntRange(1, 64), required=True, help="Bits per raw word.")
@click.option("--outcomes", type=click.IntRange(min=2), required=True, help="Number of outcomes (37 pockets, 52 cards, ...).")
@click.option("--method", type=click.Choice(["modulo", "multiply-shift", "rejection"]), required=True, help="How a word becomes an outcome.")
@click.option("--json", "as_json", is_flag=True, help="Print the exact distribution as JSON.")
def scaling(nbits, outcomes, method, as_json):
    """Exact outcome probabilities of a raw-word → outcome mapping, and its largest bias.

    Computed with integers and fractions, not simulated. Modulo and multiply-shift give some
    outcomes one word more than others whenever the outcomes do not divide 2^bits; rejection is
    exactly uniform at the cost of discarded words.
    """
    import numpy as np

    from rngcert.equipment.scaling import outcome_probabilities
    from rngcert.errors import InputError

    try:
        res = outcome_probabilities(nbits, outcomes, method)
    except InputError as exc:  # scaling reads no data: what it refuses is the options' values (a usage error, exit 2)
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(res.to_dict(), indent=1))
        return
    article = "an" if str(nbits).startswith("8") or nbits in (11, 18) else "a"  # "an 8-bit word", "a 32-bit word"
    click.echo(f"{method} of {article} {nbits}-bit word onto {outcomes} outcomes (denominator {res.denominator} words):")
    low = min(res.counts)
    extra = np.fromiter((c - low for c in res.counts), dtype=np.int8, count=len(res.counts))  # 0 or 1 word more
    for e in sorted(set(extra.tolist()), reverse=True):
        js = np.flatnonzero(extra == e)
        shown = ", ".join(map(str, js[:20].tolist())) + (" …" if js.size > 20 else "")
        click.echo(f"  {js.size:>6} outcome(s) at {low + e}/{res.denominator}: {shown}")
    rel = float(res.max_relative_bias)  # never rounded to 0 when the mapping has a bias (64-bit words: about 1e-18)
    rel_text = "0 (exactly uniform)" if res.max_bias == 0 else f"{rel:.3%}" if rel >= 1e-5 else f"{rel * 100:.3g}%"
    click.echo(f"largest bias |p - 1/k| = {res.max_bias} ({float(res.max_bias):.3g}); relative {rel_text}")
    if method == "rejection":
        click.echo(f"rejection probability per word: {res.rejection_probability}")
