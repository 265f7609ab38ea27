"""The player's edge: realistic trackers that know only what a player sees.

A tracker sits at the table. It saw the previous shoe dealt (rank and suit of every card dealt,
no deck serials) and knows how the dealer picks the cards up, so it knows the order the shuffle
starts from except the cards that stayed behind the cutting card (``-1`` in ``before``). It
watches the new shoe card by card. Before every coup (baccarat) or round (blackjack) it decides
whether and how much to bet from what it has seen; the bet is then settled on the cards actually
dealt. Its *edge* is the realised return per unit staked, with a confidence interval over shoes
(the independent unit), and it is compared with the house edge.

What the tracker knows about the shuffle is an :class:`OffsetKernel`: for a card dealt at position
j, where the card dealt t positions before it sat in the order before the shuffle, relative to it.
It is learned from shoes of the procedure under test whose card identity is known (a simulation,
or shoes of a log the evaluation does not use): what a player learns by watching a procedure long
enough. Under a uniform shuffle every offset has probability 1/(N-1) and the tracker never sees a
positive edge.

Trackers
--------
* :func:`baccarat_sequence_tracker`: locates the last dealt card in the order before the shuffle
  (weighing its copies by how well the cards dealt before it fit the kernel: key-card and sequence
  tracking), predicts the value law of the next coup's first four cards, and bets Player or Banker
  when the predicted expected return (exact, :func:`baccarat_prefix_returns`) is positive.
* :func:`blackjack_zone_tracker`: the same locator predicts the Hi-Lo density of the next round's
  cards (the zone of the discards they come from) and spreads its bet 1-8 on it.
* :func:`hilo_counter`: the Hi-Lo running count of the cards seen in this shoe, bet spread 1-8 on
  the true count: what the cutting card's depth allows without any shuffle weakness.

:func:`tracker_edge` turns stakes and returns into a :class:`~rngcert.stats.result.TestResult`
(one-sided test of "edge <= threshold", threshold declared in advance). Nothing here does I/O;
hot paths are vectorised over shoes, with loops over coups/rounds and lags only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import fft as _sfft
from scipy import stats as sps

from rngcert.equipment.cards import BACCARAT_VALUE, HILO_TAG, baccarat_coup, baccarat_deal, value_composition
from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue

__all__ = ["OffsetKernel", "learn_kernel", "baccarat_prefix_returns", "BaccaratTrack", "baccarat_sequence_tracker",
           "blackjack_zone_tracker", "blackjack_sequence_tracker", "hilo_counter", "tracker_edge", "SPREAD", "spread_bet",
           "edge_summary"]

_TINY = float(np.finfo(float).tiny)
#: Bet spread of the blackjack trackers, declared in advance: (true count at least, units).
SPREAD = ((-math.inf, 1), (2.0, 2), (3.0, 4), (4.0, 8))


# ----------------------------------------------------------------------------- kernel
@dataclass(frozen=True)
class OffsetKernel:
    """Law of the before-shuffle offset between a dealt card and the card dealt t positions earlier.

    Attributes
    ----------
    n : int
        Cards per shoe N.
    probs : (T + 1, N) ndarray of float
        ``probs[t, d]`` = P(pos_before(card j) - pos_before(card j - t) = d mod N), d = 1..N-1
        (column 0 unused); row 0 unused.
    top : (T + 1, M) ndarray of int
        The M offsets of each lag with the largest probability (used to locate a card).
    pairs : int
        Card pairs the kernel was learned from.
    """

    n: int
    probs: np.ndarray
    top: np.ndarray
    pairs: int

    @property
    def lags(self) -> int:
        return self.probs.shape[0] - 1

    def excess(self, t: int) -> np.ndarray:
        """``probs[t] - 1/(N-1)`` on offsets 1..N-1 (0 at offset 0): what the shuffle leaves."""
        e = self.probs[t] - 1.0 / (self.n - 1)
        e[0] = 0.0
        return e

    def concentration(self) -> np.ndarray:
        """Total variation distance of each lag's offset law from uniform (0 = no memory)."""
        return 0.5 * np.abs(self.probs[1:, 1:] - 1.0 / (self.n - 1)).sum(axis=1)


def learn_kernel(before, after, *, lags: int = 24, top: int = 6, known_before=None, known_after=None) -> OffsetKernel:
    """Learn the :class:`OffsetKernel` of a shuffle from shoes before and after it.

    Parameters
    ----------
    before, after : (n_shoes, N) array_like of int
        Card codes; identical codes are matched in order (the k-th copy after the shuffle to the
        k-th before it), which blurs the kernel when identity is ambiguous.
    lags : int >= 1
        Largest lag t learned.
    top : int >= 1
        Offsets kept per lag to locate a card.
    known_before, known_after : (n_shoes, N) array_like of bool, optional
        Positions whose card is really known (a log rebuilt from dealt cards fills the rest at
        random); pairs touching an unknown position are not counted.

    Returns
    -------
    OffsetKernel
    """
    from rngcert.stats.shuffle import card_permutation

    perm, _ = card_permutation(before, after)
    m, n = perm.shape
    if isinstance(lags, bool) or not isinstance(lags, (int, np.integer)) or not 1 <= lags < n:
        raise InputError(f"lags must be an integer in 1..{n - 1}, got {lags!r}")
    ka = np.ones((m, n), bool) if known_after is None else np.asarray(known_after, bool)
    kb = np.ones((m, n), bool) if known_before is None else np.asarray(known_before, bool)
    ok = ka & np.take_along_axis(kb, perm.astype(np.intp), axis=1)  # after position j: its card known before and after
    probs = np.zeros((lags + 1, n))
    pairs = 0
    for t in range(1, lags + 1):  # loop over lags, vectorised over shoes and positions
        d = (perm[:, t:].astype(np.int64) - perm[:, :-t]) % n
        v = ok[:, t:] & ok[:, :-t]
        c = np.bincount(d[v], minlength=n).astype(float)
        pairs += int(v.sum())
        probs[t] = c / max(c.sum(), 1.0)
    tops = np.argsort(-probs[:, 1:], axis=1, kind="stable")[:, :top] + 1
    return OffsetKernel(n, probs, tops, pairs)


