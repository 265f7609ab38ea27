"""Independent work items: every core by default, an existing Dask cluster when asked, serial on request.

rngcert has four kinds of independent work items: the tables of a multi-table ``certify`` and of
``audit --all``, the bit streams of ``bits --streams m``, and the batches of simulated tables and the
sensitivity points of ``shuffle certify``. Each item is a top-level function applied to a small,
picklable argument (one table's compact arrays, a table name and the store's path, or one stream's
generator name and index), so a worker never receives a whole log and its memory is bounded by the
largest item.

Where the items run (:class:`Plan`):

* ``workers=1`` and no scheduler: serially, in this process (the reference run);
* a scheduler address (``scheduler="tcp://HOST:PORT"``, or the environment variable
  ``DASK_SCHEDULER_ADDRESS``): on that existing Dask cluster, through ``distributed.Client``;
* otherwise: on a local pool of N worker processes (``concurrent.futures.ProcessPoolExecutor``),
  started for the run and closed after it, with N = ``workers`` or, by default, every core this
  process may use (:func:`available_cores`: its CPU affinity and its cgroup's CPU quota, not the
  host's core count), and never more workers than items. The workers are forked from this process
  after it has imported the modules the items need (``preload``), so a worker pays no import, and
  they inherit the items: each is sent only an item's index. Starting two costs about 0.05 s of
  CPU, where a ``distributed.LocalCluster`` cost about 1 s (importing ``distributed``, its
  scheduler, the nannies) and every worker then imported the items' lazy modules again.
  ``RNGCERT_DASK_START=forkserver`` (or ``spawn``) chooses another start method, the items then
  pickled.

One work item always runs serially in this process. By default (no ``workers``, no scheduler) the
items also run serially when only one core is available, or when the caller's estimate of their
cost says that a pool would not pay (:func:`parallel_pays`: the serial time against the pool's
start-up plus the largest item or the work shared by the workers, at the efficiency measured on 2
cores); ``workers=N`` asks for N workers whatever the estimate. A local pool that fails to start
(fork refused: no memory, a process limit) is not an error: the items then run serially in this
process, with the same results, and a :class:`ClusterFallbackWarning` says so; so do the items left
when a worker dies (killed, out of memory). An existing cluster (``--scheduler``) that cannot be
reached is an input error.

Reproducibility: every random stream of an item comes from :func:`rngcert.seeding.stream` keyed by
the item's own name (table, stream index) and the run's root entropy, never from the order in
which items run or from the worker that runs them, and results are returned in item order. Every
item runs with its BLAS thread pool limited to one thread (:func:`pinned`, threadpoolctl),
serially or on a worker: a multi-threaded ``numpy.dot`` over a million spins sums in a
thread-count-dependent order and changes the last bits of a statistic. So the result is
bit-identical to the serial run for the same seed (``tests/test_parallel.py`` compares whole
reports on a 2-worker local cluster).

Examples
--------
>>> from rngcert.pipeline.parallel import Plan, map_items
>>> map_items(abs, [-1, 2, -3], plan=Plan(workers=1))
[1, 2, 3]
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from rngcert.errors import InputError

__all__ = ["Plan", "map_items", "iter_items", "describe", "pinned", "ClusterFallbackWarning", "available_cores", "cgroup_cpu_limit",
           "parallel_pays", "table_cost", "TIMINGS_ENV", "preloading", "in_pool_worker", "dispatch_order"]

#: Seconds a local pool adds to a run: forking the workers, the items' messages, closing it. Measured
#: on the 2-core machine (2026-12-03, load 4-5): 0.03-0.09 s of wall to fork 2 workers from a process
#: that has imported the battery, about 3 ms a message, 0.05-0.1 CPU-s in all; 0.2 s keeps a margin.
#: (The ``distributed.LocalCluster`` used before cost 0.8 s: importing ``distributed``, its scheduler
#: and nannies, and every worker's own imports.)
CLUSTER_START_S = 0.2
#: Share of the ideal speed-up that the workers reach (their start, Dask's own threads, the client
#: collecting results): 1.65x of the 2.06x ceiling on 2 cores for ``audit --all`` (README).
PARALLEL_EFFICIENCY = 0.8
#: Seconds of one wheel table's work item (battery, integrity checks, power; figures and report):
#: ``TABLE_FIXED_S + TABLE_SPIN_S * spins``, measured serially on the 2-core machine (2026-12-03:
#: 0.24-0.26 CPU-s at 10 k spins, 0.47 at 1 M without figures, 0.72 with them).
TABLE_FIXED_S = 0.25
TABLE_SPIN_S = 0.25e-6


def cgroup_cpu_limit(cgroup_root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup") -> float | None:
    """The CPU quota of this process's cgroup, in cores, or None when there is none.

    Parameters
    ----------
    cgroup_root : path
        Where the cgroup file systems are mounted.
    proc_cgroup : path
        This process's cgroup membership (``/proc/self/cgroup``).

    Returns
    -------
    float or None
        cgroup v2: the smallest ``quota / period`` of ``cpu.max`` in the process's cgroup and its
        ancestors (``max`` is no limit); cgroup v1: ``cpu.cfs_quota_us / cpu.cfs_period_us`` of
        the ``cpu`` controller (-1 is no limit). A container given 2 cores of a 64-core host gets
        2.0 here, where ``os.cpu_count()`` says 64.
    """
    from pathlib import Path

    root = Path(cgroup_root)
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        lines = []
    limits: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.strip().lstrip("/")
        if controllers == "":  # v2 unified hierarchy: cpu.max in the cgroup and every ancestor
            d = root / rel if rel else root
            while True:
                try:
                    quota, period = (d / "cpu.max").read_text().split()[:2]
                    if quota != "max" and float(period) > 0:
                        limits.append(float(quota) / float(period))
                except (OSError, ValueError):
                    pass
                if d == root or root not in d.parents:
                    break
                d = d.parent
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own mount
            for mount in dict.fromkeys((controllers, "cpu,cpuacct", "cpu")):
                base = root / mount
                if not base.is_dir():
                    continue
                for d in ((base / rel, base) if rel else (base,)):
                    quota, period = _number(d / "cpu.cfs_quota_us"), _number(d / "cpu.cfs_period_us")
                    if quota is not None and period:
                        if quota > 0:
                            limits.append(quota / period)
                        break
                break
    return min(limits) if limits else None


def _number(path) -> float | None:
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return None


def available_cores(*, cgroup_root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup") -> int:
    """Cores this process may use.

    Parameters
    ----------
    cgroup_root, proc_cgroup : path
        As in :func:`cgroup_cpu_limit` (tests give a fake cgroup tree).

    Returns
    -------
    int
        The CPU affinity (``os.sched_getaffinity``; ``os.cpu_count()`` where there is none), at
        most the cgroup's CPU quota (:func:`cgroup_cpu_limit`, rounded down), at least 1. Pinned to
        one core by ``taskset``, or given 2 cores of a big host by a container, this is 1 or 2, not
        the host's core count.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_limit(cgroup_root, proc_cgroup)
    if quota is not None:
        cores = min(cores, max(1, int(quota)))
    return max(1, cores)


