"""Files without a table column are one table each, named after the file: two files of one name in different
folders are two tables (they were one, their spins concatenated: two lists that could each carry no verdict PASSed
as one), and a process substitution is named by its path (it was table ``63``)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _support import compact_read

from rngcert.collect.spinlog import read_spin_log
from rngcert.collect.spinlog.tablenames import STDIN_NAME, file_tables, same_name_note
from rngcert.equipment.wheel import load_wheel


def _perm(path, seed, n=3000):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(" ".join(map(str, np.random.default_rng(seed).integers(0, 37, n))) + "\n")
    return path


def test_names_of_files():
    assert file_tables(["d1/perm.txt", "d2/perm.txt", "T5.csv"]) == {"d1/perm.txt": "d1/perm", "d2/perm.txt": "d2/perm", "T5.csv": "T5"}
    # as many folders as tell them apart; a file in the current folder keeps its bare name
    assert file_tables(["a/x/log.csv", "b/x/log.csv", "log.csv"]) == {"a/x/log.csv": "a/x/log", "b/x/log.csv": "b/x/log", "log.csv": "log"}
    # folders cannot tell them apart: the paths given
    assert file_tables(["log.csv", "log.jsonl"]) == {"log.csv": "log.csv", "log.jsonl": "log.jsonl"}
    assert file_tables(["/dev/fd/63", "/proc/self/fd/5", STDIN_NAME]) == {"/dev/fd/63": "/dev/fd/63", "/proc/self/fd/5": "/proc/self/fd/5",
                                                                         STDIN_NAME: STDIN_NAME}
    assert same_name_note(["a.csv", "b.csv"]) is None


def test_one_file_twice_is_one_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _perm(tmp_path / "a.txt", 1)
    assert file_tables(["a.txt", "./a.txt", str(tmp_path / "a.txt")]) == {"a.txt": "a", "./a.txt": "a", str(tmp_path / "a.txt"): "a"}
    assert same_name_note(["a.txt", "./a.txt"]) is None


@pytest.mark.parametrize("exact", [False, True], ids=["compact", "exact"])
def test_same_name_in_two_folders_two_tables(tmp_path, monkeypatch, exact):
    a, b = _perm(tmp_path / "d1" / "perm.txt", 3), _perm(tmp_path / "d2" / "perm.txt", 4)
    with compact_read(monkeypatch, exact=exact) as (_, taken):
        log = read_spin_log([a, b], load_wheel("european"))
    assert bool(taken) is not exact
    assert sorted(log.tables) == ["d1/perm", "d2/perm"], sorted(log.tables)
    assert [t.n for t in log.tables.values()] == [3000, 3000]
    assert any("separate tables" in n and "d1/perm" in n for n in log.notes), log.notes
    pooled = read_spin_log([a, b], load_wheel("european"), pool=True)
    assert [t.n for t in pooled.tables.values()] == [6000]


def test_two_lists_of_one_name_are_not_certified_as_one(tmp_path, cli):
    """The case found: two 3,000-spin lists named perm.txt in two folders PASSed as one 6,000-spin table."""
    a, b = _perm(tmp_path / "d1" / "perm.txt", 3), _perm(tmp_path / "d2" / "perm.txt", 4)
    r = cli("certify", a, b, "--no-plots", "--json", "--out", tmp_path / "out", "--seed", "1")
    rep = json.loads(r.output)
    assert [(t["table"], t["n"], t["battery"]["verdict"]) for t in rep["tables"]] == [("d1/perm", 3000, "INCONCLUSIVE"), ("d2/perm", 3000, "INCONCLUSIVE")]
    assert rep["verdict"] == "INCONCLUSIVE"


@pytest.mark.skipif(not os.path.exists("/dev/fd"), reason="no /dev/fd on this system")
def test_pipe_named_by_its_path(tmp_path):
    """A pipe read as /dev/fd/N (what ``<(…)`` gives) is table /dev/fd/N, not N."""
    r, w = os.pipe()
    os.write(w, b"spin_id,result\n" + b"".join(f"{i},{i % 37}\n".encode() for i in range(1, 201)))
    os.close(w)
    try:
        log = read_spin_log([f"/dev/fd/{r}"], load_wheel("european"))
    finally:
        os.close(r)
    assert list(log.tables) == [f"/dev/fd/{r}"]


def _folder(d):
    return next(p for p in d.iterdir() if p.is_dir())


@pytest.mark.parametrize("given", ["absolute", "renamed"])
def test_rerun_names_tables_as_recorded(tmp_path, monkeypatch, cli, given):
    """verify --rerun from another folder: the logs given by absolute path (perm.txt, sub/perm.txt were tables perm and
    sub/perm; read as /…/w/perm.txt they were w/perm and sub/perm) or as renamed copies (y.txt for perm.txt) are the
    tables the report recorded; the rerun said 'table perm: only in the recorded report' and NOT VERIFIED."""
    w = tmp_path / "w"
    _perm(w / "perm.txt", 5, 6000), _perm(w / "sub" / "perm.txt", 6, 6000)
    monkeypatch.chdir(w)
    r = cli("certify", "perm.txt", "sub/perm.txt", "--no-plots", "--resamples", "999", "--seed", "1", "--out", tmp_path / "out")
    assert r.exit_code in (0, 10, 11, 12), r.output
    folder = _folder(tmp_path / "out")
    assert sorted(t["table"] for t in json.loads((folder / "report.json").read_text())["tables"]) == ["perm", "sub/perm"]
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    if given == "absolute":
        logs = [w / "perm.txt", w / "sub" / "perm.txt"]
    else:
        logs = [other / "y.txt", other / "x.txt"]
        logs[0].write_bytes((w / "perm.txt").read_bytes()), logs[1].write_bytes((w / "sub" / "perm.txt").read_bytes())
    r = cli("verify", "--rerun", folder, *logs)
    assert "values recomputed, all equal" in r.output, r.output


def test_str_path_with_dot_is_read(tmp_path, monkeypatch):
    """read_spin_log(["./perm.txt"]) (a str, as the Python API takes it) failed with KeyError 'perm.txt' on the compact
    path: the table names were keyed by the str given and looked up by its Path."""
    monkeypatch.chdir(tmp_path)
    _perm(tmp_path / "perm.txt", 7)
    log = read_spin_log(["./perm.txt"], load_wheel("european"))
    assert list(log.tables) == ["perm"] and log.tables["perm"].n == 3000


@pytest.mark.parametrize("exact", [False, True], ids=["compact", "exact"])
def test_names_of_different_stems_never_meet(tmp_path, monkeypatch, exact):
    """log.csv beside log.jsonl is table 'log.csv', and log.csv.txt (stem 'log.csv') was table 'log.csv' too: two files,
    one table, their spins concatenated."""
    assert file_tables(["log.csv", "log.jsonl", "log.csv.txt"]) == {"log.csv": "log.csv", "log.jsonl": "log.jsonl", "log.csv.txt": "log.csv.txt"}
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(8)
    (tmp_path / "log.csv").write_text("result\n" + "\n".join(map(str, rng.integers(0, 37, 300))) + "\n")
    (tmp_path / "log.jsonl").write_text("".join(json.dumps({"result": str(v)}) + "\n" for v in rng.integers(0, 37, 300)))
    (tmp_path / "log.csv.txt").write_text(" ".join(map(str, rng.integers(0, 37, 300))) + "\n")
    with compact_read(monkeypatch, exact=exact):
        log = read_spin_log(["log.csv", "log.jsonl", "log.csv.txt"], load_wheel("european"))
    assert {t: v.n for t, v in log.tables.items()} == {"log.csv": 300, "log.jsonl": 300, "log.csv.txt": 300}
