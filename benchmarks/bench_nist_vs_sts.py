"""Every p-value of rngcert's SP 800-22 battery against NIST sts-2.1.2, and the wall-time ratio.

Run:  STS_BIN=/path/to/assess python benchmarks/bench_nist_vs_sts.py
          [--sts PATH] [--templates DIR] [--data FILE ...] [--pcg64 3] [--many 100]
          [--processes 2] [--write-json tests/data/sts_2_1_2_data_e.json]

sts-2.1.2 is not part of rngcert: build it yourself (``gcc -O2``) and give the path of its
``assess`` program with ``--sts`` or the environment variable ``STS_BIN``. Its template files
are looked up in ``templates/`` next to the binary (``--templates`` to override). Without a
binary the script says so and exits with status 0 (nothing compared).

What it does, on the same bits for both programs:

1. **p-values.** For every stream (the ASCII files ``data.e``, ``data.pi``, ``data.sqrt2``,
   ``data.sqrt3`` where found: the shared data folder and sts's own ``data/`` next to the
   binary; then ``--pcg64`` PCG64 streams written to a binary file), sts-2.1.2 runs all 15 tests
   with its default parameters and rngcert runs :func:`rngcert.stats.nist.run_sp800_22` with
   ``constants="reference"``. sts prints every p-value with ``%f`` (6 decimals); rngcert's
   p-value is formatted the same way and the two strings are compared. A p-value that rngcert
   declares not applicable is counted as agreeing when sts prints 0.000000 for it (sts's
   marker for "test not applicable", e.g. random excursions with J < 500 cycles). Printed:
   the number compared, the number identical, and every mismatch.
2. **time.** Wall time of the whole program, start to exit, reading the same file: sts
   ``assess`` against ``rngcert bits FILE --format binary --no-plots`` (battery, verdict and
   report), for one stream of 10^6 bits (``--processes 1``) and for ``--many`` streams of 10^6
   bits (``--processes`` worker processes; sts is single-threaded). Also rngcert's in-process
   battery time for one stream. The p-values of the ``--many`` streams are compared too.

``--write-json PATH`` stores sts's 188 p-values of data.e (first 10^6 bits) with their rngcert
names: the known answers of ``tests/test_nist_sts_data_e.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rngcert.collect.bits import read_bit_streams
from rngcert.simulate.sources import generate_bits
from rngcert.stats import nist

SHARED = Path("/work/shared/data/nist-sts")
N = 1_000_000

#: rngcert test key -> sts-2.1.2 output folder (experiments/AlgorithmTesting/<folder>).
STS_FOLDER = {
    "frequency": "Frequency", "block_frequency": "BlockFrequency", "runs": "Runs",
    "longest_run": "LongestRun", "rank": "Rank", "dft": "FFT",
    "non_overlapping_template": "NonOverlappingTemplate",
    "overlapping_template": "OverlappingTemplate", "universal": "Universal",
    "linear_complexity": "LinearComplexity", "serial": "Serial",
    "approximate_entropy": "ApproximateEntropy", "cumulative_sums": "CumulativeSums",
    "random_excursions": "RandomExcursions",
    "random_excursions_variant": "RandomExcursionsVariant",
}


def run_sts(sts: Path, templates: Path, path: Path, n: int, m: int, binary: bool):
    """Run sts-2.1.2 on m streams of n bits of ``path``; p-value strings by stream and name.

    Parameters
    ----------
    sts : Path
        sts-2.1.2's ``assess`` binary (run in a temporary folder with the experiments tree).
    templates : Path
        sts's ``templates`` folder (symlinked into the working folder).
    path : Path
        The bits: ASCII 0/1 (``binary=False``) or bytes, most significant bit first.
    n, m : int
        Bits per stream, number of streams.
    binary : bool
        sts input mode 1 (binary) or 0 (ASCII).

    Returns
    -------
    per_stream : list of m dicts {rngcert result name: sts's printed p-value}
    seconds : float
        Wall time of the sts process.
    """
    names = nist.test_names()
    with tempfile.TemporaryDirectory(prefix="sts-run-") as work:
        w = Path(work)
        (w / "templates").symlink_to(templates.resolve())
        for folder in STS_FOLDER.values():
            (w / "experiments" / "AlgorithmTesting" / folder).mkdir(parents=True)
        # generator 0 = input file; 1 = all tests; 0 = keep the default parameters;
        # m bit streams; input mode 0 = ASCII, 1 = binary (MSB first)
        answers = f"0\n{path.resolve()}\n1\n0\n{m}\n{1 if binary else 0}\n"
        t = time.perf_counter()
        proc = subprocess.run([str(sts.resolve()), str(n)], input=answers, cwd=w,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - t
        if "Testing Complete" not in proc.stdout:
            raise RuntimeError(f"sts did not complete on {path}: {proc.stdout[-500:]}")
        per = [dict() for _ in range(m)]
        for key, folder in STS_FOLDER.items():
            lines = (w / "experiments" / "AlgorithmTesting" / folder / "results.txt") \
                .read_text().split()
            k = len(names[key])
            if len(lines) != k * m:
                raise RuntimeError(f"sts {folder}: {len(lines)} p-values, expected {k} x {m}")
            for i in range(m):
                per[i].update(zip(names[key], lines[i * k:(i + 1) * k]))
    return per, seconds


def compare(mine, theirs, label: str, mismatches: list) -> tuple[int, int, int]:
    """Compare one stream's results with sts's printed p-values.

    Parameters
    ----------
    mine : list of TestResult / NotApplicable
        rngcert's 188 results for the stream.
    theirs : dict of str
        sts's p-values as printed (``%f``), by rngcert result name.
    label : str
        Stream name for the mismatch list.
    mismatches : list
        Appended with (label, name, rngcert value, sts value, detail) per mismatch.

    Returns
    -------
    (int, int, int)
        p-values compared, identical to 6 decimals, and not applicable in both.
    """
    compared = identical = both_na = 0
    for r in mine:
        s = theirs[r.name]
        compared += 1
        if not r.applicable:
            if s == "0.000000":
                identical += 1
                both_na += 1
            else:
                mismatches.append((label, r.name, "not applicable", s, r.reason))
            continue
        f = f"{r.pvalue:.6f}"
        if f == s:
            identical += 1
        else:
            mismatches.append((label, r.name, f, s, repr(r.pvalue)))
    return compared, identical, both_na


def rngcert_cli(path: Path, n: int, m: int, processes: int) -> float:
    """Wall time of ``rngcert bits`` on a binary dump (report written to a temporary folder).

    Parameters
    ----------
    path : Path
        Binary dump (most significant bit first).
    n, m : int
        Bits per stream, number of streams.
    processes : int
        rngcert worker processes.

    Returns
    -------
    float
        Seconds from start to exit of the ``python -m rngcert.cli bits`` process.

    Raises
    ------
    RuntimeError
        If rngcert exits with an error code (not a verdict).
    """
    with tempfile.TemporaryDirectory(prefix="rngcert-run-") as out:
        cmd = [sys.executable, "-m", "rngcert.cli", "bits", str(path), "--format", "binary",
               "--streams", str(m), "--length", str(n), "--no-plots", "--processes",
               str(processes), "--out", out]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t
        if proc.returncode not in (0, 10, 11, 12):
            raise RuntimeError(f"rngcert failed ({proc.returncode}): {proc.stderr[-800:]}")
    return seconds


def _ascii_files(sts: Path, extra) -> list[Path]:
    """data.e, data.pi, data.sqrt2, data.sqrt3 from the shared folder or sts's, plus extras."""
    found = {}
    for d in (SHARED, sts.parent / "data"):
        for nm in ("data.e", "data.pi", "data.sqrt2", "data.sqrt3"):
            if nm not in found and (d / nm).is_file():
                found[nm] = d / nm
    return list(found.values()) + [Path(p) for p in extra]


def main(argv=None) -> int:
    """Command-line entry point; exit status 1 when any p-value differs, else 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sts", default=os.environ.get("STS_BIN"),
                    help="path of sts-2.1.2's assess binary (default: $STS_BIN)")
    ap.add_argument("--templates", default=None,
                    help="sts's templates folder (default: templates/ next to the binary)")
    ap.add_argument("--data", nargs="*", default=[], help="more ASCII 0/1 files to compare")
    ap.add_argument("--pcg64", type=int, default=3, help="PCG64 streams of 10^6 bits (seed 1)")
    ap.add_argument("--many", type=int, default=100,
                    help="streams of 10^6 bits for the multi-stream timing (0 to skip)")
    ap.add_argument("--processes", type=int, default=2, help="rngcert worker processes")
    ap.add_argument("--write-json", default=None,
                    help="store sts's p-values of data.e (first 10^6 bits) in this file")
    a = ap.parse_args(argv)
    if not a.sts or not Path(a.sts).is_file():
        print("sts-2.1.2 binary not given (--sts or STS_BIN) or not found: nothing compared")
        return 0
    sts = Path(a.sts)
    templates = Path(a.templates) if a.templates else sts.parent / "templates"
    if not (templates / "template9").is_file():
        print(f"no template9 in {templates}: give sts's templates folder with --templates")
        return 2
    print(f"sts: {sts}; python {sys.version.split()[0]}, numpy {np.__version__}")

    mismatches: list = []
    total = [0, 0, 0]

    def tally(c):
        for i in range(3):
            total[i] += c[i]

    for path in _ascii_files(sts, a.data):
        theirs, _ = run_sts(sts, templates, path, N, 1, binary=False)
        bits, _ = read_bit_streams(path, 1, N, fmt="ascii")
        mine = nist.run_sp800_22(bits[0])
        c = compare(mine, theirs[0], path.name, mismatches)
        tally(c)
        print(f"{path.name}: {c[0]} p-values, {c[1]} identical to 6 decimals"
              + (f" ({c[2]} not applicable in both)" if c[2] else ""))
        if a.write_json and path.name == "data.e":
            raw = path.read_bytes()
            doc = {
                "what": "p-values of NIST sts-2.1.2 on the first 1,000,000 bits of data.e, "
                        "all 15 tests with the default parameters, as printed by sts "
                        "(results.txt of each test, format %f), keyed by rngcert result name",
                "produced_by": "benchmarks/bench_nist_vs_sts.py --write-json, running sts-2.1.2 "
                               "(github terrillmoore/NIST-Statistical-Test-Suite, commit 07cd577, "
                               "an unmodified import of NIST's sts-2_1-2.zip) built with gcc -O2",
                "input": {"file": "data.e (sts-2.1.2 data folder; /work/shared/data/nist-sts)",
                          "sha256": hashlib.sha256(raw).hexdigest(), "bits": N,
                          "format": "ascii"},
                "pvalues": theirs[0],
            }
            Path(a.write_json).write_text(json.dumps(doc, indent=1) + "\n")
            print(f"  wrote {a.write_json} ({len(theirs[0])} p-values)")

    with tempfile.TemporaryDirectory(prefix="bench-sts-") as tmp:
        tmp = Path(tmp)
        one = tmp / "pcg64-1.bin"
        timing = {}
        if a.pcg64:
            streams = generate_bits("pcg64", N, seed=1, streams=a.pcg64)
            f = tmp / "pcg64.bin"
            f.write_bytes(np.packbits(streams.reshape(-1)).tobytes())
            theirs, _ = run_sts(sts, templates, f, N, a.pcg64, binary=True)
            got, _ = read_bit_streams(f, a.pcg64, N, fmt="binary")
            for i in range(a.pcg64):
                c = compare(nist.run_sp800_22(got[i]), theirs[i], f"pcg64 seed 1 stream {i}",
                            mismatches)
                tally(c)
            print(f"pcg64 (seed 1) x {a.pcg64}: {sum(1 for _ in got) * 188} p-values compared")
        one.write_bytes(np.packbits(generate_bits("pcg64", N, seed=2)).tobytes())
        theirs1, timing["sts1"] = run_sts(sts, templates, one, N, 1, binary=True)
        timing["cli1"] = rngcert_cli(one, N, 1, 1)
        x = read_bit_streams(one, 1, N, fmt="binary")[0][0]
        nist.run_sp800_22(x)
        t = time.perf_counter()
        tally(compare(nist.run_sp800_22(x), theirs1[0], "pcg64 seed 2", mismatches))
        timing["battery1"] = time.perf_counter() - t
        if a.many:
            many = tmp / "pcg64-many.bin"
            s = generate_bits("pcg64", N, seed=3, streams=a.many)
            many.write_bytes(np.packbits(s.reshape(-1)).tobytes())
            del s
            theirs, timing["stsm"] = run_sts(sts, templates, many, N, a.many, binary=True)
            timing["clim"] = rngcert_cli(many, N, a.many, a.processes)
            got, _ = read_bit_streams(many, a.many, N, fmt="binary")
            for i in range(a.many):
                tally(compare(nist.run_sp800_22(got[i]), theirs[i], f"pcg64 seed 3 stream {i}",
                              mismatches))
            print(f"pcg64 (seed 3) x {a.many}: {a.many * 188} p-values compared")

    print(f"\nTOTAL: {total[0]} p-values compared, {total[1]} identical to 6 decimals "
          f"({total[2]} of them not applicable in both), {len(mismatches)} mismatch(es)")
    for m in mismatches:
        print(f"  MISMATCH {m[0]}: {m[1]}: rngcert {m[2]} sts {m[3]} ({m[4]})")
    print("\nwall time, whole program reading the same binary file:")
    r1 = timing["cli1"] / timing["sts1"]
    print(f"  1 x 10^6 bits: sts {timing['sts1']:.2f} s, rngcert bits {timing['cli1']:.2f} s "
          f"(processes 1): ratio {r1:.2f} (target <= 1); rngcert battery alone "
          f"{timing['battery1']:.2f} s")
    if a.many:
        rm = timing["clim"] / timing["stsm"]
        print(f"  {a.many} x 10^6 bits: sts {timing['stsm']:.1f} s, rngcert bits "
              f"{timing['clim']:.1f} s (processes {a.processes}): ratio {rm:.3f} "
              f"(target <= 0.2)")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
