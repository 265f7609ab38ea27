"""Second review of named standards and verification (2026-12-05): a lab's clause naming an SP 800-22 test by the name
its validation accepts selected none of the battery's results (named ``nist_frequency:uniformity`` and
``nist_frequency:proportion``), so the clause was "not applicable" on every bit stream."""

from __future__ import annotations

import pytest

from rngcert.battery.standard import evaluate, parse_standard

HEAD = 'id = "lab"\ntitle = "a lab\'s standard"\nreference = "lab manual"\nsummary = "s"\nrule = "r"\n'


def _bits_clause(test: str) -> str:
    return (f'[[clause]]\nid = "B1"\ntitle = "frequency"\napplies_to = ["bits"]\ntests = ["{test}"]\nlevel = 0.01\n'
            'correction = "per-test"\nrejection = "FAIL"\nreference = "x"\n')


def _bits_battery(p_proportion: float) -> dict:
    tests = [{"name": n, "pvalue": p, "applicable": True, "holm_weight": 1.0}
             for n, p in (("nist_frequency:uniformity", 0.5), ("nist_frequency:proportion", p_proportion),
                          ("nist_cumulative_sums[forward]:uniformity", 0.4), ("nist_runs:proportion", 0.3))]
    return {"tests": tests, "verdict": "PASS", "reasons": [], "second_level": {"applicable": True}}


@pytest.mark.parametrize("test", ["frequency", "nist_frequency"])
def test_a_bits_clause_naming_one_test_judges_its_results(test):
    std = parse_standard(HEAD + _bits_clause(test), "lab.toml")
    failing = evaluate(std, "bits", _bits_battery(1e-6), alpha=0.01)
    assert failing["verdict"] == "FAIL", failing
    assert failing["clauses"][0]["rejected"] == ["nist_frequency:proportion"]
    passing = evaluate(std, "bits", _bits_battery(0.2), alpha=0.01)
    assert passing["clauses"][0]["result"] == "met" and "2 test(s)" in passing["clauses"][0]["detail"], passing


def test_a_bits_clause_naming_a_test_with_variants_selects_each():
    std = parse_standard(HEAD + _bits_clause("cumulative_sums"), "lab.toml")
    assert std.clauses[0].selects("nist_cumulative_sums[forward]:uniformity")
    assert not std.clauses[0].selects("nist_runs:proportion")


