"""The wheel figures written by rngcert.report.svg (issue 11, item 2): the writer's helpers and a
well-formed, escaped, byte-identical document; each figure valid SVG with one mark per outcome
and deterministic; the simultaneous band equal to scipy.stats' binomial quantiles; and no
matplotlib or scipy.stats imported to draw them."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

from rngcert.equipment.wheel import load_wheel
from rngcert.report import plots, svg
from rngcert.stats.result import NotApplicable, Requirement, TestResult

NS = "{http://www.w3.org/2000/svg}"


def _root(fig) -> ET.Element:
    assert fig.mime == "image/svg+xml"
    root = ET.fromstring(base64.b64decode(fig.data_base64))
    assert root.tag == NS + "svg" and root.get("viewBox")
    return root


def _group(root, gid) -> ET.Element:
    (g,) = [e for e in root.iter(NS + "g") if e.get("id") == gid]
    return g


def _results(ps):
    out = [TestResult(f"t{i}", Requirement.UNIFORMITY, 1.0, 1, p, 100, "exact") for i, p in enumerate(ps)]
    return out + [NotApplicable("skipped", Requirement.INDEPENDENCE, 10, "too few")]


def test_svg_helpers():
    assert svg.nice_ticks(0, 648, 5, integer=True) == [0, 200, 400, 600]
    assert svg.nice_ticks(1, 18, 6, integer=True) == [5, 10, 15]
    assert svg.tick_labels(svg.nice_ticks(-3, 3, 8)) == ["−3", "−2", "−1", "0", "1", "2", "3"]
    assert svg.tick_labels([0.0, 0.5, 1.0]) == ["0.0", "0.5", "1.0"]
    assert svg.fmt(-0.001) == "0" and svg.fmt(2.50) == "2.5" and svg.fmt(3) == "3"
    assert svg.text_width("00", 8) == pytest.approx(2 * 0.636 * 8)
    assert svg.RDBU_R(0.0) == "#053061" and svg.RDBU_R(0.5) == "#f7f7f7" and svg.RDBU_R(1.0) == "#67001f"
    img = svg.png([[(255, 0, 0), (0, 0, 255)], [(0, 255, 0), (1, 2, 3)]])
    assert img[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", img[16:24]) == (2, 2)
    idat = img[33 + 8:-12]  # after the signature and IHDR: the IDAT chunk's data, then IEND
    assert zlib.decompress(idat) == b"\x00\xff\x00\x00\x00\x00\xff" + b"\x00\x00\xff\x00\x01\x02\x03"


def test_canvas_is_well_formed_escaped_and_deterministic():
    def draw():
        c = svg.Canvas(200, 100)
        ax = svg.Axes(c, 30, 10, 160, 60, xlim=(-0.5, 2.5), ylim=(0, 10))
        ax.band([-0.5, 0.5, 1.5, 2.5], [2, 2, 3], [8, 7, 8])
        ax.bars([0, 1, 2], [5, 9, 1], width=0.7, colors=["#4a7ab5", "#c0392b", "#4a7ab5"])
        ax.step([-0.5, 0.5, 1.5, 2.5], [5, 5, 5])
        ax.hline(4, dash="3 2")
        ax.points([1], [9], r=3, fill="none", stroke="#000000")
        ax.frame()
        ax.xticks([0, 1, 2], ["<a>", "b&c", '"q"'], rotate=True)
        ax.yticks(svg.nice_ticks(0, 10, 3))
        ax.title("x < y & z")
        svg.legend(c, 190, 2, [{"label": "band", "kind": "patch", "color": "#bbbbbb"}, {"label": "line", "kind": "line"}])
        return c.to_bytes()

    a = draw()
    assert a == draw()
    root = ET.fromstring(a)
    assert root.tag == NS + "svg" and root.get("width") == "200pt" and root.get("viewBox") == "0 0 200 100"
    texts = [t.text for t in root.iter(NS + "text")]
    assert {"<a>", "b&c", '"q"', "x < y & z", "band", "line"} <= set(texts)
    assert len(list(root.iter(NS + "circle"))) == 1 and len(list(root.iter(NS + "polygon"))) == 1
    assert svg.quoteattr('a"b\n') == '"a&quot;b&#10;"'


@pytest.mark.parametrize("level", [0.9, 0.99, 0.999, 0.5])
@pytest.mark.parametrize("n", [1, 7, 37, 500, 10_000, 20_000, 123_457, 2_000_000])
def test_band_equals_scipy_stats_binomial_quantiles(n, level):
    from scipy import stats as sps

    rng = np.random.default_rng(n)
    for probs in (np.full(37, 1 / 37), np.full(38, 1 / 38), np.asarray(load_wheel("money-wheel-52").position_space().probs, float),
                  np.asarray(load_wheel("crazy-time").symbol_space().probs, float), rng.dirichlet(np.ones(20)), np.r_[1e-4, 0.5, 1 - 1e-4]):
        lo, hi = plots.simultaneous_band(n, probs, level)
        a = (1 - level) / (2 * probs.size)
        np.testing.assert_array_equal(lo, sps.binom.ppf(a, n, probs))
        np.testing.assert_array_equal(hi, sps.binom.isf(a, n, probs))
    q = rng.uniform(1e-9, 0.5, 50)
    p = rng.uniform(0.001, 0.999, 50)
    np.testing.assert_array_equal(plots._binom_ppf(q, n, p), sps.binom.ppf(q, n, p))
    np.testing.assert_array_equal(plots._binom_isf(q, n, p), sps.binom.isf(q, n, p))


@pytest.mark.parametrize("wheel", ["european", "american", "money-wheel-52"])
def test_wheel_figures_have_one_mark_per_outcome_and_are_deterministic(wheel):
    sp = load_wheel(wheel).position_space()
    probs = np.asarray(sp.probs, float)
    rng = np.random.default_rng(3)
    counts = rng.multinomial(10_000, probs)
    x = rng.choice(sp.m, 3000, p=probs)
    k = sp.m
    draw = [
        lambda: plots.frequency_figure(counts, probs, list(sp.labels), title="Pocket frequencies", xlabel="pocket"),
        lambda: plots.sector_figure(counts, probs, list(sp.labels), {"start": 4, "length": 3}),
        lambda: plots.distance_figure(x, k, probs),
    ]
    for f in draw:
        a, b = f(), f()
        assert a.data_base64 == b.data_base64  # byte-identical
        assert "nan" not in base64.b64decode(a.data_base64).decode()
    freq, sector, dist = (f() for f in draw)
    root = _root(freq)
    assert len(_group(root, "bars")) == k
    labels = [t.text for t in root.iter(NS + "text")]
    assert all(lab in labels for lab in sp.labels)
    assert len(_group(_root(dist), "bars")) == k
    root = _root(sector)
    (img, bar) = root.iter(NS + "image")  # the cells and the colour bar, each one PNG
    data = base64.b64decode(img.get("{http://www.w3.org/1999/xlink}href").split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (k, k // 2)  # a pixel per arc
    assert len(list(root.iter(NS + "circle"))) == 1  # the best arc
    assert len(list(_root(plots.sector_figure(counts, probs, list(sp.labels))).iter(NS + "circle"))) == 0


def test_symbol_frequencies_and_pvalue_chart():
    sp = load_wheel("crazy-time").symbol_space()
    probs = np.asarray(sp.probs, float)
    fig = plots.frequency_figure(np.random.default_rng(1).multinomial(2000, probs), probs, list(sp.labels), title="Symbol frequencies", xlabel="symbol")
    assert len(_group(_root(fig), "bars")) == sp.m
    res = _results([0.5, 0.004, 1e-12, 0.9])
    fig = plots.pvalue_figure(res, 0.01, {"t0": 1.0, "t1": 0.016, "t2": 4e-12, "t3": 1.0})
    root = _root(fig)
    bars = _group(root, "bars")
    assert len(bars) == 4  # the not-applicable test has no bar
    assert [r.get("fill") for r in bars] == ["#4a7ab5", "#e67e22", "#c0392b", "#4a7ab5"]
    frame = [e for e in root if e.tag == NS + "rect" and e.get("fill") == "none"][0]
    right = float(frame.get("x")) + float(frame.get("width"))
    assert max(float(r.get("x")) + float(r.get("width")) for r in bars) < right  # the longest bar (p = 1e-12) fits
    texts = [t.text for t in root.iter(NS + "text")]
    assert texts.index("t0") < texts.index("t3") and "skipped" not in texts
    assert fig.data_base64 == plots.pvalue_figure(res, 0.01, {"t0": 1.0, "t1": 0.016, "t2": 4e-12, "t3": 1.0}).data_base64
    assert len(_group(_root(plots.pvalue_figure([], 0.01, {})), "bars")) == 0


def test_text_is_escaped_and_degenerate_data_draw():
    labels = ["<a>", "b&c", '"q"', "d'e"]
    root = _root(plots.frequency_figure(np.array([3, 0, 1, 2]), np.full(4, 0.25), labels, title="x < y & z", xlabel="a > b"))
    texts = [t.text for t in root.iter(NS + "text")]
    assert all(lab in texts for lab in labels) and "x < y & z" in texts and "a > b" in texts
    for fig in (plots.frequency_figure(np.zeros(37, int), np.full(37, 1 / 37), [str(i) for i in range(37)], title="t", xlabel="x"),
                plots.sector_figure(np.zeros(37), np.full(37, 1 / 37), [str(i) for i in range(37)])):
        assert "nan" not in base64.b64decode(fig.data_base64).decode()
        _root(fig)


def test_wheel_figures_import_neither_matplotlib_nor_scipy_stats():
    code = (
        "import sys, numpy as np\n"
        "from rngcert.report import plots\n"
        "from rngcert.stats.result import Requirement, TestResult\n"
        "c = np.arange(37) + 100; p = np.full(37, 1 / 37); lab = [str(i) for i in range(37)]\n"
        "plots.frequency_figure(c, p, lab, title='t', xlabel='x'); plots.sector_figure(c, p, lab)\n"
        "plots.distance_figure(np.arange(500) % 37, 37, p)\n"
        "plots.pvalue_figure([TestResult('a', Requirement.UNIFORMITY, 1.0, 1, 0.5, 10, 'exact')], 0.01, {})\n"
        "bad = [m for m in ('matplotlib', 'scipy.stats') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def _circles(root, gid=None):
    g = root if gid is None else _group(root, gid)
    return [(float(e.get("cx")), float(e.get("cy")), float(e.get("r"))) for e in g.iter(NS + "circle")]


def test_nist_proportion_legend_hides_no_point():
    """Issue 24: the legend of the proportion plot covered 4 of its 5 flagged points. Five names fail at
    the right end (where a lower-right legend sat): no legend box may touch any marked point."""
    rows = []
    for i in range(188):
        p = 0.99 if i < 183 else 0.80  # the last five outside the interval
        rows.append({"name": f"t{i}", "m": 100, "proportion": p, "interval": [0.960150, 1.019850]})
    fig = plots.nist_proportions({"rows": rows, "m": 100})
    root = _root(fig)
    pts = _circles(root, "points")
    assert len(pts) == 188
    flagged = [c for c in pts if c[2] > 2.0]
    assert len(flagged) == 5
    labels = {"SP 800-22 interval", "inside", "outside (5)"}
    texts = [e for e in root.iter(NS + "text") if (e.text or "") in labels]
    assert {e.text for e in texts} == labels
    size = 7.0
    for e in texts:  # the legend entry's box: its swatch (about two font sizes left of the text) and its text
        x, y = float(e.get("x")), float(e.get("y"))
        x0, x1 = x - 2.5 * size, x + svg.text_width(e.text, size)
        y0, y1 = y - size, y + size
        for cx, cy, r in pts:
            assert not (x0 - r <= cx <= x1 + r and y0 - r <= cy <= y1 + r), (e.text, (cx, cy))
    # the legend is above the plot area: every point lies below every legend entry
    assert min(cy - r for _, cy, r in pts) > max(float(e.get("y")) for e in texts)


def test_wheel_distance_figure_counts_only_the_pairs_the_test_used():
    """Issue 24: a transcribed list's pairs across line starts are excluded from the wheel-distance test;
    its figure must show the same counts (not the repeats the artefact put at distance 0)."""
    from rngcert.pipeline.checks import pair_mask_of
    from rngcert.stats.integrity import boundary_repeats
    from rngcert.stats.serial import wheel_distance

    rng = np.random.default_rng(5)
    x = rng.integers(0, 37, 20000)
    line_start = np.zeros(x.size, bool)
    line_start[::20] = True
    starts = np.flatnonzero(line_start)[1:]
    copy = starts[rng.random(starts.size) < 0.3]
    x[copy] = x[copy - 1]  # 30% of line starts repeat the last number of the line before
    ev = boundary_repeats(x, line_start, 37)
    mask = pair_mask_of(ev)
    assert mask is not None and (~mask).sum() == starts.size
    test = wheel_distance(x, 37, pair_mask=mask)
    fig = plots.distance_figure(x, 37, None, mask, excluded="pairs across line starts")
    heights = [float(e.get("height")) for e in _group(_root(fig), "bars")]
    obs = np.asarray(test.details["observed"], float)
    assert np.allclose(np.array(heights) / max(heights), obs / obs.max(), atol=2e-3)
    assert f"{int(obs.sum()):,} consecutive pairs" in fig.caption and "excluded (pairs across line starts)" in fig.caption
    every = plots.distance_figure(x, 37)  # without the mask the artefact's repeats show at distance 0
    h_all = [float(e.get("height")) for e in _group(_root(every), "bars")]
    assert h_all[0] / np.median(h_all) > 1.4 and heights[0] / np.median(heights) < 1.15


def _shuffle_plot_data():
    from rngcert.stats.shuffle.plotdata import shuffle_plot_data

    rng = np.random.default_rng(4)
    before = np.tile(np.arange(52, dtype=np.int16), (300, 1))
    after = np.array([rng.permutation(52) for _ in range(300)], dtype=np.int16)
    return shuffle_plot_data(before, after, guess_shoes=300)


def _sensitivity():
    rows = [{"riffles": rf, "clump": cl, "travel": tr, "verdict": "FAIL" if cl == 1.0 else "SUSPECT",
             "edge": None if cl == 1.0 else 0.01 * (rf - tr * 10 + cl)} for rf in (1, 2) for cl in (1.0, 4.0) for tr in (0.15, 0.3, 0.6)]
    return {"rows": rows, "axes": {"riffles": {"values": [1, 2]}, "clump": {"values": [1.0, 4.0]}, "travel": {"values": [0.15, 0.3, 0.6]}},
            "current": {"riffles": 1}, "note": ""}


def test_shuffle_figures_are_svg_with_one_mark_a_value_and_deterministic():
    """The shuffle figures and SP 800-22's histograms (written by svg.py since matplotlib was dropped): valid SVG,
    one bar per value shown, every cell of the sensitivity grid labelled with its verdict (and edge), the same
    bytes twice."""
    pd = _shuffle_plot_data()
    figs = {
        "heat": lambda: plots.position_heatmap(pd["heatmap"]),
        "rising": lambda: plots.rising_histogram(pd["rising"], pd.get("gsr_equivalent")),
        "guessing": lambda: plots.guessing_histogram(pd["guessing"]),
        "sensitivity": lambda: plots.sensitivity_figure(_sensitivity()),
        "nist": lambda: plots.nist_histograms({"rows": [{"name": "nist_runs", "histogram": [3] * 10},
                                                        {"name": "nist_template[1]", "histogram": [0] * 9 + [30]}], "m": 30}),
    }
    for name, draw in figs.items():
        a, b = draw(), draw()
        assert a.data_base64 == b.data_base64, name
        _root(a)
    heat = _root(figs["heat"]())
    assert len(list(heat.iter(NS + "image"))) == 2  # the cells, the colour bar
    g = pd["guessing"]
    shown = np.flatnonzero((np.asarray(g["observed"]) > 0) | (np.asarray(g["null"]) > np.sum(g["observed"]) * 1e-4))
    bars = _group(_root(figs["guessing"]()), "bars")
    assert len(list(bars.iter(NS + "rect"))) == shown.max() - shown.min() + 1
    texts = [t.text for t in _root(figs["sensitivity"]()).iter(NS + "text")]
    assert texts.count("F") == 6 and texts.count("S") == 6 and "+3.5%" in texts and "\u22121.0%" in texts  # 2 riffles x 2 clumps x 3 travels
    assert "0.0%" in texts and "-0.0%" not in texts and "+0.0%" not in texts  # an edge that rounds to zero has no sign
    assert "riffles x1" in texts and "riffles x2" in texts and "best tracker edge, % of stake" in texts
    nist = [t.text for t in _root(figs["nist"]()).iter(NS + "text")]
    assert "runs" in nist and "template" in nist


def test_shuffle_and_bits_figures_import_no_matplotlib():
    code = (
        "import sys, numpy as np\n"
        "sys.path.insert(0, %r)\n"
        "import test_report_svg as t\n"
        "from rngcert.report import plots\n"
        "pd = t._shuffle_plot_data()\n"
        "plots.position_heatmap(pd['heatmap']); plots.rising_histogram(pd['rising']); plots.guessing_histogram(pd['guessing'])\n"
        "plots.sensitivity_figure(t._sensitivity())\n"
        "plots.nist_histograms({'rows': [{'name': 'nist_runs', 'histogram': [1] * 10}], 'm': 10})\n"
        "assert 'matplotlib' not in sys.modules\n"
    ) % str(__import__("pathlib").Path(__file__).parent)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def _texts(root) -> list[str]:
    return [t.text for t in root.iter(NS + "text")]


def _frame(root) -> ET.Element:
    """The plot area's frame: the widest unfilled rectangle with a stroke."""
    return max((r for r in root.iter(NS + "rect") if r.get("fill") == "none" and r.get("stroke")), key=lambda r: float(r.get("width")))


