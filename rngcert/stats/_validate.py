"""Input validation shared by the wheel statistics (private: not part of :mod:`rngcert.stats`).

Every public test validates its inputs with these helpers, so the same bad input gets the same
message whichever test sees it first."""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError

_METHODS = ("auto", "asymptotic", "monte-carlo")
_PROB_ATOL = 1e-9
#: Memory bound (number of float64 cells) of one Monte Carlo batch.
_BATCH_CELLS = 2_000_000


def _as_counts(counts, name: str, ndim=(1,)) -> np.ndarray:
    """Validate a count array: integers >= 0, of the allowed dimensions; returns an int64 copy."""
    arr = np.asarray(counts)
    if arr.ndim not in ndim:
        raise InputError(
            f"{name}: counts must have {' or '.join(str(d) for d in ndim)} dimension(s), "
            f"got shape {arr.shape}"
        )
    if arr.size == 0:
        raise InputError(f"{name}: counts is empty")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name}: counts must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            bad = arr[~np.isfinite(arr) | (arr != np.round(arr))].ravel()[0]
            raise InputError(f"{name}: counts must be whole numbers, found {bad!r}")
    if np.any(arr < 0):
        raise InputError(f"{name}: counts must be >= 0, found {arr[arr < 0].ravel()[0]!r}")
    return np.array(arr, dtype=np.int64)


def _as_probs(probs, k: int, name: str) -> np.ndarray:
    """Validate null probabilities: shape (k,), all > 0, summing to 1 within 1e-9."""
    if probs is None:
        return np.full(k, 1.0 / k)
    p = np.array(probs, dtype=float)
    if p.shape != (k,):
        raise InputError(f"{name}: probs must have shape ({k},) like the counts, got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        bad = p[~np.isfinite(p) | (p <= 0)][0]
        raise InputError(
            f"{name}: every null probability must be finite and > 0, found {bad!r} "
            "(a position that cannot occur under H0 does not belong in the wheel definition)"
        )
    s = float(p.sum())
    if abs(s - 1.0) > _PROB_ATOL:
        raise InputError(f"{name}: probs must sum to 1 (tolerance {_PROB_ATOL}), they sum to {s!r}")
    return p / s


def _min_positions(k: int, least: int, name: str) -> None:
    """Refuse a wheel of fewer than ``least`` positions, naming the test and k."""
    if k < least:
        raise InputError(f"{name}: needs k >= {least} positions, got k={k}")


def _method_iv(method: str, name: str) -> str:
    if method not in _METHODS:
        raise InputError(f"{name}: method {method!r} is not one of {_METHODS}")
    return method


def _rng_iv(rng, name: str) -> np.random.Generator:
    """``rng``, or for None the fixed-seed :func:`rngcert.seeding.default_stream` of ``name``."""
    if rng is None:
        from rngcert.seeding import default_stream

        return default_stream(name)
    if not isinstance(rng, np.random.Generator):
        raise InputError(
            f"{name}: a Monte Carlo p-value needs rng=numpy.random.Generator (derived from the "
            f"run's seed), got {rng!r}"
        )
    return rng


def _n_resamples_iv(n_resamples, name: str) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise InputError(f"{name}: n_resamples must be an integer >= 1, got {n_resamples!r}")
    return int(n_resamples)


def _multinomial_batches(n: int, p: np.ndarray, n_resamples: int, rng: np.random.Generator, batch: int | None = None):
    """Yield (b, k) int64 multinomial(n, p) draws, in batches totalling ``n_resamples`` rows (``batch``
    rows each, default a memory bound; the rows are the same whatever the batch)."""
    batch = batch or max(1, _BATCH_CELLS // max(1, p.size))
    done = 0
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        yield rng.multinomial(n, p, size=b)
        done += b
