"""The integrity block's own fields are not in the content hash nor in the signed payload: a report whose
``report_id`` (the id printed in every page footer) was replaced, or whose ``algorithm`` / ``canonical``
were changed, was VERIFIED and `verify` printed the forged id. Each must be what the content gives."""

from __future__ import annotations

import base64
import json

import pytest
from test_verify import _copy, made  # noqa: F401  (the module's report fixture)

from rngcert.cli.verify import VERIFY_EXIT
from rngcert.report import verify as vmod


@pytest.fixture(autouse=True)
def _no_pinned_keys(monkeypatch):
    monkeypatch.delenv("RNGCERT_TRUSTED_KEYS", raising=False)


@pytest.mark.parametrize("field, value", [("report_id", "0123456789abcdef"), ("algorithm", "md5"), ("canonical", "keys in any order")])
def test_an_edited_integrity_field_fails(made, tmp_path, cli, field, value):  # noqa: F811
    log, rep = _copy(made, tmp_path)
    p = rep / "report.json"
    j = json.loads(p.read_text())
    j["integrity"][field] = value
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log, "--json")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    failed = [c for c in json.loads(res.output)["checks"] if c["status"] == "FAILED"]
    assert [c["item"] for c in failed] == [f"integrity {field}"] and value in failed[0]["detail"], failed


def test_an_edited_key_fingerprint_fails(made, tmp_path, cli):  # noqa: F811
    log, _ = made
    key, pub = vmod.generate_key(tmp_path / "lab.pem")
    assert cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", key, "--out", tmp_path / "s").exit_code in (0, 10, 11, 12)
    (rep,) = (tmp_path / "s").glob("european-*")
    assert cli("verify", rep, log, "--key", pub).exit_code == VERIFY_EXIT["VERIFIED"]
    p = rep / "report.json"
    j = json.loads(p.read_text())
    j["integrity"]["signature"]["key_fingerprint"] = "ab" * 32
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log, "--key", pub)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "FAILED      integrity signature key_fingerprint" in res.output, res.output


def test_a_replaced_public_key_fails_even_when_a_trusted_key_verifies(made, tmp_path, cli):  # noqa: F811
    log, _ = made
    key, pub = vmod.generate_key(tmp_path / "lab.pem")
    other, _ = vmod.generate_key(tmp_path / "other.pem")
    assert cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", key, "--out", tmp_path / "s").exit_code in (0, 10, 11, 12)
    (rep,) = (tmp_path / "s").glob("european-*")
    p = rep / "report.json"
    j = json.loads(p.read_text())
    shown = vmod.load_private_key(other).public_key()  # the key a reader of report.json is shown, with its own fingerprint
    j["integrity"]["signature"]["public_key"] = base64.b64encode(vmod._raw(shown)).decode("ascii")
    j["integrity"]["signature"]["key_fingerprint"] = vmod.fingerprint(shown)
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log, "--key", pub)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "FAILED      integrity signature public_key" in res.output, res.output


def _signed(made, tmp_path, cli):  # noqa: F811
    log, _ = made
    key, pub = vmod.generate_key(tmp_path / "lab.pem")
    assert cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--sign", key, "--out", tmp_path / "s").exit_code in (0, 10, 11, 12)
    (rep,) = (tmp_path / "s").glob("european-*")
    assert cli("verify", rep, log, "--key", pub).exit_code == VERIFY_EXIT["VERIFIED"]
    return log, rep, pub


def _junk_in(b64: str) -> str:
    return b64[:10] + "*" + b64[10:]  # a character outside base64's alphabet: a lenient decoder drops it


@pytest.mark.parametrize("where, edit", [
    ("integrity", lambda i: i.update(note="approved by the regulator")),
    ("integrity signature", lambda i: i["signature"].update(note="approved by the regulator")),
    ("integrity signature algorithm", lambda i: i["signature"].update(algorithm="RSA-PSS")),
    ("integrity signature signed", lambda i: i["signature"].update(signed="the regulator's approval of this report")),
    ("integrity signature value", lambda i: i["signature"].update(value=_junk_in(i["signature"]["value"]))),
    ("integrity signature public_key", lambda i: i["signature"].update(public_key=" " + i["signature"]["public_key"])),
    ("integrity files", lambda i: i["files"].update({"../spins.csv": "ab" * 32})),
])
def test_any_edit_of_the_signed_integrity_block_fails(made, tmp_path, cli, where, edit):  # noqa: F811
    """report.json was changed in its integrity block, outside the content hash and the signed payload: an added key
    (a forged note of approval), a replaced algorithm or description, a signature or key with a character a lenient
    base64 decoder skips. Each was VERIFIED (exit 0) with the lab's key; now NOT VERIFIED, naming the field."""
    log, rep, pub = _signed(made, tmp_path, cli)
    p = rep / "report.json"
    j = json.loads(p.read_text())
    edit(j["integrity"])
    p.write_text(vmod.serialise(j))
    res = cli("verify", rep, log, "--key", pub, "--json")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    failed = [c["item"] for c in json.loads(res.output)["checks"] if c["status"] == "FAILED"]
    assert where in failed, failed


def _set(path, value):
    def edit(j):
        at = j
        for k in path[:-1]:
            at = at[k]
        at[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit", [
    _set(("inputs",), "x"), _set(("inputs",), ["x"]), _set(("inputs", 0, "sha256"), 5), _set(("inputs", 0, "path"), 5),
    _set(("integrity",), ["report_sha256"]), _set(("standard",), "x"), _set(("rerun",), "x"), _set(("rerun",), {"x": 1}),
    _set(("tables",), "x"), _set(("tables", 0, "battery"), []),
], ids=["inputs-str", "inputs-item-str", "sha-int", "path-int", "integrity-list", "standard-str", "rerun-str", "rerun-no-pipeline",
        "tables-str", "battery-list"])
def test_a_report_json_of_another_shape_is_not_verified_never_an_internal_error(made, tmp_path, cli, edit):  # noqa: F811
    """A hostile report.json whose fields are of another type than rngcert writes (an input that is a string, an
    integrity block that is a list, a recipe without its pipeline) ended verify in an internal error (exit 1): the
    checks were never printed. Each is NOT VERIFIED, with or without --rerun."""
    log, rep = _copy(made, tmp_path)
    p = rep / "report.json"
    j = json.loads(p.read_text())
    edit(j)
    p.write_text(vmod.serialise(j))
    for extra in ((), ("--rerun",)):
        res = cli("verify", rep, log, *extra, "--json")
        assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], (extra, res.output, res.stderr)


def test_a_deeply_nested_report_json_is_not_verified(made, tmp_path, cli):  # noqa: F811
    log, rep = _copy(made, tmp_path)
    (rep / "report.json").write_text("[" * 100_000 + "]" * 100_000)
    res = cli("verify", rep, log)
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"] and "not valid JSON" in res.output, (res.output, res.stderr)