def parallel_pays(costs: Sequence[float], workers: int) -> bool:
    """Whether a local pool is expected to finish the items sooner than one process.

    Parameters
    ----------
    costs : sequence of float
        Estimated serial seconds of each item (e.g. :func:`table_cost`).
    workers : int
        Worker processes the pool would have.

    Returns
    -------
    bool
        True when :data:`CLUSTER_START_S` plus the larger of the longest item and the total
        shared by the workers at :data:`PARALLEL_EFFICIENCY` is below the serial time (never
        for one worker or one item).
    """
    if workers <= 1 or len(costs) <= 1:
        return False
    total = float(sum(costs))
    parallel = CLUSTER_START_S + max(max(costs), total / workers) / PARALLEL_EFFICIENCY
    return parallel < total


def dispatch_order(costs: Sequence[float] | None, n: int) -> list[int]:
    """The order in which a local pool starts ``n`` items: the costliest first (ties in item order).

    A worker takes the next item when it finishes one, so the long items start first and the short
    ones fill the gaps at the end instead of one long item running alone on one core while the others
    wait (largest processing time first). Without ``costs``, item order. Results are yielded and
    collected by item index, so nothing but the start order changes.

    Parameters
    ----------
    costs : sequence of float or None
        Estimated serial seconds of each item (:func:`table_cost`).
    n : int
        Number of items.

    Returns
    -------
    list of int
        A permutation of ``range(n)``.
    """
    if costs is None or len(costs) != n:
        return list(range(n))
    return sorted(range(n), key=lambda i: -float(costs[i]))


