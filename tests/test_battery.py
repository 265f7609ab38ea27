"""Battery runner: verdict policy of DESIGN §4, Holm, seeds, errors kept, power statement."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from rngcert.battery.core import Spec, grade, run_battery, worst
from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.equipment.wheel import load_wheel
from rngcert.stats.power import chisquare_min_detectable_pocket_bias, chisquare_spins_needed, power_statement
from rngcert.stats.result import NotApplicable, Requirement, TestResult

U = Requirement.UNIFORMITY


def fixed(name, p):
    return Spec(name, lambda d, ctx: TestResult(name, U, 1.0, 1, p, 100, "asymptotic"), U)


def test_pass_suspect_fail():
    assert run_battery([fixed("a", 0.5), fixed("b", 0.2)], entropy=1).verdict == "PASS"
    # raw p below alpha but not after Holm (2 tests: first threshold 0.005)
    out = run_battery([fixed("a", 0.008), fixed("b", 0.2)], entropy=1)
    assert out.verdict == "SUSPECT" and out.raw_below_alpha == ["a"] and out.rejected == []
    out = run_battery([fixed("a", 0.004), fixed("b", 0.2)], entropy=1)
    assert out.verdict == "FAIL" and out.rejected == ["a"]
    assert out.adjusted["a"] == pytest.approx(0.008)


def test_inconclusive_from_power_and_from_errors():
    out = run_battery([fixed("a", 0.5)], entropy=1, inconclusive=["too few spins"])
    assert out.verdict == "INCONCLUSIVE" and "too few spins" in out.reasons

    def boom(d, ctx):
        raise RuntimeError("kaput")

    out = run_battery([fixed("a", 0.5), Spec("b", boom, U)], entropy=1)
    assert out.verdict == "INCONCLUSIVE"
    assert out.errors == ["b: RuntimeError: kaput"]
    assert any(not r.applicable and "kaput" in r.reason for r in out.results)
    # a FAIL still wins over an error
    out = run_battery([fixed("a", 1e-9), Spec("b", boom, U)], entropy=1)
    assert out.verdict == "FAIL"


def test_not_applicable_tests_excluded_from_holm():
    na = Spec("n", lambda d, ctx: NotApplicable("n", U, 3, "too few"), U)
    out = run_battery([fixed("a", 0.004), fixed("b", 0.3), na], entropy=1)
    assert set(out.adjusted) == {"a", "b"} and out.verdict == "FAIL"
    only_na = run_battery([na], entropy=1)
    assert only_na.verdict == "INCONCLUSIVE"


def test_streams_are_per_test_and_reproducible():
    draw = lambda name: Spec(name, lambda d, ctx: TestResult(name, U, ctx.rng.random(), None, 0.5, 1, "x"), U)  # noqa: E731
    a = run_battery([draw("t1"), draw("t2")], entropy=99)
    b = run_battery([draw("t2")], entropy=99)  # removing t1 does not change t2's stream
    assert a.results[1].statistic == b.results[0].statistic
    c = run_battery([draw("t1")], entropy=99, group=1)
    assert c.results[0].statistic != a.results[0].statistic


def test_worst_and_grade():
    assert worst(["PASS", "SUSPECT", "FAIL", "INCONCLUSIVE"]) == "FAIL"
    assert worst(["PASS", "INCONCLUSIVE"]) == "INCONCLUSIVE"
    assert grade(0.5, 20) == "normal"
    assert grade(1e-9, 20) == "FAIL (overwhelming)"


def test_power_noncentral_chisquare_against_simulation():
    # closed form: the minimal detectable bias is where simulated power ~ 0.9
    k, n, alpha = 37, 20000, 0.01
    d = chisquare_min_detectable_pocket_bias(n, k, alpha, 0.9)
    assert 0.2 < d < 0.4
    rng = np.random.default_rng(3)
    p = np.full(k, 1.0 / (k + d))
    p[0] = (1 + d) / (k + d)
    counts = rng.multinomial(n, p, size=2000)
    x2 = ((counts - n / k) ** 2 / (n / k)).sum(axis=1)
    sim_power = np.mean(x2 > sps.chi2.isf(alpha, k - 1))
    assert abs(sim_power - 0.9) < 0.03
    assert chisquare_spins_needed(d, k, alpha, 0.9) == pytest.approx(n, rel=0.01)


def test_power_statement_inconclusive():
    st, reasons = power_statement(500, 37, 0.01, 0.9, required_bias=0.2)
    assert reasons and "needs" in reasons[0] and st["spins_needed_for_required_bias"] > 500
    st, reasons = power_statement(10**6, 37, 0.01, 0.9, required_bias=0.2)
    assert reasons == []


def test_wheel_specs_cover_the_three_requirements():
    sp = load_wheel("european").position_space()
    x = np.random.default_rng(0).integers(0, 37, 3000)
    specs = WHEEL.members(WheelData(x, sp))
    reqs = {s.requirement for s in specs}
    assert reqs == set(Requirement)
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    for want in ("pocket_chisquare", "sector_scan", "first_harmonic", "runs_colour", "longest_colour_run", "serial_correlation", "wheel_distance", "serial_pair", "gap_test", "dealer_signature", "outside_dozen"):
        assert want in names
    out = WHEEL.run(WheelData(x, sp), entropy=5, n_resamples=199)
    assert all(r.requirement == s.requirement for r, s in zip(out.results, specs))


def test_symbol_level_battery_has_no_geometry():
    sp = load_wheel("crazy-time").symbol_space()
    x = np.random.default_rng(0).choice(sp.m, size=3000, p=sp.probs)
    names = [s.name for s in WHEEL.members(WheelData(x, sp))]
    assert "sector_scan" not in names and "wheel_distance" not in names
    assert "runs_top_symbol" in names and "pocket_chisquare" in names


def test_threaded_evaluate_gives_the_serial_results_in_spec_order():
    """A single table's battery runs its tests on several threads (Battery.evaluate(threads=2)):
    each test draws from its own stream and results are collected in the specs' order, so every
    result, error and spawn key is that of the serial run, including a test that raises."""
    from dataclasses import replace

    from rngcert.pipeline.parallel import Plan
    from rngcert.simulate.wheel import WheelBias, simulate_spins

    eu = load_wheel("european")
    sim = simulate_spins(eu, 20_000, np.random.default_rng(3), bias=WheelBias(sectors=((4, 5, 1.3),)), dealers=3, with_release=True)
    data = WheelData(sim.positions, eu.position_space(), release=sim.release, dealer=sim.dealer, dealer_labels=["D1", "D2", "D3"],
                     direction=sim.direction)

    def boom(d, ctx):
        raise RuntimeError("kaput")

    battery = replace(WHEEL, specs=WHEEL.specs[:5] + (Spec("boom", boom, U),) + WHEEL.specs[5:])
    serial = battery.evaluate(data, entropy=11, group="table:T1", n_resamples=199)
    threaded = battery.evaluate(data, entropy=11, group="table:T1", n_resamples=199, threads=2)
    assert [r.to_dict() for r in serial[0]] == [r.to_dict() for r in threaded[0]]
    assert serial[1:] == threaded[1:] and serial[1] == ["boom: RuntimeError: kaput"]
    assert [r.name for r in serial[0]][5] == "boom" and any(r.applicable and r.pvalue < 0.01 for r in serial[0])
    # who gets threads: one item of a non-serial plan; never a serial plan or a cluster's items
    assert Plan(workers=1).item_threads(1) == 1 and Plan().item_threads(3) == 1 and Plan(scheduler="tcp://h:1").item_threads(1) == 1
    assert 1 <= Plan().item_threads(1) <= 4 and Plan(workers=2).item_threads(1) <= 2


def test_certify_gives_threads_to_one_table_below_the_size_limit(monkeypatch, tmp_path):
    """certify_spins passes Plan.item_threads to the battery of a single table, and one thread
    above THREADED_MAX_SPINS (the tests' temporaries at once would not fit the memory target)."""
    from rngcert.battery.core import Battery
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.pipeline import certify_wheel
    from rngcert.pipeline.parallel import Plan
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    eu = load_wheel("european")
    path = tmp_path / "t.csv"
    sim = simulate_spins(eu, 3000, np.random.default_rng(1))
    sim.positions[2000:2100] = sim.positions[0:100]  # a copied block: the duplicated-block scan runs beside the battery
    with open(path, "wb") as fh:
        write_spin_log(fh, eu, sim, table="T1")
    log = read_spin_log([path], eu)
    seen = []
    real = Battery.evaluate

    def spy(self, data, **kw):
        seen.append(kw.get("threads", 1))
        return real(self, data, **kw)

    monkeypatch.setattr(Battery, "evaluate", spy)
    a = certify_wheel.certify_spins(log, seed=3, n_resamples=99, figures=False, plan=Plan())
    monkeypatch.setattr(certify_wheel, "THREADED_MAX_SPINS", 2999)
    b = certify_wheel.certify_spins(log, seed=3, n_resamples=99, figures=False, plan=Plan())
    c = certify_wheel.certify_spins(log, seed=3, n_resamples=99, figures=False, plan=Plan(workers=1))
    assert seen == [Plan().item_threads(1), 1, 1]
    assert a.report["tables"] == b.report["tables"] == c.report["tables"]
    assert [f["name"] for f in a.report["tables"][0]["integrity"]["findings"]] == ["duplicated_blocks"]
