"""Reports are byte-identical before and after a refactor, apart from time stamps and paths.

The house issue (27) moves code between modules, builds the options once in the command line and
turns games into data; none of it may change a report. This test certifies fixed inputs with fixed
seeds and compares every file written (``report.json``, ``report.html``, ``rejects.csv``) and the
terminal summary, byte for byte, with the copies recorded in ``tests/data/golden/`` (``<file>.golden``, so that no tool reads them as
source) before the work began, after replacing only what differs between two runs of the same command:

- the generation time (``generated_utc`` and its copies in the HTML);
- the report folder, the repository, installed-package, bundled-log and test-data paths, and the command line that names them;
- the report id and SHA-256 (they hash the generation time) and the file hashes listed beside them;
- the versions of Python and the libraries (``software``), which are the machine's, not rngcert's.

The cases: the bundled default log (what ``rngcert certify`` does on a fresh machine), a three-table
log (one verdict per table; ``tests/data/golden/multi-table.csv``, made by ``rngcert simulate wheel``
with seeds 65, 66, 67 and 1,500 spins a table), a simulated shuffle procedure and an SP 800-22 run.

A deliberate change of a report regenerates the copies::

    python tests/test_golden_reports.py --regen

and the commit that does so says why the reports changed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _support import REPO, TEST_DATA, run_cli  # noqa: E402

GOLDEN = TEST_DATA / "golden"

# name -> (command line after `rngcert`, slow?)
CASES = {
    "bundled": (["certify", "--seed", "1", "--workers", "1"], False),
    "multi-table": (["certify", str(GOLDEN / "multi-table.csv"), "--seed", "1", "--workers", "1"], True),
    "shuffle-procedure": (["shuffle", "certify", "baccarat-004", "--shoes", "60", "--burn-in", "2",
                           "--no-sensitivity", "--seed", "1", "--workers", "1"], True),
    "bits-pcg64": (["bits", "--source", "pcg64", "-m", "4", "-n", "100000", "--seed", "1",
                    "--workers", "1"], True),
}
FILES = ("report.json", "report.html", "rejects.csv")


def _run(name: str, out: Path) -> dict[str, bytes]:
    """Run one case into ``out`` and return its files and summary, normalised."""
    args, _slow = CASES[name]
    res = run_cli(*args, "--out", str(out))
    assert res.exit_code in (0, 10, 11, 12), res.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    files = {f: (folder / f).read_bytes() for f in FILES}
    files["summary.txt"] = res.output.encode()
    report = json.loads(files["report.json"])
    import rngcert
    from rngcert.cli._common import default_log_path

    subs: list[tuple[str, str]] = [
        (str(folder), "<REPORT-FOLDER>"),
        (str(out), "<OUT>"),
        (str(GOLDEN), "<GOLDEN>"),
        (str(default_log_path()), "<BUNDLED-LOG>"),
        (str(Path(rngcert.__file__).resolve().parent), "<PACKAGE>"),
        (str(REPO), "<REPO>"),
        (report["generated_utc"], "<GENERATED-UTC>"),
        (report["integrity"]["report_sha256"], "<REPORT-SHA256>"),
        (report["integrity"]["report_id"], "<REPORT-ID>"),
    ]
    subs += [(h, f"<SHA256-OF-{f}>") for f, h in report["integrity"]["files"].items()]
    subs.sort(key=lambda kv: -len(kv[0]))  # the longest path first: the package may lie inside the repository
    text = {}
    for f, raw in files.items():
        s = raw.decode("utf-8")
        for old, new in subs:
            s = s.replace(old, new)
        # The machine's versions: "numpy": "2.4.6" in JSON, "numpy 2.4.6" in the HTML.
        for lib, ver in report.get("software", {}).items():
            if lib == "rngcert":
                continue
            s = re.sub(rf'("{lib}": ")' + re.escape(str(ver)) + '"', rf'\g<1><{lib.upper()}-VERSION>"', s)
            s = re.sub(rf"(\b{lib}\W{{1,3}})" + re.escape(str(ver)) + r"\b", rf"\g<1><{lib.upper()}-VERSION>", s)
        text[f] = s.encode("utf-8")
    return text


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if slow else []) for n, (_a, slow) in CASES.items()]
)
def test_report_bytes_unchanged(name, tmp_path):
    got = _run(name, tmp_path)
    for f, data in got.items():
        want = (GOLDEN / name / (f + ".golden")).read_bytes()
        if data != want and f == "report.json":
            _same_json(json.loads(want), json.loads(data), f"{name}/{f}")
            continue
        if data != want:
            a, b = want.decode().splitlines(), data.decode().splitlines()
            diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            pytest.fail(
                f"{name}/{f} differs from the recorded copy at line {diff + 1}:\n"
                f"  recorded: {a[diff][:300] if diff < len(a) else '<end>'}\n"
                f"  now:      {b[diff][:300] if diff < len(b) else '<end>'}\n"
                "A deliberate change: python tests/test_golden_reports.py --regen, and say why in the commit."
            )


#: Floats of report.json may differ in their last bits from one CPU to another, never more: numpy's
#: float64 exp, log, sin and cos run its own AVX-512 code where the CPU has it and the C library's
#: elsewhere (the recorded copies come from a machine without it). A statistic or p-value moves by
#: about 1e-15 (`rngcert verify --rerun` compares them at 1e-9); a figure found by a root search on a
#: reweighted Monte Carlo sample (a power statement's effect and its standard error) by up to about
#: 2e-8. Everything else (every string, integer, verdict, the structure, the HTML and the terminal
#: summary, whose figures are rounded) must be byte for byte.
FLOAT_REL, FLOAT_ABS = 1e-6, 1e-12


def _same_json(want, got, where: str) -> None:
    """``got`` equals ``want`` with floats within :data:`FLOAT_REL` (or :data:`FLOAT_ABS` near 0)."""
    import math

    if isinstance(want, dict) and isinstance(got, dict):
        assert list(want) == list(got), f"{where}: keys differ: {list(want)} against {list(got)}"
        for k in want:
            _same_json(want[k], got[k], f"{where}/{k}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(want) == len(got), f"{where}: {len(want)} items recorded, {len(got)} now"
        for i, (a, b) in enumerate(zip(want, got)):
            _same_json(a, b, f"{where}/{i}")
    elif isinstance(want, float) and isinstance(got, float) and not isinstance(got, bool):
        assert math.isclose(want, got, rel_tol=FLOAT_REL, abs_tol=FLOAT_ABS), f"{where}: recorded {want!r}, now {got!r}"
    else:
        assert type(want) is type(got) and want == got, f"{where}: recorded {want!r}, now {got!r}"


def test_same_json_allows_last_bits_only():
    _same_json({"a": [0.247026630227609, "x", 3], "b": -2.43e-17}, {"a": [0.2470266302276089, "x", 3], "b": -2.41e-17}, "r")
    for other in ({"a": [0.24703, "x", 3], "b": 0.0}, {"a": [0.247026630227609, "y", 3], "b": 0.0},
                  {"a": [0.247026630227609, "x", 3.0], "b": 0.0}, {"b": 0.0, "a": [0.247026630227609, "x", 3]}):
        with pytest.raises(AssertionError):
            _same_json({"a": [0.247026630227609, "x", 3], "b": 0.0}, other, "r")


def _regen() -> None:
    import tempfile

    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            got = _run(name, Path(tmp))
        d = GOLDEN / name
        d.mkdir(parents=True, exist_ok=True)
        for f, data in got.items():
            (d / (f + ".golden")).write_bytes(data)
        print(f"recorded {name}: {', '.join(sorted(got))}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--regen"]:
        _regen()
    else:
        sys.exit("usage: python tests/test_golden_reports.py --regen")
