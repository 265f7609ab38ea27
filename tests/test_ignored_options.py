"""An option the user gives is applied or refused (usage error, exit 2) — never silently ignored.

A lab engineer who typed ``--bit-order little`` or ``--alpha 0.001`` signs a report believing it
was used; each case here was accepted and then had no effect (exit 0/10/11/12 with the option
dropped). The refusal names the option and says why, before any work is done.
"""

from __future__ import annotations

import pytest

CLUSTER = "tcp://127.0.0.1:1"  # never contacted: the refusal comes first


def _refused(r, *options: str) -> None:
    assert r.exit_code == 2, r.output
    text = r.output + (r.stderr or "")
    for o in options:
        assert o in text, text


@pytest.fixture
def dump(tmp_path):
    p = tmp_path / "dump.bin"
    p.write_bytes(bytes(range(256)) * 8)
    return p


@pytest.fixture
def shoe_log(tmp_path):
    p = tmp_path / "scanner.csv"
    p.write_text("shoe_id,position,card\n1,1,AS\n", encoding="utf-8")
    return p


# --------------------------------------------------------------------------- bits
@pytest.mark.parametrize("extra, option", [(("--format", "binary"), "--format"), (("--bit-order", "little"), "--bit-order")])
def test_bits_source_refuses_file_options(cli, tmp_path, extra, option):
    r = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 1000, "--seed", 1, *extra, "--no-plots", "--out", tmp_path / "r")
    _refused(r, option, "FILE")


def test_bits_ascii_refuses_bit_order(cli, tmp_path, dump):
    r = cli("bits", dump, "--format", "ascii", "--bit-order", "little", "--length", 1000, "--no-plots", "--out", tmp_path / "r")
    _refused(r, "--bit-order", "binary")


def test_bits_file_refuses_seed(cli, tmp_path, dump):
    r = cli("bits", dump, "--format", "binary", "--length", 1000, "--seed", 3, "--no-plots", "--out", tmp_path / "r")
    _refused(r, "--seed", "--source")


def test_bits_binary_file_still_takes_bit_order(cli, tmp_path, dump):
    """The refusals do not touch the combination where --bit-order applies: a binary FILE reads little-endian."""
    r = cli("bits", dump, "--format", "binary", "--bit-order", "little", "--length", 1000, "--streams", 2, "--no-plots", "--json",
            "--out", tmp_path / "r")
    assert r.exit_code in (0, 10, 11, 12), r.output
    assert '"bit_order": "little"' in r.output


def test_workers_with_scheduler_refused(cli, tmp_path):
    r = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 1000, "--seed", 1, "--workers", 2, "--scheduler", CLUSTER,
            "--no-plots", "--out", tmp_path / "r")
    _refused(r, "--workers", "--scheduler")


# --------------------------------------------------------------------------- shuffle certify
def test_procedure_refuses_max_rejected(cli, tmp_path):
    r = cli("shuffle", "certify", "baccarat-004", "--shoes", 10, "--max-rejected", 0.1, "--no-sensitivity", "--out", tmp_path / "r")
    _refused(r, "--max-rejected", "SHOELOG")


@pytest.mark.parametrize("extra, option", [(("--shoes", 100), "--shoes"), (("--burn-in", 3), "--burn-in"),
                                           (("--sensitivity-shoes", 200), "--sensitivity-shoes")])
def test_shoelog_refuses_procedure_options(cli, tmp_path, shoe_log, extra, option):
    r = cli("shuffle", "certify", shoe_log, "--decks", 8, *extra, "--out", tmp_path / "r")
    _refused(r, option, "PROCEDURE")


def test_no_sensitivity_refuses_sensitivity_shoes(cli, tmp_path):
    r = cli("shuffle", "certify", "baccarat-004", "--shoes", 10, "--no-sensitivity", "--sensitivity-shoes", 200, "--out", tmp_path / "r")
    _refused(r, "--sensitivity-shoes", "--no-sensitivity")


