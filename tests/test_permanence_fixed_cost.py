"""The fixed cost of a permanence list's certify (issue 26 item 1): the list is parsed with numpy, so
pyarrow (about 0.07 CPU-s of imports) is imported only on the paths that use it (CSV and JSON Lines
readers, the exact reader of lines with text); the digit-string table resolved without a pyarrow column
reads every token as the column did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_import_narrow import _fresh  # a fresh interpreter on this tree

ARROW = ["pyarrow", "pyarrow.compute", "pyarrow.csv", "pyarrow.json"]


def _read_fresh(p: Path, result: str) -> list:
    """``read_spin_log`` of ``p`` (European wheel) in a fresh interpreter: ``result`` (an expression of
    ``log``, ``n`` the accepted spins and ``sys``) as JSON."""
    code = (
        "import json, sys\n"
        "from rngcert.collect.spinlog import read_spin_log\n"
        "from rngcert.equipment.wheel import load_wheel\n"
        f"log = read_spin_log([{str(p)!r}], load_wheel('european'))\n"
        "n = sum(len(t.outcomes) for t in log.tables.values())\n"
        f"print(json.dumps({result}))\n"
    )
    return json.loads(_fresh(code))


def _list(path: Path, n: int = 600) -> Path:
    x = np.random.default_rng(7).integers(0, 37, n)
    half = n // 2
    path.write_text("\n".join(map(str, x[:half])) + "\n" + "".join(" ".join(map(str, x[i : i + 10])) + "\n" for i in range(half, n, 10)))
    return path


def test_reading_a_permanence_list_imports_no_pyarrow(tmp_path):
    p = _list(tmp_path / "perm.txt")
    assert _read_fresh(p, f"[n, [m for m in {ARROW!r} if m in sys.modules]]") == [600, []]


def test_a_list_with_a_title_line_still_reads_it_with_pyarrow(tmp_path):
    """The exact reader (lines with text) uses pyarrow: it is imported then, and the title is rejected as before."""
    p = tmp_path / "titled.txt"
    p.write_text("Table 3 permanence\n" + "\n".join(map(str, range(37))) + "\nseven\n")
    n, lines, arrow = _read_fresh(p, "[n, [r.line for r in log.rejected], 'pyarrow' in sys.modules]")
    assert n == 37 and 39 in lines and arrow


@pytest.mark.slow
def test_a_permanence_certify_imports_no_pyarrow(tmp_path):
    p = _list(tmp_path / "perm.txt")
    code = (
        "import json, os, sys\n"
        "os.environ.pop('DASK_SCHEDULER_ADDRESS', None)\n"
        "from rngcert.cli.app import main\n"
        f"sys.argv = ['rngcert', 'certify', {str(p)!r}, '--seed', '1', '--out', {str(tmp_path / 'rep')!r}]\n"
        "try:\n"
        "    main(standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {ARROW!r} if m in sys.modules]))\n"
    )
    assert json.loads(_fresh(code)) == []
    assert any((tmp_path / "rep").glob("*/report.json"))


@pytest.mark.parametrize("wheel_id", ["european", "american"])
def test_the_digit_table_without_a_column_reads_as_the_column(wheel_id):
    from rngcert.collect import _arrow
    from rngcert.collect.spinlog.columns import _resolve_labels
    from rngcert.equipment.wheel import load_wheel

    wheel = load_wheel(wheel_id)
    texts = [str(d) for d in range(10)] + [f"{d:02d}" for d in range(100)] + [f"{d:03d}" for d in range(1000)] + ["void", "x", ""]
    offsets = np.r_[0, np.cumsum([len(t) for t in texts])]
    col = _arrow.strings(offsets, "".join(texts).encode("ascii"))
    a, b = _resolve_labels(texts, wheel), _resolve_labels(col, wheel)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        else:
            assert x == y
    pos, bad, at = a[0], a[3], {t: i for i, t in enumerate(texts)}
    assert pos[at["7"]] == pos[at["07"]] == pos[at["007"]] >= 0 and bad[at["x"]] >= 0 and pos[at["x"]] == -1


def test_the_lazy_module_gives_the_modules_own_objects():
    import pyarrow
    import pyarrow.compute

    from rngcert.collect._lazy import LazyModule, pa, pc

    assert pa.array is pyarrow.array and pc.dictionary_encode is pyarrow.compute.dictionary_encode
    assert isinstance(pyarrow.chunked_array([[1]]), pa.ChunkedArray)
    with pytest.raises(AttributeError):
        LazyModule("pyarrow").no_such_name_in_pyarrow  # noqa: B018


def _lists(tmp_path: Path) -> list[Path]:
    """Three lists, three tables; the second read again as Latin-1 (a rollback after the first table)."""
    rng = np.random.default_rng(11)
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_text("\n".join(map(str, rng.integers(0, 37, 300))) + "\n")
    b.write_bytes(b"\xef\xbb\xbf1,2,3\n" + b"4,5,6\n" * 50 + "7,\xd8,8\n".encode("latin-1"))
    c.write_text(" ".join(map(str, rng.integers(0, 37, 250))) + "\n")
    return [a, b, c]


@pytest.mark.parametrize("order", [(0,), (0, 1, 2), (1, 0), (2, 2), (0, 2, 1)])
def test_one_table_without_table_codes_and_several_as_the_exact_path(tmp_path, monkeypatch, order):
    """A one-table list writes no per-spin table code; several lists (codes written when the second table
    appears, or kept back across a Latin-1 re-read) give the exact path's tables, spins and rejects."""
    from test_permanence_memory import _exact, _snap

    from rngcert.collect import spinlog
    from rngcert.collect.spinlog import compact as compact_mod
    from rngcert.collect.spinlog import read as spinlog_read
    from rngcert.equipment.wheel import load_wheel

    files = _lists(tmp_path)
    paths = [files[i] for i in order]
    if order == (2, 2):
        paths = [files[2], tmp_path / "d.txt"]
        paths[1].write_text(files[2].read_text())
    w = load_wheel("european")
    seen = []
    real_finish = compact_mod._CompactLog.finish

    def finish(self, *a, **k):
        seen.append((self.tab_one, self.tab.n, self.pos.n))
        return real_finish(self, *a, **k)

    monkeypatch.setattr(compact_mod._CompactLog, "finish", finish)
    fast = _snap(spinlog.read_spin_log(paths, w, fmt="permanence"))
    with monkeypatch.context() as m:
        m.setattr(spinlog_read, "_read_spin_log_compact", _exact)
        exact = _snap(spinlog.read_spin_log(paths, w, fmt="permanence"))
    assert fast == exact and len(fast) == 4 + len(paths)
    one, written, n = seen[-1]
    if len(paths) == 1:
        assert one is not None and one[1] == n and written == 0
    else:
        assert one is None and written == n
