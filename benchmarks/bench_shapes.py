"""Peak memory and CPU of ``certify`` for every input shape (issue 26, item 3): one row per shape.

    python benchmarks/bench_shapes.py                          # 10^7 spins, every shape
    python benchmarks/bench_shapes.py --spins 1e8 --shapes jsonl
    python benchmarks/bench_shapes.py --base /path/to/other/tree   # the same runs with another tree's rngcert beside

Shapes (made with numpy in a temporary folder, deleted afterwards; ids and results from a fixed seed):

* ``csv``: ``spin_id,result``, ids increasing (the reader of ``rngcert/collect/csvstream.py``);
* ``jsonl``: ``{"spin_id":N,"result":R}`` a line, ids increasing;
* ``perm1`` / ``perm17``: a permanence list, one number a line / 17 a line;
* ``reversed``: the CSV with its rows in reverse order (a newest-first export: ids going down);
* ``textids``: the CSV with text ids (``R100000000``);
* ``shuffled``: the CSV with its rows in random order (ids a random permutation);
* ``repeats``: the CSV with every 1,000th row exported twice and every 100,000th again with another result (a conflict);
* ``uuid``: the CSV with UUIDs as spin ids (labels: file order, repeats checked).

Each command runs in its own process (``benchmarks/_measure.py``: wall, CPU of the child, peak
RSS by GNU time); R = 999, no figures, one worker. Prints the rows; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ("csv", "jsonl", "perm1", "perm17", "reversed", "textids", "shuffled", "repeats", "uuid")
_CHUNK = 5_000_000


def _digits(v: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of ``v`` (zero-padded)."""
    out = np.empty((v.size, width), dtype=np.uint8)
    for j in range(width - 1, -1, -1):
        out[:, j] = 48 + v % 10
        v = v // 10
    return out


def _records(parts) -> bytes:
    """Rows of fixed width from pieces: bytes (the same in every row) or (n, w) uint8 arrays."""
    n = next(p.shape[0] for p in parts if isinstance(p, np.ndarray))
    w = sum(len(p) if isinstance(p, bytes) else p.shape[1] for p in parts)
    rec = np.empty((n, w), dtype=np.uint8)
    o = 0
    for p in parts:
        k = len(p) if isinstance(p, bytes) else p.shape[1]
        rec[:, o : o + k] = np.frombuffer(p, np.uint8) if isinstance(p, bytes) else p
        o += k
    return rec.tobytes()


def make(shape: str, path: Path, n: int, seed: int = 1) -> None:
    """Write ``n`` spins of ``shape`` to ``path`` (no Python loop over spins: numpy, chunk by chunk)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n).astype(np.int64) if shape == "shuffled" else None
    chunks = list(range(0, n, _CHUNK))
    if shape == "reversed":
        chunks = chunks[::-1]
    with open(path, "wb") as fh:
        if shape in ("csv", "reversed", "textids", "shuffled", "repeats", "uuid"):
            fh.write(b"spin_id,result\n")
        for a in chunks:
            m = min(_CHUNK, n - a)
            ids = (np.arange(a, a + m, dtype=np.int64) if perm is None else perm[a : a + m]) + 100_000_000  # nine digits up to 9 * 10^8 spins
            res = rng.integers(0, 37, m)
            two = _digits(res, 2)
            two[res < 10, 0] = 32  # a space before a one-digit number (fixed-width rows)
            if shape == "jsonl":
                fh.write(_records([b'{"spin_id":', _digits(ids, 9), b',"result":', two, b"}\n"]))
            elif shape == "perm1":
                fh.write(_records([two, b"\n"]))
            elif shape == "perm17":
                k = m - m % 17
                row = np.concatenate([two[:k].reshape(-1, 17, 2), np.full((k // 17, 17, 1), 32, np.uint8)], axis=2).reshape(-1, 51)
                row[:, -1] = 10
                fh.write(row.tobytes())
                if m % 17:
                    fh.write(b" ".join(bytes(x) for x in two[k:]) + b"\n")
            elif shape == "uuid":
                hexd = np.frombuffer(b"0123456789abcdef", np.uint8)[rng.integers(0, 16, (m, 32))]
                fh.write(_records([hexd[:, :8], b"-", hexd[:, 8:12], b"-", hexd[:, 12:16], b"-", hexd[:, 16:20], b"-", hexd[:, 20:], b",", two, b"\n"]))
            elif shape == "repeats":
                rows = np.frombuffer(_records([_digits(ids, 9), b",", two, b"\n"]), np.uint8).reshape(m, 13)
                again = np.arange(999, m, 1000)  # exported twice (exact duplicates)
                at = np.arange(499, m, 100_000)  # the same spin again with another result (conflicts), after its neighbour
                other = rows[at].copy()
                other[:, 10:12] = _digits((res[at] + 1) % 37, 2)
                out = np.insert(rows, np.r_[again + 1, at + 2], np.concatenate([rows[again], other]), axis=0)
                fh.write(out.tobytes())
            else:
                rows = _records([b"R" if shape == "textids" else b"", _digits(ids, 9), b",", two, b"\n"])
                if shape == "reversed":
                    w = 9 + 1 + 2 + 1
                    rows = np.frombuffer(rows, np.uint8).reshape(-1, w)[::-1].tobytes()
                fh.write(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spins", type=float, default=1e7)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--base", default=None, help="another source tree: its rngcert runs the same commands (before)")
    ap.add_argument("--tmp", default=None)
    a = ap.parse_args()
    n = int(a.spins)
    tmp = Path(tempfile.mkdtemp(prefix="rngcert-bench-shapes-", dir=a.tmp))
    trees = [("this tree", ROOT)] + ([("base", Path(a.base).resolve())] if a.base else [])
    print(f"certify {n:,} spins; {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; free disk {shutil.disk_usage(tmp).free / 2**30:.0f} GiB; "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| shape | file | tree | wall | CPU | peak RSS | peak ÷ spins (bytes) |")
    print("|---|---|---|---|---|---|---|")
    try:
        for shape in a.shapes.split(","):
            suffix = {"jsonl": ".jsonl", "perm1": ".txt", "perm17": ".txt"}.get(shape, ".csv")
            log = tmp / f"{shape}{suffix}"
            make(shape, log, n)
            mb = log.stat().st_size / 2**20
            for label, tree in trees:
                env = dict(os.environ, PYTHONPATH=str(tree), CI="1")
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                wall, cpu, peak = run([sys.executable, "-m", "rngcert", "certify", log, "--seed", 1, "--resamples", 999, "--no-plots",
                                       "--workers", 1, "--out", tmp / "reports"], env, ok=(0, 10, 11, 12, 13), cwd=tmp)
                print(f"| {shape} | {mb:,.0f} MB | {label} | {wall:.1f} s | {cpu:.1f} s | {peak:,.0f} MB | {peak * 2**20 / n:.1f} |", flush=True)
            log.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