def _number(s: str) -> float | None:
    try:
        return float(s.replace("−", "-"))
    except ValueError:
        return None


def test_zone_heatmap_colour_bar_shows_no_negative_ratio():
    """A hot diagonal (observed/expected 4.1) made the scale 1 ± 3.1: the colour bar ran down to −2.0, a ratio of
    counts no cell can take. The bar now stops at 0, with the cells' colours unchanged."""
    r = np.ones((8, 8))
    r[0, 0], r[7, 7] = 4.1, 0.2
    root = _root(plots.position_heatmap({"observed_over_expected": r}))
    nums = [v for v in map(_number, _texts(root)) if v is not None]
    assert min(nums) == 0.0 and 4.0 in nums, nums  # the bar's ticks 0 .. 4 (the zones 1 .. 8 among the labels)
    assert len(list(root.iter(NS + "image"))) == 2


def test_rising_histogram_is_scaled_to_the_observed_shoes_not_a_far_riffle_curve():
    """With the GSR equivalent withheld the curves of 1-4 riffles are drawn; their peaks (every shoe at 2, 4, 8 or 16
    rising sequences) set the y axis, and the observed bars were a few points high (a 2,000-shoe axis for 180-shoe
    bars in baccarat-004's report). The bars and the exact law now set the scale; a curve above it is cut at the top
    and its legend entry says "off scale" with its peak."""
    r = np.arange(1, 61)
    obs = np.round(100 * np.exp(-0.5 * ((r - 30) / 4.0) ** 2) / (4.0 * np.sqrt(2 * np.pi)) * 4).astype(float)
    null = 400 * np.exp(-0.5 * ((r - 45) / 4.0) ** 2) / (4.0 * np.sqrt(2 * np.pi))
    far = np.zeros(60)
    far[1] = obs.sum()
    root = _root(plots.rising_histogram({"r": r, "observed": obs, "null": null, "gsr": {1: far}}))
    frame = _frame(root)
    top, height = float(frame.get("y")), float(frame.get("height"))
    tallest = max(float(b.get("height")) for b in _group(root, "bars").iter(NS + "rect"))
    assert tallest >= 0.8 * height, (tallest, height)
    dashed = [p for p in root.iter(NS + "polyline") if p.get("stroke-dasharray")]
    ys = [float(pt.split(",")[1]) for p in dashed for pt in p.get("points").split()]
    assert dashed and min(ys) >= top - 0.01  # cut at the frame, not drawn above it
    assert any("off scale" in t for t in _texts(root)), _texts(root)


