"""The rotor in the battery (issue 25 item 3): direction and speed columns read from CSV and JSON
Lines, the four rotor tests calibrated on fair simulated logs and their planted alternatives
detected, and the battery unchanged on logs without rotor columns."""

import json

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from scipy import stats

from rngcert.battery.findings import table_findings
from rngcert.battery.wheel import ROTOR_SPECS, WHEEL, WheelData
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.simulate.rotor import RotorBias, simulate_rotor_spins
from rngcert.simulate.wheel import write_spin_log
from rngcert.stats import rotor

EU = load_wheel("european")
SPACE = EU.position_space()
K = 37
REPS = 200


def _sim(n, seed, bias=RotorBias(), **kw):
    spins, speed, ball = simulate_rotor_spins(EU, n, Generator(PCG64(seed)), bias=bias, **kw)
    return spins.positions.astype(np.int64), spins.direction, speed, ball


def _write(path, n, seed, bias=RotorBias(), rotor_columns=True):
    spins, speed, ball = simulate_rotor_spins(EU, n, Generator(PCG64(seed)), bias=bias)
    if rotor_columns:
        spins.rotor_speed, spins.ball_direction = speed, ball
    write_spin_log(path, EU, spins)
    return path


# ----------------------------------------------------------------------------- reading
def test_rotor_columns_are_read_from_csv_and_jsonl_and_bad_cells_rejected(tmp_path):
    csv = tmp_path / "r.csv"
    csv.write_text("spin_id,direction,ball_direction,rotor_speed,result\n1,cw,ccw,16.2,5\n2,ccw,cw,,7\n3,cw,ccw,fast,8\n"
                   "4,ccw,cw,-1,0\n5,cw,sideways,17,1\n6,ccw,cw,17.5,2\n")
    log = read_spin_log(csv, EU)
    t = log.tables["r"]
    assert t.n == 3 and t.direction.tolist() == [0, 1, 1] and t.ball_direction.tolist() == [1, 0, 0]
    assert t.rotor_speed[0] == 16.2 and np.isnan(t.rotor_speed[1]) and t.rotor_speed[2] == 17.5
    rej = {(r.line, r.column.split(" ")[0], r.reason) for r in log.rejected}
    assert rej == {(4, "rotor_speed", "rotor_speed is not a non-negative number"), (5, "rotor_speed", "rotor_speed is not a non-negative number"),
                   (6, "ball_direction", "ball_direction must be cw or ccw")}
    jl = tmp_path / "r.jsonl"
    jl.write_text("\n".join(json.dumps(o) for o in [{"result": "5", "rotor_speed": 16.5, "direction": "cw", "ball_direction": "ccw"},
                                                      {"result": "6", "rotor_speed": None, "direction": "ccw", "ball_direction": "cw"}]) + "\n")
    tj = read_spin_log(jl, EU).tables["r"]
    assert tj.rotor_speed[0] == 16.5 and np.isnan(tj.rotor_speed[1]) and tj.ball_direction.tolist() == [1, 0]


def test_streamed_and_exact_paths_read_the_same_rotor_columns(tmp_path):
    p = _write(tmp_path / "s.csv", 500, 3)
    fast = read_spin_log(p, EU).tables["SIM-1"]
    text = p.read_text().splitlines()
    (tmp_path / "x.csv").write_text("\n".join(text + [text[-1]]) + "\n")  # a repeated row: the exact path reads it
    exact = read_spin_log(tmp_path / "x.csv", EU).tables["SIM-1"]
    assert np.array_equal(fast.outcomes, exact.outcomes)
    assert np.array_equal(fast.rotor_speed, exact.rotor_speed) and np.array_equal(fast.ball_direction, exact.ball_direction)
    _, _, speed, _ = _sim(500, 3)
    assert np.allclose(fast.rotor_speed, speed)


# ----------------------------------------------------------------------------- calibration
def _fair_pvalues(test, n, seed):
    out = []
    for r in range(REPS):  # loop over replicates (test harness)
        x, d, v, b = _sim(n, seed * 1000 + r)
        res = test(x, d, v, Generator(PCG64(r)))
        assert res.applicable, res
        out.append(res.pvalue)
    return np.array(out)


CALIBRATED = {
    "direction_homogeneity": (lambda x, d, v, g: rotor.direction_homogeneity(x, d, K), 1500),
    "direction_homogeneity_sparse_permutation": (lambda x, d, v, g: rotor.direction_homogeneity(x, d, K, n_resamples=199, rng=g), 120),
    "speed_independence": (lambda x, d, v, g: rotor.speed_independence(x, v, K), 1500),
    "speed_independence_sparse_permutation": (lambda x, d, v, g: rotor.speed_independence(x, v, K, n_resamples=199, rng=g), 100),
    "rotor_speed_trend": (lambda x, d, v, g: rotor.rotor_speed_trend(v), 1500),
}


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_fair_rotor_logs_give_uniform_pvalues(name):
    test, n = CALIBRATED[name]
    p = _fair_pvalues(test, n, seed=sorted(CALIBRATED).index(name) + 1)
    if "sparse" in name:
        res = test(*_sim(n, 5)[:3], Generator(PCG64(0)))
        assert res.method.startswith("permutation")
    assert stats.kstest(p, "uniform").pvalue > 0.001, name
    lo, hi = stats.binom.ppf([0.0005, 0.9995], REPS, 0.05)
    assert lo <= np.count_nonzero(p <= 0.05) <= hi


