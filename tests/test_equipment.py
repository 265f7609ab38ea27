"""Wheel definitions: packaged layouts match the references; lab files are validated."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import shared_file

from rngcert.equipment.wheel import load_wheel, packaged_wheels
from rngcert.errors import EquipmentError


def _ref(name):
    return json.loads(shared_file("reference", name).read_text())


def test_packaged_ids():
    assert {"european", "american", "money-wheel-52", "crazy-time"} <= set(packaged_wheels())


def test_european_matches_reference_wheel_order_and_colours():
    ref = _ref("roulette.json")
    w = load_wheel("european")
    assert list(w.labels) == [str(x) for x in ref["european_wheel_order"]]
    red = {str(x) for x in ref["red"]}
    assert {lab for lab, c in zip(w.labels, w.colours) if c == "red"} == red
    assert [lab for lab, c in zip(w.labels, w.colours) if c == "green"] == ["0"]
    # colours alternate red/black around the wheel apart from the zero
    cols = [c for c in w.colours if c != "green"]
    assert all(a != b for a, b in zip(cols, cols[1:]))


def test_american_matches_reference():
    ref = _ref("roulette.json")
    w = load_wheel("american")
    assert list(w.labels) == ref["american_wheel_order"]
    assert w.k == 38


def test_outside_bet_partitions():
    sp = load_wheel("european").position_space()
    lab = np.array(sp.labels)
    par, _ = sp.categories["parity"]
    assert set(lab[par == 0].astype(int)) == set(range(1, 37, 2))
    doz, _ = sp.categories["dozen"]
    assert set(lab[doz == 2].astype(int)) == set(range(25, 37))
    col, _ = sp.categories["column"]
    assert set(lab[col == 0].astype(int)) == set(range(1, 37, 3))
    assert (doz == -1).sum() == 1 and lab[doz == -1][0] == "0"


def test_money_wheel_counts_rule_2_3():
    ref = _ref("money_wheel.json")
    w = load_wheel("money-wheel-52")
    assert w.k == 52
    assert dict(zip(w.symbols, w.symbol_counts)) == ref["symbol_sections"]
    sp = w.symbol_space()
    assert np.allclose(sp.probs, np.array([24, 12, 8, 4, 2, 1, 1]) / 52)


def test_crazy_time_counts():
    w = load_wheel("crazy-time")
    assert w.k == 54 and not w.order_known
    assert dict(zip(w.symbols, w.symbol_counts))["1"] == 21


@pytest.mark.parametrize(
    "body,match",
    [
        ('id="x"\nkind="roulette"\nwheel_order=["0","1","1"]\nred=["1"]\n', "more than once"),
        ('id="x"\nkind="roulette"\nwheel_order=["0","1","2"]\nred=["5"]\n', "not on the wheel"),
        ('id="x"\nkind="wheel"\n', "kind"),
        ('id="x"\nkind="money-wheel"\n', "needs 'sections'"),
        ('id="x"\nkind="money-wheel"\n[segment_counts]\na=-1\nb=2\n', "positive integer"),
        ('kind="roulette"\n', "missing key 'id'"),
        ("id = [", "not valid TOML"),
    ],
)
def test_invalid_lab_files_name_the_problem(tmp_path, body, match):
    p = tmp_path / "w.toml"
    p.write_text(body)
    with pytest.raises(EquipmentError, match=match):
        load_wheel(p)


def test_unknown_id_lists_packaged():
    with pytest.raises(EquipmentError, match="packaged wheels: .*european"):
        load_wheel("mystery")


def test_lab_file_roundtrip(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('id="mine"\nkind="money-wheel"\nsections=["A","B","A","C"]\n')
    w = load_wheel(p)
    assert w.symbols == ("A", "B", "C") and w.symbol_counts == (2, 1, 1)
