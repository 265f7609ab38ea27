"""Tamper evidence: `rngcert verify` catches a one-byte change in report.json, in each file written
with it and in each input; Ed25519 signatures; --rerun recomputes every statistic."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from _support import run_cli

from rngcert.cli import EXIT
from rngcert.cli.verify import VERIFY_EXIT
from rngcert.report import verify as vmod


@pytest.fixture(autouse=True)
def _no_pinned_keys(monkeypatch):
    monkeypatch.delenv("RNGCERT_TRUSTED_KEYS", raising=False)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A certified simulated log with two tables, 5% bad rows written to rejects.csv, and its report."""
    d = tmp_path_factory.mktemp("v")
    log = d / "spins.csv"
    assert run_cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", log, catch_exceptions=True).exit_code == 0
    lines = log.read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ",99"  # one unreadable pocket: rejects.csv is not empty
    log.write_text("\n".join(lines) + "\n")
    res = run_cli("certify", log, "--seed", "1", "--resamples", "199", "--out", d / "rep")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (d / "rep").glob("european-*")
    return log, rep


def _copy(made, tmp_path):
    log, rep = made
    shutil.copytree(rep, tmp_path / "rep")
    shutil.copy(log, tmp_path / log.name)
    return tmp_path / log.name, tmp_path / "rep"


def _flip(path: Path, offset: int) -> None:
    b = bytearray(path.read_bytes())
    old = b[offset]
    b[offset] = ord("7") if old != ord("7") else ord("3")
    path.write_bytes(bytes(b))


def test_untouched_report_verifies(made, cli):
    log, rep = made
    res = cli("verify", rep, log)
    # unsigned and no trusted key: intact at most, never VERIFIED (issue 24)
    assert res.exit_code == VERIFY_EXIT["INTACT"] == 10, res.output
    assert "RESULT: INTACT" in res.output and "VERIFIED" not in res.output
    assert "signed: no" in res.output
    j = json.loads((rep / "report.json").read_text())
    integ = j["integrity"]
    assert integ["report_sha256"] == vmod.content_sha256(j) and integ["report_id"] == integ["report_sha256"][:16]
    assert set(integ["files"]) == {"report.html", "rejects.csv"}
    assert integ["report_id"] in (rep / "report.html").read_text()  # the page footer names the report


def test_one_byte_change_anywhere_in_report_json_is_caught(made, tmp_path, cli):
    log, rep = _copy(made, tmp_path)
    p = rep / "report.json"
    size = p.stat().st_size
    raw = p.read_bytes()
    # a digit of a p-value, a space of the layout, the verdict, and bytes spread over the file
    offsets = [raw.index(b'"pvalue": ') + 12, raw.index(b"\n ") + 1, raw.index(b'"verdict": "') + 13]
    offsets += [size * k // 9 for k in range(1, 9)]
    original = p.read_bytes()
    for off in offsets:
        p.write_bytes(original)
        _flip(p, off)
        if p.read_bytes() == original:
            continue
        res = cli("verify", rep, log)
        assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] == EXIT["FAIL"], (off, res.output)
        assert "FAILED" in res.output
    p.write_bytes(original)
    assert cli("verify", rep, log).exit_code == VERIFY_EXIT["INTACT"]


