"""Review of issue 24 ("every sentence of a certificate is true"), 2026-12-04: statements that the
reports, the terminal and `rngcert verify` made and that their own numbers or files contradict."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from _support import run_cli

from rngcert.cli.verify import VERIFY_EXIT


@pytest.fixture(autouse=True)
def _no_pinned_keys(monkeypatch):
    monkeypatch.delenv("RNGCERT_TRUSTED_KEYS", raising=False)


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A signed report of a simulated log, the log and the public key."""
    d = tmp_path_factory.mktemp("sv")
    log = d / "spins.csv"
    assert run_cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", log).exit_code == 0
    assert run_cli("keygen", d / "lab.pem").exit_code == 0
    res = run_cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", d / "lab.pem", "--out", d / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (d / "rep").glob("european-*")
    return log, rep, d / "lab.pub"


def _copy(signed, tmp_path):
    log, rep, pub = signed
    shutil.copytree(rep, tmp_path / "rep")
    return log, tmp_path / "rep", pub


@pytest.mark.parametrize("name", ["report.pdf", "certificate.pdf", "notes.txt"])
def test_a_file_added_to_a_signed_folder_is_not_verified(signed, tmp_path, cli, name):
    """A forged certificate dropped beside a signed report (report.pdf was never written with it) is
    covered by no hash and no signature: verify must not say VERIFIED about the folder."""
    log, rep, pub = _copy(signed, tmp_path)
    (rep / name).write_bytes(b"%PDF-1.7 forged certificate: PASS\n")
    res = cli("verify", rep, log, "--key", pub)
    assert res.exit_code != VERIFY_EXIT["VERIFIED"], res.output
    assert "VERIFIED (" not in res.output.replace("NOT VERIFIED", "")
    assert name in res.output
    if name == "report.pdf":  # a file named as one rngcert writes, but not written with this report
        assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output


def test_layout_sentence_does_not_say_the_meaning_was_kept_when_it_changed(signed, tmp_path, cli):
    """A changed p-value changes the content hash; the layout line must not add "an edit that keeps
    the meaning" (it did not keep it)."""
    log, rep, pub = _copy(signed, tmp_path)
    j = json.loads((rep / "report.json").read_text())
    j["verdict"] = "PASS" if j["verdict"] != "PASS" else "FAIL"
    (rep / "report.json").write_text(json.dumps(j, indent=2))
    res = cli("verify", rep, log, "--key", pub)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    assert "keeps the meaning" not in res.output


def test_whitespace_only_edit_still_says_the_meaning_is_kept(signed, tmp_path, cli):
    log, rep, pub = _copy(signed, tmp_path)
    (rep / "report.json").write_text((rep / "report.json").read_text() + "\n")
    res = cli("verify", rep, log, "--key", pub)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    assert "keeps the meaning" in res.output


def test_a_json_that_is_not_a_report(tmp_path, cli):
    """`verify` of an audit's group statement (a JSON rngcert 0.2 wrote, never sealed) said "written by
    rngcert before 0.2, or removed" and "verdict None"."""
    f = tmp_path / "audit-group-20261204T165816Z.json"
    f.write_text(json.dumps({"alpha": 0.01, "tables": [], "named": [], "statement": "GROUP: ..."}))
    res = cli("verify", f)
    assert res.exit_code == 3, res.output
    assert "not a report" in res.output
    assert "before 0.2" not in res.output and "verdict None" not in res.output


def test_tiny_wheel_sample_names_why_the_edge_was_not_assessed(tmp_path, cli):
    """Five spins of a European wheel: the practical edge line said "not assessed (no pay table)" and the
    edge clause "none of its tests is in this battery", while the wheel has a pay table."""
    log = tmp_path / "five.csv"
    log.write_text("result\n17\n3\n25\n0\n8\n")
    res = cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 11, res.output
    assert "no pay table" not in res.output
    (rep,) = (tmp_path / "r").glob("european-*")
    j = json.loads((rep / "report.json").read_text())
    edge = next(c for c in j["standard"]["tables"][0]["clauses"] if c["id"] == "edge")
    assert "none of its tests is in this battery" not in edge["detail"]
    assert "5 spins" in edge["detail"]
    assert "5 spins" in j["tables"][0]["battery"]["two_lines"]["practical_edge"]


