"""The log read ahead in a child process (issue 26 item 6): ``rngcert certify`` on two cores reads a large log in a
forked child while it imports the pipeline. The log, and so the report, is the one the process would have read
itself; an error of the read is the same error; a child that dies leaves the read to the process.

The CLI runs are subprocesses (a fork from a pytest worker, which runs other threads, is refused by design); there
the size threshold is lowered so that a small log is read ahead, and two cores are assumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rngcert.pipeline.parallel as parallel
from rngcert.errors import InputError
from rngcert.pipeline.parallel import AHEAD_MAX_BYTES, AHEAD_MIN_BYTES, Plan, run_ahead

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = ("generated_utc", "command", "rejects_file", "integrity")


@pytest.fixture
def two_cores_one_thread(monkeypatch):
    """run_ahead's conditions met whatever the machine and the test runner's threads (the children here only compute)."""
    monkeypatch.setattr(parallel, "available_cores", lambda **kw: 2)
    monkeypatch.setattr(parallel, "_python_threads", lambda: 1)


def _arrays(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return {"x": rng.integers(0, 37, n, dtype=np.int8), "y": rng.random(n), "pid": os.getpid()}


def _refuse(name: str):
    raise InputError(f"{name}, line 3, column result: 'zero' is not a pocket of the european wheel")


def _die_in_child(parent: int, n: int):
    if os.getpid() != parent:
        os._exit(3)  # a child killed before it sent anything
    return _arrays(n, 5)


def test_the_value_comes_from_the_child_and_equals_the_direct_call(two_cores_one_thread):
    ahead = run_ahead(_arrays, 300_000, 1, plan=Plan(), nbytes=AHEAD_MIN_BYTES)
    assert ahead is not None
    got = ahead.result()
    want = _arrays(300_000, 1)
    assert got["pid"] != os.getpid()  # computed in the child
    np.testing.assert_array_equal(got["x"], want["x"])
    np.testing.assert_array_equal(got["y"], want["y"])
    assert got["x"].dtype == want["x"].dtype


def test_an_error_of_the_child_is_raised_here_with_its_type_and_message(two_cores_one_thread):
    ahead = run_ahead(_refuse, "spins.csv", plan=Plan(), nbytes=AHEAD_MIN_BYTES)
    with pytest.raises(InputError, match=r"spins\.csv, line 3, column result: 'zero' is not a pocket"):
        ahead.result()


def test_a_child_that_dies_leaves_the_work_to_this_process(two_cores_one_thread):
    ahead = run_ahead(_die_in_child, os.getpid(), 1000, plan=Plan(), nbytes=AHEAD_MIN_BYTES)
    got = ahead.result()
    assert got["pid"] == os.getpid()
    np.testing.assert_array_equal(got["x"], _arrays(1000, 5)["x"])


def test_no_child_where_it_does_not_pay(two_cores_one_thread, monkeypatch):
    assert run_ahead(_arrays, 10, 1, plan=Plan(workers=1), nbytes=AHEAD_MIN_BYTES) is None  # serial: the reference run
    assert run_ahead(_arrays, 10, 1, plan=Plan(), nbytes=AHEAD_MIN_BYTES - 1) is None  # a small log
    assert run_ahead(_arrays, 10, 1, plan=Plan(), nbytes=AHEAD_MAX_BYTES + 1) is None  # a log whose value would be held twice
    monkeypatch.setattr(parallel, "available_cores", lambda **kw: 1)
    assert run_ahead(_arrays, 10, 1, plan=Plan(), nbytes=AHEAD_MIN_BYTES) is None  # one core: nothing to overlap


#: The CLI with the threshold at 0 and two cores assumed; prints READ-AHEAD on stderr when a child read the log.
RUN = """
import sys
import rngcert.pipeline.parallel as p
p.AHEAD_MIN_BYTES = 0
p.available_cores = lambda **kw: 2
real = p.Ahead.result
def result(self):
    sys.stderr.write("READ-AHEAD\\n")
    return real(self)
p.Ahead.result = result
sys.argv = ["rngcert"] + sys.argv[1:]
from rngcert.cli.app import main
main()
"""


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
    return subprocess.run([sys.executable, "-c", RUN, *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT)


def _log(path: Path) -> Path:
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

    eu = load_wheel("european")
    with open(path, "wb") as fh:
        for k, (table, n) in enumerate([("T1", 3000), ("T2", 1500), ("T3", 600)]):
            sim = simulate_spins(eu, n, np.random.default_rng(k), bias=WheelBias(), dealers=2, void_rate=0.01)
            write_spin_log(fh, eu, sim, table=table, header=k == 0)
    return path


def test_certify_reading_ahead_writes_the_serial_report(tmp_path):
    log = _log(tmp_path / "casino.csv")
    common = ["certify", log, "--seed", 3, "--resamples", 99, "--json"]
    ahead, serial = _cli(*common, "--out", tmp_path / "a"), _cli(*common, "--workers", 1, "--out", tmp_path / "s")
    assert ahead.returncode == serial.returncode and ahead.returncode in (0, 10, 11, 12), ahead.stderr[-2000:]
    assert "READ-AHEAD" in ahead.stderr and "READ-AHEAD" not in serial.stderr
    a, s = json.loads(ahead.stdout), json.loads(serial.stdout)
    assert [t["table"] for t in a["tables"]] == ["T1", "T2", "T3"]
    assert {k: v for k, v in a.items() if k not in VOLATILE} == {k: v for k, v in s.items() if k not in VOLATILE}
    assert a["integrity"]["files"]["rejects.csv"] == s["integrity"]["files"]["rejects.csv"]


def test_certify_reading_ahead_reports_a_bad_log_as_the_serial_run_does(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("table,when\nT1,2024-01-01\n")  # no result column
    ahead, serial = _cli("certify", bad, "--out", tmp_path / "a"), _cli("certify", bad, "--workers", 1, "--out", tmp_path / "s")
    assert "READ-AHEAD" in ahead.stderr
    assert ahead.returncode == serial.returncode != 0
    assert ahead.stderr.replace("READ-AHEAD\n", "") == serial.stderr
    assert "result" in serial.stderr
