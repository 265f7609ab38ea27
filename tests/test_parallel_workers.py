"""The worker count and when a local cluster is used (issue 26 item 6): cores from the CPU affinity
and the cgroup quota, not ``os.cpu_count()``; by default, a cluster only where it pays.
No Dask cluster is started here (fast); tests/test_parallel.py runs the clusters. The local pool's own
behaviour (forked workers, an error's type, a worker that dies) is checked here on tiny items."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rngcert.pipeline.parallel import Plan, available_cores, cgroup_cpu_limit, describe, map_items, parallel_pays, table_cost

ROOT = Path(__file__).resolve().parents[1]


def _fake_cgroup(tmp_path, membership: str, files: dict[str, str]):
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text(membership)
    return dict(cgroup_root=root, proc_cgroup=proc)


def test_cgroup_v2_quota_is_the_smallest_of_the_cgroup_and_its_ancestors(tmp_path):
    kw = _fake_cgroup(tmp_path, "0::/a/b\n", {"cpu.max": "max 100000\n", "a/cpu.max": "150000 100000\n", "a/b/cpu.max": "max 100000\n"})
    assert cgroup_cpu_limit(**kw) == 1.5
    assert available_cores(**kw) == 1  # 1.5 cores: one worker
    kw = _fake_cgroup(tmp_path / "x", "0::/\n", {"cpu.max": "max 100000\n"})
    assert cgroup_cpu_limit(**kw) is None  # no quota
    assert available_cores(**kw) == len(os.sched_getaffinity(0))


def test_cgroup_v1_quota(tmp_path):
    kw = _fake_cgroup(tmp_path, "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n",
                      {"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "200000\n", "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n"})
    assert cgroup_cpu_limit(**kw) == 2.0
    kw = _fake_cgroup(tmp_path / "y", "3:cpu,cpuacct:/\n", {"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    assert cgroup_cpu_limit(**kw) is None
    kw = _fake_cgroup(tmp_path / "z", "garbage\n", {})
    assert cgroup_cpu_limit(**kw) is None


def test_pinned_to_one_core_the_default_plan_runs_serially():
    """Under a one-core affinity (as `taskset -c 0`) the default plan has one worker and runs the
    items in this process: no cluster, not even Dask imported; an explicit --workers 2 still asks
    for two."""
    code = (
        "import os, sys\n"
        "os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})\n"
        "from rngcert.pipeline.parallel import Plan, available_cores, map_items\n"
        "t = {}\n"
        "out = map_items(abs, [-1, -2, -3], plan=Plan(), timings=t, costs=[100.0] * 3)\n"
        "print(available_cores(), Plan().n_workers(8), Plan(workers=2).n_workers(8), Plan().item_threads(1), Plan().runs_parallel(8, [100.0] * 8),\n"
        "      out, t['mode'], 'distributed' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "1", "2", "1", "False", "[1,", "2,", "3]", "serial", "False"]


def test_the_default_plan_uses_a_cluster_only_where_it_pays(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr("rngcert.pipeline.parallel.available_cores", lambda **kw: 2)
    small = [table_cost(10_000)] * 2  # two 10 k-spin tables: about 0.5 s of work, less than a pool saves
    big = [table_cost(1_000_000)] * 20
    assert not parallel_pays(small, 2) and parallel_pays(big, 2)
    assert not parallel_pays([30.0, 0.3], 2)  # one long item: nothing to share
    assert not Plan().runs_parallel(2, small) and Plan().runs_parallel(20, big)
    assert Plan().runs_parallel(8, [table_cost(10_000)] * 8)  # 2 s of work: forking 2 workers (about 0.1 s) pays
    assert Plan().runs_parallel(4)  # no estimate: as before, a cluster of every available core
    assert Plan(workers=2).runs_parallel(2, small)  # asked for: always
    assert not Plan(workers=1).runs_parallel(20, big)
    assert describe(Plan(), 2, small) == "2 work item(s), serial in one process"
    assert "2 worker process(es)" in describe(Plan(), 20, big)
    t: dict = {}
    assert map_items(abs, [-1, -2], plan=Plan(), timings=t, costs=small) == [1, 2] and t["mode"] == "serial"


@pytest.mark.parametrize("n", [1, 3])
def test_one_core_container_quota_gives_one_worker(tmp_path, monkeypatch, n):
    kw = _fake_cgroup(tmp_path, "0::/\n", {"cpu.max": f"{n}00000 100000\n"})
    assert available_cores(**kw) == min(n, len(os.sched_getaffinity(0)))


def test_timings_env_records_each_call_and_changes_no_result(tmp_path, monkeypatch):
    """RNGCERT_TIMINGS (benchmarks/bench_parallel.py section S): one JSON line a call, results unchanged."""
    import json

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    log = tmp_path / "t.jsonl"
    monkeypatch.setenv("RNGCERT_TIMINGS", str(log))
    assert map_items(abs, [-1, 2, -3], plan=Plan(workers=1)) == [1, 2, 3]
    assert map_items(abs, [-4], plan=Plan()) == [4]
    recs = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [(r["func"], r["items"], r["mode"], r["workers"], r["start_s"]) for r in recs] == [("abs", 3, "serial", 1, 0.0), ("abs", 1, "serial", 1, 0.0)]
    assert all(r["run_s"] >= 0 and r["client_cpu_s"] >= 0 and r["pid"] == os.getpid() for r in recs)
    monkeypatch.delenv("RNGCERT_TIMINGS")
    assert map_items(abs, [-5], plan=Plan(workers=1)) == [5] and len(log.read_text().splitlines()) == 2


def _square_or_fail(x):
    if x == 2:
        from rngcert.errors import InputError

        raise InputError("item 2 is bad")
    return x * x


_PARENT = os.getpid()


def _dies_in_a_worker(x):
    if x == 3 and os.getpid() != _PARENT:
        os._exit(1)  # as a worker killed by the kernel's out-of-memory killer
    return -x


def test_the_local_pool_forks_workers_that_keep_errors_and_item_order(monkeypatch):
    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)  # as in a command: no other thread
    from rngcert.errors import InputError

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("RNGCERT_DASK_START", raising=False)
    t: dict = {}
    assert map_items(_square_or_fail, [0, 1, 3, 4, 5], plan=Plan(workers=2), timings=t) == [0, 1, 9, 16, 25]
    assert t["mode"] == "local pool" and t["workers"] == 2 and t["start_method"] == "fork"
    assert "threadpoolctl" not in t["worker_imports"]  # imported here before the fork, not in every worker
    with pytest.raises(InputError, match="item 2 is bad"):
        map_items(_square_or_fail, [0, 1, 2, 3], plan=Plan(workers=2))


def test_a_worker_that_dies_leaves_its_items_to_this_process(monkeypatch):
    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)  # as in a command: no other thread
    from rngcert.pipeline.parallel import ClusterFallbackWarning

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("RNGCERT_DASK_START", raising=False)
    t: dict = {}
    with pytest.warns(ClusterFallbackWarning, match="a worker of the local pool stopped"):
        assert map_items(_dies_in_a_worker, list(range(6)), plan=Plan(workers=2), timings=t) == [0, -1, -2, -3, -4, -5]
    assert t["mode"] == "local pool, then serial (a worker stopped)"


def test_forkserver_start_gives_the_same_results(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setenv("RNGCERT_DASK_START", "forkserver")
    t: dict = {}
    assert map_items(_square_or_fail, [5, 4, 3], plan=Plan(workers=2), timings=t) == [25, 16, 9]
    assert t["start_method"] == "forkserver" and t["mode"] == "local pool"


def test_a_python_thread_running_here_makes_the_pool_use_forkserver(monkeypatch):
    """A fork copies a lock another Python thread holds: with one running, the workers come from a
    fresh server process instead, with the same results."""
    import threading

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("RNGCERT_DASK_START", raising=False)
    stop = threading.Event()
    th = threading.Thread(target=stop.wait, daemon=True)
    th.start()
    try:
        t: dict = {}
        assert map_items(_square_or_fail, [3, 4], plan=Plan(workers=2), timings=t) == [9, 16]
        assert t["start_method"] == "forkserver"
    finally:
        stop.set()
        th.join()
    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)  # as in a command: no other thread
    t = {}
    assert map_items(_square_or_fail, [3, 4], plan=Plan(workers=2), timings=t) == [9, 16] and t["start_method"] == "fork"


class _Result(list):
    pass


def _result(i):
    return _Result([i] * 10)


def test_the_local_pool_keeps_no_result_once_yielded(monkeypatch):
    """Memory bounded by the items in flight: a result the caller has dropped is freed (audit --all
    writes and releases each table's result as it comes)."""
    import gc
    import weakref

    from rngcert.pipeline.parallel import iter_items

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)
    refs, alive = [], []
    for i, r in iter_items(_result, list(range(6)), plan=Plan(workers=2)):
        refs.append(weakref.ref(r))
        del r
        gc.collect()
        alive.append(sum(x() is not None for x in refs))
    assert len(refs) == 6 and max(alive) <= 1, alive


