"""Scaling raw RNG words to game outcomes, and the exact bias each mapping introduces.

An electronic wheel or shuffler draws a uniform ``bits``-bit word and maps it to one of k
outcomes (37 pockets, 52 cards...). Three mappings are in use:

``modulo``
    outcome = w mod k. With :math:`2^b = qk + r`, outcomes 0..r-1 receive q+1 words, the
    others q: a bias whenever k does not divide :math:`2^b`.
``multiply-shift``
    outcome = floor(w k / 2^b) (Lemire's multiply-shift without rejection). Outcome j
    receives :math:`\\lceil (j+1)2^b/k\\rceil - \\lceil j 2^b/k\\rceil` words: again q or q+1,
    but spread over the range instead of piled on the low outcomes.
``rejection``
    words :math:`w \\ge k\\lfloor 2^b/k\\rfloor` are discarded and the draw repeated; the rest
    map by w mod k. Exactly uniform; costs a rejection probability :math:`r/2^b`.

All probabilities are computed exactly with integers and :class:`fractions.Fraction`; nothing is
simulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rngcert.errors import InputError

__all__ = ["METHODS", "ScalingResult", "outcome_probabilities", "map_words"]

METHODS = ("modulo", "multiply-shift", "rejection")
_MAX_OUTCOMES = 1 << 24


def _scaling_iv(bits, outcomes, method):
    if method not in METHODS:
        raise InputError(f"method={method!r}; allowed: {', '.join(map(repr, METHODS))}")
    if not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 64:
        raise InputError(f"bits={bits!r}; an integer word size in 1..64 is required")
    if not isinstance(outcomes, (int, np.integer)) or outcomes < 1:
        raise InputError(f"outcomes={outcomes!r}; a positive integer is required")
    if outcomes > 1 << int(bits):
        raise InputError(f"outcomes={outcomes!r} exceeds the {1 << int(bits)} values of a word of {bits} bits")
    if outcomes > _MAX_OUTCOMES:
        raise InputError(f"outcomes={outcomes!r} exceeds rngcert's limit of {_MAX_OUTCOMES:,} outcomes (2^24; the exact "
                         "distribution lists every outcome)")
    return int(bits), int(outcomes)


@dataclass(frozen=True)
class ScalingResult:
    """Exact outcome distribution of a word-to-outcome mapping.

    Attributes
    ----------
    bits, outcomes, method
        The mapping.
    counts : tuple of int
        Words mapped to each outcome (accepted words only, for rejection).
    denominator : int
        Words that produce an outcome: 2**bits, or the accepted words for rejection.
    probabilities : tuple of Fraction
        ``counts[j] / denominator``.
    max_bias : Fraction
        :math:`\\max_j |p_j - 1/k|`.
    max_relative_bias : Fraction
        :math:`\\max_j |k p_j - 1|`.
    rejection_probability : Fraction
        Probability that a word is discarded (0 except for rejection).
    """

    bits: int
    outcomes: int
    method: str
    counts: tuple
    denominator: int
    probabilities: tuple
    max_bias: Fraction
    max_relative_bias: Fraction
    rejection_probability: Fraction

    def _extreme(self, pick) -> list[int]:
        """Outcomes whose count is ``pick(counts)`` (empty when exactly uniform)."""
        if self.max_bias == 0:
            return []
        c = pick(self.counts)
        return [j for j, v in enumerate(self.counts) if v == c]

    @property
    def favoured(self) -> list[int]:
        """Outcomes with the largest probability (empty when exactly uniform)."""
        return self._extreme(max)

    @property
    def disfavoured(self) -> list[int]:
        """Outcomes with the smallest probability (empty when exactly uniform)."""
        return self._extreme(min)

    def to_dict(self) -> dict:
        """JSON-able summary; fractions as "a/b" strings next to floats."""
        return {
            "bits": self.bits, "outcomes": self.outcomes, "method": self.method,
            "denominator": str(self.denominator),
            "counts": [str(c) for c in self.counts],
            "probabilities": [float(p) for p in self.probabilities],
            "max_bias": str(self.max_bias), "max_bias_float": float(self.max_bias),
            "max_relative_bias": float(self.max_relative_bias),
            "rejection_probability": str(self.rejection_probability),
            "favoured": self.favoured, "disfavoured": self.disfavoured,
        }


def outcome_probabilities(bits: int, outcomes: int, method: str) -> ScalingResult:
    """Exact probability of each outcome when a uniform ``bits``-bit word is scaled.

    Parameters
    ----------
    bits : int in 1..64
        Word size of the raw RNG output.
    outcomes : int
        Number k of outcomes (e.g. 37 pockets).
    method : {"modulo", "multiply-shift", "rejection"}

    Returns
    -------
    ScalingResult

    Raises
    ------
    InputError
        Unknown method, bits outside 1..64, outcomes < 1 or > 2**bits (or > 2**24).

    Notes
    -----
    Integer arithmetic only. Modulo: with :math:`2^b = qk + r`,
    :math:`c_j = q + [j < r]`. Multiply-shift: :math:`c_j = \\lceil (j+1)2^b/k \\rceil -
    \\lceil j2^b/k \\rceil`. Rejection: :math:`c_j = q`, rejection probability :math:`r/2^b`.
    Example: a byte modulo 37 gives 256 = 6 * 37 + 34, so outcomes 0..33 have 7/256 and
    34, 35, 36 have 6/256.

    References
    ----------
    .. [1] Lemire D. (2019) Fast random integer generation in an interval. ACM TOMACS 29(1),
       article 3.
    .. [2] Knuth D. E., The Art of Computer Programming vol. 2, 3rd ed., section 3.4.1.
    """
    b, k = _scaling_iv(bits, outcomes, method)
    total = 1 << b
    q, r = divmod(total, k)
    extra = _extra_words(method, k, r)  # 0 or 1 per outcome: its count is q + extra
    denom, rej = (q * k, Fraction(r, total)) if method == "rejection" else (total, Fraction(0))
    # two distinct counts at most: every outcome shares one of two int and Fraction objects (2**24 outcomes in 0.3 GB, not 7)
    ints, fracs = (q, q + 1), (Fraction(q, denom), Fraction(q + 1, denom))
    counts = tuple(map(ints.__getitem__, extra.tolist()))
    probs = tuple(map(fracs.__getitem__, extra.tolist()))
    cmax, cmin = max(counts), min(counts)
    bias = max(abs(Fraction(cmax, denom) - Fraction(1, k)), abs(Fraction(cmin, denom) - Fraction(1, k)))
    return ScalingResult(b, k, method, counts, denom, probs, bias, bias * k, rej)


def _extra_words(method: str, k: int, r: int) -> np.ndarray:
    """Per outcome, 1 when it receives q + 1 words and 0 when q (2**b = q k + r), vectorised.

    Modulo: outcomes below r. Multiply-shift: with ceil(j 2**b / k) = j q + ceil(j r / k), the
    count of outcome j is q + ceil((j + 1) r / k) - ceil(j r / k) (integers below 2**48). Rejection: none."""
    j = np.arange(k, dtype=np.int64)
    if method == "modulo":
        return (j < r).astype(np.int64)
    if method == "multiply-shift":
        def ceil_div(a):
            return -((-a) // k)
        return ceil_div((j + 1) * r) - ceil_div(j * r)
    return np.zeros(k, dtype=np.int64)


def map_words(words, outcomes: int, method: str, *, bits: int):
    """Map raw words to outcomes, vectorised.

    Parameters
    ----------
    words : (N,) array_like of unsigned int
        Raw words, each in [0, 2**bits).
    outcomes : int
        Number k of outcomes.
    method : {"modulo", "multiply-shift", "rejection"}
    bits : int in 1..64
        Word size.

    Returns
    -------
    outcomes : (N',) ndarray of int64
        Outcome of each word in order (N' = N except for rejection, where rejected words are
        dropped).
    rejected : int
        Number of words discarded (0 except for rejection).

    Raises
    ------
    InputError
        A word outside [0, 2**bits), or invalid parameters.
    """
    b, k = _scaling_iv(bits, outcomes, method)
    w = np.asarray(words)
    if w.ndim != 1:
        raise InputError(f"words must be one-dimensional, got shape {w.shape}")
    if w.size and not np.issubdtype(w.dtype, np.integer):
        raise InputError(f"words must be integers, got dtype {w.dtype}")
    if w.size and np.issubdtype(w.dtype, np.signedinteger) and (w < 0).any():
        i = int(np.argmax(w < 0))
        raise InputError(f"words[{i}] = {w[i]!r} is negative")
    w = w.astype(np.uint64)
    if b < 64 and w.size and (w >> np.uint64(b)).any():
        i = int(np.argmax((w >> np.uint64(b)) != 0))
        raise InputError(f"words[{i}] = {int(w[i])} does not fit in {b} bits")
    kk = np.uint64(k)
    if method == "modulo":
        return (w % kk).astype(np.int64), 0
    if method == "rejection":
        limit = (1 << b) - ((1 << b) % k)       # k * floor(2^b / k)
        keep = w < np.uint64(limit) if limit < (1 << 64) else np.ones(w.size, bool)
        return (w[keep] % kk).astype(np.int64), int(w.size - np.count_nonzero(keep))
    # multiply-shift: floor(w * k / 2^b) without overflow (k < 2^32 for b > 32)
    if b <= 32:
        return ((w * kk) >> np.uint64(b)).astype(np.int64), 0
    if k >= (1 << 32):
        raise InputError(f"multiply-shift with bits={b} supports outcomes < 2**32, got {k}")
    lo = w & np.uint64(0xFFFFFFFF)
    hi = w >> np.uint64(32)
    t = lo * kk
    u = hi * kk + (t >> np.uint64(32))            # = floor(w * k / 2^32), < 2^64
    return (u >> np.uint64(b - 32)).astype(np.int64), 0
