"""The vector-figure writer rngcert.report.svg (issue 11, item 2): ticks, number formats, text
widths and escaping, colour scale, and a well-formed deterministic document; the simultaneous band
of the frequency figures equal to scipy.stats' binomial quantiles without importing scipy.stats."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rngcert.equipment.wheel import load_wheel
from rngcert.report import plots, svg

NS = "{http://www.w3.org/2000/svg}"


def test_svg_helpers():
    assert svg.nice_ticks(0, 648, 5, integer=True) == [0, 200, 400, 600]
    assert svg.nice_ticks(1, 18, 6, integer=True) == [5, 10, 15]
    assert svg.tick_labels(svg.nice_ticks(-3, 3, 8)) == ["−3", "−2", "−1", "0", "1", "2", "3"]
    assert svg.tick_labels([0.0, 0.5, 1.0]) == ["0.0", "0.5", "1.0"]
    assert svg.fmt(-0.001) == "0" and svg.fmt(2.50) == "2.5" and svg.fmt(3) == "3"
    assert svg.text_width("00", 8) == pytest.approx(2 * 0.636 * 8)
    assert svg.RDBU_R(0.0) == "#053061" and svg.RDBU_R(0.5) == "#f7f7f7" and svg.RDBU_R(1.0) == "#67001f"


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
