"""Wheel definitions: packaged layouts match the references; lab files are validated."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import shared_file

from rngcert.equipment.wheel import load_wheel, packaged_wheels
from rngcert.errors import EquipmentError


def _ref(name):
    return json.loads(shared_file("reference", name).read_text())


def test_packaged_ids():
    assert {"european", "american", "money-wheel-52", "crazy-time"} <= set(packaged_wheels())


def test_european_matches_reference_wheel_order_and_colours():
    ref = _ref("roulette.json")
    w = load_wheel("european")
    assert list(w.labels) == [str(x) for x in ref["european_wheel_order"]]
    red = {str(x) for x in ref["red"]}
    assert {lab for lab, c in zip(w.labels, w.colours) if c == "red"} == red
    assert [lab for lab, c in zip(w.labels, w.colours) if c == "green"] == ["0"]
    # colours alternate red/black around the wheel apart from the zero
    cols = [c for c in w.colours if c != "green"]
    assert all(a != b for a, b in zip(cols, cols[1:]))


def test_american_matches_reference():
    ref = _ref("roulette.json")
    w = load_wheel("american")
    assert list(w.labels) == ref["american_wheel_order"]
    assert w.k == 38


def test_outside_bet_partitions():
    sp = load_wheel("european").position_space()
    lab = np.array(sp.labels)
    par, _ = sp.categories["parity"]
    assert set(lab[par == 0].astype(int)) == set(range(1, 37, 2))
    doz, _ = sp.categories["dozen"]
    assert set(lab[doz == 2].astype(int)) == set(range(25, 37))
    col, _ = sp.categories["column"]
    assert set(lab[col == 0].astype(int)) == set(range(1, 37, 3))
    assert (doz == -1).sum() == 1 and lab[doz == -1][0] == "0"


def test_money_wheel_counts_rule_2_3():
    ref = _ref("money_wheel.json")
    w = load_wheel("money-wheel-52")
    assert w.k == 52
    assert dict(zip(w.symbols, w.symbol_counts)) == ref["symbol_sections"]
    sp = w.symbol_space()
    assert np.allclose(sp.probs, np.array([24, 12, 8, 4, 2, 1, 1]) / 52)


def test_crazy_time_counts():
    w = load_wheel("crazy-time")
    assert w.k == 54 and not w.order_known
    assert dict(zip(w.symbols, w.symbol_counts))["1"] == 21


@pytest.mark.parametrize(
    "body,match",
    [
        ('id="x"\nkind="roulette"\nwheel_order=["0","1","1"]\nred=["1"]\n', "more than once"),
        ('id="x"\nkind="roulette"\nwheel_order=["0","1","2"]\nred=["5"]\n', "not on the wheel"),
        ('id="x"\nkind="wheel"\n', "kind"),
        ('id="x"\nkind="money-wheel"\n', "needs 'sections'"),
        ('id="x"\nkind="money-wheel"\n[segment_counts]\na=-1\nb=2\n', "positive integer"),
        ('kind="roulette"\n', "missing key 'id'"),
        ("id = [", "not valid TOML"),
    ],
)
def test_invalid_lab_files_name_the_problem(tmp_path, body, match):
    p = tmp_path / "w.toml"
    p.write_text(body)
    with pytest.raises(EquipmentError, match=match):
        load_wheel(p)


def test_unknown_id_lists_packaged():
    with pytest.raises(EquipmentError, match="packaged wheels: .*european"):
        load_wheel("mystery")


def test_lab_file_roundtrip(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('id="mine"\nkind="money-wheel"\nsections=["A","B","A","C"]\n')
    w = load_wheel(p)
    assert w.symbols == ("A", "B", "C") and w.symbol_counts == (2, 1, 1)


def _small_wheel_log(tmp_path, toml: str, labels, n=3000, seed=3):
    w = tmp_path / "w.toml"
    w.write_text(toml)
    x = np.random.default_rng(seed).integers(0, len(labels), n)
    log = tmp_path / "w.csv"
    log.write_text("result\n" + "\n".join(labels[i] for i in x) + "\n")
    return w, log


@pytest.mark.parametrize("k", [3, 5])
def test_lab_wheel_of_few_pockets_is_certified_not_an_input_error(tmp_path, k):
    """A lab's roulette wheel of 3-5 pockets (the loader accepts 3 or more) stopped with exit 3:
    'sector width 5 must be smaller than the number of positions k=5' (the power of the verdict) or
    'sector_scan: need 1 <= min_len <= max_len' (k = 3). What needs more pockets is not applicable, with why."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    labels = [str(i) for i in range(k)]
    toml = ('id = "small"\nkind = "roulette"\nwheel_order = [' + ", ".join(f'"{x}"' for x in labels) + ']\nred = ["1"]\ngreen = ["0"]\n')
    w, log = _small_wheel_log(tmp_path, toml, labels)
    cert = certify_log([log], load_wheel(w), seed=1, n_resamples=99, figures=False)
    rep = cert.outcomes[0]
    assert cert.verdict != "FAIL" and not any("could not be run" in r for r in rep.reasons)
    power = json.dumps(cert.report, default=str)
    assert f"a sector of 5 pockets needs a wheel of more than 5 (this one has {k})" in power
    if k == 3:
        assert "need a wheel of 4 or more (this one has 3)" in power


def test_money_wheel_of_one_symbol_is_an_equipment_error(tmp_path, cli):
    """sections of one symbol: refused on load (exit 4), as [segment_counts] with one symbol is;
    it was accepted and certify stopped with 'k (wheel positions) must be an integer >= 3, got 1' (exit 3)."""
    w = tmp_path / "one.toml"
    w.write_text('id = "one"\nkind = "money-wheel"\nsections = ["A", "A", "A", "A"]\n')
    res = cli("equipment", str(w))
    assert res.exit_code == 4 and "one symbol only" in res.output