@pytest.mark.parametrize("name", ["report.html", "rejects.csv"])
def test_one_byte_change_in_a_written_file_is_caught(made, tmp_path, cli, name):
    log, rep = _copy(made, tmp_path)
    f = rep / name
    _flip(f, f.stat().st_size // 2)
    res = cli("verify", rep, log)
    assert res.exit_code == 12 and f"FAILED      {name}" in res.output, res.output


def test_one_byte_change_in_the_input_is_caught(made, tmp_path, cli):
    log, rep = _copy(made, tmp_path)
    _flip(log, log.stat().st_size - 3)
    res = cli("verify", rep, log)
    assert res.exit_code == 12 and "FAILED      input spins.csv" in res.output, res.output
    # an input that cannot be found is reported as not checked, not as verified
    log.unlink()
    j = json.loads((rep / "report.json").read_text())
    if not Path(j["inputs"][0]["path"]).exists():
        res = cli("verify", rep)
        assert res.exit_code == VERIFY_EXIT["INCOMPLETE"] == 11 and "not checked" in res.output


def test_a_log_that_is_not_an_input_fails(made, tmp_path, cli):
    _, rep = made
    other = tmp_path / "other.csv"
    other.write_text("result\n1\n2\n")
    res = cli("verify", rep, other)
    assert res.exit_code == 12 and "is not an input of this report" in res.output


def test_signature_made_and_checked(made, tmp_path, cli):
    log, _ = made
    assert cli("keygen", tmp_path / "lab.pem").exit_code == 0
    assert cli("keygen", tmp_path / "other.pem").exit_code == 0
    assert cli("keygen", tmp_path / "lab.pem").exit_code == 3  # never overwrites a key by accident
    res = cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", tmp_path / "lab.pem", "--out", tmp_path / "rep")
    assert "(signed)" in res.output
    (rep,) = (tmp_path / "rep").glob("european-*")
    sig = json.loads((rep / "report.json").read_text())["integrity"]["signature"]
    assert sig["algorithm"] == "Ed25519" and len(sig["key_fingerprint"]) == 64
    assert cli("verify", rep, log, "--key", tmp_path / "lab.pub").exit_code == 0
    res = cli("verify", rep, log, "--key", tmp_path / "other.pub")
    assert res.exit_code == 12 and "which is not a trusted key" in res.output
    # an attacker who edits the report and recomputes its hash cannot re-sign it
    p = rep / "report.json"
    j = json.loads(p.read_text())
    j["verdict"] = "PASS" if j["verdict"] != "PASS" else "FAIL"
    j["integrity"]["report_sha256"] = vmod.content_sha256(j)
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log, "--key", tmp_path / "lab.pub")
    assert res.exit_code == 12 and "signature" in res.output and "does NOT verify" in res.output
    # an unsigned report checked against a key fails
    _, unsigned = made
    assert cli("verify", unsigned, log, "--key", tmp_path / "lab.pub").exit_code == 12


