"""Calibration of the two-level analysis on discrete p-values (case c02).

A good generator must not FAIL the two-level analysis at any (n, m): PCG64 and Philox, fixed
seeds, n in {128, 1000, 10^4} with m = 1000 here; n = 10^6 with m = 200 in
``tests/test_nist_calibration.py::test_good_generators_never_fail_at_n_1e6`` (the verdict on the
fair sources that file runs anyway); the full grid (n = 10^6 with m = 1000, several seeds,
false-FAIL counts) in ``benchmarks/bench_nist_calibration.py``. Runtime: about 40 s (slow: about
1 min more on 2 cores).
"""

import json

import numpy as np
import pytest

from rngcert.cli import EXIT
from rngcert.pipeline.certify_bits import bits_verdict
from rngcert.simulate.sources import generate_bits
from rngcert.stats.nist.twolevel import UNIFORMITY_ALPHA, run_many, two_level


def test_c02_cli_perfect_generator_does_not_fail_at_n_128(tmp_path, cli):
    """Case c02, the case's own command: a perfect generator FAILed with frequency-uniformity
    p ~ 1e-34 because the p-values at n = 128 take few values. Now no FAIL: the tests that
    cannot run at n = 128 make it INCONCLUSIVE, and every uniformity check that runs passes."""
    res = cli("bits", "--source", "pcg64", "--streams", "1000", "--length", "128", "--seed", "1", "--no-plots", "--processes", "1", "--json", "--out", tmp_path)
    assert res.exit_code == EXIT["INCONCLUSIVE"], res.output[-2000:]
    rep = json.loads(res.output)
    tests = {t["name"]: t for t in rep["tables"][0]["battery"]["tests"]}
    for nm in ("nist_frequency", "nist_block_frequency", "nist_runs", "nist_longest_run",
               "nist_cumulative_sums[forward]", "nist_cumulative_sums[reverse]"):
        u = tests[f"{nm}:uniformity"]
        assert u["applicable"] and u["pvalue"] > UNIFORMITY_ALPHA, (nm, u)
        assert "exact" in u["method"]
        assert not u["rejected_familywise"]
    assert not rep["tables"][0]["battery"]["rejected_familywise"]
    assert any("law of each test's p-value" in n for n in rep["tables"][0]["notes"])


def _run(gen, n, m, seed, processes=1):
    # one process: at n <= 10^4 a stream's battery takes about a millisecond and a pool's start and
    # the results' way back cost more than they save (the output does not depend on ``processes``;
    # the pool is exercised by test_nist_calibration.py's fair sources at n = 10^6)
    per, summary = run_many(generate_bits(gen, n, seed=seed, streams=m), processes=processes)
    return per, summary, bits_verdict(per, summary)


@pytest.mark.parametrize("gen", ["pcg64", "philox"])
@pytest.mark.parametrize("n", [128, 1000, 10_000])
def test_c02_good_generators_never_fail_at_small_n(gen, n):
    per, summary, out = _run(gen, n, 1000, seed=20261201 + n)
    assert out.verdict != "FAIL", out.reasons
    assert not out.rejected
    ran = [r for r in summary.rows if r.uniformity_pvalue is not None]
    assert len(ran) >= 6                                      # the check did run
    assert all(r.uniformity_ok for r in ran), [(r.name, r.uniformity_pvalue) for r in ran]
    assert len(summary.failed) <= 2, summary.failed
    if n == 128:
        # SP 800-22 as published, same p-values: the flat expectation rejects the discrete
        # frequency p-values (the fault of c02)
        flat = two_level(per, null_law="uniform")
        assert flat.row("nist_frequency").uniformity_pvalue < 1e-10
        assert bits_verdict(per, flat).verdict == "FAIL"


def test_c02_every_m_the_command_accepts_small_m():
    """m from 2 to 60 at n = 128: no FAIL; below 55 sequences the uniformity check is not
    applicable, with the reason."""
    for m in (2, 10, 54, 55, 60):
        per, summary, out = _run("pcg64", 128, m, seed=m, processes=1)
        assert out.verdict != "FAIL", (m, out.reasons)
        row = summary.row("nist_frequency")
        if m < 55:
            assert row.uniformity_pvalue is None and "55" in row.uniformity_reason
        else:
            assert row.uniformity_pvalue is not None


@pytest.mark.slow
@pytest.mark.parametrize("n", [128, 1000, 10_000])
def test_false_fail_rate_at_small_n_over_seeds(n):
    """Four seeds per generator, m = 400 (m = 1000 above): at most one FAIL in 8 runs (P(>= 2) = 0.003 at a false-FAIL
    rate of exactly alpha = 1%); second-level p-values spread as a uniform sample would (share
    below 0.01 near 0.01). More seeds: ``benchmarks/bench_nist_calibration.py``."""
    fails, low, total = 0, 0, 0
    for gen in ("pcg64", "philox"):
        for s in range(4):
            per, summary, out = _run(gen, n, 400, seed=7000 + s)
            fails += out.verdict == "FAIL"
            p = np.array([r.pvalue for r in summary.to_test_results() if r.applicable])
            low += int(np.sum(p < 0.01))
            total += p.size
    assert fails <= 1
    assert low / total < 0.03, (low, total)
