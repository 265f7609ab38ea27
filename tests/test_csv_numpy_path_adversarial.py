"""Adversarial inputs for the numpy byte-level CSV reader (:mod:`rngcert.collect.spinlog.fastcsv`): each is read
with and without that path and must give the same log, rows and store (the exact path names every malformed row);
a property test mixes valid and odd cells in small logs and compares the two paths' reads of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rngcert.collect import csvstream

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_fast_paths import CASES, _read_all  # noqa: E402
from test_csv_numpy_path import _spy, _without_numpy_path  # noqa: E402

_OK = CASES["valid"]


def _row(**kw) -> bytes:
    cells = {"sid": "61", "ts": "2026-01-01T00:01:01Z", "t": "T1", "d": "D2", "dir": "cw", "rev": "6", "v": "false", "r": "7"}
    cells.update(kw)
    return (",".join(cells.values()) + "\n").encode()


def _extra_column(rows: list[str]) -> bytes:
    return ("spin_id,result,comment\n" + "".join(f"{i},{i % 37},c{i}\n" for i in range(1, 50)) + "".join(rows)).encode()


ADVERSARIAL = {
    # a line longer than csvstream.MAX_LINE, made long by a column this path does not read: the exact path rejects it unread
    "line longer than MAX_LINE (a long comment)": _extra_column(["50,5," + "x" * (csvstream.MAX_LINE + 50_000) + "\n", "51,6,c\n"]),
    "line just under MAX_LINE (a long comment)": _extra_column(["50,5," + "x" * (csvstream.MAX_LINE - 100) + "\n", "51,6,c\n"]),
}


def _compare(case: str, data: bytes, tmp_path, block_size: int = 4096) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CASES, case, data)
        mp.setattr(csvstream, "BLOCK_SIZE", block_size)
        with pytest.MonkeyPatch.context() as off:
            _without_numpy_path(off)
            want = _read_all(case, tmp_path / "exact")
        got = _read_all(case, tmp_path / "numpy")
    assert got == want


@pytest.mark.parametrize("block_size", [4096, csvstream.BLOCK_SIZE])
@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_adversarial_inputs_read_the_same(case, block_size, tmp_path):
    _compare(case, ADVERSARIAL[case], tmp_path, block_size)


def test_a_line_longer_than_max_line_takes_the_exact_path(tmp_path, monkeypatch):
    taken = _spy(monkeypatch)
    monkeypatch.setitem(CASES, "long", ADVERSARIAL["line longer than MAX_LINE (a long comment)"])
    got = _read_all("long", tmp_path / "x")
    assert not taken[0]
    assert "longer than" in str(got["log"])