def test_verify_rerun_of_a_bits_report_applies_its_standard(tmp_path, cli):
    """A bits report under a named standard: --rerun recomputed the battery's own verdict and compared it with the
    standard's, so a genuine report was NOT VERIFIED ("recorded FAIL, recomputed INCONCLUSIVE"), and the standard's
    clause results were never recomputed. The recipe now records the standard and the rerun applies it."""
    lab = tmp_path / "lab-bits.toml"
    lab.write_text(HEAD + _bits_clause("*").replace("level = 0.01", "level = 0.5"))
    res = cli("bits", "--source", "pcg64", "--streams", "10", "--length", "1000000", "--seed", "1", "--standard", lab,
              "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == 12, res.output  # FAIL under the lab's clause, whatever the battery says
    (rep,) = (tmp_path / "r").glob("bits-*")
    res = cli("verify", rep, "--rerun")
    assert res.exit_code == 11 and "ok          rerun:" in res.output, res.output  # INCOMPLETE: a generator has no file to hash
    lab.write_text(lab.read_text().replace("level = 0.5", "level = 0.4"))
    res = cli("verify", rep, "--rerun")
    assert res.exit_code == 12 and "the standard changed since the report" in res.output, res.output


def test_verify_rerun_fails_a_field_added_to_the_report(tmp_path, cli):
    """A field added to an unsigned report and re-sealed (a regulator's approval, a note in a table's battery) was not
    compared by --rerun (only fields both reports have were): the rerun said every value agreed and the result read
    "the content follows from those files" (INTACT, exit 10)."""


    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", log).exit_code == 0
    assert cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--out", tmp_path / "r").exit_code in (0, 10, 11, 12)
    (rep,) = (tmp_path / "r").glob("european-*")
    assert cli("verify", rep, log, "--rerun").exit_code == 10
    from test_verify import _reseal  # (what a forger does with rngcert's own code)

    def edit(j):
        j["regulator_statement"] = "approved by the gaming control board"
        j["tables"][0]["battery"]["approval"] = "certified for five years"

    _reseal(rep, edit)
    res = cli("verify", rep, log, "--rerun")
    assert res.exit_code == 12, res.output
    assert "regulator_statement: in the report, but no rerun computes it" in res.output
    assert "tables[0].battery.approval: in the report" in res.output


def _lab_file(tmp_path, std_id: str, clauses: str) -> str:
    p = tmp_path / "lab.toml"
    p.write_text(HEAD.replace('id = "lab"', f'id = "{std_id}"') + clauses, encoding="utf-8")
    return str(p)


def _wheel_clause(cid: str = "C1", title: str = "t") -> str:
    return (f'[[clause]]\nid = "{cid}"\ntitle = "{title}"\napplies_to = ["wheel"]\ntests = ["pocket_chisquare"]\nlevel = 0.01\n'
            'correction = "per-test"\nrejection = "FAIL"\nreference = "x"\n')


@pytest.mark.parametrize("std_id", ["RNGCERT-DEFAULT", "rngcert\\u2010default", "\\uff45\\uff44\\uff47\\uff45", "edge\\u200b",
                                    " Uniformity "])
def test_a_lab_id_that_reads_as_a_packaged_standards_is_refused(tmp_path, std_id):
    """A lab's file may not take a packaged standard's id, or a report would cite it for rules it does not hold; an id
    that differs only in case, a Unicode hyphen, full-width letters or an invisible character read as the packaged id on
    the report and the terminal and was accepted."""
    from rngcert.battery.standard import StandardError, load_standard

    with pytest.raises(StandardError, match="id of a packaged standard|control or invisible"):
        load_standard(_lab_file(tmp_path, std_id, _wheel_clause()))


@pytest.mark.parametrize("second", ["C1 ", "c1", "\\uff23\\uff11"])
def test_clause_ids_that_read_the_same_are_duplicates(tmp_path, second):
    """Two clauses whose ids read the same ("C1" and "C1 ", "c1" or full-width "Ｃ１") were accepted: the report's
    clause table and the terminal showed "C1 met · C1 not met", and a reason named a clause that could be either."""
    from rngcert.battery.standard import StandardError, load_standard

    with pytest.raises(StandardError, match="duplicate clause id"):
        load_standard(_lab_file(tmp_path, "lab", _wheel_clause() + _wheel_clause(second)))


@pytest.mark.parametrize("where, clauses", [
    ("clause[0].id", _wheel_clause("C1\\nVERDICT: PASS")),
    ("clause[0].title", _wheel_clause(title="t\\u001b[2K")),
    ("clause[0].id", _wheel_clause("C\\u200b1")),
])
def test_a_standards_names_hold_no_control_character(tmp_path, cli, where, clauses):
    """A clause id with a newline printed a line of its own on the terminal ("VERDICT: PASS — forged" above the real
    verdict line, read by a script that greps VERDICT); an escape sequence or an invisible character makes two names
    look alike. Each is refused with the key (exit 4)."""
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "500", "--seed", "4", "--out", log).exit_code == 0
    res = cli("certify", log, "--seed", "1", "--no-plots", "--out", tmp_path / "r", "--standard", _lab_file(tmp_path, "lab", clauses))
    assert res.exit_code == 4 and repr(where) in res.stderr and "control or invisible" in res.stderr, (res.output, res.stderr)


def test_verify_says_what_a_missing_file_and_a_rerun_leave_unchecked(tmp_path, cli):
    """The INCOMPLETE sentence listed its causes without "a file the report recorded is missing" (rejects.csv removed),
    and an INTACT rerun said "the content follows from those files" while the lab's --subject (the unit certified), the
    command line and the time are not recomputed: a re-sealed report naming another wheel was reproduced."""
    import json

    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", log).exit_code == 0
    assert cli("certify", log, "--seed", "1", "--resamples", "199", "--no-plots", "--subject", "Wheel SN 1234",
               "--out", tmp_path / "r").exit_code in (0, 10, 11, 12)
    (rep,) = (tmp_path / "r").glob("european-*")
    res = cli("verify", rep, log, "--rerun", "--json")
    assert res.exit_code == 10 and "--subject" in json.loads(res.output)["meaning"], res.output
    (rep / "rejects.csv").unlink()
    res = cli("verify", rep, log, "--json")
    assert res.exit_code == 11 and "missing from the folder" in json.loads(res.output)["meaning"], res.output


def test_a_packaged_id_is_the_packaged_standard_whatever_the_current_folder_holds(tmp_path, monkeypatch):
    """`--standard edge` in a folder holding a folder `edge` was "edge: standard file not found"; with a file named
    `uniformity` there, `--standard uniformity` read that file as a lab's standard (a report citing another standard than
    the one named). A packaged id names the packaged standard; a lab's file is named by a path (`./uniformity`)."""
    from rngcert.battery.standard import load_standard

    monkeypatch.chdir(tmp_path)
    (tmp_path / "edge").mkdir()
    (tmp_path / "uniformity").write_text(HEAD.replace('id = "lab"', 'id = "lab-u"') + _wheel_clause())
    assert load_standard("edge").packaged and load_standard("edge").id == "edge"
    std = load_standard("uniformity")
    assert std.packaged and std.id == "uniformity"
    assert load_standard("./uniformity").id == "lab-u"