# ----------------------------------------------------------------------------- planted alternatives
def test_direction_dependent_bias_is_detected_by_the_direction_test_and_missed_when_pooled():
    x, d, v, b = _sim(20000, 11, RotorBias(direction=(3, 5, 1.3)))
    res = rotor.direction_homogeneity(x, d, K)
    assert res.pvalue < 1e-6 and res.details["outcome"] in range(3, 8)
    fair = rotor.direction_homogeneity(*_sim(20000, 11)[:2], K)
    assert fair.pvalue > 0.01
    pooled = WHEEL.run(WheelData(x.astype(np.int16), SPACE), entropy=1, n_resamples=199)  # the battery without rotor data
    assert pooled.verdict == "PASS"
    with_rotor = WHEEL.run(WheelData(x.astype(np.int16), SPACE, direction=d, rotor_speed=v, ball_direction=b), entropy=1, n_resamples=199)
    assert with_rotor.verdict == "FAIL" and with_rotor.rejected == ["direction_homogeneity"]


def test_speed_dependent_bias_is_detected():
    x, d, v, b = _sim(6000, 12, RotorBias(speed=(20, 5, 1.4)))
    res = rotor.speed_independence(x, v, K)
    assert res.pvalue < 1e-4
    assert rotor.direction_homogeneity(x, d, K).pvalue > 0.001  # the directions see the same law
    assert rotor.speed_independence(*_sim(6000, 12)[::2], K).pvalue > 0.01


def test_speed_drift_is_detected_and_reported_with_its_size():
    x, d, v, b = _sim(2000, 13, RotorBias(drift=-0.5))
    res = rotor.rotor_speed_trend(v)
    assert res.pvalue < 1e-4 and res.statistic < 0
    assert res.details["change"] == pytest.approx(-0.45, abs=0.15)
    assert rotor.rotor_speed_trend(_sim(2000, 13)[2]).pvalue > 0.01


def test_ball_spun_with_the_rotor_breaks_the_rule():
    """A rule check: the count of breaches and the first spins, and no p-value (DESIGN §4 forbids 0 and 1)."""
    x, d, v, b = _sim(3000, 14, RotorBias(same_direction=0.002))
    res = rotor.ball_against_wheel(d, b)
    k = int(np.count_nonzero(d == b))
    assert k > 0 and res.violations == k and res.broken and res.known == 3000
    assert res.first[0] == int(np.flatnonzero(d == b)[0]) and not hasattr(res, "pvalue")
    assert "3.6" in res.rule and "3.1.1" in res.rule
    ok = rotor.ball_against_wheel(*_sim(3000, 14)[1::2])
    assert ok.applicable and not ok.broken and ok.violations == 0 and ok.first == ()
    none = rotor.ball_against_wheel(np.full(5, -1), np.zeros(5, int))
    assert not none.applicable and "both" in none.reason


def test_speed_bins_keep_equal_speeds_together_and_constant_speed_is_not_applicable():
    x = np.arange(40) % K
    v = np.r_[np.full(30, 16.0), np.linspace(17, 18, 10)]
    res = rotor.speed_independence(x, v, K, n_resamples=99, rng=Generator(PCG64(1)))
    cls = np.asarray(res.details["speed_classes"])
    assert cls[0].tolist() == [16.0, 16.0]  # the 30 equal speeds are one class
    na = rotor.speed_independence(x, np.full(40, 16.0), K)
    assert not na.applicable and "the same" in na.reason
    assert not rotor.rotor_speed_trend(np.full(5, np.nan)).applicable
    assert not rotor.direction_homogeneity(x, np.zeros(40, np.int8), K).applicable


# ----------------------------------------------------------------------------- the battery
def test_rotor_tests_are_not_applicable_without_the_columns_and_change_nothing_else():
    x, d, v, b = _sim(3000, 15)
    base = WHEEL.run(WheelData(x.astype(np.int16), SPACE), entropy=3, n_resamples=199)
    na = {r.name: r.reason for r in base.results if not r.applicable}
    for s in ROTOR_SPECS:
        assert s.name in na and "column" in na[s.name]
    assert "no rotor_speed column" in na["speed_independence"]
    full = WHEEL.run(WheelData(x.astype(np.int16), SPACE, direction=d, rotor_speed=v, ball_direction=b), entropy=3, n_resamples=199)
    rot = {s.name for s in ROTOR_SPECS}
    assert all(r.applicable for r in full.results if r.name in rot - {"ball_against_wheel"})
    ball = next(r for r in full.results if r.name == "ball_against_wheel")  # a rule check: never a p-value
    assert not ball.applicable and "rule check, not a statistical test" in ball.reason and "all 3,000 spins" in ball.reason
    a = {r.name: r.pvalue for r in base.results if r.applicable}
    c = {r.name: r.pvalue for r in full.results if r.applicable and r.name not in rot}
    assert a == c  # each test has its own stream: the rotor tests change no other p-value


