"""A log too uniform to be true is a data-integrity finding, never a FAIL (issue 27 item 6b)."""

from __future__ import annotations

import numpy as np

from rngcert.battery.uniform import LEVEL, too_uniform
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.simulate.sources import generator, seed_sequence
from rngcert.simulate.wheel import simulate_spins, write_spin_log
from rngcert.stats import pocket_chisquare

EU = load_wheel("european")


def _write(tmp_path, name, sim):
    p = tmp_path / name
    write_spin_log(p, EU, sim)
    return p


def _made_up(tmp_path, per_pocket=200):
    """Every pocket exactly ``per_pocket`` times, in a shuffled order (a fabricated log)."""
    sim = simulate_spins(EU, 37 * per_pocket, generator("pcg64", seed_sequence(4)))
    x = np.repeat(np.arange(37), per_pocket)
    generator("pcg64", seed_sequence(5)).shuffle(x)
    sim.positions = x.astype(sim.positions.dtype)
    return _write(tmp_path, "made-up.csv", sim)


def test_a_perfectly_uniform_log_is_inconclusive_with_a_data_integrity_finding(tmp_path):
    cert = certify_log([_made_up(tmp_path)], EU, seed=1, n_resamples=199, figures=False)
    (t,) = cert.report["tables"]
    assert t["counts"] == [200] * 37
    assert cert.verdict == "INCONCLUSIVE"  # never FAIL, never PASS
    found = [f for f in t["integrity"]["findings"] if f["name"] == "too_uniform"]
    assert len(found) == 1
    ev = found[0]["evidence"]
    assert ev["lower_tail"]["pocket_chisquare"] == 0.0 and ev["statistic"]["pocket_chisquare"] < 1e-20
    assert "too uniform to be true" in found[0]["text"] and "made up or filtered" in found[0]["text"]
    assert any(r.startswith("data integrity: the counts are too even") for r in t["battery"]["reasons"])
    assert any(k.startswith("Data integrity (not a wheel fault): a log too uniform to be true") for k in t["key_findings"])
    assert "X² = 0 on 36 df, P(counts this even) = below 1e-300 for a fair wheel; Holm at 0.001" in found[0]["text"]
    assert not t["battery"]["rejected_familywise"]  # no test rejects: it is the record that is doubted


def test_a_fair_log_has_no_too_uniform_finding(tmp_path):
    sim = simulate_spins(EU, 7400, generator("pcg64", seed_sequence(6)))
    cert = certify_log([_write(tmp_path, "fair.csv", sim)], EU, seed=1, n_resamples=199, figures=False)
    (t,) = cert.report["tables"]
    assert not [f for f in t["integrity"]["findings"] if f["name"] == "too_uniform"]
    assert cert.verdict in ("PASS", "SUSPECT")


def test_false_alarm_rate_on_fair_counts_is_below_the_level():
    rng = np.random.default_rng(20261203)
    counts = rng.multinomial(3700, np.full(37, 1 / 37), size=4000)
    flagged = sum(too_uniform([pocket_chisquare(c)]) is not None for c in counts)
    # expected about 0.05% (X² and G nearly the same statistic): 2 of 4000; 0.1% would be 4
    assert flagged <= 8
    # just above the level is not flagged, just below is (Holm over X² and G: level / 2 at the first step)
    r = pocket_chisquare(np.full(37, 100))
    assert too_uniform([r], level=LEVEL)["evidence"]["holm_adjusted"]["pocket_chisquare"] == 0.0


def test_sparse_counts_and_other_tests_are_not_judged():
    assert too_uniform([pocket_chisquare(np.full(37, 2), method="monte-carlo", n_resamples=99, rng=np.random.default_rng(1))]) is None
    assert too_uniform([]) is None
