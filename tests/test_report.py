"""The report a regulator reads: one schema for every pipeline, three layers in the HTML, words and
numbers (plain decimals, "< 1e-300", grades explained, no internal file names), the terminal
summary in the report's order, the audit trend as a template section, vector figures."""

from __future__ import annotations

import base64
import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _support import split_tables

from rngcert.cli._common import summary_text
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.report import plots, schema, text
from rngcert.report.writer import render_html, write_report
from rngcert.simulate.sources import generator, seed_sequence
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
#: internal references that must never reach official output (issue 13, item 6)
LEAKS = (re.compile(r"\d{3}_[0-9a-f]{16}\.txt"), re.compile(r"shared/(reference|seeds|data)/"), re.compile(r"paytable="))


def _log(tmp_path, n=2000, seed=1, tables=1):
    """A simulated fair log; with ``tables`` > 1 a CSV with a table column."""
    sim = simulate_spins(EU, n * tables, generator("pcg64", seed_sequence(seed)))
    p = tmp_path / f"sim-{seed}.csv"
    write_spin_log(p, EU, sim)
    if tables > 1:  # the simulator names one table: split the spins into T1, T2, ...
        split_tables(p, n)
    return p


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    d = tmp_path_factory.mktemp("multi")
    # +300% declared: three thin tables that the layout tests need as PASS (the default +50% makes them INCONCLUSIVE)
    return certify_log([_log(d, 1500, seed=4, tables=3)], EU, seed=2, n_resamples=199, required_bias=3.0)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    d = tmp_path_factory.mktemp("single")
    return certify_log([_log(d, 3000, seed=5)], EU, seed=3, n_resamples=199)


def _bits_report():
    from rngcert.pipeline.certify_bits import certify_streams
    from rngcert.simulate import sources

    arr = sources.generate_bits("pcg64", 20_000, seed=np.random.SeedSequence(1), streams=3)
    return certify_streams(arr, source={"generator": "pcg64", "seed_entropy": "1"}, seed_entropy=1, processes=1, figures=False).report


def _shuffle_report():
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle import certify_procedure

    proc = load_procedure("baccarat-004")
    return certify_procedure(proc, tables=40, seed=1, n_resamples=99, figures=False, first_shoe=False).report


def test_one_header_schema_for_every_pipeline(single, multi):
    reports = {"wheel": single.report, "multi": multi.report, "bits": _bits_report(), "shuffle": _shuffle_report()}
    for name, r in reports.items():
        assert schema.check_report(r) == [], name
        assert r["report_format"] == schema.REPORT_FORMAT and r["kind"] == "certification" and r["title"] == "Certification report"
        assert set(r["software"]) >= {"rngcert", "python", "scipy", "numpy", "randomgen"}
        assert r["policy"]["summary"].count(". ") + r["policy"]["summary"].endswith(".") == 2  # two sentences
        assert r["certified"]["rules"] and r["certified"]["declared"]["certification level alpha"] == 0.01
    # a shuffle procedure's TOML, given without a hash, is hashed by the header builder
    assert len(reports["shuffle"]["inputs"][0]["sha256"]) == 64
    with pytest.raises(ValueError, match="not in rngcert.report.schema.FIELDS"):
        schema.header(subject="x", command="", inputs=[], equipment={}, equipment_line="", unit="spins", section_word="Table", level="position",
                      policy={}, seed={}, made_up_field=1)


def test_no_internal_references_in_official_output(single, tmp_path):
    bits = _bits_report()
    shuffle = _shuffle_report()
    for r in (single.report, bits, shuffle):
        html = render_html(r, [[] for _ in r["tables"]])
        body = json.dumps(r)
        for pat in LEAKS:
            assert not pat.search(html), (pat.pattern, pat.search(html))
            assert not pat.search(body), (pat.pattern, pat.search(body))
        # the spawn-key sentence names tables only on reports that have tables
        assert ("CRC-32 of the table name" in html) == (r["unit"] == "spins")
    # roulette reports cite the roulette rules, not the money-wheel rules
    rules = " ".join(single.report["certified"]["rules"]) + single.report["policy"]["requirement"]
    assert "Great Britain" in rules and "Money Wheel" not in rules
    mw = load_wheel("money-wheel-52")
    from rngcert.report import cite

    assert "rule 2.4" in cite.wheel_requirement(mw.kind, mw.id)


