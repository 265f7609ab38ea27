"""The one place random streams are made (DESIGN §2 "Reproducible randomness").

Every Monte Carlo p-value, every simulated shoe and every power simulation draws from
:func:`stream`, ``PCG64(SeedSequence(entropy, spawn_key=(key_of(k1), key_of(k2), ...)))``. A key is
an integer or a name; a name's key is the CRC-32 of the name up to its first ``[`` (so
``pocket_binomial[17]`` and ``pocket_binomial`` share a stream). Because a stream depends only on
the root entropy and its names — never on the order in which streams are made — a table gets the
same p-values alone, inside a multi-table log, in an audit, or on a Dask worker, and adding a test
to a battery changes no other test's stream.

Examples
--------
>>> from rngcert.seeding import stream
>>> a = stream(2026, "table:T1", "sector_scan").integers(0, 37, 3)
>>> b = stream(2026, "table:T1", "sector_scan").integers(0, 37, 3)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import zlib

import numpy as np

from rngcert.errors import InputError

__all__ = ["key_of", "root", "sequence", "stream", "spawn_key", "default_stream", "DEFAULT_ENTROPY"]

#: Root entropy of the stream a statistic of :mod:`rngcert.stats` draws from when it is called
#: without ``rng=`` (:func:`default_stream`): a fixed seed, so such a call always gives the same
#: Monte Carlo p-value. The pipelines always pass a stream of the run's own seed.
DEFAULT_ENTROPY = 0


def key_of(k: int | str) -> int:
    """Spawn-key element of ``k``: an integer as it is, a name as CRC-32 of its stem.

    Parameters
    ----------
    k : int or str
        A non-negative integer, or a name (``"table:T1"``, ``"pocket_chisquare"``).

    Returns
    -------
    int
        In ``[0, 2**32)`` for names.

    Raises
    ------
    InputError
        A negative integer or a key of another type.
    """
    if isinstance(k, str):
        return zlib.crc32(k.split("[", 1)[0].encode())
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 0:
        return int(k)
    raise InputError(f"a stream key must be a name or a non-negative integer, got {k!r}")


def spawn_key(*key: int | str) -> tuple[int, ...]:
    """The ``SeedSequence`` spawn key of a stream: ``tuple(key_of(k) for k in key)``."""
    return tuple(key_of(k) for k in key)


def root(seed: int | None) -> np.random.SeedSequence:
    """The run's root seed: ``SeedSequence(seed)``, or fresh OS entropy when ``seed`` is None.

    The caller records ``root(seed).entropy`` in the report so that the run can be repeated.

    Raises
    ------
    InputError
        ``seed`` is not a non-negative integer.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(seed)


def sequence(entropy, *key: int | str) -> np.random.SeedSequence:
    """The ``SeedSequence`` of the stream named by ``key``: ``SeedSequence(entropy, spawn_key=spawn_key(*key))``.

    For the callers that need the sequence itself rather than a generator on PCG64: a bit
    generator chosen by name (:func:`rngcert.simulate.sources.bit_generator`), or the i-th child
    of a root (``sequence(entropy, i)`` is ``SeedSequence(entropy).spawn(m)[i]`` for a fresh root).

    Parameters
    ----------
    entropy : int or sequence of int
        Root entropy, as :class:`numpy.random.SeedSequence` takes it.
    *key : int or str
        The stream's name (none: the root itself).

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.seeding import sequence
    >>> child = np.random.SeedSequence(7).spawn(3)[2]
    >>> bool((sequence(7, 2).generate_state(4) == child.generate_state(4)).all())
    True
    """
    return np.random.SeedSequence(entropy, spawn_key=spawn_key(*key))


def stream(entropy: int, *key: int | str) -> np.random.Generator:
    """Independent random stream named by ``key`` under the root ``entropy``.

    Parameters
    ----------
    entropy : int
        Root entropy (``root(seed).entropy``), recorded in every report.
    *key : int or str
        The stream's name, e.g. ``("table:T1", "sector_scan")``.

    Returns
    -------
    numpy.random.Generator
        On PCG64 seeded from ``SeedSequence(entropy, spawn_key=spawn_key(*key))``.

    Raises
    ------
    TypeError
        ``entropy`` is not an integer: a float (``stream(1.5)`` was silently ``stream(1)``), a
        bool or None. Its decimal string, as report.json records it (``"2026"``), is read as the
        integer.
    rngcert.errors.InputError
        (a ``ValueError``) ``entropy`` is negative, or a string that is not a decimal integer.
    """
    return np.random.Generator(np.random.PCG64(sequence(_entropy_iv(entropy), *key)))


def _entropy_iv(entropy) -> int:
    """``entropy`` as a Python int >= 0 (an int, a numpy integer or its decimal string), or the error naming it."""
    if isinstance(entropy, str):
        if not entropy.strip().isdecimal():
            raise InputError(f"stream(): entropy must be a non-negative integer, got {entropy!r}")
        return int(entropy)
    if isinstance(entropy, bool) or not isinstance(entropy, (int, np.integer)):
        raise TypeError(f"stream(): entropy must be a non-negative integer, got {entropy!r} ({type(entropy).__name__})")
    if entropy < 0:
        raise InputError(f"stream(): entropy must be a non-negative integer, got {entropy!r}")
    return int(entropy)


def default_stream(name: str) -> np.random.Generator:
    """The fixed-seed stream of a statistic called without ``rng=``.

    ``stream(DEFAULT_ENTROPY, "rngcert.stats", name)``: the same call of the same function gives
    the same Monte Carlo p-value in every session. For replications that are independent of each
    other (or of a report's), pass ``rng=stream(seed, ...)`` yourself.

    Parameters
    ----------
    name : str
        The statistic's name (its stream key).

    Examples
    --------
    >>> a = default_stream("sector_scan").integers(0, 37, 4)
    >>> bool((a == stream(DEFAULT_ENTROPY, "rngcert.stats", "sector_scan").integers(0, 37, 4)).all())
    True
    """
    return stream(DEFAULT_ENTROPY, "rngcert.stats", name)
