"""A lab's wheel of 3 or 4 pockets (the loader's lower limit is 3): the battery's fixed arc widths must not
exceed the wheel. The predictor's 5-offset arc on a 4-pocket wheel counted a spin once per lap (hit rate
125.7% against 125.0%: a fair wheel FAILed with p < 1e-300); the stated dealer signature of 3 pockets on a
3-pocket wheel stopped certify with an input error (exit 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rngcert.errors import InputError
from rngcert.stats.predict import predictor_from_offsets


def _wheel(tmp_path, k: int):
    labels = [str(i) for i in range(k)]
    p = tmp_path / f"w{k}.toml"
    p.write_text(f'id = "w{k}"\nkind = "roulette"\nwheel_order = {json.dumps(labels)}\nred = {json.dumps(labels[1::2])}\n'
                 'green = ["0"]\n', encoding="utf-8")
    return p


def test_predictor_arc_wider_than_the_wheel_is_refused():
    off = np.arange(400) % 4
    with pytest.raises(InputError, match="width"):
        predictor_from_offsets(lambda: iter([(off, np.zeros(400, dtype=np.int64))]), 4, ["all"], width=5)


@pytest.mark.parametrize("k", [3, 4])
def test_fair_small_wheel_is_certified_without_an_impossible_hit_rate(tmp_path, cli, k):
    wheel, log, out = _wheel(tmp_path, k), tmp_path / "log.csv", tmp_path / "rep"
    r = cli("simulate", "wheel", "--equipment", str(wheel), "--spins", "5000", "--seed", "3", "--out", str(log))
    assert r.exit_code == 0, r.output
    r = cli("certify", str(log), "--equipment", str(wheel), "--out", str(out), "--no-plots", "--json", "--seed", "1")
    assert r.exit_code in (0, 10), r.output
    tests = {t["name"]: t for t in json.loads(r.stdout)["tables"][0]["battery"]["tests"]}
    pred = tests["out_of_sample_predictor"]
    assert pred["details"]["hit_rate"] <= 1 and pred["details"]["width"] == k - 1
    assert pred["pvalue"] > 1e-3


def test_outside_bets_of_a_wheel_numbered_past_36_cover_1_to_36_only(tmp_path, cli):
    """A lab's wheel numbered 0-40: pockets 37-40 made a fourth "dozen" (a report said "FAIL: dozen bets: category 3
    came up 2,936 times") and counted as "high 19-36". The bets cover 1-36; the pockets above are in no category."""
    from rngcert.equipment.wheel import load_wheel

    cats = load_wheel(_wheel(tmp_path, 41)).position_space().categories
    labels = [str(i) for i in range(41)]
    for name in ("parity", "low_high", "dozen", "column"):
        ids, names = cats[name]
        assert all(ids[labels.index(str(p))] == -1 for p in (0, 37, 38, 39, 40)), name
        assert int(ids.max()) == len(names) - 1, (name, names)
    assert cats["dozen"][0][labels.index("36")] == 2 and cats["low_high"][0][labels.index("19")] == 1
