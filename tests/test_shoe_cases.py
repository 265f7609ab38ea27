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

CASES = Path("/work/shared/cases")


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
def test_c22_script_exits_inconclusive(tmp_path):
    """The case script itself: exit 11 (INCONCLUSIVE), never 0."""
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
