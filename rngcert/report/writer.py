"""Write certification reports: ``report.json``, a self-contained ``report.html``, ``rejects.csv``
and on request ``report.pdf`` in ``reports/<equipment>-<UTC timestamp>/`` (DESIGN §3 "Reports").

The HTML has three layers: page one (verdict, what was certified, the data, key findings, next
steps, the policy in two sentences), a summary table (one row per table, or per SP 800-22 test
name), then the detail per table with a contents list, and a closing part (how to read the
report, the grade legend, provenance). It opens offline, has no JavaScript, and prints on A4 with
a footer carrying the report id, the first input's SHA-256 and "page x of y".

report.json is sealed by :func:`rngcert.report.verify.seal`: its ``integrity`` field holds the
SHA-256 of its canonical content (the report id is the first 16 hex digits), the SHA-256 of every
file written with it, and optionally an Ed25519 signature.
"""

from __future__ import annotations

import datetime as _dt
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import jinja2

import rngcert.scratch as scratch
from rngcert.collect import csvsafe
from rngcert.report import text
from rngcert.report.bidi import BIDI_CONTROLS
from rngcert.report.certificate import N_LEVELS, runs_of
from rngcert.report.certificate import view as certificate_view
from rngcert.stats.result import jsonable

#: Figures drawn full width (the others share a row two by two).
_WIDE = {"frequencies", "sector_scan", "wheel_distance", "nist_histograms", "nist_proportions", "rising_sequences", "guessing", "sensitivity"}


def utc_stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def report_dir(base: str | Path, equipment_id: str) -> Path:
    """A new folder ``base/<equipment>-<UTC timestamp>`` (suffixed if it already exists).

    The folder is remembered (:func:`rngcert.scratch.keep`) until :func:`write_report` has written its
    report.json: a run stopped by SIGTERM before then removes it with its temporary folders, instead of
    leaving a folder with rejects.csv and report.html but no report.json."""
    base = Path(base)
    stem = f"{equipment_id}-{utc_stamp()}"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(base, exc) from None
    for i in range(1, 10_000):  # mkdir is atomic: two processes writing at once never share a folder
        d = base / (stem if i == 1 else f"{stem}-{i}")
        try:
            d.mkdir()
            scratch.keep(d)
            return d
        except FileExistsError:
            continue
        except OSError as exc:
            raise _write_error(d, exc) from None
    raise _write_error(base / stem, OSError("no free folder name"))


def _write_error(path: Path, exc: OSError):
    from rngcert.errors import StorageError

    return StorageError(f"{path}: the report cannot be written: {exc.strerror or exc}")


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (compiling the report template costs about 0.4 s
    here, a third of a small certification), in the cache of
    :func:`rngcert.battery.cachedir.cache_dir` (``RNGCERT_CACHE=off``: none). Jinja keys each entry
    by the template's source checksum, so an edited template is compiled again; entries are
    written to a temporary file and renamed, so concurrent runs never read half an entry."""
    from rngcert.battery.cachedir import cache_dir  # not battery.power: it imports the wheel battery

    d = cache_dir()
    if d is None:
        return None
    d = d / "jinja"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: compile every time
    # Jinja keys an entry by the template's source only, and the Environment's compile-time options (autoescape,
    # finalize) are compiled into it: _ENV_TAG changes with them, so an entry compiled without them is not reused
    return jinja2.FileSystemBytecodeCache(str(d), pattern=f"rngcert-{jinja2.__version__}-{_ENV_TAG}-%s.cache")


#: the compile-time options of :func:`_env` (bump when they change): "bidi" since bidirectional controls are shown
_ENV_TAG = "bidi"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: (resources.files("rngcert.report") / "templates" / name).read_text(encoding="utf-8")),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
        finalize=_visible_bidi,
    )
    env.filters["basename"] = lambda p: Path(str(p)).name if p and not str(p).startswith("generator:") else str(p)
    env.filters["short_method"] = lambda m: str(m or "").split(";", 1)[0].split(" (", 1)[0]
    env.filters["css_string"] = _css_string
    return env


#: Unicode's bidirectional controls (:mod:`rngcert.report.bidi`): the HTML shows each as its code point
_BIDI = BIDI_CONTROLS


def _visible_bidi(value: object):
    """Every ``{{ ... }}`` of the template: bidirectional controls shown as ``[U+202E]``, never obeyed."""
    import markupsafe

    if isinstance(value, str) and not value.isascii():
        out = value.translate(_BIDI)
        return markupsafe.Markup(out) if isinstance(value, markupsafe.Markup) else out
    return value


def _css_string(s: object):
    """``s`` as the inside of a double-quoted CSS string in the report's <style> (a page header may carry
    the user's --subject): backslashes, quotes and angle brackets escaped, line breaks made spaces."""
    import markupsafe

    t = str(s).replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3C ").replace(">", "\\3E ")
    return markupsafe.Markup(" ".join(t.split()))


