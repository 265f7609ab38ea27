"""The exact null laws of the SP 800-22 p-values, kept on disk between runs.

:func:`rngcert.stats.nist.nulllaw.pvalue_law` computes, for one test at one sequence length n,
the law of its p-value under H0 (case c02). At n = 10**6 the laws of one run cost about 5 s and
1 GB, the same in every process. They depend only on (test, n, parameters, alpha) and on the code
that computes them, so they are kept in a cache folder:

* where: ``$RNGCERT_CACHE/nulllaw`` when that variable is set (``off``, ``0``, ``no``, ``none``
  or empty: no disk cache), else ``$XDG_CACHE_HOME/rngcert/nulllaw`` (default
  ``~/.cache/rngcert/nulllaw``), beside the verdict-power cache of
  :func:`rngcert.battery.cachedir.cache_dir`;
* one small JSON file per law, named by the SHA-256 of its key: the test, n, the parameters,
  alpha, and a fingerprint of the code (the SHA-256 of the sources of
  ``rngcert/stats/nist/*.py`` and the cache format version), so an edited law is computed again
  and never read stale;
* safe against concurrent writers: each file is written to a temporary file in the same folder
  and renamed over the name (``os.replace``, atomic), so a reader sees an old whole file or a new
  whole file; the file carries the SHA-256 of its law, and a file that does not parse, names
  another key or fails that check is computed again and rewritten (never trusted);
* a folder that cannot be written (a read-only home) only costs the time: the laws are computed
  as before. A cache hit gives the very numbers the computation gives (floats are written with
  ``repr``, which round-trips exactly).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from rngcert.battery.cachedir import cache_dir
from rngcert.stats.nist import nulllaw

__all__ = ["cache_folder", "cached_law", "is_cached", "law_for_result", "CACHE_FORMAT"]

#: Version of the file format (part of every key).
CACHE_FORMAT = 1


def cache_folder() -> Path | None:
    """The folder of the cached laws.

    Returns
    -------
    Path or None
        ``$RNGCERT_CACHE/nulllaw``, else ``$XDG_CACHE_HOME/rngcert/nulllaw`` (default
        ``~/.cache/rngcert/nulllaw``); None when ``RNGCERT_CACHE`` turns the cache off.
    """
    d = cache_dir()
    return None if d is None else d / "nulllaw"


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """SHA-256 of the sources that compute the laws (every module of rngcert.stats.nist) and of
    the constants they use: an edit of any of them makes every cached law stale."""
    h = hashlib.sha256(f"format {CACHE_FORMAT}".encode())
    h.update(repr((nulllaw.MC_REPLICATES, nulllaw.MC_ENTROPY, nulllaw.DFT_MC_BUDGET, nulllaw.DFT_MC_MIN, nulllaw.LARGE_N)).encode())
    folder = Path(nulllaw.__file__).parent
    for p in sorted(folder.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _law_doc(law: nulllaw.PValueLaw) -> dict:
    return {"kind": law.kind, "bins": list(law.bins) if law.bins is not None else None, "pass_probability": law.pass_probability,
            "alpha": law.alpha, "method": law.method, "replicates": law.replicates, "reason": law.reason}


def _digest(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _from_doc(doc: dict) -> nulllaw.PValueLaw:
    bins = doc["bins"]
    return nulllaw.PValueLaw(str(doc["kind"]), tuple(float(b) for b in bins) if bins is not None else None,
                             None if doc["pass_probability"] is None else float(doc["pass_probability"]), float(doc["alpha"]),
                             str(doc["method"]), None if doc["replicates"] is None else int(doc["replicates"]),
                             None if doc["reason"] is None else str(doc["reason"]))


def _key_doc(key: str, n: int, params: tuple, alpha: float) -> list:
    return [CACHE_FORMAT, _code_fingerprint(), str(key), int(n), json.loads(json.dumps(list(params))), float(alpha)]


def _file_of(key_doc: list) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    return folder / (hashlib.sha256(json.dumps(key_doc).encode()).hexdigest()[:40] + ".json")


def _read(path: Path, key_doc: list) -> nulllaw.PValueLaw | None:
    """The law in ``path`` when the file is whole, names this key and passes its check; else None."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("key") != key_doc or _digest(doc["law"]) != doc.get("sha256"):
            return None
        return _from_doc(doc["law"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, key_doc: list, law: nulllaw.PValueLaw) -> None:
    """Write whole to a temporary file, then rename over ``path`` (atomic); a failure only costs time."""
    doc = _law_doc(law)
    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".law-", suffix=".tmp", delete=False, encoding="utf-8") as tmp:
            tmp_name = tmp.name
            json.dump({"key": key_doc, "law": doc, "sha256": _digest(doc)}, tmp)
        os.replace(tmp_name, path)
    except OSError:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass


@functools.lru_cache(maxsize=512)
def cached_law(key: str, n: int, params: tuple = (), alpha: float = 0.01) -> nulllaw.PValueLaw:
    """:func:`rngcert.stats.nist.nulllaw.pvalue_law`, read from the disk cache when a valid entry
    is there, else computed and stored (see the module docstring).

    Parameters
    ----------
    key, n, params, alpha
        As in :func:`~rngcert.stats.nist.nulllaw.pvalue_law`.

    Returns
    -------
    PValueLaw
        Equal, field by field, to what :func:`~rngcert.stats.nist.nulllaw.pvalue_law` returns.
    """
    key_doc = _key_doc(key, n, params, alpha)
    path = _file_of(key_doc)
    if path is not None:
        law = _read(path, key_doc)
        if law is not None:
            return law
    law = nulllaw.pvalue_law(key, int(n), tuple(params), float(alpha))
    if path is not None:
        _write(path, key_doc, law)
    return law


def is_cached(key: str, n: int, params: tuple = (), alpha: float = 0.01) -> bool:
    """Whether a valid entry for the law is on disk (so that no work item need compute it).

    Parameters
    ----------
    key, n, params, alpha
        As in :func:`cached_law`.

    Returns
    -------
    bool
    """
    key_doc = _key_doc(key, n, params, alpha)
    path = _file_of(key_doc)
    return path is not None and _read(path, key_doc) is not None


def law_for_result(result, alpha: float = 0.01) -> nulllaw.PValueLaw:
    """:func:`rngcert.stats.nist.nulllaw.law_for_result` through the disk cache.

    Parameters
    ----------
    result : TestResult
        A first-level SP 800-22 result.
    alpha : float

    Returns
    -------
    PValueLaw
        The callable :func:`rngcert.stats.nist.twolevel.two_level` takes as ``null_law``.
    """
    if not result.name.startswith("nist_"):
        return nulllaw.law_for_result(result, alpha)
    try:
        key, params = nulllaw.law_params(result.name, result.details)
    except (KeyError, TypeError, ValueError):
        return nulllaw.law_for_result(result, alpha)  # the "unknown" law, with its reason
    return cached_law(key, int(result.n), params, float(alpha))