@pytest.mark.parametrize("value", [0, 5])
def test_count_histogram_of_one_value_says_which(value):
    """Every shoe with the same count: the x axis had no tick at all (nice_ticks(5, 5) is empty), so the one bar
    could not be read. Now its value is a tick label, and no tick names a count below the smallest possible one."""
    x = np.arange(11)
    obs = np.zeros(11)
    obs[value] = 300
    root = _root(plots.guessing_histogram({"correct": x, "observed": obs, "null": obs.copy()}))
    nums = [_number(t) for t in _texts(root)]
    assert float(value) in nums and all(v is None or v >= 0 for v in nums), nums


def test_sensitivity_grid_says_no_edge_frames_the_declared_procedure_and_keeps_its_labels():
    """A grey cell (no tracker could bet, edge None) read only "F", the grey unexplained; the procedure as declared
    was not marked; with one travel value the panel was 34 pt wide and its x label ran off the canvas."""
    root = _root(plots.sensitivity_figure(_sensitivity()))
    texts = _texts(root)
    assert texts.count("no edge") == 6  # 2 riffles x 1 clump (1.0) x 3 travels
    rows = [{"riffles": 1, "clump": 2.0, "travel": 0.1, "verdict": "PASS", "edge": -0.004},
            {"riffles": 1, "clump": 4.0, "travel": 0.1, "verdict": "FAIL", "edge": None}]
    sens = {"rows": rows, "axes": {"riffles": {"values": [1]}, "clump": {"values": [2.0, 4.0]}, "travel": {"values": [0.1]}},
            "current": {"travel": 0.1, "clump": 2.0, "riffles": 1}, "note": ""}
    fig = plots.sensitivity_figure(sens)
    root = _root(fig)
    width = float(root.get("viewBox").split()[2])
    (label,) = [t for t in root.iter(NS + "text") if t.text == "wash travel (share of the stack)"]
    x = float(label.get("x"))
    assert 0 <= x and x + svg.text_width(label.text, float(label.get("font-size"))) <= width
    (mark,) = [r for r in root.iter(NS + "rect") if r.get("stroke-width") == "2"]
    frame = _frame(root)
    fy, fh = float(frame.get("y")), float(frame.get("height"))
    assert float(mark.get("y")) > fy + fh / 2  # clump 2.0, the first, is the lower row
    assert "no tracker could bet" in fig.caption and "framed: the procedure as declared" in fig.caption


