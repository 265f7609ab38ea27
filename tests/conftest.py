"""Fixtures shared by the whole suite: the shared-data folder and a command-line runner.

Fast subset: ``pytest -m "not slow"``; calibration runs are marked ``slow``.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from _support import SHARED, run_cli, shared_file

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

    Standard error is kept apart from standard output (``result.stderr``). The runner is
    :func:`_support.run_cli` (for module-scoped fixtures and hypothesis tests)."""
    return run_cli


@pytest.fixture
def compact_reads(monkeypatch):
    """The calls of the compact spin-log reader that returned (one ``"compact"`` each), in a list
    that grows as the test reads logs; a read that falls back to the exact path adds nothing."""
    import rngcert.collect.spinlog.read as spinlog_read  # where read_spin_log looks up _read_spin_log_compact

    taken: list[str] = []
    real = spinlog_read._read_spin_log_compact

    def spy(*a, **k):
        out = real(*a, **k)
        taken.append("compact")
        return out

    monkeypatch.setattr(spinlog_read, "_read_spin_log_compact", spy)
    return taken


#: Tests that take more than about 2 s each on the 2-core machine, marked ``slow`` here in one
#: place (besides the modules and tests that mark themselves): the calibration modules, the
#: fuzzers, the whole-pipeline report tests and the store's concurrency runs. They run in the full
#: suite (CI); ``pytest -m "not slow"`` leaves them out.
LONG = (
    "tests/test_stats_calibration.py::",
    "tests/test_nist_nulllaw.py::",
    "tests/test_nist_twolevel_calibration.py::",
    "tests/test_fuzz.py::",
    "tests/test_store_concurrency.py::",
    "tests/test_power.py::test_validation_",
    "tests/test_report.py::test_one_header_schema_for_every_pipeline",
    "tests/test_report.py::test_audit_report_title_counts_trend_section",
    "tests/test_report_pdf.py::test_pdf_opens_with_a_certificate_and_is_sealed",
    "tests/test_cli_rng.py::test_bits_from_generator_two_level_report",
    "tests/test_cli_shuffle.py::test_packaged_procedure_report_shows_assumptions_edges_and_first_shoe",
    "tests/test_cli_shuffle.py::test_one_riffle_procedure_fails_on_edge",
    "tests/test_verify.py::test_shuffle_reports_rerun",
    "tests/test_verify.py::test_bits_report_reruns",
    "tests/test_shuffle_logs.py::test_held_out_faulty_shufflers_fail",
    "tests/test_store.py::test_sigkill_during_ingest_leaves_store_unchanged_and_rerun_completes_once",
    "tests/test_nist_calibration.py::test_biased_streams_fail_two_level",
    "tests/test_trackers.py::test_blackjack_trackers_validation",
    "tests/test_spinlog_memory.py::test_certify_tiny_batches_equal_one_batch",
    "tests/test_shuffle_pin.py::test_certify_report_statistics_are_unchanged",
    "tests/test_cli_shuffle.py::test_dealt_only_scanner_stream_is_rebuilt",
    "tests/test_cli_shuffle.py::test_sensitivity_grid_states_verdict_edge_and_power_per_point",
    "tests/test_cli_shuffle.py::test_simulated_log_takes_the_same_path",
    "tests/test_shuffle_logs.py::test_fisher_yates_log_passes",
    "tests/test_arrow_views.py::test_wheel_certify_imports_neither_pandas_scipy_stats_scipy_fft_nor_matplotlib",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(LONG):
            item.add_marker(pytest.mark.slow)
