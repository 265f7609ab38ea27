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


def test_shuffle_thresholds(monkeypatch):
    """The shuffle simulation asks for its own, larger thresholds (its arrays are 1-7 MB each)."""
    from rngcert.pipeline.certify_shuffle._common import keep_shuffle_heap

    calls = []
    monkeypatch.setattr(heap, "keep_freed_heap", lambda *a, **k: calls.append((a, k)) or True)
    keep_shuffle_heap()
    assert calls == [((heap.SHUFFLE_TRIM_THRESHOLD, heap.SHUFFLE_MMAP_THRESHOLD), {})]
    assert heap.SHUFFLE_MMAP_THRESHOLD <= 32 << 20  # glibc's largest M_MMAP_THRESHOLD (larger values are refused)


@glibc
def test_shuffle_work_item_sets_it():
    """A shuffle work item sets the thresholds in the process that runs it (a Dask worker starts no certification)."""
    code = ("from rngcert.collect import heap; from rngcert.equipment.procedure import load_procedure; "
            "from rngcert.pipeline.certify_shuffle.procedure import _batch_item; assert not heap._done; "
            "_batch_item((load_procedure('baccarat-004'), 0, 3, 1, 1, ('tables',))); print(heap._done)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip() == "True"