def table_cost(spins: int) -> float:
    """Estimated serial seconds of one wheel table's work item.

    Parameters
    ----------
    spins : int
        Spins of the table.

    Returns
    -------
    float
        :data:`TABLE_FIXED_S` + :data:`TABLE_SPIN_S` x ``spins``.
    """
    return TABLE_FIXED_S + TABLE_SPIN_S * int(spins)


#: Environment variable naming a file to which every :func:`iter_items` call appends one JSON line
#: of its timings (function, items, mode, workers, ``start_s``, ``run_s``): how
#: ``benchmarks/bench_parallel.py`` splits a command's wall time into the work items, the cluster's
#: start and the rest. Unset (the default) nothing is written; results never depend on it.
TIMINGS_ENV = "RNGCERT_TIMINGS"


def _log_timings(func, n_items: int, timings: dict, cpu0: float) -> None:
    path = os.environ.get(TIMINGS_ENV)
    if not path:
        return
    import json

    # client_cpu_s: this process's CPU time (every thread) while the items ran: their whole cost when serial
    rec = {"func": getattr(func, "__name__", "item"), "items": n_items, "pid": os.getpid(), **timings,
           "client_cpu_s": time.process_time() - cpu0}
    with contextlib.suppress(OSError):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")


class ClusterFallbackWarning(RuntimeWarning):
    """The local pool did not start (or a worker of it stopped); the work items ran serially in this process."""


class _LocalClusterFailed(Exception):
    """A local cluster could not be started (the reason is the message)."""


#: Environment variable naming an existing scheduler (Dask's own name for it).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


@dataclass(frozen=True)
class Plan:
    """Where work items run.

    Parameters
    ----------
    workers : int or None
        Worker processes of the local cluster (``None``: every core this process may use,
        :func:`available_cores`, and only when it pays: see :meth:`runs_parallel`); ``1``
        without a scheduler runs serially in this process.
    scheduler : str or None
        Address of an existing Dask scheduler (``tcp://HOST:PORT``). ``None``: the environment
        variable ``DASK_SCHEDULER_ADDRESS`` when it is set and ``workers`` is not given (an explicit
        worker count, ``1`` = serial included, beats the environment), else a local cluster.

    Raises
    ------
    InputError
        ``workers`` is not a positive integer, or the address has no ``scheme://``.
    """

    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self):
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1):
            raise InputError(f"workers={self.workers!r}: a positive number of worker processes is required (1 = serial)")
        addr = self.address
        if addr is not None and "://" not in addr:
            raise InputError(f"scheduler address {addr!r} must look like tcp://HOST:PORT (as printed by `dask scheduler`)")

    @property
    def address(self) -> str | None:
        """The scheduler address in effect: the argument, else ``DASK_SCHEDULER_ADDRESS`` when no
        worker count was given (``--workers 1`` runs serially here whatever the environment says)."""
        if self.scheduler:
            return self.scheduler
        return (os.environ.get(SCHEDULER_ENV) or None) if self.workers is None else None

    @property
    def serial(self) -> bool:
        return self.address is None and self.workers == 1

    def item_threads(self, n_items: int) -> int:
        """Threads one work item may use for its own independent parts (the tests of a battery):
        every core of this process, at most 4, when a single item runs here on a plan that is not
        serial; else 1 (a serial plan, and the items of a cluster, which has one thread per
        worker). The results do not depend on it (each test has its own random stream)."""
        if self.serial or self.address or n_items != 1:
            return 1
        cores = available_cores()
        return max(1, min(cores, 4, self.workers or cores))

    def n_workers(self, n_items: int) -> int:
        """Local-cluster size for ``n_items`` items: ``workers`` or every available core
        (:func:`available_cores`), at most ``n_items``."""
        return max(1, min(self.workers or available_cores(), n_items))

    def runs_parallel(self, n_items: int, costs: Sequence[float] | None = None) -> bool:
        """Whether ``n_items`` items run on Dask: always on a scheduler; with ``workers`` > 1 when
        there are 2 items or more; by default (``workers=None``) only when 2 cores or more are
        available and, when the caller estimated the items' ``costs`` (serial seconds), when a
        local cluster pays for itself (:func:`parallel_pays`)."""
        if n_items <= 1 or self.serial:
            return False
        if self.address:
            return True
        w = self.n_workers(n_items)
        if self.workers is not None:
            return w > 1
        return w > 1 and (costs is None or parallel_pays(costs, w))