def test_preloading_imports_on_a_thread_that_ends_with_the_block_and_only_for_a_pool(monkeypatch):
    """audit --all imports its items' modules while it opens the store (issue 26 item 6): the thread has
    ended when the block does (the pool then forks from one Python thread), and a serial plan, an
    existing cluster or one core starts no thread."""
    import threading

    from rngcert.pipeline import parallel

    name = "json.tool"  # a module nothing here has imported
    monkeypatch.delitem(sys.modules, name, raising=False)
    seen = []
    base = threading.active_count()
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    with parallel.preloading(Plan(), [name, "no_such_module_here", "csv"]):
        seen.append(threading.active_count())
    assert name in sys.modules  # imported on the thread; the failing module stopped it quietly
    assert threading.active_count() == base
    monkeypatch.delitem(sys.modules, name)
    for plan in (Plan(workers=1), Plan(scheduler="tcp://127.0.0.1:1")):
        with parallel.preloading(plan, [name]):
            assert threading.active_count() == base
    monkeypatch.setattr(parallel, "available_cores", lambda: 1)
    with parallel.preloading(Plan(), [name]):
        assert threading.active_count() == base
    assert name not in sys.modules


class _FakeProc:
    """A procedure with no parameter fixed by the rules (module level: a forkserver's workers unpickle it)."""

    def parameters(self):
        return []


