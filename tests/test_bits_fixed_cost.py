"""What ``rngcert bits`` imports and recomputes per run (issue 26 item 5: fixed cost after the first run).

Tests of the structure, not timings. ``import scipy.special`` (the package) or ``scipy.fft`` runs scipy's
array-API layer, which imports ``numpy.testing``, ``numpy.f2py``, ``unittest``, ``importlib.metadata`` …:
about 0.2 of the 0.7 CPU-s a two-stream run cost once the exact laws were on disk. SP 800-22 takes
scipy.special's compiled ufuncs alone (``rngcert/stats/ufuncs.py``: the very objects scipy.special
exports) and the DFT test numpy's pocketfft, which gives scipy.fft's transform bit for bit (checked here,
so that a numpy or scipy release that diverges is caught before a p-value moves).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_import_narrow import _fresh  # a fresh interpreter on this tree, SCIPY_ARRAY_API unset

#: packages a bits run has no use for (the SP 800-22 tests, the two-level analysis, the report without figures)
HEAVY = ("scipy.special", "scipy.fft", "scipy._lib._array_api", "scipy.stats", "numpy.testing", "numpy.f2py", "unittest",
         "importlib.metadata", "email", "matplotlib", "dask", "distributed", "pandas", "duckdb")
#: and what ``rngcert bits --source pcg64`` does not use either: randomgen (numpy's generator), a process pool
#: (serial), the wheel battery and its power statement
CLI_UNUSED = ("randomgen", "multiprocessing", "concurrent.futures.process", "rngcert.battery.power", "rngcert.battery.wheel")
#: the scipy.special names the SP 800-22 path evaluates
NAMES = ("erfc", "gammaincc", "gammaln", "ndtr", "bdtr", "bdtrc", "pdtrc")


def test_the_sp800_22_tests_import_no_heavy_package():
    code = (
        "import json, sys\n"
        "import numpy as np\n"
        "from rngcert.battery.bits import run_stream\n"
        "from rngcert.pipeline import certify_bits, lawcache\n"
        "from rngcert.stats.nist import twolevel\n"
        "res = run_stream(np.random.default_rng(5).integers(0, 2, 20_000, dtype=np.uint8))\n"
        "ran = sum(r.applicable for r in res) > 0\n"
        f"print(json.dumps([ran, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    assert json.loads(_fresh(code)) == [True, []]


def test_the_special_functions_are_scipys_own_objects():
    code = (
        "import json\n"
        "from rngcert.stats.nist import _common, twolevel\n"
        "from rngcert.pipeline import certify_bits\n"
        "import scipy.special\n"
        f"print(json.dumps([getattr(m.special, n) is getattr(scipy.special, n) for m in (_common, twolevel, certify_bits) for n in {NAMES!r}]))\n"
    )
    assert json.loads(_fresh(code)) == [True] * (3 * len(NAMES))


@pytest.mark.parametrize("n", [1_000, 1_024, 20_000, 99_999, 100_000, 131_071, 1_000_000])
def test_numpys_rfft_is_scipys_bit_for_bit(n):
    """The DFT test's transform (``rngcert/stats/nist/dft.py``): numpy.fft.rfft of a ±1 sequence equals
    scipy.fft.rfft's exactly, so the count of peaks under the threshold, and its p-value, are unchanged."""
    import scipy.fft

    x = 2.0 * np.random.default_rng(n).integers(0, 2, n).astype(np.float64) - 1.0
    a, b = np.fft.rfft(x), scipy.fft.rfft(x)
    assert a.dtype == b.dtype and np.array_equal(a.view(np.float64), b.view(np.float64))


@pytest.mark.slow
def test_a_bits_run_imports_no_heavy_package(tmp_path):
    """A run after the first one (the exact laws on disk: their first computation may use scipy.fft)."""
    code = (
        "import json, os, sys\n"
        "os.environ.pop('DASK_SCHEDULER_ADDRESS', None)\n"
        "from rngcert.cli.app import main\n"
        f"sys.argv = ['rngcert', 'bits', '--source', 'pcg64', '-m', '2', '-n', '20000', '--seed', '1', '--no-plots', '--workers', '1', "
        f"'--out', {str(tmp_path / 'rep')!r}]\n"
        "try:\n"
        "    main(standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {HEAVY + CLI_UNUSED!r} if m in sys.modules]))\n"
    )
    _fresh(code)  # the first run at this n: the laws go to the disk cache
    assert json.loads(_fresh(code)) == []
    assert any((tmp_path / "rep").glob("bits-*/report.json"))


def test_jsonable_takes_plain_types_as_before():
    """jsonable's exact-type fast path (every report passes through it) gives what its general checks give."""
    from rngcert.stats.result import Requirement, jsonable

    got = jsonable({1: (1.5, float("nan"), -float("inf"), True, None, "a", Requirement.UNIFORMITY, np.float64(2), np.int64(3),
                        np.bool_(False), np.array([1, 2]), [{"x": -0.0}])})
    assert got == {"1": [1.5, None, None, True, None, "a", "uniformity", 2.0, 3, False, [1, 2], [{"x": -0.0}]]}
    assert [type(v) for v in got["1"][:8]] == [float, type(None), type(None), bool, type(None), str, str, float]
    assert type(got["1"][8]) is int and type(got["1"][9]) is bool and str(got["1"][11][0]["x"]) == "-0.0"
