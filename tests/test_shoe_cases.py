"""Shoe-side cases of issues 23 and 28: PASS needs power (c22), a trackerless game keeps its FAIL,
shoe-log tokens (c21), the GSR-equivalent figure withheld when GSR is rejected, and the pickup side
of a dealt-only log fitted or swept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rngcert.battery.shuffle import decide_shuffle
from rngcert.collect.shoelog import read_shoe_log, write_shoe_log
from rngcert.equipment.procedure import load_procedure
from rngcert.pipeline.certify_shuffle import certify_log
from rngcert.simulate.procedure import simulate_log
from rngcert.stats.result import NotApplicable, Requirement, TestResult


def _dealt_log(path, proc, shoes, seed, *, tables=1):
    seq = simulate_log(proc, shoes, seed, tables=tables)
    write_shoe_log(path, seq.after[0], table="T1", lengths=seq.n_dealt[0], serial=False)
    return seq


# ----------------------------------------------------------------------------- c22: PASS needs power
def _zone(se, edge=-0.005):
    return TestResult("tracker_edge:blackjack_zone", Requirement.UNPREDICTABILITY, edge, None, 0.7, 20, "asymptotic",
                      {"edge": edge, "se": se, "ci95": [edge - 1.96 * se, edge + 1.96 * se], "threshold": 0.0})


def test_c22_power_gate_turns_an_unpowered_pass_into_inconclusive():
    from rngcert.pipeline.shoe_power import power_gate

    out = decide_shuffle([_stat("rising_sequences", 0.4), _stat("adjacent_pairs", 0.6), _zone(0.053)], alpha=0.01, standard="edge")
    assert out.verdict == "PASS"
    out.power = {"level": 0.001}
    g = power_gate(out, n_shoes=20, game="blackjack", min_edge=0.0068, power=0.9, threshold=0.0, basis="house edge")
    z = 3.090232 + 1.281552
    assert out.verdict == "INCONCLUSIVE" and g["status"] == "underpowered"
    assert g["detectable"][0]["detectable_edge"] == pytest.approx(z * 0.053, rel=1e-5)
    assert g["shoes_needed"] == int(np.ceil(20 * (z * 0.053 / 0.0068) ** 2))
    assert g["not_excluded"] == pytest.approx(-0.005 + 1.96 * 0.053)
    # enough shoes (a standard error small enough): PASS stands; FAIL and SUSPECT are never touched
    out = decide_shuffle([_stat("rising_sequences", 0.4), _stat("adjacent_pairs", 0.6), _zone(0.0012)], alpha=0.01, standard="edge")
    out.power = {"level": 0.001}
    assert power_gate(out, n_shoes=20000, game="blackjack", min_edge=0.0068, power=0.9, threshold=0.0, basis="")["status"] == "powered"
    assert out.verdict == "PASS"
    out = decide_shuffle([_stat("rising_sequences", 1e-9), _stat("adjacent_pairs", 0.6), _zone(0.053)], alpha=0.01, standard="edge")
    out.power = {"level": 0.001}
    power_gate(out, n_shoes=20, game="blackjack", min_edge=0.0068, power=0.9, threshold=0.0, basis="")
    assert out.verdict == "SUSPECT"
    # no game: nothing to gate
    assert power_gate(out, n_shoes=20, game=None, min_edge=None, power=0.9, threshold=0.0, basis="no game")["status"] == "not gated"


@pytest.mark.slow
def test_c22_thin_shoe_log_is_inconclusive_with_the_shoes_needed(tmp_path):
    """c22: 20 dealt-only shoes of blackjack-004 PASSed while the trackers could see only +23%.
    Now: INCONCLUSIVE, naming the minimum edge (the house edge), what is not excluded and the shoes needed."""
    proc = load_procedure("blackjack-004").with_decks(6)
    f = tmp_path / "thin.csv"
    _dealt_log(f, proc, 21, 12)
    log = read_shoe_log([f], decks=6)
    cert = certify_log(log, source=str(f), decks=6, game="blackjack", proc=proc, seed=1, n_resamples=199, figures=False, fit=False)
    gate = cert.report["power_gate"]
    assert cert.verdict == "INCONCLUSIVE", cert.report["tables"][0]["battery"]["reasons"]
    assert gate["status"] == "underpowered" and gate["power"] == 0.9
    he = cert.report["house_edge"]["basic_strategy"]
    assert gate["min_edge"] == pytest.approx(he) and 0.003 < he < 0.01  # default: the table's house edge
    assert gate["shoes_needed"] > 1000 and gate["not_excluded"] > he
    assert f"about {gate['shoes_needed']:,} needed" in cert.report["tables"][0]["battery"]["reasons"][0]


@pytest.mark.slow
def test_c22_script_exits_inconclusive(tmp_path, shared):
    """The case script itself: exit 11 (INCONCLUSIVE), never 0."""
    CASES = Path(shared) / "cases"
    if not (CASES / "c22-thin-shoe-log.sh").exists() or shutil.which("bash") is None:
        pytest.skip("case script not available")
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "HOME": str(tmp_path)}
    res = subprocess.run(["bash", str(CASES / "c22-thin-shoe-log.sh")], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert "exit 11" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
    assert "too few shoes" in res.stdout and "needed" in res.stdout


# ----------------------------------------------------------------------------- trackerless game keeps FAIL
def _stat(name, p):
    return TestResult(name, Requirement.INDEPENDENCE, 1.0, None, p, 100, "test", {})


def test_a_game_without_a_tracker_keeps_its_fail():
    results = [_stat("rising_sequences", 1e-12), _stat("adjacent_pairs", 0.5),
               NotApplicable("tracker_edge:blackjack_zone", Requirement.UNPREDICTABILITY, 100, "the tracker never found a bet worth placing")]
    out = decide_shuffle(results, alpha=0.01, standard="edge")
    assert out.verdict == "FAIL" and "no tracker measured the player's edge" in out.reasons[0]
    assert "no tracker beats the threshold" not in " ".join(out.reasons)
    out = decide_shuffle(results[:2], alpha=0.01, standard="edge")  # no tracker at all (game none)
    assert out.verdict == "FAIL"
    # a tracker that bet and did not beat the threshold measured the edge: the rejection is a finding
    edge = TestResult("tracker_edge:blackjack_zone", Requirement.UNPREDICTABILITY, -0.01, None, 0.9, 100, "asymptotic",
                      {"edge": -0.01, "se": 0.01, "ci95": [-0.03, 0.01], "threshold": 0.0})
    out = decide_shuffle(results[:2] + [edge], alpha=0.01, standard="edge")
    assert out.verdict == "SUSPECT"


def test_a_trackerless_log_under_the_edge_standard_fails(tmp_path):
    from rngcert.simulate import shufflers as S

    new = np.tile(np.arange(52, dtype=np.int16), (80, 1))
    sat = S.sattolo(new, np.random.Generator(np.random.PCG64(8)))
    f = tmp_path / "sat.csv"
    write_shoe_log(f, sat, table="G1", serial=False)
    log = read_shoe_log([f], decks=1)
    cert = certify_log(log, source=str(f), decks=1, game=None, before_mode="new-deck", seed=1, n_resamples=199, figures=False,
                       standard="edge")
    assert cert.verdict == "FAIL", cert.report["tables"][0]["battery"]["reasons"]


# ----------------------------------------------------------------------------- c21: shoe-log tokens
def _c21(tmp_path, shared):
    gen = Path(shared) / "cases" / "c21-jokers.py"
    if not gen.exists():
        pytest.skip("c21 generator not available")
    subprocess.run([sys.executable, str(gen)], cwd=tmp_path, check=True, timeout=60)
    return tmp_path / "c21-jokers.csv"


def test_c21_jokers_rejected_by_name_and_the_shoes_certified_without_them(tmp_path, shared, cli):
    f = _c21(tmp_path, shared)
    log = read_shoe_log([f], decks=1)
    assert log.n_shoes == 20 and not log.problems and log.lengths.tolist() == [52] * 20
    assert len(log.rejected) == 20 and log.sources[0]["non_card_rows"] == 20
    r = log.rejected[0]
    assert (r.file, r.line, r.column, r.text) == (str(f), 28, "card", "JK") and "joker" in r.reason and "'JK'" in r.reason
    # the card after the joker moved up one place: shoe 1 is the generator's permutation of a new deck
    rng = np.random.default_rng(21)
    assert log.dealt[0, :52].tolist() == rng.permutation(52).tolist()  # codes are faces 0..51 in the generator's deck order
    res = cli("shuffle", "certify", f, "--decks", 1, "--before", "new-deck", "--seed", 1, "--no-plots", "--resamples", 199,
              "--out", tmp_path / "r")
    assert res.exit_code in (0, 10, 11), res.output[-1500:]
    rej = next((tmp_path / "r").glob("*/rejects.csv")).read_text(encoding="utf-8").splitlines()
    assert len(rej) == 21 and rej[1].startswith(f"{f},28,card,") and rej[1].endswith(",JK")
    assert "20 joker or cutting-card row(s) left out, their shoes kept" in res.output


def test_c21_suit_symbols_ten_cut_card_and_reasons_for_lost_shoes(tmp_path):
    rng = np.random.default_rng(3)
    sym = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    rows = ["shoe_id,position,card"]
    for shoe in (1, 2, 3):
        order = rng.permutation(52)
        pos = 1
        for k, c in enumerate(order):
            rank, suit = "A23456789TJQK"[c % 13], "SHDC"[c // 13]
            if shoe == 2 and k == 10:
                rows.append(f"{shoe},{pos},Cut Card")  # the cutting card logged mid-shoe
                pos += 1
            tok = ("10" if rank == "T" else rank) + (sym[suit] + ("\ufe0f" if k % 2 else "") if shoe != 3 else suit)
            if shoe == 3 and k == 5:
                tok = "ZZ"  # a token that is nothing: the shoe is lost, with the reason
            rows.append(f"{shoe},{pos},{tok}")
            pos += 1
    f = tmp_path / "sym.csv"
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    log = read_shoe_log([f], decks=1)
    assert [m["shoe"] for m in log.meta] == ["1", "2"] and log.lengths.tolist() == [52, 52]
    assert [r.text for r in log.rejected] == ["Cut Card", "ZZ"] and "cutting card" in log.rejected[0].reason
    assert {p.shoe for p in log.problems} == {"3"}
    assert "column card, token 'ZZ': unknown card token" in log.problems[0].reason


# ----------------------------------------------------------------------------- GSR-equivalent withheld
def test_gsr_equivalent_is_withheld_when_the_drop_law_rejects_gsr():
    from rngcert.simulate.shufflers import riffle
    from rngcert.stats.shuffle import card_permutation, gsr_equivalent_riffles

    rng = np.random.default_rng(1)
    ident = np.tile(np.arange(52), (200, 1))
    # 7 perfectly alternating riffles: 128 possible orders, a fit of a = 2^7, yet no GSR riffles
    perm, _ = card_permutation(ident, riffle(ident, rng, switch=1.0, times=7))
    g = gsr_equivalent_riffles(perm)
    assert g["riffles"] is None and g["riffles_if_gsr"] == pytest.approx(7.0, abs=0.2)
    assert g["gsr_check"]["repeated_pairs"] > 0 and "same order" in g["withheld"]
    # clumpy drops (switch 0.3): the rising sequences do not follow any a-shuffle's law
    perm, _ = card_permutation(ident, riffle(ident, rng, switch=0.3, times=4))
    g = gsr_equivalent_riffles(perm)
    assert g["riffles"] is None and g["gsr_check"]["p_rising"] < 1e-6 and "rising sequences" in g["withheld"]
    # GSR riffles keep their figure
    perm, _ = card_permutation(ident, riffle(ident, rng, switch=0.5, times=7))
    g = gsr_equivalent_riffles(perm)
    assert g["riffles"] == pytest.approx(7.0, abs=0.5) and "withheld" not in g
    # a declared or recorded drop law that is not GSR withholds it whatever the shoes show
    g = gsr_equivalent_riffles(perm, drop_law="the procedure's riffle drops cards with switch probability 1")
    assert g["riffles"] is None and "switch probability 1" in g["withheld"]


def test_gsr_law_check_rarely_withholds_gsr_riffles():
    from rngcert.simulate.shufflers import riffle
    from rngcert.stats.shuffle import card_permutation, gsr_equivalent_riffles

    rng = np.random.default_rng(5)
    ident = np.tile(np.arange(52), (100, 1))
    withheld = 0
    for k in range(60):
        perm, _ = card_permutation(ident, riffle(ident, rng, switch=0.5, times=1 + k % 7))
        withheld += gsr_equivalent_riffles(perm)["riffles"] is None
    assert withheld <= 3  # level 0.01 each; 60 runs


# ----------------------------------------------------------------------------- pickup side
def _pf_log(tmp_path, cli, shoes, dealers=None):
    """A player-first baccarat log written by the CLI simulator (a lab's copy of baccarat-004 whose
    dealer picks up player-first, 004 §2 rule 3.6.2)."""
    base = load_procedure("baccarat-004")
    toml = tmp_path / "pf.toml"
    toml.write_text(Path(base.path).read_text(encoding="utf-8").replace('pickup = "banker-first"', 'pickup = "player-first"')
                    .replace('id = "baccarat-004"', 'id = "baccarat-pf"'), encoding="utf-8")
    out = tmp_path / "pf.csv"
    args = ["shuffle", "simulate", toml, "--shoes", shoes, "--dealt-only", "--seed", 3, "--out", out]
    res = cli(*(args + (["--dealers", dealers] if dealers else [])))
    assert res.exit_code == 0, res.output
    return out


def test_player_first_log_rebuilds_fit_the_player_first_side(tmp_path, cli):
    """The fit itself (no battery): each side's rebuild of a player-first log, and the paired score."""
    from rngcert.pipeline.certify_shuffle import _log_pairs
    from rngcert.pipeline.pickup_side import fit_sides, kept_pairs

    f = _pf_log(tmp_path, cli, 8)
    log = read_shoe_log([f], decks=8)
    proc = load_procedure("baccarat-004")
    kept = {}
    for side in ("banker-first", "player-first"):
        prev: dict = {}
        idx, view, after = _log_pairs(log, decks=8, game="baccarat", proc=proc, before_mode="pickup", before_orders=None, rng=None,
                                      side_of={i: side for i in range(log.n_shoes)}, prev_out=prev)
        assert sorted(prev) == list(range(1, 8)) and all(prev[i] == i - 1 for i in prev)
        kept[side] = kept_pairs(view, after)
    assert (kept["player-first"] > kept["banker-first"]).all()
    g = fit_sides(kept, np.zeros(7, int), ["whole log"])["groups"][0]
    assert g["side"] == "player-first" and g["status"] == "measured" and "paired z" in g["evidence"]