def test_verify_rerun_finds_a_labs_standard_by_its_hash(tmp_path, cli, monkeypatch):
    """A report under a lab's standard records the file's path as given (`lab.toml`); `verify --rerun` from another folder
    ended in "lab.toml: standard file not found" (exit 4), printing none of its checks, and there was no way to give the
    file. The standard is now found among the files given (by the SHA-256 the report carries) or at its recorded path;
    missing, the rerun is not checked (INCOMPLETE) and says which file to give."""
    import json

    work, elsewhere = tmp_path / "lab", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    (work / "lab.toml").write_text(HEAD + _wheel_clause())
    assert cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", "spins.csv").exit_code == 0
    assert cli("certify", "spins.csv", "--seed", "1", "--resamples", "199", "--no-plots", "--standard", "lab.toml",
               "--out", "r").exit_code in (0, 10, 11, 12)
    (rep,) = (work / "r").glob("european-*")
    monkeypatch.chdir(elsewhere)
    log = work / "spins.csv"
    res = cli("verify", rep, log, "--rerun", "--json")
    assert res.exit_code == 11, res.output
    rerun = next(c for c in json.loads(res.output)["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "not checked" and "give its file" in rerun["detail"], rerun
    res = cli("verify", rep, log, work / "lab.toml", "--rerun", "--json")
    assert res.exit_code == 10, res.output
    checks = {c["item"]: c["status"] for c in json.loads(res.output)["checks"]}
    assert checks["rerun"] == "ok" and checks["standard lab.toml"] == "ok", checks


def test_a_standard_with_no_clause_for_the_kind_says_so():
    """A lab's standard for machine shufflers only (applies_to shoe:machine) on a manual procedure was INCONCLUSIVE
    with "no clause of standard 'lab' could be evaluated on these data": the data were not the cause, the kind of
    equipment was; the reason now says which kind and what the clauses apply to."""
    std = parse_standard(HEAD + _wheel_clause().replace('["wheel"]', '["shoe:machine"]').replace("pocket_chisquare", "position_chisquare"),
                         "lab.toml")
    battery = {"tests": [{"name": "position_chisquare", "pvalue": 0.5, "applicable": True}], "verdict": "PASS", "reasons": []}
    out = evaluate(std, "shoe:manual", battery, alpha=0.01)
    assert out["verdict"] == "INCONCLUSIVE"
    assert out["reasons"] == ["no clause of standard 'lab' applies to shoe:manual equipment (its clauses apply to: shoe:machine)"], out
    from rngcert.battery.standard import summarise
    from rngcert.pipeline.standards import terminal_lines

    s = summarise(std, [dict(out, table="T1")], alpha=0.01, kind="shoe:manual")
    (line,) = terminal_lines({"standard": s, "tables": [{"battery": battery}, {"battery": battery}]})
    assert "battery INCONCLUSIVE" not in line and "no clause applies to shoe:manual equipment" in line, line


@pytest.mark.parametrize("bias", ["1e300", "36"])
def test_a_minimum_effect_no_wheel_can_have_is_refused(tmp_path, cli, bias):
    """A lab's wheel_single_pocket_bias of +3,600% or more on a 37-pocket wheel is an effect no pocket can have (it would
    come up on more than every spin): the power gate was then met by any sample, and 300 spins PASSed where the default
    standard is INCONCLUSIVE. Refused, naming the largest possible bias (exit 4)."""
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "300", "--seed", "4", "--out", log).exit_code == 0
    lab = tmp_path / "lab.toml"
    lab.write_text(HEAD + f"[minimum_effect]\nwheel_single_pocket_bias = {bias}\n" + _wheel_clause())
    res = cli("certify", log, "--seed", "1", "--no-plots", "--out", tmp_path / "r", "--standard", lab)
    assert res.exit_code == 4 and "wheel_single_pocket_bias" in res.stderr and "+3,600%" in res.stderr, (res.output, res.stderr)


def test_a_small_declared_bias_is_printed_as_declared(tmp_path, cli):
    """A declared minimum bias of 0.0001 (+0.01%) was printed "+0%" in the reason of the INCONCLUSIVE verdict and on
    page one, as if none had been declared."""
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "3000", "--seed", "4", "--out", log).exit_code == 0
    lab = tmp_path / "lab.toml"
    lab.write_text(HEAD + "[minimum_effect]\nwheel_single_pocket_bias = 0.0001\n" + _wheel_clause())
    res = cli("certify", log, "--seed", "1", "--no-plots", "--out", tmp_path / "r", "--standard", lab)
    assert res.exit_code == 11 and "declared minimum bias of +0.01% on one pocket" in res.output and "+0%" not in res.output, res.output


