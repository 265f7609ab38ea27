"""Narrow imports of a small certify (issue 26 item 1): ``rngcert.stats.ufuncs``, scipy.special's compiled
ufuncs loaded without the package's array-API layer, the very objects ``scipy.special`` exports (so every
number is bit-identical); randomgen's version read from its dist-info without ``importlib.metadata``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SCIPY_ARRAY_API", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def test_the_ufuncs_load_without_the_package_and_are_the_packages_own_objects():
    code = (
        "import json, sys\n"
        "from rngcert.stats.ufuncs import special, ufuncs\n"
        "alone = type(special).__name__ == '_Special' and 'scipy.special' not in sys.modules and 'numpy.testing' not in sys.modules\n"
        "import scipy.special\n"  # the real package afterwards: its __init__ runs and reuses the loaded extension
        "names = ['bdtr', 'bdtrc', 'bdtri', 'bdtrik', 'chdtrc', 'chdtri', 'chndtrinc', 'gammainc', 'gammaln', 'ndtr', 'xlogy']\n"
        "same = all(getattr(special, n) is getattr(scipy.special, n) for n in names) and ufuncs is scipy.special._ufuncs\n"
        "print(json.dumps([alone, same, bool(scipy.special.logsumexp([0.0, 0.0]) > 0)]))\n"
    )
    assert json.loads(_fresh(code)) == [True, True, True]


def test_a_name_outside_the_extension_comes_from_the_whole_package():
    from rngcert.stats.ufuncs import special

    assert float(special.logsumexp(np.zeros(2))) == float(np.log(2.0))


def test_the_whole_package_when_already_imported_or_array_api_is_on():
    code = "import scipy.special, json\nfrom rngcert.stats.ufuncs import special\nprint(json.dumps(special is scipy.special))\n"
    assert json.loads(_fresh(code)) is True
    env_code = ("import os, json\nos.environ['SCIPY_ARRAY_API'] = '1'\nfrom rngcert.stats import ufuncs as _special\n"
                "print(json.dumps(_special.special.__name__ == 'scipy.special'))\n")
    assert json.loads(_fresh(env_code)) is True


def test_a_packages_version_from_its_dist_info_is_importlib_metadatas():
    from importlib.metadata import version

    from rngcert.report.schema import _dist_info_version

    for package in ("randomgen", "numpy", "scipy"):
        assert _dist_info_version(package) == version(package)
    assert _dist_info_version("rngcert_no_such_package") is None


def test_the_ufuncs_load_without_scipys_own_init_and_scipy_imports_whole_afterwards():
    code = (
        "import json, sys\n"
        "import numpy\n"
        "from rngcert.stats.ufuncs import special, ufuncs\n"
        "alone = [m for m in ('scipy', 'scipy._lib', 'scipy.special', 'scipy._lib._testutils', 'subprocess', 'sysconfig') if m in sys.modules]\n"
        "import scipy, scipy.special, scipy.stats, scipy._lib._ccallback\n"  # the real packages afterwards, submodules bound as attributes
        "whole = [scipy._lib._ccallback is sys.modules['scipy._lib._ccallback'], scipy.special._ufuncs is ufuncs, bool(scipy.__version__),\n"
        "         float(scipy.stats.chi2.sf(2.0, 3)) == float(special.chdtrc(3, 2.0)), scipy._cyutility is sys.modules['scipy._cyutility']]\n"
        "print(json.dumps([alone, whole, [type(f).__name__ for f in sys.meta_path].count('_Rebind')]))\n"
    )
    assert json.loads(_fresh(code)) == [[], [True] * 5, 0]


def test_a_wheel_certification_reports_scipys_version_without_importing_scipy(tmp_path):
    """The report's ``software`` names scipy's version from its dist-info: importing scipy's own ``__init__``
    only for its version cost every certify about 0.04 CPU-s, and every forked audit worker imported it again
    (found by tests/test_parallel.py after the narrow ufuncs import). The version is scipy's."""
    code = (
        "import json, sys\n"
        "from rngcert.cli.app import main\n"
        f"try:\n    main(['certify', '--seed', '1', '--resamples', '199', '--no-plots', '--out', {str(tmp_path)!r}])\n"
        "except SystemExit:\n    pass\n"
        "loaded = 'scipy' in sys.modules\n"
        f"rep = json.load(open(next(__import__('pathlib').Path({str(tmp_path)!r}).glob('*/report.json'))))\n"
        "import scipy\n"
        "print(json.dumps([loaded, rep['software']['scipy'] == scipy.__version__]))\n"
    )
    assert json.loads(_fresh(code)) == [False, True]


def test_a_shuffle_certification_imports_neither_scipy_stats_nor_scipy_signal(tmp_path):
    """`shuffle certify` (its batteries, trackers, sum laws and power) without scipy.stats and scipy.signal: their
    imports (about 0.8 s) were the largest serial part of a certification, before any shoe was dealt."""
    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from rngcert.cli.app import main\n"
        f"r = CliRunner().invoke(main, ['shuffle', 'certify', 'baccarat-004', '--seed', '1', '--shoes', '200', '--no-plots', '--no-sensitivity', '--workers', '1', '--out', {str(tmp_path)!r}])\n"
        "print(json.dumps([r.exit_code, [m for m in ('scipy.stats', 'scipy.signal') if m in sys.modules]]))\n"
    )
    code_ran, heavy = json.loads(_fresh(code))
    assert code_ran in (0, 10, 11, 12) and heavy == []
