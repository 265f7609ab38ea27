"""What a plain wheel certify imports (issue 26 item 1: fixed cost): nothing it does not use.

A certify runs in a fresh interpreter, in-process through the CLI, on a CSV log and on a
permanence list of several numbers a line (whose line-start integrity check uses Fisher's exact
test); then the heavy packages it has no use for must not be in ``sys.modules``. A test of the
structure, not a timing: ``scipy.stats`` costs 0.5-1.9 s to import, randomgen 0.12 s (only its
version is reported), Dask, DuckDB, matplotlib and pandas more; the package ``scipy.special`` 0.19 s
of which 0.13 s is numpy's ``testing`` and ``f2py`` pulled in by scipy's array-API layer (the
wheel path loads the compiled ufuncs alone, ``rngcert/stats/ufuncs.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy.stats", "dask", "distributed", "duckdb", "matplotlib", "pandas", "randomgen", "numba",
         # scipy.special's package (its array-API layer imports numpy.testing, numpy.f2py, unittest: 0.13 s);
         # the wheel path takes its ufuncs alone (rngcert/stats/ufuncs.py)
         "scipy.special", "scipy._lib._array_api", "numpy.testing", "numpy.f2py", "unittest",
         # importlib.metadata and its email parser, once imported for randomgen's version (report/schema.py)
         "importlib.metadata", "email",
         # numpy.ma, imported by np.unique (without return_index ...) and np.quantile: rngcert/stats/arrayops.py
         "numpy.ma")


def _imported_after_certify(tmp_path, log: Path) -> list[str]:
    code = (
        "import json, sys\n"
        "from rngcert.cli.app import main\n"
        f"sys.argv = ['rngcert', 'certify', {str(log)!r}, '--seed', '1', '--resamples', '999', '--out', {str(tmp_path / 'rep')!r}]\n"
        "try:\n"
        "    main(standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "rep").is_dir(), r.stdout[-2000:] + r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_plain_wheel_certify_imports_no_heavy_package(tmp_path):
    rng = np.random.default_rng(26)
    x = rng.integers(0, 37, 10_000)
    csv = tmp_path / "spins.csv"
    csv.write_text("spin_id,result\n" + "".join(f"{i + 1},{v}\n" for i, v in enumerate(x)))
    assert _imported_after_certify(tmp_path / "a", csv) == []
    perm = tmp_path / "permanence.txt"  # ten numbers a line: the line-start check (Fisher's exact test) runs
    perm.write_text("".join(" ".join(str(v) for v in x[i : i + 10]) + "\n" for i in range(0, x.size, 10)))
    assert _imported_after_certify(tmp_path / "b", perm) == []
    # the bundled log: directions, release positions, void spins, a table column
    assert _imported_after_certify(tmp_path / "c", ROOT / "data" / "default-european-spins.csv") == []
