"""rngcert.collect.heap: the allocator thresholds the fast readers set (issue 26 item 2)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from rngcert.collect import heap

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc only")


@glibc
def test_set_once_and_kept():
    assert heap.keep_freed_heap() is True
    assert heap.keep_freed_heap() is True  # idempotent


def _in_child(env_extra: dict) -> str:
    code = "from rngcert.collect import heap; print(heap.keep_freed_heap())"
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


@glibc
def test_user_setting_wins():
    assert _in_child({"MALLOC_TRIM_THRESHOLD_": "1000000"}) == "False"
    assert _in_child({"MALLOC_MMAP_THRESHOLD_": "1000000"}) == "False"


@glibc
def test_readers_set_it(tmp_path):
    """Reading a permanence list sets the thresholds in the reading process."""
    f = tmp_path / "list.txt"
    f.write_text("1\n2\n3\n" * 40)
    code = ("import sys; from rngcert.collect import heap; from rngcert.collect.spinlog import read_spin_log; "
            "from rngcert.equipment.wheel import load_wheel; assert not heap._done; "
            "read_spin_log([sys.argv[1]], load_wheel('european')); print(heap._done)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", code, str(f)], env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True"