def test_certify_a_log_with_a_planted_direction_bias_fails_with_a_rotor_finding(tmp_path):
    p = _write(tmp_path / "dir.csv", 20000, 21, RotorBias(direction=(3, 5, 1.3)))
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    tab = cert.report["tables"][0]
    assert cert.verdict == "FAIL" and tab["battery"]["rejected_familywise"] == ["direction_homogeneity"]
    assert any("depend on the rotor's direction" in f and "inspect the wheel head" in f for f in tab["key_findings"])
    tests = {t["name"]: t for t in tab["battery"]["tests"]}
    assert tests["ball_against_wheel"].get("pvalue") is None and tests["speed_independence"]["applicable"]
    assert tab["procedure"][0]["violations"] == 0 and tab["procedure"][0]["known"] == 20000
    t = read_spin_log(p, EU).tables["SIM-1"]
    old = WHEEL.without(*(s.name for s in ROTOR_SPECS)).run(WheelData(t.outcomes, SPACE, direction=t.direction), entropy=1, n_resamples=199)
    assert old.verdict == "PASS"  # the battery before issue 25 misses it


def test_findings_sentence_of_each_rotor_test():
    x, d, v, b = _sim(3000, 16, RotorBias(drift=-2.0))
    out = WHEEL.run(WheelData(x.astype(np.int16), SPACE, direction=d, rotor_speed=v, ball_direction=b), entropy=3, n_resamples=199)
    bd = out.to_dict()
    keys, _ = table_findings(bd, n=3000, labels=list(SPACE.labels), power={})
    assert any("rotor speed drifted from 16.9" in k or "rotor speed drifted from 17" in k for k in keys)


def test_simulate_wheel_writes_rotor_columns_and_plants_a_direction_bias(tmp_path, cli):


    out = tmp_path / "rot.csv"
    r = cli("simulate", "wheel", "--spins", "20000", "--seed", "4", "--direction-bias", "32:5:1.3", "--out", out)
    assert r.exit_code == 0, r.output
    t = read_spin_log(out, EU).tables["SIM-1"]
    assert t.n == 20000 and t.rotor_speed is not None and np.all(t.ball_direction == 1 - t.direction)
    assert t.direction[:4].tolist() == [0, 1, 0, 1]  # the rotor alternates every game
    res = rotor.direction_homogeneity(t.outcomes.astype(np.int64), t.direction, K)
    assert res.pvalue < 1e-6 and SPACE.labels[res.details["outcome"]] in ("32", "15", "19", "4", "21")
    bad = cli("simulate", "wheel", "--spins", "100", "--rotor", "--pocket-bias", "17:1.2", "--out", tmp_path / "x.csv")
    assert bad.exit_code == 2 and "the rotor simulation takes only" in bad.output


def test_ball_with_the_rotor_is_a_procedure_finding_that_makes_the_verdict_inconclusive(tmp_path):
    """Spins where the ball went with the rotor are not valid spins (004 §4 rule 3.1.1): the verdict is
    INCONCLUSIVE by the stated policy, with the count, the first spins and the rules, and no p-value is
    made up for the check (it was 1.0 or P_FLOOR before)."""
    from rngcert.battery import POLICY_TEXT

    p = _write(tmp_path / "same.csv", 8000, 22, RotorBias(same_direction=0.002))
    t = read_spin_log(p, EU).tables["SIM-1"]
    k = int(np.count_nonzero(t.direction == t.ball_direction))
    assert k > 0
    cert = certify_log([p], EU, seed=1, n_resamples=199, figures=False)
    tab = cert.report["tables"][0]
    assert cert.verdict == "INCONCLUSIVE" and tab["battery"]["data_inconclusive"]
    why = [r for r in tab["battery"]["reasons"] if r.startswith("procedure:")]
    assert len(why) == 1 and f"in {k:,} of 8,000 spins" in why[0] and "3.6" in why[0] and "3.1.1" in why[0]
    first = int(np.flatnonzero(t.direction == t.ball_direction)[0]) + 1
    assert tab["procedure"][0]["first_spins"][0] == first and f"spin no. {first:,}" in why[0]
    assert tab["key_findings"][0].startswith("No verdict: procedure: the ball was spun the same way as the rotor")
    tests = {x["name"]: x for x in tab["battery"]["tests"]}
    assert not tests["ball_against_wheel"]["applicable"] and tests["ball_against_wheel"].get("pvalue") is None
    assert "ball_against_wheel" not in tab["battery"]["rejected_familywise"]
    assert "procedure finding" in POLICY_TEXT["INCONCLUSIVE"]
