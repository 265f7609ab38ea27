"""Options that size a run (shoes, tables, bits, streams, spins, Monte Carlo replicates) have a largest value: a typo
of a few zeros was an internal error (exit 1: ``Maximum allowed dimension exceeded``, ``array is too big``,
``cannot fit 'int' into an index-sized integer``) or a run that hung (``shuffle certify --shoes 10^20``, ``simulate
wheel --spins 10^20``, ``certify --resamples 10^20``: no output after a minute). Now a usage error (exit 2) naming the
option and its range, at once; and a run that does not fit in memory says so (exit 3), not "internal error"."""

from __future__ import annotations

import pytest
from _support import run_cli

HUGE = "100000000000000000000"  # 10^20

CASES = [
    ("shuffle", "certify", "baccarat-004", "--shoes", HUGE),
    ("shuffle", "certify", "baccarat-004", "--burn-in", HUGE),
    ("shuffle", "certify", "baccarat-004", "--sensitivity-shoes", HUGE),
    ("shuffle", "certify", "baccarat-004", "--resamples", HUGE),
    ("shuffle", "simulate", "baccarat-004", "--shoes", HUGE, "--out", "{d}/s.csv"),
    ("shuffle", "simulate", "baccarat-004", "--tables", HUGE, "--out", "{d}/s.csv"),
    ("bits", "--source", "pcg64", "--length", HUGE, "--seed", "1"),
    ("bits", "--source", "pcg64", "--streams", HUGE, "--seed", "1"),
    ("simulate", "wheel", "--spins", HUGE, "--out", "{d}/w.csv", "--seed", "1"),
    ("certify", "--resamples", HUGE, "--seed", "1"),
    ("audit", "--all", "--resamples", HUGE, "--db", "{d}/st.duckdb"),
    ("power", "--alternative", "sector:5", "--spins", "1000", "--resamples", HUGE),
    ("power", "--alternative", "sector:5", "--spins", "1000", "--alt-samples", HUGE),
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(x for x in a if x != HUGE and not x.startswith("{d}")))
def test_a_value_beyond_the_largest_is_a_usage_error_at_once(tmp_path, args):
    opt = args[args.index(HUGE) - 1]
    res = run_cli(*[a.replace("{d}", str(tmp_path)) for a in args])
    assert res.exit_code == 2, res.output
    assert opt in res.output and "range" in res.output, res.output
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(("module", "command", "option", "cap"), [
    ("rngcert.cli.shuffle", "shuffle", "shoes", "MAX_SHOES"), ("rngcert.cli.rng", "bits", "length", "MAX_BITS_LENGTH"),
    ("rngcert.cli.rng", "bits", "streams", "MAX_BITS_STREAMS"), ("rngcert.cli.certify", "certify", "resamples", "MAX_RESAMPLES"),
    ("rngcert.cli.simulate", "simulate", "spins", "MAX_SIMULATED_SPINS"),
])
def test_the_largest_value_itself_is_taken(module, command, option, cap):
    """The range is inclusive: the largest value converts, one more does not."""
    import importlib

    import click

    import rngcert.cli._common as common

    mod = importlib.import_module(module)
    cmds = [c for c in vars(mod).values() if isinstance(c, click.Command)]
    cmds += [sub for c in cmds if isinstance(c, click.Group) for sub in c.commands.values()]
    params = [p for c in cmds for p in c.params if p.name == option]
    assert params, (module, option)
    top = getattr(common, cap)
    for p in params:
        assert p.type.convert(top, p, None) == top
        with pytest.raises(click.BadParameter):
            p.type.convert(top + 1, p, None)


def test_not_enough_memory_is_said_not_an_internal_error(monkeypatch):
    import rngcert.pipeline.certify_wheel as cw

    def no_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(cw, "certify_log", no_memory)
    res = run_cli("certify", "--seed", "1")
    assert res.exit_code == 3, res.output
    assert "not enough memory" in res.output and "internal error" not in res.output, res.output


def test_bits_streams_times_length_of_a_generator_has_a_largest_value_too(tmp_path):
    """Each under its own largest value, 10^6 streams of 10^9 bits (10^15 bits, years of work) was accepted; the product
    is a usage error (exit 2) at once, in JSON too; 100 streams of 10^9 bits (the default count) is still taken."""
    from rngcert.cli._common import MAX_BITS_TOTAL
    from rngcert.cli.rng import _within_total

    r = run_cli("bits", "--source", "pcg64", "--streams", "1000000", "--length", "1000000000", "--seed", "1", "--out", tmp_path, "--json")
    assert r.exit_code == 2 and '"exit_code": 2' in r.stdout and "1e+15 bits" in r.stdout, r.output
    assert _within_total(100, 1_000_000_000) == 100 and 100 * 1_000_000_000 <= MAX_BITS_TOTAL
