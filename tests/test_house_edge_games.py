"""``rngcert house-edge`` knows every game of the registry (rngcert.equipment.games), as
``rngcert shuffle certify --game`` does: a break test found ``house-edge casino-war`` refused.

Runtime budget: about 8 s (blackjack's basic strategy).
"""

from __future__ import annotations

import json
import re

import pytest

from rngcert.equipment import games as G
from rngcert.simulate.games import play


@pytest.mark.parametrize("game", G.names())
def test_house_edge_knows_every_registered_game(cli, game):
    res = cli("house-edge", game, "--decks", 6)
    assert res.exit_code == 0, res.output + res.stderr
    assert "house edge" in res.output
    doc = json.loads(cli("house-edge", game, "--decks", 6, "--json").output)
    assert doc
    if game not in ("baccarat", "blackjack"):  # the edge its module computes, as the shuffle report gives it
        block = play(game).house_edge(6, None)
        assert doc[0]["house_edge"]["edge"] == pytest.approx(block["edge"])
        assert f"{100 * block['edge']:.4f}%" in res.output


def test_casino_war_edges_decks_and_options(cli, tmp_path):
    res = cli("house-edge", "casino-war")  # default 8 decks, as --decks says
    assert res.exit_code == 0 and "(8 decks)" in res.output
    six = cli("house-edge", "casino-war", "--decks", 6).output
    assert re.search(r"go_to_war\s+2\.8771%", six) and re.search(r"tie_bet\s+18\.6495%", six)  # Wizard of Odds: 2.88%, 18.65%
    bad = cli("house-edge", "casino-war", "--decks", 9)
    assert bad.exit_code == 2 and "1..8" in bad.stderr
    assert cli("house-edge", "casino-war", "--paytable", "baccarat").exit_code == 2
    # a procedure file dealing casino-war: its decks
    src = (G.__file__.rsplit("/", 1)[0] + "/procedures/baccarat-004.toml")
    text = open(src, encoding="utf-8").read()
    text = text.replace('id = "baccarat-004"', 'id = "lab-war"').replace('game = "baccarat"', 'game = "casino-war"').replace("decks = 8", "decks = 4").replace('pickup = "banker-first"', 'pickup = "last-on-top"').replace('undealt = "top"\n', "")
    p = tmp_path / "war.toml"
    p.write_text(text)
    got = cli("house-edge", str(p))
    assert got.exit_code == 0, got.output + got.stderr
    assert "(4 decks)" in got.output
    unknown = cli("house-edge", "no-such-game")
    assert unknown.exit_code == 2 and "casino-war" in unknown.stderr
