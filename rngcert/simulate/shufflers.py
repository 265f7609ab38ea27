"""Shuffler implementations, vectorised over many shoes at once.

Every shuffler takes ``shoes``, an integer array of shape ``(n_shoes, n_cards)`` holding card codes
(see :mod:`rngcert.equipment.cards`) with position 0 the *top* of the stack (the first card dealt),
and ``rng``, a :class:`numpy.random.Generator` (build it on a numpy or randomgen bit generator
spawned from the run's recorded ``SeedSequence``; nothing here creates a generator). Each returns
a new array of the same shape and dtype; the input is never modified. No Python loop runs over
cards or shoes except where stated (the deal loops over coups/rounds, vectorised over shoes).

Models and sources
------------------
=====================  =====================================================================
``fisher_yates``       uniform permutation (the ideal); Durstenfeld (1964), Knuth TAOCP 2 §3.4.2
``sattolo``            uniform random *cyclic* permutation (Sattolo 1986): no card stays in place
``naive_swap``         the "swap every card with any card" bug (Robbins & Bolker 1981): biased
``riffle``             Gilbert–Shannon–Reeds riffle and its Markov "clumpy" generalisation
``grab_riffle``        casino table riffle "once by deck": grabs from two piles, riffled
``overhand``/``strip`` Pemantle (1989) overhand model: random packets, packet order reversed
``box``                packets of fixed size, order reversed (deterministic box shuffle)
``cut``                cut at a uniform position in [lo, hi]
``wash``               wash / chemmy smoosh: Thurstone random-key model with clumps
``pile``               pile (deal-into-piles) shuffle
``shelf``              Diaconis–Fulman–Holmes (2013) shelf shuffler (10 shelves)
``csm``                continuous shuffling machine: compartments, cards inserted at random
``deal_pickup_*``      the deal and pickup (re-exported from :mod:`rngcert.simulate.deal`)
=====================  =====================================================================

Card orientation
----------------
Shufflers move values and never look at them, so a card's orientation travels with it when it is
carried in bit :data:`ROTATED` (1024) of its code: :func:`wash` with ``rotate > 0`` turns clumps
end for end by flipping that bit. Codes handed to the statistics must have it stripped
(``code & CODE_MASK``); :mod:`rngcert.simulate.procedure` does that.
"""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError

__all__ = [
    "fisher_yates", "sattolo", "naive_swap", "riffle", "gsr_riffle", "grab_riffle", "overhand", "strip", "box", "cut",
    "wash", "pile", "shelf", "csm", "deal_pickup_baccarat", "deal_pickup_blackjack", "inverse_permutation",
    "ROTATED", "CODE_MASK",
]

#: Bit of a card code that carries its orientation (turned end for end) during a simulation.
ROTATED = 1024
#: Mask that strips the orientation bit: ``code & CODE_MASK`` is the card code.
CODE_MASK = ROTATED - 1