# ----------------------------------------------------------------------------- locating a card
def _copies(before_faces: np.ndarray, max_copies: int):
    """Where each face sat before the shuffle.

    Parameters
    ----------
    before_faces : (m, N) ndarray of int
        Faces 0..51 before the shuffle, -1 where the tracker never saw the card.
    max_copies : int
        Copies kept per face (the decks).

    Returns
    -------
    copies : (m, 52, max_copies) ndarray of intp
        Positions of face f in shoe s, in position order, -1 padded.
    counts : (m, 52) ndarray of int
        Known copies of each face.

    Notes
    -----
    One stable radix sort of the faces (int16 keys) per shoe: equal faces keep their position
    order, so the k-th copy is the k-th occurrence.
    """
    m, n = before_faces.shape
    f53 = np.where(before_faces >= 0, before_faces, 52).astype(np.int16)
    order = np.argsort(f53, axis=1, kind="stable").astype(np.intp)
    counts = np.bincount((np.arange(m)[:, None] * 53 + f53).ravel(), minlength=m * 53).reshape(m, 53)
    counts = counts[:, :52]
    start = np.cumsum(counts, axis=1) - counts  # first slot of each face in the sorted row
    r = np.arange(max_copies)
    slot = np.minimum(start[:, :, None] + r, n - 1)  # (m, 52, C)
    copies = np.take_along_axis(order, slot.reshape(m, -1), axis=1).reshape(slot.shape)
    return np.where(r < counts[:, :, None], copies, -1), counts


@lru_cache(maxsize=64)
def _pattern_sums(w: tuple, rows: int) -> np.ndarray:
    """``S[r * 2**M + p]`` = the matched offsets' probabilities summed, for every match pattern.

    Bit i of ``p`` says whether offset i of the lag matched. The table is computed by the very
    product ``(..., rows, M) @ (M,)`` that the pattern array would go through (same shapes, same
    BLAS kernel, one entry per row slot), so a look-up returns bit for bit what the product on the
    0/1 match array returns, at a fraction of its cost.
    """
    M = len(w)
    bits = ((np.arange(2 ** M)[:, None] >> np.arange(M)[None, :]) & 1).astype(np.float64)
    x = np.ascontiguousarray(np.broadcast_to(bits[:, None, :], (2 ** M, rows, M)))
    return np.ascontiguousarray((x @ np.asarray(w, dtype=np.float64)).T).ravel()


@lru_cache(maxsize=64)
def _term_table(ws: tuple, rows: int, n: int, decks: int) -> np.ndarray:
    """Likelihood-ratio term of a copy for every lag, row slot, match pattern and known count.

    Entry ``((l * rows + r) * 2**M + p) * (decks + 2) + k`` is
    ``max(1 + S_l[r, p] * n / max(k, 1) - sum(ws[l]), 1e-6)`` with ``S_l`` the
    :func:`_pattern_sums` of the lag's offset probabilities ``ws[l]`` and ``k`` the known copies of
    the face (N / k = 1 / P(face)); ``k = decks + 1`` holds 1 (no card that many places back). The
    same operations on the same operands as the term computed copy by copy, so the same bits.
    """
    S = np.stack([_pattern_sums(w, rows).reshape(rows, -1) for w in ws])  # (L, rows, 2**M)
    inv = n / np.maximum(np.arange(decks + 1), 1).astype(np.float64)  # (decks + 1,)
    wsum = np.asarray(ws, dtype=np.float64).sum(axis=1)
    out = np.ones(S.shape + (decks + 2,))
    out[..., :decks + 1] = np.maximum(1.0 + S[..., None] * inv - wsum[:, None, None, None], 1e-6)
    return out.ravel()


#: Word constants of the byte-parallel match (Warren, *Hacker's Delight*, 2nd ed., 2013, §6-1: a
#: zero byte in a word without false positives), and the multiplier that gathers bit 0 of each of
#: the eight bytes into the top byte (bit i from byte i).
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_BYTES = np.uint64(0x0101010101010101)
_GATHER_BITS = np.uint64(0x0102040810204080)


def _shared(before_faces: np.ndarray) -> np.ndarray:
    """The one row of ``before_faces`` when every shoe starts from the same order (the first shoe of
    new decks, spread in order at every table), else all of them: what depends only on the order
    before the shuffle (fields, neighbours) is then computed once for the chunk, with the same bits."""
    if before_faces.shape[0] > 1 and bool((before_faces == before_faces[:1]).all()):
        return before_faces[:1]
    return before_faces


def _lag_offsets(kernel: OffsetKernel, back: int) -> tuple[list, int]:
    """The lags a copy is weighed on and the kernel's top offsets per lag (M of them)."""
    return list(range(1, min(back, kernel.lags) + 1)), kernel.top.shape[1]


def _neighbours(before_faces: np.ndarray, kernel: OffsetKernel, back: int) -> np.ndarray:
    """Faces seen before every before position at each lag's top offsets, one row per position.

    Returns
    -------
    (m, N, L, 8) ndarray of int8
        ``[s, k, l, i]`` = face at position k - top[lag_l][i] (circularly), -1 unseen; slots
        i >= M hold -2 (never a face). Eight bytes per lag: one uint64 word per lag and copy.
    """
    m, n = before_faces.shape
    lags, M = _lag_offsets(kernel, back)
    idx = np.full((len(lags), 8), 2 * n, dtype=np.intp)
    idx[:, :M] = n - kernel.top[lags]
    dbl = np.concatenate([before_faces, before_faces, np.full((m, 1), -2)], axis=1).astype(np.int8)
    return np.take(dbl, np.minimum(np.arange(n)[:, None, None] + idx[None], 2 * n), axis=1)  # C-contiguous


