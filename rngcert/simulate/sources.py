"""Simulated sources: bit generators by name, seeded from one recorded :class:`SeedSequence`.

The name table follows ``numpy/random/_pickle.py``: a fixed dictionary, and an unknown name
raises an error listing the valid ones. numpy's own generators come from numpy, the rest from
randomgen; each is wrapped in ``numpy.random.Generator`` (randomgen's own Generator was removed in
randomgen 1.23). Streams are only reproducible on the same numpy/randomgen versions, so reports
record both next to the seed.
"""

from __future__ import annotations

import numpy as np
import randomgen

from rngcert.collect.bits import BIT_GENERATORS as _BITS_TABLE
from rngcert.errors import InputError

#: name → bit-generator class (the table of :mod:`rngcert.collect.bits`, which also records each
#: generator's raw word width). Lower-case names are what the CLI accepts (``--source``).
BIT_GENERATORS = {name: cls for name, (cls, _width) in _BITS_TABLE.items()}


def seed_sequence(seed: int | None) -> np.random.SeedSequence:
    """The run's root seed: ``SeedSequence(seed)``, or fresh OS entropy that the caller records
    (``.entropy``) when ``seed`` is None."""
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(seed)


def bit_generator(name: str, seed_seq: np.random.SeedSequence) -> np.random.BitGenerator:
    """Bit generator ``name`` seeded from ``seed_seq``.

    Raises
    ------
    InputError
        ``name`` is not in :data:`BIT_GENERATORS` (the message lists the valid names).
    """
    key = str(name).lower()
    if key not in BIT_GENERATORS:
        raise InputError(f"{name!r} is not a known bit generator; choose one of: {', '.join(sorted(BIT_GENERATORS))}")
    return BIT_GENERATORS[key](seed_seq)


def generator(name: str, seed_seq: np.random.SeedSequence) -> np.random.Generator:
    """``numpy.random.Generator`` on bit generator ``name`` seeded from ``seed_seq``."""
    return np.random.Generator(bit_generator(name, seed_seq))


def versions() -> dict[str, str]:
    """numpy and randomgen versions (streams are reproducible only on the same versions)."""
    return {"numpy": np.__version__, "randomgen": randomgen.__version__}
