"""Cards, shoes, baccarat drawing rules and the blackjack dealer (rngcert.equipment.cards)."""

import json

import numpy as np
import pytest
from _support import shared_file
from numpy.random import PCG64, Generator

from rngcert.equipment import cards as C
from rngcert.errors import EquipmentError, InputError


@pytest.mark.parametrize("tok, face, serial", [
    ("AS", 0, 0), ("KS", 12, 0), ("TH", 22, 0), ("10h", 22, 0), ("qh#3", 24, 3), (" 2C ", 40, 0), ("9D#8", 34, 8),
])
def test_parse_card(tok, face, serial):
    assert C.parse_card(tok) == (face, serial)


@pytest.mark.parametrize("tok", ["ZH", "1H", "QX", "QH#", "QH#0", "", "11S", "Q H"])
def test_unknown_token_raises_with_token(tok):
    with pytest.raises(InputError, match="card token"):
        C.parse_card(tok)


def test_format_roundtrip_all_codes():
    for code in range(52 * 8):
        face, serial = C.parse_card(C.format_card(code))
        assert face == code % 52 and serial == code // 52 + 1
    face, serial, ok = C.parse_cards(["QH#3", "junk", "10S"])
    assert ok.tolist() == [True, False, True] and face.tolist() == [24, -1, 9]


def test_values():
    ranks = C.new_shoe(1)[:13]  # spades A..K
    assert C.baccarat_value(ranks).tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert C.blackjack_value(ranks).tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]
    assert C.value_composition(8, "baccarat").tolist() == [128] + [32] * 9
    assert C.value_composition(1, "blackjack").tolist() == [4] * 9 + [16]


def test_shoe_cut_card_and_penetration():
    s = C.Shoe(8, 7)
    assert s.n_cards == 416 and s.cut_position == 409 and s.penetration == pytest.approx(409 / 416)
    assert C.Shoe(8, 208).penetration == 0.5
    with pytest.raises(EquipmentError, match="decks"):
        C.Shoe(9)
    with pytest.raises(EquipmentError, match="cut_from_back"):
        C.Shoe(1, -1)


def _coup_reference(v):
    """Straight transcription of 004 §2 rule 3.5.1 for one coup (scalar reference)."""
    p, b = (v[0] + v[2]) % 10, (v[1] + v[3]) % 10
    i = 4
    if p >= 8 or b >= 8:
        pass
    elif p >= 6:  # player stands on 6-7; banker hits on 0-5
        if b <= 5:
            b = (b + v[i]) % 10
            i += 1
    else:
        p3 = v[i]
        p = (p + p3) % 10
        i += 1
        draw = {0: True, 1: True, 2: True, 3: p3 != 8, 4: 2 <= p3 <= 7, 5: 4 <= p3 <= 7, 6: 6 <= p3 <= 7, 7: False}[b]
        if draw:
            b = (b + v[i]) % 10
            i += 1
    return (0 if b > p else 1 if p > b else 2), i


def test_baccarat_coup_matches_rule_transcription():
    rng = Generator(PCG64(1))
    v = rng.integers(0, 10, size=(20000, 6))
    out, used = C.baccarat_coup(v)
    ref = np.array([_coup_reference(row) for row in v])
    assert np.array_equal(out, ref[:, 0]) and np.array_equal(used, ref[:, 1])
    # worked cases: naturals stand; banker 3 stands on player's third card 8
    assert C.baccarat_coup(np.array([[8, 0, 0, 5, 9, 9]]))[1][0] == 4
    assert C.baccarat_coup(np.array([[1, 1, 1, 2, 8, 9]]))[1][0] == 5


def test_baccarat_exact_reproduces_reference():
    ref = json.loads(shared_file("reference", "baccarat.json").read_text())
    p = C.baccarat_exact(C.value_composition(8, "baccarat"))
    for name, val in zip(C.BACCARAT_OUTCOMES, p):
        assert round(val, 6) == pytest.approx(ref["probabilities"][name], abs=1e-12)
    edge = C.baccarat_house_edge(p)
    for name in C.BACCARAT_OUTCOMES:
        assert round(edge[name], 6) == pytest.approx(ref["house_edge"][name], abs=1e-12)


def test_baccarat_exact_against_simulation():
    # first coup of 200,000 Fisher-Yates one-deck shoes; exact law within 4 standard errors
    rng = Generator(PCG64(2))
    shoes = rng.permuted(np.tile(C.new_shoe(1), (200_000, 1)), axis=1)
    out, _ = C.baccarat_coup(C.baccarat_value(shoes[:, :6]))
    p = C.baccarat_exact(C.value_composition(1, "baccarat"))
    freq = np.bincount(out, minlength=3) / out.size
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / out.size))


@pytest.mark.parametrize("rule", ["S17", "H17"])
def test_dealer_exact_against_simulation(rule):
    rng = Generator(PCG64(3))
    shoes = rng.permuted(np.tile(C.new_shoe(1), (100_000, 1)), axis=1)
    cat, used = C.dealer_play(C.blackjack_value(shoes[:, :17]), rule)
    p = C.dealer_exact(C.value_composition(1, "blackjack"), rule)
    assert p.sum() == pytest.approx(1, abs=1e-12) and np.all(cat >= 0)
    freq = np.bincount(cat, minlength=6) / cat.size
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / cat.size))


def test_dealer_rules_differ_on_soft_17():
    # A,6 then 4: S17 stands on soft 17; H17 hits to 21
    v = np.array([[1, 6, 4, 10, 10]])
    assert C.dealer_play(v, "S17")[0][0] == 0 and C.dealer_play(v, "H17")[0][0] == 4
    p_s, p_h = (C.dealer_exact(C.value_composition(8, "blackjack"), r) for r in ("S17", "H17"))
    assert p_h[5] > p_s[5] and p_h[0] < p_s[0]  # H17 busts more and ends on 17 less
    with pytest.raises(InputError, match="dealer rule"):
        C.dealer_exact(C.value_composition(8, "blackjack"), "S16")


def test_coup_table_plays_every_coup_as_the_drawing_rules():
    # the deal plays each coup by one look-up of (Player total, Banker total, 5th, 6th card): all 10^6
    # value sequences of six cards give the outcome and cards used of baccarat_coup
    from rngcert.equipment.cards import _coup_table, baccarat_coup

    v = np.indices((10,) * 6).reshape(6, -1).T.astype(np.int16)
    outcome, used = baccarat_coup(v)
    cell = (((v[:, 0] + v[:, 2]) % 10 * 10 + (v[:, 1] + v[:, 3]) % 10) * 10 + v[:, 4]) * 10 + v[:, 5]
    out_at, used_at = _coup_table()
    assert np.array_equal(out_at[cell], outcome) and np.array_equal(used_at[cell], used)