def _locate(before_faces, after_faces, anchors, kernel: OffsetKernel, copies, known_counts, decks: int, back: int,
            near: np.ndarray | None = None):
    """Posterior over the copies of each anchor card: which before position it came from.

    Parameters
    ----------
    before_faces, after_faces : (m, N) ndarray of int
        Faces before the shuffle (-1 unseen) and in dealing order.
    anchors : (m, A) ndarray of int
        After positions of the anchor cards (>= 0 valid, -1 none).
    kernel : OffsetKernel
    copies, known_counts : from :func:`_copies`
    decks, back : int
    near : ndarray, optional
        :func:`_neighbours` of ``before_faces``, or of its one row when every shoe starts from the
        same order (computed here when not given; a caller that places several anchor sets in the
        same shoes computes it once).

    Returns
    -------
    pos : (m, A, C) ndarray of intp
        Before positions of the anchor's copies (0 where none).
    post : (m, A, C) ndarray of float
        Their posterior weights.

    Notes
    -----
    The weight of copy k is the likelihood ratio of the cards dealt before the anchor (lags
    1..back) under the kernel's top offsets; the anchor's unseen copies keep weight 1 and predict
    nothing. Each copy reads its neighbours as one row of :func:`_neighbours` (a uint64 word per
    lag); the offsets whose face is the card dealt ``lag`` places before the anchor are found
    byte-parallel in the word and packed into a pattern byte; the copy's likelihood-ratio term
    for that lag, pattern and the known copies of the face is then looked up in one table of all
    lags (:func:`_term_table`, built from :func:`_pattern_sums`) instead of a product per copy,
    with the same bits. With more than eight offsets per lag, the match array and the product are
    used as they are.
    """
    m, n = before_faces.shape
    ok = anchors >= 0
    a = np.where(ok, anchors, 0)
    rows = np.arange(m)[:, None]
    f = after_faces[rows, a]  # (m, A)
    pos = copies[rows, f]  # (m, A, C)
    valid = (pos >= 0) & ok[:, :, None]
    pos = np.where(valid, pos, 0)
    A, C = pos.shape[1:]
    lags, M = _lag_offsets(kernel, back)
    L = len(lags)
    back_pos = a[:, :, None] - np.asarray(lags)  # (m, A, L): after position of the card `lag` places back
    has = ok[:, :, None] & (back_pos >= 0)  # that card was dealt
    g = np.take_along_axis(after_faces, np.maximum(back_pos, 0).reshape(m, A * L), axis=1).reshape(m, A, L)  # its face
    D = int(known_counts.max(initial=1))
    kc = np.maximum(known_counts[rows[:, :, None], g], 1)  # (m, A, L): known copies of face g; 1 / P(face g) = N / kc
    if M <= 8:
        if near is None:
            near = _neighbours(_shared(before_faces), kernel, back)
        flatpos = (pos if near.shape[0] == 1 else pos + (np.arange(m) * n)[:, None, None]).ravel()
        words = near.view(np.uint64).reshape(-1, L).take(flatpos, axis=0)  # (m * A * C, L)
        # the operands of every copy of an anchor, repeated once to the words' layout (a broadcast over
        # the copies would run inner loops of L elements): the face `lag` places back in every byte, and
        # the table column of its known copies (D + 1: no card `lag` places back, term 1)
        per = np.empty((2, m * A, L), np.uint64)
        np.multiply(g.reshape(m * A, L).astype(np.uint64), _BYTES, out=per[0])
        per[1] = np.where(has, kc, D + 1).reshape(m * A, L)
        rep = np.repeat(per, C, axis=1)  # (2, m * A * C, L)
        # in place (the temporaries of this size cost more in page faults than in arithmetic)
        t = np.bitwise_xor(words, rep[0], out=words)  # zero byte where the face matches
        z = t & _LOW7
        z += _LOW7
        z |= t
        z |= _LOW7
        np.invert(z, out=z)  # top bit of each zero byte
        z >>= np.uint64(7)
        z *= _GATHER_BITS
        z >>= np.uint64(56)
        pat = z.view(np.int64)  # (m * A * C, L): the match pattern, < 2**8
    else:
        dbl = np.concatenate([before_faces, before_faces], axis=1).astype(np.int16)
    d = kernel.top[lags]  # (L, M)
    w = kernel.probs[np.asarray(lags)[:, None], d]  # (L, M)
    if M <= 8:  # the likelihood-ratio term of every (lag, slot, pattern, known copies) in one table: one look-up
        slot = np.arange(L)[None, :] * C + np.arange(C)[:, None]  # (C, L)
        idx = pat.reshape(m * A, C, L)  # (slot * 2**M + pat) * (D + 2) + kc, in place
        idx *= D + 2
        idx += slot * (2 ** M * (D + 2))
        idx += rep[1].view(np.int64).reshape(m * A, C, L)
        terms = _term_table(tuple(map(tuple, w.tolist())), C, n, D).take(idx).reshape(m, A, C, L)
    else:  # more offsets than bits in a byte: the match array and the product itself, lag by lag
        inv_bg = n / kc.astype(np.float64)
        wsum = w.sum(axis=1)
        terms = np.empty(pos.shape + (L,))
        for li in range(L):
            seen = dbl[rows[:, :, None, None], pos[..., None] + n - d[li]]
            s_l = (seen == g[:, :, li, None, None]).astype(np.float64) @ w[li]
            terms[..., li] = np.where(has[:, :, li, None], np.maximum(1.0 + s_l * inv_bg[:, :, li, None] - wsum[li], 1e-6), 1.0)
    lr = terms[..., 0].copy()  # the product over lags, in lag order (1 * t0 = t0)
    for li in range(1, L):
        lr *= terms[..., li]
    lr[~valid] = 0.0
    unseen = np.maximum(decks - known_counts[rows, f], 0)  # copies of the anchor's face the tracker cannot place
    post = lr / (lr.sum(axis=2) + unseen + 1e-300)[:, :, None]
    return pos, post


def _buffer(work: dict | None, name: str, shape: tuple, dtype) -> np.ndarray:
    """A scratch array of ``shape`` from ``work`` (kept across the chunks of one call: the leading
    rows of the first chunk's array serve a shorter last chunk), or a new one without ``work``."""
    if work is None:
        return np.empty(shape, dtype)
    buf = work.get(name)
    if buf is None or buf.shape[1:] != shape[1:] or buf.shape[0] < shape[0] or buf.dtype != dtype:
        buf = work[name] = np.empty(shape, dtype)
    return buf[:shape[0]]


def _kernel_spectra(kernel: OffsetKernel, lags) -> np.ndarray:
    """(T, F) complex64: conjugate spectra of the excess of each lag, F = N // 2 + 1 (for
    :func:`_excess_fields`; computed once per call, not per chunk)."""
    return np.conj(np.stack([np.fft.rfft(kernel.excess(t)) for t in lags])).astype(np.complex64)


