"""Findings from one contract (issue 24, item 1): every finding template of the wheel battery is
rendered from the details its test actually returns, on small inputs of every packaged wheel; the
outside-bet findings name their bets (red/black/zero, low/high, dozens, columns), never an id; the
causes listed fit the test that fired."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rngcert.battery import findings
from rngcert.battery.core import decide
from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.equipment.wheel import load_wheel
from rngcert.report import text

#: What a rendered finding must never contain: an id where a name belongs, or a missing value.
BAD = re.compile(r"category \d|\bNone\b|\bnan\b|\?|\{|\}")

#: Names each outside-bet test may give (equipment/wheel.py `_roulette_categories`).
NAMES = {
    "outside_colour": {"red", "black", "zero"},
    "outside_parity": {"odd", "even"},
    "outside_low_high": {"low 1-18", "high 19-36"},
    "outside_dozen": {"1st 12", "2nd 12", "3rd 12"},
    "outside_column": {"column 1", "column 2", "column 3"},
}


def _spaces():
    for wid in ("european", "american", "money-wheel-52", "crazy-time"):
        w = load_wheel(wid)
        if w.order_known:
            yield wid, w.position_space()
        if w.kind != "roulette":
            yield wid + ":symbols", w.symbol_space()


def _battery_dict(space, seed=3, n=1500):
    rng = np.random.default_rng(seed)
    p = np.asarray(space.probs, dtype=float)
    p = p * np.linspace(0.6, 1.4, p.size)  # a biased wheel: outside bets, pockets and the harmonic all see it
    x = rng.choice(space.m, size=n, p=p / p.sum()).astype(np.int16)
    d = WheelData(x, space)
    results, errors, _ = WHEEL.evaluate(d, entropy=1, group="contract", n_resamples=199)
    assert not errors
    return decide(results, alpha=0.01).to_dict()


@pytest.mark.parametrize("wid,space", list(_spaces()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_wheel_finding_renders_from_its_tests_details(wid, space):
    b = _battery_dict(space)
    templated = set(findings.FAMILY) | set(findings._BETS)
    seen = 0
    for t in b["tests"]:
        if not t.get("applicable"):
            continue
        unit = "pocket" if space.circular and "money" not in wid and "crazy" not in wid else "section" if space.circular else "symbol"
        what, _, _ = findings.observed_effect(t, list(space.labels), unit)
        assert not BAD.search(what), (t["name"], what)
        if t["name"] in templated:  # the test has its own template: the generic fallback is a broken contract
            assert "rejects (p =" not in what, (t["name"], t["details"].keys())
        for word in ("FAIL", "SUSPECT"):
            s = findings.finding_sentence(t, verdict_word=word, n=1500, labels=list(space.labels), power={})
            assert s.startswith(word) and not BAD.search(s), s
        assert not BAD.search(text.finding(t, list(space.labels), "roulette" if "european" in wid or "american" in wid else "money-wheel"))
        seen += 1
    assert seen >= 5


def test_outside_bet_fail_names_the_category():
    """Issue 24, the held-out casino list: 'colour bets: category 2 came up ...' must read 'black'."""
    space = load_wheel("european").position_space()
    b = _battery_dict(space)
    for t in b["tests"]:
        if t["name"] in NAMES and t.get("applicable"):
            assert t["details"]["category_names"], t["name"]
            what, _, _ = findings.observed_effect(t, list(space.labels))
            named = what.split(": ", 1)[1].split(" came up")[0]
            assert named in NAMES[t["name"]], what
    # a colour-only imbalance: black over-represented, pockets of each colour equal within the colour
    w = load_wheel("european")
    col = space.categories["colour"][0]
    counts = np.where(col == 1, 2700, 2500)
    x = np.repeat(np.arange(space.m), counts).astype(np.int16)
    np.random.default_rng(0).shuffle(x)
    out = WHEEL.run(WheelData(x, space), entropy=1, n_resamples=199)
    t = next(t for t in out.to_dict()["tests"] if t["name"] == "outside_colour")
    assert t["rejected_familywise"]
    s = findings.finding_sentence(t, verdict_word="FAIL", n=x.size, labels=list(space.labels), power={})
    assert "colour bets: black came up" in s and "category" not in s, s
    assert "pocket defect" not in s and "transcribed" in s and "alternate" in s, s
    assert w.kind == "roulette"


def test_causes_fit_the_test_that_fired():
    t = {"name": "outside_dozen", "details": {"observed": [10, 20, 30], "expected": [20, 20, 20], "category_names": ["1st 12", "2nd 12", "3rd 12"]}}
    s = findings.finding_sentence(t, verdict_word="FAIL", n=60, labels=[], power={})
    assert "dozen bets: 1st 12" in s and "transcribed" in s
    for name in ("runs_colour", "serial_pair"):  # a permanence list transcribed by hand is a cause of order effects
        s = findings.finding_sentence({"name": name, "details": {}, "pvalue": 1e-5}, verdict_word="FAIL", n=60, labels=[], power={})
        assert "transcribed" in s, s
        assert "Possible causes to check: " in s, s  # "Possible causes to check a dealer releasing ..." misread
    s = findings.finding_sentence({"name": "first_harmonic", "details": {"amplitude": 0.1, "phase_pockets": 3.2}}, verdict_word="FAIL",
                                  n=60, labels=[str(i) for i in range(37)], power={})
    assert "tilted" in s and "transcribed" not in s
    # a caller that passes ids without names gets the id (never an index shifted by one)
    t = {"name": "outside_colour", "details": {"observed": [15, 30, 1], "expected": [20, 20, 1], "category_ids": [0, 1, 2]}}
    assert "category 1 came up 30" in findings.observed_effect(t, [])[0]


@pytest.mark.parametrize("game,decks", [(None, 1), ("baccarat", 8), ("blackjack", 6)])
def test_every_shuffle_finding_renders_from_its_tests_details(game, decks):
    """The shuffle battery's sentences (pipeline/certify_shuffle.py) read the details its tests return."""
    from rngcert.battery.shuffle import ShoeData, evaluate_shuffle
    from rngcert.pipeline.certify_shuffle import _finding_sentence

    rng = np.random.default_rng(3)
    n = decks * 52
    before = np.stack([rng.permutation(n) for _ in range(40)]).astype(np.int16)
    after = np.concatenate([before[:, n // 2:], before[:, : n // 2]], axis=1)  # a cut, nothing more
    rot = rng.integers(0, 2, size=after.shape).astype(np.int8)
    res, errors, _ = evaluate_shuffle(ShoeData(before, after, decks, game, rotated=rot, mc_shoes=40, guess_shoes=40), entropy=1, n_resamples=99)
    assert not errors
    b = decide(res, alpha=0.01).to_dict()
    app = [t for t in b["tests"] if t["applicable"]]
    assert len(app) >= 8
    for t in app:
        s = _finding_sentence(t, n)
        assert not BAD.search(s.replace("?", "")), (t["name"], s)
        assert not s.startswith("p "), (t["name"], s)  # every test of the battery has its own sentence


def test_retest_sentence_states_the_power_of_the_statement():
    """The re-test's probability is the power statement's: at ``--power 0.8`` the effect and the spins are those of
    80% power, and the sentence said "with 90% probability" whatever the power asked."""
    t = {"name": "max_count", "details": {"position": 0, "count": 674, "expected": 540.5}, "pvalue": 1e-6}
    for p in (0.8, 0.9, 0.95):
        s = findings.finding_sentence(t, verdict_word="FAIL", n=20_000, labels=["17"], power={"power": p, "single_pocket": {"effect": 0.3}})
        assert f"re-test with at least 29,506 spins (the battery would then FAIL this effect with {p:.0%} probability)" in s, s
    s = findings.finding_sentence(t, verdict_word="FAIL", n=20_000, labels=["17"], power={"single_pocket": {"effect": 0.3}})
    assert "re-test with at least 29,506 spins." in s and "probability" not in s, s