def uut_line(uut: dict, word: str = "table", limit: int | None = 90) -> str:
    """The unit under test in one short line (every printed page's header, one line of 7.5 pt: the description cut at
    ``limit`` characters on a word boundary; ``limit=None`` for the whole description)."""
    if uut.get("demonstration"):
        return "demonstration data: a wheel simulated by rngcert, no equipment"
    tabs = list(uut.get("tables") or [])
    where = (f"{word} {tabs[0]}" if len(tabs) == 1 else f"{len(tabs)} {word}s") if tabs else ""
    desc = uut.get("description") or ""
    if word == "battery" and desc:  # SP 800-22: the section is the battery's streams, not a unit
        where = tabs[0] if len(tabs) == 1 else where
    return "; ".join(x for x in (text.clip(desc, limit), where) if x) or "not stated"


def shown_figures(report: dict, figures: Sequence) -> list:
    """The figures a table section shows. Multi-table reports leave out the chart of every
    p-value: the test table beside it has the same numbers, and 18 tables must print in about 27 pages."""
    if len(report.get("tables", [])) > 1:
        return [f for f in figures if f.id != "pvalues"]
    return list(figures)


def _collapse_na(tests: list[dict]) -> list[dict]:
    """Not-applicable tests, one line per reason."""
    by: dict[str, list[str]] = {}
    for x in tests:
        if not x.get("applicable", True):
            by.setdefault(x.get("reason", ""), []).append(x["name"])
    out = []
    for reason, names in by.items():
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        out.append({"reason": reason, "names": shown, "count": len(names)})
    return out


def _nist_view(t: dict) -> dict | None:
    """The finalAnalysisReport-style table of a bits report: one row per SP 800-22 test name."""
    tl = t.get("two_level")
    if not tl:
        return None
    rows, na_by = [], {}
    flagged = 0
    interval = ""
    for row in tl["rows"]:
        if not row.get("m"):
            na_by.setdefault(row.get("uniformity_reason") or "no applicable sequence", []).append(row["name"])
            continue
        lo, hi = row["interval"]
        interval = f"{lo:.3f} to {min(hi, 1.0):.3f}" if not interval else interval
        flags = []
        if row.get("proportion_ok") is False:
            flags.append("proportion outside")
        if row.get("uniformity_ok") is False:
            flags.append("uniformity < 0.0001")
        flagged += bool(flags)
        upv = row.get("uniformity_pvalue")
        rows.append(
            {
                "histogram": [int(h) for h in row["histogram"]],
                "upv": text.pvalue(upv) if upv is not None else "n/a",
                "passing": f"{row['passes']}/{row['m']}",
                "title": text.title(row["name"]),
                "flag": ", ".join(flags),
            }
        )
    unif_na = sorted({row.get("uniformity_reason") for row in tl["rows"] if row.get("m") and row.get("uniformity_pvalue") is None and row.get("uniformity_reason")})
    na = [{"reason": r, "count": len(v)} for r, v in na_by.items()]
    for r in unif_na:
        na.append({"reason": f"uniformity p: {r}", "count": sum(1 for row in tl["rows"] if row.get("uniformity_reason") == r and row.get("m"))})
    b = t["battery"]
    flag_line = (
        f"{flagged} of {len(rows)} names fall outside SP 800-22's rules here. "
        + (b.get("suspect_rule") or "")
    ).strip()
    return {"m": tl["m"], "alpha": tl.get("alpha", 0.01), "interval": interval or "–", "rows": rows, "na": na, "flag_line": flag_line}


