"""Faults found by trying rngcert as a new user would, each fixed as a kind, with its right value."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import shared_file
from statsmodels.stats.multitest import multipletests

from rngcert.cli import EXIT, EXIT_INPUT
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.stats.multiple import holm
from rngcert.stats.result import Requirement, TestResult

EU = load_wheel("european")


def test_symbol_level_money_wheel_gap_test_uses_symbol_probabilities(tmp_path):
    """A fair money wheel logged by symbol must not FAIL the gap test (it used 1/k, not 24/52)."""
    mw = load_wheel("money-wheel-52")
    rng = np.random.default_rng(7)
    sym = np.array(mw.labels)[rng.integers(0, 52, 20000)]
    p = tmp_path / "sym.csv"
    p.write_text("result\n" + "\n".join(sym) + "\n")
    cert = certify_log([p], mw, seed=1, n_resamples=999, figures=False)
    gap = [r for r in cert.outcomes[0].results if r.name == "gap_test"][0]
    assert cert.report["level"] == "symbol"
    assert gap.details["hit_probability"] == pytest.approx(24 / 52)
    assert gap.pvalue > 0.001 and cert.verdict != "FAIL"


def test_cr_only_and_garbage_csv_are_input_errors(cli, tmp_path):
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"spin_id,result\r1,5\r2,17\r")
    res = cli("certify", cr, "--out", tmp_path / "r")
    assert res.exit_code == EXIT_INPUT and "bare CR" in res.output
    junk = tmp_path / "junk.csv"
    junk.write_bytes(bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8)))
    res = cli("certify", junk, "--out", tmp_path / "r")
    assert res.exit_code in (EXIT_INPUT, EXIT["INCONCLUSIVE"]) and "Traceback" not in res.output


def test_each_file_without_table_column_is_its_own_table(tmp_path):
    a, b = tmp_path / "t5.txt", tmp_path / "t6.txt"
    a.write_text("1,2,3,4\n")
    b.write_text("5,6,7\n")
    log = read_spin_log([a, b], EU)
    assert {k: v.n for k, v in log.tables.items()} == {"t5": 4, "t6": 3}
    pooled = read_spin_log([a, b], EU, pool=True)
    assert list(pooled.tables) == ["(all)"] and any("pooled" in n for n in pooled.notes)


def test_many_unreadable_rows_make_the_verdict_inconclusive(cli, tmp_path):
    p = tmp_path / "mw.csv"
    rng = np.random.default_rng(2)
    vals = rng.choice(["1", "2", "5", "10", "CoinFlip", "Pachinko"], 2000)
    p.write_text("result\n" + "\n".join(vals) + "\n")
    d = json.loads(cli("certify", p, "--seed", 1, "--resamples", 999, "--no-plots", "--json", "--out", tmp_path / "r").output)
    assert d["verdict"] in ("INCONCLUSIVE", "FAIL")
    assert any("could not be read" in r for r in d["tables"][0]["battery"]["reasons"]) or d["verdict"] == "FAIL"
    q = tmp_path / "x.csv"
    q.write_text("Number,Nr\n1,2\n")
    assert cli("certify", q, "--column", "result=Number", "--column", "result=Nr").exit_code == 2


def test_serial_pair_uses_the_requested_replicates(tmp_path):
    rng = np.random.default_rng(3)
    p = tmp_path / "s.txt"
    p.write_text(",".join(map(str, rng.integers(0, 37, 600))) + "\n")
    cert = certify_log([p], EU, seed=1, n_resamples=4999, figures=False)
    sp = [r for r in cert.outcomes[0].results if r.name == "serial_pair"][0]
    assert sp.method.endswith("R=4999")


def test_lab_wheel_with_few_numbers_has_no_erroring_tests(tmp_path):
    w = tmp_path / "small.toml"
    w.write_text('id="small"\nkind="roulette"\nwheel_order=["0","1","2","3","4","5","6","7","8","9","10","11"]\nred=["1","3","5","7","9","11"]\ngreen=["0"]\n')
    wheel = load_wheel(w)
    p = tmp_path / "s.txt"
    p.write_text(",".join(map(str, np.random.default_rng(4).integers(0, 12, 3000))) + "\n")
    cert = certify_log([p], wheel, seed=1, n_resamples=999, figures=False)
    assert cert.outcomes[0].errors == []
    na = {r.name for r in cert.outcomes[0].results if not r.applicable}
    assert "outside_low_high" in na


def test_rejects_show_the_cell_that_was_wrong(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("result,revolutions,void,timestamp\n5,x,false,2024-01-01T00:00:00Z\n6,4,maybe,2024-01-01T00:01:00Z\n7,4,false,yesterday\n8,4,false,2024-01-01T00:02:00Z\n")
    log = read_spin_log(p, EU)
    assert sorted(r.text for r in log.rejected) == ["maybe", "x", "yesterday"]


def test_semicolon_latin1_and_utf16_exports(tmp_path):
    s = tmp_path / "semi.csv"
    s.write_text("spin_id;Zeit;result\n1;10:00;5\n2;10:01;17\n")
    assert read_spin_log(s, EU, columns={}).sources[0].accepted == 2
    lat = tmp_path / "latin1.csv"
    lat.write_bytes("dealer,result\nJos\xe9,5\nMar\xeda,17\n".encode("latin-1"))
    log = read_spin_log(lat, EU)
    (t,) = log.tables.values()
    assert t.dealer_labels == ("José", "María") and any("latin-1" in n for n in log.notes)
    u16 = tmp_path / "u16.csv"
    u16.write_bytes("result\n5\n".encode("utf-16"))
    from rngcert.errors import InputError

    with pytest.raises(InputError, match="UTF-16"):
        read_spin_log(u16, EU)


def test_holm_rejects_at_exactly_alpha_like_statsmodels():
    p = np.array([0.001] * 10 + [0.5])
    rej, adj = holm(p, 0.011)
    r2 = multipletests(p, alpha=0.011, method="holm")[0]
    assert (rej == r2).all() and rej[:10].all()


def test_pvalue_is_never_zero():
    r = TestResult("t", Requirement.UNIFORMITY, 1e6, 36, 0.0, 10, "asymptotic")
    assert 0 < r.pvalue < 1e-300


def test_00_point_0_is_not_pocket_0(tmp_path):
    us = load_wheel("american")
    p = tmp_path / "a.csv"
    p.write_text("result\n00.0\n0.0\n7.0\n")
    log = read_spin_log(p, us)
    (t,) = log.tables.values()
    assert [us.labels[i] for i in t.outcomes] == ["0", "7"] and log.rejected[0].text == "00.0"


# ----------------------------------------------------------- second break test (shuffle, bits, store)
def test_shoe_log_without_before_stage_is_rebuilt_from_the_previous_shoe(cli, tmp_path):
    # issue 12: a log of dealt shoes only is certified by rebuilding each shoe's order before the
    # shuffle from the previous shoe of the table; a table with a single shoe stays INCONCLUSIVE
    log = tmp_path / "b.csv"
    cli("shuffle", "simulate", "baccarat-004", "--shoes", 60, "--seed", 3, "--out", log)
    after = tmp_path / "after.csv"
    after.write_text("".join(line for line in log.read_text().splitlines(True) if ",before," not in line and not line.rstrip().endswith(",before")))
    res = cli("shuffle", "certify", after, "--decks", 8, "--game", "baccarat", "--seed", 1, "--no-plots", "--resamples", 99, "--out", tmp_path / "r")
    assert res.exit_code != EXIT["INCONCLUSIVE"] and "rebuilt from the previous shoe" in res.output
    one = tmp_path / "one.csv"
    lines = after.read_text().splitlines(True)
    one.write_text(lines[0] + "".join(x for x in lines[1:] if x.split(",")[1] == "1"))
    res = cli("shuffle", "certify", one, "--decks", 8, "--game", "baccarat", "--seed", 1, "--no-plots", "--out", tmp_path / "r")
    assert res.exit_code == EXIT["INCONCLUSIVE"] and "no order before the shuffle" in res.output


def test_procedure_typos_and_log_options(cli, tmp_path):
    res = cli("shuffle", "certify", "baccarat-05")
    assert res.exit_code == 4 and "neither a file nor a packaged procedure" in res.output
    assert cli("shuffle", "certify", "baccarat-004", "--decks", 2).exit_code == 4  # refused by rule 1.3.1: an equipment error


def test_bits_too_short_for_the_battery_is_inconclusive(cli, tmp_path):
    res = cli("bits", "--source", "pcg64", "--streams", 1, "--length", 100, "--seed", 1, "--no-plots", "--out", tmp_path)
    assert res.exit_code == EXIT["INCONCLUSIVE"] and "could not be run" in res.output


def test_bits_reference_expansion_of_e_is_not_suspect(cli, tmp_path):
    f = shared_file("data", "nist-sts", "data.e")
    d = json.loads(cli("bits", f, "--format", "ascii", "--streams", 1, "--json", "--no-plots", "--out", tmp_path).output)
    assert d["verdict"] == "PASS"  # 188 p-values, about two below 0.01 by chance: not evidence


def test_ingest_of_nothing_readable_exits_3(cli, tmp_path):
    e = tmp_path / "empty.bin"
    e.write_bytes(b"")
    t = tmp_path / "text.txt"
    t.write_text("hello world\n")
    for f in (e, t):
        res = cli("ingest", f, "--db", tmp_path / "s.duckdb")
        assert res.exit_code == EXIT_INPUT


def test_ingest_symbol_level_money_wheel(cli, tmp_path):
    p = tmp_path / "ct.csv"
    p.write_text('WheelResult\n"1"\n"2"\n"CoinFlip"\n"1"\n')
    res = cli("ingest", p, "--equipment", "crazy-time", "--column", "result=WheelResult", "--db", tmp_path / "s.duckdb")
    assert res.exit_code == 0 and "4 new spins stored" in res.output


def test_audit_all_on_an_empty_store_is_an_input_error(cli, tmp_path):
    res = cli("audit", "--all", "--db", tmp_path / "empty.duckdb", "--out", tmp_path / "r")
    assert res.exit_code == EXIT_INPUT and ("no table with spins" in res.output or "rngcert ingest" in res.output)


def test_reingest_with_other_options_says_they_are_not_applied(cli, tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("1,2,3,4,5\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", p, "--db", db).exit_code == 0
    res = cli("ingest", p, "--db", db, "--equipment", "american", "--table", "ZZ")
    assert res.exit_code == 0 and "already ingested" in res.output and "not applied" in res.output and "'american'" in res.output
