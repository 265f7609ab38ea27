"""The power statement is the probability that the *verdict* is FAIL, under the standard that decides it.

Under West Virginia's (and New Mexico's) clauses the verdict FAILs only when one of their named tests rejects at 99%
on its own; the statement and the PASS gate were the default battery's (weighted Holm over every test, the max-count
test included), so a West Virginia report said "the battery returns FAIL with 90% probability" for +25% on one pocket
at 20,000 spins, where its verdict FAILs such a wheel about 75% of the time, and 6,000 fair spins PASSed with a power
their verdict did not have (+47% stated; its chi-square at 99% reaches 90% at about +55%). Under ``edge`` a battery
rejection is a finding: the statement now says SUSPECT or FAIL."""

from __future__ import annotations

import json

import numpy as np
from scipy import stats

from rngcert.battery import findings

WV = "west-virginia-29-22B-909"


def _certify(cli, tmp_path, log, *extra):
    r = cli("certify", str(log), "--seed", "1", "--workers", "1", "--json", "--out", str(tmp_path / "r"), *extra)
    assert r.exit_code in (0, 10, 11, 12), r.output
    return r.exit_code, json.loads(r.stdout)


def _chisquare_power(n: int, effect: float, k: int = 37, level: float = 0.01, draws: int = 20_000) -> float:
    """P(the pocket chi-square rejects at ``level``) when one pocket's weight is ``1 + effect`` (simulated, seeded)."""
    p = np.ones(k)
    p[0] *= 1 + effect
    c = np.random.default_rng(2026).multinomial(n, p / p.sum(), size=draws)
    x = ((c - n / k) ** 2 / (n / k)).sum(axis=1)
    return float((x > stats.chi2.ppf(1 - level, k - 1)).mean())


def test_the_power_and_the_pass_gate_are_those_of_the_standard_verdict(tmp_path, cli):
    log = tmp_path / "fair.csv"
    assert cli("simulate", "wheel", "--spins", "6000", "--seed", "5", "--out", str(log)).exit_code == 0
    code, default = _certify(cli, tmp_path, log)
    assert code == 0 and default["verdict"] == "PASS"
    pw = default["tables"][0]["battery"]["power"]
    assert pw["statement"].startswith("With 6,000 spins the battery returns FAIL with 90% probability") and "rule" not in pw
    code, wv = _certify(cli, tmp_path, log, "--standard", WV)
    t = wv["tables"][0]
    pw = t["battery"]["power"]
    assert pw["statement"].startswith(f"With 6,000 spins the verdict under standard {WV} is FAIL with 90% probability"), pw["statement"]
    assert pw["rule"] == {"standard": WV, "verdict": "FAIL", "levels": {"pocket_chisquare": 0.01}}
    assert "dealer signature" not in pw["statement"]
    # the verdict FAILs on the chi-square at 99% alone here: the stated effect is its 90% point (within 0.02)
    assert abs(_chisquare_power(6000, pw["single_pocket"]["effect"]) - 0.9) < 0.02
    assert pw["single_pocket"]["effect"] > 0.5 > default["tables"][0]["battery"]["power"]["single_pocket"]["effect"]
    assert code == 11 and wv["verdict"] == "INCONCLUSIVE", wv["verdict"]
    assert any(f"the verdict under standard {WV} would be FAIL for such a wheel with less than 90% probability" in r
               for r in t["battery"]["reasons"]), t["battery"]["reasons"]


def test_under_edge_a_battery_rejection_is_suspect_or_fail(tmp_path, cli):
    log = tmp_path / "fair.csv"
    assert cli("simulate", "wheel", "--spins", "6000", "--seed", "5", "--out", str(log)).exit_code == 0
    _, default = _certify(cli, tmp_path, log)
    _, edge = _certify(cli, tmp_path, log, "--standard", "edge")
    pw, pd = edge["tables"][0]["battery"]["power"], default["tables"][0]["battery"]["power"]
    assert pw["statement"].startswith("With 6,000 spins the verdict under standard edge is SUSPECT or FAIL with 90% probability")
    assert "its FAIL clauses judge what the model does not simulate (a player's edge)" in pw["statement"]
    assert pw["single_pocket"]["effect"] == pd["single_pocket"]["effect"]  # the finding clause is the battery's rule


def test_the_retest_sentence_names_the_standard_verdict():
    t = {"name": "max_count", "details": {"position": 0, "count": 674, "expected": 540.5}, "pvalue": 1e-6}
    rule = {"standard": WV, "verdict": "FAIL", "levels": {"pocket_chisquare": 0.01}}
    s = findings.finding_sentence(t, verdict_word="FAIL", n=20_000, labels=["17"],
                                  power={"power": 0.9, "rule": rule, "single_pocket": {"effect": 0.3}})
    assert f"(the verdict under standard {WV} would then be FAIL for this effect with 90% probability)" in s, s


def _fair_log(path, n, seed):
    x = np.random.default_rng(seed).integers(0, 37, n)
    path.write_text("result\n" + "\n".join(map(str, x)) + "\n")
    return path


def test_spins_needed_meet_the_pass_gate(cli, tmp_path):
    """The spins a report says are needed for the declared bias carry a verdict: 20,000 fair spins said "about 4,837
    spins are needed" (rngcert-default; West Virginia's: 6,646), and a fair log of 4,837 (6,646) spins was INCONCLUSIVE,
    "it reaches 90% at +53%; about 5,434 spins are needed": the n**-0.5 law was extrapolated from 20,000 spins."""
    big = _fair_log(tmp_path / "big.csv", 20_000, 1)
    for std in ("rngcert-default", WV):
        _, rep = _certify(cli, tmp_path, big, "--standard", std, "--resamples", "999", "--no-plots")
        need = rep["tables"][0]["battery"]["power"]["spins_needed_for_required_bias"]
        _, small = _certify(cli, tmp_path, _fair_log(tmp_path / f"need-{std}.csv", need, 2), "--standard", std, "--resamples", "999",
                            "--no-plots")
        pw = small["tables"][0]["battery"]["power"]
        assert pw["single_pocket"]["effect"] <= 0.5, (std, need, pw["single_pocket"]["effect"])
        assert not pw["gate_reasons"], (std, need, pw["gate_reasons"])


def test_the_effect_reached_reads_above_the_declared_bias(cli, tmp_path):
    """5,400 fair spins: "cannot carry a verdict on the declared minimum bias of +50% ... (it reaches 90% at +50%)", a
    contradiction on its face (the effect was +50.2%, rounded to a whole percent)."""
    _, rep = _certify(cli, tmp_path, _fair_log(tmp_path / "f.csv", 5_400, 3), "--resamples", "999", "--no-plots")
    (reason,) = rep["tables"][0]["battery"]["power"]["gate_reasons"]
    reached = float(reason.split("it reaches 90% at +")[1].split("%")[0])
    assert reached > 50, reason