def test_two_symbol_money_wheel_read_by_symbol_is_inconclusive_not_an_error(tmp_path):
    """Two symbols read by symbol (k = 2): the symbol power law needs 3 outcomes. It stopped with exit 3
    ('k (wheel positions) must be an integer >= 3, got 2'); now the power is 'not stated' and the
    declared minimum bias cannot be verified, so no PASS."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    w, log = _small_wheel_log(tmp_path, 'id = "two"\nkind = "money-wheel"\nsections = ["A", "B", "A", "B", "A", "B"]\n', ["A", "B"])
    cert = certify_log([log], load_wheel(w), seed=1, n_resamples=99, figures=False, required_bias=0.2)
    assert cert.verdict == "INCONCLUSIVE"
    assert any("cannot be verified" in r and "has 2" in r for r in cert.outcomes[0].reasons)


def test_lab_wheel_file_cannot_pose_as_a_packaged_wheel(tmp_path, cli):
    """A 4-pocket file with id = "european" was accepted: reported as 'european' and, on ingest, merged
    into a stored European table (the store checks a table's wheel by id), whose audit then FAILed.
    It is an equipment error (exit 4); the packaged file itself, read as a file, still loads."""
    f = tmp_path / "fake.toml"
    f.write_text('id = "european"\nkind = "roulette"\nwheel_order = ["0", "1", "2", "3"]\nred = ["1", "3"]\ngreen = ["0"]\n')
    with pytest.raises(EquipmentError, match="id 'european' is the packaged wheel's.*4 pockets.*its own id"):
        load_wheel(f)
    assert load_wheel(load_wheel("european").path).labels == load_wheel("european").labels
    db = tmp_path / "s.duckdb"
    log = tmp_path / "t.csv"
    log.write_text("spin_id,table,result\n" + "".join(f"{i},T2,{i % 37}\n" for i in range(1, 200)))
    assert cli("ingest", str(log), "--db", str(db)).exit_code == 0
    log2 = tmp_path / "t2.csv"
    log2.write_text("spin_id,table,result\n" + "".join(f"{i},T2,{i % 4}\n" for i in range(1000, 1200)))
    res = cli("ingest", str(log2), "--db", str(db), "--equipment", str(f))
    assert res.exit_code == 4 and "its own id" in res.output


def test_store_keeps_a_lab_wheel_file_by_its_absolute_path(tmp_path, cli, monkeypatch):
    """Ingested with a relative --equipment eq/lab.toml, the table's wheel is stored by its absolute
    path: an audit from another folder reads it (it stopped with "equipment file 'eq/lab.toml' does not exist")."""
    (tmp_path / "eq").mkdir()
    (tmp_path / "eq" / "lab.toml").write_text(
        'id = "lab6"\nkind = "roulette"\nwheel_order = ["0", "1", "2", "3", "4", "5"]\nred = ["1", "3", "5"]\ngreen = ["0"]\n')
    x = np.random.default_rng(6).integers(0, 6, 600)
    (tmp_path / "t.csv").write_text("spin_id,table,result\n" + "".join(f"{i},L6,{v}\n" for i, v in enumerate(x, 1)))
    monkeypatch.chdir(tmp_path)
    assert cli("ingest", "t.csv", "--db", "s.duckdb", "--equipment", "eq/lab.toml").exit_code == 0
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    res = cli("audit", "--table", "L6", "--db", "../s.duckdb", "--no-record", "--out", "r", "--seed", "1")
    assert res.exit_code in (0, 10, 11, 12) and "does not exist" not in res.output, res.output


def test_lab_wheel_without_both_colours_gets_no_test_error(tmp_path):
    """An all-green lab wheel (accepted on load) was INCONCLUSIVE with 'test could not be run: longest_colour_run:
    both colours need probability > 0' and 'gap_test: target must contain some but not all positions': the colour
    tests are not applicable (with why), and the gap test counts the top outcome as on a wheel without colours."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    toml = 'id = "allg"\nkind = "roulette"\nwheel_order = ["0", "1", "2", "3", "4", "5"]\nred = []\ngreen = ["0", "1", "2", "3", "4", "5"]\n'
    w, log = _small_wheel_log(tmp_path, toml, [str(i) for i in range(6)])
    cert = certify_log([log], load_wheel(w), seed=1, n_resamples=99, figures=False)
    assert not any("could not be run" in r for r in cert.outcomes[0].reasons), cert.outcomes[0].reasons
    assert not cert.report["tables"][0]["battery"]["errors"]


def test_a_packaged_id_names_the_packaged_wheel_whatever_the_current_folder_holds(tmp_path, monkeypatch):
    """A file or folder named like a packaged wheel in the current folder was read in its place (``--equipment european``
    certified a lab's 6-pocket file named ``european``) or was an error; the packaged id is the packaged wheel, and the
    lab's file of that name is given as a path."""
    from rngcert.equipment.wheel import load_wheel

    monkeypatch.chdir(tmp_path)
    (tmp_path / "european").write_text(
        'id = "lab6"\nkind = "roulette"\nwheel_order = ["0", "1", "2", "3", "4", "5"]\nred = ["1", "3", "5"]\ngreen = ["0"]\n')
    (tmp_path / "american").mkdir()
    assert load_wheel("european").id == "european" and len(load_wheel("european").labels) == 37
    assert load_wheel("american").id == "american"
    assert load_wheel("./european").id == "lab6"
