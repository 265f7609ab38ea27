"""Shuffle commands end to end: procedures and shoe logs through the same verdict and report."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rngcert.cli import EXIT, EXIT_EQUIPMENT, EXIT_INPUT, main

IDEAL = """
id = "ideal-1deck"
name = "Ideal shuffle (Fisher-Yates), one deck"
source = "test"
game = "none"
decks = 1
cut_card_from_back = 0

[[steps]]
op = "fisher_yates"
"""

TWO_RIFFLES = """
id = "two-riffles"
name = "Two GSR riffles of one deck"
source = "test"
game = "none"
decks = 1
cut_card_from_back = 0

[[steps]]
op = "riffle"

[[steps]]
op = "riffle"
"""


@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *a: runner.invoke(main, [str(x) for x in a], catch_exceptions=False)


def test_help(run):
    for cmd in (["shuffle"], ["shuffle", "certify"], ["shuffle", "simulate"], ["shuffle", "riffles"]):
        res = run(*cmd, "--help")
        assert res.exit_code == 0
    assert "Examples" in run("shuffle", "certify", "--help").output


def test_riffles_table_reproduces_bayer_diaconis(run):
    d = json.loads(run("shuffle", "riffles", "--cards", 52, "--json").output)
    tv = [round(r["tv"], 3) for r in d["rows"]]
    assert tv == [1.0, 1.0, 1.0, 1.0, 0.924, 0.614, 0.334, 0.167, 0.085, 0.043]


def test_ideal_procedure_passes_and_two_riffles_fail(run, tmp_path):
    ideal = tmp_path / "ideal.toml"
    ideal.write_text(IDEAL)
    res = run("shuffle", "certify", ideal, "--shoes", 1000, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert d["verdict"] in ("PASS", "SUSPECT") and res.exit_code == EXIT[d["verdict"]]
    assert d["tables"][0]["battery"]["rejected_familywise"] == []
    bad = tmp_path / "two.toml"
    bad.write_text(TWO_RIFFLES)
    res = run("shuffle", "certify", bad, "--shoes", 300, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert res.exit_code == EXIT["FAIL"]
    assert "rising_sequences" in d["tables"][0]["battery"]["rejected_familywise"]


def test_packaged_procedure_report_says_what_fails(run, tmp_path):
    res = run("shuffle", "certify", "blackjack-004", "--shoes", 300, "--seed", 1, "--out", tmp_path)
    assert res.exit_code == EXIT["FAIL"]
    assert "REJECTED (Holm)" in res.output
    html = next(tmp_path.glob("blackjack-004-*/report.html")).read_text()
    for title in ("Zone-to-zone heat map", "Rising sequences", "Guess-the-next-card test"):
        assert title in html


def test_simulated_log_takes_the_same_path(run, tmp_path):
    log = tmp_path / "shoes.csv"
    assert run("shuffle", "simulate", "baccarat-004", "--shoes", 60, "--seed", 4, "--out", log).exit_code == 0
    res = run("shuffle", "certify", log, "--decks", 8, "--game", "baccarat", "--seed", 1, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert d["tables"][0]["n"] == 60 and d["inputs"][0]["sha256"]
    assert res.exit_code == EXIT["FAIL"]


def test_shoe_log_errors(run, tmp_path):
    assert run("shuffle", "certify", "nope.toml").exit_code == EXIT_EQUIPMENT
    bad = tmp_path / "bad.toml"
    bad.write_text(IDEAL.replace('op = "fisher_yates"', 'op = "juggle"'))
    res = run("shuffle", "certify", bad)
    assert res.exit_code == EXIT_EQUIPMENT and "juggle" in res.output
    log = tmp_path / "log.csv"
    log.write_text("shoe_id,position,card\n1,1,ZZ\n")
    assert run("shuffle", "certify", log).exit_code == 2  # --decks required
    res = run("shuffle", "certify", log, "--decks", 1, "--out", tmp_path / "r")
    assert res.exit_code == EXIT_INPUT and "no shoe could be accepted" in res.output