def test_shoelog_rule_without_procedure_refused(cli, tmp_path, shoe_log):
    r = cli("shuffle", "certify", shoe_log, "--decks", 6, "--game", "blackjack", "--rule", "H17", "--out", tmp_path / "r")
    _refused(r, "--rule", "--procedure")


def test_rule_of_a_baccarat_procedure_refused(cli, tmp_path):
    r = cli("shuffle", "certify", "baccarat-004", "--shoes", 10, "--no-sensitivity", "--rule", "H17", "--out", tmp_path / "r")
    _refused(r, "--rule", "blackjack")


# --------------------------------------------------------------------------- audit, watch, record
@pytest.mark.parametrize("extra, option", [(("--group-control", "bh"), "--group-control"), (("--audits-per-year", 4), "--audits-per-year"),
                                           (("--workers", 2), "--workers"), (("--scheduler", CLUSTER), "--scheduler")])
def test_audit_one_table_refuses_all_options(cli, tmp_path, extra, option):
    r = cli("audit", "--db", tmp_path / "none.duckdb", "--table", "T7", *extra, "--out", tmp_path / "r")
    _refused(r, option, "--all")


@pytest.mark.parametrize("extra, option", [(("--equipment", "american"), "--equipment"), (("--column", "result=Number"), "--column"),
                                           (("--format", "jsonl"), "--format"), (("--settle", 1), "--settle")])
def test_watch_table_refuses_log_options(cli, tmp_path, extra, option):
    r = cli("watch", "--table", "T7", "--db", tmp_path / "none.duckdb", *extra)
    _refused(r, option, "LOG")


def _record_capture(cli, tmp_path, *extra):
    """``rngcert record`` of an empty capture file with ``extra`` options."""
    cap = tmp_path / "capture.log"
    cap.write_text("", encoding="utf-8")
    return cli("record", cap, "--out", tmp_path / "spins.csv", *extra)


@pytest.mark.parametrize("extra, option", [(("--alpha", 0.001), "--alpha"), (("--horizon", 5000), "--horizon"), (("--block", 10), "--block"),
                                           (("--equipment", "american"), "--equipment")])
def test_record_without_watch_refuses_detector_options(cli, tmp_path, extra, option):
    r = _record_capture(cli, tmp_path, *extra)
    _refused(r, option, "--watch")
    assert not (tmp_path / "spins.csv").exists()


# --------------------------------------------------------------------------- simulate wheel
@pytest.mark.parametrize("extra, option, why", [(("--word-bits", 8), "--word-bits", "--mapping"),
                                                (("--signature-dealer", 2), "--signature-dealer", "--signature"),
                                                (("--protocol", "slingshot2"), "--protocol", "--format protocol")])
def test_simulate_wheel_refuses_options_of_another_mode(cli, tmp_path, extra, option, why):
    out = tmp_path / "sim.csv"
    r = cli("simulate", "wheel", "--spins", 100, "--seed", 1, *extra, "--out", out)
    _refused(r, option, why)
    assert not out.exists()


def test_simulate_protocol_refuses_table_and_word_bits(cli, tmp_path):
    out = tmp_path / "wheel.log"
    r = cli("simulate", "wheel", "--format", "protocol", "--spins", 20, "--seed", 1, "--table", "W7", "--out", out)
    _refused(r, "--table")
    assert not out.exists()


@pytest.mark.parametrize("extra", [("--rotor",), ("--format", "protocol")])
def test_simulate_json_takes_effect_in_rotor_and_protocol_modes(cli, tmp_path, extra):
    """--json printed nothing with --rotor or --format protocol (exit 0): it prints the sidecar's metadata as in the plain mode."""
    import json

    out = tmp_path / "sim.out"
    r = cli("simulate", "wheel", *extra, "--spins", 20, "--seed", 1, "--json", "--out", out)
    assert r.exit_code == 0, r.output
    meta = json.loads(r.stdout)
    assert meta["log"] == str(out) and meta["spins"] == 20
    assert meta["seed_entropy"] == json.loads((tmp_path / "sim.out.json").read_text(encoding="utf-8"))["seed_entropy"]


