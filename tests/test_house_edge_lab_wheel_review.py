"""``house-edge roulette --equipment LAB.toml`` without ``--paytable`` prices every packaged pay table of the game: on a
lab's single-zero wheel the double-zero table (zero = 0 and 00) does not apply, and its error hid the single-zero table
(exit 4, nothing printed). The tables that do not apply are left out with a warning naming why."""

from __future__ import annotations

import json
from fractions import Fraction


def _wheel(tmp_path, k):
    labels = [str(i) for i in range(k)]
    p = tmp_path / f"w{k}.toml"
    p.write_text(f'id = "w{k}"\nkind = "roulette"\nwheel_order = {json.dumps(labels)}\nred = {json.dumps(labels[1::2])}\n'
                 'green = ["0"]\n', encoding="utf-8")
    return p


def test_a_pay_table_that_does_not_apply_does_not_hide_the_others(tmp_path, cli):
    wheel = _wheel(tmp_path, 41)
    r = cli("house-edge", "roulette", "--equipment", str(wheel), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [d["paytable"]["id"] for d in doc] == ["roulette-single-zero"]
    assert Fraction(doc[0]["house_edge"]["straight-up"]["fraction"]) == Fraction(5, 41)  # 36/41 returned per unit: 1 - 36/41
    assert "roulette-double-zero does not apply to wheel w41" in r.stderr and "'00'" in r.stderr


def test_no_pay_table_that_applies_is_an_equipment_error_naming_each(tmp_path, cli):
    r = cli("house-edge", "roulette", "--equipment", str(_wheel(tmp_path, 4)))
    assert r.exit_code == 4, r.output
    assert "roulette-single-zero does not apply" in r.stderr and "roulette-double-zero does not apply" in r.stderr


def test_a_named_pay_table_that_does_not_apply_is_still_refused(tmp_path, cli):
    r = cli("house-edge", "roulette", "--equipment", str(_wheel(tmp_path, 41)), "--paytable", "roulette-double-zero")
    assert r.exit_code == 4 and "'00'" in r.stderr, r.output
