"""A pay table that pays a bet more than its fair odds (straight-up 40:1 on 37 pockets: a typing error in a lab's
file) has a negative house edge. It breaks no seed's minimum odds, so it is priced, but `house-edge` printed the
negative edge without a word beside it; it now warns, in the text and in --json's ``equipment_checks``."""

import json
from pathlib import Path

from rngcert.equipment import paytables as pt

PACKAGED = Path(pt.__file__).parent / "paytables"


def _lab(tmp_path, name: str, old: str, new: str) -> Path:
    text = (PACKAGED / f"{name}.toml").read_text(encoding="utf-8")
    assert old in text
    text = text.replace(f'id = "{name}"', 'id = "lab-generous"').replace(old, new, 1)
    f = tmp_path / "lab.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_a_bet_paying_more_than_fair_is_warned(tmp_path, cli):
    f = _lab(tmp_path, "roulette-single-zero", 'odds = "35:1"', 'odds = "40:1"')
    res = cli("house-edge", "roulette", "-p", f)
    assert res.exit_code == 0, res.output
    assert "WARNING: bet straight-up pays more than its fair odds" in res.output and "-10.8108%" in res.output, res.output
    assert "bet split pays more" not in res.output  # the fair-priced bets say nothing
    doc = json.loads(cli("house-edge", "roulette", "-p", f, "--json").output)
    assert any("straight-up pays more than its fair odds" in w for w in doc[0]["equipment_checks"])


def test_money_wheel_and_packaged_tables(tmp_path, cli):
    f = _lab(tmp_path, "money-wheel-option-one", 'odds = "1:1"', 'odds = "2:1"')
    res = cli("house-edge", "money-wheel", "-p", f)
    assert res.exit_code == 0 and "WARNING: bet A pays more than its fair odds" in res.output, res.output
    for game in ("roulette", "money-wheel", "roulette-rage", "baccarat"):  # every packaged table pays less than fair
        res = cli("house-edge", game)
        assert res.exit_code == 0 and "pays more than" not in res.output, res.output