def describe(plan: Plan, n_items: int, costs: Sequence[float] | None = None) -> str:
    """One line for reports and logs: where ``n_items`` items (of estimated serial ``costs``)
    run under ``plan``."""
    if not plan.runs_parallel(n_items, costs):
        return f"{n_items} work item(s), serial in one process"
    if plan.address:
        return f"{n_items} work items on the Dask cluster at {plan.address}"
    return f"{n_items} work items on a local pool of {plan.n_workers(n_items)} worker process(es), one thread each"


@contextlib.contextmanager
def pinned():
    """Limit the BLAS (and OpenMP) thread pools to one thread inside the block.

    Work items run inside it wherever they run, so that a statistic computed with BLAS (a dot
    product over a million spins) sums in the same order serially and on any worker, whatever
    the number of cores of the machine.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


@contextlib.contextmanager
def preloading(plan: Plan, modules: Sequence[str]):
    """Import ``modules`` on a thread of its own while the block runs (joined when it ends), when ``plan``
    may run items on a local pool.

    The modules a local pool imports before it forks its workers (``preload`` of :func:`iter_items`)
    are then imported beside what the caller does first, e.g. opening a store and counting its spins
    (DuckDB releases the GIL while it runs a query), instead of after it on the critical path. Nothing
    changes when the plan is serial, on an existing cluster, or with one core; a module that fails to
    import here is imported again (and its error raised) where the pool starts. The thread ends
    before the block does, so the pool still forks from a process with one Python thread.
    """
    if plan.serial or plan.address or not modules or available_cores() < 2:
        yield
        return
    import importlib
    import threading

    def run():
        for mod in ("threadpoolctl", *modules):
            try:
                importlib.import_module(mod)
            except Exception:  # noqa: BLE001 - raised again, with its own message, where the pool starts
                return

    t = threading.Thread(target=run, name="rngcert-preload", daemon=True)
    t.start()
    try:
        yield
    finally:
        t.join()


def _run_pinned(func, item):
    """``func(item)`` with one BLAS thread (the function a worker runs for each item)."""
    with pinned():
        return func(item)


def _check_address(address: str) -> None:
    """Refuse, before any ``Client`` exists, an address Dask cannot parse or whose port is not
    1..65535 (:class:`InputError` naming it)."""
    from distributed.comm.addressing import get_address_host_port

    try:
        _host, port = get_address_host_port(address, strict=True)
    except ValueError as exc:  # no port, a port that is not a number, an unknown scheme, inproc://
        raise InputError(f"scheduler address {address!r} is not one Dask can use ({exc}); give tcp://HOST:PORT") from None
    if not 1 <= int(port) <= 65535:
        raise InputError(f"scheduler address {address!r} is not one Dask can use (port {port} is not in 1..65535); give tcp://HOST:PORT")


def _drop_half_made_client(exc: BaseException) -> None:
    """Close, here and now, the ``Client`` whose constructor raised ``exc``. Its frames would keep it
    alive as long as the error (a caller, or a test, holds the error), and its ``__del__`` would then
    close it at a random later moment: inside the next ``Client``'s start, that is a deadlock of
    distributed's loop runner (seen as a hung test run). Clearing the frames lets it go at once."""
    import traceback

    traceback.clear_frames(exc.__traceback__)
    gc.collect()


