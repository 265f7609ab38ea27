"""The blackjack trackers: Hi-Lo count, zone (shuffle) tracker and key-card (ace-sequencing) tracker
(part of :mod:`rngcert.stats.trackers`, which re-exports the public names)."""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as _sfft

from rngcert.equipment.cards import HILO_TAG
from rngcert.stats.tracker_kernel import OffsetKernel, _channels, _check_kernel, _copies, _excess_fields, _iv, _kernel_spectra, _locate, _predict, _shared

__all__ = ["SPREAD", "spread_bet", "hilo_counter", "blackjack_zone_tracker", "blackjack_sequence_tracker"]

#: Bet spread of the blackjack trackers, declared in advance: (true count at least, units).
SPREAD = ((-math.inf, 1), (2.0, 2), (3.0, 4), (4.0, 8))


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
    _check_kernel(kernel, n, max(cards_ahead + anchors - 1, back))
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
    before_view, after, starts
        As :func:`blackjack_zone_tracker`.
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
    _check_kernel(kernel, n, max(lags[-1], back))
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
