"""The fixed cost of a permanence list's certify (issue 26 item 1): the list is parsed with numpy, so
pyarrow (about 0.07 CPU-s of imports) is imported only on the paths that use it (CSV and JSON Lines
readers, the exact reader of lines with text); the digit-string table resolved without a pyarrow column
reads every token as the column did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ARROW = ["pyarrow", "pyarrow.compute", "pyarrow.csv", "pyarrow.json"]


def _fresh(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def _list(path: Path, n: int = 600) -> Path:
    x = np.random.default_rng(7).integers(0, 37, n)
    half = n // 2
    path.write_text("\n".join(map(str, x[:half])) + "\n" + "".join(" ".join(map(str, x[i : i + 10])) + "\n" for i in range(half, n, 10)))
    return path


def test_reading_a_permanence_list_imports_no_pyarrow(tmp_path):
    p = _list(tmp_path / "perm.txt")
    code = (
        "import json, sys\n"
        "from rngcert.collect.spinlog import read_spin_log\n"
        "from rngcert.equipment.wheel import load_wheel\n"
        f"log = read_spin_log([{str(p)!r}], load_wheel('european'))\n"
        "n = sum(len(t.outcomes) for t in log.tables.values())\n"
        f"print(json.dumps([n, [m for m in {ARROW!r} if m in sys.modules]]))\n"
    )
    assert json.loads(_fresh(code)) == [600, []]


def test_a_list_with_a_title_line_still_reads_it_with_pyarrow(tmp_path):
    """The exact reader (lines with text) uses pyarrow: it is imported then, and the title is rejected as before."""
    p = tmp_path / "titled.txt"
    p.write_text("Table 3 permanence\n" + "\n".join(map(str, range(37))) + "\nseven\n")
    code = (
        "import json, sys\n"
        "from rngcert.collect.spinlog import read_spin_log\n"
        "from rngcert.equipment.wheel import load_wheel\n"
        f"log = read_spin_log([{str(p)!r}], load_wheel('european'))\n"
        "n = sum(len(t.outcomes) for t in log.tables.values())\n"
        "print(json.dumps([n, [r.line for r in log.rejected], 'pyarrow' in sys.modules]))\n"
    )
    n, lines, arrow = json.loads(_fresh(code))
    assert n == 37 and 39 in lines and arrow


@pytest.mark.slow
def test_a_permanence_certify_imports_no_pyarrow(tmp_path):
    p = _list(tmp_path / "perm.txt")
    code = (
        "import json, sys\n"
        "from rngcert.cli.app import main\n"
        f"sys.argv = ['rngcert', 'certify', {str(p)!r}, '--seed', '1', '--out', {str(tmp_path / 'rep')!r}]\n"
        "try:\n"
        "    main(standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {ARROW!r} if m in sys.modules]))\n"
    )
    assert json.loads(_fresh(code)) == []
    assert any((tmp_path / "rep").glob("*/report.json"))


@pytest.mark.parametrize("wheel_id", ["european", "american"])
def test_the_digit_table_without_a_column_reads_as_the_column(wheel_id):
    from rngcert.collect import _arrow
    from rngcert.collect.spinlog.columns import _resolve_labels
    from rngcert.equipment.wheel import load_wheel

    wheel = load_wheel(wheel_id)
    texts = [str(d) for d in range(10)] + [f"{d:02d}" for d in range(100)] + [f"{d:03d}" for d in range(1000)] + ["void", "x", ""]
    offsets = np.r_[0, np.cumsum([len(t) for t in texts])]
    col = _arrow.strings(offsets, "".join(texts).encode("ascii"))
    a, b = _resolve_labels(texts, wheel), _resolve_labels(col, wheel)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        else:
            assert x == y
    pos, bad, at = a[0], a[3], {t: i for i, t in enumerate(texts)}
    assert pos[at["7"]] == pos[at["07"]] == pos[at["007"]] >= 0 and bad[at["x"]] >= 0 and pos[at["x"]] == -1


def test_the_lazy_module_gives_the_modules_own_objects():
    import pyarrow
    import pyarrow.compute

    from rngcert.collect._lazy import LazyModule, pa, pc

    assert pa.array is pyarrow.array and pc.dictionary_encode is pyarrow.compute.dictionary_encode
    assert isinstance(pyarrow.chunked_array([[1]]), pa.ChunkedArray)
    with pytest.raises(AttributeError):
        LazyModule("pyarrow").no_such_name_in_pyarrow  # noqa: B018
