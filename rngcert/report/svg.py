"""A small vector-figure writer: SVG 1.1 text, with no dependency beyond the standard library.

The report's figures (wheel, shuffle and SP 800-22) are bar charts, step lines, bands and heat
maps; drawing them with matplotlib cost seconds (its import and its layout engine), writing them
here costs milliseconds. Everything is placed in points (1/72 in): the document's ``viewBox`` is in points
and its ``width``/``height`` carry the ``pt`` unit, so a figure has the same natural size in a
browser and in WeasyPrint's PDF. Output is deterministic: coordinates are rounded to 1/100 pt,
attributes are written in a fixed order, there are no random ids, dates or versions.

Layout needs text widths without a font engine: :func:`text_width` uses the advance widths of
DejaVu Sans (the report's font), which is wider than the usual fallbacks (Liberation Sans,
Arial), so a label measured with it fits whichever of them the viewer has.

Two layers: :class:`Canvas` (the document: rectangles, lines, polygons, circles, text, PNG
images) and :class:`Axes` (a plot area on a canvas with data limits: bars, step lines, bands,
points, reference lines, heat maps, ticks, axis labels), plus :func:`legend`, :func:`colorbar`,
:class:`Colormap` and :func:`png` (a heat map's cells as one small image, as matplotlib embeds
them).
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from typing import Iterable, Sequence

FONT_FAMILY = "'DejaVu Sans', 'Bitstream Vera Sans', 'Liberation Sans', Arial, Helvetica, sans-serif"

# Advance widths of DejaVu Sans in 1/1000 em, for the printable ASCII characters " " to "~".
_ASCII_WIDTHS = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636,
    636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656,
    557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613,
    635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818,
    592, 592, 525, 636, 337, 636, 838,
)
_OTHER_WIDTHS = {"−": 838, "×": 838, "·": 318, "–": 500, "—": 1000, "°": 500, "±": 838, "≤": 838, "≥": 838, "µ": 636, "²": 401, "³": 401}
#: the width (1/1000 em) assumed for a character not in the tables: a wide one, so that text fits
_DEFAULT_WIDTH = 760
#: cap height of DejaVu Sans (em): baseline offset that centres digits and capitals on a point
CAP_HEIGHT = 0.73


def escape(s: str) -> str:
    """``s`` as XML character data: ``&``, ``<`` and ``>`` escaped (xml.sax.saxutils would
    import urllib and http.client, 14 ms, for these three replacements).

    Parameters
    ----------
    s : object
        Any value; its ``str()`` is escaped.

    Returns
    -------
    str
        The escaped text.
    """
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(s: str) -> str:
    """``s`` escaped and double-quoted as an XML attribute value (quotes, tabs and line breaks too).

    Parameters
    ----------
    s : object
        The attribute's value (its ``str()``), escaped as by :func:`escape` and then quotes and white space.

    Returns
    -------
    str
        ``"…"``, ready to follow ``name=``.
    """
    v = escape(s).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return f'"{v}"'


def text_width(s: str, size: float) -> float:
    """Width of ``s`` set in DejaVu Sans at ``size`` points.

    Parameters
    ----------
    s : str
        The text (one line).
    size : float
        Font size in points.

    Returns
    -------
    float
        The advance width in points.
    """
    total = 0
    for ch in str(s):
        o = ord(ch)
        total += _ASCII_WIDTHS[o - 32] if 32 <= o < 127 else _OTHER_WIDTHS.get(ch, _DEFAULT_WIDTH)
    return total * size / 1000.0


def fmt(v: float) -> str:
    """A coordinate as SVG text: rounded to 1/100, no trailing zeros, never ``-0``.

    Parameters
    ----------
    v : float
        A number (points, opacity, ...).

    Returns
    -------
    str
        Its shortest decimal form with at most two decimals.
    """
    s = f"{float(v):.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def png(rows: Sequence[Sequence[tuple[int, int, int]]]) -> bytes:
    """An 8-bit RGB PNG of ``rows`` (top row first), written with zlib: deterministic bytes.

    Parameters
    ----------
    rows : sequence of sequence of (int, int, int)
        Pixel colours, all rows of the same length.

    Returns
    -------
    bytes
        The PNG file.
    """
    h, w = len(rows), len(rows[0]) if rows else 0

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def nice_ticks(lo: float, hi: float, max_ticks: int = 6, *, integer: bool = False) -> list[float]:
    """Round tick positions in ``[lo, hi]``: multiples of 1, 2, 2.5 or 5 times a power of ten.

    Parameters
    ----------
    lo, hi : float
        The axis limits.
    max_ticks : int
        At most this many ticks (at least 2 are aimed for).
    integer : bool
        Only integer steps (for counts of things, e.g. arc lengths).

    Returns
    -------
    list of float
        Increasing tick positions (empty when ``hi <= lo``).
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    span = hi - lo
    base = 10.0 ** math.floor(math.log10(span / max(1, max_ticks)))
    for mult in (1, 2, 2.5, 5, 10, 20, 25, 50, 100):
        step = mult * base
        if integer and (step < 1 or step != round(step)):  # 2.5 is no step between whole numbers
            continue
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last - first + 1 <= max_ticks:
            return [k * step for k in range(first, last + 1)]
    return [lo, hi]  # pragma: no cover (the 100× step always fits)


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """Labels of :func:`nice_ticks` positions with as many decimals as their step needs, and a
    true minus sign.

    Parameters
    ----------
    ticks : sequence of float
        Equally spaced tick positions.

    Returns
    -------
    list of str
        One label per tick.
    """
    if len(ticks) < 2:
        return [_num_label(t, 0 if float(t).is_integer() else 2) for t in ticks]
    step = abs(ticks[1] - ticks[0])
    dec = 0
    while dec < 6 and abs(step * 10**dec - round(step * 10**dec)) > 1e-6 * max(1.0, step * 10**dec):
        dec += 1
    return [_num_label(t, dec) for t in ticks]


