"""Second review of named standards and verification (2026-12-05): a lab's clause naming an SP 800-22 test by the name
its validation accepts selected none of the battery's results (named ``nist_frequency:uniformity`` and
``nist_frequency:proportion``), so the clause was "not applicable" on every bit stream."""

from __future__ import annotations

import pytest

from rngcert.battery.standard import evaluate, parse_standard

HEAD = 'id = "lab"\ntitle = "a lab\'s standard"\nreference = "lab manual"\nsummary = "s"\nrule = "r"\n'


def _bits_clause(test: str) -> str:
    return (f'[[clause]]\nid = "B1"\ntitle = "frequency"\napplies_to = ["bits"]\ntests = ["{test}"]\nlevel = 0.01\n'
            'correction = "per-test"\nrejection = "FAIL"\nreference = "x"\n')


def _bits_battery(p_proportion: float) -> dict:
    tests = [{"name": n, "pvalue": p, "applicable": True, "holm_weight": 1.0}
             for n, p in (("nist_frequency:uniformity", 0.5), ("nist_frequency:proportion", p_proportion),
                          ("nist_cumulative_sums[forward]:uniformity", 0.4), ("nist_runs:proportion", 0.3))]
    return {"tests": tests, "verdict": "PASS", "reasons": [], "second_level": {"applicable": True}}


@pytest.mark.parametrize("test", ["frequency", "nist_frequency"])
def test_a_bits_clause_naming_one_test_judges_its_results(test):
    std = parse_standard(HEAD + _bits_clause(test), "lab.toml")
    failing = evaluate(std, "bits", _bits_battery(1e-6), alpha=0.01)
    assert failing["verdict"] == "FAIL", failing
    assert failing["clauses"][0]["rejected"] == ["nist_frequency:proportion"]
    passing = evaluate(std, "bits", _bits_battery(0.2), alpha=0.01)
    assert passing["clauses"][0]["result"] == "met" and "2 test(s)" in passing["clauses"][0]["detail"], passing


def test_a_bits_clause_naming_a_test_with_variants_selects_each():
    std = parse_standard(HEAD + _bits_clause("cumulative_sums"), "lab.toml")
    assert std.clauses[0].selects("nist_cumulative_sums[forward]:uniformity")
    assert not std.clauses[0].selects("nist_runs:proportion")
