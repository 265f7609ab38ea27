"""Exit codes of option values and ``--json`` on errors, for every command (README, "Exit codes").

The rule: a value wrong on the command line alone (not a number, ``nan``/``inf``, out of range,
malformed, not one of the names the option takes, at odds with another option) is a usage error,
exit 2, whether click's type or the command refuses it; a file it names that is not there is an
input error, exit 3; an unknown wheel, pay table, procedure, protocol or standard is exit 4. Each
case below gave another code before (noted beside it). With ``--json``, every error exit prints
``{"error": message, "exit_code": code}`` on standard output (``watch``: a last JSON line with
``"event": "error"``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import ingest_into, run_cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A fair 2,000-spin log, a store holding it as table T1, a controller capture, an empty file."""
    d = tmp_path_factory.mktemp("exits")
    log = d / "log.csv"
    spins = np.random.default_rng(2026).integers(0, 37, 2000)
    log.write_text("result\n" + "\n".join(map(str, spins.tolist())) + "\n")
    ingest_into(d / "st.duckdb", log)
    cap = d / "cap.txt"
    assert run_cli("simulate", "wheel", "--spins", "20", "--seed", "1", "--format", "protocol", "--out", cap).exit_code == 0
    (d / "empty.csv").write_text("")
    return d


def _args(files, args):
    return [str(a).replace("{d}", str(files)) for a in args]


# (arguments, option named in the message, code before the rule was applied)
USAGE = [
    (("certify", "{d}/log.csv", "--min-bias", "nan"), "--min-bias", 3),
    (("certify", "{d}/log.csv", "--min-bias", "inf"), "--min-bias", 3),
    (("certify", "{d}/log.csv", "--power", "nan"), "--power", 3),
    (("certify", "{d}/log.csv", "--max-rejected", "nan"), "--max-rejected", 3),
    (("certify", "{d}/log.csv", "--scheduler", "nope"), "--scheduler", 3),
    (("certify", "{d}/log.csv", "--column", "colour=Number"), "--column", 3),
    (("ingest", "{d}/log.csv", "--db", "{d}/new.duckdb", "--column", "colour=Number"), "--column", 3),
    (("watch", "{d}/log.csv", "--no-record", "--db", "{d}/w.duckdb", "--column", "colour=Number"), "--column", 3),
    (("audit", "--db", "{d}/st.duckdb", "--all", "--no-record", "--audits-per-year", "nan"), "--audits-per-year", 11),
    (("audit", "--db", "{d}/st.duckdb", "--all", "--no-record", "--wait", "nan"), "--wait", 11),
    (("audit", "--db", "{d}/st.duckdb", "--all", "--no-record", "--min-bias", "inf"), "--min-bias", 3),
    (("bits", "--source", "nope", "--seed", "1"), "--source", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--source", "nope"), "--source", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--pocket-bias", "17:-2"), "--pocket-bias", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--pocket-bias", "17:nan"), "--pocket-bias", 1),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--harmonic", "2"), "--harmonic", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--void-rate", "nan"), "--void-rate", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--rotor", "--speed-drift", "nan"), "--speed-drift", 0),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--table", ""), "--table", 3),
    (("simulate", "wheel", "--out", "{d}/s.csv", "--signature", "10:7:1.15", "--pocket-bias", "17:1.2"), "--signature", 3),
    (("power", "--effect", "0"), "--effect", 3),
    (("power", "--effect", "-1"), "--effect", 3),
    (("power", "--effect", "nan"), "--effect", 3),
    (("power", "--effect", "101", "--spins", "1000"), "effect", 3),
    (("power", "--alternative", "nope", "--effect", "0.1"), "alternative", 3),
    (("power", "--alternative", "sector", "--spins", "30"), "sector width", 3),
    (("power", "--test", "nope", "--effect", "0.1"), "test", 3),
    (("power", "--alpha", "nan", "--effect", "0.1"), "--alpha", 3),
    (("power", "--spins", "100000000000000000000"), "n (spins)", 1),
    (("house-edge", "poker"), "unknown game", 3),
    (("house-edge", "roulette", "--paytable", "baccarat"), "--paytable", 3),
    (("scaling", "--bits", "8", "--outcomes", "300", "--method", "modulo"), "outcomes", 3),
    (("shuffle", "certify", "baccarat-004", "--threshold", "nan"), "--threshold", 3),
    (("shuffle", "certify", "baccarat-004", "--min-edge", "inf"), "--min-edge", 3),
    (("shuffle", "certify", "baccarat-004", "--power", "nan"), "--power", 3),
    (("ingest", "{d}/log.csv", "--db", "{d}/new.duckdb", "--table", ""), "--table", 3),
    (("ingest", "{d}/log.csv", "--db", "{d}/new.duckdb", "--wait", "nan"), "--wait", 0),
    (("rejects", "--db", "{d}/st.duckdb", "--wait", "inf"), "--wait", 0),
    (("export", "--db", "{d}/st.duckdb", "--parquet", "{d}/exp", "--wait", "nan"), "--wait", 0),
    (("record", "{d}/cap.txt", "--out", "{d}/r1.csv", "--table", ""), "--table", 0),
    (("record", "{d}/cap.txt", "--out", "{d}/r2.csv", "--reconnect", "nan"), "--reconnect", 0),
    (("record", "{d}/cap.txt", "--out", "{d}/r3.csv", "--idle-timeout", "inf"), "--idle-timeout", 0),
    (("watch", "{d}/log.csv", "--no-record", "--db", "{d}/w.duckdb", "--settle", "nan"), "--settle", 0),
    (("watch", "{d}/log.csv", "--no-record", "--db", "{d}/w.duckdb", "--wait", "inf"), "--wait", 0),
    (("watch", "{d}/log.csv", "--no-record", "--db", "{d}/w.duckdb", "--alpha", "nan"), "--alpha", 3),
]


