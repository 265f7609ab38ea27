"""Commands load lazily (issue 26 item 1, fixed cost): ``rngcert certify`` imports the certify
command's module and what it uses, not the store, the recorder or the shuffle commands; ``--help``
still lists every command with its own one-line help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from rngcert.cli.app import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]

#: Modules that only other commands use: a certify of a small log must not import them.
NOT_FOR_CERTIFY = (
    "rngcert.cli.store", "rngcert.collect.store", "rngcert.collect.store.ingest", "rngcert.collect.store.export",
    "rngcert.cli.shuffle", "rngcert.cli.record", "rngcert.cli.rng", "rngcert.cli.power", "rngcert.cli.verify",
    "rngcert.cli.simulate", "rngcert.cli.equipment", "rngcert.cli._blackjack", "rngcert.cli._watch", "rngcert.cli._storeopts", "duckdb",
)

PROBE = r"""
import json, sys
from rngcert.cli.app import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print("\nMODULES " + json.dumps(sorted(m for m in sys.modules)))
"""


def _modules_after(*args) -> set[str]:
    env_path = str(ROOT)
    res = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": env_path, "CI": "1"})
    line = [x for x in res.stdout.splitlines() if x.startswith("MODULES ")]
    assert line, res.stdout + res.stderr
    return set(json.loads(line[-1][len("MODULES "):]))


def test_certify_imports_no_other_command(tmp_path):
    import numpy as np

    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    eu = load_wheel("european")
    log = tmp_path / "small.csv"
    with open(log, "wb") as fh:
        write_spin_log(fh, eu, simulate_spins(eu, 800, np.random.default_rng(3), dealers=2), table="T1")
    mods = _modules_after("certify", log, "--seed", 1, "--resamples", 99, "--no-plots", "--out", tmp_path / "r")
    assert "rngcert.pipeline.certify_wheel" in mods and "rngcert.cli.certify" in mods  # the probe ran the certify
    assert list((tmp_path / "r").glob("european-*/report.json")), "the certify wrote no report"
    loaded = sorted(m for m in NOT_FOR_CERTIFY if m in mods)
    assert not loaded, f"certify imported modules only other commands use: {loaded}"


def test_help_lists_every_command_with_its_own_help():
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
    out = main.get_help(ctx)
    for name in COMMANDS:
        cmd = main.get_command(ctx, name)
        assert isinstance(cmd, click.Command) and cmd.name == name
        first = cmd.get_short_help_str(limit=30).rstrip(".")[:20]
        assert any(line.split()[:1] == [name] and first in line for line in out.splitlines()), (name, first)


def test_a_command_loads_once_and_only_when_looked_up():
    probe = ("import sys\nfrom rngcert.cli.app import main\nimport click\n"
             "assert 'rngcert.cli.store' not in sys.modules\n"
             "ctx = click.Context(main)\nc = main.get_command(ctx, 'audit')\n"
             "assert 'rngcert.cli.store' in sys.modules and main.get_command(ctx, 'audit') is c\n"
             "assert main.get_command(ctx, 'no-such-command') is None\nprint('ok')")
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.stdout.strip() == "ok", res.stderr


def test_a_wrong_table_entry_is_said_at_once():
    from rngcert.cli._lazy import LazyGroup

    g = LazyGroup(name="x", lazy_commands={"certify": "rngcert.cli.store:audit"})
    with pytest.raises(TypeError, match="not the click command 'certify'"):
        g.get_command(click.Context(g), "certify")


@pytest.mark.parametrize("module", ["rngcert.cli.certify", "rngcert.cli._audit"])
def test_certify_starts_no_blas_worker_threads_unless_asked(module):
    """Its statistics run with one BLAS thread anyway (pinned work items): the process starts no idle OpenBLAS
    workers; a thread count the user set is kept. So does `audit` (loaded through rngcert.cli._audit: no idle
    OpenBLAS threads spin beside the pool's workers)."""
    probe = (f"import json\nimport {module}\nfrom threadpoolctl import threadpool_info\n"
             "print(json.dumps(sorted({i['num_threads'] for i in threadpool_info() if i['internal_api'] == 'openblas'})))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for preset, want in ((None, [1]), ("2", [2])):
        e = dict(env, PYTHONPATH=str(ROOT), **({"OPENBLAS_NUM_THREADS": preset} if preset else {}))
        res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=e)
        got = json.loads(res.stdout.strip().splitlines()[-1])
        assert got in (want, []), (preset, got, res.stderr)  # [] : numpy without OpenBLAS (nothing to start)


def test_help_lists_the_commands_when_one_module_cannot_be_imported():
    """Break test: with a command's module failing to import (here pyarrow, a dependency of the store's export,
    missing from the environment), ``rngcert --help`` printed a traceback and no help at all, while running the
    command said "internal error" cleanly. The help now lists every command, the broken one with the reason."""
    probe = ("import sys\nsys.modules['pyarrow'] = None  # import pyarrow raises ImportError\n"
             "from rngcert.cli.app import main\nmain(sys.argv[1:])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    res = subprocess.run([sys.executable, "-c", probe, "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    lines = {ln.split()[0]: ln for ln in res.stdout.splitlines() if ln.startswith("  ") and ln.split()}
    assert set(COMMANDS) <= set(lines)
    assert "cannot be loaded" in lines["ingest"] and "pyarrow" in lines["ingest"]
    assert "cannot be loaded" not in lines["certify"]
    run = subprocess.run([sys.executable, "-c", probe, "ingest", "x.csv"], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 1 and "internal error" in run.stderr and "Traceback" not in run.stderr, run.stderr
