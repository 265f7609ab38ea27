"""What every test module shares: where the shared data are, and how to run the command line.

The shared folder (``../shared`` beside the checkout: real data, published reference values,
the regulations and the cases) is found once, here: ``$RNGCERT_SHARED`` when set, else the
``shared`` folder next to the repository. Tests that need it skip with a message when it is
absent; small known answers live in ``tests/data/`` and never depend on the checkout location.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"


def shared_dir() -> Path | None:
    """The shared folder, or None when it is not on this machine."""
    env = os.environ.get("RNGCERT_SHARED")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared"]:
        if cand.is_dir():
            return cand
    return None


SHARED = shared_dir()


def shared_path(*parts: str) -> Path:
    """A path under the shared folder (it may not exist; see :func:`shared_file`)."""
    return (SHARED or REPO.parent / "shared").joinpath(*parts)


def shared_file(*parts: str) -> Path:
    """A path under the shared folder; skips the calling test when it is absent."""
    p = shared_path(*parts)
    if not p.exists():
        pytest.skip(f"{p} not available (the shared folder is on lab machines and CI; set RNGCERT_SHARED)")
    return p


def has_shared(*parts: str) -> bool:
    """Whether a shared path exists (for ``skipif``)."""
    return shared_path(*parts).exists()


def run_cli(*args, input=None, env=None, catch_exceptions=False):
    """Run ``rngcert ARGS...`` in-process with click's runner → click Result.

    The one command-line runner of the suite: the ``cli`` fixture (``conftest.py``) is this
    function; module-scoped fixtures and hypothesis tests, which cannot take a function-scoped
    fixture, call it directly. Arguments are turned into strings; an exception escapes (the test
    shows its traceback) unless ``catch_exceptions``."""
    from click.testing import CliRunner

    from rngcert.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], input=input, env=env, catch_exceptions=catch_exceptions)


def ingest_into(db, *paths) -> list:
    """Ingest the files into the store at ``db`` (opened for this and closed again) → one
    :class:`~rngcert.collect.store.IngestResult` a file."""
    from rngcert.collect.store import Store

    with Store(db) as st:
        return st.ingest(list(paths))


def split_tables(log, per_table: int, prefix: str = "T"):
    """Rewrite the ``table`` column of a simulated CSV log (the simulator names one table) so that
    each run of ``per_table`` rows is a table of its own: ``T1``, ``T2``, ... (``prefix``). → ``log``."""
    import csv

    log = Path(log)
    rows = list(csv.reader(log.read_text().splitlines()))
    j = rows[0].index("table")
    for i, row in enumerate(rows[1:]):
        row[j] = f"{prefix}{1 + i // per_table}"
    with open(log, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return log


def force_exact_read(*a, **k):
    """A stand-in for ``rngcert.collect.spinlog.read._read_spin_log_compact`` that sends every log to the exact path."""
    from rngcert.collect import spinlog

    raise spinlog._NeedExact("forced by the test")


def compact_read(monkeypatch, *, exact: bool = False):
    """A context in which ``read_spin_log``'s compact reader is spied on, or (``exact``) replaced by
    :func:`force_exact_read`: yields ``(m, taken)``, the monkeypatch context (for more patches in the block) and a
    list that gets True each time the compact reader returned a log."""
    import contextlib

    from rngcert.collect.spinlog import read as spinlog_read

    @contextlib.contextmanager
    def ctx():
        taken: list[bool] = []
        real = spinlog_read._read_spin_log_compact

        def spy(*a, **k):
            out = real(*a, **k)
            taken.append(True)
            return out

        with monkeypatch.context() as m:
            m.setattr(spinlog_read, "_read_spin_log_compact", force_exact_read if exact else spy)
            yield m, taken

    return ctx()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (Linux ``/proc``; a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def end_processes(proc, pids) -> None:
    """A test's cleanup: kill the command ``proc`` (a Popen) if it still runs, and every process of ``pids`` alive."""
    import signal

    if proc.poll() is None:
        proc.kill()
    for pid in pids:
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)
