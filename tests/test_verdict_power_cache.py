"""The on-disk cache of the verdict power (rngcert.battery.power): a hit returns exactly the
number a fresh simulation gives; a damaged or foreign file is recomputed; RNGCERT_CACHE=off
writes nothing."""

from __future__ import annotations

import json

from rngcert.battery import power as bp

ARGS = (2000, 37, "single-pocket", (("max_count", 0.002), ("pocket_chisquare", 0.002)), 0.9, 1, 999)


def test_cache_hit_equals_fresh_simulation_and_bad_files_are_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("RNGCERT_CACHE", str(tmp_path))
    bp._verdict_effect.cache_clear()
    fresh = bp._verdict_effect(*ARGS)
    assert fresh["effect"] == bp._mde(*ARGS) and fresh["se"] > 0  # the effect and its Monte Carlo error
    files = list((tmp_path / "verdict-power").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["result"] == fresh
    bp._verdict_effect.cache_clear()
    assert bp._verdict_effect(*ARGS) == fresh  # read back
    files[0].write_text('{"key": [0], "effect": 123.0}')  # another key (e.g. an older model): ignored
    bp._verdict_effect.cache_clear()
    assert bp._verdict_effect(*ARGS) == fresh
    files[0].write_text("not json")
    bp._verdict_effect.cache_clear()
    assert bp._verdict_effect(*ARGS) == fresh
    assert json.loads(files[0].read_text())["result"] == fresh  # repaired


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RNGCERT_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    bp._verdict_effect.cache_clear()
    assert bp.cache_dir() is None
    bp._verdict_effect(*ARGS)
    assert not any(tmp_path.iterdir())
