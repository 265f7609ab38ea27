"""The unreadable share of a permanence list counts the numbers of a line rejected whole (a title or a garbled line:
mostly words) as the results it held, not as one row: a list of 10 numbers a line with 10% of its lines garbled
lost 10% of its results, and certify said 1% and gave a verdict (case c04's kind)."""

from __future__ import annotations

import random

import pytest

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.checks import unreadable_reasons

EU = load_wheel("european")


def _list(tmp_path, garbled: float, per_line: int = 10, n_lines: int = 2000):
    r = random.Random(9)
    lines = []
    for _ in range(n_lines):
        toks = [str(r.randrange(37)) for _ in range(per_line)]
        if r.random() < garbled:  # (an OCR'd line: letters for digits in every number)
            toks = [t.replace("1", "l").replace("0", "O") + "a" for t in toks]
        lines.append(" ".join(toks))
    p = tmp_path / "list.txt"
    p.write_text("Spielbank Tisch 1 19.04.2026\n" + "\n".join(lines) + "\n")
    return p


def test_a_garbled_tenth_of_the_lines_is_a_tenth_of_the_results(tmp_path):
    log = read_spin_log([_list(tmp_path, 0.10)], EU)
    lost = [r for r in log.rejected if r.column == "line"]
    assert len(lost) > 150 and log.sources[0].rejected == len(lost)  # (every garbled line rejected whole, and the title)
    reasons, _ = unreadable_reasons(log, 0.05)
    (why,) = reasons
    assert "could not be read" in why and "(10%)" in why and "counting each number of a line rejected whole" in why


@pytest.mark.parametrize("garbled", [0.0, 0.004])
def test_a_title_and_a_few_garbled_lines_stay_under_the_limit(garbled, tmp_path):
    log = read_spin_log([_list(tmp_path, garbled)], EU)
    assert unreadable_reasons(log, 0.05) == ([], {})


def test_certify_of_the_garbled_list_is_inconclusive(tmp_path):
    from rngcert.pipeline.certify_wheel import certify_log

    cert = certify_log([_list(tmp_path, 0.10)], EU, seed=1, n_resamples=99, figures=False)
    assert cert.verdict == "INCONCLUSIVE"
