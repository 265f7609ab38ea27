"""Fixtures shared by the whole suite: the shared-data folder and a command-line runner.

Fast subset: ``pytest -m "not slow"``; calibration runs are marked ``slow``.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from _support import SHARED, shared_file
from click.testing import CliRunner

# the verdict-power cache of the suite lives in the temp folder, not in the user's home; the cached
# numbers are those a fresh simulation gives (tests/test_verdict_power_cache.py), so sharing it
# across workers and runs changes run times only
os.environ.setdefault("RNGCERT_CACHE", os.path.join(tempfile.gettempdir(), "rngcert-test-cache"))


@pytest.fixture(scope="session")
def shared():
    """The shared folder (``../shared`` or ``$RNGCERT_SHARED``); skips when absent."""
    if SHARED is None:
        pytest.skip("the shared folder is not on this machine (set RNGCERT_SHARED)")
    return SHARED


@pytest.fixture
def shared_data():
    """``shared_data("roulette-wiesbaden", "x.txt")`` → the path, skipping when absent."""
    return lambda *parts: shared_file("data", *parts)


@pytest.fixture
def cli():
    """Run ``rngcert ARGS...`` in-process: ``cli("certify", path, "--seed", "1")`` → click Result.

    Standard error is kept apart from standard output (``result.stderr``)."""
    from rngcert.cli import main

    def run(*args, input=None, env=None):
        return CliRunner().invoke(main, [str(a) for a in args], input=input, env=env, catch_exceptions=False)

    return run