def _table_view(report: dict, t: dict, figs: Sequence, index: int) -> dict:
    v = dict(t)
    b = t["battery"]
    v["anchor"] = f"t{index}"
    v["headline"] = text.headline(t)
    v["flagged"] = text.flagged(b)
    tests = b.get("tests", [])
    v["na"] = _collapse_na(tests)
    v["na_count"] = sum(n["count"] for n in v["na"])
    app = [x for x in tests if x.get("applicable")]
    if t.get("two_level"):  # bits: the summary table is the detail; here only what is flagged
        v["detail_tests"] = v["flagged"]
        v["rest_count"] = len(app) - len(v["flagged"])
        v["na"] = []  # collapsed in the summary
    else:
        v["detail_tests"] = app
        v["rest_count"] = 0
    shown = shown_figures(report, figs)
    v["shown_figures"] = [
        {
            "id": f.id, "title": f.title, "caption": f.caption,
            "mime": getattr(f, "mime", "image/png"), "data_base64": f.data_base64 if hasattr(f, "data_base64") else f.png_base64, "wide": f.id in _WIDE,
        }
        for f in shown
    ]
    return v


def _collect(tables: list[dict], key: str, multi: bool, word: str = "table") -> list[dict]:
    """Page one's lines: the tables that are not PASS first, a line several tables share said once with
    the count and the list of their names (:func:`rngcert.report.text.grouped`)."""
    return [{"table": text.tables_label(g["tables"], word) if multi else "", "anchor": g["anchor"], "text": g["text"],
             "count": len(g["tables"]), "head": f"{len(g['tables'])} {word}s", "names": ", ".join(map(str, g["tables"]))}
            for g in text.grouped(tables, key)]


def _integrity_findings(tables: list[dict], multi: bool) -> list[dict]:
    out = []
    for t in tables:
        integ = t.get("integrity") or {}
        for f in integ.get("findings") or []:
            out.append({"table": t["table"] if multi else "", "anchor": t["anchor"], "text": f"{f.get('name', '')}: {f.get('text', '')}"})
    return out


#: The note a certification of the bundled default log carries (cli/certify.py): demonstration data.
DEMO_NOTE = "no log given: certifying the bundled default log"


def unit_under_test(report: dict, description: str | None = None) -> dict:
    """What a certificate is about (issue 24): the description given with ``--subject`` (a wheel's serial
    number, a shoe's id), else one from the report, the ids of its tables and whether the data are
    rngcert's own demonstration log.

    Parameters
    ----------
    report : dict
        The report (``tables``, ``notes``, optionally an earlier ``unit_under_test``).
    description : str, optional
        Overrides the description.

    Returns
    -------
    dict
        ``description`` (str or None), ``tables`` (list of str) and ``demonstration`` (bool).
    """
    before = report.get("unit_under_test") or {}
    desc = (description or "").strip() or before.get("description") or None
    eq = report.get("equipment") or {}
    if desc is None and eq.get("kind") == "shuffle-procedure":  # a simulated procedure: the procedure is the unit
        desc = f"the simulated shuffle procedure (not a physical shoe or shuffler) {eq.get('name') or eq.get('id')}"
    src = eq.get("source") or {}
    if desc is None and eq.get("kind") == "rng":  # bits: the generator, or the unnamed device behind a dump
        desc = (f"bit generator {src['generator']} (seed entropy {src.get('seed_entropy')}), software" if src.get("generator")
                else f"the RNG that produced {Path(str(src['path'])).name} (not named: give it with --subject)" if src.get("path") else None)
    return {
        "description": desc,
        "tables": [str(t["table"]) for t in report.get("tables", [])],
        "demonstration": any(str(n).startswith(DEMO_NOTE) for n in report.get("notes", [])),
    }