@pytest.mark.slow
def test_player_first_log_is_read_with_the_right_side(tmp_path, cli):
    f = _pf_log(tmp_path, cli, 10)
    log = read_shoe_log([f], decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=load_procedure("baccarat-004"), seed=1, n_resamples=199,
                       figures=False, fit=False)
    (g,) = cert.report["pickup_side"]["groups"]
    assert g["group"] == "whole log" and g["side"] == "player-first" and g["status"] == "measured"
    assert cert.report["reconstruction"]["pickup_side"] == "player-first" or cert.report["pickup_side"]["runs"][0]["sides"] == ["player-first"]


@pytest.mark.slow
def test_player_first_log_per_dealer_is_read_with_the_right_side(tmp_path, cli):
    f = _pf_log(tmp_path, cli, 16, dealers=2)
    log = read_shoe_log([f], decks=8)
    proc = load_procedure("baccarat-004")  # declares banker-first: not taken on trust
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=proc, seed=1, n_resamples=199, figures=False, fit=False)
    ps = cert.report["pickup_side"]
    assert [g["group"] for g in ps["groups"]] == ["dealer D1", "dealer D2"]
    assert all(g["side"] == "player-first" and g["status"] == "measured" and g["z"] > 5 for g in ps["groups"])
    assert len(ps["runs"]) == 1 and "player-first measured" in ps["sentence"]
    par = {p["name"]: p for p in cert.report["parameters"]}
    assert par["deal.pickup"]["value"] == "player-first" and par["deal.pickup"]["status"] == "measured"
    # declared, the side is used as declared (and said so)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=proc, seed=1, n_resamples=199, figures=False, fit=False,
                       pickup="banker-first")
    assert cert.report["pickup_side"]["status"] == "declared"