def test_numbers_in_plain_decimals_and_the_pvalue_floor():
    assert text.num(21380.0) == "21,380" and text.num(2.138e4 + 0.4) == "21,380"
    assert text.num(13.83783) == "13.84" and text.num(0.0031) == "0.0031" and text.num(None) == "–"
    assert text.pvalue(0.7799123) == "0.7799" and text.pvalue(3.1e-5) == "3.1e-05" and text.pvalue(1e-310) == "< 1e-300"
    # the serialised form of an underflowed p-value: null with its bound
    t = {"name": "pocket_chisquare", "applicable": True, "pvalue": None, "pvalue_bound": "< 1e-300", "pvalue_holm": None}
    assert text.test_p(t) == "< 1e-300" and text.test_p(t, "pvalue_holm") == "< 1e-300" and text.p_float(t) == 0.0


def test_underflowed_pvalue_renders_as_bound(single):
    r = copy.deepcopy(single.report)
    x = r["tables"][0]["battery"]["tests"][0]
    x.update(pvalue=None, pvalue_bound="< 1e-300", pvalue_holm=None, rejected_familywise=True)
    html = render_html(r, [[]])
    assert "&lt; 1e-300" in html and "2.2e-308" not in html and "2.225" not in html
    assert "< 1e-300" in summary_text(r)


def test_findings_have_no_scientific_notation(multi):
    html = render_html(multi.report, [[] for _ in multi.report["tables"]])
    cells = re.findall(r'<td class="small fnd">(.*?)</td>', html)
    assert cells and not [c for c in cells if re.search(r"\d[eE][+-]?\d", c)]
    assert "pocket " in html  # a roulette finding speaks of pockets


def test_money_wheel_findings_speak_of_symbols():
    t = {"name": "max_count", "applicable": True, "details": {"position": 2, "count": 30, "expected": 21.5, "relative_excess": 0.4}}
    assert text.finding(t, ["1", "2", "CoinFlip"], "money-wheel").startswith("symbol CoinFlip")
    assert text.finding(t, [str(i) for i in range(37)], "roulette").startswith("pocket 2")


def test_three_layers_page_one_summary_detail_and_legend(multi):
    r = multi.report
    html = render_html(r, multi.figures)
    i_verdict, i_cert, i_data = html.index('id="verdict"'), html.index("What was certified"), html.index("The data")
    i_policy, i_summary = html.index("Verdict policy"), html.index('id="summary"')
    i_detail, i_reading = html.index('id="t1"'), html.index('id="reading"')
    assert i_verdict < i_cert < i_data < i_policy < i_summary < i_detail < i_reading
    # the summary has one row per table, each linking to its anchored section
    for k in range(1, 4):
        assert html.count(f'href="#t{k}"') >= 1 and f'id="t{k}"' in html
    for g, _ in text.GRADE_LEGEND:
        assert f"<td>{g}</td>" in html
    # print: A4, a footer with report id, input SHA-256 and page x of y, repeated headers
    assert "size: A4" in html and 'counter(page) " of " counter(pages)' in html and "thead { display: table-header-group; }" in html
    assert "<script" not in html and "http://" not in html and "https://" not in html