def test_rerun_recomputes_every_statistic(made, tmp_path, cli):
    log, rep = _copy(made, tmp_path)
    res = cli("verify", rep, log, "--rerun")
    assert res.exit_code == VERIFY_EXIT["INTACT"], res.output
    assert "values recomputed, all equal" in res.output
    assert "the content follows from those files, except what no rerun recomputes" in res.output  # what a rerun adds, and what it does not
    # a statistic changed and the hash recomputed (no signature): only the rerun can see it
    p = rep / "report.json"
    j = json.loads(p.read_text())
    x = next(t for t in j["tables"][0]["battery"]["tests"] if t["name"] == "pocket_chisquare")
    x["statistic"] = x["statistic"] * 0.5
    j["integrity"]["report_sha256"] = vmod.content_sha256(j)
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log)
    assert res.exit_code == 12 and "does not carry report id" in res.output  # the HTML was made from other content
    res = cli("verify", rep, log, "--rerun", "--json")
    d = json.loads(res.output)
    rerun = next(c for c in d["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "FAILED" and "pocket_chisquare, statistic" in rerun["detail"]


def test_bits_report_reruns(tmp_path, cli):
    res = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 20000, "--seed", 3, "--processes", 1, "--no-plots", "--out", tmp_path)
    assert res.exit_code in (0, 10, 11), res.output
    (rep,) = tmp_path.glob("bits-*")
    res = cli("verify", rep, "--rerun")
    assert res.exit_code == VERIFY_EXIT["INCOMPLETE"], res.output  # a generator has no input file to hash
    assert "values recomputed, all equal" in res.output and "no file (a named generator" in res.output


def test_not_a_report_folder(tmp_path, cli):
    res = cli("verify", tmp_path)
    assert res.exit_code == 3 and "no report.json" in res.output


def test_shuffle_reports_rerun(tmp_path, cli):
    """A procedure report and a scanner-log report recompute from their recorded recipe; a changed
    shoe log is caught by its hash before anything is recomputed."""
    res = cli("shuffle", "certify", "baccarat-004", "--shoes", 150, "--seed", 5, "--no-plots", "--no-sensitivity", "--out", tmp_path / "p")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (tmp_path / "p").glob("*-*")
    res = cli("verify", rep, "--rerun")
    assert "values recomputed, all equal" in res.output, res.output
    log = tmp_path / "scan.csv"
    res = cli("shuffle", "simulate", "baccarat-004", "--shoes", 40, "--dealt-only", "--seed", 2, "--out", log)
    assert res.exit_code == 0, res.output
    res = cli("shuffle", "certify", log, "--decks", 8, "--game", "baccarat", "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "l")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = (tmp_path / "l").glob("*-*")
    res = cli("verify", rep, log, "--rerun")
    assert res.exit_code == VERIFY_EXIT["INTACT"] and "values recomputed, all equal" in res.output, res.output
    log.write_text(log.read_text().replace(",", ";", 1))
    res = cli("verify", rep, log, "--rerun")
    assert res.exit_code == 12 and "nothing to recompute from" in res.output, res.output


# ------------------------------------------------------------------ issue 24: the three forgeries
def _reseal(rep: Path, edit) -> None:
    """What a forger does with rngcert's own code: edit report.json, recompute its hash and report id,
    put the new id in report.html's footers, re-hash report.html (the signature block is left as it was)."""
    p = rep / "report.json"
    j = json.loads(p.read_text())
    edit(j)
    integ = j["integrity"]
    integ["report_sha256"] = vmod.content_sha256(j)
    integ["report_id"] = integ["report_sha256"][:16]
    html = rep / "report.html"
    html.write_text(re.sub(r"report [0-9a-f]{16}", f"report {integ['report_id']}", html.read_text()))
    integ["files"]["report.html"] = vmod.sha256_file(html)
    p.write_text(vmod.serialise(j))


def _flip_verdict(j: dict) -> None:
    j["verdict"] = "PASS" if j["verdict"] != "PASS" else "FAIL"
    for t in j["tables"]:
        t["battery"]["verdict"] = j["verdict"]


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    lab = vmod.generate_key(d / "lab.pem")
    other = vmod.generate_key(d / "other.pem")
    return {"lab": lab, "other": other, "dir": d}


def _signed_report(made, tmp_path, cli, keys) -> tuple[Path, Path]:
    log, _ = made
    res = cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", keys["lab"][0], "--out", tmp_path / "s")
    assert "(signed)" in res.output, res.output
    (rep,) = (tmp_path / "s").glob("european-*")
    return log, rep


def test_forgery_unsigned_report_resealed_after_verdict_edit(made, tmp_path, cli):
    """Forgery 1: an unsigned report whose verdict was edited and re-sealed is at most INTACT, never
    VERIFIED; --rerun catches it."""
    log, rep = _copy(made, tmp_path)
    _reseal(rep, _flip_verdict)
    res = cli("verify", rep, log)
    assert "FAILED" not in res.output, res.output  # every hash is consistent: that is the point
    assert res.exit_code == VERIFY_EXIT["INTACT"] == 10 and "RESULT: INTACT" in res.output
    assert "VERIFIED" not in res.output.replace("NOT VERIFIED", "")
    assert "signed: no" in res.output and "anyone with rngcert can re-seal" in res.output
    res = cli("verify", rep, log, "--rerun")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "verdict: recorded" in res.output, res.output


def test_forgery_signed_report_resigned_with_another_key(made, tmp_path, cli, keys):
    """Forgery 2: a signed report edited and re-signed with the forger's key: consistent on its own
    (INTACT without a trusted key), caught by the pinned key (option, keyring file or env var)."""
    log, rep = _signed_report(made, tmp_path, cli, keys)
    assert cli("verify", rep, log, "--key", keys["lab"][1]).exit_code == 0
    forger = vmod.load_private_key(keys["other"][0])
    _reseal(rep, _flip_verdict)
    j = json.loads((rep / "report.json").read_text())
    files = {n: rep / n for n in j["integrity"]["files"]}
    j["integrity"] = vmod.seal(j, files, key=forger)
    (rep / "report.json").write_text(vmod.serialise(j))
    res = cli("verify", rep, log)
    assert res.exit_code == VERIFY_EXIT["INTACT"], res.output  # self-consistent, but nothing vouches for the key
    assert "not a trusted key" in res.output
    res = cli("verify", rep, log, "--key", keys["lab"][1])
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "which is not a trusted key" in res.output, res.output
    ring = tmp_path / "ring.pem"
    ring.write_text("# the lab's keys\n" + keys["lab"][1].read_text())
    res = cli("verify", rep, log, "--keyring", ring)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    res = cli("verify", rep, log, env={"RNGCERT_TRUSTED_KEYS": str(ring)}, catch_exceptions=True)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "trusted keys: 1" in res.output, res.output


def test_forgery_signature_removed(made, tmp_path, cli, keys):
    """Forgery 3: the signature block deleted. Without a policy it is an unsigned INTACT report (and
    says so); under a pinned key it FAILS, unless --allow-unsigned."""
    log, rep = _signed_report(made, tmp_path, cli, keys)
    ring = tmp_path / "ring.pem"
    ring.write_text(keys["other"][1].read_text() + keys["lab"][1].read_text())  # two pinned keys
    env = {"RNGCERT_TRUSTED_KEYS": str(ring)}
    res = cli("verify", rep, log, env=env, catch_exceptions=True)
    assert res.exit_code == VERIFY_EXIT["VERIFIED"] == 0 and "RESULT: VERIFIED" in res.output and "a trusted key" in res.output, res.output
    p = rep / "report.json"
    j = json.loads(p.read_text())
    del j["integrity"]["signature"]
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log)
    assert res.exit_code == VERIFY_EXIT["INTACT"] and "signed: no" in res.output
    res = cli("verify", rep, log, env=env, catch_exceptions=True)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "pinned keys require a signature" in res.output, res.output
    res = cli("verify", rep, log, "--keyring", ring, "--json")
    d = json.loads(res.output)
    assert res.exit_code == 12 and d["signed"] == "no" and d["result"] == "NOT VERIFIED" and d["trusted_keys"]["count"] == 2
    res = cli("verify", rep, log, "--keyring", ring, "--allow-unsigned")
    assert res.exit_code == VERIFY_EXIT["INTACT"], res.output


def test_keyring_accepts_base64_lines_and_refuses_garbage(tmp_path, keys):
    import base64

    from cryptography.hazmat.primitives import serialization

    pub = vmod.load_public_key(keys["lab"][1])
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    ring = tmp_path / "ring.txt"
    ring.write_text(f"# lab key\n{base64.b64encode(raw).decode()}  lab-2026\n")
    (k,) = vmod.load_keyring(ring)
    assert vmod.fingerprint(k) == vmod.fingerprint(pub)
    ring.write_text("not a key\n")
    with pytest.raises(vmod.InputError, match="neither a PEM block"):
        vmod.load_keyring(ring)
    ring.write_text("# nothing\n")
    with pytest.raises(vmod.InputError, match="holds no public key"):
        vmod.load_keyring(ring)


# ------------------------------------------------------------------ a report made by another version of rngcert
def _as_made_by_0_1_0(change_verdict: bool):
    def edit(j: dict) -> None:
        j["software"]["rngcert"] = "0.1.0"
        x = next(t for t in j["tables"][0]["battery"]["tests"] if t["name"] == "sector_scan")
        x["pvalue"] = 0.4738  # what 0.1.0 drew where 0.2.0 stops early (README "Changes")
        if change_verdict:
            _flip_verdict(j)
    return edit


def test_a_report_of_another_version_whose_values_differ_is_incomplete_with_the_version_to_install(made, tmp_path, cli):
    """0.2.0 computes the scans' p-values otherwise: a 0.1.0 report's rerun cannot reproduce them, which is
    neither a reproduction (INTACT) nor evidence of a forgery (NOT VERIFIED): INCOMPLETE, naming the version to
    install, and the verdicts compared on their own line."""
    log, rep = _copy(made, tmp_path)
    _reseal(rep, _as_made_by_0_1_0(change_verdict=False))
    res = cli("verify", rep, log, "--rerun", "--json")
    d = json.loads(res.output)
    assert res.exit_code == VERIFY_EXIT["INCOMPLETE"] and d["result"] == "INCOMPLETE", res.output
    checks = {c["item"]: c for c in d["checks"]}
    assert checks["rerun"]["status"] == "not checked"
    assert "made by rngcert 0.1.0" in checks["rerun"]["detail"] and "rngcert==0.1.0" in checks["rerun"]["detail"]
    assert "sector_scan, pvalue" in checks["rerun"]["detail"]
    assert checks["rerun verdicts"]["status"] == "ok"


def test_a_report_of_another_version_with_another_verdict_is_not_verified(made, tmp_path, cli):
    log, rep = _copy(made, tmp_path)
    _reseal(rep, _as_made_by_0_1_0(change_verdict=True))
    res = cli("verify", rep, log, "--rerun", "--json")
    d = json.loads(res.output)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    checks = {c["item"]: c for c in d["checks"]}
    assert checks["rerun verdicts"]["status"] == "FAILED" and "verdict: recorded" in checks["rerun verdicts"]["detail"]