def _excess_fields(channels: np.ndarray, spectra: np.ndarray, work: dict | None = None) -> np.ndarray:
    """Kernel excess around every before position, laid out one row per position.

    Parameters
    ----------
    channels : (V, m, N) ndarray of float32
        Per value class and before position, the indicator of the class less its share (0 where
        unseen), class-major (:func:`_channels`).
    spectra : (T, F) ndarray of complex64
        :func:`_kernel_spectra` of the T lags.
    work : dict, optional
        Scratch arrays reused from chunk to chunk (fresh pages cost a fault each).

    Returns
    -------
    (m, N, T * V) ndarray of float32
        ``E[s, k, t * V + v] = sum_d excess_t(d) * channels[v, s, (k + d) mod N]`` (a view of a
        ``work`` array when given: valid until the next call).

    Notes
    -----
    Circular correlation by FFT along the position axis: one batched rfft of the channels and one
    batched irfft of all T * V products, each transform over contiguous memory (half the cost of
    a strided one), then one transposing copy to the position-major layout from which
    :func:`_predict` gathers whole rows. Single precision (numpy >= 2 and scipy transform float32
    as float32): the fields are differences of probabilities of order 1e-3 that enter a
    prediction of order 1e-2, and a relative error of about 1e-6 of them moves a predicted return
    by less than 1e-7 of the stake; double precision cost three times as much.
    """
    V, m, n = channels.shape
    T, F = spectra.shape
    H = _sfft.rfft(channels, axis=2)  # (V, m, F); scipy's forward float32 transform is about twice numpy's speed
    P = np.multiply(H.transpose(1, 0, 2)[:, None, :, :], spectra[None, :, None, :], out=_buffer(work, "P", (m, T, V, F), np.complex64))
    e = np.fft.irfft(P.reshape(m, T * V, F), n=n, axis=2, out=_buffer(work, "E", (m, T * V, n), np.float32))
    out = _buffer(work, "E32", (m, n, T * V), np.float32)
    np.copyto(out, e.transpose(0, 2, 1))
    return out


def _channels(cls: np.ndarray, bg: np.ndarray, work: dict | None = None) -> np.ndarray:
    """(m, N) value classes 0..V-1 (-1 unseen) -> (V - 1, m, N) float32, class-major: the indicator
    of each class but the last, less its share ``bg`` (so 1 - bg[v] or -bg[v]), 0 where unseen.
    One look-up per card and class. The last class's channel is minus the sum of the others (the
    indicators of a seen card sum to 1 and ``bg`` sums to 1; all are 0 where unseen), so its
    fields need no transform of their own: :func:`_predict` restores it."""
    V = bg.size
    lut = np.zeros((V - 1, V + 1), np.float32)
    lut[:, 1:] = np.eye(V - 1, V, dtype=bool) - bg[:V - 1, None]
    return np.take(lut, cls + 1, axis=1, mode="clip", out=_buffer(work, "channels", (V - 1,) + cls.shape, np.float32))


def _predict(fields, pos, post, T: int, V: int, bg: np.ndarray, work: dict | None = None):
    """Predicted value laws of the cards 1..T (the lags) after each anchor, unnormalised.

    ``fields`` is the (m, N, T * (V - 1)) output of :func:`_excess_fields` on :func:`_channels`
    (or (1, N, T * (V - 1)): one order before the shuffle for all m shoes); one row per copy is
    gathered (a flat ``take`` of contiguous rows, no fancy index over the fields), into a
    ``work`` array when given, and weighted by one small product per anchor. The last class's
    excess is minus the sum of the others'.

    Returns
    -------
    (m, A, T, V) ndarray of float64
        ``max(bg + excess at the anchors' copies weighted by their posterior, 0)``: the law of
        each class, clipped at 0, not yet renormalised.
    """
    m, (A, C) = pos.shape[0], pos.shape[1:]
    mf, n, X = fields.shape
    flat = pos if mf == 1 else pos + (np.arange(m) * n)[:, None, None]
    # mode="clip" (the positions are valid): with the default "raise", numpy buffers ``out``
    g = np.take(fields.reshape(mf * n, X), flat.reshape(-1), axis=0, mode="clip",
                out=_buffer(work, "gathered", (m * A * C, X), np.float32)).reshape(m * A, C, X)
    e = np.matmul(post.astype(np.float32).reshape(m * A, 1, C), g).reshape(m * A * T, V - 1)
    # every class with the last one restored (-sum of the others) by one product with [I | -1], laid out
    # contiguously, then bg + float64(excess) against bg tiled once per chunk size (a broadcast of bg
    # would run inner loops of V elements)
    restore = np.concatenate([np.eye(V - 1, dtype=np.float32), -np.ones((V - 1, 1), np.float32)], axis=1)
    key = ("bg", m * A * T, V)
    tiled = None if work is None else work.get(key)
    if tiled is None or not np.array_equal(tiled[:V], bg):
        tiled = np.tile(np.asarray(bg, dtype=np.float64), m * A * T)
        if work is not None:
            work[key] = tiled
    q = np.add(e @ restore, tiled.reshape(m * A * T, V), dtype=np.float64)
    return np.maximum(q, 0.0, out=q).reshape(m, A, T, V)


# ----------------------------------------------------------------------------- baccarat
#: The real DFT of length 10 as products: ``q @ _DFT10`` is ``np.fft.rfft(q)`` with real and imaginary
#: parts interleaved (view it as complex), and ``spectrum @ _IDFT10`` is ``np.fft.irfft(spectrum, 10)``
#: of such an interleaved spectrum.
_DFT10 = np.stack([np.fft.rfft(np.eye(10), axis=1).real, np.fft.rfft(np.eye(10), axis=1).imag], axis=2).reshape(10, 12)
_IDFT10 = np.stack([np.fft.irfft(np.eye(6), n=10, axis=1), np.fft.irfft(1j * np.eye(6), n=10, axis=1)], axis=1).reshape(12, 10)


