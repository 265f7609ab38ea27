"""The exact null laws of the SP 800-22 p-values cached on disk (issue 26 item 5):
rngcert.pipeline.lawcache. A hit gives the computed law field by field; a corrupt, truncated or
foreign entry is computed again; concurrent writers leave one whole file; the report is the same."""

from __future__ import annotations

import json
import multiprocessing as mp
import os

import pytest

from rngcert.pipeline import lawcache
from rngcert.stats.nist import nulllaw


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RNGCERT_CACHE", str(tmp_path / "c"))
    lawcache.cached_law.cache_clear()
    nulllaw.pvalue_law.cache_clear()
    yield tmp_path / "c" / "nulllaw"
    lawcache.cached_law.cache_clear()


def _forbid_compute(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("computed, not read from the cache")

    monkeypatch.setattr(nulllaw, "pvalue_law", boom)


def test_a_law_is_computed_once_then_read_from_disk(cache, monkeypatch):
    want = {k: nulllaw.pvalue_law(k, 1000, p, 0.01) for k, p in (("frequency", ()), ("runs", ()), ("block_frequency", (128,)))}
    got = {k: lawcache.cached_law(k, 1000, p, 0.01) for k, p in (("frequency", ()), ("runs", ()), ("block_frequency", (128,)))}
    assert got == want and len(list(cache.glob("*.json"))) == 3
    lawcache.cached_law.cache_clear()
    _forbid_compute(monkeypatch)
    assert {k: lawcache.cached_law(k, 1000, p, 0.01) for k, p in (("frequency", ()), ("runs", ()), ("block_frequency", (128,)))} == want
    assert lawcache.is_cached("runs", 1000) and not lawcache.is_cached("runs", 1001)


@pytest.mark.parametrize("damage", ["number", "truncate", "other key", "not json"])
def test_a_damaged_entry_is_computed_again_and_rewritten(cache, damage):
    want = lawcache.cached_law("frequency", 500)
    (f,) = cache.glob("*.json")
    doc = json.loads(f.read_text())
    if damage == "number":
        doc["law"]["bins"][3] += 1e-9  # the file's own SHA-256 no longer matches its law
        f.write_text(json.dumps(doc))
    elif damage == "truncate":
        f.write_text(f.read_text()[:40])
    elif damage == "other key":
        doc["key"][3] = 501
        f.write_text(json.dumps(doc))
    else:
        f.write_bytes(b"\x00\xff")
    lawcache.cached_law.cache_clear()
    calls = []
    real = nulllaw.pvalue_law
    nulllaw.pvalue_law.cache_clear()
    try:
        nulllaw.pvalue_law = lambda *a: calls.append(a) or real(*a)
        assert lawcache.cached_law("frequency", 500) == want
    finally:
        nulllaw.pvalue_law = real
    assert len(calls) == 1
    assert json.loads(f.read_text())["law"]["bins"] == list(want.bins)  # rewritten whole


def _write_same_law(folder: str, barrier) -> None:
    os.environ["RNGCERT_CACHE"] = folder
    lawcache.cached_law.cache_clear()
    barrier.wait()
    for _ in range(20):
        lawcache._write(lawcache._file_of(lawcache._key_doc("runs", 800, (), 0.01)), lawcache._key_doc("runs", 800, (), 0.01),
                        nulllaw.pvalue_law("runs", 800, (), 0.01))


def test_concurrent_writers_leave_one_whole_entry(cache, tmp_path):
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_write_same_law, args=(str(tmp_path / "c"), barrier)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert [p.suffix for p in cache.iterdir()] == [".json"]  # no temporary file left
    assert lawcache.is_cached("runs", 800)
    assert lawcache.cached_law("runs", 800) == nulllaw.pvalue_law("runs", 800, (), 0.01)


def test_cache_off_and_a_code_change_make_another_key(cache, monkeypatch):
    monkeypatch.setenv("RNGCERT_CACHE", "off")
    assert lawcache.cache_folder() is None
    lawcache.cached_law("frequency", 300)
    assert not cache.exists()
    monkeypatch.setenv("RNGCERT_CACHE", str(cache.parent))
    lawcache.cached_law.cache_clear()
    lawcache.cached_law("frequency", 300)
    monkeypatch.setattr(lawcache, "_code_fingerprint", lambda: "an edited nulllaw.py")
    assert not lawcache.is_cached("frequency", 300)  # an edited law is never read stale


@pytest.mark.slow
def test_bits_report_is_the_same_with_the_cache_cold_warm_and_off(cache, monkeypatch):
    from rngcert.pipeline.certify_bits import certify_streams
    from rngcert.pipeline.parallel import Plan
    from rngcert.simulate.sources import generate_bits

    streams = generate_bits("pcg64", 4000, seed=11, streams=3)

    def two_level():
        return certify_streams(streams, source={"generator": "pcg64"}, figures=False, plan=Plan(workers=1)).report["tables"][0]["two_level"]

    cold = two_level()
    assert len(list(cache.glob("*.json"))) >= 5
    lawcache.cached_law.cache_clear()
    nulllaw.pvalue_law.cache_clear()
    warm = two_level()
    monkeypatch.setenv("RNGCERT_CACHE", "off")
    lawcache.cached_law.cache_clear()
    nulllaw.pvalue_law.cache_clear()
    assert cold == warm == two_level()


@pytest.mark.slow
def test_laws_on_disk_are_no_work_items(cache, monkeypatch):
    """On workers the laws the streams name are work items after the streams, unless on disk."""
    import rngcert.pipeline.certify_bits as cb
    from rngcert.pipeline.parallel import Plan
    from rngcert.simulate.sources import generate_bits

    streams = generate_bits("pcg64", 4000, seed=11, streams=3)
    serial = cb.certify_streams(streams, source={"generator": "pcg64"}, figures=False, plan=Plan(workers=1))  # fills the cache
    seen = []

    def fake_map(func, items, *, plan=None, progress=None, **kw):
        items = list(items)
        seen.append((func.__name__, len(items)))
        return [func(it) for it in items]

    monkeypatch.setattr(cb, "map_items", fake_map)
    par = cb.certify_streams(streams, source={"generator": "pcg64"}, figures=False, plan=Plan(workers=2))
    assert seen == [("_stream_item", 3)]  # every stream on the workers, no law
    assert par.report["tables"][0]["two_level"] == serial.report["tables"][0]["two_level"]
