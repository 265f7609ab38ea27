"""One sequence: the key finding says how many p-values lie below alpha against how many chance gives, with the
P of the rule that would make the run SUSPECT, whether it PASSes (data.e: 4 of 188, 1.9 expected) or is SUSPECT
(where the finding said only "more p-values below alpha than independent tests give by chance (see the summary)")."""

from __future__ import annotations

from rngcert.battery.plain import bits_findings
from rngcert.pipeline.certify_bits import REQUIRED_FAMILIES, bits_verdict
from rngcert.stats.result import NotApplicable, Requirement, TestResult


def _one_stream(low: int, total: int = 188) -> dict:
    names = [f"{REQUIRED_FAMILIES[i % len(REQUIRED_FAMILIES)]}[{i}]" for i in range(total)]
    ps = [0.005] * low + [0.5] * (total - low)
    seq = [TestResult(nm, Requirement.INDEPENDENCE, 0.0, None, p, 1000, "exact") for nm, p in zip(names, ps)]
    out = bits_verdict([seq], NotApplicable("two_level", Requirement.UNIFORMITY, 1, "m = 1"), alpha=0.01)
    return {"battery": out.to_dict()}


def test_one_stream_pass_says_its_low_pvalues_against_chance():
    section = _one_stream(4)
    assert section["battery"]["verdict"] == "PASS"
    keys, _ = bits_findings(section)
    first = keys[0]
    assert first.startswith("No test rejects after Holm; 4 of 188 p-values below alpha = 0.01 (")
    assert "against 1.9 expected by chance (P = 0.121 of so many or more)" in first and "not improbably many" in first


def test_one_stream_suspect_says_what_was_observed():
    section = _one_stream(10)
    assert section["battery"]["verdict"] == "SUSPECT"
    keys, _ = bits_findings(section)
    line = next(k for k in keys if k.startswith("SUSPECT: "))
    assert "10 of 188 p-values below alpha = 0.01" in line and "1.9 expected" in line and "see the summary" not in line


def test_one_stream_without_low_pvalues_keeps_its_sentence():
    keys, _ = bits_findings(_one_stream(0))
    assert keys[0].startswith("No test rejects after Holm: the sequence is consistent")


def test_not_applicable_reason_names_parameters_in_words():
    """A section too long for n says its parameters as a lab reads them: it said "with parameters default",
    "{'M': None}" and "{'L': None, 'Q': None}" (a None parameter is chosen from the length)."""
    import numpy as np

    from rngcert.stats import nist

    res = {r.name: r for r in nist.run_sp800_22(np.random.default_rng(41).integers(0, 2, 100).astype(np.uint8))}
    reasons = {k: str(r.reason) for k, r in res.items() if not r.applicable}
    assert "the minimum length of this test with L and Q chosen from n (SP 800-22 section 2.9.7" in reasons["nist_universal"]
    assert "the minimum length of this test with M = 32, Q = 32 (" in reasons["nist_rank"]
    assert "the minimum length of this test (SP 800-22 section 2.6.7" in reasons["nist_dft"]
    assert not any("None" in t or "parameters default" in t for t in reasons.values())