def _num_label(v: float, dec: int) -> str:
    s = f"{v:.{dec}f}"
    if float(s) == 0:
        s = s.lstrip("-")
    return s.replace("-", "−")


class Canvas:
    """An SVG document of ``width`` × ``height`` points, drawn in painter's order.

    Parameters
    ----------
    width, height : float
        Size in points (also the ``viewBox``, so one user unit is one point).
    font_size : float
        Default font size in points.
    background : str or None
        Fill of the whole canvas (``None``: transparent).
    """

    def __init__(self, width: float, height: float, *, font_size: float = 8.0, background: str | None = "#ffffff"):
        self.width = float(width)
        self.height = float(height)
        self.font_size = float(font_size)
        self._parts: list[str] = []
        if background:
            self.rect(0, 0, self.width, self.height, fill=background)

    # -- primitives -------------------------------------------------------------------------
    def _el(self, tag: str, attrs: dict, body: str | None = None) -> None:
        a = "".join(f" {k}={quoteattr(str(v))}" for k, v in attrs.items() if v is not None)
        self._parts.append(f"<{tag}{a}/>" if body is None else f"<{tag}{a}>{body}</{tag}>")

    def begin_group(self, **attrs) -> None:
        """Open a ``<g>`` whose attributes (``shape_rendering=...``: underscores become hyphens)
        apply to what is drawn until :meth:`end_group`."""
        a = "".join(f" {k.replace('_', '-')}={quoteattr(str(v))}" for k, v in attrs.items() if v is not None)
        self._parts.append(f"<g{a}>")

    def end_group(self) -> None:
        """Close the innermost group opened by :meth:`begin_group`."""
        self._parts.append("</g>")

    def rect(self, x: float, y: float, w: float, h: float, *, fill: str = "none", stroke: str | None = None,
             stroke_width: float | None = None, opacity: float | None = None) -> None:
        """A rectangle with top-left corner ``(x, y)``; negative sizes are normalised."""
        if w < 0:
            x, w = x + w, -w
        if h < 0:
            y, h = y + h, -h
        self._el("rect", {"x": fmt(x), "y": fmt(y), "width": fmt(w), "height": fmt(h), "fill": fill, "stroke": stroke,
                          "stroke-width": None if stroke_width is None else fmt(stroke_width),
                          "fill-opacity": None if opacity is None else fmt(opacity)})

    def line(self, x1: float, y1: float, x2: float, y2: float, *, stroke: str = "#000000", width: float = 1.0,
             dash: str | None = None) -> None:
        """A straight segment; ``dash`` is an SVG ``stroke-dasharray`` (e.g. ``"4 2"``)."""
        self._el("line", {"x1": fmt(x1), "y1": fmt(y1), "x2": fmt(x2), "y2": fmt(y2), "stroke": stroke,
                          "stroke-width": fmt(width), "stroke-dasharray": dash})

    def polyline(self, points: Iterable[tuple[float, float]], *, stroke: str = "#000000", width: float = 1.0,
                 dash: str | None = None) -> None:
        """An open path through ``points`` (no fill)."""
        pts = " ".join(f"{fmt(x)},{fmt(y)}" for x, y in points)
        self._el("polyline", {"points": pts, "fill": "none", "stroke": stroke, "stroke-width": fmt(width),
                              "stroke-dasharray": dash, "stroke-linejoin": "miter"})

    def polygon(self, points: Iterable[tuple[float, float]], *, fill: str, opacity: float | None = None) -> None:
        """A closed filled shape (no stroke)."""
        pts = " ".join(f"{fmt(x)},{fmt(y)}" for x, y in points)
        self._el("polygon", {"points": pts, "fill": fill, "fill-opacity": None if opacity is None else fmt(opacity)})

    def circle(self, cx: float, cy: float, r: float, *, fill: str = "none", stroke: str | None = "#000000",
               width: float = 1.0) -> None:
        """A circle (a marker) centred on ``(cx, cy)``."""
        self._el("circle", {"cx": fmt(cx), "cy": fmt(cy), "r": fmt(r), "fill": fill, "stroke": stroke,
                            "stroke-width": fmt(width) if stroke else None})

    def text(self, x: float, y: float, s: str, *, size: float | None = None, anchor: str = "start", valign: str = "baseline",
             rotate: float = 0.0, fill: str = "#000000") -> None:
        """Text at ``(x, y)``, escaped.

        ``anchor`` is ``start``, ``middle`` or ``end`` along the text's direction; ``valign`` places
        the point on the ``baseline``, at the ``middle`` of the capitals, or at their ``top``;
        ``rotate`` turns the text by that many degrees clockwise about ``(x, y)``.

        Both placements are computed here from :func:`text_width` and written as the position
        of the start of the baseline, without ``text-anchor`` or ``dominant-baseline``: viewers
        differ in their support of the latter, and WeasyPrint draws every anchored text as a
        separate object (about 350 bytes each: a report PDF twice as large). matplotlib's SVG
        text is placed the same way, from the same font's metrics.
        """
        size = self.font_size if size is None else size
        off = {"start": 0.0, "middle": 0.5, "end": 1.0}[anchor] * text_width(s, size)  # back along the text
        dy = {"baseline": 0.0, "middle": CAP_HEIGHT / 2, "top": CAP_HEIGHT}[valign] * size  # down across it
        rad = math.radians(rotate)
        cos, sin = math.cos(rad), math.sin(rad)
        px, py = fmt(x - off * cos - dy * sin), fmt(y - off * sin + dy * cos)
        attrs: dict = {"x": px, "y": py, "font-size": fmt(size), "fill": fill if fill != "#000000" else None,
                       "transform": f"rotate({fmt(rotate)} {px} {py})" if rotate else None}
        self._el("text", attrs, escape(str(s)))

    def image(self, x: float, y: float, w: float, h: float, png_bytes: bytes) -> None:
        """A PNG stretched over ``w`` × ``h`` points at ``(x, y)``, its pixels drawn as sharp
        rectangles (no smoothing), as matplotlib writes unresampled images."""
        href = "data:image/png;base64," + base64.b64encode(png_bytes).decode("ascii")
        self._el("image", {"x": fmt(x), "y": fmt(y), "width": fmt(w), "height": fmt(h), "preserveAspectRatio": "none",
                           "style": "image-rendering:crisp-edges;image-rendering:pixelated", "xlink:href": href})

    # -- output -----------------------------------------------------------------------------
    def to_string(self) -> str:
        """The SVG document as text."""
        w, h = fmt(self.width), fmt(self.height)
        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" '
                f'width="{w}pt" height="{h}pt" viewBox="0 0 {w} {h}" font-family={quoteattr(FONT_FAMILY)} '
                f'font-size="{fmt(self.font_size)}" stroke-linecap="butt">\n')
        return head + "\n".join(self._parts) + "\n</svg>\n"

    def to_bytes(self) -> bytes:
        """The SVG document, UTF-8 encoded."""
        return self.to_string().encode("utf-8")


