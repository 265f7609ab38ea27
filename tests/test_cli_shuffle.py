"""Shuffle commands end to end: procedures and shoe logs through the same verdict and report."""

from __future__ import annotations

import json

import pytest

from rngcert.cli import EXIT, EXIT_EQUIPMENT, EXIT_INPUT

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


def test_help(cli):
    for cmd in (["shuffle"], ["shuffle", "certify"], ["shuffle", "simulate"], ["shuffle", "riffles"], ["shuffle", "house-edge"]):
        res = cli(*cmd, "--help")
        assert res.exit_code == 0
        if len(cmd) > 1:
            assert "Example" in res.output


def test_riffles_table_reproduces_bayer_diaconis(cli):
    d = json.loads(cli("shuffle", "riffles", "--cards", 52, "--json").output)
    tv = [round(r["tv"], 3) for r in d["rows"]]
    assert tv == [1.0, 1.0, 1.0, 1.0, 0.924, 0.614, 0.334, 0.167, 0.085, 0.043]


def test_ideal_procedure_passes_and_two_riffles_fail(cli, tmp_path):
    ideal = tmp_path / "ideal.toml"
    ideal.write_text(IDEAL)
    res = cli("shuffle", "certify", ideal, "--shoes", 1000, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert d["verdict"] == "PASS" and res.exit_code == EXIT["PASS"]
    assert d["policy"]["standard"] == "uniform"  # a machine (and no game): any rejection would fail
    assert all(t["battery"]["rejected_familywise"] == [] for t in d["tables"])
    bad = tmp_path / "two.toml"
    bad.write_text(TWO_RIFFLES)
    res = cli("shuffle", "certify", bad, "--shoes", 300, "--seed", 2, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert res.exit_code == EXIT["FAIL"]  # game "none": no edge to measure, the uniform standard applies
    assert "rising_sequences" in d["tables"][0]["battery"]["rejected_familywise"]


def test_packaged_procedure_report_shows_assumptions_edges_and_first_shoe(cli, tmp_path):
    res = cli("shuffle", "certify", "baccarat-004", "--shoes", 300, "--seed", 1, "--sensitivity-shoes", 100, "--out", tmp_path)
    assert res.exit_code in (EXIT["FAIL"], EXIT["SUSPECT"])
    assert "sensitivity at 100 tables a point" in res.output  # on by default for a procedure (issue 12: the packaged reports show it)
    assert "ASSUMED" in res.output and "tracker baccarat_sequence" in res.output and "first shoe from new decks" in res.output
    rep = next(tmp_path.glob("baccarat-004-*"))
    d = json.loads((rep / "report.json").read_text())
    par = {p["name"]: p for p in d["parameters"]}
    assert par["steps[1].intensity"]["status"] == "assumed" and par["decks"]["status"] == "rule"
    assert d["first_shoe"]["verdict"] in ("FAIL", "SUSPECT", "PASS") and d["steady_state"]["burn_in"] == 10
    assert [t["table"] for t in d["tables"]] == ["steady state (after 10 shoes)", "first shoe from new decks"]
    assert d["tables"][0]["trackers"][0]["name"] == "baccarat_sequence" and d["house_edge"]["banker"] == pytest.approx(0.010579, abs=1e-6)
    html = (rep / "report.html").read_text()
    for text in ("Zone-to-zone heat map", "Rising sequences", "what is measured, what is assumed", "ASSUMED",
                 "The player's edge", "First shoe from new decks", "Power and effect size", "Sensitivity to the assumed parameters"):
        assert text in html, text


def test_blackjack_decks_and_rules_are_checked(cli, tmp_path):
    res = cli("shuffle", "certify", "blackjack-004", "--rule", "H17", "--shoes", 100, "--out", tmp_path)
    assert res.exit_code == EXIT_EQUIPMENT and "4.4 ii" in res.output and "only S17 is allowed by" in res.output and "[" + "'S17" not in res.output
    res = cli("shuffle", "certify", "baccarat-004", "--decks", 6)  # refused by the rules, like H17: exit 4, rule cited
    assert res.exit_code == EXIT_EQUIPMENT and "1.3.1" in res.output
    res = cli("shuffle", "house-edge", "blackjack-004", "--decks", 6, "--json")
    d = json.loads(res.output)
    assert d["rules"]["decks"] == 6 and 0.003 < d["house_edge"] < 0.01 and d["rules"]["hole_card"] == "peek-ace"


def test_simulated_log_takes_the_same_path(cli, tmp_path):
    log = tmp_path / "shoes.csv"
    assert cli("shuffle", "simulate", "baccarat-004", "--shoes", 60, "--seed", 4, "--out", log).exit_code == 0
    res = cli("shuffle", "certify", log, "--decks", 8, "--procedure", "baccarat-004", "--seed", 1, "--no-plots", "--json",
              "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert d["tables"][0]["n"] == 60 and d["inputs"][0]["sha256"]
    assert res.exit_code in (EXIT["FAIL"], EXIT["SUSPECT"]) and d["policy"]["standard"] == "edge"
    assert d["fit"]["parameters"]["steps[1].clump"]["value"] > 1


def test_dealt_only_scanner_stream_is_rebuilt(cli, tmp_path):
    log = tmp_path / "scan.csv"
    assert cli("shuffle", "simulate", "baccarat-004", "--shoes", 40, "--seed", 4, "--dealt-only", "--dealers", 2, "--out", log).exit_code == 0
    head = log.read_text().splitlines()[:2]
    assert head[0] == "table,shoe_id,position,card,dealer,rotated" and "#" not in head[1]  # a live scanner: no serials
    res = cli("shuffle", "certify", log, "--decks", 8, "--procedure", "baccarat-004", "--seed", 1, "--no-plots", "--json",
              "--resamples", 99, "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert [t["table"] for t in d["tables"]] == ["all shoes", "dealer D1", "dealer D2"]
    assert d["reconstruction"]["shoes_tested"] == 39 and d["reconstruction"]["cards_filled_before_per_shoe"] < 8
    assert res.exit_code in (EXIT["FAIL"], EXIT["SUSPECT"])


def test_shoe_log_errors(cli, tmp_path):
    assert cli("shuffle", "certify", "nope.toml").exit_code == EXIT_EQUIPMENT
    bad = tmp_path / "bad.toml"
    bad.write_text(IDEAL.replace('op = "fisher_yates"', 'op = "juggle"'))
    res = cli("shuffle", "certify", bad)
    assert res.exit_code == EXIT_EQUIPMENT and "juggle" in res.output
    log = tmp_path / "log.csv"
    log.write_text("shoe_id,position,card\n1,1,ZZ\n")
    assert cli("shuffle", "certify", log).exit_code == 2  # --decks required
    res = cli("shuffle", "certify", log, "--decks", 1, "--sensitivity", "--out", tmp_path / "r")  # works on logs (issue 23); no shoe here
    assert res.exit_code == EXIT_INPUT and "no shoe could be accepted" in res.output
    res = cli("shuffle", "certify", log, "--decks", 1, "--out", tmp_path / "r")
    assert res.exit_code == EXIT_INPUT and "no shoe could be accepted" in res.output and "token 'ZZ'" in res.output
    # --game on a procedure deals another registered game (tests/test_casino_war.py); --pickup describes a shoe log
    assert cli("shuffle", "certify", "baccarat-004", "--pickup", "banker-first").exit_code == 2
    assert cli("shuffle", "certify", "baccarat-004", "--game", "poker").exit_code == 2


def test_declared_before_orders(cli, tmp_path):
    # an electronic game that shuffles a new-deck-ordered virtual deck every time: --before new-deck,
    # or the same orders given in a FILE (a shoe log whose shoes are the orders before)
    import numpy as np

    from rngcert.collect.shoelog import write_shoe_log
    from rngcert.simulate import shufflers as S

    rng = np.random.default_rng(8)
    new = np.tile(np.arange(52, dtype=np.int16), (80, 1))
    sat = S.sattolo(new, np.random.Generator(np.random.PCG64(8)))
    fy = rng.permuted(new, axis=1)
    for name, shoes, want in (("fy", fy, EXIT["PASS"]), ("sat", sat, EXIT["FAIL"])):
        log = tmp_path / f"{name}.csv"
        write_shoe_log(log, shoes, table="G1", serial=False)
        res = cli("shuffle", "certify", log, "--decks", 1, "--before", "new-deck", "--seed", 1, "--no-plots", "--resamples", 199,
                  "--out", tmp_path / "r")
        assert res.exit_code == want, res.output[-800:]
    bfile = tmp_path / "before.csv"
    write_shoe_log(bfile, new, table="G1", serial=False)
    res = cli("shuffle", "certify", tmp_path / "sat.csv", "--decks", 1, "--before", bfile, "--seed", 1, "--no-plots", "--json",
              "--resamples", 199, "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert res.exit_code == EXIT["FAIL"] and "fixed_points" in d["tables"][0]["battery"]["rejected_familywise"]


def test_one_riffle_procedure_fails_on_edge(cli, tmp_path):
    proc = tmp_path / "one.toml"
    proc.write_text('id = "one-riffle"\nname = "One GSR riffle of the 8-deck shoe"\ngame = "baccarat"\ndecks = 8\n'
                    'cut_card_from_back = 7\n[[steps]]\nop = "riffle"\n')
    res = cli("shuffle", "certify", proc, "--shoes", 600, "--seed", 3, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(res.output)
    assert res.exit_code == EXIT["FAIL"] and d["policy"]["standard"] == "edge"
    t = d["tables"][0]
    assert "tracker_edge:baccarat_sequence" in t["battery"]["rejected_familywise"]
    tr = t["trackers"][0]
    assert tr["beats_threshold"] and tr["ci95"][0] > 0.01


def test_sensitivity_grid_states_verdict_edge_and_power_per_point(tmp_path):
    """--sensitivity: every point of travel x clump x riffles has a verdict, its best tracker edge with
    the 95% interval, and the edge its tables detect with 90% power; the declared point is on the grid;
    a FAIL point's edge is significant (its interval above the threshold)."""
    from rngcert.battery.core import VERDICTS
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle import certify_procedure

    cert = certify_procedure(load_procedure("baccarat-004"), tables=150, seed=1, sensitivity=True, sensitivity_tables=100, figures=False)
    sens = cert.report["sensitivity"]
    assert len(sens["rows"]) == 4 * 4 * 2 and set(sens["axes"]) == {"travel", "clump", "riffles"}
    assert any(all(r[a] == sens["current"][a] for a in sens["axes"]) for r in sens["rows"])
    for r in sens["rows"]:
        assert r["verdict"] in VERDICTS
        if r["edge"] is not None:
            assert r["ci95"][0] <= r["edge"] <= r["ci95"][1] and r["detectable_edge"] > 0
        if r["verdict"] == "FAIL":  # a significant edge, or no tracker bet (nothing measured clears a rejection; issue 23)
            assert (r["edge"] is not None and r["ci95"][0] > 0) or (r["edge"] is None and r["rejected"])
    assert "detectable" in sens["note"] and "not excluded" in sens["note"]
    for r in sens["rows"]:  # the detectable edge is that of the tracker shown: none where no tracker bet
        if r["edge"] is None:
            assert r["detectable_edge"] is None


def test_shuffle_output_reads_verdict_first_and_last(cli, tmp_path):
    """The report's header (with its verdict) is the first line and VERDICT the last before the
    report's paths; the shuffle's own lines (parameters, trackers, findings) stand between them,
    as in a wheel certificate (they came first, 45 lines before the header)."""
    r = cli("shuffle", "certify", "baccarat-004", "--shoes", "120", "--seed", "1", "--no-sensitivity",
            "--no-plots", "--resamples", "199", "--out", tmp_path, catch_exceptions=True)
    lines = r.output.splitlines()
    assert lines[0].startswith("rngcert ") and "Certification report" in lines[0], lines[:3]
    v = max(i for i, ln in enumerate(lines) if ln.startswith("VERDICT:"))
    assert lines[v + 1].startswith("report: ")
    assert any(ln.startswith("parameters:") for ln in lines[1:v]) and any("tracker" in ln for ln in lines[1:v])