def test_nist_histograms_count_in_whole_streams_and_name_each_test_in_full():
    """Counts of streams had ticks 0, 2.5, 5.0 (nice_ticks' 2.5 step passed integer=True); the long names
    (non_overlapping_template, random_excursions_variant) were cut with an ellipsis. Names are set smaller to fit."""
    assert svg.nice_ticks(0, 6.6, 3, integer=True) == [0, 5]
    rows = [{"name": f"nist_{n}", "histogram": h} for n, h in [("linear_complexity", [1, 0, 3, 2, 3, 6, 1, 0, 2, 2]),
                                                               ("non_overlapping_template[1]", [2] * 10),
                                                               ("random_excursions_variant[x=-1]", [3, 2, 1, 0, 4, 2, 2, 2, 2, 2])]]
    texts = _texts(_root(plots.nist_histograms({"rows": rows, "m": 20})))
    assert "non_overlapping_template" in texts and "random_excursions_variant" in texts and not any("…" in t for t in texts)
    ticks = [t for t in texts if _number(t) is not None and t not in ("0.5",)]
    assert ticks and all(float(t).is_integer() and "." not in t for t in ticks), ticks


def test_nist_histogram_of_a_test_with_no_p_values_says_so():
    """A test not applicable at this length (overlapping_template at n = 100,000) drew an empty panel with ticks
    0 and 1, which reads as "no stream in any bin". It now says there are no p-values and why."""
    rows = [{"name": "nist_runs", "histogram": [2] * 10, "m": 20, "not_applicable": 0},
            {"name": "nist_overlapping_template", "histogram": [0] * 10, "m": 0, "not_applicable": 20},
            {"name": "nist_universal", "histogram": [0] * 10, "m": 0, "not_applicable": 0}]
    root = _root(plots.nist_histograms({"rows": rows, "m": 20}))
    texts = _texts(root)
    assert texts.count("no p-values:") == 1 and texts.count("not applicable") == 1 and texts.count("no p-values") == 1
    assert len(list(root.iter(NS + "line"))) == 3 * 3 + 3 + 1  # x ticks of 3 panels; y ticks 0, 1, 2 and the flat line of runs only
