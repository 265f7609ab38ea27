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