class Axes:
    """A plot area on a :class:`Canvas` with linear data limits.

    Parameters
    ----------
    canvas : Canvas
        Where to draw.
    left, top, width, height : float
        The plot area in points on the canvas.
    xlim, ylim : tuple of float
        Data limits mapped to the area's left/right and bottom/top edges.
    invert_y : bool
        Put ``ylim[0]`` at the top (for lists read from the top down).
    """

    def __init__(self, canvas: Canvas, left: float, top: float, width: float, height: float, *,
                 xlim: tuple[float, float], ylim: tuple[float, float], invert_y: bool = False):
        self.c = canvas
        self.left, self.top, self.width, self.height = float(left), float(top), float(width), float(height)
        self.xlim = (float(xlim[0]), float(xlim[1]) if xlim[1] != xlim[0] else float(xlim[0]) + 1.0)
        self.ylim = (float(ylim[0]), float(ylim[1]) if ylim[1] != ylim[0] else float(ylim[0]) + 1.0)
        self.invert_y = invert_y

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def px(self, x: float) -> float:
        """Canvas x of data x."""
        a, b = self.xlim
        return self.left + (float(x) - a) / (b - a) * self.width

    def py(self, y: float) -> float:
        """Canvas y of data y."""
        a, b = self.ylim
        t = (float(y) - a) / (b - a)
        return self.top + (t if self.invert_y else 1.0 - t) * self.height

    # -- data -------------------------------------------------------------------------------
    def bars(self, xs: Sequence[float], heights: Sequence[float], *, width: float = 0.8,
             colors: str | Sequence[str] = "#4a7ab5", base: float = 0.0) -> None:
        """Vertical bars centred on ``xs`` (data units), from ``base`` to ``heights``."""
        self._bars(xs, heights, width, colors, base, vertical=True)

    def hbars(self, ys: Sequence[float], lengths: Sequence[float], *, height: float = 0.8,
              colors: str | Sequence[str] = "#4a7ab5", base: float = 0.0) -> None:
        """Horizontal bars centred on ``ys`` (data units), from ``base`` to ``lengths``."""
        self._bars(ys, lengths, height, colors, base, vertical=False)

    def _bars(self, centres, values, thickness, colors, base, *, vertical: bool) -> None:
        """Bars of ``thickness`` centred on ``centres``, from ``base`` to ``values`` (data units): centres on the
        x axis and values on the y axis when ``vertical``, the other way round otherwise."""
        across, along = (self.px, self.py) if vertical else (self.py, self.px)
        cols = [colors] * len(centres) if isinstance(colors, str) else list(colors)
        for c, v, col in zip(centres, values, cols):
            a0, a1 = across(c - thickness / 2), across(c + thickness / 2)
            b0, b1 = along(base), along(v)
            (x0, x1, y0, y1) = (a0, a1, b0, b1) if vertical else (b0, b1, a0, a1)
            self.c.rect(min(x0, x1), min(y0, y1), abs(x1 - x0), abs(y1 - y0), fill=col)

    def step(self, edges: Sequence[float], values: Sequence[float], *, stroke: str = "#000000", width: float = 1.0,
             dash: str | None = None) -> None:
        """A step line: ``values[i]`` over ``[edges[i], edges[i+1]]`` (``len(edges) == len(values) + 1``)."""
        pts: list[tuple[float, float]] = []
        for i, v in enumerate(values):
            y = self.py(v)
            pts += [(self.px(edges[i]), y), (self.px(edges[i + 1]), y)]
        self.c.polyline(_dedupe(pts), stroke=stroke, width=width, dash=dash)

    def band(self, edges: Sequence[float], lo: Sequence[float], hi: Sequence[float], *, fill: str = "#bbbbbb",
             opacity: float | None = 0.6) -> None:
        """A shaded step band between ``lo[i]`` and ``hi[i]`` over ``[edges[i], edges[i+1]]``."""
        top: list[tuple[float, float]] = []
        bot: list[tuple[float, float]] = []
        for i in range(len(lo)):
            xa, xb = self.px(edges[i]), self.px(edges[i + 1])
            top += [(xa, self.py(hi[i])), (xb, self.py(hi[i]))]
            bot += [(xa, self.py(lo[i])), (xb, self.py(lo[i]))]
        self.c.polygon(_dedupe(top) + _dedupe(bot)[::-1], fill=fill, opacity=opacity)

    def line(self, xs: Sequence[float], ys: Sequence[float], *, stroke: str = "#000000", width: float = 1.0,
             dash: str | None = None) -> None:
        """A polyline through the data points."""
        self.c.polyline([(self.px(x), self.py(y)) for x, y in zip(xs, ys)], stroke=stroke, width=width, dash=dash)

    def points(self, xs: Sequence[float], ys: Sequence[float], *, r: float = 2.0, fill: str = "#4a7ab5",
               stroke: str | None = None, width: float = 1.0) -> None:
        """Circular markers of radius ``r`` points at the data points."""
        for x, y in zip(xs, ys):
            self.c.circle(self.px(x), self.py(y), r, fill=fill, stroke=stroke, width=width)

    def hline(self, y: float, *, stroke: str = "#000000", width: float = 1.0, dash: str | None = None) -> None:
        """A horizontal reference line across the plot area."""
        self.c.line(self.left, self.py(y), self.right, self.py(y), stroke=stroke, width=width, dash=dash)

    def vline(self, x: float, *, stroke: str = "#000000", width: float = 1.0, dash: str | None = None) -> None:
        """A vertical reference line across the plot area."""
        self.c.line(self.px(x), self.top, self.px(x), self.bottom, stroke=stroke, width=width, dash=dash)

    def image(self, rgb: Sequence[Sequence[tuple[int, int, int]]], *, x0: float, y0: float, dx: float = 1.0, dy: float = 1.0) -> None:
        """A heat map: ``rgb[i][j]`` fills the cell ``[x0 + j·dx, x0 + (j+1)·dx] × [y0 + i·dy, y0 + (i+1)·dy]``.

        The cells are one embedded PNG with a pixel per cell (small, and no hairline seams
        between cells in any viewer), drawn without smoothing.
        """
        if not rgb or not rgb[0]:
            return
        rows, cols = len(rgb), len(rgb[0])
        xa, xb = self.px(x0), self.px(x0 + cols * dx)
        ya, yb = self.py(y0), self.py(y0 + rows * dy)
        top_first = list(rgb) if ya < yb else list(rgb)[::-1]  # PNG rows run from the top down
        self.c.image(min(xa, xb), min(ya, yb), abs(xb - xa), abs(yb - ya), png(top_first))

    # -- decoration ---------------------------------------------------------------------------
    def frame(self, *, stroke: str = "#000000", width: float = 0.8) -> None:
        """The four spines."""
        self.c.rect(self.left, self.top, self.width, self.height, fill="none", stroke=stroke, stroke_width=width)

    def xticks(self, positions: Sequence[float], labels: Sequence[str] | None = None, *, size: float | None = None,
               rotate: bool = False, length: float = 3.5) -> float:
        """Ticks below the plot area with their labels, turned to read upwards when ``rotate``.

        Returns
        -------
        float
            The depth (points below the area's bottom edge) taken by ticks and labels.
        """
        size = self.c.font_size if size is None else size
        labels = tick_labels(positions) if labels is None else [str(s) for s in labels]
        y = self.bottom
        deepest = 0.0
        for p, s in zip(positions, labels):
            x = self.px(p)
            self.c.line(x, y, x, y + length, width=0.8)
            if rotate:
                self.c.text(x, y + length + 2, s, size=size, anchor="end", valign="middle", rotate=-90)
                deepest = max(deepest, text_width(s, size))
            else:
                self.c.text(x, y + length + 2, s, size=size, anchor="middle", valign="top")
                deepest = max(deepest, CAP_HEIGHT * size)
        return length + 2 + deepest

    def yticks(self, positions: Sequence[float], labels: Sequence[str] | None = None, *, size: float | None = None,
               length: float = 3.5) -> float:
        """Ticks left of the plot area with their labels.

        Returns
        -------
        float
            The width (points left of the area's left edge) taken by ticks and labels.
        """
        size = self.c.font_size if size is None else size
        labels = tick_labels(positions) if labels is None else [str(s) for s in labels]
        widest = 0.0
        for p, s in zip(positions, labels):
            y = self.py(p)
            self.c.line(self.left - length, y, self.left, y, width=0.8)
            self.c.text(self.left - length - 2, y, s, size=size, anchor="end", valign="middle")
            widest = max(widest, text_width(s, size))
        return length + 2 + widest

    def xlabel(self, s: str, depth: float, *, size: float | None = None) -> None:
        """The x-axis label centred below ticks that took ``depth`` points (from :meth:`xticks`)."""
        size = self.c.font_size if size is None else size
        self.c.text(self.left + self.width / 2, self.bottom + depth + 4, s, size=size, anchor="middle", valign="top")

    def ylabel(self, s: str, width: float, *, size: float | None = None) -> None:
        """The y-axis label, turned, left of ticks that took ``width`` points (from :meth:`yticks`)."""
        size = self.c.font_size if size is None else size
        self.c.text(self.left - width - 3, self.top + self.height / 2, s, size=size, anchor="middle", rotate=-90)

    def title(self, s: str, *, size: float = 9.0, loc: str = "center") -> None:
        """The title above the plot area, at its left edge or centred."""
        x, anchor = (self.left, "start") if loc == "left" else (self.left + self.width / 2, "middle")
        self.c.text(x, self.top - 6, s, size=size, anchor=anchor)


