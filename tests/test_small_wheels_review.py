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
