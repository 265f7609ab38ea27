"""Games and protocols as data (issue 27 item 3): every place that names a card game reads the game
registry, and the packaged wheel-controller protocols are a registry of TOML files."""

from __future__ import annotations

import shutil
from importlib import resources

import numpy as np
import pytest

from rngcert.equipment import games as G
from rngcert.equipment.cards import BACCARAT_VALUE, BLACKJACK_VALUE, value_composition
from rngcert.equipment.packaged import Packaged
from rngcert.equipment.procedure import load_procedure, parse_procedure
from rngcert.equipment.protocol import PROTOCOLS, load_protocol, protocol_from_dict
from rngcert.errors import EquipmentError, InputError


def test_the_built_in_games_keep_their_data():
    assert G.names()[:2] == ("baccarat", "blackjack")
    assert np.array_equal(G.get("baccarat").value, BACCARAT_VALUE)
    assert np.array_equal(G.get("blackjack").value, BLACKJACK_VALUE - 1)
    assert value_composition(8, "baccarat")[0] == 128 and value_composition(1, "blackjack")[9] == 16
    with pytest.raises(InputError, match="game must be one of"):
        value_composition(8, "poker")


def test_every_consumer_reads_the_registry():
    from rngcert.battery.shuffle import ShoeData
    from rngcert.cli.shuffle import shuffle_certify
    from rngcert.pipeline.pickup_side import SIDES
    from rngcert.pipeline.shoe_power import ROUND_MODEL

    choices = next(p for p in shuffle_certify.params if p.name == "game").type.choices
    assert list(choices) == [*G.names(), "none"]
    assert {g for g in G.names() if G.get(g).pickup_sides} == set(SIDES)
    assert set(ROUND_MODEL) == {g for g in G.names() if G.get(g).round_model}
    for g in G.names():
        ShoeData(None, np.zeros((2, 52), int), 1, g)  # accepted
    with pytest.raises(InputError, match="game must be None or one of"):
        ShoeData(None, np.zeros((2, 52), int), 1, "poker")


def test_procedures_validate_game_and_deal_keys_from_the_registry():
    raw = dict(load_procedure("baccarat-004").raw)
    with pytest.raises(EquipmentError, match="'game' must be 'baccarat', 'blackjack', 'casino-war' or 'none'"):
        parse_procedure(raw | {"game": "poker"})
    with pytest.raises(EquipmentError, match=r"\[deal\] 'pickup' must be one of \['last-on-top', 'first-on-top'\]"):
        parse_procedure(raw | {"game": "casino-war", "parameters": []})
    war = parse_procedure({k: v for k, v in raw.items() if k not in ("deal", "parameters")} | {"game": "casino-war",
                          "deal": {"players": 3, "pickup": "first-on-top"}})
    assert war.game == "casino-war" and war.deal["players"] == 3
    with pytest.raises(EquipmentError, match="'players' must be an integer in 1..7"):
        parse_procedure(raw | {"game": "casino-war", "deal": {"players": 9}, "parameters": []})
    with pytest.raises(EquipmentError, match="a coup needs 6"):
        parse_procedure(raw | {"cut_card_from_back": 412})
    moved = load_procedure("baccarat-004").with_game("casino-war")
    assert moved.steps == load_procedure("baccarat-004").steps and moved.deal == {} and moved.id == "baccarat-004+casino-war"


def test_a_game_is_registered_once_with_valid_data():
    with pytest.raises(EquipmentError, match="registered twice"):
        G.register(G.get("baccarat"))
    with pytest.raises(EquipmentError, match="13 non-negative"):
        G.Game("x", "X", "", value=(1, 2))
    with pytest.raises(EquipmentError, match="not 'none'"):
        G.Game("none", "X", "", value=(0,) * 13)


def test_protocols_are_a_registry_of_toml_files(tmp_path):
    assert "slingshot2" in PROTOCOLS.names() and load_protocol("slingshot2") is PROTOCOLS.get("slingshot2")
    # adding a protocol is adding one TOML file to the folder
    src = resources.files("rngcert.equipment") / "protocols" / "slingshot2.toml"
    (tmp_path / "protocols").mkdir()
    shutil.copy(str(src), tmp_path / "protocols" / "slingshot2.toml")
    text = src.read_text(encoding="utf-8").replace('name = "slingshot2"', 'name = "other-wheel"')
    (tmp_path / "protocols" / "other-wheel.toml").write_text(text, encoding="utf-8")
    reg = Packaged("protocols", "wheel-controller protocol", "protocols", "protocol file", protocol_from_dict, root=tmp_path)
    assert reg.names() == ["other-wheel", "slingshot2"] and "other-wheel" in reg
    assert reg.get("other-wheel").name == "other-wheel" and dict(reg.items()).keys() == {"other-wheel", "slingshot2"}
    with pytest.raises(EquipmentError, match="unknown wheel-controller protocol 'x'; packaged protocols: other-wheel, slingshot2"):
        reg.get("x")
    assert reg.load(tmp_path / "protocols" / "other-wheel.toml").name == "other-wheel"  # a lab's file by path