def test_a_standard_file_too_deep_or_too_large_is_an_error_naming_it(tmp_path):
    """A lab's standard nested 100,000 deep ended in an internal error (RecursionError, exit 1); a 50 MB one was read,
    parsed and copied into report.json (24 s). Both are refused as an equipment file is (exit 4), the size before
    anything is read."""
    from rngcert.battery.standard import StandardError, load_standard

    deep = tmp_path / "deep.toml"
    deep.write_text(HEAD + "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(StandardError, match="nested too deeply"):
        load_standard(str(deep))
    big = tmp_path / "big.toml"
    big.write_text(HEAD.replace('summary = "s"', 'summary = "' + "s" * (9 << 20) + '"') + _wheel_clause())
    with pytest.raises(StandardError, match="MiB"):
        load_standard(str(big))


def test_a_lab_standard_that_declares_no_wheel_effect_still_needs_power_for_a_pass(tmp_path, cli):
    """A lab's standard without [minimum_effect] turned off the power gate of wheels: 300 spins PASSed under it (exit 0)
    where every packaged standard is INCONCLUSIVE ("PASS needs power", DESIGN §4). Undeclared, the minimum effect is
    rngcert-default's, and page one and the reason say so."""
    log = tmp_path / "spins.csv"
    assert cli("simulate", "wheel", "--spins", "300", "--seed", "4", "--out", log).exit_code == 0
    lab = tmp_path / "lab.toml"
    lab.write_text(HEAD + _wheel_clause())
    res = cli("certify", log, "--seed", "1", "--no-plots", "--out", tmp_path / "r", "--standard", lab)
    assert res.exit_code == 11 and "declared minimum bias of +50% on one pocket" in res.output, res.output
    (rep,) = (tmp_path / "r").glob("european-*")
    import json

    declared = json.loads((rep / "report.json").read_text())["certified"]["declared"]["declared minimum bias"]
    assert "rngcert-default" in declared and "declares none" in declared, declared


def test_verify_rerun_finds_a_labs_wheel_by_its_hash(tmp_path, cli, monkeypatch):
    """The same for a lab's wheel TOML (`--equipment labwheel.toml`, recorded as given): from another folder `verify
    --rerun` ended in "equipment file 'labwheel.toml' does not exist" (exit 4) without printing any check."""
    import json

    work, elsewhere = tmp_path / "lab", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    rep = _lab_wheel_report(cli, work)
    monkeypatch.chdir(elsewhere)
    res = cli("verify", rep, work / "spins.csv", "--rerun", "--json")
    assert res.exit_code == 11 and "the lab's wheel 'lab-eu'" in res.output, res.output
    res = cli("verify", rep, work / "spins.csv", work / "labwheel.toml", "--rerun", "--json")
    checks = {c["item"]: c["status"] for c in json.loads(res.output)["checks"]}
    assert res.exit_code == 10 and checks["rerun"] == "ok" and checks["equipment labwheel.toml"] == "ok", res.output


def test_verify_rerun_with_a_lab_file_now_invalid_prints_its_checks(tmp_path, cli, monkeypatch):
    """A lab's wheel TOML edited after the report into one that no longer loads: `verify --rerun` ended in the equipment
    error (exit 4) and printed none of its checks. The rerun is not checked, saying why; the hashes are still reported."""
    import json

    monkeypatch.chdir(tmp_path)
    rep = _lab_wheel_report(cli, tmp_path)
    (tmp_path / "labwheel.toml").write_text("id = [\n")
    res = cli("verify", rep, "spins.csv", "--rerun", "--json")
    assert res.exit_code == 11, (res.output, res.stderr)
    rerun = next(c for c in json.loads(res.output)["checks"] if c["item"] == "rerun")
    assert rerun["status"] == "not checked" and "labwheel.toml" in rerun["detail"], rerun


def _lab_wheel_report(cli, folder):
    """The report folder of a 1,500-spin simulated log certified in ``folder`` (the working folder) under a lab's wheel
    ``labwheel.toml`` (the European wheel as ``lab-eu``)."""
    from importlib import resources

    text = (resources.files("rngcert.equipment") / "data" / "european.toml").read_text(encoding="utf-8")
    (folder / "labwheel.toml").write_text(text.replace('id = "european"', 'id = "lab-eu"'), encoding="utf-8")
    assert cli("simulate", "wheel", "--spins", "1500", "--seed", "4", "--out", "spins.csv").exit_code == 0
    assert cli("certify", "spins.csv", "--equipment", "labwheel.toml", "--seed", "1", "--resamples", "199", "--no-plots",
               "--out", "r").exit_code in (0, 10, 11, 12)
    (rep,) = (folder / "r").glob("lab-eu-*")
    return rep