def test_key_findings_next_steps_integrity_render_when_present_and_not_otherwise(single):
    bare = copy.deepcopy(single.report)
    for t in bare["tables"]:  # a report without the verdict's sentences renders none of their sections
        for k in ("key_findings", "next_steps", "integrity"):
            t.pop(k, None)
    html = render_html(bare, [[]])
    assert "Key findings" not in html and "Next steps" not in html and "Data integrity" not in html
    r = copy.deepcopy(single.report)
    t = r["tables"][0]
    t["key_findings"] = ["Pocket 17 came up 40% more often than expected: check the pocket's depth."]
    t["next_steps"] = ["Re-test with 20,000 more spins."]
    t["integrity"] = {"findings": [{"name": "repeats", "text": "12 repeats at line boundaries", "evidence": {}}], "summary": "one integrity finding"}
    t["battery"]["tests"][0]["plain"] = "a plain sentence on the chi-square"
    html = render_html(r, [[]])
    assert html.index("Key findings") < html.index('id="summary"')
    assert "Pocket 17 came up 40% more often" in html and "Re-test with 20,000 more spins." in html
    assert "12 repeats at line boundaries" in html and "a plain sentence on the chi-square" in html
    out = summary_text(r)
    assert out.index("key findings:") < out.index("VERDICT:") and "Re-test with 20,000" in out


def test_not_applicable_collapsed_one_line_per_reason(single):
    r = copy.deepcopy(single.report)
    tests = r["tables"][0]["battery"]["tests"]
    for x in tests[-3:]:
        x.clear()
        x.update(name=f"na_{len(x)}", requirement="independence", applicable=False, n=0, reason="the log has no dealer column")
    html = render_html(r, [[]])
    assert html.count("the log has no dealer column") == 1


def test_bits_summary_is_one_line_per_test_name():
    r = _bits_report()
    html = render_html(r, [[]])
    names = [row["name"] for row in r["tables"][0]["two_level"]["rows"] if row.get("m")]
    body = html[html.index('<table class="nist">') : html.index("</table>", html.index('<table class="nist">'))]
    assert body.count("<tr>") == len(names) + 1  # header + one row per name
    # the 188 "uniformity needs 55 sequences" reasons are one line, not one row each
    assert html.count("needs at least 55") <= 2


def test_terminal_summary_order_and_one_line_per_table(multi, single):
    out = summary_text(multi.report).splitlines()
    assert out[0].endswith(multi.report["verdict"]) and out[-1].startswith("VERDICT: ")
    i = next(k for k, ln in enumerate(out) if ln.startswith("tables (3):"))
    # identical PASS lines are one line with the count and the list of tables (issue 24)
    assert out[i + 1].lstrip().startswith("3 tables PASS") and out[i + 2].split() == ["T1,", "T2,", "T3"]
    # one line a table, not a block (19 before the period line; +1 the standard's line, issue 23; long notes wrap, not cut)
    assert len(out) <= 22
    assert sum(ln.lstrip().startswith("period:") for ln in out) == (1 if multi.report.get("period") else 0)
    one = summary_text(single.report).splitlines()
    assert one[-1].startswith("VERDICT: ") and any(ln.startswith("certified:") for ln in one) and any(ln.startswith("data:") for ln in one)


def test_default_log_note_printed_once(tmp_path, cli):
    res = cli("certify", "--seed", "1", "--resamples", "199", "--no-plots", "--out", tmp_path)
    assert res.output.count("no log given") == 1, res.output


