"""Benchmark of the live watch (issue 11, item 5). Prints the figures; asserts nothing.

    python benchmarks/bench_watch.py            # about 1-2 minutes on 2 cores
    python benchmarks/bench_watch.py --spins 200000

1. ``rngcert watch LOG`` over a log read once (console script): spins per second, beside the
   floor of reading the same file with pyarrow and updating the detector in one pass.
2. ``rngcert watch LOG --follow`` while a writer appends the log in blocks and rotates it three
   ways (rename and a new file, copy-truncate, a rewrite in place that regrows past the old
   offset, case c12): spins counted against spins written, and the time from the last write to
   the last status line.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
EXE = [sys.executable, "-m", "rngcert"]


def csv_bytes(n: int, seed: int, first: int = 0, header: bool = False) -> bytes:
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    eu = load_wheel("european")
    sim = simulate_spins(eu, n, np.random.default_rng(seed), first_spin=first)
    buf = io.BytesIO()
    write_spin_log(buf, eu, sim, table="W1", first_spin=first, header=header)
    return buf.getvalue()


def header() -> bytes:
    return csv_bytes(1, 0, header=True).split(b"\n", 1)[0] + b"\n"


def last_count(text: str) -> int:
    lines = [ln for ln in text.splitlines() if ln.startswith("[W1] ")]
    return int(lines[-1].split()[1]) if lines else 0


def once(tmp: Path, n: int) -> None:
    log = tmp / "once.csv"
    log.write_bytes(csv_bytes(n, 1, header=True))
    t = time.perf_counter()
    p = subprocess.run(EXE + ["watch", str(log), "--no-record", "--alpha", "1e-12"], capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - t
    floor = [sys.executable, "-c", (
        "import sys, numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as pacsv\n"
        "from rngcert.equipment.wheel import load_wheel\n"
        "from rngcert.pipeline.watch import Watcher\n"
        "sp = load_wheel('european').position_space()\n"
        "col = pacsv.read_csv(sys.argv[1], convert_options=pacsv.ConvertOptions(include_columns=['result'], column_types={'result': pa.string()})).column('result')\n"
        "enc = pc.dictionary_encode(col).combine_chunks()\n"
        "lut = np.array([list(sp.labels).index(v) for v in enc.dictionary.to_pylist()])\n"
        "Watcher(sp, alpha=1e-12).update(lut[enc.indices.to_numpy()])\n")]
    t = time.perf_counter()
    subprocess.run(floor + [str(log)], check=True, capture_output=True, env=ENV)
    fw = time.perf_counter() - t
    print(f"watch, a {n:,}-spin log read once: {wall:.2f} s = {n / wall:,.0f} spins/s, counted {last_count(p.stdout):,} "
          f"| floor (pyarrow read + one detector pass, same imports): {fw:.2f} s | ratio {wall / fw:.2f}x")


def follow(tmp: Path, block: int, blocks: int) -> None:
    log = tmp / "live.csv"
    log.write_bytes(csv_bytes(block, 10, header=True))
    written = block
    out = open(tmp / "watch.out", "w")
    proc = subprocess.Popen(EXE + ["watch", str(log), "--follow", "--interval", "0.2", "--settle", "1", "--max-idle", "6", "--no-record",
                                   "--alpha", "1e-12"], stdout=out, stderr=subprocess.STDOUT, env=ENV)
    deadline = time.monotonic() + 120
    while last_count((tmp / "watch.out").read_text()) < block and time.monotonic() < deadline:  # the watch has read the first block
        time.sleep(0.2)
    events = []
    for b in range(1, blocks):
        data = csv_bytes(block, 10 + b, first=written)
        kind = b % 4
        if kind == 1:  # rename and a new file
            os.rename(log, tmp / "live.csv.1")
            log.write_bytes(header() + data)
            events.append("rename")
        elif kind == 2:  # copy-truncate, with half of the block appended just before
            rows = data.splitlines(keepends=True)
            with open(log, "ab") as fh:
                fh.write(b"".join(rows[: len(rows) // 2]))
            shutil.copy(log, tmp / "live.csv.1")
            with open(log, "r+b") as fh:
                fh.truncate(0)
                fh.write(header() + b"".join(rows[len(rows) // 2 :]))
            events.append("copy-truncate")
        elif kind == 3:  # rewrite in place, more bytes than before (c12)
            with open(log, "r+b") as fh:
                fh.truncate(0)
                fh.write(header() + data + csv_bytes(block, 99 + b, first=written + block))
            written += block
            events.append("rewrite in place")
        else:
            with open(log, "ab") as fh:
                fh.write(data)
            events.append("append")
        written += block
        time.sleep(1.5)
    t_last = time.perf_counter()
    proc.wait(timeout=600)
    out.close()
    text = (tmp / "watch.out").read_text()
    counted = last_count(text)
    print(f"watch --follow, {blocks} blocks of {block:,} spins with {', '.join(events)}: counted {counted:,} of {written:,} spins written "
          f"({'exact' if counted == written else 'MISMATCH'}); the watch ended {time.perf_counter() - t_last:.1f} s after the last write "
          f"(--max-idle 6, --settle 1)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spins", type=int, default=1_000_000)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_watch_"))
    print(f"rngcert watch benchmark · load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    try:
        once(tmp, a.spins)
        follow(tmp, 5000, 9)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