@contextlib.contextmanager
def _client(plan: Plan):
    """A ``distributed.Client`` connected to the plan's existing scheduler (``--scheduler``)."""
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - dask[distributed] is a dependency
        raise InputError(f"Dask is needed to use a Dask cluster ({exc}); install 'dask[distributed]' or use --workers 1") from None
    for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.worker", "distributed.core"):
        logging.getLogger(name).setLevel(logging.ERROR)
    _check_address(plan.address)
    try:
        client = Client(plan.address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        _drop_half_made_client(exc)
        if isinstance(exc, ValueError):  # an address Dask cannot parse (no port, an unknown scheme)
            raise InputError(f"scheduler address {plan.address!r} is not one Dask can use ({exc}); give tcp://HOST:PORT") from None
        raise InputError(f"cannot reach the Dask scheduler at {plan.address}: {exc}") from None
    try:
        yield client
    finally:
        client.close()


#: Environment variable choosing how the local pool starts its workers: ``fork`` (the default),
#: ``forkserver`` (a server process started fresh, importing the ``preload`` modules, forks the
#: workers) or ``spawn`` (fresh interpreters).
START_ENV = "RNGCERT_DASK_START"

#: ``(func, items)`` of the local pool being started: a forked worker inherits them (copy-on-write)
#: and receives only an item's index, so no item is pickled on its way to a worker.
_FORKED: tuple | None = None

#: True in a worker process of the local pool (set by its initializer), False elsewhere (this process,
#: a serial run, the fallback after a pool failed, a Dask worker).
_POOL_WORKER = False


def _mark_pool_worker(parent: int | None = None) -> None:
    """Initializer of every local-pool worker (:func:`in_pool_worker`); it also ends with the process that started it
    (:func:`_end_with_parent`; ``parent``: that process's pid, None when a fork server started the worker)."""
    import signal

    global _POOL_WORKER
    _POOL_WORKER = True
    signal.signal(signal.SIGTERM, _worker_sigterm)  # (not the command's handler, which it was forked with)
    _end_with_parent(parent)


def _worker_sigterm(signum, frame) -> None:
    """A pool worker's SIGTERM (its command was stopped and ends its workers, :func:`end_workers`): remove the temporary
    folders this worker made (an ingest's spool of the log it was reading) and end at once, as the default action does.
    (A Python handler runs when the main thread gets back to the interpreter; :func:`end_workers` kills a worker that
    has not ended after its grace.)"""
    import rngcert.scratch as scratch

    scratch.remove_own()
    os._exit(128 + int(signum))


def _end_with_parent(parent: int | None = None) -> None:
    """Linux: have the kernel kill this worker (SIGKILL) when the process that started it ends. A command killed by a
    batch system's time limit (SIGTERM, SIGKILL) left its pool's workers computing on for nobody, each to the end of
    its item and then waiting for work that never came. SIGKILL, not SIGTERM: a command that could clean up ended its
    workers itself (:func:`end_workers`); one that ended without (SIGKILL, a crash) leaves nobody to report to, and a
    SIGTERM was handled late or never where the signal went to another thread than the one sleeping in the item (a
    worker alive 30 s after its command, in 2 of about 10 full test runs). A command that ended before this worker
    asked (between its fork and this call: the kernel then sends nothing) is seen by the worker's parent no longer
    being ``parent``: the worker ends at once. Elsewhere (no ``prctl``) nothing is done."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux, or no C library to ask
        return
    if parent is not None and os.getppid() != parent:  # (re-parented: the command is gone already)
        _worker_sigterm(signal.SIGTERM, None)


#: Seconds the pool's workers of a command stopped by SIGTERM have to end on their own (each removing the temporary
#: folders it made) before they are killed (:func:`end_workers`). A worker in a numpy call notices its SIGTERM when the
#: call returns: 1.4-1.8 s after the signal with ``rngcert bits`` on the 2-core machine (2026-12-05, load 3).
WORKER_GRACE_S = 5.0


def end_workers(grace: float = WORKER_GRACE_S) -> int:
    """End the pool workers this process started and wait for them: SIGTERM, then SIGKILL for any still running after
    ``grace`` seconds. Called by the command line's SIGTERM handler before the process ends, so that each worker removes
    the temporary folders it made (the kernel's SIGKILL when the command ends, :func:`_end_with_parent`, leaves them).
    A worker of ``rngcert bits`` stopped with its process group was once seen blocked in writing its result to the pipe
    of the command that had ended, minutes later, holding the job's output open, when the kernel's signal was SIGTERM
    (its handler never ran). Returns the number of workers killed.

    Parameters
    ----------
    grace : float
        Seconds the workers have, all together, to end on their own.

    Returns
    -------
    int
        Workers that had to be killed (SIGKILL).
    """
    import multiprocessing

    kids = multiprocessing.active_children()
    for c in kids:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            c.terminate()
    deadline = time.monotonic() + grace
    killed = 0
    for c in kids:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            c.join(max(0.0, deadline - time.monotonic()))
            if c.exitcode is None:
                c.kill()
                c.join()
                killed += 1
    return killed


def in_pool_worker() -> bool:
    """Whether this process is a worker of the local pool of :func:`iter_items`.

    Such a worker lives only while the pool runs one command's items and ends with it, so an item may
    keep a resource (a read-only session of a store) for the worker's next items: it is released when
    the pool is shut down, before :func:`iter_items` returns. Never true in the calling process (the
    serial runs and the serial fallback) nor on a Dask worker, which outlives the command.
    """
    return _POOL_WORKER


def _forked_item(i: int):
    """Item ``i`` of :data:`_FORKED`, in a forked worker: ``(result, modules it imported, its CPU seconds)``."""
    import sys

    func, items = _FORKED
    before, cpu = set(sys.modules), time.process_time()
    res = _run_pinned(func, items[i])
    return res, _new_modules(before), time.process_time() - cpu


def _sent_item(func, item):
    """``func(item)`` in a worker started by ``forkserver`` or ``spawn`` (the item pickled)."""
    import sys

    before, cpu = set(sys.modules), time.process_time()
    res = _run_pinned(func, item)
    return res, _new_modules(before), time.process_time() - cpu


def _new_modules(before: set) -> list[str]:
    """The modules imported since ``before``, each package once (``pandas``, not its submodules),
    private ones left out: what the parent could have imported before forking."""
    import sys

    new = set(sys.modules) - before
    return sorted(m for m in new if not any(p in new for p in _parents(m)) and not m.rsplit(".", 1)[-1].startswith("_"))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def _os_threads() -> list[str]:
    """The names of this process's threads (``/proc/self/task/*/comm``; Python's own elsewhere): what
    a fork copies the state of (pyarrow's, DuckDB's and BLAS's pools are invisible to ``threading``)."""
    import threading

    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return [t.name for t in threading.enumerate()]
    names = []
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/comm", encoding="utf-8", errors="replace") as fh:
                names.append(fh.read().strip())
        except OSError:
            names.append("?")
    return sorted(names)


def _python_threads() -> int:
    """Python threads running in this process (this one included)."""
    import threading

    return threading.active_count()


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _start_pool(func, items: list, workers: int, preload: Sequence[str], timings: dict | None, order: Sequence[int] | None = None):
    """A started ``ProcessPoolExecutor`` of ``workers`` processes and the futures of every item (in item order;
    submitted, and so started, in ``order``, default item order).

    With ``fork`` (the default, :data:`START_ENV`) the workers are forked from this process after it
    has imported ``preload`` (the modules the items import lazily), so a worker pays no import and
    inherits the items; with ``forkserver`` (also chosen when this process runs another Python
    thread, which a fork could catch holding a lock) the server imports ``preload`` once and the
    items are pickled. Any failure is a :class:`_LocalClusterFailed`.
    """
    import gc
    import importlib
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED
    order = range(len(items)) if order is None else order
    method = os.environ.get(START_ENV, "fork")
    if method == "fork" and _python_threads() > 1:
        # another Python thread may hold a lock (logging, a file's buffer) that a forked child would
        # find taken forever: a fresh server process forks the workers instead. (The native threads
        # of OpenBLAS, pyarrow and jemalloc reset themselves at a fork: their own atfork handlers.)
        method = "forkserver"
    try:
        for mod in ("threadpoolctl", *preload):  # threadpoolctl: every item runs pinned()
            importlib.import_module(mod)
        ctx = multiprocessing.get_context(method)
        if method == "forkserver":
            ctx.set_forkserver_preload(["threadpoolctl", "rngcert.pipeline.parallel", getattr(func, "__module__", "") or "rngcert", *preload])
        if timings is not None:
            timings.update(start_method=method, os_threads_at_start=_os_threads(), python_threads_at_start=threading.active_count())
        parent = None if method == "forkserver" else os.getpid()  # (a fork server's workers are its children, not ours)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_mark_pool_worker, initargs=(parent,))
    except Exception as exc:  # no such start method, a preload that does not import
        raise _LocalClusterFailed(f"{type(exc).__name__}: {exc}") from exc
    # the workers never traverse the objects they inherit (no copy-on-write of every page they touch)
    gc.freeze()
    try:
        if method == "fork":
            _FORKED = (func, items)
            # the first submit forks every worker, before the pool starts its own thread
            submitted = {i: pool.submit(_forked_item, i) for i in order}
        else:
            submitted = {i: pool.submit(_sent_item, func, items[i]) for i in order}
        futures = [submitted[i] for i in range(len(items))]
    except Exception as exc:  # fork refused (no memory, process limit)
        pool.shutdown(wait=False, cancel_futures=True)
        raise _LocalClusterFailed(f"{type(exc).__name__}: {exc}") from exc
    finally:
        _FORKED = None  # the workers have their copy; this process keeps only the caller's
        gc.unfreeze()
    return pool, futures


# long: one generator for the ways items run (serial plan, serial fallback when the local pool fails or breaks, a local
#   pool, an existing Dask cluster), each yielding as items finish and recording the same timings
def iter_items(func: Callable[[Any], Any], items: Sequence[Any], *, plan: Plan | None = None,
               timings: dict | None = None, preload: Sequence[str] = (), costs: Sequence[float] | None = None,
               largest_first: bool = False,
               meanwhile: Callable[[], None] | None = None) -> Iterator[tuple[int, Any]]:
    """Apply ``func`` to every item and yield ``(index, result)`` as items finish.

    Serial plans (and a single item) yield in item order; in parallel, in completion order, so the
    caller can write and release each result at once (memory bounded by the items in flight).

    Parameters
    ----------
    func : callable
        A module-level function (workers import it by name), ``func(item) -> result``.
    items : sequence
        Picklable, small arguments: one table's arrays, a table name, a stream index.
    plan : Plan, optional
        Default ``Plan()``: a local pool of every core (where it pays, given ``costs``).
    timings : dict, optional
        Filled with ``start_s`` (the workers' start, 0 when serial), ``run_s`` (wall time of the
        items), ``workers`` and ``mode``, for benchmarks (on a local pool also the threads of this
        process when it forked and the top-level modules the workers imported themselves).
    preload : sequence of str
        Modules the items import (e.g. ``"rngcert.report.plots"``): imported here before the local
        pool forks its workers, so that no worker imports them again.
    costs : sequence of float, optional
        Estimated serial seconds of each item: with the default plan the items run serially when
        a local pool would not pay (:meth:`Plan.runs_parallel`).
    largest_first : bool
        On a local pool, start the items in :func:`dispatch_order` (the costliest first, by ``costs``)
        instead of item order; results are the same (yielded with their index).
    meanwhile : callable, optional
        ``meanwhile()`` runs in this process once, while a local pool's workers run the items (its
        workers are forked first, so they do not inherit what it computes), else before the items.
        It must not start a pool of its own (this process then runs the pool's thread).

    Raises
    ------
    Exception
        The first exception raised by an item, re-raised here with its own type (an
        :class:`~rngcert.errors.InputError` in a worker is an InputError here).
    """
    plan = plan or Plan()
    items = list(items)
    if timings is None and os.environ.get(TIMINGS_ENV):
        timings = {}
    t0, cpu0 = time.perf_counter(), time.process_time()
    def serially(todo, **how):
        if timings is not None:
            timings.update(how)
        for i in todo:
            yield i, _run_pinned(func, items[i])
        if timings is not None:
            timings["run_s"] = time.perf_counter() - t0
            _log_timings(func, len(items), timings, cpu0)

    def aside():  # the caller's own work: its CPU not counted as the items' (client_cpu_s), its wall time noted
        nonlocal cpu0
        if meanwhile is not None:
            c, w = time.process_time(), time.perf_counter()
            meanwhile()
            cpu0 += time.process_time() - c
            if timings is not None:
                timings["meanwhile_s"] = time.perf_counter() - w

    parallel = plan.runs_parallel(len(items), costs)
    if not parallel or plan.address:
        aside()
    if not parallel:
        yield from serially(range(len(items)), start_s=0.0, workers=1, mode="serial")
        return
    if plan.address:
        yield from _on_cluster(func, items, plan, timings, t0, cpu0)
        return
    workers = plan.n_workers(len(items))
    children0 = _children_cpu()
    try:
        pool, futures = _start_pool(func, items, workers, preload, timings, order=dispatch_order(costs if largest_first else None, len(items)))
    except _LocalClusterFailed as exc:
        warnings.warn(f"the local worker pool did not start ({exc}); the {len(items)} work items run serially in "
                      "this process instead (the results are the same)", ClusterFallbackWarning, stacklevel=2)
        aside()
        yield from serially(range(len(items)), start_s=time.perf_counter() - t0, workers=1, mode="serial (the local pool did not start)")
        return
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    t1 = time.perf_counter()
    if timings is not None:
        timings.update(start_s=t1 - t0, workers=workers, mode="local pool")
    # each future is dropped once its result is yielded (the caller may then release the result)
    index = {f: i for i, f in enumerate(futures)}
    del futures
    done: set[int] = set()
    imported: set[str] = set()
    item_cpu = 0.0
    broken = None
    try:
        aside()
        for fut in as_completed(list(index)):
            try:
                res, mods, cpu = fut.result()
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory): the rest run here
                broken = exc
                break
            i = index.pop(fut)
            done.add(i)
            imported.update(mods)
            item_cpu += cpu
            yield i, res
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if broken is not None:
        warnings.warn(f"a worker of the local pool stopped ({broken}); the {len(items) - len(done)} unfinished work items "
                      "run serially in this process instead (the results are the same)", ClusterFallbackWarning, stacklevel=2)
        if timings is not None:
            timings["mode"] = "local pool, then serial (a worker stopped)"
        yield from serially([i for i in range(len(items)) if i not in done])
        return
    if timings is not None:
        # the workers' CPU beyond their items' own: their start, their imports, the messages, copy-on-write faults
        timings.update(run_s=time.perf_counter() - t1, worker_imports=sorted(imported), items_cpu_s=item_cpu,
                       workers_cpu_s=_children_cpu() - children0)
        _log_timings(func, len(items), timings, cpu0)


def _on_cluster(func, items: list, plan: Plan, timings: dict | None, t0: float, cpu0: float) -> Iterator[tuple[int, Any]]:
    """:func:`iter_items` on an existing Dask cluster (``plan.address``), in completion order."""
    from distributed import as_completed

    with _client(plan) as client:
        t1 = time.perf_counter()
        if timings is not None:
            info = client.scheduler_info()
            timings.update(start_s=t1 - t0, workers=len(info.get("workers", {})), mode="dask " + plan.address)
        name = getattr(func, "__name__", "item")
        tag = f"{os.getpid()}-{time.monotonic_ns()}"
        # items go straight to the workers (scatter), not through the scheduler's task graph
        data = client.scatter(items, hash=False)
        futures = client.map(functools.partial(_run_pinned, func), data, key=[f"rngcert-{name}-{i}-{tag}" for i in range(len(items))], pure=False)
        del data
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                i = index[fut.key]
                res = fut.result()
                fut.release()
                yield i, res
        finally:
            for f in futures:
                f.release()
        if timings is not None:
            timings["run_s"] = time.perf_counter() - t1
            _log_timings(func, len(items), timings, cpu0)


def map_items(func: Callable[[Any], Any], items: Iterable[Any], *, plan: Plan | None = None,
              progress: Callable[[int, Any], None] | None = None, timings: dict | None = None,
              preload: Sequence[str] = (), costs: Sequence[float] | None = None, largest_first: bool = False,
              meanwhile: Callable[[], None] | None = None) -> list:
    """``[func(item) for item in items]`` on the plan's workers; results in item order.

    ``progress(index, result)`` is called in this process as each item finishes. Other
    parameters as in :func:`iter_items`.
    """
    items = list(items)
    out: list = [None] * len(items)
    for i, res in iter_items(func, items, plan=plan, timings=timings, preload=preload, costs=costs,
                             largest_first=largest_first, meanwhile=meanwhile):
        out[i] = res
        if progress is not None:
            progress(i, res)
    return out