def test_figures_are_svg_with_zero_based_axes_and_band_behind_bars():
    counts = np.r_[np.full(36, 100), 140]
    fig = plots.frequency_figure(counts, np.full(37, 1 / 37), [str(i) for i in range(37)], title="t", xlabel="pocket")
    root = ET.fromstring(base64.b64decode(fig.data_base64))
    assert root.tag.endswith("svg") and fig.mime == "image/svg+xml"
    ns = "{http://www.w3.org/2000/svg}"
    kids = list(root)
    band = next(i for i, e in enumerate(kids) if e.tag == ns + "polygon")
    bars = next(i for i, e in enumerate(kids) if e.get("id") == "bars")
    assert band < bars  # the band is drawn first, behind the bars
    frame = [e for e in kids if e.tag == ns + "rect" and e.get("fill") == "none"][0]
    bottom = float(frame.get("y")) + float(frame.get("height"))
    for r in kids[bars]:  # every bar stands on the frame's bottom edge: the axis starts at zero
        assert float(r.get("y")) + float(r.get("height")) == pytest.approx(bottom, abs=0.02)
    assert [r.get("fill") for r in kids[bars]].count("#c0392b") == 1  # the 140 is outside the band
    # short pocket labels are level; a symbol wheel's long labels are turned so they cannot overlap
    assert not any("rotate" in (t.get("transform") or "") and t.text == "36" for t in root.iter(ns + "text"))
    from rngcert.report.svg import text_width

    names = ["1", "2", "5", "10", "CoinFlip", "CashHunt", "Pachinko", "CrazyBonus"]
    for labels, turned in ((names, True), (names[4:], False)):  # eight do not fit level, four do
        sym = plots.frequency_figure(np.arange(len(labels)) + 5, np.full(len(labels), 1 / len(labels)), labels, title="t", xlabel="symbol")
        texts = {t.text: t for t in ET.fromstring(base64.b64decode(sym.data_base64)).iter(ns + "text")}
        assert texts["CrazyBonus"].get("transform", "").startswith("rotate(-90") is turned
        if not turned:
            size = float(texts["CrazyBonus"].get("font-size"))
            spans = [(float(texts[lab].get("x")), float(texts[lab].get("x")) + text_width(lab, size)) for lab in labels]
            assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # level labels side by side, none overlapping


def test_rising_legend_matches_the_equivalent_riffles():
    import base64
    import xml.etree.ElementTree as ET

    from rngcert.stats.shuffle import rising_sequence_law

    n = 52
    null = 1000 * rising_sequence_law(n)
    rs = {"r": np.arange(1, n + 1), "observed": np.round(null).astype(int), "null": null, "gsr": {k: 1000 * rising_sequence_law(n, k) for k in range(1, 5)}}
    fig = plots.rising_histogram(rs, {"riffles": 6.2})
    labels = [t.text for t in ET.fromstring(base64.b64decode(fig.data_base64)).iter("{http://www.w3.org/2000/svg}text")]
    assert "6 GSR riffle(s)" in labels and "7 GSR riffle(s)" in labels and "1 GSR riffle(s)" not in labels
    assert "6.2 GSR riffles" in fig.caption


def test_audit_report_title_counts_trend_section(tmp_path):
    from rngcert.collect.store import Store
    from rngcert.pipeline.audit import audit_table

    log = _log(tmp_path, 1500, seed=8, tables=2)
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([log], "european")
        a = audit_table(st, "T1", seed=1, n_resamples=199, outdir=tmp_path / "rep")
        b = audit_table(st, "T1", seed=1, n_resamples=199, outdir=tmp_path / "rep")
        recs = st.audits("T1")
    r = b.report
    assert r["kind"] == "audit" and r["title"] == "Audit report" and "table T1" in r["subject"]
    assert schema.check_report(r) == []
    assert r["rows"]["accepted"] == r["tables"][0]["n"] == 1500  # the window, not the whole file (3,000 rows)
    assert "this audit reads 1500 spins" in r["inputs"][0]["summary"]
    assert len(r["notes"]) == len(set(r["notes"]))
    html = Path(b.paths["html"]).read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert html.index('id="audit"') < html.index('id="reading"')
    assert "Earlier audits of this table" in html and '{"table"' not in html
    from markupsafe import escape  # as jinja2 escapes

    assert html.count(escape(r["notes"][0].split(":")[0])) == 1  # the store note, once
    assert r["title"] in html and "Certification report" not in html
    # the audit record keeps the report's hash
    assert recs[-1]["report_sha256"] == b.report["integrity"]["report_sha256"]
    assert recs[0]["report_sha256"] == a.report["integrity"]["report_sha256"]


def test_write_report_figures_listed_are_the_figures_shown(multi, tmp_path):
    paths = write_report(copy.deepcopy(multi.report), multi.figures, [], tmp_path / "m")
    j = json.loads(paths["json"].read_text())
    shown = [f["id"] for f in j["tables"][0]["figures"]]
    assert "pvalues" not in shown and "frequencies" in shown  # multi-table reports leave out the p-value chart
    html = paths["html"].read_text()
    assert html.count("data:image/svg+xml;base64,") == sum(len(t["figures"]) for t in j["tables"])