# --------------------------------------------------------------------------- power
@pytest.mark.parametrize("extra, option", [(("--seed", 1), "--seed"), (("--resamples", 500), "--resamples"), (("--alt-samples", 500), "--alt-samples")])
def test_power_refuses_simulation_options_when_nothing_is_simulated(cli, extra, option):
    """pocket_chisquare's power comes from the non-central chi-square law: a seed printed nowhere and used for nothing."""
    r = cli("power", "-e", "european", "--effect", 0.1, *extra)
    _refused(r, option, "--method simulation")


def test_power_simulation_still_takes_seed(cli):
    args = ("power", "-e", "european", "--effect", 0.3, "--test", "max_count", "--resamples", 200, "--alt-samples", 200, "--json")
    a, b = cli(*args, "--seed", 5), cli(*args, "--seed", 5)
    assert a.exit_code == 0 and a.output == b.output and '"seed": "5"' in a.output, a.output


def test_power_with_effect_and_spins_refuses_target_power(cli):
    r = cli("power", "-e", "european", "--effect", 0.1, "--spins", 5000, "--power", 0.8)
    _refused(r, "--power", "computed")


@pytest.mark.parametrize("extra, option", [(("--test", "max_count"), "--test"), (("--method", "simulation"), "--method")])
def test_power_symbol_wheel_refuses_test_choice(cli, extra, option):
    r = cli("power", "-e", "crazy-time", "--effect", 0.5, *extra)
    _refused(r, option, "symbol chi-square")


# --------------------------------------------------------------------------- ingest
@pytest.mark.parametrize("name, text", [("t.csv", "table,spin_id,result\nA,1,5\nA,2,7\n"),
                                        ("t.jsonl", '{"table": "A", "spin_id": 1, "result": "5"}\n{"table": "A", "spin_id": 2, "result": "7"}\n')])
