"""Write certification reports: ``report.json``, a self-contained ``report.html`` and
``rejects.csv`` in ``reports/<equipment>-<UTC timestamp>/`` (DESIGN §3 "Reports")."""

from __future__ import annotations

import datetime as _dt
import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from rngcert.collect import csvsafe
from rngcert.stats.result import jsonable


def utc_stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def report_dir(base: str | Path, equipment_id: str) -> Path:
    """A new folder ``base/<equipment>-<UTC timestamp>`` (suffixed if it already exists)."""
    base = Path(base)
    stem = f"{equipment_id}-{utc_stamp()}"
    d = base / stem
    i = 1
    while d.exists():
        i += 1
        d = base / f"{stem}-{i}"
    try:
        d.mkdir(parents=True)
    except OSError as exc:
        raise _write_error(d, exc) from None
    return d


def _write_error(path: Path, exc: OSError):
    from rngcert.errors import StorageError

    return StorageError(f"{path}: the report cannot be written: {exc.strerror or exc}")


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if math.isnan(x):
            return "–"
        if x == int(x) and abs(x) < 1e9:
            return str(int(x))
        return f"{x:.4g}"
    return str(x)


def _fmtp(p: Any) -> str:
    if p is None:
        return "–"
    p = float(p)
    if p < 1e-300:
        return "< 1e-300"
    if p < 1e-4:
        return f"{p:.2e}"
    return f"{p:.4f}"


def _finding(t: dict, labels: list | None = None) -> str:
    """One line saying what the test saw, in the field's words, from the test's details."""
    d = t.get("details") or {}
    labels = labels or []

    def lab(i):
        try:
            return labels[int(i) % len(labels)] if labels else str(i)
        except (TypeError, ValueError):
            return str(i)

    name = t.get("name", "")
    best = d.get("best_arc")
    if isinstance(best, dict) and "start" in best:
        L = int(best.get("length", 1))
        exc = best.get("relative_excess")
        exc_s = f" ({exc:+.1%})" if isinstance(exc, (int, float)) else ""
        obs = f"{_fmt(best.get('observed'))} vs {_fmt(best.get('expected'))} expected{exc_s}"
        if name == "dealer_signature":
            who = best.get("label", "")
            ref = d.get("reference", "reference")
            what = " (repeats of the same number)" if int(best["start"]) == 0 and L == 1 and ref == "previous result" else ""
            return f"{who}: landing {int(best['start'])}..{int(best['start']) + L - 1} pockets past the {ref}{what}: {obs}"
        return f"arc of {L} pockets {lab(best['start'])}…{lab(int(best['start']) + L - 1)}: {obs}"
    if "proportion" in d and d.get("interval") and name.endswith(":proportion"):
        lo, hi = d["interval"]
        flag = "" if d.get("proportion_ok", True) else " — OUTSIDE the interval"
        return f"{d.get('passes')}/{d.get('m')} sequences pass; SP 800-22 interval {lo:.3f}–{min(hi, 1):.3f}{flag}"
    if name.endswith(":uniformity") and "histogram" in d:
        return "p-value histogram " + " ".join(str(int(h)) for h in d["histogram"])
    if name == "max_count" and "position" in d:
        exc = d.get("relative_excess")
        return f"pocket {lab(d['position'])}: {_fmt(d.get('count'))} vs {_fmt(d.get('expected'))} expected" + (f" ({exc:+.1%})" if isinstance(exc, (int, float)) else "")
    if d.get("rejected_positions"):
        return "pockets rejected: " + ", ".join(lab(i) for i in d["rejected_positions"])
    if "longest_run" in d:
        col = {1: "red", 2: "black"}.get(d.get("colour"), "")
        return f"longest run {d['longest_run']} {col} (expected {_fmt(d.get('expected_longest'))}), from spin {_fmt(d.get('start_index'))}"
    if "direction_pockets" in d:
        return f"mean direction near pocket {lab(round(d['direction_pockets']))}, amplitude {_fmt(d.get('amplitude'))}"
    if "observed" in d and isinstance(d["observed"], list) and len(d["observed"]) <= 4:
        return "observed " + " / ".join(_fmt(x) for x in d["observed"]) + " vs expected " + " / ".join(_fmt(x) for x in d.get("expected", []))
    return ""


def render_html(report: dict, figures_by_table: list[list]) -> str:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: (resources.files("rngcert.report") / "templates" / name).read_text(encoding="utf-8")),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    tpl = env.get_template("report.html.j2")
    tables = []
    for t, figs in zip(report["tables"], figures_by_table):
        t = dict(t)
        t["figures"] = figs
        tables.append(t)
    r = dict(report)
    r["tables"] = tables
    r["rejected_sample"] = report.get("rejected_sample", [])
    return tpl.render(r=r, fmt=_fmt, fmtp=_fmtp, finding=_finding)


def write_report(report: dict, figures_by_table: list[list], rejected: list, out: Path) -> dict[str, Path]:
    """Write report.json, report.html and rejects.csv (always, possibly empty) into ``out``."""
    out = Path(out)
    try:
        return _write_report(report, figures_by_table, rejected, out)
    except OSError as exc:
        raise _write_error(Path(exc.filename) if getattr(exc, "filename", None) else out, exc) from None


def _write_report(report: dict, figures_by_table: list[list], rejected: list, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "html": out / "report.html", "rejects": out / "rejects.csv"}
    with open(paths["rejects"], "w", newline="", encoding="utf-8") as fh:
        w = csvsafe.writer(fh)  # cells a spreadsheet would run as formulas are neutralised
        w.writerow(["file", "line", "column", "reason", "text"])
        for r in rejected:
            w.writerow([r.file, r.line, r.column, r.reason, r.text])
    report = dict(report)
    report["rejects_file"] = str(paths["rejects"])
    for t, figs in zip(report["tables"], figures_by_table):
        t["figures"] = [f.to_dict() for f in figs]
    paths["json"].write_text(json.dumps(jsonable(report), indent=1, allow_nan=False), encoding="utf-8")
    paths["html"].write_text(render_html(report, figures_by_table), encoding="utf-8")
    return paths
