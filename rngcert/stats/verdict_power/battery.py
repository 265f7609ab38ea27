"""The battery's count-based tests at their levels on simulated count vectors, and the power
curve of one sample reweighted to every effect (:mod:`rngcert.stats.verdict_power`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer
from rngcert.stats.verdict_power.common import COUNT_TESTS, _block_pi, _parse
from rngcert.stats.verdict_power.maxcount import _MaxCountRule
from rngcert.stats.verdict_power.scan import _arcs, _scan, _scan_lengths, _ScanRule


# ----------------------------------------------------------------------------- the battery's rules
def _check(n, k, levels, categories):
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}")
    if isinstance(k, bool) or int(k) != k or k < 3:
        raise InputError(f"k must be an integer >= 3, got {k!r}")
    if not levels:
        raise InputError("levels must name at least one test")
    known = COUNT_TESTS + ("dealer_signature",) + tuple(categories)
    for t, a in levels.items():
        if t not in known:
            raise InputError(f"no verdict-power model for test {t!r}; known: {known}")
        if not 0 < a < 1:
            raise InputError(f"level of {t} must be in (0, 1), got {a!r}")
    out = {}
    for t, ids in categories.items():
        c = np.asarray(ids)
        if c.shape != (int(k),) or not np.issubdtype(c.dtype, np.integer) or len(set(c[c >= 0].tolist())) < 2:
            raise InputError(f"categories[{t!r}] must be ({k},) integer ids with at least two categories >= 0")
        out[t] = c
    return out


def _category_matrix(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, m) indicator of the categories (id -1 in none) and their null shares."""
    keep = ids >= 0
    m = int(ids[keep].max()) + 1
    A = (ids[:, None] == np.arange(m)[None, :]).astype(float)
    return A, A.sum(axis=0) / keep.sum()


def _category_chisquare(x: np.ndarray, ids: np.ndarray, _A=None) -> tuple[np.ndarray, int]:
    """Pearson chi-square of the category counts (uniform null over the included positions) for
    count arrays ``x`` (b, k); positions with id -1 are excluded, as in the battery."""
    A, share = _A if _A is not None else _category_matrix(ids)
    agg = np.asarray(x, dtype=float) @ A
    e = agg.sum(axis=1, keepdims=True) * share[None, :]
    return np.sum((agg - e) ** 2 / np.where(e > 0, e, 1.0), axis=1), A.shape[1] - 1


class _Battery:
    """The count-based tests at their levels for samples of n spins in ``groups`` groups."""

    def __init__(self, n, k, levels, cats, dealer, groups, n_resamples, entropy):
        self.n, self.k, self.dealer, self.groups = n, k, dealer, groups
        self.cats, self.rules = cats, {}
        for test, a in levels.items():
            if dealer != (test == "dealer_signature"):
                continue
            if test in cats:
                A = _category_matrix(cats[test])
                self.rules[test] = (float(special.chdtri(A[0].shape[1] - 1, a)), A)
            elif test == "pocket_chisquare":
                self.rules[test] = float(special.chdtri(k - 1, a))
            elif test == "first_harmonic":
                self.rules[test] = float(special.chdtri(2, a))
            elif test == "max_count":
                self.rules[test] = _MaxCountRule(n, k, a, None if n_resamples is None else int(n_resamples))
            else:
                self.rules[test] = _ScanRule(test, n, k, groups, a, n_resamples, entropy)
        lengths = _scan_lengths("dealer_signature" if dealer else "sector_scan", k)
        self.arcs = _arcs(n, k, lengths)

    def evaluate(self, x: np.ndarray) -> "_Eval":
        """The tests on count rows ``x`` (N, k) of one group: P(FAIL | x), or for the dealer
        signature P(reject | the maximum over groups is this row's statistic)."""
        n, k = self.n, self.k
        miss = np.ones(x.shape[0])
        xs = x.astype(float)
        M, scan = np.zeros(x.shape[0]), None
        for test, rule in self.rules.items():
            if test in self.cats:
                s, _ = _category_chisquare(xs, self.cats[test], rule[1])
                rej = s > rule[0]
            elif test == "pocket_chisquare":
                e = n / k
                rej = np.sum((xs - e) ** 2, axis=1) / e > rule
            elif test == "first_harmonic":
                th = 2.0 * np.pi * np.arange(k) / k
                rej = 2.0 / n * ((xs @ np.cos(th)) ** 2 + (xs @ np.sin(th)) ** 2) > rule
            elif test == "max_count":
                rej = rule(x.max(axis=1))
            else:
                M, scan = _scan(x, self.arcs)[0], rule
                continue
            miss *= 1.0 - rej  # deterministic rejections multiply out exactly
        return _Eval(miss, M, scan)

    def null_rse(self) -> dict:
        return {t: r.rse_at_level() for t, r in self.rules.items() if isinstance(r, _ScanRule) and r.tail is not None}