def test_pickup_side_fit_is_paired_and_undecided_logs_take_the_worst_side():
    from rngcert.pipeline.pickup_side import fit_sides

    rng = np.random.default_rng(2)
    base = rng.poisson(130, 40)
    kept = {"banker-first": base + rng.integers(0, 3, 40), "player-first": base + rng.integers(0, 3, 40)}
    fit = fit_sides(kept, np.zeros(40, int), ["whole log"])
    (g,) = fit["groups"]
    assert g["side"] is None and g["status"] == "not identifiable from this log"
    assert len(fit["assignments"]) == 2 and {a[0] for a in fit["assignments"]} == {"banker-first", "player-first"}
    kept["player-first"] = kept["player-first"] + 40
    fit = fit_sides(kept, np.zeros(40, int), ["whole log"])
    assert fit["groups"][0]["side"] == "player-first" and fit["assignments"] == [{0: "player-first"}]


def test_a_uniformly_shuffled_log_cannot_tell_the_side_and_is_judged_on_both(tmp_path):
    proc = load_procedure("baccarat-004")
    raw = dict(proc.raw)
    raw.update({"id": "fy-table", "steps": [{"op": "fisher_yates"}], "kind": "machine",
                "parameters": [p for p in raw.get("parameters", []) if not p["name"].startswith("steps")]})
    from rngcert.equipment.procedure import parse_procedure

    fy = parse_procedure(raw, "<fy>")
    f = tmp_path / "fy.csv"
    _dealt_log(f, fy, 12, 4)
    log = read_shoe_log([f], decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=None, seed=1, n_resamples=199, figures=False)
    ps = cert.report["pickup_side"]
    assert ps["groups"][0]["side"] is None and len(ps["runs"]) == 2
    order = ["PASS", "SUSPECT", "INCONCLUSIVE", "FAIL"]
    assert cert.verdict == max((r["verdict"] for r in ps["runs"]), key=order.index)
    assert "worst" in ps["sentence"]
    from rngcert.report import schema

    assert schema.check_report(cert.report) == []  # pickup_side, power_gate, reconstruction documented


