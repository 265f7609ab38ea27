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


def _many_streams(flagged: int, m: int = 100, names: int = 188) -> dict:
    """m streams of ``names`` test names, p-values spread evenly (one below 0.01 per name); ``flagged`` names get 4
    more below 0.01, so SP 800-22's proportion rule flags them (95 of 100 pass)."""
    from rngcert.stats.nist import twolevel

    label = [f"{REQUIRED_FAMILIES[i % len(REQUIRED_FAMILIES)]}[{i}]" for i in range(names)]
    per_seq = []
    for j in range(m):
        seq = []
        for i, nm in enumerate(label):
            p = 0.001 if i < flagged and j < 4 else ((j * 37 + i) % m + 0.5) / m
            seq.append(TestResult(nm, Requirement.INDEPENDENCE, 0.0, None, p, 1000, "exact"))
        per_seq.append(seq)
    summary = twolevel.two_level(per_seq, alpha=0.01, null_law="uniform")
    out = bits_verdict(per_seq, summary, alpha=0.01)
    return {"battery": out.to_dict(), "two_level": summary.to_dict()}


def test_many_streams_pass_says_how_many_flags_chance_gives():
    """At m = 100 a good generator flags about 3.5 of 188 names (the README said "one or two in most runs"); a PASS
    with 5 flagged said "no more than a good generator flags by chance" without the number."""
    section = _many_streams(5)
    assert section["battery"]["verdict"] == "PASS"
    first = bits_findings(section)[0][0]
    assert "flag 5 of 188 test names (" in first and ", against 3.4" in first and "expected for a good generator (P = " in first
    assert "not improbably many" in first


def test_many_streams_suspect_says_how_many_flags_chance_gives():
    section = _many_streams(12)
    assert section["battery"]["verdict"] == "SUSPECT"
    line = next(k for k in bits_findings(section)[0] if k.startswith("SUSPECT: "))
    assert line.startswith("SUSPECT: SP 800-22's rules flag frequency[0] (96 of 100 sequences pass); ")
    assert "(12 of 188 test names, against 3.4" in line and "expected for a good generator (P = 0.00027)" in line


def test_inconclusive_next_step_names_the_length_needed(cli, tmp_path):
    """Streams too short for some required tests: the next step said "Supply a dump long enough for every test (see
    the reasons)"; it names the length (DESIGN: INCONCLUSIVE with the sample size needed, bits alike)."""
    import json

    import numpy as np

    f = tmp_path / "b.txt"
    f.write_text("".join(map(str, np.random.default_rng(42).integers(0, 2, 20000))))
    res = cli("bits", f, "--format", "ascii", "--length", 2000, "--no-plots", "--json", "--out", tmp_path / "r")
    assert res.exit_code == 11
    report = json.loads(res.stdout)
    steps = report["tables"][0]["next_steps"]
    assert steps[0].startswith("Supply streams of at least 1,000,000 bits (--length 1000000)"), steps
    assert report["tables"][0]["length_needed"] == 1_000_000
