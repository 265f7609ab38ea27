"""Review of the named certification standards (issue 23), as a lab's hostile expert would try them:
a lenient standard must not turn an underpowered sample into a PASS, the standard's declared power
applies to wheels as to shoes, the report carries the standard's hash, a lab's file cannot pass for a
packaged standard, and a clause that can never check anything is refused when the file is read."""

from __future__ import annotations

import hashlib

import pytest

from rngcert.battery.standard import StandardError, evaluate, load_standard, parse_standard
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.pipeline.standards import apply_standard
from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

EU = load_wheel("european")

HEAD = '''id = "lab"
title = "a lab's standard"
reference = "lab manual 1.2"
summary = "s"
rule = "r"
'''


def clause(tests='["pocket_chisquare"]', applies='["wheel"]', correction='"per-test"', extra="", level="0.01"):
    return (f'[[clause]]\nid = "C1"\ntitle = "t"\napplies_to = {applies}\ntests = {tests}\nlevel = {level}\n'
            f'correction = {correction}\nrejection = "FAIL"\nreference = "x"\n{extra}\n')


@pytest.fixture(scope="module")
def thin_signature_log(tmp_path_factory):
    """3,000 spins (the +50% single-pocket effect needs about 5,700): a dealer signature the battery FAILs,
    which none of West Virginia's four named tests sees."""
    sim = simulate_spins(EU, 3000, stream(11, "standard-review"), bias=WheelBias(signature=(0, 3, 3.0)), dealers=2, with_release=True)
    p = tmp_path_factory.mktemp("review") / "thin-signature.csv"
    write_spin_log(p, EU, sim, table="T1")
    return p


# ---------------------------------------------------------------------- PASS needs power under every standard
@pytest.mark.parametrize("name", ["west-virginia-29-22B-909", "new-mexico-15.1.7.13"])
def test_a_lenient_standard_does_not_pass_an_underpowered_sample(thin_signature_log, name):
    rep = certify_log([thin_signature_log], EU, seed=1, n_resamples=199, figures=False, standard=name).report
    b = rep["tables"][0]["battery"]
    assert b["power"]["spins_needed_for_required_bias"] > 3000
    # the battery's own rule FAILs; the standard's clauses are met; the sample cannot detect +50%: no PASS
    assert rep["verdict"] == "INCONCLUSIVE", (rep["verdict"], b["reasons"])
    assert any("spins" in r and "+50%" in r for r in b["reasons"]), b["reasons"]
    from rngcert.pipeline.standards import terminal_lines

    line = terminal_lines(rep)[0]
    assert "battery INCONCLUSIVE" not in line and "no PASS without the power" in line  # the battery said FAIL


def test_evaluate_gates_a_pass_on_the_declared_power():
    std = load_standard("west-virginia-29-22B-909")
    battery = {"verdict": "FAIL", "tests": [{"name": "pocket_chisquare", "pvalue": 0.4, "applicable": True}]}
    assert evaluate(std, "wheel", battery, alpha=0.01)["verdict"] == "PASS"
    ev = evaluate(std, "wheel", battery, alpha=0.01, underpowered=["3,000 spins cannot carry a verdict on +50%"])
    assert ev["verdict"] == "INCONCLUSIVE" and "3,000 spins" in ev["reasons"][0]
    # a FAIL clause not met stays FAIL whatever the power
    battery["tests"][0]["pvalue"] = 0.001
    assert evaluate(std, "wheel", battery, alpha=0.01, underpowered=["x"])["verdict"] == "FAIL"


def test_a_shoe_table_underpowered_under_a_lenient_standard_is_inconclusive():
    std = load_standard("maryland-comar-36.05.02.17F")
    report = {"policy": {"standard": "uniform"}, "tables": [{
        "table": "log", "n": 20, "trackers": [],
        "power_gate": {"status": "underpowered", "sentence": "too few shoes (20; about 44,477 needed)"},
        "battery": {"verdict": "FAIL", "alpha": 0.01, "tests": [
            {"name": "position_chisquare", "pvalue": 0.5, "applicable": True},
            {"name": "rising_sequences", "pvalue": 1e-9, "applicable": True}]}}]}
    apply_standard(report, std, kind="shoe", alpha=0.01)
    assert report["verdict"] == "INCONCLUSIVE"
    assert "44,477" in " ".join(report["tables"][0]["battery"]["reasons"])


