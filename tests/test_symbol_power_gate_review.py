"""A money wheel tested by symbol (Crazy Time: arrangement unknown) gates its PASS on the declared minimum bias (+50%)
with the power of the symbol chi-square against one section's bias, the section its power sentence names (the lone
CrazyBonus section: 6,050 spins). The gate used the spins a chi-square of 8 *equally likely* outcomes needs (1,091),
so a 3,000-spin log PASSed while its own power sentence said +50% was out of reach, and a 600-spin log said "needs
1091 spins"."""

from __future__ import annotations

import json

import numpy as np

from rngcert.stats import power as pw

_SYMBOLS = ["1", "2", "5", "10", "CoinFlip", "CashHunt", "Pachinko", "CrazyBonus"]
_COUNTS = [21, 13, 7, 4, 4, 2, 2, 1]


def test_symbol_wheel_pass_needs_the_power_of_its_stated_section(tmp_path, cli):
    need = pw.spins_needed_section_bias_categories(0.5, np.repeat(np.arange(8), _COUNTS), 53, alpha=0.01, power=0.9).n
    assert need == 6050
    g = np.random.default_rng(4)
    x = g.choice(8, size=3000, p=np.array(_COUNTS) / 54)
    log = tmp_path / "ct.csv"
    log.write_text("spin_id,result\n" + "".join(f"{i + 1},{_SYMBOLS[j]}\n" for i, j in enumerate(x)), encoding="utf-8")
    r = cli("certify", str(log), "--equipment", "crazy-time", "--out", str(tmp_path / "rep"), "--no-plots", "--json", "--seed", "1")
    assert r.exit_code == 11, r.output
    doc = json.loads(r.stdout)
    reasons = " ".join(doc["tables"][0]["battery"]["reasons"])
    assert "needs 6050 spins" in reasons, reasons


def test_power_of_a_symbol_wheel_names_the_biased_section(cli):
    """``power -e crazy-time --effect 0.5`` said "6050 spins detect a single-section bias of +50%": true of the lone
    CrazyBonus section only (a section of "1" needs 183,235 spins); the answer names the section's symbol."""
    r = cli("power", "-e", "crazy-time", "--effect", "0.5")
    assert r.exit_code == 0, r.output
    assert "spins needed: 6050" in r.stdout and "symbol CrazyBonus, the rarest" in r.stdout, r.stdout
    assert json.loads(cli("power", "-e", "crazy-time", "--effect", "0.5", "--json").stdout)["details"]["symbol"] == "CrazyBonus"
