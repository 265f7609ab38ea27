"""Review 3 of the shoe and shuffle side: a new user's scanner logs (shoes cut short, ...)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_shoe_inputs_review import DECK, _shoes, _write  # noqa: F401 (the one-deck shoes and the CSV writer of the shoe reviews)

from rngcert.collect.shoelog import read_shoe_log


def _cut_short_log(tmp_path, n: int = 40, short: int = 20, keep: int = 3):
    """``n`` one-deck shoes, shoe ``short`` cut short after ``keep`` cards (a scanner that stopped)."""
    rows = [(s, p, c) for s, cards in enumerate(_shoes(n), 1) for p, c in enumerate(cards, 1) if s != short or p <= keep]
    f = tmp_path / "cut-short.csv"
    _write(f, "shoe_id,position,card", rows)
    return f


def test_a_shoe_cut_short_is_a_shoe_problem_not_every_shoes_length(tmp_path):
    """One shoe of 40 stops after 3 cards. It used to be accepted as a dealt prefix, and every shoe's
    tested length became 3 (``after`` is cut to the shortest shoe): the game-level and rank tests and the
    trackers saw 3 cards a shoe, with no word of why. It is a shoe problem, named, and left out."""
    log = read_shoe_log(_cut_short_log(tmp_path), decks=1)
    assert log.n_shoes == 39 and log.after.shape == (39, 52)
    (p,) = log.problems
    assert p.shoe == "20" and "cut short" in p.reason and "3 cards" in p.reason and "median dealt shoe (52 cards)" in p.reason
    # a dealt prefix near the others' length is still a prefix
    f = tmp_path / "prefixes.csv"
    _write(f, "shoe_id,position,card", [(s, p, c) for s, cards in enumerate(_shoes(10), 1) for p, c in enumerate(cards, 1)
                                        if p <= 40 + s])
    log = read_shoe_log(f, decks=1)
    assert log.n_shoes == 10 and not log.problems and log.after.shape == (10, 41)
    assert read_shoe_log(_cut_short_log(tmp_path), decks=1, cut_short=0).n_shoes == 40
    # a shoe dealt to 30 of the others' 52 cards (a game shuffled after so many rounds) is a dealt prefix, not cut short
    assert read_shoe_log(_cut_short_log(tmp_path, keep=30), decks=1).n_shoes == 40


def test_a_shoe_cut_short_does_not_switch_off_the_game_tests(cli, tmp_path):
    """The blackjack dealer-totals test ran on the shortest shoe's 3 cards: 'fewer than 17 usable cards (3)',
    not applicable, for all 40 shoes."""
    res = cli("shuffle", "certify", _cut_short_log(tmp_path), "--decks", 1, "--game", "blackjack", "--before", "new-deck",
              "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    rep = json.loads(res.stdout)
    tests = {t["name"]: t for t in rep["tables"][0]["battery"]["tests"]}
    assert tests["dealer_totals"]["applicable"], tests["dealer_totals"]
    assert [p["shoe"] for p in rep["shoe_problems"]] == ["20"]


def _fair_log(tmp_path, n: int):
    f = tmp_path / f"fair-{n}.csv"
    _write(f, "shoe_id,position,card", [(s, p, c) for s, cards in enumerate(_shoes(n, seed=5), 1) for p, c in enumerate(cards, 1)])
    return f


def test_one_shoe_without_a_game_is_not_a_pass(cli, tmp_path):
    """One shuffled deck, no game (so no tracker edge to gate on): PASS, exit 0, 'consistent with a well-shuffled
    shoe', while the per-position rank chi-square said it needs 65 shoes. The c03/c22 kind: no PASS on data that
    cannot carry one. INCONCLUSIVE with the shoes needed; at 70 shoes the verdict is the tests'."""
    for n in (1, 10):
        res = cli("shuffle", "certify", _fair_log(tmp_path, n), "--decks", 1, "--before", "new-deck", "--out", tmp_path / "out",
                  "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
        assert res.exit_code == 11, res.output
        rep = json.loads(res.stdout)
        (why,) = rep["tables"][0]["battery"]["reasons"][:1]
        assert why.startswith(f"too few shoes ({n}; at least 65 needed)") and "position_rank_chisquare" in why
        assert rep["power_gate"]["status"] == "underpowered" and rep["power_gate"]["shoes_needed"] == 65
        assert rep["standard"]["verdict"] == "INCONCLUSIVE"
    res = cli("shuffle", "certify", _fair_log(tmp_path, 70), "--decks", 1, "--before", "new-deck", "--out", tmp_path / "out",
              "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["power_gate"]["status"] == "not gated"


def test_a_newest_first_export_is_dealt_in_shoe_id_order(tmp_path):
    """Shoes 1..12 of one table written newest first (no timestamps): the shoes were taken in file order, so each
    shoe's order before the shuffle was rebuilt from the shoe dealt *after* it, without a word (1,500 dealt-only
    baccarat-004 shoes written so: the FAIL, a sequence tracker +1.35%, became SUSPECT). Shoe ids that count by one
    give the order, with a note; ids that are not a counter keep the file's order."""
    shoes = _shoes(12)
    rows = [("T1", s, p, c) for s in range(12, 0, -1) for p, c in enumerate(shoes[s - 1], 1)]
    f = tmp_path / "newest-first.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    (seq,) = log.sequence().values()
    assert [log.after_ids[i][1] for i in seq] == [str(s) for s in range(1, 13)]
    assert [log.meta[i]["rank"] for i in seq] == list(range(12))
    (note,) = log.notes
    assert "table T1: the shoes are taken in the order of their shoe ids (1 to 12" in note and "12 of 12" in note
    # ids that are not a counter (a scanner's serials): the file's order, no note
    rows = [("T1", 1000 - 37 * s, p, c) for s in range(12, 0, -1) for p, c in enumerate(shoes[s - 1], 1)]
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    (seq,) = log.sequence().values()
    assert [int(log.after_ids[i][1]) for i in seq] == [1000 - 37 * s for s in range(12, 0, -1)] and not log.notes


def test_game_none_on_a_procedure_is_applied_not_ignored(cli, tmp_path):
    """--game none on baccarat-004 ('deal this game instead of the procedure's own') was dropped without a word: the
    report dealt baccarat, with its trackers. It deals no game now; and --rule, a blackjack rule, is refused with it."""
    res = cli("shuffle", "certify", "baccarat-004", "--game", "none", "--shoes", 100, "--no-sensitivity", "--out", tmp_path / "out",
              "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    rep = json.loads(res.stdout)
    names = {t["name"] for sec in rep["tables"] for t in sec["battery"]["tests"]}
    assert not any(n.startswith(("tracker_edge:", "baccarat_")) for n in names), sorted(names)
    assert rep["equipment"]["procedure"]["game"] == "none"
    assert not [n for n in rep["notes"] if "tracker" in n], rep["notes"]  # (no trackers, so no sentence about them)
    res = cli("shuffle", "certify", "blackjack-004", "--game", "none", "--rule", "H17", "--out", tmp_path / "out", "--json")
    assert res.exit_code == 2, res.output


def test_no_note_of_trackers_where_no_tracker_ran(cli, tmp_path):
    """A log without a game: the report said 'trackers learned the shuffle from one half of the shoes and played the
    other, both ways (cross-fitting)' beside 'no tracker ran'. No sentence about trackers that did not exist."""
    res = cli("shuffle", "certify", _fair_log(tmp_path, 20), "--decks", 1, "--before", "new-deck", "--out", tmp_path / "out",
              "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    rep = json.loads(res.stdout)
    assert not [n for n in rep["notes"] if "tracker" in n], rep["notes"]
    res = cli("shuffle", "certify", _fair_log(tmp_path, 20), "--decks", 1, "--game", "blackjack", "--before", "new-deck",
              "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    assert any("cross-fitting" in n for n in json.loads(res.stdout)["notes"])


@pytest.mark.slow  # (a simulated scanner log, its wash fitted and trackers trained: several seconds)
def test_the_power_statement_says_which_verdict_a_detection_gives(cli, tmp_path):
    """'with 29 shoes the battery detects, with 90% power, a shuffle that keeps 0.21% of the neighbouring pairs' under
    a manual procedure, where such a shuffle is a finding (SUSPECT), never a FAIL (DESIGN §4: power is the probability
    of a FAIL). The statement now says FAIL where a rejection FAILs (uniform) and a finding where it does not (edge)."""
    scan = tmp_path / "scan.csv"
    res = cli("shuffle", "simulate", "baccarat-004", "--shoes", 30, "--dealt-only", "--seed", 3, "--out", scan)
    assert res.exit_code == 0, res.output
    res = cli("shuffle", "certify", scan, "--decks", 8, "--procedure", "baccarat-004", "--out", tmp_path / "out", "--no-plots",
              "--json", "--seed", 1, "--resamples", 99, "--workers", 1, "--max-rejected", 1)
    st = json.loads(res.stdout)["tables"][0]["battery"]["power"]["statement"]
    assert "the battery rejects" in st and "a finding (SUSPECT), not a FAIL" in st and "it FAILs, with 90% power, a tracker edge" in st, st
    res = cli("shuffle", "certify", _fair_log(tmp_path, 20), "--decks", 1, "--before", "new-deck", "--out", tmp_path / "out",
              "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    st = json.loads(res.stdout)["tables"][0]["battery"]["power"]["statement"]
    assert st.startswith("with 20 shoes the battery FAILs, with 90% power") and "SUSPECT" not in st, st
    assert "(one deck)" in st


def test_a_suspect_does_not_say_no_tracker_exploits_a_shuffle_whose_tracker_interval_is_above_zero():
    """A blackjack log: SUSPECT, the sequence tracker +20.47% (95% interval +2.73% to +38.21%, Holm-adjusted 0.14).
    The next step said 'no tracker exploits at 199 shoes'; the interval says an edge is possible. It now says that no
    edge is *established* and names the tracker whose interval lies above the threshold."""
    from rngcert.battery.plain import shoe_findings

    trk = {"name": "blackjack_sequence", "edge": 0.2047, "ci95": [0.0273, 0.3821], "threshold": 0.0, "beats_threshold": False}
    flat = {"name": "blackjack_zone", "edge": 0.0429, "ci95": [-0.012, 0.0978], "threshold": 0.0, "beats_threshold": False}
    sec = {"table": "all shoes", "n": 199, "battery": {"verdict": "SUSPECT", "reasons": []}, "trackers": [trk, flat],
           "findings": ["position_correlation: cards end up nearer their place"]}
    _, (step,) = shoe_findings(sec)
    assert "no tracker exploits" not in step and "no tracker's edge is established at 199 shoes" in step
    assert "blackjack sequence +20.47% (95% interval +2.73% to +38.21%) lies above the threshold" in step
    assert "blackjack zone" not in step
    _, (step,) = shoe_findings(sec | {"trackers": [flat]})
    assert "lies above" not in step


def test_a_before_file_that_matches_no_shoe_is_an_input_error(cli, tmp_path):
    """A --before FILE of new-deck orders for shoes 1..40 without a table column, for a log whose shoes are table T1's:
    no order was used and every shoe's order before the shuffle silently became the previous shoe's dealt order
    (exit 11 or a verdict). An input error (exit 3) naming both sides' shoes."""
    log = tmp_path / "log.csv"
    _write(log, "table,shoe_id,position,card", [("T1", s, p, c) for s, cards in enumerate(_shoes(40), 1) for p, c in enumerate(cards, 1)])
    before = tmp_path / "before.csv"
    _write(before, "shoe_id,position,card", [(s, p, c) for s in range(1, 41) for p, c in enumerate(DECK, 1)])
    args = ("--decks", 1, "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    res = cli("shuffle", "certify", log, "--before", before, *args)
    assert res.exit_code == 3, res.output
    err = json.loads(res.stdout)["error"]
    assert "none of its 40 shoes is a dealt shoe of" in err and "table '' shoe '1'" in err and "table 'T1' shoe '1'" in err
    _write(before, "table,shoe_id,position,card", [("T1", s, p, c) for s in range(1, 41) for p, c in enumerate(DECK, 1)])
    res = cli("shuffle", "certify", log, "--before", before, *args)
    assert res.exit_code != 3 and "40 given in the --before file" in json.loads(res.stdout)["notes"][0]


def test_a_before_file_of_before_stage_rows_gives_the_orders(cli, tmp_path):
    """A --before FILE whose rows all say stage 'before' (what the file is) was refused: 'no shoe could be accepted from
    [...]: 0 rows rejected, 0 shoe problems' (exit 3), though every row was read. Its shoes are the orders."""
    log = tmp_path / "log.csv"
    _write(log, "table,shoe_id,position,card", [("T1", s, p, c) for s, cards in enumerate(_shoes(40), 1) for p, c in enumerate(cards, 1)])
    before = tmp_path / "before.csv"
    _write(before, "table,shoe_id,position,card,stage", [("T1", s, p, c, "before") for s in range(1, 41) for p, c in enumerate(DECK, 1)])
    res = cli("shuffle", "certify", log, "--before", before, "--decks", 1, "--out", tmp_path / "out", "--no-plots", "--json",
              "--seed", 1, "--resamples", 99, "--workers", 1)
    assert res.exit_code != 3, res.output
    assert "40 given in the --before file" in json.loads(res.stdout)["notes"][0]


@pytest.mark.slow  # (a simulated scanner log, its wash fitted and trackers trained: several seconds)
def test_key_findings_do_not_call_a_measured_pickup_side_assumed(cli, tmp_path):
    """A baccarat-004 scanner log: 'parameters: 2 measured ... measured deal.pickup = banker-first', while the key
    finding said 'The verdict rests on 5 assumed parameter(s) (deal.pickup, ...): neither given by the rules nor
    measured' (the findings were written before the pickup side was fitted)."""
    scan = tmp_path / "scan.csv"
    assert cli("shuffle", "simulate", "baccarat-004", "--shoes", 30, "--dealt-only", "--seed", 3, "--out", scan).exit_code == 0
    res = cli("shuffle", "certify", scan, "--decks", 8, "--procedure", "baccarat-004", "--out", tmp_path / "out", "--no-plots",
              "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    rep = json.loads(res.stdout)
    (pick,) = [p for p in rep["parameters"] if p["name"] == "deal.pickup"]
    assert pick["status"] == "measured"
    assumed = [p["label"] for p in rep["parameters"] if p["status"] == "assumed"]
    (line,) = [k for k in rep["tables"][0]["key_findings"] if "assumed parameter" in k]
    assert f"rests on {len(assumed)} assumed parameter(s)" in line and "deal.pickup" not in line, line


def test_before_or_pickup_for_a_log_that_records_every_order_is_refused(cli, tmp_path):
    """A log with both stages for every shoe, given --before new-deck (or --pickup): the recorded orders were used and the
    option silently ignored (the README: an option is applied or refused). Refused, exit 3, naming the option."""
    log = tmp_path / "both.csv"
    rows = []
    for s, cards in enumerate(_shoes(12), 1):
        rows += [(s, p, c, "before") for p, c in enumerate(DECK, 1)] + [(s, p, c, "after") for p, c in enumerate(cards, 1)]
    _write(log, "shoe_id,position,card,stage", rows)
    args = ("--decks", 1, "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1, "--resamples", 99, "--workers", 1)
    for extra in (("--before", "new-deck"), ("--game", "baccarat", "--pickup", "banker-first")):
        res = cli("shuffle", "certify", log, *extra, *args)
        assert res.exit_code == 3, res.output
        assert "has its order before the shuffle recorded" in json.loads(res.stdout)["error"]
    res = cli("shuffle", "certify", log, *args)
    assert res.exit_code != 3 and "12 recorded in the log" in json.loads(res.stdout)["notes"][0]


def test_the_pickup_side_fit_never_states_a_p_value_of_zero():
    """The pickup-side evidence of a 29-shoe baccarat log read 'paired z = -38.46, two-sided p = 0': a p-value below the
    smallest double is stated as '< 1e-300' (and stored as null with its bound), as everywhere in rngcert's reports."""
    from rngcert.pipeline.pickup_side import fit_sides

    rng = np.random.default_rng(1)
    a = 185 + rng.normal(0, 1, 200)
    info = fit_sides({"banker-first": a, "player-first": a - 50 + rng.normal(0, 1, 200)}, np.zeros(200, int), ["whole log"])
    (g,) = info["groups"]
    assert "two-sided p < 1e-300" in g["evidence"] and "p = 0" not in g["evidence"]
    assert g["p"] is None and g["p_bound"] == "< 1e-300" and g["side"] == "banker-first"
