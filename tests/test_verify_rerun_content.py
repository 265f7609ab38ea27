"""`verify --rerun` says "the content follows from those files", but compared only the tests' statistics and the
verdicts: a re-sealed report whose pocket counts, rejected-row counts or reasons were edited was reproduced
"all equal" (INTACT). Every field the rerun recomputes must agree; only what a run cannot recompute (when and how
it was run, the lab's description of the unit, figures, the integrity block) is left out."""

from __future__ import annotations

import json

import pytest
from test_verify import _copy, _reseal, made  # noqa: F401  (the module's report fixture)

from rngcert.cli.verify import VERIFY_EXIT
from rngcert.report.verify import compare_content


@pytest.fixture(autouse=True)
def _no_pinned_keys(monkeypatch):
    monkeypatch.delenv("RNGCERT_TRUSTED_KEYS", raising=False)


def _more_zeros(j):
    j["tables"][0]["counts"][0] += 5


def _fewer_rejected(j):
    j["rejected_count"] = 0
    j["inputs"][0]["rejected"] = 0


def _reason(j):
    j["tables"][0]["battery"]["reasons"] = ["every test within what a fair wheel gives"]


@pytest.mark.parametrize("edit, where", [(_more_zeros, "counts"), (_fewer_rejected, "rejected"), (_reason, "reasons")])
def test_rerun_catches_an_edit_of_any_recomputed_field(made, tmp_path, cli, edit, where):  # noqa: F811
    log, rep = _copy(made, tmp_path)
    _reseal(rep, edit)
    res = cli("verify", rep, log, "--rerun", "--json")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    rerun = next(c for c in json.loads(res.output)["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "FAILED" and where in rerun["detail"], rerun


def test_run_specific_fields_are_not_compared():
    rec = {"command": "rngcert certify a.csv", "generated_utc": "t1", "seed": {"how": "fresh", "entropy": 5}, "n": 1.0,
           "tables": [{"figures": {"x": 1}, "counts": [1, 2]}], "integrity": {}, "unit_under_test": {"description": "SN 1"}}
    new = {"command": "", "generated_utc": "t2", "seed": {"how": "given", "entropy": 5}, "n": 1.0 + 1e-13, "tables": [{"counts": [1, 2]}]}
    assert compare_content(rec, new) == (4, [])
    new["tables"][0]["counts"] = [1, 3]
    assert compare_content(rec, new)[1] == ["tables[0].counts[1]: recorded 2, recomputed 3"]
