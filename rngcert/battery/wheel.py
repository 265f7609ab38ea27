"""The wheel battery (roulette and money wheels; issue 2, DESIGN §5) as data.

:data:`WHEEL` is a module-level :class:`~rngcert.battery.core.Battery`; :class:`WheelData` is what
it runs on: one table's :class:`~rngcert.stats.tally.SpinTally` (counts, pairs, run boundaries),
the outcome sequence for the tests that need the order, and the optional dealer, direction and
release columns. Adding a test to the battery is one :class:`Spec` line here and its function in
:mod:`rngcert.stats`.

Needs used here:

=============================  ==========================================================
``equipment:circular``         the wheel order is known (pocket ids are positions)
``equipment:colour``           the wheel has red/black pockets (roulette)
``equipment:no-colour``        it has not (money wheels: top symbol against the rest)
``equipment:category:NAME``    the outcome space has the partition NAME (outside bets)
=============================  ==========================================================
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from typing import Sequence

import numpy as np

from rngcert.battery.core import Battery, Context, Spec
from rngcert.stats import arrayops, frequency, predict, rotor, runs, sector, serial, signature
from rngcert.stats.chunks import share_at_least_half, spans
from rngcert.stats.result import NotApplicable, Requirement, TestResult
from rngcert.stats.tally import SpinTally

U, I, P = Requirement.UNIFORMITY, Requirement.INDEPENDENCE, Requirement.UNPREDICTABILITY

#: Binary partitions of a roulette wheel whose runs are tested (zero is in neither category).
RUN_PARTITIONS = ("colour", "parity", "low_high")


@dataclass
class WheelData:
    """One table's spins as the wheel battery sees them.

    Attributes
    ----------
    outcomes : (n,) int array
        Outcome ids in ``space`` (wheel positions, or symbols when the order is unknown).
    space : rngcert.equipment.wheel.OutcomeSpace
        Labels, null probabilities, whether ids are positions on a circle, and partitions.
    release, dealer, direction : (n,) int arrays, optional
        Release pocket (-1 unknown), dealer index into ``dealer_labels``, direction (0 cw,
        1 ccw, -1 unknown).
    rotor_speed : (n,) float array, optional
        Rotor speed at the ball's launch (NaN unknown).
    ball_direction : (n,) int array, optional
        Direction the ball was spun (0 cw, 1 ccw, -1 unknown).
    tally : SpinTally, optional
        The table's tally; computed from ``outcomes`` when not given (a chunked reader passes
        the sum of its chunks' tallies, which is the same).
    """

    outcomes: np.ndarray
    space: object
    release: np.ndarray | None = None
    dealer: np.ndarray | None = None
    dealer_labels: Sequence[str] = ()
    direction: np.ndarray | None = None
    tally: SpinTally | None = field(default=None)
    pair_mask: np.ndarray | None = None
    pair_mask_reason: str = ""
    rotor_speed: np.ndarray | None = None
    ball_direction: np.ndarray | None = None

    def __post_init__(self):
        self.outcomes = np.asarray(self.outcomes)
        if self.tally is None:
            self.tally = SpinTally.of(self.outcomes, self.space.m, partitions=self.run_partitions)
        if self.pair_mask is not None:
            self.pair_mask = np.asarray(self.pair_mask, dtype=bool)
            if self.pair_mask.shape != (max(self.outcomes.size - 1, 0),):
                raise ValueError("pair_mask must have one entry per consecutive pair (n - 1)")

    @property
    def pairs(self) -> np.ndarray:
        """(k, k) counts of consecutive pairs used by the pair-based tests: all pairs, or those
        that ``pair_mask`` keeps (a data-integrity finding can exclude pairs that straddle the
        lines of a transcribed permanence list)."""
        if self.pair_mask is None:
            return self.tally.pairs
        x, m, keep = self.outcomes, self.m, self.pair_mask
        out = np.zeros(m * m, dtype=np.int64)
        for lo, hi in spans(keep.size):  # loop over spans of pairs
            key = x[lo:hi][keep[lo:hi]].astype(np.intp)
            key *= m
            key += x[lo + 1 : hi + 1][keep[lo:hi]]
            out += np.bincount(key, minlength=m * m)
        return out.reshape(m, m)

    @property
    def has_dealer_data(self) -> bool:
        rel = self.release
        return self.dealer is not None or (rel is not None and share_at_least_half(lambda lo, hi: rel[lo:hi] >= 0, rel.size))

    # ------------------------------------------------------------------ derived data
    @property
    def m(self) -> int:
        return int(self.space.m)

    @property
    def probs(self) -> np.ndarray:
        return np.asarray(self.space.probs)

    @property
    def counts(self) -> np.ndarray:
        return self.tally.counts

    @property
    def categories(self) -> dict:
        return dict(self.space.categories)

    @property
    def run_partitions(self) -> dict[str, np.ndarray]:
        """0/1/-1 partitions whose runs are tested: colour (red 0, black 1, zero -1), parity and
        low/high on roulette; the most likely symbol against the rest on a money wheel."""
        cats = self.categories
        if "colour" in cats:
            col = cats["colour"][0]
            return {"colour": np.where(col == 2, -1, col), "parity": cats["parity"][0], "low_high": cats["low_high"][0]}
        return {"top_symbol": self.top_symbol_target.astype(int)}

    @cached_property
    def colour_runs(self) -> runs.ColourRuns:
        """The colour runs of the spins (roulette), read once for the longest-run test and the
        Roulette Rage section (:func:`rngcert.stats.runs.colour_runs`)."""
        return runs.colour_runs(self.outcomes, self.categories["colour"][0])

    @cached_property
    def top_symbol_target(self) -> np.ndarray:
        """(m,) bool: outcomes of the most likely symbol (money wheels)."""
        cats = self.categories
        sym = cats["symbol"][0] if "symbol" in cats else np.arange(self.m)
        sym_p = np.bincount(sym, weights=self.probs)
        return sym == int(np.argmax(sym_p))

    @property
    def gap_target(self) -> np.ndarray:
        """(m,) bool: the outcomes whose gaps the gap test counts (red on roulette, the most
        likely symbol on a money wheel)."""
        return self.categories["colour"][0] == 0 if self.two_colours else self.top_symbol_target

    @property
    def two_colours(self) -> bool:
        """Whether the wheel has red pockets and black pockets (a lab's all-green or all-red wheel has not: its
        colour runs have no law, and its gap test no red target)."""
        cats = self.categories
        if "colour" not in cats:
            return False
        ids = np.asarray(cats["colour"][0])
        return bool((ids == 0).any() and (ids == 1).any())

    def lacks(self, need: str) -> str | None:
        """Reason why ``need`` does not hold for these data, or None."""
        cats = self.categories
        if need == "equipment:circular":
            return None if self.space.circular else "the wheel order is not known (tested at the level of symbols)"
        if need == "equipment:colour":
            return None if self.two_colours else "the wheel has no red/black pockets" if "colour" not in cats else \
                "the wheel does not have both red and black pockets"
        if need == "equipment:no-colour":
            return None if "colour" not in cats else "the wheel has red/black pockets"
        if need == "dealer_or_release":
            if self.has_dealer_data:
                return None
            return ("no dealer ids or release pockets in the log: the landing offset from the previous result is "
                    "already the wheel-distance test (independence)")
        if need in ROTOR_NEEDS:
            return self._lacks_rotor(need)
        if need.startswith("equipment:category:"):
            name = need.split(":", 2)[2]
            return None if name in cats else f"the wheel has no {name} partition"
        return f"unknown need {need!r}"


    def _lacks_rotor(self, need: str) -> str | None:
        """Why the rotor column ``need`` cannot be used (absent, or unknown in every spin), or None."""
        col = {"direction": self.direction, "rotor_speed": self.rotor_speed, "ball_direction": self.ball_direction}[need]
        what = ROTOR_NEEDS[need]
        if col is None:
            return f"the log has no {need} column ({what})"
        known = share_at_least_half(lambda lo, hi: np.isfinite(col[lo:hi]) if col.dtype.kind == "f" else col[lo:hi] >= 0, col.size)
        return None if known else f"the {need} column ({what}) is empty in most spins"


#: The data needs of the rotor tests: a column of the log, and what it records.
ROTOR_NEEDS = {
    "direction": "which way the rotor turned",
    "rotor_speed": "the rotor's speed at the ball's launch",
    "ball_direction": "which way the ball was spun",
}


# ---------------------------------------------------------------------- test functions
def _with_details(res, **extra):
    if not res.applicable:
        return res
    det = dict(res.details)
    det.update(extra)
    return TestResult(res.name, res.requirement, res.statistic, res.df, res.pvalue, res.n, res.method, det)


def _pocket_chisquare(d: WheelData, ctx: Context):
    res = frequency.pocket_chisquare(d.counts, d.probs, n_resamples=ctx.n_resamples, rng=ctx.rng)
    g = frequency.g_test(d.counts, d.probs, method="asymptotic") if res.applicable and res.method == "asymptotic" else None
    if g is not None and g.applicable:
        # the G statistic is a detail: it orders samples as the chi-square does (rank correlation 1.000 on fair
        # replicates), so as a second test it only spends alpha
        return _with_details(res, g_statistic=g.statistic, g_pvalue=g.pvalue)
    return res


def _max_count(d: WheelData, ctx: Context):
    res = frequency.max_count(d.counts, d.probs, n_resamples=ctx.n_resamples, rng=ctx.rng)
    b = frequency.pocket_binomial(d.counts, d.probs, alpha=ctx.alpha)
    if b.applicable:
        # per-pocket exact binomial tests (Holm over the pockets) say which pockets deviate; their minimum is the same
        # question as the maximum count, so it is a detail, not a second test
        adj = np.asarray(b.details["adjusted_pvalues"])
        rej = [int(i) for i in b.details["rejected_positions"]]
        # keys that list pockets hold their labels (what a lab copies); wheel positions are named positions (issue 28)
        return _with_details(res, pocket_binomial_holm_pvalues=adj, pockets_rejected_holm=_labels_of(d, rej), positions_rejected_holm=rej,
                             **({"pocket": _labels_of(d, [res.details["position"]])[0]} if "position" in res.details else {}))
    return res


def _labels_of(d: WheelData, positions) -> list[str]:
    """Labels of outcome ids (pocket labels; ``"i:S"`` for a money wheel's sections; symbols)."""
    labels = d.space.labels
    return [str(labels[int(i) % len(labels)]) for i in positions]


def _category_frequency(d: WheelData, ctx: Context, *, category: str, name: str):
    ids, names = d.categories[category]
    res = frequency.category_frequency(d.counts, ids, d.probs, name=name, n_resamples=ctx.n_resamples, rng=ctx.rng)
    if not res.applicable:
        return res
    # the findings speak of red/black/zero, low/high, dozens and columns, not of category ids (issue 24)
    cid = [int(i) for i in np.asarray(res.details["category_ids"])]
    return _with_details(res, category_names=[str(names[i]) if 0 <= i < len(names) else f"category {i}" for i in cid])


def _sector_scan(d: WheelData, ctx: Context):
    if d.m < 4:  # (a lab's 3-pocket wheel: no arc of 2 or more pockets is at most half of it)
        return NotApplicable("sector_scan", U, 0, f"the scan's arcs of 2 to k/2 pockets need a wheel of 4 or more (this one has {d.m})")
    res = sector.sector_scan(d.counts, d.probs, method=ctx.monte_carlo(sequential=True))
    if not res.applicable or not isinstance(res.details.get("best_arc"), dict):
        return res
    arc = dict(res.details["best_arc"])
    arc["pockets"] = _labels_of(d, arc.get("positions", []))  # labels beside the positions
    return _with_details(res, best_arc=arc)


def _first_harmonic(d: WheelData, ctx: Context):
    res = sector.first_harmonic(d.counts, d.probs)
    if not res.applicable:
        return res
    # direction and phase are fractional wheel positions; the pocket nearest each is named by its label
    return _with_details(res, direction_pocket=_labels_of(d, [round(res.details["direction_position"])])[0],
                         phase_pocket=_labels_of(d, [round(res.details["phase_position"])])[0])


def _runs(d: WheelData, ctx: Context, *, partition: str, name: str):
    rt = d.tally.runs[partition]
    return runs.runs_test_from_counts(rt.runs, rt.n0, rt.n1, name=name)


def _colour_runs(d: WheelData, *, mid_p: bool):
    col = np.asarray(d.categories["colour"][0])  # 0 red, 1 black, 2 zero
    p_col = np.array([d.probs[col == c].sum() for c in (2, 0, 1)])
    return runs.longest_run_chunks(d.colour_runs, d.outcomes.size, p_col, name="longest_colour_run", mid_p=mid_p)


def _longest_colour_run(d: WheelData, ctx: Context):
    return _colour_runs(d, mid_p=True)


def _gap_test(d: WheelData, ctx: Context):
    return serial.gap_test(d.outcomes, d.gap_target, probs=d.probs, name="gap_test", counts=d.counts)


def _serial_pair(d: WheelData, ctx: Context):
    positions = d.outcomes if d.pair_mask is None else None
    return _masked(serial.serial_pair(d.pairs, n_resamples=ctx.n_resamples, rng=ctx.rng, positions=positions), d)


def _masked(res, d: WheelData):
    return res if d.pair_mask is None else _with_details(res, pairs_used=int(d.pair_mask.sum()), pairs_excluded=d.pair_mask_reason)


def _serial_correlation(d: WheelData, ctx: Context):
    return serial.serial_correlation(d.outcomes, d.m, counts=d.counts, pairs=d.tally.pairs)


def _wheel_distance(d: WheelData, ctx: Context):
    # every pair used: the distances come from the tally's pair table, not another pass over the spins
    obs = d.tally.distance_counts() if d.pair_mask is None and d.tally is not None else None
    return _masked(serial.wheel_distance(d.outcomes, d.m, probs=d.probs, pair_mask=d.pair_mask, observed=obs), d)


def signature_groups(x, release, dealer, dealer_labels, direction, pair_mask=None):
    """Landing positions, their references and the dealer × direction groups of the signature
    tests: the release pocket when the log has it for at least half the spins, else the
    previous result.

    Whole-table arrays (for callers that want them); the battery reads the same spans through
    :class:`Landings` instead.

    Returns
    -------
    pos, ref : (m,) int arrays
    groups : (m,) int array of group ids
    labels : list of str, one per group
    ref_name : str
    """
    lg = Landings(x, release, dealer, dealer_labels, direction, pair_mask, k=1)
    parts = [lg._span(lo, hi, with_pos=True) for lo, hi in spans(lg._length)] or [lg._span(0, 0, with_pos=True)]
    pos, ref, code = (np.concatenate([p[i] for p in parts]) for i in range(3))
    g = lg._lookup[code] if lg.grouped else np.zeros(pos.size, dtype=np.int64)
    return pos, ref, g, list(lg.labels), lg.ref_name


class Landings:
    """Landing offsets of the signature tests and their dealer × direction groups, by spans.

    The reference is the release pocket when the log has it for at least half the spins, else
    the previous result (then the pairs ``pair_mask`` excludes are left out). Only the group
    codes' counts are kept (one pass at construction); :meth:`chunks` makes each span's
    offsets (int16) and group ids (int32) when it is read.

    Parameters
    ----------
    x : (n,) int array
        Outcome positions in spin order.
    release, dealer, direction : (n,) int arrays or None
        As in :class:`WheelData`.
    dealer_labels : sequence of str
        Dealer names by dealer index.
    pair_mask : (n - 1,) bool array, optional
        Consecutive pairs that may be used (previous-result reference only).
    k : int
        Number of wheel positions.

    Attributes
    ----------
    labels : list of str
        One per group, in group-id order (the codes that occur, sorted).
    ref_name : str
        ``"release pocket"`` or ``"previous result"``.
    n : int
        Landings used.
    grouped : bool
        Whether the log has dealer or direction data (else one group, ``"all spins"``).
    """

    def __init__(self, x, release, dealer, dealer_labels, direction, pair_mask, k: int):
        self.x, self.release, self.dealer, self.direction, self.pair_mask = x, release, dealer, direction, pair_mask
        self.k = int(k)
        self.use_release = release is not None and share_at_least_half(lambda lo, hi: release[lo:hi] >= 0, release.size)
        self.ref_name = "release pocket" if self.use_release else "previous result"
        self._length = x.size if self.use_release else max(x.size - 1, 0)
        self.grouped = dealer is not None or direction is not None
        self.n = 0
        if not self.grouped:
            for lo, hi in spans(self._length):  # loop over spans
                keep = self._keep(lo, hi)
                self.n += hi - lo if keep is None else int(np.count_nonzero(keep))
            self.labels = ["all spins"]
            self._lookup = None
            return
        seen = np.zeros(0, dtype=np.int64)
        for lo, hi in spans(self._length):  # loop over spans: which dealer x direction codes occur
            code = self._span(lo, hi)[1]
            self.n += code.size
            c = np.bincount(code)
            if c.size > seen.size:
                c[: seen.size] += seen
                seen = c
            else:
                seen[: c.size] += c
        used = np.flatnonzero(seen)
        self._lookup = np.zeros(int(used[-1]) + 1 if used.size else 1, dtype=np.int32)
        self._lookup[used] = np.arange(used.size, dtype=np.int32)
        dnames = list(dealer_labels) if dealer_labels else ["all dealers"]
        self.labels = [f"dealer {dnames[c // 3] if dealer is not None else 'all'}, {('cw', 'ccw', 'direction unknown')[c % 3]}" for c in used]

    def _keep(self, lo, hi):
        """The spins (release) or pairs (previous result) of span lo..hi that are used, or None for all."""
        if self.use_release:
            return self.release[lo:hi] >= 0
        return None if self.pair_mask is None else self.pair_mask[lo:hi]

    def _span(self, lo, hi, with_pos: bool = False):
        """(pos, ref, code) of the span's landings (code None without dealer/direction data), or
        (offset, code) when not ``with_pos``."""
        if self.use_release:
            at = slice(lo, hi)
            pos, ref = self.x[at], self.release[at]
        else:
            at = slice(lo + 1, hi + 1)
            pos, ref = self.x[at], self.x[lo:hi]
        keep = self._keep(lo, hi)
        sel = (lambda a: a[at]) if keep is None else (lambda a: a[at][keep])
        if keep is not None:
            pos, ref = pos[keep], ref[keep]
        code = None
        if self.grouped:
            dd = sel(self.dealer).astype(np.int32) if self.dealer is not None else np.zeros(pos.size, dtype=np.int32)
            if self.direction is not None:
                dr = sel(self.direction)
                dd *= 3
                dd += np.where(dr < 0, 2, dr)
                code = dd
            else:
                dd *= 3
                code = dd
        if with_pos:
            return pos, ref, code if code is not None else np.zeros(pos.size, dtype=np.int64)
        off = pos.astype(np.int16)
        off -= ref
        off %= self.k
        return off, code

    def chunks(self):
        """Iterator of ``(offsets, group ids)`` over the spans, in spin order."""
        for lo, hi in spans(self._length):  # loop over spans
            off, code = self._span(lo, hi)
            yield off, (self._lookup[code] if self.grouped else np.zeros(off.size, dtype=np.int8))


def _with_reference(res, ref_name):
    if res.applicable:
        det = dict(res.details)
        det["reference"] = ref_name
        res = TestResult(res.name, res.requirement, res.statistic, res.df, res.pvalue, res.n, res.method, det)
    return res


def _landings(d: WheelData) -> Landings:
    return Landings(d.outcomes, d.release, d.dealer, d.dealer_labels, d.direction, d.pair_mask, d.m)


_OFFSETS_LOCK = threading.Lock()


def _offset_totals(d: WheelData, lg: Landings) -> np.ndarray:
    """The table's landing-offset counts per group (:func:`rngcert.stats.signature.offset_counts_from_chunks`),
    counted once for the dealer signature and the predictor (which may run on two threads: the second waits)."""
    with _OFFSETS_LOCK:
        oc = d.__dict__.get("_offset_totals")
        if oc is None:
            oc = d.__dict__["_offset_totals"] = signature.offset_counts_from_chunks(lg.chunks(), d.m, len(lg.labels))
    return oc.copy()


def _dealer_signature(d: WheelData, ctx: Context):
    lg = _landings(d)
    if lg.n == 0:  # no landing at all: the whole-array path says why (an empty table of groups)
        pos, ref, g, labels, _ = signature_groups(d.outcomes, d.release, d.dealer, d.dealer_labels, d.direction, d.pair_mask)
        oc = signature.offset_counts(pos, ref, d.m, groups=g, n_groups=len(labels))
    else:
        oc = _offset_totals(d, lg)
    return _with_reference(signature.dealer_signature(oc, group_labels=lg.labels, method=ctx.monte_carlo(sequential=True)), lg.ref_name)


#: Width of the out-of-sample predictor's arc (a number and two neighbours each side), narrowed to k - 1 on a
#: lab's wheel of 5 pockets or fewer: an arc of the whole wheel would count a spin in it once per lap.
PREDICTOR_WIDTH = 5


def _predictor(d: WheelData, ctx: Context):
    lg = _landings(d)
    width = min(PREDICTOR_WIDTH, d.m - 1)
    if lg.n == 0:
        pos, ref, g, labels, ref_name = signature_groups(d.outcomes, d.release, d.dealer, d.dealer_labels, d.direction, d.pair_mask)
        return _with_reference(predict.out_of_sample_predictor(pos, ref, d.m, groups=g, group_labels=labels, width=width), ref_name)
    totals = _offset_totals(d, lg)
    return _with_reference(predict.predictor_from_offsets(lg.chunks, d.m, lg.labels, width=width, totals=totals), lg.ref_name)


def _direction_homogeneity(d: WheelData, ctx: Context):
    return rotor.direction_homogeneity(d.outcomes, d.direction, d.m, n_resamples=ctx.n_resamples, rng=ctx.rng)


def _ball_against_wheel(d: WheelData, ctx: Context):
    """A rule check, not a test: it never gives a p-value (DESIGN §4). Its count is stated here and, when a
    spin breaks the rule, as a procedure finding that makes the verdict INCONCLUSIVE
    (:func:`rngcert.pipeline.certify_wheel.procedure_check`)."""
    rc = rotor.ball_against_wheel(d.direction, d.ball_direction)
    if not rc.applicable:
        return NotApplicable(rc.name, P, 0, rc.reason)
    said = (f"the ball went with the rotor in {rc.violations:,} of {rc.known:,} spins: a procedure finding (see the reasons)"
            if rc.broken else f"the ball went against the rotor in all {rc.known:,} spins where both directions are known")
    return NotApplicable(rc.name, P, rc.known, f"a rule check, not a statistical test (no p-value): {said}")


def _speed_independence(d: WheelData, ctx: Context):
    return rotor.speed_independence(d.outcomes, d.rotor_speed, d.m, circular=bool(d.space.circular), n_resamples=ctx.n_resamples, rng=ctx.rng)


def _rotor_speed_trend(d: WheelData, ctx: Context):
    return rotor.rotor_speed_trend(d.rotor_speed)


#: The rotor tests (issue 25): not applicable on a log without the columns they need.
ROTOR_SPECS = (
    Spec("direction_homogeneity", _direction_homogeneity, P, needs=("direction",)),
    Spec("ball_against_wheel", _ball_against_wheel, P, needs=("direction", "ball_direction")),
    Spec("speed_independence", _speed_independence, P, needs=("rotor_speed",)),
    Spec("rotor_speed_trend", _rotor_speed_trend, P, needs=("rotor_speed",)),
)


# ---------------------------------------------------------------------- the battery
def _outside(category: str) -> Spec:
    name = f"outside_{category}"
    return Spec(name, _category_frequency, U, needs=(f"equipment:category:{category}",), params={"category": category, "name": name})


#: Holm weight of the tests with the most power against the physical faults a wheel has (a worn or shallow
#: pocket, a sector of loose frets, an unbalanced rotor, a dealer's habit): they share more of alpha than the
#: outside-bet and run tests, which are kept for the faults they alone see. Chosen before any data were seen and
#: compared with equal weights on planted alternatives (benchmarks/calibrate_verdict.py).
PRIMARY = 2.0

WHEEL = Battery(
    "wheel",
    (
        # uniformity
        Spec("pocket_chisquare", _pocket_chisquare, U, weight=PRIMARY),
        Spec("max_count", _max_count, U, weight=PRIMARY),
        _outside("colour"),
        _outside("parity"),
        _outside("low_high"),
        _outside("dozen"),
        _outside("column"),
        Spec("symbol_frequency", _category_frequency, U, needs=("equipment:category:symbol",), params={"category": "symbol", "name": "symbol_frequency"}),
        Spec("sector_scan", _sector_scan, U, needs=("equipment:circular",), weight=PRIMARY),
        Spec("first_harmonic", _first_harmonic, U, needs=("equipment:circular",), weight=PRIMARY),
        # independence
        Spec("runs_colour", _runs, I, needs=("equipment:colour",), params={"partition": "colour", "name": "runs_colour"}),
        Spec("longest_colour_run", _longest_colour_run, I, needs=("equipment:colour",)),
        Spec("runs_parity", _runs, I, needs=("equipment:colour",), params={"partition": "parity", "name": "runs_parity"}),
        Spec("runs_low_high", _runs, I, needs=("equipment:colour",), params={"partition": "low_high", "name": "runs_low_high"}),
        Spec("runs_top_symbol", _runs, I, needs=("equipment:no-colour",), params={"partition": "top_symbol", "name": "runs_top_symbol"}),
        Spec("gap_test", _gap_test, I),
        Spec("serial_pair", _serial_pair, I),
        Spec("serial_correlation", _serial_correlation, I, needs=("equipment:circular",)),
        Spec("wheel_distance", _wheel_distance, I, needs=("equipment:circular",)),
        # unpredictability: landing offset from the release pocket (or the previous result), per dealer and
        # direction; without dealer or release data it would rescan the wheel-distance counts
        Spec("dealer_signature", _dealer_signature, P, needs=("equipment:circular", "dealer_or_release"), weight=PRIMARY),
        Spec("out_of_sample_predictor", _predictor, P, needs=("equipment:circular", "dealer_or_release")),
        # unpredictability: the rotor (direction, speed at launch, the ball against the wheel), where the log has it
        *ROTOR_SPECS,
    ),
)

#: The battery of rngcert 0.1 (issue 2), kept for the side-by-side calibration of
#: ``benchmarks/calibrate_verdict.py``: equal weights, the G test and the per-pocket binomial minimum as separate
#: tests, the dealer signature on the previous result without dealer data, the exact longest-run p-value, and
#: SUSPECT on any raw p < alpha.
def _g_test(d: WheelData, ctx: Context):
    return frequency.g_test(d.counts, d.probs, n_resamples=ctx.n_resamples, rng=ctx.rng)


def _pocket_binomial(d: WheelData, ctx: Context):
    return frequency.pocket_binomial(d.counts, d.probs, alpha=ctx.alpha)


def _longest_colour_run_exact(d: WheelData, ctx: Context):
    return _colour_runs(d, mid_p=False)


def _plain_pocket_chisquare(d: WheelData, ctx: Context):
    return frequency.pocket_chisquare(d.counts, d.probs, n_resamples=ctx.n_resamples, rng=ctx.rng)


def _plain_max_count(d: WheelData, ctx: Context):
    return frequency.max_count(d.counts, d.probs, n_resamples=ctx.n_resamples, rng=ctx.rng)


def _legacy() -> Battery:
    by = {s.name: s for s in WHEEL.specs}
    eq = lambda s: Spec(s.name, s.func, s.requirement, tuple(n for n in s.needs if n != "dealer_or_release"), s.params)  # noqa: E731
    order = []
    for s in WHEEL.specs:
        if s in ROTOR_SPECS:  # not in 0.1
            continue
        if s.name == "pocket_chisquare":
            order += [Spec("pocket_chisquare", _plain_pocket_chisquare, U), Spec("g_test", _g_test, U),
                      Spec("max_count", _plain_max_count, U), Spec("pocket_binomial_holm", _pocket_binomial, U)]
        elif s.name == "max_count":
            continue
        elif s.name == "longest_colour_run":
            order.append(Spec("longest_colour_run", _longest_colour_run_exact, I, needs=("equipment:colour",)))
        else:
            order.append(eq(by[s.name]))
    return Battery("wheel-0.1", tuple(order), suspect_level=None)


WHEEL_0_1 = _legacy()


@lru_cache(maxsize=1)
def calibration() -> dict:
    """The measured verdict shares of fair wheels (``battery/calibration.json``, written by
    ``benchmarks/calibrate_verdict.py --write-package``): what a report prints as the share of fair
    wheels that are SUSPECT or FAIL, instead of a formula that assumes independent tests."""
    try:
        return json.loads((resources.files("rngcert.battery") / "calibration.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ModuleNotFoundError, json.JSONDecodeError):
        return {}


def battery_fingerprint(battery: Battery | None = None) -> str:
    """SHA-256 (first 16 hex digits) of the battery's spec names, weights, requirements, needs and
    fixed parameters, in order: changes whenever a test is added, removed, re-weighted or
    re-parametrised, so a calibration measured on another battery is recognised as such."""
    import hashlib

    b = battery or WHEEL
    rows = [[s.name, float(s.weight), str(s.requirement), list(s.needs), sorted((k, repr(v)) for k, v in s.params.items())] for s in b.specs]
    return hashlib.sha256(json.dumps([b.name, b.suspect_level is not None, rows]).encode()).hexdigest()[:16]


#: Keys of a calibration fingerprint, in the order a mismatch is explained.
FINGERPRINT_KEYS = ("battery", "alpha", "suspect_level", "n_resamples", "dealers", "release", "direction")


def run_fingerprint(*, alpha: float, suspect_level: float | None, n_resamples: int, data: "WheelData | None" = None,
                    dealers: bool | None = None, release: bool | None = None, direction: bool | None = None) -> dict:
    """The fingerprint of a run, to compare with a calibration entry's: battery (spec hash), alpha,
    SUSPECT level, Monte Carlo replicates, and the data's shape (dealer ids present, release pockets
    present for at least half the spins, both rotor directions present: the direction tests run)."""
    if data is not None:
        dealers = data.dealer is not None
        dv = None if data.direction is None else np.asarray(data.direction)
        direction = dv is not None and arrayops.unique(dv[dv >= 0]).size >= 2  # both directions: the direction tests can run
        rel = data.release
        release = rel is not None and share_at_least_half(lambda lo, hi: rel[lo:hi] >= 0, rel.size)
    return {"battery": battery_fingerprint(), "alpha": float(alpha), "suspect_level": None if suspect_level is None else float(suspect_level),
            "n_resamples": int(n_resamples), "dealers": bool(dealers), "release": bool(release),
            "direction": bool(direction)}


def _mismatch(cal_fp: dict, run_fp: dict) -> list[str]:
    words = {"battery": "battery (its tests or weights changed since)", "alpha": "alpha", "suspect_level": "SUSPECT level",
             "n_resamples": "Monte Carlo replicates", "dealers": "dealer ids in the log", "release": "release pockets in the log",
             "direction": "rotor directions in the log"}
    out = []
    for k in FINGERPRINT_KEYS:
        a, b = cal_fp.get(k), run_fp.get(k)
        if isinstance(a, float) or isinstance(b, float):
            same = a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-9)
        else:
            same = a == b
        if not same:
            out.append(f"{words[k]}: measured with {_fmt(a)}, this run {_fmt(b)}")
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def calibration_line(n: int, fingerprint: dict | None = None) -> dict:
    """The calibration entry nearest to ``n`` spins among those measured on this run's
    configuration (``fingerprint``, from :func:`run_fingerprint`), with a sentence for the report;
    "not calibrated for this configuration" (and what differs) when none matches."""
    cal = calibration().get("wheel") or {}
    if not cal:
        return {"statement": "The share of fair wheels that are SUSPECT has not been measured for this build.", "calibrated": False}
    entries = [dict(v) for v in cal.values()]
    if fingerprint is not None:
        match = [e for e in entries if not _mismatch(e.get("fingerprint") or {}, fingerprint)]
        if not match:
            near = min(entries, key=lambda e: abs(math.log(int(e["spins"])) - math.log(max(n, 1))))
            why = _mismatch(near.get("fingerprint") or {}, fingerprint)
            return {"calibrated": False, "fingerprint": fingerprint, "nearest": near,
                    "statement": "Not calibrated for this configuration: the share of fair wheels that are SUSPECT or FAIL was measured "
                                 f"on another configuration ({'; '.join(why)}); the limits of the policy still hold by construction "
                                 f"(FAIL at most alpha, SUSPECT or FAIL at most the SUSPECT level, by weighted Holm)."}
        entries = match
    c = min(entries, key=lambda e: abs(math.log(int(e["spins"])) - math.log(max(n, 1))))
    ci = c.get("suspect_ci95")
    ci_txt = f" (95% Clopper-Pearson {ci[0]:.1%}-{ci[1]:.1%})" if ci else ""
    fp = c.get("fingerprint") or {}
    shape = (f", {'with' if fp.get('dealers') else 'without'} dealer ids, {'with' if fp.get('release') else 'without'} release pockets, "
             f"R = {fp.get('n_resamples', c.get('n_resamples', 0)):,}") if fp else ""
    c["calibrated"] = True
    c["statement"] = (
        f"Measured on {c['fair_wheels']:,} simulated fair European wheels of {c['spins']:,} spins{shape}: {c['suspect_share']:.1%} were "
        f"SUSPECT{ci_txt} and {c['fail_share']:.1%} FAIL (limits: {fp.get('suspect_level', 0.05):g} and alpha = {c['alpha']})."
    )
    return c
