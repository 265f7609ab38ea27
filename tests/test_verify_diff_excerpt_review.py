"""``verify --rerun`` shows a differing text around its first difference. A re-sealed report whose power sentence
said "+45%" where the rerun computes "+55%" (character 130 of the sentence) was reported as "recorded With 6,000
spins the verdict under standard west-virginia-29-22B-909 is FAIL wit, recomputed With 6,000 spins the verdict under
standard west-virginia-29-22B-909 is FAIL wit": the first 80 characters of each, identical, so no reader could see what
had been changed."""

from __future__ import annotations

from rngcert.report.verify import compare_content

HEAD = "With 6,000 spins the verdict under standard west-virginia-29-22B-909 is FAIL with 90% probability for a wheel on "


def test_a_text_difference_is_shown_where_it_is():
    recorded = {"tables": [{"battery": {"power": {"statement": HEAD + "which one numbered pocket comes up +45% more often than fair."}}}]}
    recomputed = {"tables": [{"battery": {"power": {"statement": HEAD + "which one numbered pocket comes up +55% more often than fair."}}}]}
    _, diffs = compare_content(recorded, recomputed)
    (d,) = [d for d in diffs if "statement" in d]
    rec, _, rep = d.partition(", recomputed ")
    assert "+45%" in rec and "+55%" in rep, d
    assert rec.split("recorded ", 1)[1].startswith("…"), d


def test_a_short_difference_is_shown_whole():
    _, diffs = compare_content({"verdict_word": "PASS", "x": "abc"}, {"verdict_word": "PASS", "x": "abd"})
    assert any(d.endswith("recorded abc, recomputed abd") for d in diffs), diffs