@pytest.mark.slow
def test_thin_log_wash_not_identifiable_trains_on_the_worst_case_and_sensitivity_runs(tmp_path):
    """c22's log with the wash fitted: both wash intervals span the grid, so neither is 'measured';
    the trackers train on the worst case; --sensitivity tabulates the verdict at the interval ends."""
    proc = load_procedure("blackjack-004").with_decks(6)
    f = tmp_path / "thin.csv"
    _dealt_log(f, proc, 21, 12)
    log = read_shoe_log([f], decks=6)
    cert = certify_log(log, source=str(f), decks=6, game="blackjack", proc=proc, seed=1, n_resamples=199, figures=False,
                       sensitivity=True)
    par = {p["name"]: p for p in cert.report["parameters"]}
    assert par["steps[1].intensity"]["status"] == "not identifiable" and par["steps[1].intensity"]["value"] == 0.02
    assert par["steps[1].clump"]["status"] == "not identifiable" and par["steps[1].clump"]["value"] == 12
    assert any("not identifiable from this log" in n for n in cert.report["notes"])
    rows = cert.report["log_sensitivity"]["rows"]
    assert len(rows) == 5 and rows[0]["wash"] == "fitted" and all(r["verdict"] in ("INCONCLUSIVE", "SUSPECT", "FAIL") for r in rows)


