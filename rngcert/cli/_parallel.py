"""The ``--workers`` / ``--scheduler`` options shared by the commands with independent work items
(multi-table ``certify``, ``audit --all``, ``bits --streams m``)."""

from __future__ import annotations

import click

WORKERS_HELP = (
    "Worker processes for the independent work items (tables, streams): default every core this process may use "
    "(CPU affinity and cgroup quota), on a local pool of forked processes when the work is large enough for it to pay, else "
    "serially here (a single table runs here, its tests on up to 4 threads); 1 = serial in this process, one thread. "
    "A number given here beats DASK_SCHEDULER_ADDRESS; it does not go with --scheduler (the cluster's workers run the items). "
    "The result does not depend on it."
)
SCHEDULER_HELP = (
    "Run the work items on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (default: the environment "
    "variable DASK_SCHEDULER_ADDRESS when --workers is not given, else a local pool)."
)


def parallel_options(fn):
    """Add ``--workers N`` and ``--scheduler ADDRESS`` to a click command."""
    fn = click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help=SCHEDULER_HELP)(fn)
    fn = click.option("--workers", type=click.IntRange(min=1), default=None, help=WORKERS_HELP)(fn)
    return fn


def plan_of(workers, scheduler):
    """The :class:`rngcert.pipeline.parallel.Plan` of the options; ``--workers`` with ``--scheduler`` is a
    usage error (exit 2): the cluster's own workers run the items, so the number would be ignored."""
    from rngcert.pipeline.parallel import Plan

    if workers is not None and scheduler:
        raise click.UsageError(f"--workers {workers} with --scheduler: the cluster at {scheduler} runs the work items on its own "
                               "workers, so a local worker count would be ignored; give one of them")
    if scheduler and "://" not in scheduler:
        raise click.BadParameter(f"{scheduler!r} must look like tcp://HOST:PORT (as printed by `dask scheduler`)", param_hint="--scheduler")
    return Plan(workers=workers, scheduler=scheduler)


def workers_of(workers, older, older_name: str):
    """``--workers`` or its older name (``--processes`` of bits, ``--jobs`` of audit); both given is a usage error (exit 2)."""
    if workers is not None and older is not None:
        raise click.UsageError(f"{older_name} {older} with --workers {workers}: {older_name} is the older name of --workers; give one of them")
    return workers if workers is not None else older
