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


def _no_counts(j):
    del j["tables"][0]["counts"]  # a field deleted, not edited


@pytest.mark.parametrize("edit, where", [(_more_zeros, "counts"), (_fewer_rejected, "rejected"), (_reason, "reasons"),
                                         (_no_counts, "counts")])
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


def test_a_field_missing_from_the_report_is_a_difference():
    """A recomputed field the report does not have was deleted from it; a field only the report has, outside those no
    rerun computes, was added to it (every pipeline's rerun computes every other field, the standard of a bits report
    included)."""
    rec = {"n": 1, "recipe_line": "added to the report"}
    new = {"n": 1, "findings": ["a finding"]}
    count, diffs = compare_content(rec, new)
    assert diffs == ["recipe_line: in the report, but no rerun computes it (added): added to the report",
                     "findings: not in the report, recomputed ['a finding']"]


def test_the_commands_own_notes_are_not_compared():
    """`rngcert certify` with no file notes that it certifies the bundled default log: the rerun's pipeline does not
    write that note, so the report's notes before the recomputed ones are the command's (the README's first command
    made a report whose rerun FAILED on it); the recomputed notes must still be the report's last ones."""
    rec = {"notes": ["no log given: certifying the bundled default log", "a data note"]}
    assert compare_content(rec, {"notes": ["a data note"]}) == (1, [])
    assert compare_content({"notes": rec["notes"][:1]}, {"notes": []}) == (0, [])
    assert compare_content(rec, {"notes": []})[1] == ["notes: 2 items recorded, 0 recomputed"]  # "a data note" no rerun computes
    assert compare_content(rec, {"notes": ["another data note"]})[1] == ["notes[0]: recorded a data note, recomputed another data note"]


def test_the_bundled_default_log_reruns(tmp_path, cli):
    """The README's first command, then `verify --rerun` of its report: INTACT (it FAILED on the command's note)."""
    res = cli("certify", "--seed", "3", "--out", tmp_path)
    assert res.exit_code in (0, 10), res.output
    (rep,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    res = cli("verify", rep, "--rerun", "--json")
    assert res.exit_code == VERIFY_EXIT["INTACT"], res.output
    rerun = next(c for c in json.loads(res.output)["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "ok" and "all equal" in rerun["detail"], rerun


@pytest.mark.parametrize("where", ["notes", "table notes"])
def test_a_note_prepended_to_the_report_is_a_difference(made, tmp_path, cli, where):  # noqa: F811
    """The rerun skipped the leading notes a report has beyond the recomputed ones (room for the command's own note on the
    bundled log), in any list named notes and whatever they said: a re-sealed report with "The Gaming Control Board approved
    this wheel" before its notes, or a table note excusing a pocket, was reproduced (INTACT). Only the command's own notes
    (the bundled default log, an equipment check's warning) are left out, and only in the report's own notes."""
    log, rep = _copy(made, tmp_path)

    def edit(j):
        notes = j["notes"] if where == "notes" else j["tables"][0]["notes"]
        notes.insert(0, "The Gaming Control Board approved this wheel for five years")

    _reseal(rep, edit)
    res = cli("verify", rep, log, "--rerun", "--json")
    assert res.exit_code == VERIFY_EXIT["NOT VERIFIED"], res.output
    rerun = next(c for c in json.loads(res.output)["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "FAILED" and "notes" in rerun["detail"], rerun