def _dedupe(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Drop points equal to the previous one (after rounding), and middle points of straight runs."""
    out: list[tuple[float, float]] = []
    for p in pts:
        q = (round(p[0], 2), round(p[1], 2))
        if out and out[-1] == q:
            continue
        if len(out) >= 2 and ((out[-2][0] == out[-1][0] == q[0]) or (out[-2][1] == out[-1][1] == q[1])):
            out[-1] = q
            continue
        out.append(q)
    return out


def legend(canvas: Canvas, x: float, y: float, entries: Sequence[dict], *, size: float = 7.0, align: str = "right",
           valign: str = "top", ncol: int | None = None, box: bool = False) -> tuple[float, float]:
    """A legend anchored at ``(x, y)``: its right (or left) edge at ``x``, its top (or bottom) edge at ``y``.

    Parameters
    ----------
    canvas : Canvas
        Where to draw.
    x, y : float
        Anchor in points (see ``align`` and ``valign``).
    entries : sequence of dict
        Each ``{"label": str, "kind": "patch" | "line" | "marker", "color": str}`` with optional
        ``"dash"`` and ``"width"`` (lines) and ``"opacity"`` (patches).
    size : float
        Font size in points.
    align : str
        ``"right"``: ``x`` is the right edge; ``"left"``: the left edge.
    valign : str
        ``"top"``: ``y`` is the top edge; ``"bottom"``: the bottom edge.
    ncol : int or None
        Entries per row (default: all in one row).
    box : bool
        Draw a white box with a grey border behind it (a legend inside a plot area).

    Returns
    -------
    tuple of float
        The legend's width and height in points.
    """
    w, h, col_w, ncol, rows = legend_size(entries, size=size, ncol=ncol, box=box)
    if not entries:
        return 0.0, 0.0
    sw, gap, pad, lh = _legend_metrics(size)
    x0 = x - w if align == "right" else x
    y0 = y - h if valign == "bottom" else y
    if box:
        canvas.rect(x0, y0, w, h, fill="#ffffff", stroke="#cccccc", stroke_width=0.8, opacity=0.9)
    for i, row in enumerate(rows):
        cy = y0 + (pad / 2 if box else 0) + lh * (i + 0.5)
        cx = x0 + (pad if box else 0)
        for j, e in enumerate(row):
            col, kind = e.get("color", "#000000"), e.get("kind", "patch")
            if kind == "line":
                canvas.line(cx, cy, cx + sw, cy, stroke=col, width=e.get("width", 1.0), dash=e.get("dash"))
            elif kind == "marker":
                canvas.circle(cx + sw / 2, cy, 0.3 * size, fill=col, stroke=None)
            else:
                canvas.rect(cx, cy - 0.35 * size, sw, 0.7 * size, fill=col, opacity=e.get("opacity"))
            canvas.text(cx + sw + gap, cy, e["label"], size=size, valign="middle")
            cx += col_w[j] + 1.6 * size
    return w, h


def _legend_metrics(size: float) -> tuple[float, float, float, float]:
    """Swatch width, swatch-to-label gap, box padding and row height of a legend at ``size``."""
    return 2.0 * size, 0.6 * size, 0.5 * size, 1.5 * size


def legend_size(entries: Sequence[dict], *, size: float = 7.0, ncol: int | None = None, box: bool = False):
    """Width and height (points) that :func:`legend` takes for these entries, then the column
    widths, the number of columns and the rows (for :func:`legend` itself).

    Parameters
    ----------
    entries : sequence of dict
        The legend's rows, as for :func:`legend`.
    size, ncol, box
        As for :func:`legend`.

    Returns
    -------
    tuple
        ``(width, height, column widths, columns, rows)``.
    """
    if not entries:
        return 0.0, 0.0, [], 0, []
    sw, gap, pad, lh = _legend_metrics(size)
    ncol = len(entries) if ncol is None else max(1, ncol)
    rows = [list(entries[i:i + ncol]) for i in range(0, len(entries), ncol)]
    col_w = [0.0] * ncol
    for row in rows:
        for j, e in enumerate(row):
            col_w[j] = max(col_w[j], sw + gap + text_width(e["label"], size))
    w = sum(col_w) + 1.6 * size * (ncol - 1) + (2 * pad if box else 0)
    h = lh * len(rows) + (pad if box else 0)
    return w, h, col_w, ncol, rows


class Colormap:
    """A colour scale interpolated linearly in sRGB between equally spaced anchors (the way
    matplotlib defines its segmented maps such as ``RdBu_r``).

    Parameters
    ----------
    anchors : sequence of str
        ``#rrggbb`` colours from the low end to the high end.
    """

    def __init__(self, anchors: Sequence[str]):
        self.anchors = list(anchors)
        self._rgb = [tuple(int(a[k:k + 2], 16) for k in (1, 3, 5)) for a in self.anchors]

    def rgb(self, t: float) -> tuple[int, int, int]:
        """The colour at ``t`` in [0, 1] as 8-bit RGB (clipped; NaN gives light grey)."""
        if t != t:
            return (221, 221, 221)
        t = min(1.0, max(0.0, float(t))) * (len(self._rgb) - 1)
        i = min(int(t), len(self._rgb) - 2)
        f = t - i
        a, b = self._rgb[i], self._rgb[i + 1]
        return tuple(round(u + (v - u) * f) for u, v in zip(a, b))

    def __call__(self, t: float) -> str:
        """The colour at ``t`` in [0, 1] as ``#rrggbb``."""
        return "#" + "".join(f"{v:02x}" for v in self.rgb(t))


#: ColorBrewer RdBu (11 classes), reversed: blue for a deficit, red for an excess (matplotlib's ``RdBu_r``).
RDBU_R = Colormap(["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"])

#: ColorBrewer RdYlGn (11 classes), reversed: green for a low value, red for a high one (matplotlib's ``RdYlGn_r``).
RDYLGN_R = Colormap(["#006837", "#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#ffffbf", "#fee08b", "#fdae61", "#f46d43", "#d73027", "#a50026"])


def colorbar(canvas: Canvas, left: float, top: float, width: float, height: float, cmap: Colormap, vmin: float, vmax: float,
             *, label: str = "", size: float = 8.0, lo: float | None = None) -> None:
    """A vertical colour bar for ``cmap`` over ``[vmin, vmax]`` with round ticks on its right and
    ``label`` turned beside them.

    Parameters
    ----------
    canvas : Canvas
        Where to draw.
    left, top, width, height : float
        The bar in points.
    cmap : Colormap
        The scale.
    vmin, vmax : float
        Values at the bottom and the top.
    label : str
        What the colours measure.
    size : float
        Font size of ticks and label.
    lo : float or None
        The lowest value the data can take, when above ``vmin`` (e.g. 0 for a ratio on a scale
        centred on 1): the bar then shows only ``[lo, vmax]`` of the scale, with the same colours
        at the same values, and no tick for an impossible value.
    """
    t0 = 0.0 if lo is None or lo <= vmin or vmax <= vmin else min(1.0, (lo - vmin) / (vmax - vmin))
    vlo = vmin + t0 * (vmax - vmin)
    # a column of 128 pixels rather than an SVG gradient, which WeasyPrint (the PDF) does not draw
    steps = 128
    canvas.image(left, top, width, height, png([[cmap.rgb(1 - (1 - t0) * (i + 0.5) / steps)] for i in range(steps)]))
    canvas.rect(left, top, width, height, fill="none", stroke="#000000", stroke_width=0.8)
    ax = Axes(canvas, left, top, width, height, xlim=(0, 1), ylim=(vlo, vmax))
    ticks = nice_ticks(vlo, vmax, max(2, int(height // 15) + 1))
    widest = 0.0
    for t, s in zip(ticks, tick_labels(ticks)):
        y = ax.py(t)
        canvas.line(left + width, y, left + width + 3, y, width=0.8)
        canvas.text(left + width + 5, y, s, size=size, valign="middle")
        widest = max(widest, text_width(s, size))
    if label:
        canvas.text(left + width + 8 + widest + 0.8 * size, top + height / 2, label, size=size, anchor="middle", rotate=-90)