def _id(args) -> str:
    return " ".join(repr(a) if not a else a for a in args).replace("{d}/", "")


@pytest.mark.parametrize("args,named,before", USAGE, ids=[_id(a) for a, _, _ in USAGE])
def test_a_value_wrong_on_the_command_line_alone_is_a_usage_error(files, args, named, before):
    res = run_cli(*_args(files, args))
    assert res.exit_code == 2, (before, res.output)
    assert named in res.stderr and "internal error" not in res.stderr, res.stderr


@pytest.mark.parametrize("args", [
    ("certify", "{d}/log.csv", "--sign", "{d}/nope.pem"),
    ("verify", "{d}", "--key", "{d}/nope.pub"),
    ("verify", "{d}", "--keyring", "{d}/nope.pem"),
])
def test_a_key_file_that_is_not_there_is_an_input_error_as_a_log_is(files, args):
    """Before: exit 2 (click's exists check) while a missing log, store or report folder was exit 3."""
    res = run_cli(*_args(files, args))
    assert res.exit_code == 3, res.output
    assert f"{args[-2]} {files}/{args[-1].rsplit('/', 1)[1]}: no such file" in res.stderr


def test_record_refuses_a_blank_table_id_instead_of_writing_blank_cells(files):
    """Before: exit 0 and a log whose table column was empty on every row (a log ingest then refuses)."""
    out = files / "blank.csv"
    res = run_cli("record", files / "cap.txt", "--out", out, "--table", " ")
    assert res.exit_code == 2 and "--table" in res.stderr and not out.exists()


def test_values_in_range_still_run(files):
    """The rule refuses only wrong values: a drift below zero, a zero pocket factor and a phase below zero simulate."""
    res = run_cli("simulate", "wheel", "--spins", "30", "--seed", "1", "--out", files / "ok.csv", "--pocket-bias", "17:0",
                  "--harmonic", "0.5:-30")
    assert res.exit_code == 0, res.output
    res = run_cli("simulate", "wheel", "--spins", "30", "--seed", "1", "--out", files / "rotor.csv", "--rotor", "--speed-drift", "-0.5")
    assert res.exit_code == 0, res.output


