"""A command killed while its local pool runs (a batch system's time limit: SIGTERM, then SIGKILL) left its
workers alive, each computing its item to the end for nobody and then waiting (a fresh helper's finding: still there
10 s after a SIGTERM of `shuffle certify --workers 2`). Each worker now asks the kernel to kill it when the process
that started it ends (Linux ``PR_SET_PDEATHSIG``, SIGKILL: with SIGTERM, a worker whose signal went to another of its
threads than the one sleeping in its item ran on, in 2 of about 10 full test runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from _support import end_processes, process_alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

SCRIPT = """
import os, sys, time
from rngcert.pipeline.parallel import Plan, iter_items
def item(seconds):  # (a worker runs items only after its initializer: it has asked for the kernel's signal by now)
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(seconds)
if __name__ == "__main__":
    print("ready", flush=True)
    for _ in iter_items(item, [60.0, 60.0], plan=Plan(workers=2)):
        pass
"""


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def _wait(pred, limit: float = 30.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def test_workers_end_when_the_command_is_killed(tmp_path):
    env = dict(os.environ, RNGCERT_DASK_START="fork")
    workers: list[int] = []
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        # both workers in their item (not only forked: killed before it asked, a worker got no signal, a flaky run)
        assert _wait(lambda: len([f for f in os.listdir(tmp_path) if f.isdigit()]) >= 2), "the pool's workers did not start"
        workers = [int(f) for f in os.listdir(tmp_path) if f.isdigit()]
        assert set(workers) <= set(_children(proc.pid))
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup of its own can run
        proc.wait(timeout=30)
        # the workers were 60 s into a 60 s item: without the kernel's signal they would live on
        assert _wait(lambda: not any(process_alive(w) for w in workers)), [w for w in workers if process_alive(w)]
    finally:
        end_processes(proc, workers)


def test_a_worker_whose_command_ended_before_it_asked_ends_at_once():
    """Killed between a worker's fork and its PR_SET_PDEATHSIG, the command sends it nothing (the kernel signals only
    a death after the request): the worker sees that its parent is no longer the command and ends (exit 143). Here
    the 'command' given is a pid that is not this process's parent."""
    code = "from rngcert.pipeline.parallel import _end_with_parent\n_end_with_parent(1)\nprint('alive')\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 143 and "alive" not in p.stdout, (p.returncode, p.stdout, p.stderr)
    code = "import os\nfrom rngcert.pipeline.parallel import _end_with_parent\n_end_with_parent(os.getppid())\nprint('alive')\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "alive" in p.stdout, (p.returncode, p.stdout, p.stderr)