def assumed_parameters(report: dict) -> list[str]:
    """Labels of the parameters a shoe report's verdict assumes (neither given by the rules nor measured)."""
    got = [str(p.get("label", p.get("name", ""))) for p in report.get("parameters") or [] if p.get("status") == "assumed"]
    return got or [str(x) for x in report.get("assumed_parameters") or []]


def overall_line(report: dict) -> str:
    """One line on the whole report: the verdict and how it comes about."""
    tables = report["tables"]
    word = report.get("section_word", "Table").lower()
    if len(tables) > 1:
        worst = [t["table"] for t in tables if t["battery"]["verdict"] == report["verdict"]]
        names = ", ".join(worst[:3]) + (f" and {len(worst) - 3} more" if len(worst) > 3 else "")
        line = f"{report['verdict']} is the worst of {len(tables)} {word}s ({names}): {text.verdict_counts(tables)}."
        if report["verdict"] != "PASS":  # the finding that made it so, of the first such table (issue 24)
            first = next(t for t in tables if t["battery"]["verdict"] == report["verdict"])
            why = text.deciding(first)
            line += f" {first['table']}: {why}" + ("" if why.endswith("…") else ".")
        return line
    return text.headline(tables[0]).rstrip(".") + "."


def seed_line(report: dict) -> str:
    s = report["seed"]
    unit = report.get("unit")
    if unit == "spins":
        return (
            f"entropy {s['entropy']} ({s['how']}); each Monte Carlo test draws from SeedSequence(entropy, spawn_key=(CRC-32 of the "
            f"table name, CRC-32 of the test name)); the same command with --seed {s['entropy']} gives the same report on the same "
            f"numpy and randomgen versions"
        )
    if unit == "shoes":
        return (
            f"entropy {s['entropy']} ({s['how']}); each Monte Carlo test draws from its own stream of SeedSequence(entropy), keyed by "
            f"the test's name; the same command with --seed {s['entropy']} gives the same report on the same numpy and randomgen versions"
        )
    return f"{s['how']}" + (f": entropy {s['entropy']}" if s.get("entropy") not in (None, "", "n/a") else "")


def _tested_line(report: dict) -> str:
    tables = report["tables"]
    unit = report.get("unit", "spins")
    n = sum(int(t.get("n", 0)) for t in tables)
    if len(tables) > 1:
        return f"{text.num(n)} {unit} in {len(tables)} {report.get('section_word', 'Table').lower()}s, each certified on its own"
    return f"{text.num(n)} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def _audit_view(audit: dict) -> dict:
    a = dict(audit)
    rows = []
    for e in audit.get("earlier_audits", []):
        e = dict(e)
        pv = [v for v in (e.get("pvalues") or {}).values() if v is not None]
        e["min_p"] = min(pv) if pv else None
        e["max_pocket"] = (e.get("bias") or {}).get("max_pocket")
        rows.append(e)
    a["earlier_audits"] = rows
    return a


