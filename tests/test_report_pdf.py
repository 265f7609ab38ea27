"""report.pdf: a one-page certificate, then the report, printed by WeasyPrint; skipped with the
reason where WeasyPrint or Pango's system libraries are missing (`.ci/run` installs both)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rngcert.cli import main
from rngcert.report.pdf import available

OK, WHY = available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no PDF here: {WHY}")


def _pages(pdf):
    pypdf = pytest.importorskip("pypdf", reason="pypdf (the test extra) reads the PDF's pages")
    return pypdf.PdfReader(str(pdf))


def test_pdf_opens_with_a_certificate_and_is_sealed(tmp_path):
    runner = CliRunner()
    log = tmp_path / "spins.csv"
    assert runner.invoke(main, ["simulate", "wheel", "--spins", "3000", "--seed", "2", "--out", str(log)]).exit_code == 0
    res = runner.invoke(main, ["certify", str(log), "--seed", "1", "--resamples", "199", "--pdf", "--out", str(tmp_path / "rep")], catch_exceptions=False)
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
    res = runner.invoke(main, ["verify", str(rep), str(log)])
    assert res.exit_code == 12 and "FAILED      report.pdf" in res.output