# (arguments without --json, the exit code); before, every one printed nothing on standard output
JSON_ERRORS = [
    (("verify", "{d}/nope"), 3),
    (("certify", "{d}/empty.csv"), 3),
    (("certify", "{d}/log.csv", "--equipment", "nope"), 4),
    (("certify", "{d}/log.csv", "--alpha", "2"), 2),
    (("audit", "--db", "{d}/nope.duckdb", "--all"), 3),
    (("audit", "--db", "{d}/st.duckdb", "--table", "nope"), 3),
    (("bits", "{d}/empty.csv", "--format", "binary"), 3),
    (("shuffle", "certify", "{d}/nope.csv", "--decks", "8"), 3),
    (("shuffle", "certify", "no-such-procedure"), 4),
    (("shuffle", "simulate", "no-such-procedure", "--out", "{d}/x.csv"), 4),
    (("shuffle", "house-edge", "no-such-procedure"), 4),
    (("shuffle", "riffles", "--cards", "1"), 2),
    (("power", "--effect", "0"), 2),
    (("power", "--equipment", "nope", "--effect", "0.1"), 4),
    (("house-edge", "poker"), 2),
    (("equipment", "nope"), 4),
    (("scaling", "--bits", "0", "--outcomes", "37", "--method", "modulo"), 2),
    (("ingest", "{d}/nope.csv", "--db", "{d}/j.duckdb"), 3),
    (("rejects", "--db", "{d}/nope.duckdb"), 3),
    (("export", "--db", "{d}/st.duckdb", "--parquet", "{d}/exp-j", "--table", "nope"), 3),
    (("simulate", "wheel", "--out", "{d}/j.csv", "--equipment", "nope"), 4),
]


@pytest.mark.parametrize("args,code", JSON_ERRORS, ids=[_id(a) for a, _ in JSON_ERRORS])
def test_json_on_an_error_exit_is_an_error_document(files, args, code):
    res = run_cli(*_args(files, args), "--json")
    assert res.exit_code == code, res.output
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == code and doc["error"] and doc["error"] in res.stderr, (res.stdout, res.stderr)
    assert not run_cli(*_args(files, args)).stdout  # without --json: nothing on standard output


def test_ingest_json_with_nothing_readable_is_one_document_with_the_error(files):
    """Before: the document without ``error``/``exit_code`` (the only case that printed JSON on exit 3)."""
    res = run_cli("ingest", files / "empty.csv", "--db", files / "e.duckdb", "--json")
    assert res.exit_code == 3
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == 3 and "nothing readable" in doc["error"] and doc["unreadable"] == [str(files / "empty.csv")]


def test_watch_json_lines_end_with_an_error_event(files):
    res = run_cli("watch", files / "nope.csv", "--no-record", "--db", files / "w.duckdb", "--json")
    assert res.exit_code == 3
    last = json.loads(res.stdout.strip().splitlines()[-1])
    assert last["event"] == "error" and last["exit_code"] == 3 and "no such file" in last["error"]


def test_json_on_an_internal_error(files, monkeypatch):
    """Exit 1 (a bug) with --json: the error document too."""
    import rngcert.equipment.paytables as pt

    monkeypatch.delenv("RNGCERT_DEBUG", raising=False)
    monkeypatch.setattr(pt, "seed_checks", lambda **kw: 1 / 0)
    res = run_cli("equipment", "european", "--json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    assert doc["exit_code"] == 1 and "ZeroDivisionError" in doc["error"]


def test_json_error_only_once_and_not_for_a_command_without_the_option(files):
    """``--json`` after ``--`` is a file name, and keygen has no --json: no JSON document for them."""
    res = run_cli("certify", "--json", "--", "--json")
    assert res.exit_code == 3 and res.stdout.count('"exit_code"') == 1
    res = run_cli("keygen", files / "k.pem", "--json")
    assert res.exit_code == 2 and not res.stdout