# ----------------------------------------------------------------------------- helpers
def _shoes_iv(shoes) -> np.ndarray:
    a = np.asarray(shoes)
    if a.ndim == 1:
        raise InputError(f"shoes must be 2-D (n_shoes, n_cards); got 1-D of length {a.size} (use x[None, :])")
    if a.ndim != 2 or a.shape[1] < 2:
        raise InputError(f"shoes must have shape (n_shoes, n_cards >= 2), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"shoes must hold integer card codes, got dtype {a.dtype}")
    return a


def _rng_iv(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _prob_iv(name, p, lo=0.0, hi=1.0, *, open_lo=False):
    p = float(p)
    if not np.isfinite(p) or p > hi or p < lo or (open_lo and p == lo):
        raise InputError(f"{name} must be in {'(' if open_lo else '['}{lo}, {hi}], got {p!r}")
    return p


def _int_iv(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
        rng_txt = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise InputError(f"{name} must be an integer {rng_txt}, got {v!r}")
    return int(v)


def _gather(shoes: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``out[i, j] = shoes[i, idx[i, j]]``, by one flat ``take`` (the row offsets added to the
    indices; no broadcast index arrays as ``take_along_axis`` builds)."""
    m, n = shoes.shape
    flat = np.add(idx, (np.arange(m, dtype=np.intp) * n)[:, None], dtype=np.intp)
    return np.ascontiguousarray(shoes).ravel().take(flat).reshape(m, n)


def _scatter(shoes: np.ndarray, dest: np.ndarray) -> np.ndarray:
    """``out[i, dest[i, j]] = shoes[i, j]`` (dest a permutation in every row)."""
    out = np.empty_like(shoes)
    np.put_along_axis(out, dest.astype(np.intp, copy=False), shoes, axis=1)
    return out


def _interleave(shoes: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Merge the top packet (``#zeros`` cards) and the rest along a drop pattern.

    ``bits[i, j] == 0`` means output position j receives the next card of the top packet,
    ``1`` the next card of the bottom packet; both packets keep their internal order.
    """
    n = shoes.shape[1]
    b = bits.astype(np.int16, copy=False)
    ones = np.cumsum(b, axis=1, dtype=np.int16)
    pos = np.arange(1, n + 1, dtype=np.int16)
    zeros = pos - ones
    top = zeros[:, -1:]
    idx = np.where(b == 0, zeros - 1, top + ones - 1)
    return _gather(shoes, idx)


def inverse_permutation(perm: np.ndarray) -> np.ndarray:
    """Row-wise inverse of permutations of ``0..n-1`` (shape (m, n))."""
    perm = np.asarray(perm)
    inv = np.empty_like(perm)
    rows = np.arange(perm.shape[0])[:, None]
    inv[rows, perm] = np.arange(perm.shape[1], dtype=perm.dtype)
    return inv


def _radix_argsort(keys: np.ndarray) -> np.ndarray:
    """Stable row-wise argsort; int16 keys use numpy's O(n) radix sort."""
    return np.argsort(keys, axis=1, kind="stable")


# ----------------------------------------------------------------------------- shufflers
def fisher_yates(shoes, rng: np.random.Generator) -> np.ndarray:
    """Uniformly random permutation of every shoe (the ideal shuffle).

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator

    Returns
    -------
    (n_shoes, n_cards) ndarray

    References
    ----------
    .. [1] Durstenfeld, R. (1964) "Algorithm 235: Random permutation", CACM 7(7), 420.
    .. [2] Knuth, D. E., *The Art of Computer Programming* vol. 2, §3.4.2, Algorithm P.
       (``Generator.permuted`` runs Algorithm P on each row.)
    """
    return _rng_iv(rng).permuted(_shoes_iv(shoes), axis=1)


def sattolo(shoes, rng: np.random.Generator) -> np.ndarray:
    """Sattolo's algorithm: a uniformly random *cyclic* permutation of every shoe.

    The classic off-by-one of Fisher–Yates (swap ``a[i]`` with ``a[j]``, ``j < i`` instead of
    ``j <= i``) yields one of the (n-1)! permutations with a single cycle: no card is ever left
    where it was. A held-out fault model for electronic shufflers.

    Parameters
    ----------
    shoes, rng
        As :func:`fisher_yates`.

    Returns
    -------
    (n_shoes, n_cards) ndarray
        ``out[i, j] = shoes[i, c_i[j]]`` with ``c_i`` a uniform n-cycle (``c_i[j] != j``).

    Notes
    -----
    Vectorised by the cycle's description: with ``pi`` a uniform permutation, the map
    ``pi[k] -> pi[k+1 mod n]`` is a uniform n-cycle, which is the law of Sattolo's output [1]_ [2]_.

    References
    ----------
    .. [1] Sattolo, S. (1986) "An algorithm to generate a random cyclic permutation",
       Inform. Process. Lett. 22(6), 315-317.
    .. [2] Wilson, M. C. (2005) "Overview of Sattolo's algorithm", INRIA research report 5542.
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    m, n = a.shape
    pi = rng.permuted(np.tile(np.arange(n, dtype=np.intp), (m, 1)), axis=1)
    src = np.empty_like(pi)
    np.put_along_axis(src, pi, np.roll(pi, -1, axis=1), axis=1)
    return _gather(a, src)


def naive_swap(shoes, rng: np.random.Generator) -> np.ndarray:
    """The naive exchange shuffle: for every position i, swap card i with a card chosen anywhere.

    ``for i in range(n): j = randint(0, n - 1); swap(a[i], a[j])`` gives n^n equally likely
    swap sequences, which cannot spread evenly over the n! orders: some orders are far more
    likely than others (the identity is the most likely for large n [2]_). A held-out fault model
    for electronic shufflers.

    Parameters
    ----------
    shoes, rng
        As :func:`fisher_yates`; returns the shuffled shoes, shape ``(n_shoes, n_cards)``.

    Notes
    -----
    The swaps are sequential by nature: the loop runs over the n positions, each step
    vectorised over shoes.

    References
    ----------
    .. [1] Robbins, D. P. and Bolker, E. D. (1981) "The bias of three pseudo-random shuffles",
       Aequationes Math. 22, 268-292.
    .. [2] Goldstein, D. and Moews, D. (2003) "The identity is the most likely exchange shuffle
       for large n", Aequationes Math. 65, 3-30.
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    m, n = a.shape
    out = a.copy()
    rows = np.arange(m)
    js = rng.integers(0, n, size=(n, m))
    for i in range(n):  # sequential swaps (the algorithm under test), vectorised over shoes
        j = js[i]
        ai = out[:, i].copy()
        out[:, i] = out[rows, j]
        out[rows, j] = ai
    return out


def riffle(shoes, rng: np.random.Generator, *, switch: float = 0.5, times: int = 1) -> np.ndarray:
    """Riffle shuffle: the Gilbert–Shannon–Reeds model, or its Markov "clumpy" generalisation.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    switch : float in (0, 1], default 0.5
        Probability that the next dropped card comes from the other hand than the previous one.
        ``0.5`` makes the drop pattern i.i.d. fair bits, which is exactly the GSR riffle (the cut
        is Binomial(n, 1/2) and every interleaving of the two packets equally likely). Values
        below 0.5 drop cards in clumps (typical of hand riffles), above 0.5 alternate more
        regularly (1 = a perfect alternation given the first hand).
    times : int >= 1
        Number of successive riffles.

    Returns
    -------
    (n_shoes, n_cards) ndarray

    Notes
    -----
    The drop pattern ``b_1..b_n`` (0 = top packet, 1 = bottom packet) is a two-state Markov chain
    with ``b_1`` fair and ``P(b_{j+1} != b_j) = switch``; the top packet is the first
    ``#{j: b_j = 0}`` cards. With ``switch = 0.5`` the pattern is uniform over {0,1}^n, which is
    the GSR a=2 shuffle of [1] (equivalently the inverse-shuffle description). The Markov
    model is the one-parameter alternative Shinn (2017) fitted to his recorded hand riffles [3].

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992) "Trailing the dovetail shuffle to its lair",
       Ann. Appl. Probab. 2(2), 294-313.
    .. [2] Gilbert, E. (1955) "Theory of shuffling", Bell Labs technical memorandum;
       Reeds, J. (1981) unpublished manuscript.
    .. [3] Shinn, M. (2017) "How you should be shuffling cards", blog post and data
       (github.com/mwshinn/blog, res/shuffle/).
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    switch = _prob_iv("switch", switch, 0.0, 1.0, open_lo=True)
    times = _int_iv("times", times, 1)
    out = a
    for _ in range(times):
        if switch == 0.5:
            bits = rng.integers(0, 2, size=a.shape, dtype=np.int8)
        else:
            sw = (rng.random(a.shape, dtype=np.float32) < switch).astype(np.int8)
            sw[:, 0] = rng.integers(0, 2, size=a.shape[0], dtype=np.int8)
            bits = (np.cumsum(sw, axis=1, dtype=np.int16) & 1).astype(np.int8)
        out = _interleave(out, bits)
    return out


def gsr_riffle(shoes, rng: np.random.Generator, *, times: int = 1) -> np.ndarray:
    """``times`` Gilbert–Shannon–Reeds riffles (:func:`riffle` with ``switch=0.5``).

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313.
    """
    return riffle(shoes, rng, switch=0.5, times=times)


def grab_riffle(shoes, rng: np.random.Generator, *, grab: int = 52, times: int = 1) -> np.ndarray:
    """Casino "table riffle once by deck": riffle grabs taken from two equal piles.

    The shoe is split into two equal piles (top half, bottom half). The dealer repeatedly takes
    ``grab // 2`` cards from the top of each pile, riffles the two grabs together and puts the
    result on a new stack (first riffled grab at the bottom, as it is set down first). This is
    the procedure of the baccarat rules 004 §2 rule 3.2.1 ("restacked forming two equal piles and
    'table riffle' shuffled once by deck") with grab = one deck.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
        ``n_cards`` must be a multiple of ``grab``.
    rng : numpy.random.Generator
    grab : int, even, default 52
        Cards per riffle (half from each pile).
    times : int >= 1, default 1
        How many times the whole stack is riffled this way.

    Returns
    -------
    (n_shoes, n_cards) ndarray

    Notes
    -----
    Each riffle interleaves the two fixed-size grabs uniformly at random, which is the GSR
    riffle conditioned on its cut [1]; a real hand riffle is clumpier (see :func:`riffle`).
    Card positions cannot move between grabs, which is the zone structure shuffle trackers
    follow.

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313 (uniform
       interleaving given the cut).
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    grab = _int_iv("grab", grab, 2)
    times = _int_iv("times", times, 1)
    m, n = a.shape
    if grab % 2 or n % grab:
        raise InputError(f"grab must be even and divide the shoe size {n}, got {grab}")
    g = n // grab
    h = grab // 2
    out = a
    for _ in range(times):
        pattern = np.tile(np.repeat(np.array([0, 1], dtype=np.int8), h), (m * g, 1))
        rng.permuted(pattern, axis=1, out=pattern)  # uniform interleaving per grab (in place: the same draws)
        pattern = pattern.reshape(m, g, grab)
        ones = np.cumsum(pattern, axis=2, dtype=np.int16)
        # grab k: left pile cards k*h.. (the zeros so far), right pile n/2 + k*h.. (the ones so far)
        first = (np.arange(g, dtype=np.int16) * h)[None, :, None]
        src = np.where(pattern == 0, np.arange(grab, dtype=np.int16) - ones, ones + np.int16(n // 2 - 1))
        src += first
        # the first grab riffled is set down first, so ends at the bottom of the new stack
        out = _gather(out, src[:, ::-1, :].reshape(m, n))
    return out


def _packet_reverse(a: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    """Reverse the order of packets (boundary[:, j] True: a packet starts at j) keeping insides."""
    m, n = a.shape
    j = np.arange(n, dtype=np.int32)
    b = boundary.copy()
    b[:, 0] = True
    start = np.maximum.accumulate(np.where(b, j, 0), axis=1)
    nxt = np.concatenate([b[:, 1:], np.ones((m, 1), dtype=bool)], axis=1)  # packet ends after j
    end = np.minimum.accumulate(np.where(nxt, j + 1, n)[:, ::-1], axis=1)[:, ::-1]
    dest = (n - end) + (j - start)
    return _scatter(a, dest)


def overhand(shoes, rng: np.random.Generator, *, p: float = 0.1) -> np.ndarray:
    """Overhand shuffle in Pemantle's model: random packets, packet order reversed.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    p : float in (0, 1]
        Probability of a packet break between two adjacent cards (mean packet ``1/p`` cards).

    Returns
    -------
    (n_shoes, n_cards) ndarray

    References
    ----------
    .. [1] Pemantle, R. (1989) "Randomization time for the overhand shuffle", J. Theoret.
       Probab. 2(1), 37-49 (the model: cut between each pair of cards independently with
       probability p, then reverse the order of the packets).
    .. [2] Jonasson, J. (2006) "The overhand shuffle mixes in Θ(n² log n) steps", Ann. Appl.
       Probab. 16(1), 231-243.
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    p = _prob_iv("p", p, 0.0, 1.0, open_lo=True)
    return _packet_reverse(a, rng.random(a.shape, dtype=np.float32) < p)


def strip(shoes, rng: np.random.Generator, *, packet: float = 8.0) -> np.ndarray:
    """Table strip shuffle: packets stripped off the top onto a pile (order of packets reversed).

    Same model as :func:`overhand` with mean packet size ``packet`` (break probability
    ``1/packet``). References as for :func:`overhand` (Pemantle 1989).
    """
    packet = float(packet)
    if not np.isfinite(packet) or packet < 1:
        raise InputError(f"packet must be a mean packet size >= 1, got {packet!r}")
    return overhand(shoes, rng, p=1.0 / packet)


def box(shoes, rng: np.random.Generator | None = None, *, packet: int = 52) -> np.ndarray:
    """Box shuffle: cut the stack into packets of ``packet`` cards and reverse their order.

    Deterministic (``rng`` unused). The last packet is shorter when ``packet`` does not divide
    the shoe. The "box" move of casino procedures; Pemantle's overhand model [1] with fixed
    packet breaks.

    References
    ----------
    .. [1] Pemantle, R. (1989), J. Theoret. Probab. 2(1), 37-49.
    """
    a = _shoes_iv(shoes)
    packet = _int_iv("packet", packet, 1)
    bnd = np.zeros(a.shape, dtype=bool)
    bnd[:, ::packet] = True
    return _packet_reverse(a, bnd)


def cut(shoes, rng: np.random.Generator, *, lo: int = 1, hi: int | None = None) -> np.ndarray:
    """Cut: move the top ``c`` cards to the bottom, ``c`` uniform on ``lo..hi``.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    lo, hi : int
        Range of the cut point, 0 <= lo <= hi <= n_cards (default ``hi = n_cards - 1``). A
        negative ``hi`` counts from the back: ``hi = -52`` is one deck from the back whatever the
        number of decks. For the baccarat cut of 004 §2 rule 3.3.3 ("take all cards in front of the cutting card
        and place them to the back").

    Returns
    -------
    (n_shoes, n_cards) ndarray
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    n = a.shape[1]
    hi = n - 1 if hi is None else hi
    if isinstance(hi, (int, np.integer)) and not isinstance(hi, bool) and hi < 0:
        hi = n + int(hi)
    lo = _int_iv("lo", lo, 0, n)
    hi = _int_iv("hi", hi, lo, n)
    c = rng.integers(lo, hi + 1, size=(a.shape[0], 1))
    return _gather(a, (np.arange(n)[None, :] + c) % n)


def wash(shoes, rng: np.random.Generator, *, intensity: float = 0.5, clump: float = 1.0, rotate: float = 0.0) -> np.ndarray:
    """Wash ("chemmy", "smoosh") shuffle: cards spread face down and pushed around the table.

    rngcert's documented model (no standard published model of the casino wash exists): the
    stack is broken into clumps of mean size ``clump`` cards that stay together; each clump gets
    a random key ``(position of its first card)/n + intensity * Z``, ``Z ~ N(0, 1)``, and the
    cards are regathered in key order (clumps keep their internal order). ``intensity`` is the
    standard deviation of a clump's travel as a fraction of the stack.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    intensity : float >= 0
        0 leaves the order unchanged; as it grows the result tends to a uniformly random
        ordering of the clumps (for ``clump = 1``, to Fisher–Yates), slowly: the key keeps a
        correlation of about 0.29 / intensity with the old position.
    clump : float >= 1
        Mean clump size (clump breaks between adjacent cards with probability 1/clump).
    rotate : float in [0, 1], default 0
        Probability that a clump is turned end for end while it is pushed around: its cards'
        orientation bit :data:`ROTATED` is flipped (the order inside the clump is kept). 0 leaves
        codes untouched; with ``rotate > 0`` codes must be below 1024.

    Returns
    -------
    (n_shoes, n_cards) ndarray

    Notes
    -----
    Ordering items by noisy Gaussian keys is Thurstone's random-utility model [1]. When 16 bits
    resolve 1/20 of a card's spacing (``1 + 12 intensity < 65535 / (20 n)``) keys are clipped at
    ±6 standard deviations and quantised for a stable O(n) radix sort (ties keep the prior
    order); otherwise the float keys are sorted.

    References
    ----------
    .. [1] Thurstone, L. L. (1927) "A law of comparative judgment", Psychological Review 34,
       273-286 (case V: ordering by independent normal utilities).
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    intensity = float(intensity)
    if not np.isfinite(intensity) or intensity < 0:
        raise InputError(f"intensity must be a finite number >= 0, got {intensity!r}")
    clump = float(clump)
    if not np.isfinite(clump) or clump < 1:
        raise InputError(f"clump must be a mean clump size >= 1, got {clump!r}")
    rotate = _prob_iv("rotate", rotate)
    m, n = a.shape
    if intensity == 0 and rotate == 0:
        return a.copy()
    if clump > 1:
        brk = rng.random(a.shape, dtype=np.float32) < 1.0 / clump
        brk[:, 0] = True
        # one normal per clump, spread over the clump's cards in stack order
        gid = np.cumsum(brk.ravel(), dtype=np.int32) - 1
        n_clumps = int(gid[-1]) + 1
        z = rng.standard_normal(n_clumps, dtype=np.float32).take(gid).reshape(a.shape)
        base = np.maximum.accumulate(np.where(brk, np.arange(n, dtype=np.int16), np.int16(0)), axis=1)
        flip = (rng.random(n_clumps, dtype=np.float32) < rotate).take(gid).reshape(a.shape) if rotate > 0 else None
    else:
        z = rng.standard_normal(a.shape, dtype=np.float32)
        base = np.arange(n, dtype=np.int16)[None, :]
        flip = rng.random(a.shape, dtype=np.float32) < rotate if rotate > 0 else None
    if flip is not None:
        if a.min(initial=0) < 0 or a.max(initial=0) >= 2 * ROTATED:
            raise InputError(f"wash with rotate > 0 needs card codes in 0..{2 * ROTATED - 1} (orientation in bit {ROTATED})")
        a = a ^ (flip.astype(a.dtype) << 10)  # bit ROTATED flipped on the turned clumps
        if intensity == 0:
            return a
    # keys = base / n + intensity * z, in float32, one operation at a time in place (the same roundings)
    keys = base.astype(np.float32)
    keys *= np.float32(1.0 / n)
    z *= np.float32(intensity)
    keys = keys + z
    span = 1.0 + 12.0 * intensity  # keys lie in [-6 sd, 1 + 6 sd] except with probability 2e-9
    if span / 65535.0 < 1.0 / (20.0 * n):
        # 16-bit keys resolve 1/20 of a card's spacing: clip at +-6 sd and radix sort
        keys += np.float32(6.0 * intensity)
        keys *= np.float32(65535.0 / span)
        keys -= np.float32(32768.0)
        np.clip(keys, -32768, 32767, out=keys)
        order = _radix_argsort(keys.astype(np.int16))
    else:
        order = np.argsort(keys, axis=1, kind="stable")
    return _gather(a, order)


def pile(shoes, rng: np.random.Generator | None = None, *, piles: int = 7, random_order: bool = False) -> np.ndarray:
    """Pile shuffle: deal the cards one at a time into ``piles`` piles in rotation, then stack them.

    Each dealt card goes face down on top of its pile (so each pile reverses its cards); the
    piles are gathered pile 0 on top, or in a uniformly random order with ``random_order``.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator, needed only with ``random_order``
    piles : int >= 2
    random_order : bool

    Returns
    -------
    (n_shoes, n_cards) ndarray

    References
    ----------
    .. [1] Diaconis, P. and Graham, R. (2011) *Magical Mathematics*, Princeton University Press
       (dealing into piles as a deterministic permutation of the deck).
    """
    a = _shoes_iv(shoes)
    piles = _int_iv("piles", piles, 2, a.shape[1])
    m, n = a.shape
    j = np.arange(n)
    k = j % piles
    size = np.bincount(k, minlength=piles)
    within = size[k] - 1 - j // piles
    if random_order:
        rng = _rng_iv(rng)
        order = rng.permuted(np.tile(np.arange(piles), (m, 1)), axis=1)  # order[i, r] = pile at rank r
        rank = inverse_permutation(order)
        sizes_by_rank = size[order]
        offset_by_rank = np.cumsum(sizes_by_rank, axis=1) - sizes_by_rank
        offset = np.take_along_axis(offset_by_rank, rank, axis=1)  # offset of pile p
        dest = offset[:, k] + within[None, :]
    else:
        offset = np.cumsum(size) - size
        dest = np.broadcast_to(offset[k] + within, (m, n))
    return _scatter(a, dest)


def shelf(shoes, rng: np.random.Generator, *, shelves: int = 10, p_top: float = 0.5) -> np.ndarray:
    """Shelf shuffling machine of Diaconis, Fulman and Holmes (2013).

    Cards are dealt one at a time from the bottom of the stack onto ``shelves`` shelves chosen
    uniformly at random; each card goes above the cards already on its shelf with probability
    ``p_top`` (1/2 in the machine studied) and below them otherwise; the shelves are then
    assembled into one stack in uniformly random order ([1] §1).

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    shelves : int >= 1, default 10
    p_top : float in [0, 1], default 0.5

    Returns
    -------
    (n_shoes, n_cards) ndarray

    References
    ----------
    .. [1] Diaconis, P., Fulman, J. and Holmes, S. (2013) "Analysis of casino shelf shuffling
       machines", Ann. Appl. Probab. 23(4), 1692-1720.
    """
    a = _shoes_iv(shoes)
    rng = _rng_iv(rng)
    shelves = _int_iv("shelves", shelves, 1, 1000)
    p_top = _prob_iv("p_top", p_top)
    m, n = a.shape
    if 2 * n * shelves > 32767:
        raise InputError(f"shelf supports n_cards * shelves <= 16383, got {n} * {shelves}")
    s = rng.integers(0, shelves, size=a.shape, dtype=np.int16)
    top = rng.random(a.shape, dtype=np.float32) < p_top
    # assembly order of the shelves, random per shoe
    order = rng.permuted(np.tile(np.arange(shelves, dtype=np.int16), (m, 1)), axis=1)
    srank = inverse_permutation(order)
    j = np.arange(n, dtype=np.int16)
    # cards dealt from the bottom: card j is placed (n-1-j)-th; top-placed cards read downward in
    # decreasing placement order (key j), bottom-placed in increasing placement order (key 2n-1-j)
    within = np.where(top, j, 2 * n - 1 - j)
    key = (np.take_along_axis(srank, s.astype(np.intp), axis=1) * (2 * n) + within).astype(np.int16)
    return _gather(a, _radix_argsort(key))


def csm(shoes, rng: np.random.Generator, *, compartments: int = 38) -> np.ndarray:
    """Continuous shuffling machine: cards dropped into random compartments, delivered by compartment.

    Model: each returned card, taken in order from the top of the discards, is dropped on top of
    the stack in one of ``compartments`` compartments chosen uniformly at random; the machine
    then delivers whole compartments to the dealing tray in uniformly random order. This is
    rngcert's model of a compartment-type continuous shuffler (not taken from [1]): the shelf
    model of [1] with every card placed on top (``p_top = 1``). Real machines deal before all
    discards are in; this model applies the machine to one shoe's worth of discards.

    Parameters
    ----------
    shoes : (n_shoes, n_cards) array_like of int
    rng : numpy.random.Generator
    compartments : int >= 1

    References
    ----------
    .. [1] Diaconis, P., Fulman, J. and Holmes, S. (2013), Ann. Appl. Probab. 23(4), 1692-1720.
    """
    a = _shoes_iv(shoes)
    # shelf() deals from the bottom; reverse so that the top of the discards goes in first
    return shelf(a[:, ::-1], rng, shelves=compartments, p_top=1.0)


# ----------------------------------------------------------------------------- deal and pickup
def deal_pickup_baccarat(shoes, *, cut_position: int, pickup: str = "banker-first", undealt: str = "top"):
    """Deal a baccarat shoe to the cutting card and pick it up (see
    :func:`rngcert.simulate.deal.deal_pickup_baccarat`); returns ``(discards, outcomes)``."""
    from rngcert.simulate.deal import deal_pickup_baccarat as _d

    r = _d(shoes, cut_position=cut_position, pickup=pickup, undealt=undealt)
    return r.discards, r.outcomes


def deal_pickup_blackjack(shoes, *, cut_position: int, players: int = 7, rule: str = "S17"):
    """Deal a blackjack shoe to the cutting card and pick it up (see
    :func:`rngcert.simulate.deal.deal_pickup_blackjack`); returns ``(discards, dealer)``."""
    from rngcert.simulate.deal import deal_pickup_blackjack as _d

    r = _d(shoes, cut_position=cut_position, players=players, rule=rule)
    return r.discards, r.outcomes
