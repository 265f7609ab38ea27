"""Permanence lists in constant memory (issue 26 item 3): the streamed reader keeps a few bytes a
spin, and it reads every list exactly as the exact reader does.

* Memory (not a timing): the peak resident memory of reading a list of 1 M and of 3 M spins (one
  a line), each in a fresh process; the extra 2 M spins may cost at most 16 bytes each (the reader
  keeps 4: outcome, table code, line start; the whole-file reader took about 80).
* The same spins, rejects, notes, blank lines and line starts as the exact path, for lists with
  titles (c20), words, decimals, padded and long numbers, blank lines, CRLF, BOM and Latin-1, read in
  blocks of 7 bytes and of 4 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rngcert.collect.permstream as permstream
import rngcert.collect.spinlog as spinlog
import rngcert.collect.spinlog.read as spinlog_read  # where read_spin_log looks up _read_spin_log_compact
from rngcert.equipment.wheel import load_wheel

ROOT = Path(__file__).resolve().parents[1]

# the peak resident memory of this process: VmHWM (getrusage's ru_maxrss would give at least the peak of
# the process that started it: Linux keeps it across fork and exec)
_PEAK = r"""
import json, re, sys
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
log = read_spin_log(sys.argv[1], load_wheel("european"))
kb = int(re.search(r"VmHWM:\s*(\d+) kB", open("/proc/self/status").read()).group(1))
print(json.dumps([log.accepted, kb]))
"""


def _peak_kb(path: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "CI": "1"})
    n, kb = json.loads(out.stdout)
    return n, kb


def _one_a_line(path: Path, n: int, seed: int = 5) -> Path:
    x = np.random.default_rng(seed).integers(0, 37, n)
    path.write_text("\n".join(map(str, x.tolist())) + "\n")
    return path


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from /proc (Linux)")
def test_reading_a_permanence_list_costs_a_few_bytes_a_spin(tmp_path):
    small = _one_a_line(tmp_path / "small.txt", 1_000_000)
    big = _one_a_line(tmp_path / "big.txt", 3_000_000)
    n1, kb1 = _peak_kb(small)
    n2, kb2 = _peak_kb(big)
    assert (n1, n2) == (1_000_000, 3_000_000)
    per_spin = (kb2 - kb1) * 1024 / (n2 - n1)
    assert per_spin < 16, f"{per_spin:.1f} bytes a spin more ({kb1 / 1024:.0f} MB at 1 M spins, {kb2 / 1024:.0f} MB at 3 M)"


def _snap(log) -> list:
    out = [log.level, [s.to_dict() for s in log.sources], [r.to_dict() for r in log.rejected], list(log.notes)]
    for name, t in log.tables.items():
        out.append([name, t.void, list(t.notes), t.outcomes.astype(int).tolist(), None if t.line_start is None else t.line_start.tolist()])
    return out


_ODD = ["07", "007", "0007", "00", "37", "12345678901234567890", "zero", "void", "Tisch", "7.0", "x", "Ø", "é", "\u00a0", "\v", "-3", "#"]
_SEPS = [",", ";", " ", "\t", ", ", ",,", "\r"]


def _messy(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(rng.integers(1, 40)):
        u = rng.random()
        if u < 0.1:
            lines.append("" if u < 0.05 else " \t ")
        elif u < 0.15:
            lines.append("Spielbank Tisch 1 19.04.2026")
        else:
            n = int(rng.integers(1, 12))
            toks = [str(rng.integers(0, 37)) if rng.random() < 0.85 else _ODD[rng.integers(len(_ODD))] for _ in range(n)]
            lines.append("".join(t + _SEPS[rng.integers(len(_SEPS))] for t in toks))
    nl = "\r\n" if rng.random() < 0.3 else "\n"
    text = nl.join(lines) + (nl if rng.random() < 0.7 else "")
    return text.encode(["utf-8", "utf-8-sig", "latin-1"][rng.integers(3)], errors="replace")


def _exact(*a, **k):
    raise spinlog._NeedExact("forced by the test")


def _read_three_ways(path, wheel, monkeypatch):
    out = []
    for how in ("exact", "blocks of 7 bytes", "blocks of 4 MB"):
        with monkeypatch.context() as m:
            if how == "exact":
                m.setattr(spinlog_read, "_read_spin_log_compact", _exact)
            m.setattr(permstream, "CHUNK", 7 if how == "blocks of 7 bytes" else 1 << 22)
            out.append(_snap(spinlog.read_spin_log(path, wheel, fmt="permanence")))
    return out


@pytest.mark.parametrize("wheel", ["european", "american"])
def test_streamed_permanence_reader_equals_the_exact_reader(tmp_path, monkeypatch, wheel):
    w = load_wheel(wheel)
    seen = {"title": 0, "field": 0, "latin-1": 0}
    for seed in range(40):
        p = tmp_path / f"perm{seed}.txt"
        p.write_bytes(_messy(seed))
        exact, tiny, big = _read_three_ways(p, w, monkeypatch)
        assert tiny == exact and big == exact, (seed, p.read_bytes()[:200])
        rejected, notes = exact[2], exact[3]
        seen["title"] += any(r["column"] == "line" for r in rejected)
        seen["field"] += any(r["column"].startswith("field") for r in rejected)
        seen["latin-1"] += any("latin-1" in n for n in notes)
    assert all(v >= 3 for v in seen.values()), seen  # the lists exercise titles, rejected fields and Latin-1


def test_invalid_utf8_after_a_bom_reads_the_list_again_as_latin1(tmp_path, monkeypatch):
    """A byte-order mark taken as UTF-8, then a Latin-1 byte further on: the whole file is Latin-1
    (as the exact reader decides), so the first pass is forgotten and the list read again."""
    p = tmp_path / "perm.txt"
    p.write_bytes(b"\xef\xbb\xbf1,2,3\n" + b"4,5,6\n" * 50 + "7,Ø,8\n".encode("latin-1"))
    exact, tiny, big = _read_three_ways(p, load_wheel("european"), monkeypatch)
    assert tiny == exact and big == exact
    assert any("latin-1" in n for n in exact[3]) and exact[2]


def test_permanence_list_takes_the_compact_path_with_line_starts(tmp_path, monkeypatch):
    p = tmp_path / "t5.txt"
    p.write_text("Spielbank Tisch 5\n" + "".join(",".join(str((7 * i + j) % 37) for j in range(10)) + "\n" for i in range(30)))
    taken = []

    def spy(*a, **k):
        taken.append("compact")
        return real(*a, **k)

    real = spinlog_read._read_spin_log_compact
    monkeypatch.setattr(spinlog_read, "_read_spin_log_compact", spy)
    log = spinlog.read_spin_log(p, load_wheel("european"))
    t = log.tables["t5"]
    assert taken == ["compact"] and t.n == 300 and t.outcomes.dtype == np.int8
    assert t.line_start.dtype == bool and t.line_start.sum() == 30 and t.line_start[::10].all()


def test_a_list_on_one_line_is_read_in_blocks(tmp_path, monkeypatch, compact_reads):
    """All spins on one line (no line end): the line is cut after a separator, block by block, on
    the compact path; field numbers and the line count run on across the cuts. A word on such a
    long line sends the list to the exact reader, which judges the line whole."""
    x = np.random.default_rng(9).integers(0, 37, 2000).astype(str)
    x[1499] = "37"  # rejected: line 1, field 1500
    p = tmp_path / "oneline.txt"
    p.write_text(", ".join(x.tolist()))
    w = load_wheel("european")
    taken = compact_reads
    exact, tiny, big = _read_three_ways(p, w, monkeypatch)
    assert tiny == exact and big == exact and taken == ["compact", "compact"]
    (r,) = exact[2]
    assert (r["line"], r["column"], r["text"]) == (1, "field 1500", "37")
    p.write_text(", ".join(x.tolist()[:1000]) + " Spielbank " + ", ".join(x.tolist()[1000:]))
    taken.clear()
    exact, tiny, big = _read_three_ways(p, w, monkeypatch)
    assert tiny == exact and big == exact and taken == ["compact"]  # blocks of 7 bytes: the exact reader


def _clean(seed: int) -> bytes:
    """A list of digit tokens only (pockets, and 07, 007, 00, 37, 999 that the wheel judges), one or many a line."""
    rng = np.random.default_rng(seed)
    per = int(rng.choice([1, 1, 3, 17]))
    toks = [str(rng.integers(0, 37)) if rng.random() < 0.9 else ["07", "007", "00", "37", "999", "0"][rng.integers(6)] for _ in range(int(rng.integers(1, 400)))]
    sep = [",", ";", " ", "\t", ", ", ",,"][rng.integers(6)]
    lines = [sep.join(toks[i : i + per]) + ("," if rng.random() < 0.1 else "") for i in range(0, len(toks), per)]
    nl = "\r\n" if rng.random() < 0.3 else "\n"
    return (nl.join(lines) + (nl if rng.random() < 0.7 else "")).encode()


@pytest.mark.parametrize("wheel", ["european", "american"])
def test_lists_in_the_usual_shape_take_the_simple_scan_and_equal_the_exact_reader(tmp_path, monkeypatch, wheel):
    """Blocks of digits, separators and line ends (issue 26 item 2: the scan without a per-byte cumulative
    sum) give the exact reader's spins, rejected tokens (07, 007, 00, 37, 999), fields and line starts."""
    w = load_wheel(wheel)
    simple = []
    real = permstream._simple_scan

    def spy(buf):
        r = real(buf)
        simple.append(r is not None)
        return r

    monkeypatch.setattr(permstream, "_simple_scan", spy)
    rejected = 0
    for seed in range(30):
        p = tmp_path / f"clean{seed}.txt"
        p.write_bytes(_clean(seed))
        exact, tiny, big = _read_three_ways(p, w, monkeypatch)
        assert tiny == exact and big == exact, (seed, p.read_bytes()[:200])
        rejected += len(exact[2])
    assert any(simple) and rejected >= 5, (sum(simple), rejected)
