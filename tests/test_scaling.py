"""Exact outcome probabilities of raw-word-to-outcome mappings (equipment/scaling.py).

Runtime: under 1 s.
"""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from rngcert.equipment.scaling import METHODS, map_words, outcome_probabilities
from rngcert.errors import InputError


def test_byte_modulo_37():
    r = outcome_probabilities(8, 37, "modulo")
    # 256 = 6 * 37 + 34: outcomes 0..33 get 7 bytes, 34, 35, 36 get 6
    assert r.probabilities[35] == r.probabilities[36] == Fraction(6, 256)
    assert r.probabilities[34] == Fraction(6, 256)
    assert all(p == Fraction(7, 256) for p in r.probabilities[:34])
    assert r.disfavoured == [34, 35, 36] and len(r.favoured) == 34
    assert r.max_bias == Fraction(1, 37) - Fraction(6, 256)
    assert sum(r.probabilities) == 1 and r.rejection_probability == 0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("bits,k", [(8, 37), (8, 38), (10, 52), (12, 54), (16, 37), (5, 32)])
def test_exact_against_enumeration(method, bits, k):
    r = outcome_probabilities(bits, k, method)
    out, rejected = map_words(np.arange(2 ** bits), k, method, bits=bits)
    counts = np.bincount(out, minlength=k)
    assert tuple(counts.tolist()) == r.counts
    assert rejected == 2 ** bits - r.denominator
    assert r.rejection_probability == Fraction(rejected, 2 ** bits)
    assert sum(r.probabilities) == 1


def test_rejection_is_uniform_and_power_of_two_is_unbiased():
    assert outcome_probabilities(32, 37, "rejection").max_bias == 0
    for m in METHODS:
        assert outcome_probabilities(32, 64, m).max_bias == 0


def test_32_and_64_bit_biases():
    r = outcome_probabilities(32, 37, "modulo")
    q, rem = divmod(2 ** 32, 37)
    assert r.counts[0] == q + 1 and r.counts[-1] == q and sum(r.counts) == 2 ** 32
    assert float(r.max_relative_bias) == pytest.approx(37 * (q + 1) / 2 ** 32 - 1, rel=1e-12)
    ms = outcome_probabilities(64, 37, "multiply-shift")
    assert sum(ms.counts) == 2 ** 64 and set(ms.counts) <= {2 ** 64 // 37, 2 ** 64 // 37 + 1}
    rej = outcome_probabilities(64, 37, "rejection")
    assert rej.rejection_probability == Fraction(2 ** 64 % 37, 2 ** 64)


def test_map_words_64_bit_multiply_shift_exact():
    rng = np.random.default_rng(1)
    w = rng.integers(0, 2 ** 64, 5000, dtype=np.uint64, endpoint=False)
    w[:3] = [0, 2 ** 64 - 1, 2 ** 63]
    out, _ = map_words(w, 37, "multiply-shift", bits=64)
    assert out.tolist() == [(int(v) * 37) >> 64 for v in w]
    out, _ = map_words(w, 37, "modulo", bits=64)
    assert out.tolist() == [int(v) % 37 for v in w]


def test_modulo_byte_bias_detectable_by_chisquare():
    """Simulated check that the exact distribution is what a stream of bytes produces."""
    rng = np.random.default_rng(2)
    out, _ = map_words(rng.integers(0, 256, 2_000_000), 37, "modulo", bits=8)
    counts = np.bincount(out, minlength=37)
    r = outcome_probabilities(8, 37, "modulo")
    exact = np.array([float(p) for p in r.probabilities])
    assert stats.chisquare(counts, 2_000_000 * exact).pvalue > 1e-3   # fits the exact law
    assert stats.chisquare(counts).pvalue < 1e-10                     # not the uniform one


def test_bad_inputs():
    with pytest.raises(InputError, match="method='floor'"):
        outcome_probabilities(8, 37, "floor")
    with pytest.raises(InputError, match="bits=0"):
        outcome_probabilities(0, 37, "modulo")
    with pytest.raises(InputError, match="outcomes=300 exceeds"):
        outcome_probabilities(8, 300, "modulo")
    with pytest.raises(InputError, match="does not fit in 8 bits"):
        map_words(np.array([1, 256]), 37, "modulo", bits=8)
    with pytest.raises(InputError, match="negative"):
        map_words(np.array([1, -1]), 37, "modulo", bits=8)


def test_inputs_not_modified_and_dict():
    w = np.arange(256, dtype=np.uint64)
    w0 = w.copy()
    map_words(w, 37, "rejection", bits=8)
    np.testing.assert_array_equal(w, w0)
    d = outcome_probabilities(8, 37, "modulo").to_dict()
    assert d["max_bias"] == "17/4736" and d["disfavoured"] == [34, 35, 36]


def test_modulo_37_bytes_detected_at_100000_spins():
    """Issue 6: the modulo-37 byte mapping must fail a pocket chi-square at 100,000 spins.
    Exact noncentrality 100000 * 37 * sum (p_j - 1/37)^2 = 155.6 on 36 df (power ~ 1 at 0.01);
    a simulated run through a PCG64 byte stream is rejected (scipy.stats.chisquare)."""
    r = outcome_probabilities(8, 37, "modulo")
    dev = np.array([float(p - Fraction(1, 37)) for p in r.probabilities])
    lam = 100_000 * 37 * np.sum(dev ** 2)
    assert lam == pytest.approx(155.6, abs=0.1)
    crit = stats.chi2.ppf(0.99, 36)
    assert stats.ncx2.sf(crit, 36, lam) > 0.999
    words = np.random.Generator(np.random.PCG64(2026)).integers(0, 256, 100_000)
    spins, _ = map_words(words, 37, "modulo", bits=8)
    assert stats.chisquare(np.bincount(spins, minlength=37)).pvalue < 0.01
    fair, rej = map_words(words, 37, "rejection", bits=8)
    assert rej > 0 and stats.chisquare(np.bincount(fair, minlength=37)).pvalue > 0.01