def render_html(report: dict, figures_by_table: list[list], *, report_id: str = "", content_sha: str = "", certificate: bool = False, signer: str = "",
                cert_level: int = 0, cert_only: bool = False) -> str:
    """The HTML of a report (``certificate=True`` adds the one-page certificate of the PDF, shortened to
    :func:`rngcert.report.certificate.view`'s ``cert_level``; ``cert_only``: the certificate and nothing after it)."""
    tpl = _env().get_template("report.html.j2")
    multi = len(report["tables"]) > 1
    tables = [_table_view(report, t, figs, i + 1) for i, (t, figs) in enumerate(zip(report["tables"], figures_by_table))]
    r = dict(report)
    if "audit" in r:
        r["audit"] = _audit_view(r["audit"])
    first_sha = next((f["sha256"] for f in report.get("inputs", []) if f.get("sha256")), "")
    nist = _nist_view(report["tables"][0]) if len(report["tables"]) == 1 else None
    uut, overall, assumed = unit_under_test(report), overall_line(report), assumed_parameters(report)
    by_severity = text.by_severity(tables)
    cert = certificate_view(report, by_severity, uut, overall, assumed, cert_level) if certificate else None
    return tpl.render(
        r=r,
        tables=tables,
        nist=nist,
        report_id=report_id or "(not sealed)",
        content_sha=content_sha or "(not sealed)",
        first_sha=first_sha,
        certificate=certificate,
        cert=cert,
        cert_only=cert_only,
        signer=signer,
        overall=overall,
        tested_line=_tested_line(report),
        seed_line=seed_line(report),
        key_findings=_collect(tables, "key_findings", multi, report.get("section_word", "Table").lower()),
        next_steps=_collect(tables, "next_steps", multi, report.get("section_word", "Table").lower()),
        tables_by_severity=by_severity,
        uut=uut,
        uut_line=uut_line(unit_under_test(report), report.get("section_word", "Table").lower()),
        own_standard=bool((report.get("standard") or {}).get("summary")) and report["standard"].get("id") != "rngcert-default",
        uut_full=uut_line(unit_under_test(report), report.get("section_word", "Table").lower(), limit=None),
        assumed=assumed,
        deciding=text.deciding,
        runs_of=runs_of,
        headline_of=lambda t: t.get("headline", ""),
        integrity_findings=_integrity_findings(tables, multi),
        grades=text.GRADE_LEGEND,
        wheel_kind=(report.get("equipment") or {}).get("kind"),
        x_alpha=report["policy"]["alpha"],
        num=text.num,
        pv=text.pvalue,
        tp=text.test_p,
        pf=text.p_float,
        pct=text.pct,
        title=text.title,
        finding=text.finding,
    )


def write_report(report: dict, figures_by_table: list[list], rejected: list, out: Path, *, sign_key: Any = None, pdf: bool = False,
                 subject: str | None = None) -> dict[str, Path]:
    """Write rejects.csv (always, possibly empty), report.html, report.pdf (with ``pdf``) and the
    sealed report.json into ``out``.

    Parameters
    ----------
    report : dict
        The report (its ``integrity`` block is set here, in place, so the caller sees the hash).
    figures_by_table : list of list of Figure
        One list per table section.
    rejected : list of RejectedRow
        Written to rejects.csv, formula-like cells neutralised by the collector's rules.
    out : Path
        Folder (created if needed).
    sign_key : Ed25519 private key or path, optional
        Adds an Ed25519 signature (:func:`rngcert.report.verify.seal`).
    pdf : bool
        Also write report.pdf (WeasyPrint; :mod:`rngcert.report.pdf`).
    subject : str, optional
        The unit under test in words (``--subject``: a wheel's serial number or description), named on
        the certificate and kept in report.json (``unit_under_test``, :func:`unit_under_test`).

    Returns
    -------
    dict of str to Path
        ``json``, ``html``, ``rejects`` and, with ``pdf``, ``pdf``.
    """

    out = Path(out)
    before = set(out.iterdir()) if out.is_dir() else set()
    try:
        paths = _write_report(report, figures_by_table, rejected, out, sign_key=sign_key, pdf=pdf, subject=subject)
    except OSError as exc:
        _remove_partial(out, before)
        raise _write_error(Path(exc.filename) if getattr(exc, "filename", None) else out, exc) from None
    except BaseException:  # Ctrl-C (or a bug) while the files were written: no partial report stays either
        _remove_partial(out, before)
        raise
    scratch.forget(out)  # whole: a result now (report_dir's folder is no longer removed on SIGTERM)
    return paths


