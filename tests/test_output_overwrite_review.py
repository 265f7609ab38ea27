"""A file rngcert writes never silently replaces an existing one. ``simulate wheel --out`` and ``shuffle simulate
--out`` wrote over a lab's file of that name (and its ``.json``), and ``shuffle simulate --tables 2`` over ``OUT.t1``
beside it, which it then deleted; they are refused now (exit 3, the file named, nothing written), as ``keygen`` refuses
an existing key, unless ``--force``."""

from __future__ import annotations

import json

import pytest

WHEEL = ("simulate", "wheel", "--spins", "100", "--seed", "1")
SHOES = ("shuffle", "simulate", "baccarat-004", "--shoes", "2", "--seed", "1")


@pytest.mark.parametrize("command", [WHEEL, SHOES], ids=["wheel", "shoes"])
@pytest.mark.parametrize("existing", ["log", "sidecar"])
def test_an_existing_output_is_refused_without_force(tmp_path, cli, command, existing):
    out = tmp_path / "lab.csv"
    victim = out if existing == "log" else tmp_path / "lab.csv.json"
    victim.write_text("a lab's own file\n", encoding="utf-8")
    r = cli(*command, "--out", str(out))
    assert r.exit_code == 3, r.output
    assert f"{victim} exists; use --force to overwrite it" in r.output
    assert victim.read_text(encoding="utf-8") == "a lab's own file\n"
    assert {p.name for p in tmp_path.iterdir()} == {victim.name}
    j = cli(*command, "--out", str(out), "--json")
    assert j.exit_code == 3 and json.loads(j.stdout)["exit_code"] == 3
    f = cli(*command, "--out", str(out), "--force")
    assert f.exit_code == 0, f.output
    assert victim.read_text(encoding="utf-8") != "a lab's own file\n"


def test_the_parts_of_a_multi_table_shoe_log_are_not_written_over(tmp_path, cli):
    out = tmp_path / "shoes.csv"
    part = tmp_path / "shoes.csv.t1"
    part.write_text("keep\n", encoding="utf-8")
    r = cli(*SHOES, "--tables", "2", "--out", str(out))
    assert r.exit_code == 3, r.output
    assert part.read_text(encoding="utf-8") == "keep\n" and not out.exists()
    assert cli(*SHOES, "--tables", "2", "--out", str(tmp_path / "other.csv")).exit_code == 0


def test_the_bundled_log_command_regenerates_it_over_the_existing_file(tmp_path, cli, monkeypatch):
    """The report's 'regenerate with:' command names the bundled log, which exists in a checkout: it gives --force."""
    import shlex

    from _support import REPO

    from rngcert.cli._common import DEFAULT_LOG_COMMAND

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "default-european-spins.csv").write_text("old\n", encoding="utf-8")
    r = cli(*shlex.split(DEFAULT_LOG_COMMAND)[1:])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "data" / "default-european-spins.csv").read_bytes() == (REPO / "data" / "default-european-spins.csv").read_bytes()
