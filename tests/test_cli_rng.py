"""Electronic RNG commands end to end: bits (SP 800-22 report), scaling, mapped wheel simulation."""

from __future__ import annotations

import json

import pytest
from _support import shared_file

from rngcert.cli import EXIT, EXIT_INPUT


def test_help(cli):
    for cmd in (["bits"], ["scaling"]):
        res = cli(*cmd, "--help")
        assert res.exit_code == 0 and "Examples" in res.output


def test_scaling_byte_mod_37(cli):
    res = cli("scaling", "--bits", 8, "--outcomes", 37, "--method", "modulo", "--json")
    d = json.loads(res.output)
    counts = [int(c) for c in d["counts"]]
    assert counts[:34] == [7] * 34 and counts[34:] == [6, 6, 6]
    assert d["denominator"] == "256" and d["disfavoured"] == [34, 35, 36]
    text = cli("scaling", "--bits", 32, "--outcomes", 37, "--method", "rejection").output
    assert "rejection probability" in text and "largest bias |p - 1/k| = 0" in text


def test_modulo_byte_mapping_fails_the_wheel_battery(cli, tmp_path):
    # issue 6, done means 2: a byte reduced modulo 37 fails the wheel battery at 100,000 spins
    log = tmp_path / "mod37.csv"
    res = cli("simulate", "wheel", "--spins", 100000, "--seed", 1, "--mapping", "modulo", "--word-bits", 8, "--out", log)
    assert res.exit_code == 0
    rep = cli("certify", log, "--seed", 1, "--no-plots", "--json", "--out", tmp_path / "r")
    d = json.loads(rep.output)
    assert rep.exit_code == EXIT["FAIL"] and d["verdict"] == "FAIL"
    # the same source through rejection sampling is exactly uniform: no family-wise rejection
    fair = tmp_path / "rej.csv"
    cli("simulate", "wheel", "--spins", 100000, "--seed", 1, "--mapping", "rejection", "--word-bits", 8, "--out", fair)
    d2 = json.loads(cli("certify", fair, "--seed", 1, "--no-plots", "--json", "--out", tmp_path / "r").output)
    assert d2["tables"][0]["battery"]["rejected_familywise"] == []


def test_bits_from_generator_two_level_report(cli, tmp_path):
    res = cli("bits", "--source", "pcg64", "--streams", 8, "--length", 100000, "--seed", 3, "--json", "--processes", 1, "--out", tmp_path)
    d = json.loads(res.output)
    assert res.exit_code == EXIT[d["verdict"]]
    t = d["tables"][0]
    assert t["n"] == 8 and t["two_level"]["m"] == 8
    names = {x["name"] for x in t["battery"]["tests"]}
    assert "nist_frequency:proportion" in names and "nist_linear_complexity:uniformity" in names
    html = next(tmp_path.glob("bits-*/report.html")).read_text()
    assert "P-value histograms per test" in html and "data:image/svg+xml;base64," in html


def test_bits_biased_source_fails(cli, tmp_path, monkeypatch):
    # a dump of biased bits, P(1) = 0.51, written as ASCII
    import numpy as np

    from rngcert.simulate.sources import biased_bits

    b = biased_bits(20 * 100000, 0.51, rng=np.random.default_rng(1))
    f = tmp_path / "biased.txt"
    f.write_text("".join(map(str, b.tolist())))
    res = cli("bits", f, "--format", "ascii", "--length", 100000, "--no-plots", "--processes", 1, "--out", tmp_path / "r")
    assert res.exit_code == EXIT["FAIL"], res.output
    assert "nist_frequency" in res.output


def test_bits_file_errors(cli, tmp_path):
    f = tmp_path / "short.txt"
    f.write_text("0101")
    assert cli("bits", f).exit_code == 2  # --format required
    res = cli("bits", f, "--format", "ascii", "--length", 1000)
    assert res.exit_code == EXIT_INPUT and "fewer than one stream" in res.output
    res = cli("bits", f, "--format", "ascii", "--streams", 2, "--length", 3)
    assert res.exit_code == EXIT_INPUT and "never rewound" in res.output
    g = tmp_path / "text.txt"
    g.write_text("hello world")
    assert cli("bits", g, "--format", "ascii").exit_code == EXIT_INPUT
    e = tmp_path / "empty.txt"
    e.write_text("")
    assert cli("bits", e, "--format", "ascii").exit_code == EXIT_INPUT
    assert cli("bits", "--source", "nope", "--streams", 2, "--length", 100).exit_code == 2  # an unknown generator name: a usage error
    assert cli("bits").exit_code == 2


def test_bits_data_e_single_stream(cli, tmp_path):
    f = shared_file("data", "nist-sts", "data.e")
    d = json.loads(cli("bits", f, "--format", "ascii", "--streams", 1, "--json", "--no-plots", "--out", tmp_path).output)
    tests = {x["name"]: x for x in d["tables"][0]["battery"]["tests"]}
    # SP 800-22 Appendix B, data.e: frequency 0.953749
    assert tests["nist_frequency"]["pvalue"] == pytest.approx(0.953749, abs=1e-6)
    assert d["inputs"][0]["sha256"] and "1,004,882 bits" in d["inputs"][0]["summary"]
