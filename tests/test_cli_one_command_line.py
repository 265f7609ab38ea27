"""Issue 24 item 6, one command line: `house-edge` covers every game, `--json` on every command that
prints results, progress bars on a real terminal only, reliable exit codes, notes never cut."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rngcert.cli import main


def _run(*args, **kw):
    return CliRunner(**kw).invoke(main, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------ house-edge covers every game
def test_house_edge_blackjack_dispatches_to_the_shuffle_computation():
    top = _run("house-edge", "blackjack", "--decks", 6, "--json")
    alias = _run("shuffle", "house-edge", "--decks", 6, "--json")
    assert top.exit_code == 0 == alias.exit_code, top.output
    assert json.loads(top.output) == json.loads(alias.output)
    assert 0.0 < json.loads(top.output)["house_edge"] < 0.02
    proc = _run("house-edge", "blackjack-004")
    assert proc.exit_code == 0 and proc.output == _run("shuffle", "house-edge", "blackjack-004").output
    assert "house edge" in proc.output and "basic strategy" in proc.output


def test_house_edge_baccarat_and_wheels_still_work_and_options_do_not_mix():
    res = _run("house-edge", "baccarat", "--json")
    assert res.exit_code == 0 and json.loads(res.output)[0]["paytable"]
    res = _run("house-edge", "roulette", "--rule", "H17")
    assert res.exit_code == 2 and "not blackjack" in res.output
    res = _run("house-edge", "blackjack", "--paytable", "baccarat")
    assert res.exit_code == 2
    res = _run("house-edge", "poker")
    assert res.exit_code == 3 and "blackjack" in res.output  # the unknown-game message names blackjack
