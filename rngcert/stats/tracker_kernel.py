"""Trackers' knowledge of a shuffle: the offset kernel and the locator of the last dealt card
in the order before the shuffle (part of :mod:`rngcert.stats.trackers`, which re-exports the public names)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import fft as _sfft

from rngcert.errors import InputError

__all__ = ["OffsetKernel", "learn_kernel"]


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


# long: the hot kernel of the trackers: gather, byte-parallel match and table look-up run in place on the same large arrays
#   (splitting it would pass or copy them between functions); 35 lines of docstring besides
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


def _check_kernel(kernel: OffsetKernel, n: int, need: int) -> None:
    """Raise unless ``kernel`` is for ``n`` cards with at least ``need`` lags."""
    if kernel.n != n or kernel.lags < need:
        raise InputError(f"kernel is for {kernel.n} cards with {kernel.lags} lags; need {n} cards and >= {need} lags")
