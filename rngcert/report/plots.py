"""Figures for certification reports, returned as embeddable SVG (base64).

Every figure (pocket frequencies, sector scan, wheel distance, the chart of every test's p-value, the
SP 800-22 figures, and the shuffle figures: zone heat map, rising sequences, guessing, the sensitivity
grid) is written directly by :mod:`rngcert.report.svg`: milliseconds, and no matplotlib (which took
0.3-0.5 s a figure with its layout engine, and 0.3 s to import). A certification imports neither
matplotlib nor ``scipy.stats`` from here.

Plotting only draws what the statistics and collectors computed; the only arithmetic here is
for display (bands, z-scores of arcs for a picture).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from rngcert.report import svg
from rngcert.report.svg import CAP_HEIGHT, text_width
from rngcert.stats.chunks import spans
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer

_BLUE, _RED, _ORANGE, _GREY = "#4a7ab5", "#c0392b", "#e67e22", "#bbbbbb"
@dataclass(frozen=True)
class Figure:
    """A titled figure for the HTML report: an SVG (vector, so it prints sharp at any size),
    base64-encoded, with a caption."""

    id: str
    title: str
    data_base64: str
    caption: str
    mime: str = "image/svg+xml"

    @property
    def png_base64(self) -> str:  # the name of the field before figures became SVG
        return self.data_base64

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "caption": self.caption}


def _svg(canvas: svg.Canvas) -> str:
    """A canvas as base64 SVG."""
    return base64.b64encode(canvas.to_bytes()).decode("ascii")


def _binom_ppf(q: float, n, p) -> np.ndarray:
    """``scipy.stats.binom.ppf(q, n, p)``: the least k with P(X <= k) >= q, from scipy.special.

    ``bdtrik`` inverts the CDF continuously; the integer next to it is then moved by one step at
    a time until the definition holds (one step at most in practice)."""
    n, p = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(p, dtype=float))
    k = np.clip(np.nan_to_num(np.ceil(special.bdtrik(q, n, p)), nan=0.0), 0, n)
    for _ in range(64):
        down = (k > 0) & (special.bdtr(np.maximum(k - 1, 0), n, p) >= q)
        up = ~down & (k < n) & (special.bdtr(k, n, p) < q)
        if not (down.any() or up.any()):
            break
        k = k - down + up
    return k


def _binom_isf(q: float, n, p) -> np.ndarray:
    """``scipy.stats.binom.isf(q, n, p)``: the least k with P(X > k) <= q, from scipy.special
    (the upper tail from ``bdtrc``, never as 1 − CDF)."""
    n, p = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(p, dtype=float))
    k = np.clip(np.nan_to_num(np.floor(special.bdtrik(1.0 - q, n, p)), nan=0.0), 0, n)
    for _ in range(64):
        down = (k > 0) & (special.bdtrc(np.maximum(k - 1, 0), n, p) <= q)
        up = ~down & (k < n) & (special.bdtrc(k, n, p) > q)
        if not (down.any() or up.any()):
            break
        k = k - down + up
    return k


def simultaneous_band(n: int, probs: np.ndarray, level: float = 0.99) -> tuple[np.ndarray, np.ndarray]:
    """Per-outcome binomial quantiles at (1-level)/(2m) each side: a Bonferroni band that holds
    for all m outcomes at once with probability at least ``level``.

    Parameters
    ----------
    n : int
        Number of trials (spins).
    probs : numpy.ndarray
        The m outcome probabilities.
    level : float
        Simultaneous coverage.

    Returns
    -------
    tuple of numpy.ndarray
        Lower and upper count limits (floats), equal to ``scipy.stats.binom.ppf`` and
        ``binom.isf`` at (1-level)/(2m) but computed with ``scipy.special`` (fast to import).
    """
    probs = np.asarray(probs, dtype=float)
    a = (1 - level) / (2 * max(1, probs.size))
    return _binom_ppf(a, n, probs).astype(float), _binom_isf(a, n, probs).astype(float)


#: natural width (points) of the full-width figures: the report's text column (1000 px less padding)
_FULL_WIDTH = 734.0


def _category_axis(labels, slot: float) -> tuple[float, bool]:
    """Font size and turn of category labels ``slot`` points apart: level when they fit (easier
    to read), turned to read upwards otherwise; 7 pt from 41 categories on, as before."""
    size = 8.0 if len(labels) <= 40 else 7.0
    widest = max((text_width(str(v), size) for v in labels), default=0.0)
    return size, widest > 0.85 * slot


def _header(title: str, entries: list, title_x: float, right: float) -> tuple[float, int | None]:
    """Height above the plot area and the legend's entries per row (``None``: beside the title).

    The title starts at ``title_x`` on the line above the plot area and the legend ends at
    ``right`` (the plot area's right edge) on the same line when both fit there; otherwise the
    legend takes rows of its own above the title, with as many entries per row as fit between
    the canvas's left edge and ``right``."""
    if not entries:
        return 22.0, None
    lw, *_ = svg.legend_size(entries, size=7)
    if title_x + text_width(title, 9) + 12 + lw <= right:
        return 22.0, None
    ncol = len(entries)
    while ncol > 1 and svg.legend_size(entries, size=7, ncol=ncol)[0] > right - 4:
        ncol -= 1
    return 2.0 + svg.legend_size(entries, size=7, ncol=ncol)[1] + 15.0, ncol  # legend rows, then the title line


def _title_and_legend(c: svg.Canvas, ax: svg.Axes, title: str, entries: list, title_x: float, ncol: int | None) -> None:
    """The title and the legend placed as :func:`_header` decided."""
    c.text(title_x, ax.top - 6, title, size=9)
    if not entries:
        return
    if ncol is None:  # beside the title, centred on its capitals
        _, h, *_ = svg.legend_size(entries, size=7)
        svg.legend(c, ax.right, ax.top - 6 - CAP_HEIGHT * 9 / 2 - h / 2, entries, size=7, align="right")
    else:  # rows of their own above the title
        _, h, *_ = svg.legend_size(entries, size=7, ncol=ncol)
        svg.legend(c, ax.right, ax.top - 15 - h, entries, size=7, align="right", ncol=ncol)


def frequency_figure(counts, probs, labels, *, title: str, xlabel: str, fig_id: str = "frequencies") -> Figure:
    """Bars of observed counts per outcome against the expected count and the simultaneous
    99% band (red bars lie outside it).

    Parameters
    ----------
    counts : array_like of int
        Observed count of each outcome, in display order (wheel order for a wheel).
    probs : array_like of float
        Outcome probabilities under the null, same order.
    labels : sequence of str
        One label per outcome (pocket labels, section labels or symbols).
    title, xlabel : str
        Figure title and x-axis label.
    fig_id : str
        The figure's id in the report.

    Returns
    -------
    Figure
        An SVG figure with one ``<rect>`` per outcome in its bars group.
    """
    counts = np.asarray(counts)
    probs = np.asarray(probs, dtype=float)
    labels = [str(v) for v in labels]
    n = int(counts.sum())
    lo, hi = simultaneous_band(n, probs)
    exp = n * probs
    m = counts.size
    out = (counts < lo) | (counts > hi)
    entries = [{"label": "simultaneous 99% band", "kind": "patch", "color": _GREY, "opacity": 0.6},
               {"label": "expected", "kind": "line", "color": "#000000"}]
    if out.any():
        entries.append({"label": f"outside the band ({int(out.sum())})", "kind": "patch", "color": _RED})
    ymax = max(float(hi.max(initial=0)), float(counts.max(initial=0)), 1.0) * 1.08
    yt = svg.nice_ticks(0, ymax, 5, integer=True)
    W = min(max(432.0, 15.84 * m + 144.0), _FULL_WIDTH)
    left = 6 + CAP_HEIGHT * 8 + 3 + max(text_width(s, 8) for s in svg.tick_labels(yt)) + 5.5
    pw = W - left - 8
    size, turn = _category_axis(labels, pw / (m + 0.2))
    top, ncol = _header(title, entries, left, left + pw)
    depth = 5.5 + (max(text_width(s, size) for s in labels) if turn else CAP_HEIGHT * size)
    ph = 90.0
    c = svg.Canvas(W, top + ph + depth + 4 + CAP_HEIGHT * 8 + 6)
    ax = svg.Axes(c, left, top, pw, ph, xlim=(-0.6, m - 0.4), ylim=(0, ymax))
    edges = np.r_[np.arange(m) - 0.5, m - 0.5]
    # the band behind the bars, the bars, then the expected line on top; the axis starts at zero
    ax.band(edges, lo, hi, fill=_GREY, opacity=0.6)
    c.begin_group(id="bars")
    ax.bars(np.arange(m), counts, width=0.7, colors=[_RED if o else _BLUE for o in out])
    c.end_group()
    ax.step(edges, exp, stroke="#000000", width=1.0)
    ax.frame()
    ax.yticks(yt)
    d = ax.xticks(np.arange(m), labels, size=size, rotate=turn)
    ax.xlabel(xlabel, d)
    ax.ylabel("count", left - 6 - CAP_HEIGHT * 8)
    _title_and_legend(c, ax, title, entries, left, ncol)
    cap = (
        f"{n:,} spins. Bars outside the grey band (red) lie outside the simultaneous 99% band "
        f"(Bonferroni over {m} outcomes): a single red bar is unlikely (< 1%) on a fair wheel. The axis starts at zero."
    )
    return Figure(fig_id, title, _svg(c), cap)


def sector_figure(counts, probs, labels, best: dict | None = None) -> Figure:
    """Heat map of the z-score of every arc (start position × length) in wheel order.

    Parameters
    ----------
    counts : array_like of int
        Observed count of each position in wheel order.
    probs : array_like of float
        Position probabilities under the null, same order.
    labels : sequence of str
        Position labels in wheel order.
    best : dict or None
        The sector scan's best arc (``start``, ``length``), circled.

    Returns
    -------
    Figure
        An SVG figure whose cells are one embedded PNG with a pixel per arc.
    """
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    labels = [str(v) for v in labels]
    k = counts.size
    n = counts.sum()
    lengths = np.arange(1, k // 2 + 1)
    c2 = np.concatenate([[0.0], np.cumsum(np.r_[counts, counts])])
    p2 = np.concatenate([[0.0], np.cumsum(np.r_[probs, probs])])
    starts = np.arange(k)
    obs = c2[starts[None, :] + lengths[:, None]] - c2[starts[None, :]]
    p = p2[starts[None, :] + lengths[:, None]] - p2[starts[None, :]]
    z = (obs - n * p) / np.sqrt(np.maximum(n * p * (1 - p), 1e-12))
    lim = max(3.0, float(np.abs(z).max(initial=0)))
    title = "Sector scan: excess of every arc of adjacent pockets"
    L = max(1, lengths.size)
    yt = svg.nice_ticks(1, L, 6, integer=True)
    W = min(max(432.0, 14.4 * k + 144.0), _FULL_WIDTH)
    left = 6 + CAP_HEIGHT * 8 + 3 + max([text_width(s, 8) for s in svg.tick_labels(yt)] + [0.0]) + 5.5
    cticks = svg.tick_labels(svg.nice_ticks(-lim, lim, 8))
    right = 16 + 10 + 5 + max(text_width(s, 8) for s in cticks) + 3 + CAP_HEIGHT * 8 + 8
    pw = W - left - right
    size, turn = _category_axis(labels, pw / max(1, k))
    size = min(size, 7.0)
    depth = 5.5 + (max(text_width(s, size) for s in labels) if turn else CAP_HEIGHT * size)
    top, ph = 22.0, 110.0
    c = svg.Canvas(W, top + ph + depth + 4 + CAP_HEIGHT * 8 + 6)
    ax = svg.Axes(c, left, top, pw, ph, xlim=(-0.5, k - 0.5), ylim=(0.5, L + 0.5))
    if lengths.size:
        ax.image([[svg.RDBU_R.rgb((v + lim) / (2 * lim)) for v in row] for row in z], x0=-0.5, y0=0.5)
    if best:
        ax.points([best.get("start", 0)], [best.get("length", 1)], r=5, fill="none", stroke="#000000", width=1.2)
    ax.frame()
    ax.yticks(yt)
    d = ax.xticks(np.arange(k), labels, size=size, rotate=turn)
    ax.xlabel("first pocket of the arc (wheel order)", d)
    ax.ylabel("arc length (pockets)", left - 6 - CAP_HEIGHT * 8)
    ax.title(title, size=9)
    svg.colorbar(c, ax.right + 16, top, 10, ph, svg.RDBU_R, -lim, lim, label="z of the arc", size=8)
    cap = (
        "Each cell is the standardised excess (observed − expected)/sd of the arc starting at that pocket "
        "with that length. Worn frets or shallow pockets show as a hot patch; the circled cell is the "
        "largest |z|, whose family-wise p-value is the sector_scan test."
    )
    return Figure("sector_scan", title, _svg(c), cap)


def distance_figure(positions, k: int, probs=None, pair_mask=None, *, excluded: str = "", distances=None) -> Figure:
    """Counts of the clockwise wheel distance between consecutive results, against their law
    under independence (a :func:`frequency_figure`), over the pairs the wheel-distance test used.

    Parameters
    ----------
    positions : array_like of int
        Results as wheel positions, in spin order.
    k : int
        Number of positions on the wheel.
    probs : array_like of float or None
        Position probabilities (default uniform).
    pair_mask : (n - 1,) array_like of bool, optional
        The consecutive pairs the test used (:func:`rngcert.pipeline.checks.pair_mask_of`: a
        transcribed list's pairs across line starts are excluded); default all.
    excluded : str
        Why pairs were excluded, for the caption.
    distances : (k,) array_like of int, optional
        The counts of the distances when already known (:meth:`rngcert.stats.tally.SpinTally.distance_counts`
        over the pairs used): no pass over ``positions``.

    Returns
    -------
    Figure
        An SVG figure with ``k`` bars.
    """
    x = np.asarray(positions)
    mask = None if pair_mask is None else np.asarray(pair_mask, dtype=bool)
    if mask is not None and mask.shape != (max(x.size - 1, 0),):
        raise ValueError("pair_mask must have one entry per consecutive pair (n - 1)")
    counts = np.zeros(k, dtype=np.int64) if distances is None else np.asarray(distances, dtype=np.int64)
    for lo, hi in spans(max(x.size - 1, 0)) if distances is None else ():  # loop over spans: no whole-table int64 differences
        d = x[lo + 1 : hi + 1].astype(np.int32)
        d -= x[lo:hi]
        d %= k
        counts += np.bincount(d if mask is None else d[mask[lo:hi]], minlength=k)
    if probs is None:
        pd = np.full(k, 1.0 / k)
    else:
        pr = np.asarray(probs, dtype=float)
        # law of (Y - X) mod k for independent X, Y ~ probs
        pd = np.real(np.fft.ifft(np.conj(np.fft.fft(pr)) * np.fft.fft(pr)))
        pd = np.clip(pd, 0, None)
        pd /= pd.sum()
    f = frequency_figure(counts, pd, [str(i) for i in range(k)], title="Wheel distance between consecutive results", xlabel="pockets clockwise from the previous result", fig_id="wheel_distance")
    used = int(counts.sum())
    skipped = max(x.size - 1, 0) - used
    why = f" ({excluded})" if excluded else ""
    cap = (
        f"{used:,} consecutive pairs" + (f", the pairs the wheel-distance test used: {skipped:,} excluded{why}" if skipped else "")
        + ". On an independent wheel the distance from one result to the next is "
        "spread evenly; a dealer who releases the ball the same way each time piles it up on a few distances. "
        + f.caption.split(". ", 1)[1]
    )
    return Figure(f.id, f.title, f.png_base64, cap)


def _fit(s: str, size: float, width: float) -> str:
    """``s``, cut with an ellipsis to fit ``width`` points at ``size``."""
    if text_width(s, size) <= width:
        return s
    while s and text_width(s + "…", size) > width:
        s = s[:-1]
    return s + "…"


def pvalue_figure(results, alpha: float, adjusted: dict) -> Figure:
    """Horizontal bars of −log10(p) of every applicable test, with the raw alpha and Holm's
    first threshold as reference lines.

    Parameters
    ----------
    results : sequence of TestResult
        The battery's results (not-applicable ones are left out).
    alpha : float
        Certification level.
    adjusted : dict
        Holm-adjusted p-value by test name (red bars: below ``alpha``).

    Returns
    -------
    Figure
        An SVG figure with one bar per applicable test, in the battery's order from the top.
    """
    app = [r for r in results if r.applicable]
    names = [r.name for r in app]
    p = np.array([max(r.pvalue, 1e-300) for r in app], dtype=float)
    colours = [_RED if adjusted.get(nm, 1) < alpha else _ORANGE if pv < alpha else _BLUE for nm, pv in zip(names, p)]
    holm = -np.log10(alpha / len(app)) if app else None
    xmax = max(float((-np.log10(p)).max()) if app else 1.0, -np.log10(alpha / max(1, len(app)))) * 1.1
    entries = [{"label": f"raw alpha = {alpha}", "kind": "line", "color": _ORANGE, "dash": "3.7 1.6"}]
    if app:
        entries.append({"label": "Holm's first threshold", "kind": "line", "color": _RED, "dash": "1 1.65"})
    if _ORANGE in colours:
        entries.append({"label": "raw p < alpha", "kind": "patch", "color": _ORANGE})
    if _RED in colours:
        entries.append({"label": "rejected after Holm", "kind": "patch", "color": _RED})
    W = 360.0  # half the text column: it shares a row with another figure, and prints at the scale of the others
    shown = [_fit(nm, 7, 0.4 * W) for nm in names]
    left = 6 + max([text_width(s, 7) for s in shown] + [0.0]) + 5.5
    pw = W - left - 10
    title = "Every test's p-value"
    top, ncol = _header(title, entries, 6.0, left + pw)  # the title over the names: room for the legend
    ph = max(118.0, 10.5 * len(app) + 6)  # 10.5 pt a bar: 7 pt names with room between them
    c = svg.Canvas(W, top + ph + 5.5 + CAP_HEIGHT * 8 + 4 + CAP_HEIGHT * 8 + 8)
    ax = svg.Axes(c, left, top, pw, ph, xlim=(0, xmax), ylim=(-0.6, max(1, len(app)) - 0.4), invert_y=True)
    c.begin_group(id="bars")
    ax.hbars(np.arange(len(app)), -np.log10(p), height=0.8, colors=colours)
    c.end_group()
    ax.vline(-np.log10(alpha), stroke=_ORANGE, width=1.0, dash="3.7 1.6")
    if holm is not None:
        ax.vline(holm, stroke=_RED, width=1.0, dash="1 1.65")
    ax.frame()
    ax.yticks(np.arange(len(app)), shown, size=7)
    d = ax.xticks(svg.nice_ticks(0, xmax, max(3, int(pw // 32))))
    ax.xlabel("−log10(p-value)", d)
    _title_and_legend(c, ax, title, entries, 6.0, ncol)
    cap = "Longer bars are stronger evidence against randomness. Red: rejected after Holm's correction; orange: raw p below alpha."
    return Figure("pvalues", title, _svg(c), cap)


def _family(name: str) -> str:
    return name.split("[", 1)[0].split(":", 1)[0]


def _nist_panel(c: svg.Canvas, ax: svg.Axes, name: str, h: np.ndarray, not_applicable: bool) -> None:
    """One test's panel of :func:`nist_histograms`: its ten bars and the flat line, or, when no stream gave a
    p-value, words saying so (and "not applicable" when that is why) in place of an empty plot that reads as zeros."""
    if h.sum() > 0:
        ax.bars(np.arange(10) / 10 + 0.05, h, width=0.09, colors=_BLUE)
        ax.hline(h.sum() / 10, stroke="#000000", width=0.8)
        ax.yticks(svg.nice_ticks(0, ax.ylim[1], 3, integer=True), size=6)  # counts of streams: whole numbers
    else:
        mid = ax.top + ax.height / 2
        lines = ["no p-values:", "not applicable"] if not_applicable else ["no p-values"]
        for k, line in enumerate(lines):
            dy = 10 * (k - (len(lines) - 1) / 2)
            c.text(ax.left + ax.width / 2, mid + dy, line, size=7, anchor="middle", valign="middle", fill="#555555")
    ax.frame()
    ax.xticks([0, 0.5, 1], ["0", "0.5", "1"], size=6)
    size = 8.0 if text_width(name, 8) <= ax.width else max(6.0, 8.0 * (ax.width - 1) / text_width(name, 8))  # smaller, then cut
    c.text(ax.left + ax.width / 2, ax.top - 4, _fit(name, size, ax.width), size=size, anchor="middle")


def nist_histograms(two_level: dict) -> Figure:
    """Small multiples: the 10-bin histogram of first-level p-values per SP 800-22 test family
    (names of a family, e.g. the 148 templates, are pooled for the picture only).

    Parameters
    ----------
    two_level : dict
        :meth:`rngcert.stats.nist.twolevel.TwoLevelResult.to_dict` (``rows`` with ``name`` and ``histogram``, ``m``).

    Returns
    -------
    Figure
        An SVG figure, one panel a test family (five a row), each with its ten bars and the flat line.
    """
    rows = two_level["rows"]
    fams: dict[str, np.ndarray] = {}
    na: dict[str, bool] = {}  # every name of the test not applicable to any stream
    for r in rows:
        h = np.asarray(r["histogram"], dtype=float)
        f = _family(r["name"]).replace("nist_", "")
        fams[f] = fams.get(f, np.zeros(10)) + h
        na[f] = na.get(f, True) and not r.get("m") and bool(r.get("not_applicable"))
    ncol = 5
    nrow = max(1, -(-len(fams) // ncol))
    W, pad_l, pad_r, pw, ph = _FULL_WIDTH, 34.0, 8.0, 0.0, 80.0
    pw = (W - ncol * (pad_l + pad_r)) / ncol
    cell_h = 14 + ph + 3.5 + 2 + CAP_HEIGHT * 6 + 8
    c = svg.Canvas(W, nrow * cell_h + 4)
    for n, (f, h) in enumerate(fams.items()):
        row, col = divmod(n, ncol)
        _nist_panel(c, svg.Axes(c, col * (pad_l + pad_r + pw) + pad_l, row * cell_h + 14, pw, ph, xlim=(0, 1),
                                ylim=(0, max(float(h.max(initial=0)), h.sum() / 10, 1.0) * 1.1)), f, h, na[f])
    cap = (
        f"Histogram of the first-level p-values over the {two_level['m']} streams, per test (names of one test pooled). "
        "For a good generator every histogram is flat (the line); a pile near 0 is failure, a pile near 1 is too-good-to-be-true."
    )
    return Figure("nist_histograms", "P-value histograms per test", _svg(c), cap)


def nist_proportions(two_level: dict) -> Figure:
    """Proportion of passing sequences per test name with SP 800-22's 3-sigma interval, drawn as SVG.

    The legend sits in the header above the plot area (:func:`_header`), never inside it, so it
    cannot cover a point, flagged or not (issue 24: a legend inside the axes hid 4 of 5 flagged points).

    Parameters
    ----------
    two_level : dict
        :meth:`rngcert.stats.nist.twolevel.TwoLevelResult.to_dict` (``rows`` with ``proportion``,
        ``interval`` and ``m``).

    Returns
    -------
    Figure
        An SVG figure; its ``points`` group holds one circle per test name (flagged ones in orange).
    """
    rows = [r for r in two_level["rows"] if r.get("m")]
    prop = np.array([r["proportion"] for r in rows], dtype=float)
    lo = np.array([r["interval"][0] for r in rows], dtype=float)
    hi = np.minimum(np.array([r["interval"][1] for r in rows], dtype=float), 1.0)
    k = len(rows)
    bad = (prop < lo) | (prop > hi)
    entries = [{"label": "SP 800-22 interval", "kind": "patch", "color": _GREY, "opacity": 0.6},
               {"label": "inside", "kind": "marker", "color": _BLUE}]
    if bad.any():
        entries.append({"label": f"outside ({int(bad.sum())})", "kind": "marker", "color": _ORANGE})
    ymin = min(float(prop.min(initial=1.0)), float(lo.min(initial=1.0))) if k else 0.0
    ymin = max(0.0, ymin - 0.05 * max(1.0 - ymin, 0.05))
    yt = svg.nice_ticks(ymin, 1.0, 5)
    ymin = min(ymin, yt[0]) if yt else ymin
    title = "Proportion of sequences passing each test"
    W = _FULL_WIDTH
    left = 6 + CAP_HEIGHT * 8 + 3 + max([text_width(x, 8) for x in svg.tick_labels(yt)] + [0.0]) + 5.5
    pw = W - left - 8
    top, ncol = _header(title, entries, left, left + pw)
    ph = 130.0
    c = svg.Canvas(W, top + ph + 5.5 + CAP_HEIGHT * 8 + 4 + CAP_HEIGHT * 8 + 8)
    ax = svg.Axes(c, left, top, pw, ph, xlim=(-1, max(k, 1)), ylim=(ymin, 1.0 + 0.02 * (1.0 - ymin)))
    if k:
        ax.band(np.r_[np.arange(k) - 0.5, k - 0.5], lo, hi, fill=_GREY, opacity=0.6)
    c.begin_group(id="points")
    ax.points(np.flatnonzero(~bad), prop[~bad], r=1.3, fill=_BLUE)
    ax.points(np.flatnonzero(bad), prop[bad], r=2.4, fill=_ORANGE)  # drawn last: on top of the rest
    c.end_group()
    ax.frame()
    ax.yticks(yt)
    d = ax.xticks(svg.nice_ticks(0, max(k - 1, 1), 8, integer=True))
    ax.xlabel("test name (in SP 800-22 order; the long flat run is the 148 templates)", d)
    ax.ylabel("proportion passing", left - 6 - CAP_HEIGHT * 8)
    _title_and_legend(c, ax, title, entries, left, ncol)
    cap = (
        "Each dot is one test name; the grey band is SP 800-22's interval p̂ ± 3·sqrt(p̂(1−p̂)/m). Orange dots lie outside it. "
        "A good generator puts a few of the 188 names outside by chance; the verdict counts them against that expectation "
        "(the SUSPECT rule), so an orange dot under a PASS is not a finding. The legend is above the plot: it hides no dot."
    )
    return Figure("nist_proportions", "Proportion passing", _svg(c), cap)


def _heat_layout(ylabels: list[str], vmin: float, vmax: float) -> tuple[float, float]:
    """Room left of a heat map's plot area (its y tick labels and turned label) and right of it (a colour bar
    with its ticks and turned label), in points."""
    left = 6 + CAP_HEIGHT * 8 + 3 + max([text_width(s, 8) for s in ylabels] + [0.0]) + 5.5
    cticks = svg.tick_labels(svg.nice_ticks(vmin, vmax, 8))
    right = 16 + 10 + 5 + max(text_width(s, 8) for s in cticks) + 3 + CAP_HEIGHT * 8 + 8
    return left, right


def _zone_ticks(b: int) -> list[int]:
    """Zone indices (0-based) to label on an axis of ``b`` zones: every one up to 16, else about 8."""
    step = 1 if b <= 16 else -(-b // 8)
    return list(range(0, b, step))


def position_heatmap(hm: dict) -> Figure:
    """Observed/expected counts of cards moving from zone i of the pre-shuffle order to zone j.

    Parameters
    ----------
    hm : dict
        ``observed_over_expected``: (zones, zones) array, rows the zone before the shuffle (top of the shoe first),
        columns the zone after (:func:`rngcert.stats.shuffle.shuffle_plot_data`).

    Returns
    -------
    Figure
        An SVG figure whose cells are one embedded PNG with a pixel per cell, with a colour bar.
    """
    r = np.asarray(hm["observed_over_expected"], dtype=float)
    b = r.shape[0]
    finite = np.abs(r[np.isfinite(r)] - 1)
    lim = max(0.25, float(finite.max(initial=0.0)))
    title = "Where cards go: zone-to-zone heat map"
    ticks = _zone_ticks(b)
    labels = [str(t + 1) for t in ticks]
    left, right = _heat_layout(labels, max(0.0, 1 - lim), 1 + lim)  # a ratio of counts: nothing below 0
    top, ph = 22.0, 230.0
    depth = 3.5 + 2 + CAP_HEIGHT * 8
    c = svg.Canvas(left + ph + right, top + ph + depth + 4 + CAP_HEIGHT * 8 + 6)
    ax = svg.Axes(c, left, top, ph, ph, xlim=(-0.5, b - 0.5), ylim=(-0.5, b - 0.5), invert_y=True)  # zone 1 at the top
    ax.image([[svg.RDBU_R.rgb((v - (1 - lim)) / (2 * lim)) for v in row] for row in r], x0=-0.5, y0=-0.5)
    ax.frame()
    ax.yticks(ticks, labels)
    d = ax.xticks(ticks, labels)
    ax.xlabel(f"zone after the shuffle (1..{b}, top of shoe first)", d)
    ax.ylabel("zone before the shuffle", left - 6 - CAP_HEIGHT * 8)
    ax.title(title, size=9)
    svg.colorbar(c, ax.right + 16, top, 10, ph, svg.RDBU_R, 1 - lim, 1 + lim, label="observed / expected", size=8, lo=0.0)
    cap = (
        "A perfect shuffle sends a card from any zone to every zone equally often (all cells 1, white). "
        "A hot diagonal means cards stay near where they were: the structure a shuffle tracker follows."
    )
    return Figure("position_heatmap", "Zone-to-zone heat map", _svg(c), cap)


#: Dashed curves of a histogram beside its exact law (the GSR riffle counts of the rising-sequence figure).
_CURVE_COLORS = ("#e67e22", "#2ca02c", "#9467bd", "#8c564b")


def _histogram_scale(obs, null, curves: dict) -> tuple[float, list[str]]:
    """The y-axis top of a count histogram and the legend names of its further curves.

    The observed bars and the exact law set the scale; a further curve (a GSR riffle count far
    from the shuffle) that would rise more than 1.5 times above them is cut at the top and its
    legend name says so and gives its peak, rather than flattening the bars to a few points.
    """
    base = max(float(obs.max(initial=0)), float(null.max(initial=0)), 1.0)
    peaks = {k: float(v.max(initial=0)) for k, v in curves.items()}
    ymax = max([base] + [p for p in peaks.values() if p <= 1.5 * base]) * 1.08
    names = [k if p <= ymax else f"{k} (peak {p:,.0f}, off scale)" for k, p in peaks.items()]
    return ymax, names


def _count_histogram(x, obs, null, curves: dict, *, title: str, xlabel: str, fig_id: str, fig_title: str, cap: str) -> Figure:
    """Bars of shoes per value of a statistic beside its exact law under a uniform shuffle (a black line) and
    further curves (dashed, labelled by their keys), over the values where any of them is visible."""
    x = np.asarray(x)
    obs = np.asarray(obs, dtype=float)
    null = np.asarray(null, dtype=float)
    total = obs.sum()
    keep = (obs > 0) | (null > total * 1e-4)
    for v in curves.values():
        keep |= np.asarray(v, dtype=float) > total * 1e-4
    idx = np.flatnonzero(keep)
    lo, hi = (int(idx.min()), int(idx.max())) if idx.size else (0, x.size - 1)
    sl = slice(lo, hi + 1)
    xs, o, nl = x[sl].astype(float), obs[sl], null[sl]
    cs = {k: np.asarray(v, dtype=float)[sl] for k, v in curves.items()}
    ymax, names = _histogram_scale(o, nl, cs)
    yt = svg.nice_ticks(0, ymax, 5)
    entries = [{"label": "observed shoes", "kind": "patch", "color": _BLUE},
               {"label": "uniform shuffle (exact law)", "kind": "line", "color": "#000000", "width": 1.2}]
    entries += [{"label": nm, "kind": "line", "color": col, "dash": "4 2", "width": 0.8} for nm, col in zip(names, _CURVE_COLORS)]
    W = 576.0
    left = 6 + CAP_HEIGHT * 8 + 3 + max(text_width(s, 8) for s in svg.tick_labels(yt)) + 5.5
    pw = W - left - 8
    top, ncol = _header(title, entries, left, left + pw)
    ph = 150.0
    c = svg.Canvas(W, top + ph + 3.5 + 2 + CAP_HEIGHT * 8 + 4 + CAP_HEIGHT * 8 + 6)
    pad = max(0.0, 6.0 - (xs[-1] - xs[0]))  # a few values (or one): bars of a readable width, ticks to read them by
    padl = min(pad / 2, xs[0] - float(x.min()))  # no room for values the statistic cannot take
    ax = svg.Axes(c, left, top, pw, ph, xlim=(xs[0] - 0.6 - padl, xs[-1] + 0.6 + pad - padl), ylim=(0, ymax))
    c.begin_group(id="bars")
    ax.bars(xs, o, width=1.0, colors=_BLUE)
    c.end_group()
    ax.line(xs, nl, stroke="#000000", width=1.2)
    for v, col in zip(cs.values(), _CURVE_COLORS):
        ax.line(xs, np.minimum(v, ymax), stroke=col, width=0.8, dash="4 2")  # an off-scale peak runs along the top
    ax.frame()
    ax.yticks(yt)
    xt = svg.nice_ticks(xs[0] - padl, xs[-1] + pad - padl, 8, integer=True)
    d = ax.xticks([t for t in xt if float(x.min()) <= t <= float(x.max())])
    ax.xlabel(xlabel, d)
    ax.ylabel("shoes", left - 6 - CAP_HEIGHT * 8)
    _title_and_legend(c, ax, title, entries, left, ncol)
    return Figure(fig_id, fig_title, _svg(c), cap)


def rising_histogram(rs: dict, gsr: dict | None = None) -> Figure:
    """Rising sequences per shoe against their law under a uniform shuffle (and GSR riffles).

    Parameters
    ----------
    rs : dict
        ``r`` (1..n), ``observed`` (shoes with r rising sequences), ``null`` (their expected number under a uniform
        shuffle) and ``gsr`` (expected numbers after k GSR riffles, by k).
    gsr : dict, optional
        ``riffles``: the GSR riffle count whose mean matches the observed one (the legend then shows the counts on
        either side of it), or ``withheld``: why none is given.

    Returns
    -------
    Figure
        An SVG figure with one ``<rect>`` per value shown in its bars group.
    """
    r = np.asarray(rs["r"])
    obs = np.asarray(rs["observed"], dtype=float)
    curves = dict(rs.get("gsr") or {})
    eq = (gsr or {}).get("riffles")
    if eq is not None and np.isfinite(eq) and r.size <= 520:
        # the legend shows the riffle counts on either side of the caption's equivalent, not 1..4
        from rngcert.stats.shuffle import rising_sequence_law

        ks = sorted({max(1, int(np.floor(eq))), max(1, int(np.ceil(eq)))})
        curves = {k: obs.sum() * rising_sequence_law(r.size, k) for k in ks}
    cap = "Too few rising sequences means the shoe still holds long runs of the pre-shuffle order (riffles interleave, they do not scramble)."
    if gsr and gsr.get("riffles") is not None:
        cap += f" The observed mean matches about {gsr['riffles']:.1f} GSR riffles of the whole shoe."
    elif gsr and gsr.get("withheld"):
        cap += " " + gsr["withheld"][:1].upper() + gsr["withheld"][1:] + "."
    return _count_histogram(r, obs, rs["null"], {f"{k} GSR riffle(s)": v for k, v in curves.items()}, title="Rising sequences",
                            xlabel="rising sequences in the shuffled shoe", fig_id="rising_sequences", fig_title="Rising sequences", cap=cap)


def guessing_histogram(g: dict) -> Figure:
    """Correct guesses per shoe with feedback, against the uniform-shuffle law.

    Parameters
    ----------
    g : dict
        ``correct`` (0..n), ``observed`` (shoes with that many right guesses) and ``null`` (their expected number).

    Returns
    -------
    Figure
        An SVG figure with one ``<rect>`` per value shown in its bars group.
    """
    cap = "A player who knows the pre-shuffle order and sees each card guesses the next one; on a uniform shuffle the count follows the black line."
    return _count_histogram(g["correct"], g["observed"], g["null"], {}, title="Guess-the-next-card test",
                            xlabel="cards guessed right, guessing each next card with feedback", fig_id="guessing",
                            fig_title="Guess-the-next-card test", cap=cap)


def _signed_pct(share: float) -> str:
    """A share of the stake as a signed percentage with one decimal, a true minus sign as the axes' tick labels have,
    and no sign on a value that rounds to zero (``-0.0003`` is ``0.0%``, not ``-0.0%``)."""
    v = round(100.0 * share, 1)
    return "0.0%" if v == 0 else f"{v:+.1f}%".replace("-", "\u2212")


def _cell_text_color(rgb: tuple[int, int, int]) -> str:
    """Black on light cells, white on dark ones."""
    return "#ffffff" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 110 else "#000000"


def _sensitivity_cells(rows: list, rf, clumps: list, travels: list) -> tuple[np.ndarray, list]:
    """Edge (% of stake; NaN where none was measured) and the two label lines of each cell of one riffle count's panel."""
    grid = np.full((len(clumps), len(travels)), np.nan)
    lab = [[("", "") for _ in travels] for _ in clumps]
    for r in rows:
        if rf is not None and r.get("riffles") != rf:
            continue
        i = clumps.index(r["clump"]) if r.get("clump") in clumps else 0
        j = travels.index(r["travel"]) if r.get("travel") in travels else 0
        grid[i, j] = np.nan if r["edge"] is None else 100 * r["edge"]
        lab[i][j] = (r["verdict"][0], "no edge" if r["edge"] is None else _signed_pct(r["edge"]))
    return grid, lab


def _sensitivity_panel(c: svg.Canvas, ax: svg.Axes, grid: np.ndarray, lab: list, vmax: float, mark: tuple | None) -> None:
    """One riffle count's heat map: the cells, their verdict letter over the edge, and a frame round ``mark``
    (the (clump, travel) indices of the procedure as declared)."""
    rgb = [[svg.RDYLGN_R.rgb((v + vmax) / (2 * vmax)) for v in row] for row in grid]
    ax.image(rgb, x0=-0.5, y0=-0.5)  # the first clump size at the bottom
    for i, row in enumerate(lab):
        for j, (verdict, edge) in enumerate(row):
            col = _cell_text_color(rgb[i][j])
            c.text(ax.px(j), ax.py(i) - (4.5 if edge else 0), verdict, size=7, anchor="middle", valign="middle", fill=col)
            if edge:
                c.text(ax.px(j), ax.py(i) + 4.5, edge, size=7, anchor="middle", valign="middle", fill=col)
    if mark is not None:
        i, j = mark
        c.rect(ax.px(j - 0.5) + 1, ax.py(i + 0.5) + 1, ax.px(j + 0.5) - ax.px(j - 0.5) - 2, ax.py(i - 0.5) - ax.py(i + 0.5) - 2,
               stroke="#000000", stroke_width=2.0)
    ax.frame()


def _declared_cell(cur: dict, rf, clumps: list, travels: list) -> tuple | None:
    """(clump index, travel index) of the procedure as declared when it lies in this riffle count's panel."""
    if cur.get("riffles", rf) != rf or cur.get("clump") not in clumps or cur.get("travel") not in travels:
        return None
    return clumps.index(cur["clump"]), travels.index(cur["travel"])


def sensitivity_figure(sens: dict) -> Figure:
    """Shuffle procedures: the best tracker's edge over the grid of assumed parameters (one panel
    per riffle count; wash travel across, clump size down), each cell labelled with its verdict.

    Parameters
    ----------
    sens : dict
        The report's ``sensitivity`` block: ``rows`` (``riffles``, ``clump``, ``travel``, ``verdict``, ``edge``),
        ``axes`` (each parameter's ``values``), ``current`` and ``note``.

    Returns
    -------
    Figure
        An SVG figure, one heat map a riffle count, with a colour bar of the edge in % of the stake; a grey cell
        reads "no edge" (no tracker could bet), and the procedure as declared is framed.
    """
    rows = sens["rows"]
    axes = sens["axes"]
    travels = axes.get("travel", {}).get("values", [None])
    clumps = axes.get("clump", {}).get("values", [None])
    riffles = axes.get("riffles", {}).get("values", [None])
    cur = sens.get("current", {})
    vmax = 100 * max([abs(r["edge"]) for r in rows if r["edge"] is not None] + [0.01])
    xl, yl = [str(t) for t in travels], [str(c) for c in clumps]
    xlabel = "wash travel (share of the stack)"
    left, right = _heat_layout(yl, -vmax, vmax)
    cell_w = max(40.0, max(text_width(s, 8) for s in xl) + 6)  # "no edge" (26 pt at 7 pt) with room between cells
    pw = max(cell_w * len(travels), text_width(xlabel, 8) + 4)  # the axis label within its panel, even for one travel
    ph, gap, top = max(150.0, 24.0 * len(clumps)), 24.0, 22.0
    depth = 3.5 + 2 + CAP_HEIGHT * 8
    c = svg.Canvas(left + len(riffles) * pw + (len(riffles) - 1) * gap + right, top + ph + depth + 4 + CAP_HEIGHT * 8 + 6)
    for k, rf in enumerate(riffles):
        grid, lab = _sensitivity_cells(rows, rf, clumps, travels)
        ax = svg.Axes(c, left + k * (pw + gap), top, pw, ph, xlim=(-0.5, len(travels) - 0.5), ylim=(-0.5, len(clumps) - 0.5))
        _sensitivity_panel(c, ax, grid, lab, vmax, _declared_cell(cur, rf, clumps, travels))
        if k == 0:
            ax.yticks(range(len(clumps)), yl)
            ax.ylabel("wash clump size (cards)", left - 6 - CAP_HEIGHT * 8)
        ax.xlabel(xlabel, ax.xticks(range(len(travels)), xl))
        if rf is not None:
            ax.title(f"riffles x{rf}", size=9)
    svg.colorbar(c, left + len(riffles) * pw + (len(riffles) - 1) * gap + 16, top, 10, ph, svg.RDYLGN_R, -vmax, vmax,
                 label="best tracker edge, % of stake", size=8)
    cap = ("Verdict (P PASS, S SUSPECT, F FAIL) and the best tracker's edge for each combination of the assumed parameters; "
           "grey, \"no edge\": no tracker could bet, so no edge was measured; "
           f"framed: the procedure as declared ({', '.join(f'{k} {v}' for k, v in cur.items())}). {sens.get('note', '')}")
    return Figure("sensitivity", "Sensitivity to the assumed parameters", _svg(c), cap)
