"""Simulated sources: bit generators by name, seeded from one recorded :class:`SeedSequence`.

The name table follows ``numpy/random/_pickle.py``: a fixed dictionary, and an unknown name
raises an error listing the valid ones. numpy's own generators come from numpy, the rest from
randomgen; each is wrapped in ``numpy.random.Generator`` (randomgen's own Generator was removed in
randomgen 1.23). Streams are only reproducible on the same numpy/randomgen versions, so reports
record both next to the seed.
"""

from __future__ import annotations

import importlib
from typing import Callable, Mapping

import numpy as np

from rngcert.collect.bits import pack_bits, words_to_bits
from rngcert.errors import InputError, NoDataError
from rngcert.seeding import root, sequence

#: name -> (module, bit generator class, bits per raw word). numpy's five and randomgen's seedable
#: generators with uniform raw output (randomgen's DSFMT is left out: its raw output is the
#: 52-bit mantissa of a double, not 64 uniform bits; RDRAND cannot be seeded).
_TABLE: dict[str, tuple[str, str, int]] = {
    "mt19937": ("numpy.random", "MT19937", 32),
    "pcg64": ("numpy.random", "PCG64", 64),
    "pcg64dxsm": ("numpy.random", "PCG64DXSM", 64),
    "philox": ("numpy.random", "Philox", 64),
    "sfc64": ("numpy.random", "SFC64", 64),
    "aes": ("randomgen", "AESCounter", 64),
    "chacha": ("randomgen", "ChaCha", 64),
    "threefry": ("randomgen", "ThreeFry", 64),
    "speck128": ("randomgen", "SPECK128", 64),
    "hc128": ("randomgen", "HC128", 64),
    "blabla": ("randomgen", "BlaBla", 64),
    "xoshiro256": ("randomgen", "Xoshiro256", 64),
    "xoshiro512": ("randomgen", "Xoshiro512", 64),
    "xoroshiro128": ("randomgen", "Xoroshiro128", 64),
    "xorshift1024": ("randomgen", "Xorshift1024", 64),
    "jsf": ("randomgen", "JSF", 64),
    "lxm": ("randomgen", "LXM", 64),
    "efiix64": ("randomgen", "EFIIX64", 64),
    "lcg128mix": ("randomgen", "LCG128Mix", 64),
    "mt64": ("randomgen", "MT64", 64),
    "sfmt": ("randomgen", "SFMT", 64),
    "romu": ("randomgen", "Romu", 64),
    "squares": ("randomgen", "Squares", 64),
    "tyche": ("randomgen", "Tyche", 64),
    "mwc128x": ("randomgen", "MWC128X", 64),
    "mwc192x": ("randomgen", "MWC192X", 64),
    "pcg32": ("randomgen", "PCG32", 32),
    "mwc128x32": ("randomgen", "MWC128X32", 32),
    "mwc64x32": ("randomgen", "MWC64X32", 32),
}


class _Generators(Mapping):
    """name -> (bit generator class, bits per raw word), the class imported when it is looked up: randomgen
    (about 0.02 CPU-s to import) only for its own generators, not for numpy's ``rngcert bits --source pcg64``."""

    def __getitem__(self, name: str) -> tuple[type, int]:
        module, attr, width = _TABLE[name]
        return getattr(importlib.import_module(module), attr), width

    def __iter__(self):
        return iter(_TABLE)

    def __len__(self) -> int:
        return len(_TABLE)


#: name -> (bit generator class, bits per raw word), as :data:`_TABLE` says.
BIT_GENERATORS: Mapping[str, tuple[type, int]] = _Generators()


def _name_iv(name: str) -> str:
    key = str(name).lower()
    if key not in BIT_GENERATORS:
        raise InputError(f"{name!r} is not a known bit generator; valid names: "
                         f"{', '.join(sorted(BIT_GENERATORS))}")
    return key