@dataclass(frozen=True)
class _Eval:
    """The tests on N samples: the probability that no deterministic test rejects, and the scan
    statistic with its rule (Monte Carlo rejections are independent of the rest given the sample)."""

    miss: np.ndarray
    stat: np.ndarray
    scan: _ScanRule | None

    def fail(self, scale: float = 1.0) -> np.ndarray:
        """P(FAIL | sample), the scan's null tail multiplied by ``scale``."""
        if self.scan is None:
            return 1.0 - self.miss
        return 1.0 - self.miss * (1.0 - self.scan(self.stat, scale))


# ----------------------------------------------------------------------------- power curves
class _Curve:
    """Power of the verdict as a function of the effect, from one sample drawn at block
    probability ``pi0`` (likelihood-ratio weights on the block totals ``m``)."""

    def __init__(self, n, k, K, pi0, m, ev: _Eval, groups, scale: float = 1.0):
        self.n, self.k, self.K, self.pi0, self.groups, self.ev = n, k, K, pi0, groups, ev
        self.order = np.argsort(ev.stat, kind="stable") if groups > 1 else np.arange(m.size)
        self.m, self.val = m[self.order].astype(float), ev.fail(scale)[self.order]
        self._m = m

    def rescaled(self, scale: float) -> "_Curve":
        """The same draws with the scan's estimated null tail q multiplied by ``scale``."""
        return _Curve(self.n, self.k, self.K, self.pi0, self._m, self.ev, self.groups, scale)

    def weights(self, e: float) -> np.ndarray:
        pi = _block_pi(e, self.K, self.k)
        lw = self.m * math.log(pi / self.pi0) + (self.n - self.m) * math.log((1.0 - pi) / (1.0 - self.pi0))
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def power(self, e: float, se: bool = False):
        w = self.weights(e)
        g = self.groups
        if g == 1:
            p = float(w @ self.val)
            if not se:
                return p
            return p, float(math.sqrt(np.sum((w * (self.val - p)) ** 2))), float(1.0 / np.sum(w * w))
        F = np.cumsum(w)
        Fg = F**g
        dFg = np.diff(Fg, prepend=0.0)
        p = float(self.val @ dFg)
        if not se:
            return p
        # influence of one group's draw on E[phi(max of g)]: g (h(y) - p), h(y) = E phi(max(y, Y_2..Y_g))
        Fg1 = F ** (g - 1)
        after = np.concatenate([np.cumsum((self.val * np.diff(Fg1, prepend=0.0))[::-1])[::-1][1:], [0.0]])
        h = self.val * Fg1 + after
        return p, float(g * math.sqrt(np.sum((w * (h - p)) ** 2))), float(1.0 / np.sum(w * w))


def _sample(bat: _Battery, K: int, pi0: float, size: int, rng) -> _Curve:
    """``size`` draws of one group under a block alternative with block probability pi0."""
    n, k = bat.n, bat.k
    m = rng.binomial(n, pi0, size=size)
    inside = m[:, None] if K == 1 else rng.multinomial(m, np.full(K, 1.0 / K))
    x = np.concatenate([inside, rng.multinomial(n - m, np.full(k - K, 1.0 / (k - K)))], axis=1)
    return _Curve(n, k, K, pi0, m, bat.evaluate(x), bat.groups)


def _setup(n, k, alternative, levels, groups, n_resamples, entropy, categories):
    cats = _check(n, k, levels, categories or {})
    n, k = int(n), int(k)
    kind, width = _parse(alternative, k)
    dealer = kind == "dealer-signature"
    g = max(1, int(groups)) if dealer else 1
    if n // g < 1:
        raise InputError(f"{n} spins cannot fill {g} groups")
    bat = _Battery(n // g, k, dict(levels), cats, dealer, g, n_resamples, int(entropy))
    return n, k, kind, width, g, bat
