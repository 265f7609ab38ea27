"""The six-card enumeration of baccarat (the exact coup law and the trackers' exact returns) counts the repeated
cards by comparing the columns: the same bits as the (10**6, 10) table of cards used that it replaced (issue 26:
that table was most of `shuffle certify`'s serial warm-up)."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.equipment.cards import baccarat_coup, baccarat_exact, six_card_draws, value_composition
from rngcert.stats.tracker_baccarat import baccarat_prefix_returns


def _table_of_cards_used(c):
    """The replaced enumeration: every sequence's draw factors from a table of the cards used so far."""
    seq = np.indices((10,) * 6).reshape(6, -1).T
    n = float(c.sum())
    rows = np.arange(seq.shape[0])
    used = np.zeros((seq.shape[0], 10), dtype=c.dtype)
    out = []
    for k in range(6):
        v = seq[:, k]
        out.append(np.maximum(c[v] - used[rows, v], 0) / (n - k))
        used[rows, v] += 1
    return out, baccarat_coup(seq)[0]


@pytest.mark.parametrize("comp", [value_composition(8, "baccarat"), value_composition(1, "baccarat"),
                                  np.array([1, 0, 3, 2, 0, 5, 1, 1, 0, 2]), np.array([30, 0, 0, 0, 0, 0, 0, 0, 0, 6])])
def test_six_card_draws_equal_the_table_of_cards_used(comp):
    for c in (np.asarray(comp, dtype=np.int64), np.asarray(comp, dtype=float)):
        got, outcome = six_card_draws(c)
        want, want_outcome = _table_of_cards_used(c)
        np.testing.assert_array_equal(outcome, want_outcome)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    prob = np.ones(10**6)
    for f in _table_of_cards_used(np.asarray(comp, dtype=np.int64))[0]:
        prob *= f
    ref = np.bincount(_table_of_cards_used(np.asarray(comp, dtype=np.int64))[1], weights=prob, minlength=3)
    np.testing.assert_array_equal(baccarat_exact(comp), ref / ref.sum())


def test_prefix_returns_are_the_house_edges():
    """Thorp & Walden (1966), 8 decks: Banker 1.0579%, Player 1.2351% (the trackers' exact tables summed)."""
    t = baccarat_prefix_returns(8)
    assert -float((t["banker"] * t["head"]).sum()) == pytest.approx(0.010579, abs=5e-7)
    assert -float((t["player"] * t["head"]).sum()) == pytest.approx(0.012351, abs=5e-7)