# ---------------------------------------------------------------------- the declared power, for wheels too
def test_the_standards_declared_power_applies_to_a_wheel(tmp_path, thin_signature_log):
    f = tmp_path / "lab.toml"
    f.write_text(HEAD + "[minimum_effect]\npower = 0.99\nwheel_single_pocket_bias = 0.5\n" + clause(), encoding="utf-8")
    rep = certify_log([thin_signature_log], EU, seed=1, n_resamples=199, figures=False, standard=str(f), power=None).report
    assert rep["tables"][0]["battery"]["power"]["power"] == 0.99
    assert rep["rerun"]["power"] is None  # a rerun takes the standard's again
    # a lab's file is named with its hash, in the JSON and on the terminal
    from rngcert.pipeline.standards import terminal_lines

    assert len(rep["standard"]["sha256"]) == 64 and rep["standard"]["sha256"][:16] in terminal_lines(rep)[0]


def test_a_clause_own_power_is_the_strictest():
    std = parse_standard(HEAD + "[minimum_effect]\npower = 0.9\n" + clause(extra="[clause.minimum_effect]\npower = 0.95"), "lab.toml")
    assert std.power("wheel") == 0.95
    assert std.power("shoe") == 0.9  # no clause for shoes: the standard's own


# ---------------------------------------------------------------------- which standard, exactly
def test_the_report_carries_the_standards_sha256(tmp_path):
    text = HEAD + clause()
    f = tmp_path / "lab.toml"
    f.write_text(text, encoding="utf-8")
    std = load_standard(str(f))
    assert std.to_dict()["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert len(load_standard("rngcert-default").to_dict()["sha256"]) == 64


def test_a_lab_file_cannot_take_a_packaged_standards_id(tmp_path):
    f = tmp_path / "lab.toml"
    f.write_text(HEAD.replace('id = "lab"', 'id = "rngcert-default"') + clause(), encoding="utf-8")
    with pytest.raises(StandardError, match=r"lab\.toml: key 'id': .*packaged"):
        load_standard(str(f))


def test_a_packaged_file_named_by_its_path_is_the_packaged_standard():
    from importlib import resources

    p = resources.files("rngcert.battery") / "standards" / "edge.toml"
    by_path, by_name = load_standard(str(p)), load_standard("edge")
    assert by_path.packaged and by_path.to_dict()["sha256"] == by_name.to_dict()["sha256"]


# ---------------------------------------------------------------------- clauses that can never check anything
@pytest.mark.parametrize("body,key,why", [
    (clause(correction='"second-level"'), "clause[0].correction", "bits"),
    (clause(tests='["position_chisquare"]'), "clause[0].tests", "wheel"),
    (clause(tests='["!pocket_chisquare"]'), "clause[0].tests", "selects no test"),
    (clause(extra='family = "battery"'), "clause[0].family", "family-wise"),
    ("[minimum_effect]\nwheel_single_pocket_bias = inf\n" + clause(), "minimum_effect.wheel_single_pocket_bias", "above 0"),
])
def test_a_clause_that_checks_nothing_is_refused(body, key, why):
    with pytest.raises(StandardError) as e:
        parse_standard(HEAD + body, "lab.toml")
    assert f"lab.toml: key '{key}'" in str(e.value) and why in str(e.value)


def test_a_second_level_clause_is_never_met_on_a_battery_without_one():
    std = load_standard("uniformity")
    battery = {"verdict": "PASS", "tests": [{"name": "pocket_chisquare", "pvalue": 0.4, "applicable": True}]}
    rows = {r["id"]: r for r in evaluate(std, "bits", battery, alpha=0.01)["clauses"]}
    assert rows["U3"]["result"] == "not applicable"


def test_a_dealers_share_of_a_shoe_log_is_not_gated_as_the_pipeline_leaves_it():
    from rngcert.pipeline.standards import underpowered

    gate = {"status": "underpowered", "sentence": "too few shoes"}
    assert underpowered({"kind": "log", "power_gate": gate}) == ["too few shoes"]
    assert underpowered({"kind": "dealer", "power_gate": gate}) == []


# ---------------------------------------------------------------------- error over a group of tables, per standard
ROULETTE_TESTS = ["pocket_chisquare", "max_count", "outside_colour", "sector_scan", "runs_colour", "runs_parity", "runs_low_high",
                  "serial_pair", "serial_correlation", "dealer_signature"]


def test_a_fair_tables_false_fail_bound_follows_the_standard():
    assert load_standard("rngcert-default").false_fail_bound("wheel", 0.01, ROULETTE_TESTS) == pytest.approx(0.01)
    assert load_standard("uniformity").false_fail_bound("wheel", 0.01, ROULETTE_TESTS) == pytest.approx(0.01)
    # four named tests each at 99%: pocket_chisquare, three runs tests, serial_pair, serial_correlation
    assert load_standard("west-virginia-29-22B-909").false_fail_bound("wheel", 0.01, ROULETTE_TESTS) == pytest.approx(0.06)


def test_the_group_statement_states_the_standards_false_fails():
    from rngcert.pipeline.group_audit import group_statement

    reps = [{"tables": [{"table": f"T{i}", "min_holm": 0.5, "battery": {"verdict": "PASS"}}], "audit": {"earlier_audits": []}}
            for i in range(200)]
    g = group_statement(reps, alpha=0.01, standard_id="west-virginia-29-22B-909", per_table=0.06)
    assert g["expected"]["per_run"] == pytest.approx(12.0) and g["expected"]["per_year"] == pytest.approx(144.0)
    assert "k × 0.06" in g["statement"] and "west-virginia-29-22B-909" in g["statement"]
    assert "(k × alpha)" in group_statement(reps, alpha=0.01)["statement"]


def test_verify_rerun_names_a_standard_file_edited_since_the_report():
    from rngcert.report.verify import compare_statistics

    rec = {"verdict": "PASS", "tables": [], "standard": {"id": "lab", "source": "lab.toml", "sha256": "a" * 64}}
    same = dict(rec)
    assert compare_statistics(rec, same)[1] == []
    edited = {**rec, "standard": {**rec["standard"], "sha256": "b" * 64}}
    (d,) = compare_statistics(rec, edited)[1]
    assert "lab.toml" in d and "the standard changed since the report" in d


# ---------------------------------------------------------------------- nothing to measure the edge: no downgrade
def test_a_wheel_without_a_pay_table_keeps_its_fail_under_the_edge_standard():
    """Crazy Time has no packaged pay table: no bet's edge was assessed, so the edge standard cannot call a
    family-wise rejection a mere finding."""
    battery = {"verdict": "FAIL", "alpha": 0.01, "exploitability": {"applicable": False, "reason": "no packaged pay table fits wheel 'crazy-time'"},
               "tests": [{"name": "pocket_chisquare", "pvalue": 1e-8, "applicable": True, "holm_weight": 1.0},
                         {"name": "max_count", "pvalue": 0.5, "applicable": True, "holm_weight": 1.0}]}
    report = {"verdict": "FAIL", "tables": [{"table": "CT", "n": 1500, "battery": battery}]}
    apply_standard(report, "edge", kind="wheel", alpha=0.01)
    rows = {r["id"]: r for r in report["standard"]["results"]}
    assert rows["E1"]["result"] == "not applicable" and rows["E2"]["result"] == "not met"
    assert report["verdict"] == "FAIL" and "nothing measured the player's edge" in rows["E2"]["detail"]
    # with the edge measured and not demonstrated, the rejection is a finding
    ev = evaluate(load_standard("edge"), "wheel", battery, alpha=0.01, edge=lambda lv: {"demonstrated": False, "bet": "1"})
    assert ev["verdict"] == "SUSPECT"


@pytest.mark.parametrize("name", ["edge", "rngcert-default"])
def test_a_game_without_a_tracker_keeps_its_fail(name):
    battery = {"verdict": "FAIL", "alpha": 0.01, "tests": [{"name": "rising_sequences", "pvalue": 1e-9, "applicable": True},
                                            {"name": "guessing", "pvalue": 0.5, "applicable": True}]}
    report = {"verdict": "FAIL", "policy": {"standard": "edge"}, "tables": [{"table": "log", "n": 300, "battery": battery, "trackers": []}]}
    apply_standard(report, name, kind="shoe", alpha=0.01)
    assert report["verdict"] == "FAIL"
    # a tracker that bet and found nothing clears it
    battery = dict(battery, tests=battery["tests"] + [{"name": "tracker_edge:hilo_count", "pvalue": 0.6, "applicable": True}])
    assert evaluate(load_standard(name), "shoe:manual", battery, alpha=0.01, unmeasured=None)["verdict"] == "SUSPECT"


def test_card_orientation_stays_a_finding_without_a_tracker():
    battery = {"verdict": "SUSPECT", "tests": [{"name": "orientation_share", "pvalue": 1e-9, "applicable": True},
                                               {"name": "rising_sequences", "pvalue": 0.5, "applicable": True}]}
    assert evaluate(load_standard("edge"), "shoe:machine", battery, alpha=0.01, unmeasured="no tracker")["verdict"] == "SUSPECT"


def test_a_looser_level_finding_is_not_a_fail_without_a_pay_table():
    battery = {"verdict": "SUSPECT", "tests": [{"name": "pocket_chisquare", "pvalue": 0.02, "applicable": True},
                                               {"name": "max_count", "pvalue": 0.5, "applicable": True}]}
    assert evaluate(load_standard("rngcert-default"), "wheel", battery, alpha=0.01, edge=lambda lv: None,
                    unmeasured="no pay table")["verdict"] == "SUSPECT"


# ---------------------------------------------------------------------- a clause the replicates cannot decide
def test_a_per_test_clause_below_the_monte_carlo_floor_is_inconclusive_not_met():
    """A lab's clause at 0.001 on sector_scan with 999 replicates: the p-value cannot go below 0.001, so "met"
    would be vacuous (the same log FAILs at 9,999 replicates)."""
    std = parse_standard(HEAD + clause(tests='["sector_scan"]', level="0.001"), "lab.toml")
    t = {"name": "sector_scan", "pvalue": 0.001, "applicable": True, "method": "monte-carlo, R=999", "holm_weight": 2.0}
    ev = evaluate(std, "wheel", {"verdict": "FAIL", "tests": [t]}, alpha=0.01)
    assert ev["verdict"] == "INCONCLUSIVE" and ev["clauses"][0]["result"] == "inconclusive"
    assert "Monte Carlo floor" in ev["clauses"][0]["detail"] and "--resamples 2000" in ev["clauses"][0]["detail"]
    # at 9,999 replicates it is decided: rejected at its floor 0.0001, or met above the level
    assert evaluate(std, "wheel", {"verdict": "FAIL", "tests": [dict(t, pvalue=0.0001, method="monte-carlo, R=9999")]},
                    alpha=0.01)["verdict"] == "FAIL"
    assert evaluate(std, "wheel", {"verdict": "PASS", "tests": [dict(t, pvalue=0.2)]}, alpha=0.01)["verdict"] == "PASS"


def test_a_second_level_clause_says_what_it_checked():
    battery = {"verdict": "PASS", "second_level": {"applicable": True}, "second_level_flags": [],
               "tests": [{"name": "nist_frequency", "pvalue": 0.4, "applicable": True}]}
    rows = {r["id"]: r for r in evaluate(load_standard("uniformity"), "bits", battery, alpha=0.01)["clauses"]}
    # (met by the flag-count rule: some names may be flagged by chance, so never "none rejects" nor "flag none")
    assert rows["U3"]["result"] == "met" and "no more test names flagged than a good generator gives by chance" in rows["U3"]["detail"]
    assert "none rejects" not in rows["U3"]["detail"]


def test_an_empty_standard_name_is_not_the_default(tmp_path):
    with pytest.raises(StandardError, match="empty standard name"):
        load_standard("")
    assert load_standard(None).id == "rngcert-default"