def test_ingest_table_option_on_a_log_with_a_table_column_refused(cli, tmp_path, name, text):
    """--table ZZZ on a log with a table column stored the spins under the log's tables (A), exit 0."""
    log = tmp_path / name
    log.write_text(text, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    r = cli("ingest", log, "--table", "ZZZ", "--db", db)
    assert r.exit_code == 3, r.output
    assert "--table" in r.stderr and "table column" in r.stderr and name in r.stderr, r.stderr
    ok = cli("ingest", log, "--db", db)  # nothing of the refused call is stored: the file is new to the store
    assert ok.exit_code == 0 and "2 new spins stored" in ok.output, ok.output


def test_ingest_table_option_names_a_log_without_table_column(cli, tmp_path):
    log = tmp_path / "t.csv"
    log.write_text("spin_id,result\n1,5\n2,7\n", encoding="utf-8")
    r = cli("ingest", log, "--table", "ZZZ", "--db", tmp_path / "s.duckdb")
    assert r.exit_code == 0 and "tables: ZZZ" in r.output, r.output


@pytest.mark.parametrize("extra, option", [(("--equipment", "american"), "--equipment"), (("--table", "T"), "--table"),
                                           (("--column", "result=Number"), "--column"), (("--format", "csv"), "--format")])
def test_ingest_export_folder_refuses_log_options(cli, tmp_path, extra, option):
    folder = tmp_path / "exported"
    folder.mkdir()
    r = cli("ingest", folder, *extra, "--db", tmp_path / "s.duckdb")
    _refused(r, option, "export")


# --------------------------------------------------------------------------- certify --tests
def test_followup_refuses_a_standard_whose_clauses_it_cannot_run(cli, tmp_path):
    """--tests pocket_chisquare --standard west-virginia-…: three of the four clauses (runs, correlation, serial
    correlation) were 'not applicable: none of its tests is in this battery' and the verdict PASS, exit 0."""
    r = cli("certify", "--tests", "pocket_chisquare", "--standard", "west-virginia-29-22B-909", "--resamples", 99, "--seed", 1, "--no-plots",
            "--out", tmp_path / "r")
    _refused(r, "--standard", "--tests", "runs", "serial-correlation")


def test_followup_with_the_tests_a_standard_names_still_runs(cli, tmp_path):
    tests = "pocket_chisquare,runs_colour,serial_pair,serial_correlation"
    r = cli("certify", "--tests", tests, "--standard", "west-virginia-29-22B-909", "--resamples", 99, "--seed", 1, "--no-plots", "--out", tmp_path / "r")
    assert r.exit_code in (0, 10, 11, 12), r.output


# --------------------------------------------------------------------------- house-edge
def test_house_edge_wheel_game_refuses_decks(cli):
    _refused(cli("house-edge", "roulette", "--decks", 6), "--decks", "roulette")


def test_house_edge_baccarat_refuses_equipment(cli):
    _refused(cli("house-edge", "baccarat", "--equipment", "european"), "--equipment", "baccarat")


def test_house_edge_baccarat_still_takes_decks(cli):
    r = cli("house-edge", "baccarat", "--decks", 6)
    assert r.exit_code == 0 and "exact 6-deck probabilities" in r.output, r.output


@pytest.mark.parametrize("extra, option", [(("--interval", 5), "--interval"), (("--max-idle", 60), "--max-idle")])
def test_watch_without_follow_refuses_polling_options(cli, tmp_path, extra, option):
    """A regular file (or a stored table) read once: no poll, no idle time. A FIFO keeps them (it is read until its writer closes it)."""
    log = tmp_path / "spins.csv"
    log.write_text("result\n" + "\n".join(str(i % 37) for i in range(500)) + "\n", encoding="utf-8")
    _refused(cli("watch", log, "--no-record", *extra), option, "--follow")
    _refused(cli("watch", "--table", "T7", "--db", tmp_path / "none.duckdb", *extra), option, "--follow")


def test_min_round_interval_on_a_log_without_timestamps_is_an_input_error(cli, tmp_path):
    """--min-round-interval 10s on a permanence list (no times): the check was skipped, the report as without it (exit 0)."""
    log = tmp_path / "perm.txt"
    log.write_text(",".join(str((7 * i + i // 37) % 37) for i in range(2000)) + "\n", encoding="utf-8")
    common = ("--resamples", 99, "--seed", 1, "--no-plots", "--out", tmp_path / "r")
    r = cli("certify", log, "--min-round-interval", "10s", *common)
    assert r.exit_code == 3, r.output
    assert "--min-round-interval" in r.stderr and "no timestamps" in r.stderr and "perm.txt" in r.stderr, r.stderr
    assert cli("certify", log, "--min-round-interval", "0", *common).exit_code in (0, 10, 11, 12)
    assert cli("certify", log, *common).exit_code in (0, 10, 11, 12)  # the default check applies where it can, silently


# --------------------------------------------------------------------------- older names beside the new ones
def test_bits_processes_with_workers_refused(cli, tmp_path):
    """--processes (the hidden older name of --workers) beside --workers: one of the two numbers was dropped."""
    r = cli("bits", "--source", "pcg64", "--streams", 2, "--length", 1000, "--seed", 1, "--workers", 1, "--processes", 2, "--no-plots",
            "--out", tmp_path / "r")
    _refused(r, "--processes", "--workers")


def test_audit_jobs_with_workers_refused(cli, tmp_path):
    r = cli("audit", "--all", "--db", tmp_path / "none.duckdb", "--workers", 1, "--jobs", 2, "--out", tmp_path / "r")
    _refused(r, "--jobs", "--workers")


@pytest.mark.parametrize("extra, option", [(("--baud", 19200), "--baud"), (("--parity", "E"), "--parity"), (("--bytesize", "7"), "--bytesize"),
                                           (("--stopbits", "2"), "--stopbits")])
def test_record_from_a_capture_file_refuses_serial_settings(cli, tmp_path, extra, option):
    """A capture file is read as bytes: a serial line's settings do nothing (the run printed them as if applied)."""
    r = _record_capture(cli, tmp_path, *extra)
    _refused(r, option, "capture file")
