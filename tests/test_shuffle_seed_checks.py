"""Lab-supplied wheels and pay tables against the seeds' rules (issue 12 item 5):
rngcert.equipment.paytables.seed_checks."""

import tomllib

import pytest

from rngcert.equipment.paytables import load_paytable, packaged_paytables, paytable_from_dict, seed_checks
from rngcert.equipment.wheel import load_wheel, packaged_wheels, wheel_from_dict
from rngcert.errors import EquipmentError


def test_packaged_equipment_meets_the_rules():
    for w in packaged_wheels():
        assert seed_checks(wheel=load_wheel(w)) == [], w
    for p in packaged_paytables():
        assert seed_checks(load_paytable(p)) == [], p


def test_money_wheel_with_wrong_section_counts_is_named():
    doc = {"id": "lab", "name": "lab wheel", "kind": "money-wheel", "source": "lab",
           "sections": ["A"] * 23 + ["B"] * 13 + ["C"] * 8 + ["D"] * 4 + ["E"] * 2 + ["F", "G"]}
    msg = " ".join(seed_checks(wheel=wheel_from_dict(doc, "lab.toml")))
    assert "A 23 (rule: 24)" in msg and "B 13 (rule: 12)" in msg and "2.3" in msg
    with pytest.raises(EquipmentError, match="--strict"):
        seed_checks(wheel=wheel_from_dict(doc, "lab.toml"), strict=True)


def test_money_wheel_pay_table_must_be_one_option():
    pt = load_paytable("money-wheel-option-two")
    bets = [{"name": b.name, "symbol": b.name, "odds": f"{b.odds.numerator}:{b.odds.denominator}"} for b in pt.bets]
    bets[4]["odds"] = "22:1"  # E: neither 23 (option one) nor 20 (two, three)
    bad = paytable_from_dict({"id": "lab-mw", "game": "money-wheel", "wheel": "money-wheel-52", "bets": bets}, "lab-mw.toml")
    msg = " ".join(seed_checks(bad))
    assert "3.8" in msg and "E 22:1" in msg


def test_roulette_rage_below_minimum_odds_and_wheel_colours():
    odds = {"4": "5:1", "5": "7:1", "6": "15:1", "7": "20:1", "8": "40:1", "9": "60:1", "10": "100:1", "11": "200:1", "12": "400:1",
            "13": "1000:1", "14": "2000:1"}
    rage = paytable_from_dict({"id": "lab-rage", "game": "roulette-rage", "wheel": "european", "min_run": 4, "max_run": 14, "odds": odds},
                              "lab-rage.toml")
    msg = " ".join(seed_checks(rage))
    assert "3.28" in msg and "a run of 5 pays 7:1 (minimum 8:1)" in msg
    eu = tomllib.loads(open(load_wheel("european").path).read())
    red = list(eu["red"])
    red[red.index("32")] = "15"  # 15 is black; now 32 and 15 swap colours: 0, 32(black), 15(red)... neighbours clash
    red = sorted(set(red) - {"32"} | {"15"})
    doc = {**eu, "id": "lab-eu", "red": red}
    out = seed_checks(wheel=wheel_from_dict(doc, "lab-eu.toml"))
    assert any("alternate" in x for x in out)


def _lab_wheel_file(tmp_path):
    """A European wheel TOML whose colours no longer alternate (32 made black, 15 red)."""
    eu = tomllib.loads(open(load_wheel("european").path).read())
    red = sorted(set(eu["red"]) - {"32"} | {"15"}, key=int)

    def arr(xs):
        return "[" + ", ".join(f'"{x}"' for x in xs) + "]"

    f = tmp_path / "lab-eu.toml"
    f.write_text(f'id = "lab-eu"\nname = "lab wheel"\nkind = "roulette"\nsource = "lab"\n'
                 f"wheel_order = {arr(eu['wheel_order'])}\nred = {arr(red)}\ngreen = {arr(eu['green'])}\n")
    return f


def test_certify_warns_on_a_lab_wheel_and_refuses_it_with_strict(tmp_path, cli):
    import json


    f = _lab_wheel_file(tmp_path)
    log = tmp_path / "spins.csv"
    r = cli("simulate", "wheel", "--spins", "3000", "--seed", "1", "--out", log)
    assert r.exit_code == 0, r.output
    r = cli("certify", log, "--equipment", f, "--seed", "1", "--resamples", "199", "--no-plots", "--json", "--out", tmp_path / "r")
    assert r.exit_code in (0, 10, 11, 12), r.output
    rep = json.loads(r.stdout)
    assert any(n.startswith("equipment check (warning)") and "alternate" in n for n in rep["notes"]), rep["notes"]
    r = cli("certify", log, "--equipment", f, "--strict", "--no-plots", "--out", tmp_path / "s")
    assert r.exit_code == 4 and "--strict" in r.output and "alternate" in r.output
    r = cli("equipment", f)
    assert r.exit_code == 0 and any("alternate" in x for x in json.loads(r.output)["equipment_checks"])