def _fake_remedy(item):
    """A remedy work item that only says which candidate it is; the third (index 2) is the remedy."""
    _, label, change, *_ = item
    return {"change": label, "parameters": change, "verdict": "PASS" if change["i"] == 2 else "FAIL"}, change["i"] == 2


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_shuffle_remedies_tried_in_waves_give_the_serial_search(monkeypatch, workers):
    """The first shoe's remedies (issue 26 item 6): on a parallel plan the candidates are tried a wave (one per
    worker) at a time; the candidates after the first remedy are left out, so the remedy and the list of
    remedies tried are the serial search's, whatever the number of workers."""
    from rngcert.pipeline.certify_shuffle import procedure as P

    monkeypatch.setattr(P, "_remedies", lambda proc: [(f"candidate {i}", {"i": i}) for i in range(5)])
    monkeypatch.setattr(P, "_remedy_item", _fake_remedy)
    fix, tried = P._first_shoe_remedy(_FakeProc(), 1, tables=10, alpha=0.01, threshold=0.0, n_resamples=9, standard="edge", bj_rules=None,
                                      plan=Plan(workers=workers))
    assert fix == "candidate 2"
    assert [t["change"] for t in tried] == ["candidate 0", "candidate 1", "candidate 2"]
    assert [t["verdict"] for t in tried] == ["FAIL", "FAIL", "PASS"]