@lru_cache(maxsize=8)
def _prefix_returns(decks: int) -> tuple:
    c = value_composition(decks, "baccarat").astype(float)
    seq = np.indices((10,) * 6).reshape(6, -1).T
    n = c.sum()
    rows = np.arange(seq.shape[0])
    used = np.zeros((seq.shape[0], 10))
    prob_tail = np.ones(seq.shape[0])
    prob_head = np.ones(seq.shape[0])
    for k in range(6):
        v = seq[:, k]
        p = np.maximum(c[v] - used[rows, v], 0) / (n - k)
        if k < 4:
            prob_head *= p
        else:
            prob_tail *= p
        used[rows, v] += 1
    outcome, _ = baccarat_coup(seq)
    ret_p = np.where(outcome == 1, 1.0, np.where(outcome == 0, -1.0, 0.0))
    ret_b = np.where(outcome == 0, 0.95, np.where(outcome == 1, -1.0, 0.0))
    # E[return | first four values] = sum over cards 5, 6 of P(tail | head) * return
    rp = (prob_tail * ret_p).reshape(10, 10, 10, 10, 100).sum(axis=4)
    rb = (prob_tail * ret_b).reshape(10, 10, 10, 10, 100).sum(axis=4)
    head = prob_head.reshape(10, 10, 10, 10, 100)[..., 0]
    return rp, rb, head


def baccarat_prefix_returns(decks: int = 8) -> dict:
    """Exact expected return of a Player and a Banker bet given the coup's first four card values.

    Parameters
    ----------
    decks : int
        Full shoe of ``decks`` decks; the fifth and sixth cards are drawn without replacement from
        it less the first four.

    Returns
    -------
    dict
        ``player``, ``banker`` : (10, 10, 10, 10) ndarrays indexed by the values of P1, B1, P2, B2
        (004 §2 rule 3.4.3), per unit staked, pushes on a tie (rule 2.1.5); Banker wins pay 0.95
        (rule 2.2 ii). ``head`` : P(first four values) from the full shoe.
        ``player_by_totals``, ``banker_by_totals`` : (10, 10) the same averaged over the prefixes
        with Player's two-card total p and Banker's b (the drawing rules depend on the cards only
        through these totals and the third cards): what the tracker uses.

    Notes
    -----
    Enumerates the 10^6 ordered value sequences of a coup's six cards, plays each by the drawing
    rules of rule 3.5.1 (:func:`rngcert.equipment.cards.baccarat_coup`), and sums out the last two
    cards. Summed against ``head`` it gives the full-shoe house edges (8 decks: Banker 1.0579%,
    Player 1.2351%, Thorp & Walden 1966).
    """
    rp, rb, head = _prefix_returns(int(decks))
    v = np.arange(10)
    pt = (v[:, None, None, None] + v[None, None, :, None]) % 10  # (v1 + v3) mod 10
    bt = (v[None, :, None, None] + v[None, None, None, :]) % 10  # (v2 + v4) mod 10
    cell = (pt * 10 + bt).ravel()
    w = np.bincount(cell, weights=head.ravel(), minlength=100)
    tot = {k: (np.bincount(cell, weights=(head * r).ravel(), minlength=100) / w).reshape(10, 10) for k, r in (("player", rp), ("banker", rb))}
    return {"player": rp, "banker": rb, "head": head, "player_by_totals": tot["player"], "banker_by_totals": tot["banker"]}