def _remove_partial(out: Path, before: set) -> None:
    """Remove the files a failed write added to ``out``, and ``out`` itself when that leaves it
    empty (the folder made for this report): no partial report stays behind (a full disk after
    rejects.csv left a folder that looked like a report)."""
    if not out.is_dir():
        return
    for p in out.iterdir():
        if p not in before and p.is_file():
            p.unlink(missing_ok=True)
    try:
        out.rmdir()  # only succeeds when empty
        scratch.forget(out)
    except OSError:
        pass


def _write_report(report: dict, figures_by_table: list[list], rejected: list, out: Path, *, sign_key: Any, pdf: bool,
                  subject: str | None = None) -> dict[str, Path]:
    from rngcert.report import verify

    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "html": out / "report.html", "rejects": out / "rejects.csv"}
    with open(paths["rejects"], "w", newline="", encoding="utf-8") as fh:
        csvsafe.write_rejected(fh, rejected)  # cells a spreadsheet would run as formulas are neutralised
    report.pop("integrity", None)
    report["rejects_file"] = str(paths["rejects"])
    report["unit_under_test"] = unit_under_test(report, subject)
    for t, figs in zip(report["tables"], figures_by_table):
        t["figures"] = [f.to_dict() for f in shown_figures(report, figs)]
    clean = jsonable(report)
    content = verify.content_sha256(clean)
    key = verify.load_private_key(sign_key) if sign_key is not None and not hasattr(sign_key, "sign") else sign_key
    signer = verify.fingerprint(key.public_key()) if key is not None else ""
    rid = content[:16]
    paths["html"].write_text(render_html(clean, figures_by_table, report_id=rid, content_sha=content, signer=signer), encoding="utf-8")
    if pdf:
        from rngcert.report import pdf as pdfmod

        paths["pdf"] = out / "report.pdf"

        def html(level: int, cert_only: bool) -> str:
            return render_html(clean, figures_by_table, report_id=rid, content_sha=content, certificate=True, signer=signer, cert_level=level,
                               cert_only=cert_only)

        pdfmod.write_fitted(html, N_LEVELS, paths["pdf"])
    clean["integrity"] = verify.seal(clean, {name: p for name, p in paths.items() if name != "json"}, key=key, content=content)
    report["integrity"] = clean["integrity"]
    paths["json"].write_text(verify.serialise(clean), encoding="utf-8")
    return paths




def summary_html(report: dict) -> str:
    """A small HTML block (verdict and one row per table) for notebooks."""
    import html

    colours = {"PASS": "#d5f5e3", "SUSPECT": "#fdebd0", "INCONCLUSIVE": "#e5e8e8", "FAIL": "#f5b7b1"}
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(str(t['table']))}</td><td style='text-align:right'>{t['n']:,}</td>"
        f"<td style='background:{colours[t['battery']['verdict']]}'>{t['battery']['verdict']}</td><td>{e(text.headline(t))}</td></tr>"
        for t in text.by_severity(report["tables"])
    )
    return (
        f"<div class='rngcert-report'><p><b>{e(report.get('title', 'Certification report'))}: {e(report['subject'])}</b></p>"
        f"<p style='background:{colours[report['verdict']]};padding:4px 8px'><b>Verdict: {report['verdict']}</b> — {e(overall_line(report))}</p>"
        f"<table><tr><th>{e(report.get('section_word', 'Table').lower())}</th><th>{e(report.get('unit', 'spins'))}</th><th>verdict</th><th>main finding</th></tr>{rows}</table></div>"
    )