def test_pdf_unavailable_fails_before_the_run(tmp_path, monkeypatch, cli):
    import rngcert.report.pdf as pdfmod

    monkeypatch.setattr(pdfmod, "available", lambda: (False, "WeasyPrint is not installed (test); " + pdfmod.INSTALL))
    res = cli("certify", "--pdf", "--out", tmp_path)
    assert res.exit_code == 3 and "--pdf: WeasyPrint is not installed" in res.output and "rngcert[pdf]" in res.output
    assert not list(tmp_path.glob("*"))  # nothing was certified or written


def test_progress_bar_has_total_and_rate_and_is_silent_when_piped(monkeypatch, capsys):
    import io
    import sys

    from rngcert.cli import _common

    monkeypatch.setenv("CI", "true")
    assert not _common.interactive() and not _common.progress_bar(total=3).enabled
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    with _common.Progress(total=1000, unit="spin", desc="certifying", enabled=True, mininterval=0) as bar:
        cb = bar.callback()
        cb(400, 1000, "table T1")
        cb(1000, 1000, "table T1: PASS")
    out = buf.getvalue()
    assert "1000/1000" in out and "spin/s" in out and "certifying" in out
    # silent: nothing at all on a pipe
    buf2 = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf2)
    with _common.progress_bar(total=5, unit="stream") as bar:
        bar.update(5)
    assert buf2.getvalue() == ""


def test_verify_and_keygen_have_help_with_examples(cli):
    for cmd in (["verify", "--help"], ["keygen", "--help"], ["bits", "--help"], ["certify", "--help"]):
        res = cli(*cmd)
        assert res.exit_code == 0 and "Example" in res.output, cmd
    assert "--pdf" in cli("certify", "--help").output
    assert "--sign" in cli("bits", "--help").output
    top = cli("--help").output
    assert "verify" in top and "keygen" in top


def test_compiled_template_is_cached_between_runs_and_renders_the_same(single, tmp_path, monkeypatch):
    """The report template is compiled once and kept in the cache (0.4 s of a small run here);
    a run with the cache, without it and a fresh compile give the same HTML."""
    rep, figs = single.report, single.figures
    monkeypatch.setenv("RNGCERT_CACHE", str(tmp_path / "c"))
    first = render_html(rep, figs)
    cached = list((tmp_path / "c" / "jinja").glob("rngcert-*.cache"))
    assert len(cached) == 1 and cached[0].stat().st_size > 1000
    assert render_html(rep, figs) == first
    monkeypatch.setenv("RNGCERT_CACHE", "off")
    assert render_html(rep, figs) == first
    cached[0].write_bytes(b"not a jinja cache")  # a damaged entry is compiled again, not an error
    monkeypatch.setenv("RNGCERT_CACHE", str(tmp_path / "c"))
    assert render_html(rep, figs) == first


def test_a_report_that_cannot_be_written_leaves_no_partial_folder(single, tmp_path, monkeypatch):
    """A full disk after rejects.csv (here: while the HTML is written) is a storage error naming
    the file, and the report folder made for it is removed: nothing that looks like a report stays
    (an operator found a folder holding only rejects.csv). Files that were there before stay."""
    import errno

    from rngcert.errors import StorageError
    from rngcert.report import writer
    from rngcert.report.writer import report_dir

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x" / "report.html"))

    monkeypatch.setattr(writer, "render_html", full)
    out = report_dir(tmp_path / "reports", "european")
    with pytest.raises(StorageError, match="cannot be written: No space left"):
        write_report(copy.deepcopy(single.report), single.figures, single.log.rejected, out)
    assert not out.exists() and list((tmp_path / "reports").iterdir()) == []
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("a user's file")
    with pytest.raises(StorageError):
        write_report(copy.deepcopy(single.report), single.figures, single.log.rejected, keep)
    assert [p.name for p in keep.iterdir()] == ["notes.txt"]
