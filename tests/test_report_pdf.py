"""report.pdf: a one-page certificate, then the report, printed by WeasyPrint; skipped with the
reason where WeasyPrint or Pango's system libraries are missing (`.ci/run` installs both)."""

from __future__ import annotations

import csv
import json
import re

import pytest
from _support import split_tables

from rngcert.report.pdf import available

OK, WHY = available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no PDF here: {WHY}")


def _pages(pdf):
    pypdf = pytest.importorskip("pypdf", reason="pypdf (the test extra) reads the PDF's pages")
    return pypdf.PdfReader(str(pdf))


def test_pdf_opens_with_a_certificate_and_is_sealed(tmp_path, cli):
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "3000", "--seed", "2", "--out", log).exit_code == 0
    res = cli("certify", log, "--seed", "1", "--resamples", "199", "--pdf", "--out", tmp_path / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    pdf = rep / "report.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-" and "report.pdf" in res.output
    reader = _pages(pdf)
    first = reader.pages[0].extract_text()
    j = json.loads((rep / "report.json").read_text())
    assert "Certificate" in first and j["verdict"] in first and "Tested by" in first and j["integrity"]["report_sha256"] in first.replace("\n", "")
    assert 2 <= len(reader.pages) <= 7
    # every later page carries the footer: report id and page x of y
    last = reader.pages[-1].extract_text()
    assert j["integrity"]["report_id"] in last and f"page {len(reader.pages)} of {len(reader.pages)}" in last
    assert j["integrity"]["files"]["report.pdf"]
    # the PDF is one of the sealed files
    b = bytearray(pdf.read_bytes())
    b[len(b) // 2] ^= 0x01
    pdf.write_bytes(bytes(b))
    res = cli("verify", rep, log)
    assert res.exit_code == 12 and "FAILED      report.pdf" in res.output


def _text(pdf, page=0):
    return " ".join(_pages(pdf).pages[page].extract_text().split())


def test_demo_certificate_says_demonstration_data(tmp_path, cli):
    """The bundled default log is rngcert's own simulated wheel: its certificate says so, above the signature lines."""
    res = cli("certify", "--seed", "1", "--resamples", "199", "--no-plots", "--pdf", "--out", tmp_path)
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = tmp_path.glob("european-*")
    first = _text(rep / "report.pdf")
    assert "DEMONSTRATION DATA" in first and "certifies no equipment" in first
    assert first.index("DEMONSTRATION DATA") < first.index("Tested by")
    assert "Unit under test: none (demonstration data" in first
    report_page = _text(rep / "report.pdf", 1)  # the report's own first page carries the banner too, under the verdict
    assert "DEMONSTRATION DATA" in report_page and report_page.index("Verdict:") < report_page.index("DEMONSTRATION DATA")
    for page in _pages(rep / "report.pdf").pages:  # and so does every page's header
        assert "unit under test: demonstration data" in " ".join(page.extract_text().split())
    assert json.loads((rep / "report.json").read_text())["unit_under_test"]["demonstration"] is True


def test_certificate_names_the_unit_and_schedules_every_table(tmp_path, cli):
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "2400", "--seed", "3", "--out", log).exit_code == 0
    split_tables(log, 800, prefix="W")
    subject = 'Cammegh "Mercury" wheel <serial 4711>'
    res = cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--pdf", "--subject", subject, "--out", tmp_path / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    first = _text(rep / "report.pdf")
    assert f"Unit under test: {subject}; tables W1, W2, W3" in first
    assert "DEMONSTRATION DATA" not in first + _text(rep / "report.pdf", 1)  # a user's log: no demonstration banner
    reader = _pages(rep / "report.pdf")
    for page in reader.pages:  # every printed page names the unit under test in its header
        assert f"unit under test: {subject}; 3 tables" in " ".join(page.extract_text().split())
    for t in ("W1", "W2", "W3"):  # the schedule: every table with its verdict
        assert re.search(rf"{t} 800 (PASS|SUSPECT|FAIL|INCONCLUSIVE)", first), first
    assert json.loads((rep / "report.json").read_text())["unit_under_test"]["description"] == subject


def test_audit_pdf_and_sign(tmp_path, cli):
    """audit --pdf --sign: the certificate and the signature of certify, through the same code."""
    log, db = tmp_path / "spins.csv", tmp_path / "store.duckdb"
    assert cli("simulate", "wheel", "--spins", "2000", "--seed", "4", "--out", log).exit_code == 0
    assert cli("ingest", log, "--db", db).exit_code == 0
    key = tmp_path / "lab.pem"
    assert cli("keygen", key).exit_code == 0
    rows = list(csv.reader(log.read_text().splitlines()))
    tname = rows[1][rows[0].index("table")]
    res = cli("audit", "--db", db, "--table", tname, "--seed", "1", "--resamples", "199", "--no-plots", "--pdf", "--sign", key, "--subject",
              "wheel serial 99", "--out", tmp_path / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    assert "certificate" in res.output and "signed" in res.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    first = _text(rep / "report.pdf")
    assert "Certificate of audit" in first and "Unit under test: wheel serial 99" in first and "digital signature" in first
    j = json.loads((rep / "report.json").read_text())
    assert j["integrity"]["signature"] and j["integrity"]["files"]["report.pdf"]
    ok = cli("verify", rep, "--key", key.with_suffix(".pub"))
    assert ok.exit_code == 0, ok.output


def test_certificate_fits_page_one_with_many_inputs_tables_and_long_texts(tmp_path, cli):
    """The worst case found (12 input files, each its own table, a long --subject, --sign, a named standard): the
    certificate ran onto page 2 and pushed its signature lines there. Page 1 now ends with the signature block,
    page 2 begins the report, and what the certificate leaves out is counted there and in the report."""
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "3600", "--seed", "3", "--out", log).exit_code == 0
    rows = list(csv.reader(log.read_text().splitlines()))
    j = rows[0].index("table")
    files = []
    for k in range(12):
        f = tmp_path / f"surveillance-export-main-floor-wheel-capture-{k + 1:02d}.csv"
        with open(f, "w", newline="") as fh:
            csv.writer(fh).writerows([rows[0]] + [r[:j] + [f"Table-{k + 1:02d}"] + r[j + 1:] for r in rows[1 + 300 * k:1 + 300 * (k + 1)]])
        files.append(f)
    key = tmp_path / "lab.pem"
    assert cli("keygen", key).exit_code == 0
    subject = "Cammegh Mercury 360 wheel, serial MX-4711, main floor table 7, rotor replaced 2026-10-12; " * 6
    res = cli("certify", *files, "--seed", "1", "--resamples", "199", "--no-plots", "--pdf", "--sign", key, "--subject", subject,
              "--standard", "new-mexico-15.1.7.13", "--out", tmp_path / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    j = json.loads((rep / "report.json").read_text())
    first, second = _text(rep / "report.pdf"), _text(rep / "report.pdf", 1)
    # page 1: the verdict, its count per verdict, the standard, the signature and the signature lines, all of them
    assert f"Verdict: {j['verdict']}" in first and "worst of 12 tables" in first
    assert "New Mexico 15.1.7.13" in first and "digital signature" in first
    assert first.index("Tested by") < first.index("Laboratory stamp") and first.rstrip().endswith("page 1 of " + str(len(_pages(rep / "report.pdf").pages)))
    # page 2: the report's first line, not the rest of the certificate
    assert second.index("Certification report · report") < 200 and "Laboratory stamp" not in second and "Tested by" not in second
    # left out, never silently: counted, with the report's section and its page
    assert re.search(r"\d+ more input file\(s\) of 12, each with its SHA-256: in \"The data\", page \d+", first), first
    shown = [f.name for f in files if f.name in first]
    assert 0 < len(shown) < 12
    assert "(in full: \"What was certified\", page" in first and subject.strip() not in first
    whole = "".join(_text(rep / "report.pdf", i) for i in range(1, 5)).replace(" ", "")  # a long file name wraps
    assert all(f.name in whole for f in files) and subject.replace(" ", "") in whole