def test_blackjack_pickup_direction_is_a_side_too():
    """004 §3 rule 3.6: the direction over the players' hands is the dealer's for a shift; the two
    directions differ only in the order of the players' hands above the dealer's cards."""
    from rngcert.simulate.deal import deal_pickup_blackjack

    rng = np.random.default_rng(4)
    shoes = np.stack([rng.permutation(312) for _ in range(3)]).astype(np.int16)
    r = deal_pickup_blackjack(shoes, cut_position=104, players=3, pickup="right-to-left")
    lt = deal_pickup_blackjack(shoes, cut_position=104, players=3, pickup="left-to-right")
    assert np.array_equal(r.outcomes, lt.outcomes) and not np.array_equal(r.discards, lt.discards)
    assert np.array_equal(np.sort(r.discards, axis=1), np.sort(lt.discards, axis=1))
    with pytest.raises(Exception, match="pickup"):
        deal_pickup_blackjack(shoes, cut_position=104, pickup="sideways")


def test_c22_gated_reasons_do_not_give_the_pass_reason_as_a_why():
    from rngcert.pipeline.shoe_power import gated_reasons

    gate = "too few shoes (20; about 44,477 needed) to exclude the minimum tracker edge"
    out = gated_reasons(gate, ["no test rejects at family-wise level 0.01 (10 applicable tests)", gate])
    assert out == [gate, "the tests alone would PASS: no test rejects at family-wise level 0.01 (10 applicable tests)"]
    from rngcert.battery.plain import shoe_findings

    sec = {"table": "all shoes", "n": 20, "battery": {"verdict": "INCONCLUSIVE", "reasons": out, "tests": []}, "trackers": []}
    keys, _ = shoe_findings(sec)
    assert keys[0] == f"No verdict: {gate}." and keys[1].startswith("Would be PASS, but these data cannot carry a verdict: no test rejects")