def test_one_stream_is_singular(tmp_path, cli):
    bits = tmp_path / "one.bin"
    bits.write_bytes(np.random.default_rng(3).integers(0, 256, 1000, dtype=np.uint8).tobytes())
    res = cli("bits", bits, "--format", "binary", "--streams", "1", "--length", "8000", "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code in (0, 10, 11, 12), res.output
    assert "1 streams" not in res.output
    assert ": 1 stream →" in res.output


def test_posterior_share_is_not_rounded_to_certainty():
    """Every one of 4,000 posterior draws paying is not a probability of 100.0%."""
    from rngcert.equipment.paytables import load_paytable
    from rngcert.equipment.wheel import load_wheel
    from rngcert.stats.exploit import exploitability

    wheel = load_wheel("european")
    counts = np.full(37, 200)
    counts[wheel.position_space().labels.index("17") if "17" in list(wheel.position_space().labels) else 17] = 400
    ex = exploitability(counts, wheel.position_space(), load_paytable("roulette-single-zero"), rng=np.random.default_rng(1), wheel=wheel)
    assert ex.positive_expectation_demonstrated
    assert ex.details["posterior_draws"] == 4000 and "100.0%" not in ex.line
    assert "4,000" in ex.line


def test_audit_all_json_is_one_json_document(tmp_path, cli):
    """`audit --all --json` printed each table's report one after another: not valid JSON, and without
    the group statement the terminal prints."""
    logs = []
    for i, table in enumerate(("T-A", "T-B")):
        log = tmp_path / f"{table}.csv"
        assert cli("simulate", "wheel", "--spins", "400", "--seed", 5 + i, "--table", table, "--out", log).exit_code == 0
        logs.append(log)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", *logs, "--db", db).exit_code == 0
    res = cli("audit", "--all", "--db", db, "--seed", "3", "--resamples", "99", "--workers", "1", "--no-plots", "--no-record", "--json",
              "--out", tmp_path / "r")
    assert res.exit_code in (0, 10, 11, 12), res.output
    doc = json.loads(res.stdout)
    assert sorted(r["tables"][0]["table"] for r in doc["reports"]) == ["T-A", "T-B"]
    assert doc["group"]["statement"]


def test_a_signature_by_an_unpinned_key_is_not_called_a_re_signature(signed, tmp_path, cli):
    """The lab's own signature checked against another pinned key: verify cannot know it was
    "re-signed by someone else", only that a key not pinned here signed it."""
    log, rep, _ = _copy(signed, tmp_path)
    assert cli("keygen", tmp_path / "other.pem").exit_code == 0
    res = cli("verify", rep, log, "--key", tmp_path / "other.pub")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    assert "which is not a trusted key" in res.output
    assert ": re-signed by someone else" not in res.output and "a key not pinned here signed it" in res.output


@pytest.fixture(scope="module")
def pcg_pass(tmp_path_factory):
    """A PASS of 20 PCG64 streams of 10^6 bits (seed 2) in which 5 test names fail SP 800-22's proportion
    rule (18 of 20 passing): within what a good generator fails by chance."""
    d = tmp_path_factory.mktemp("bits")
    res = run_cli("bits", "--source", "pcg64", "--streams", "20", "--length", "1000000", "--seed", "2", "--workers", "1", "--no-plots",
                  "--out", d)
    assert res.exit_code == 0, res.output
    (rep,) = d.glob("bits-*")
    return json.loads((rep / "report.json").read_text()), res.output


def test_bits_pass_does_not_say_no_name_is_flagged_when_some_are(pcg_pass):
    rep, out = pcg_pass
    t = rep["tables"][0]
    flagged = [r["name"] for r in t["two_level"]["rows"] if r.get("proportion_ok") is False or r.get("uniformity_ok") is False]
    assert flagged  # the premise: some names fail the proportion rule by chance
    text = " ".join(t["key_findings"])
    assert "flag no test name" not in text and "flag no test name" not in out
    assert f"{len(flagged)} of {len(t['two_level']['rows'])}" in text
    second = next(c for c in rep["standard"]["tables"][0]["clauses"] if c["id"] == "sp800-22-second-level")
    assert second["result"] == "met"
    assert "none rejects" not in second["detail"] and f"{len(flagged)} test name(s)" in second["detail"]


def test_a_standard_that_makes_a_fail_does_not_keep_not_a_failure(tmp_path, cli):
    """Under west-virginia-29-22B-909 (the chi-square at 99% on its own) a log the battery calls SUSPECT
    is a FAIL; its next step still read "Not a failure: collect the number of spins ...". Simulated
    wheel, pocket 9 at weight 1.2, 20,000 spins, seed 2: battery SUSPECT (column bets), chi-square p = 0.0078."""
    res, t = _west_virginia_table(cli, tmp_path, 2)
    assert t["battery"]["battery_verdict"] == "SUSPECT" and t["battery"]["verdict"] == "FAIL"
    steps = " ".join(t["next_steps"])
    assert "Not a failure" not in steps and "Not a failure" not in res.output
    assert "FAIL under standard west-virginia-29-22B-909" in steps
    assert not any(str(k).startswith("SUSPECT: ") for k in t["key_findings"])  # the battery's word, said as such


def test_a_standard_fail_on_a_battery_pass_does_not_say_the_wheel_is_consistent(tmp_path, cli):
    """The battery PASSes (seed 5) and west-virginia FAILs the chi-square at 99%: the page said both
    "FAIL: ... rejected: pocket_chisquare" and, unqualified, "No test rejects: the spins are consistent with
    a fair wheel"."""
    res, t = _west_virginia_table(cli, tmp_path, 5)
    assert t["battery"]["battery_verdict"] == "PASS" and t["battery"]["verdict"] == "FAIL"
    assert not any(str(k).startswith("No test rejects") for k in t["key_findings"])
    assert any("battery's own rule (PASS" in str(k) for k in t["key_findings"])


def _west_virginia_table(cli, tmp_path, seed: int):
    """Certify a simulated wheel (pocket 9 at weight 1.2, 20,000 spins, simulation seed ``seed``) under
    west-virginia-29-22B-909, which FAILs it (exit 12): the command's result and the report's table."""
    log = tmp_path / "su.csv"
    assert cli("simulate", "wheel", "--spins", "20000", "--pocket-bias", "9:1.2", "--seed", str(seed), "--out", log).exit_code == 0
    res = cli("certify", log, "--standard", "west-virginia-29-22B-909", "--seed", "1", "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 12, res.output
    (rep,) = (tmp_path / "r").glob("european-*")
    return res, json.loads((rep / "report.json").read_text())["tables"][0]
