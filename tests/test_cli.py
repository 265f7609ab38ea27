"""The command line as a user meets it: exit codes, bad input, --json, --help, simulate."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from rngcert.cli import EXIT, EXIT_EQUIPMENT, EXIT_INPUT


def test_help_on_every_command(cli):
    for cmd in ([], ["certify"], ["simulate"], ["simulate", "wheel"], ["equipment"]):
        res = cli(*cmd, "--help")
        assert res.exit_code == 0, res.output
        assert "Usage" in res.output
    assert "Examples" in cli("certify", "--help").output
    for group in ((), ("shuffle",), ("simulate",)):  # the groups too, not only their commands
        assert "Examples" in cli(*group, "--help").output, group
    assert "12 FAIL" in cli("--help").output


def test_help_states_no_range_for_an_unbounded_number(cli):
    """An option that takes any finite number states no range in --help: click wrote 'x<=None' for it
    (`shuffle certify --threshold`, `simulate wheel --speed-drift`); a bounded one keeps its range."""
    for cmd, opt in ((("shuffle", "certify"), "--threshold"), (("simulate", "wheel"), "--speed-drift")):
        out = " ".join(cli(*cmd, "--help").output.split())
        assert "None]" not in out and "x<=None" not in out, cmd
        assert opt in out and "[default: 0.0]" in out, cmd
    assert "[default: 0.01; 0<x<1]" in " ".join(cli("shuffle", "certify", "--help").output.split())


def test_default_log_certifies(cli, tmp_path):
    res = cli("certify", "--seed", 1, "--resamples", 999, "--no-plots", "--out", tmp_path)
    assert res.exit_code in (EXIT["PASS"], EXIT["SUSPECT"]), res.output
    assert "bundled default log" in res.output
    assert "VERDICT:" in res.output
    (html,) = [p.read_text(encoding="utf-8") for p in tmp_path.glob("european-*/report.html")]
    # on page one, next to the verdict, not only in the provenance at the end
    assert html.index('id="demo"') < html.index('id="verdict"') + 600 and "DEMONSTRATION DATA" in html


def test_json_output_and_exit_code_match(cli, tmp_path):
    log = tmp_path / "fair.csv"
    assert cli("simulate", "wheel", "--spins", 3000, "--seed", 3, "--out", log).exit_code == 0
    res = cli("certify", log, "--seed", 1, "--resamples", 999, "--json", "--no-plots", "--out", tmp_path / "r")
    rep = json.loads(res.output)
    assert res.exit_code == EXIT[rep["verdict"]]
    assert rep["inputs"][0]["rows"] == 3000


def test_planted_bias_exit_code_fail(cli, tmp_path):
    log = tmp_path / "biased.csv"
    cli("simulate", "wheel", "--spins", 50000, "--seed", 4, "--pocket-bias", "17:1.3", "--out", log)
    meta = json.loads((tmp_path / "biased.csv.json").read_text())
    assert meta["bias"]["pockets"] == [{"pocket": "17", "factor": 1.3}] and meta["seed_entropy"] == "4"
    res = cli("certify", log, "--seed", 1, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == EXIT["FAIL"], res.output
    assert "REJECTED (Holm)" in res.output


@pytest.mark.parametrize(
    "content,code,words",
    [
        ("", EXIT_INPUT, "empty"),
        ("spin_id,result\n", EXIT_INPUT, "no readable spin"),
        ("@@@@\n#!garbage\x01\x02\nlorem ipsum\n", EXIT_INPUT, "no readable spin"),
        ("result\nA\nB\nC\nA\n", EXIT_INPUT, "is not a pocket"),
    ],
)
def test_bad_input_clear_one_line_error(cli, tmp_path, content, code, words):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    res = cli("certify", p, "--out", tmp_path / "r")
    assert res.exit_code == code
    err = res.output.strip().splitlines()
    assert err[-1].startswith("rngcert: error:") and words in err[-1]


def test_unknown_pocket_and_five_percent_bad_rows_are_counted(cli, tmp_path):
    rng = np.random.default_rng(1)
    vals = rng.integers(0, 37, 4000).astype(str).astype(object)
    vals[rng.choice(4000, 200, replace=False)] = "37"  # a pocket the wheel does not have
    p = tmp_path / "five.csv"
    p.write_text("result\n" + "\n".join(vals) + "\n")
    res = cli("certify", p, "--seed", 1, "--resamples", 999, "--no-plots", "--json", "--out", tmp_path / "r")
    rep = json.loads(res.output)
    assert rep["rejected_count"] == 200 and rep["inputs"][0]["accepted"] == 3800
    rejects = (tmp_path / "r").glob("*/rejects.csv")
    lines = next(rejects).read_text().splitlines()
    assert len(lines) == 201 and "'37' is not a pocket" in lines[1]


def test_equipment_errors(cli, tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("result\n1\n")
    assert cli("certify", p, "--equipment", "nope").exit_code == EXIT_EQUIPMENT
    bad = tmp_path / "w.toml"
    bad.write_text('id="w"\nkind="roulette"\nwheel_order=["0","1"]\nred=[]\n')
    res = cli("certify", p, "--equipment", bad)
    assert res.exit_code == EXIT_EQUIPMENT and "at least 3" in res.output


def test_missing_file_and_bad_column_option(cli, tmp_path):
    res = cli("certify", tmp_path / "none.csv")
    assert res.exit_code == EXIT_INPUT and "no such file" in res.output
    p = tmp_path / "x.csv"
    p.write_text("Number\n1\n")
    assert cli("certify", p, "--column", "resultNumber").exit_code == 2
    res = cli("certify", p, "--column", "result=Nope", "--out", tmp_path / "r")
    assert res.exit_code == EXIT_INPUT and "Nope" in res.output


def test_equipment_listing(cli):
    res = cli("equipment")
    assert "european" in res.output and "crazy-time" in res.output
    assert json.loads(cli("equipment", "american").output)["k"] == 38


def test_console_script_quiet_when_piped(tmp_path):
    # a real process, stderr piped: no progress bar characters
    out = subprocess.run(
        [sys.executable, "-m", "rngcert.cli", "certify", "--seed", "1", "--resamples", "999", "--no-plots", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 10)
    assert "it/s" not in out.stderr and "\r" not in out.stderr