@dataclass(frozen=True)
class BaccaratTrack:
    """Per-coup record of a baccarat tracker over shoes.

    Attributes
    ----------
    ev_player, ev_banker : (n_shoes, max_coups) ndarray of float
        Predicted expected return of each bet (NaN where no coup or no prediction).
    ret_player, ret_banker : (n_shoes, max_coups) ndarray of float
        Realised return of a unit bet (0 where no coup).
    coup : (n_shoes, max_coups) ndarray of bool
        The coup was dealt.
    """

    ev_player: np.ndarray
    ev_banker: np.ndarray
    ret_player: np.ndarray
    ret_banker: np.ndarray
    coup: np.ndarray

    def policy(self, threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tracker's bets: one unit on the side with the higher predicted return when it
        exceeds ``threshold`` (0: a positive expected return, i.e. it beats the house).

        Returns
        -------
        stake, ret : (n_shoes,) ndarrays
            Units staked and net return per shoe.
        side : (n_shoes, max_coups) ndarray of int8
            0 no bet, 1 Player, 2 Banker.
        """
        evp = np.nan_to_num(self.ev_player, nan=-np.inf)
        evb = np.nan_to_num(self.ev_banker, nan=-np.inf)
        best = np.maximum(evp, evb)
        bet = self.coup & (best > threshold)
        side = np.where(bet, np.where(evp > evb, 1, 2), 0).astype(np.int8)
        ret = np.where(side == 1, self.ret_player, np.where(side == 2, self.ret_banker, 0.0))
        return bet.sum(axis=1).astype(float), ret.sum(axis=1), side

    def shadow(self, side: str, reference: float) -> tuple[np.ndarray, np.ndarray]:
        """Bets on ``side`` whenever its predicted return exceeds its full-shoe expectation
        ``reference`` (validation: under a uniform shuffle these bets return the house edge)."""
        ev = self.ev_player if side == "player" else self.ev_banker
        r = self.ret_player if side == "player" else self.ret_banker
        bet = self.coup & (np.nan_to_num(ev, nan=-np.inf) > reference)
        return bet.sum(axis=1).astype(float), np.where(bet, r, 0.0).sum(axis=1)


def _faces(x) -> np.ndarray:
    a = np.asarray(x)
    return np.where(a >= 0, a % 52, -1).astype(np.int16)


def _iv(before_view, after, decks):
    b = np.asarray(before_view)
    a = np.asarray(after)
    if a.ndim != 2 or b.shape != a.shape or not np.issubdtype(a.dtype, np.integer) or not np.issubdtype(b.dtype, np.integer):
        raise InputError(f"before and after must be integer arrays of equal shape (n_shoes, N), got {b.shape} and {a.shape}")
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) or not 1 <= decks <= 8 or a.shape[1] != 52 * decks:
        raise InputError(f"decks must be an integer in 1..8 with N = 52*decks = {a.shape[1]}, got {decks!r}")
    if np.any(a < 0):
        raise InputError("after must hold the full shoe in dealing order (the tracker settles bets on the cards actually dealt)")
    return _faces(b), _faces(a)


def baccarat_sequence_tracker(before_view, after, kernel: OffsetKernel, *, decks: int, cut_position: int, back: int = 4,
                              chunk: int = 16) -> BaccaratTrack:
    """Baccarat key-card / sequence tracker: predict the next coup from where the last card sat.

    Parameters
    ----------
    before_view : (n_shoes, N) array_like of int
        The order before the shuffle as the player knows it: card codes (faces are used), -1 for
        the cards it never saw (left behind the previous cutting card).
    after : (n_shoes, N) array_like of int
        The shuffled shoe in dealing order (the coups are dealt from it to the cutting card).
    kernel : OffsetKernel
        What the player knows of the shuffle (lags >= 4 + ``back``).
    decks : int
    cut_position : int
        Cards in front of the cutting card.
    back : int
        Cards before the anchor used to place it (sequence length).
    chunk : int
        Shoes processed at once (memory and cache; scratch arrays are reused from chunk to
        chunk). The results do not depend on it. The default of 16 keeps each scratch array of an
        eight-deck chunk near 1 MB, within a core's L2 cache: measured 5,560 shoes/s against
        4,760 with 64 (one core, 2,000 steady-state shoes of baccarat-004).

    Returns
    -------
    BaccaratTrack

    Notes
    -----
    Before coup c, the anchor is the last card dealt (none before the first coup: no bet). Its
    before-shuffle position is one of the copies of its face; each copy is weighed by the
    likelihood ratio of the ``back`` cards dealt before the anchor under the kernel's most likely
    offsets. The value law of the card t places after the anchor is the shoe's value composition
    plus the posterior-weighted kernel excess around each copy (an FFT correlation of the
    before-shuffle values with ``probs[t] - 1/(N-1)``), clipped and renormalised. The laws of
    P1 + P2 and B1 + B2 (mod 10) give the coup's expected Player and Banker returns through the
    exact tables by two-card totals of :func:`baccarat_prefix_returns` (cards 5 and 6 from the
    full shoe). Settlement uses the coup actually dealt.
    """
    bf, af = _iv(before_view, after, decks)
    m, n = af.shape
    if kernel.n != n or kernel.lags < 4 + back:
        raise InputError(f"kernel is for {kernel.n} cards with {kernel.lags} lags; need {n} cards and >= {4 + back} lags")
    vals = BACCARAT_VALUE[af % 13]
    d = baccarat_deal(vals, cut_position)
    starts, outcome = d["starts"], d["outcome"]
    coup = starts >= 0
    ret_p = np.where(outcome == 1, 1.0, np.where(outcome == 0, -1.0, 0.0)) * coup
    ret_b = np.where(outcome == 0, 0.95, np.where(outcome == 1, -1.0, 0.0)) * coup
    tables = baccarat_prefix_returns(decks)
    bg = value_composition(decks, "baccarat") / n
    evp = np.full(starts.shape, np.nan)
    evb = np.full(starts.shape, np.nan)
    copies, counts = _copies(bf, decks)
    value_of = np.concatenate([[-1], BACCARAT_VALUE[np.arange(52) % 13]])  # face + 1 -> value (-1 unseen)
    work: dict = {}
    spectra = _kernel_spectra(kernel, range(1, 5))
    RPB = np.concatenate([tables["player_by_totals"], tables["banker_by_totals"]], axis=1)  # (10, 20)
    for s0 in range(0, m, chunk):  # chunks of shoes (memory), vectorised inside
        s1 = min(m, s0 + chunk)
        # (m or 1, N, 4 * 9): P1, B1, P2, B2 (value 9 restored by _predict); one row when every shoe starts
        # from new decks in order
        fields = _excess_fields(_channels(value_of[_shared(bf[s0:s1]) + 1], bg, work), spectra, work)
        anchors = np.where(starts[s0:s1] > 0, starts[s0:s1] - 1, -1)
        pos, post = _locate(bf[s0:s1], af[s0:s1], anchors, kernel, copies[s0:s1], counts[s0:s1], decks, back)
        q = _predict(fields, pos, post, 4, 10, bg, work)  # (m, A, 4, 10): laws of P1, B1, P2, B2, unnormalised
        mc, A = q.shape[:2]
        # laws of the two-card totals (P1 + P2, B1 + B2 mod 10): cyclic convolutions of length 10 through
        # their spectra, the transforms as two small real products (numpy's FFT costs more per call than
        # these transforms of 10 points are worth); the returns are bilinear in the laws, so each law's
        # normalisation is one division at the end by the product of their sums (the spectra at 0)
        h = (q.reshape(-1, 10) @ _DFT10).view(complex).reshape(mc, A, 4, 6)
        t = h[:, :, :2] * h[:, :, 2:]  # (m, A, 2, 6): spectra of Player's and Banker's two-card totals
        x = (t.view(float).reshape(-1, 12) @ _IDFT10).reshape(mc * A, 2, 10)  # their laws
        r = (x[:, 0] @ RPB).reshape(mc * A, 2, 10)  # Player's total law through the tables by totals
        r *= x[:, 1, None, :]
        ev = r.sum(axis=2).reshape(mc, A, 2) / h[..., 0].real.prod(axis=2)[..., None]
        ok = anchors >= 0
        evp[s0:s1] = np.where(ok, ev[..., 0], np.nan)
        evb[s0:s1] = np.where(ok, ev[..., 1], np.nan)
    return BaccaratTrack(evp, evb, ret_p, ret_b, coup)


# ----------------------------------------------------------------------------- blackjack
def spread_bet(true_count, spread=SPREAD) -> np.ndarray:
    """Units bet for a (predicted) true count under a spread declared in advance."""
    tc = np.asarray(true_count, dtype=float)
    out = np.full(tc.shape, float(spread[0][1]))
    for lo, units in spread[1:]:
        out = np.where(tc >= lo, float(units), out)
    return out


def hilo_counter(after, starts, *, decks: int, spread=SPREAD) -> np.ndarray:
    """Hi-Lo counter's bet before each round: the true count of the cards seen in this shoe.

    Parameters
    ----------
    after : (n_shoes, N) array_like of int
        Shoes in dealing order.
    starts : (n_shoes, R) array_like of int
        First card of each round (-1: no round).
    decks : int
    spread : sequence of (true count at least, units)

    Returns
    -------
    (n_shoes, R) ndarray of float
        Units bet per round (0 where no round).

    Notes
    -----
    Running count = sum of Hi-Lo tags (2-6 +1, 7-9 0, tens and aces -1) of the cards dealt
    before the round; true count = running count / decks not yet dealt (Thorp 1966; Griffin,
    *The Theory of Blackjack*, 1999, ch. 4). A positive true count means the cards left are rich
    in tens and aces.
    """
    a = np.asarray(after)
    st = np.asarray(starts)
    m, n = a.shape
    tags = HILO_TAG[a % 13].astype(np.int64)
    cum = np.concatenate([np.zeros((m, 1), np.int64), np.cumsum(tags, axis=1)], axis=1)
    s = np.maximum(st, 0)
    rc = np.take_along_axis(cum, s, axis=1)
    decks_left = np.maximum((n - s) / 52.0, 0.25)
    return np.where(st >= 0, spread_bet(rc / decks_left, spread), 0.0)


def blackjack_zone_tracker(before_view, after, starts, kernel: OffsetKernel, *, decks: int, cards_ahead: int = 20,
                           back: int = 4, anchors: int = 4, spread=SPREAD, chunk: int = 64) -> np.ndarray:
    """Blackjack shuffle (zone) tracker's bet before each round.

    Parameters
    ----------
    before_view : (n_shoes, N) array_like of int
        The order before the shuffle as the player knows it (-1 for cards it never saw).
    after : (n_shoes, N) array_like of int
    starts : (n_shoes, R) array_like of int
        First card of each round (-1: none).
    kernel : OffsetKernel
        Lags >= ``cards_ahead``.
    decks : int
    cards_ahead : int
        Cards of the coming round(s) whose Hi-Lo density is predicted.
    back : int
        Cards used to place each anchor.
    anchors : int
        The last ``anchors`` cards dealt each place a zone; their predictions are averaged (a
        riffle interleaves two zones, a wash spreads one).
    spread : sequence of (true count at least, units)

    Returns
    -------
    (n_shoes, R) ndarray of float
        Units bet per round; rounds before any card is seen bet the minimum.

    Notes
    -----
    Each anchor is placed as in :func:`baccarat_sequence_tracker`; the summed excess kernel of
    the lags from the anchor to the coming ``cards_ahead`` cards, correlated with the
    before-shuffle Hi-Lo tags, gives the predicted tag sum S of those cards (the zone they come
    from). The predicted true count is -S * 52 / cards_ahead (a tag sum below zero means tens and
    aces ahead).
    """
    bf, af = _iv(before_view, after, decks)
    st = np.asarray(starts)
    m, n = af.shape
    need = max(cards_ahead + anchors - 1, back)
    if kernel.n != n or kernel.lags < need:
        raise InputError(f"kernel is for {kernel.n} cards with {kernel.lags} lags; need {n} cards and >= {need} lags")
    tag_bg = float(np.mean(HILO_TAG))  # 0 for a full shoe
    out = np.zeros(st.shape)
    copies, counts = _copies(bf, decks)
    tag_of = np.concatenate([[0.0], HILO_TAG[np.arange(52) % 13] - tag_bg]).astype(np.float32)  # face + 1 -> tag less its mean (0 unseen)
    E = np.empty((n // 2 + 1, anchors), dtype=complex)  # spectra of the summed excess kernels, one column per anchor
    for j in range(1, anchors + 1):
        e = kernel.probs[j:j + cards_ahead].sum(axis=0) - cards_ahead / (n - 1)
        e[0] = 0.0
        E[:, j - 1] = np.fft.rfft(e)
    E = np.conj(E).astype(np.complex64)
    R = st.shape[1]
    for s0 in range(0, m, chunk):  # chunks of shoes (memory), vectorised inside
        s1 = min(m, s0 + chunk)
        tg = tag_of[_shared(bf[s0:s1]) + 1][:, :, None]  # (m or 1, N, 1)
        # summed kernel of the coming cards seen from anchor j back: lags j .. j + cards_ahead - 1, one
        # batched irfft for the `anchors` fields (single precision, as in _excess_fields)
        fields = np.fft.irfft(_sfft.rfft(tg, axis=1) * E[None, :, :], n=n, axis=1)  # (m, N, anchors) float32
        # the last `anchors` cards each place a zone (a riffle interleaves two): all placed at once
        anc = st[s0:s1, None, :] - np.arange(1, anchors + 1)[None, :, None]  # (m, anchors, R)
        anc = np.where((st[s0:s1, None, :] >= 0) & (anc >= 0), anc, -1).reshape(s1 - s0, anchors * R)
        pos, post = _locate(bf[s0:s1], af[s0:s1], anc, kernel, copies[s0:s1], counts[s0:s1], decks, back)
        # anchor j reads field j at its copies: the (m, anchors, R, C) gather of rows of `anchors` fields
        mf = fields.shape[0]
        flat = pos if mf == 1 else pos + (np.arange(s1 - s0) * n)[:, None, None]
        g = fields.reshape(mf * n, anchors).take(flat.reshape(s1 - s0, anchors, R, -1), axis=0)  # (m, anchors, R, C, anchors)
        jj = np.arange(anchors)
        gj = g[:, jj, :, :, jj].transpose(1, 0, 2, 3)  # (m, anchors, R, C): anchor j's own field
        S = np.einsum("mjrc,mjrc->mr", gj, post.reshape(gj.shape).astype(np.float32)).astype(np.float64) / anchors
        anchors_ok = st[s0:s1] > 0
        tc = -S * 52.0 / cards_ahead
        out[s0:s1] = np.where(st[s0:s1] >= 0, np.where(anchors_ok, spread_bet(tc, spread), float(spread[0][1])), 0.0)
    return out


def blackjack_sequence_tracker(before_view, after, starts, kernel: OffsetKernel, ev_table, *, decks: int, players: int,
                               back: int = 4, chunk: int = 64) -> np.ndarray:
    """Blackjack key-card (ace-sequencing) tracker: the predicted value of the first seat's deal.

    Parameters
    ----------
    before_view : (n_shoes, N) array_like of int
        The order before the shuffle as the player knows it (-1 for cards it never saw).
    after : (n_shoes, N) array_like of int
    starts : (n_shoes, R) array_like of int
        First card of each round (-1: none).
    kernel : OffsetKernel
        Lags >= ``players + 2 + back``.
    ev_table : (10, 10, 10) array_like
        Expected return of a first deal (player's two cards, dealer's up card; rank indices),
        :func:`rngcert.stats.blackjack.first_deal_ev`.
    decks, players : int

    Returns
    -------
    (n_shoes, R) ndarray of float
        Predicted expected return of the first seat's hand (NaN before any card is seen).

    Notes
    -----
    The first seat's cards are dealt at ``start`` and ``start + players + 1`` and the dealer's up
    card at ``start + players`` (004 §3 rule 3.4). The anchor (last card seen) is placed as in
    :func:`baccarat_sequence_tracker`, the value laws of these three cards are predicted from
    the kernel at lags 1, players + 1 and players + 2, and contracted with ``ev_table``. This is
    the classic "ace sequencing" of a weak shuffle: a key card seen, an ace likely next.
    """
    bf, af = _iv(before_view, after, decks)
    st = np.asarray(starts)
    m, n = af.shape
    lags = (1, players + 1, players + 2)
    if kernel.n != n or kernel.lags < max(lags[-1], back):
        raise InputError(f"kernel is for {kernel.n} cards with {kernel.lags} lags; need {n} cards and >= {max(lags[-1], back)} lags")
    E = np.asarray(ev_table, dtype=float)
    comp = np.full(10, 4.0 * decks)
    comp[9] = 16.0 * decks
    bg = comp / n
    out = np.full(st.shape, np.nan)
    copies, counts = _copies(bf, decks)
    rank_of = np.concatenate([[-1], np.minimum(np.arange(52) % 13, 9)])  # face + 1 -> A, 2..9, T J Q K as 0..9 (-1 unseen)
    work: dict = {}
    spectra = _kernel_spectra(kernel, lags)
    E2 = E.reshape(10, 100)  # [a, b * 10 + u]
    for s0 in range(0, m, chunk):  # chunks of shoes (memory), vectorised inside
        s1 = min(m, s0 + chunk)
        fields = _excess_fields(_channels(rank_of[_shared(bf[s0:s1]) + 1], bg, work), spectra, work)
        anchors = np.where(st[s0:s1] > 0, st[s0:s1] - 1, -1)
        pos, post = _locate(bf[s0:s1], af[s0:s1], anchors, kernel, copies[s0:s1], counts[s0:s1], decks, back)
        q = _predict(fields, pos, post, len(lags), 10, bg, work)
        q /= q.sum(axis=3, keepdims=True)
        mc, A = q.shape[:2]
        # sum over a, b, u of q0[a] q2[b] q1[u] E[a, b, u]: contracted one law at a time
        t = (q[:, :, 0] @ E2).reshape(mc, A, 10, 10)  # [.., b, u]
        ev = ((q[:, :, 2, :, None] * t).sum(axis=2) * q[:, :, 1]).sum(axis=2)
        out[s0:s1] = np.where(anchors >= 0, ev, np.nan)
    return out


# ----------------------------------------------------------------------------- the edge
def edge_summary(stake, ret) -> dict:
    """Realised return per unit staked over shoes, with its standard error and 95% interval.

    Parameters
    ----------
    stake, ret : (n_shoes,) array_like of float
        Units staked and net return of each shoe (shoes are the independent unit).

    Returns
    -------
    dict
        ``edge`` (return per unit staked), ``se`` (delta-method standard error of the ratio
        estimator over shoes), ``ci95`` [low, high], ``units``, ``bets_shoes`` (shoes with a bet),
        ``n_shoes``, ``per_unit_sd``.

    Notes
    -----
    edge = sum(ret) / sum(stake); with e_s = ret_s - edge * stake_s,
    Var(edge) ~ n/(n-1) * sum(e_s^2) / (sum stake)^2 (Cochran, *Sampling Techniques*, 3rd ed.,
    1977, §6.4, the ratio estimator).
    """
    s = np.asarray(stake, dtype=float)
    r = np.asarray(ret, dtype=float)
    n = s.size
    tot = float(s.sum())
    out = {"n_shoes": int(n), "bets_shoes": int(np.count_nonzero(s)), "units": tot}
    if tot <= 0 or n < 2:
        return out | {"edge": None, "se": None, "ci95": None, "per_unit_sd": None}
    edge = float(r.sum() / tot)
    e = r - edge * s
    se = math.sqrt(n / (n - 1) * float((e * e).sum())) / tot
    return out | {"edge": edge, "se": se, "ci95": [edge - 1.96 * se, edge + 1.96 * se], "per_unit_sd": se * math.sqrt(tot)}


def tracker_edge(name: str, stake, ret, *, threshold: float = 0.0, house_edge: float | None = None, min_units: int = 30,
                 min_shoes: int = 10, extra: dict | None = None) -> TestResult | NotApplicable:
    """One-sided test that a tracker's edge exceeds a threshold declared in advance.

    Parameters
    ----------
    name : str
        Result name (``"tracker_edge:baccarat_sequence"``).
    stake, ret : (n_shoes,) array_like of float
        Units staked and net return per shoe.
    threshold : float
        Edge (return per unit staked) the tracker must not beat; default 0: it must not beat the
        house.
    house_edge : float, optional
        The game's house edge, for the report (a tracker without information returns -house_edge).
    min_units, min_shoes : int
        Fewer units staked or shoes with a bet: not applicable (too few bets for the normal law).

    Returns
    -------
    TestResult or NotApplicable
        statistic = edge (return per unit staked); p-value = P(Z >= (edge - threshold)/se);
        details: the :func:`edge_summary` and the threshold.
    """
    summ = edge_summary(stake, ret)
    details = {"threshold": threshold, "house_edge": house_edge, **summ, **(extra or {})}
    if summ["edge"] is None or summ["units"] < min_units or summ["bets_shoes"] < min_shoes:
        why = ("the tracker never found a bet worth placing" if not summ["units"] else
               f"the tracker bet {summ['units']:.0f} unit(s) in {summ['bets_shoes']} shoe(s): fewer than {min_units} units or {min_shoes} shoes")
        return NotApplicable(name, Requirement.UNPREDICTABILITY, summ["n_shoes"], why)
    se = summ["se"]
    if se <= 0:
        return NotApplicable(name, Requirement.UNPREDICTABILITY, summ["n_shoes"], "returns have no spread (a constant outcome)")
    z = (summ["edge"] - threshold) / se
    p = max(clip_pvalue(float(sps.norm.sf(z))), _TINY)
    return TestResult(name, Requirement.UNPREDICTABILITY, summ["edge"], None, p, summ["n_shoes"],
                      "asymptotic (ratio estimator over shoes)", details | {"z": z})