def _seed_iv(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        raise InputError("seed is required (an int or numpy.random.SeedSequence); rngcert never "
                         "seeds from fresh entropy implicitly")
    try:
        return sequence(seed)
    except (TypeError, ValueError) as e:
        raise InputError(f"seed={seed!r} is not a valid SeedSequence entropy: {e}") from None


def bit_generator(name: str, seed) -> np.random.BitGenerator:
    """Instantiate a bit generator by name.

    Parameters
    ----------
    name : str
        A key of :data:`BIT_GENERATORS` (case-insensitive), e.g. ``"pcg64"``, ``"philox"``.
    seed : int or numpy.random.SeedSequence
        Required; record ``SeedSequence.entropy`` for reproducibility.

    Raises
    ------
    InputError
        Unknown name (the message lists the valid names) or invalid seed.
    """
    cls, _ = BIT_GENERATORS[_name_iv(name)]
    return cls(_seed_iv(seed))




def seed_sequence(seed: int | None) -> np.random.SeedSequence:
    """The run's root seed (:func:`rngcert.seeding.root`)."""
    return root(seed)


def generator(name: str, seed) -> np.random.Generator:
    """``numpy.random.Generator`` on bit generator ``name`` seeded from ``seed``."""
    return np.random.Generator(bit_generator(name, seed))


def versions() -> dict[str, str]:
    """numpy and randomgen versions (streams are reproducible only on the same versions)."""
    import randomgen

    return {"numpy": np.__version__, "randomgen": randomgen.__version__}


def _bits_from(bg: np.random.BitGenerator, width: int, n: int) -> np.ndarray:
    k = -(-n // width)
    raw = bg.random_raw(k)
    return words_to_bits(raw, width)[:n]


def generate_bits(name: str, n: int, *, seed, streams: int | None = None,
                  packed: bool = False) -> np.ndarray:
    """Bits from a named bit generator.

    Parameters
    ----------
    name : str
        See :data:`BIT_GENERATORS`.
    n : int
        Bits per stream (>= 1).
    seed : int or numpy.random.SeedSequence
        Root seed. With ``streams=None`` the generator is seeded with it directly; otherwise
        stream i uses ``SeedSequence(seed).spawn(streams)[i]`` (independent child streams).
    streams : int, optional
        Number of streams m.
    packed : bool
        Return bits packed MSB first (``numpy.packbits``), last byte zero-padded when n is not a
        multiple of 8.

    Returns
    -------
    ndarray of uint8
        (n,) or (m, n) of 0/1; packed: (ceil(n/8),) or (m, ceil(n/8)).
    """
    key = _name_iv(name)
    cls, width = BIT_GENERATORS[key]
    if int(n) != n or n < 1:
        raise InputError(f"n={n!r}; a positive number of bits is required")
    n = int(n)
    ss = _seed_iv(seed)
    if streams is None:
        out = _bits_from(cls(ss), width, n)
    else:
        if int(streams) != streams or streams < 1:
            raise InputError(f"streams={streams!r}; a positive integer is required")
        out = np.empty((int(streams), n), dtype=np.uint8)
        for i, child in enumerate(ss.spawn(int(streams))):  # loop over streams only
            out[i] = _bits_from(cls(child), width, n)
    return pack_bits(out) if packed else out


def wrap_callable(next_raw: Callable[[], int], bits: int = 64) -> np.random.BitGenerator:
    """Wrap a foreign source of raw words as a bit generator (randomgen ``UserBitGenerator``).

    Parameters
    ----------
    next_raw : callable
        ``next_raw()`` returns the next raw word as a Python int in [0, 2**bits).
    bits : {32, 64}

    Returns
    -------
    randomgen.UserBitGenerator
        Usable by ``numpy.random.Generator`` and by every rngcert simulator. Its ``state``
        raises NotImplementedError (no state getter is provided).

    Notes
    -----
    Exceptions raised inside ``next_raw`` are swallowed by the C callback (randomgen prints
    "Exception ignored" and repeats a value), so a finite source must not rely on raising:
    use :class:`FiniteWordSource`, which records exhaustion and is checked afterwards.
    """
    if bits not in (32, 64):
        raise InputError(f"bits={bits!r}; allowed: 32, 64")
    import randomgen

    return randomgen.UserBitGenerator(lambda _voidp: next_raw(), bits=bits)


class FiniteWordSource:
    """A finite array of raw words (e.g. a device dump) exposed as a bit generator.

    Parameters
    ----------
    words : (k,) array_like of unsigned int
    bits : {32, 64}

    Notes
    -----
    Past the last word the generator never wraps around or replays: it records the overrun
    and yields filler words (splitmix64 of the overrun count, so that rejection samplers such
    as ``Generator.integers`` still terminate; a constant filler would make them loop
    forever); :meth:`check` (call it after drawing) then raises InputError, so filler never
    reaches a result. ``with`` blocks call it on exit. randomgen cannot propagate an exception
    from inside the callback (it prints "Exception ignored" and repeats a value), hence this
    design.

    Examples
    --------
    >>> words = np.random.PCG64(1).random_raw(10)
    >>> src = FiniteWordSource(words)
    >>> with src:
    ...     x = np.random.Generator(src.bit_generator).integers(0, 37, size=3)
    >>> src.used <= 10
    True
    """

    def __init__(self, words, bits: int = 64):
        if bits not in (32, 64):
            raise InputError(f"bits={bits!r}; allowed: 32, 64")
        w = np.asarray(words)
        if w.ndim != 1 or w.size == 0:
            raise NoDataError("FiniteWordSource needs a non-empty one-dimensional array of words")
        self._words = [int(v) for v in w.astype(np.uint64)]
        self._pos = 0
        self.overrun = 0
        self.bits = bits
        import randomgen

        self.bit_generator = randomgen.UserBitGenerator(self._next, bits=bits)

    def _next(self, _voidp=None) -> int:
        if self._pos < len(self._words):
            v = self._words[self._pos]
            self._pos += 1
            return v
        self.overrun += 1
        return _splitmix64(self.overrun)

    @property
    def used(self) -> int:
        return self._pos

    @property
    def remaining(self) -> int:
        return len(self._words) - self._pos

    def check(self) -> None:
        """Raise InputError if more words were drawn than the source holds."""
        if self.overrun:
            raise InputError(f"the raw source was exhausted: {len(self._words)} words available, "
                             f"{len(self._words) + self.overrun} drawn; it is never rewound or "
                             "replayed")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.check()
        return False


def _splitmix64(i: int) -> int:
    z = (i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


# ---- sources with known defects, for calibration and demonstrations -------------------------

def biased_bits(n: int, p1: float, *, rng: np.random.Generator) -> np.ndarray:
    """(n,) i.i.d. bits with P(1) = p1 (a biased source)."""
    if not 0.0 <= p1 <= 1.0:
        raise InputError(f"p1={p1!r}; a probability in [0, 1] is required")
    return (rng.random(int(n)) < p1).astype(np.uint8)


def markov_bits(n: int, p_same: float, *, rng: np.random.Generator) -> np.ndarray:
    """(n,) fair bits with serial correlation: each bit repeats the previous with prob p_same."""
    if not 0.0 <= p_same <= 1.0:
        raise InputError(f"p_same={p_same!r}; a probability in [0, 1] is required")
    flips = (rng.random(int(n)) >= p_same).astype(np.uint8)
    flips[0] = rng.integers(0, 2)
    return (np.cumsum(flips) & 1).astype(np.uint8)


def short_period_bit_generator(period_words: int, *, seed) -> np.random.BitGenerator:
    """A 32-bit generator with a short period: it cycles through ``period_words`` fixed words.

    Models an RNG with a tiny state space (period ``32 * period_words`` bits); the words are
    drawn once from PCG64 seeded with ``seed``.
    """
    if int(period_words) != period_words or period_words < 1:
        raise InputError(f"period_words={period_words!r}; a positive integer is required")
    words = [int(v) for v in np.random.PCG64(_seed_iv(seed)).random_raw(int(period_words))
             & 0xFFFFFFFF]
    state = {"i": 0}

    def nxt(_voidp=None):
        v = words[state["i"]]
        state["i"] = (state["i"] + 1) % len(words)
        return v

    import randomgen

    return randomgen.UserBitGenerator(nxt, bits=32)
