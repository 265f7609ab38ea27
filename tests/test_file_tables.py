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
