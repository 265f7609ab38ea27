"""The readers' numpy views of pyarrow arrays (rngcert.collect._arrow) give what
``Array.to_numpy`` gives, and a wheel certify imports neither pandas, scipy.stats nor matplotlib
(each costs a tenth of a second to seconds of a small certify's fixed cost)."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rngcert.collect import _arrow


@pytest.mark.parametrize("typ", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint16(), pa.uint64()])
@pytest.mark.parametrize("start,stop", [(0, 0), (0, 70), (3, 70), (13, 14), (9, 64)])
def test_ints_match_to_numpy_on_slices_with_nulls(typ, start, stop):
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 100, size=70)
    nulls = rng.random(70) < 0.3
    arr = pa.array(vals, type=typ, mask=nulls).slice(start, stop - start)
    fill = 0 if pa.types.is_unsigned_integer(typ) else -1
    got = _arrow.ints(arr, fill=fill)
    want = np.where(nulls[start:stop], fill, vals[start:stop])
    assert got.dtype == arr.type.to_pandas_dtype() and np.array_equal(got, want)
    assert np.array_equal(_arrow.valid(arr), ~nulls[start:stop])
    full = pa.array(vals, type=typ).slice(start, stop - start)
    assert np.array_equal(_arrow.ints(full), full.to_numpy())
    got[:1] = 5  # a writable copy, not a view of Arrow's immutable buffer


def test_ints_refuses_nulls_without_fill_and_other_types():
    with pytest.raises(ValueError):
        _arrow.ints(pa.array([1, None], type=pa.int32()))
    with pytest.raises(TypeError):
        _arrow.ints(pa.array(["a"]))


def test_chunked_bools_mask_and_strings():
    ch = pa.chunked_array([pa.array([1, 2], type=pa.int32()), pa.array([3], type=pa.int32())])
    assert _arrow.ints(ch).tolist() == [1, 2, 3]
    b = pa.array([True, None, False, True, True, False, True, True, False, True], type=pa.bool_()).slice(1)
    assert _arrow.bools(b).tolist() == [False if v is None else v for v in b.to_pylist()]
    m = np.array([True, False, True, True, False, False, True, False, True])
    assert _arrow.mask(m).to_pylist() == m.tolist()
    arr = pa.array(["a", "bb", "", "c"])
    assert arr.filter(_arrow.mask(np.array([True, False, True, True]))).to_pylist() == ["a", "", "c"]
    s = _arrow.strings(np.array([0, 2, 2, 5]), b"ab\ncd")
    assert s.to_pylist() == ["ab", "", "\ncd"] and pc.utf8_length(s).to_pylist() == [2, 0, 3]
    for values in (["a", None, "ünï", "", None], [None], [], ["x"]):
        t = _arrow.texts(values)
        assert t.equals(pa.array(values, type=pa.string())) and t.null_count == values.count(None)


def test_spin_ids_and_table_codes_of_read_rows():
    """rngcert.collect.spinids: the watch's views of the spin_id and table columns, against pyarrow's
    own conversions; ids above 2**53 exact (a float64 view, as ``to_numpy`` gives with nulls, is not)."""
    from rngcert.collect.spinids import table_codes, whole_number_ids

    ids = pa.chunked_array([pa.array([" 7", None, "x1", "", "9007199254740993"]), pa.array(["9007199254740992", "12 "])])
    text, num, is_num, empty = whole_number_ids(ids)
    assert text.to_pylist() == ["7", None, "x1", "", "9007199254740993", "9007199254740992", "12"]
    assert num.tolist() == [7, 0, 0, 0, 9007199254740993, 9007199254740992, 12] and num.dtype == np.int64
    assert is_num.tolist() == [True, False, False, False, True, True, True]
    assert empty.tolist() == [False, True, False, True, False, False, False]
    text, num, is_num, empty = whole_number_ids(ids, np.array([6, 0, 1]))
    assert text.to_pylist() == ["12", "7", None] and num.tolist() == [12, 7, 0] and empty.tolist() == [False, False, True]
    codes, names = table_codes(pa.array(["W2", None, "W1", "W2", ""]))
    assert names == ["W2", "W1", "", None] and codes.tolist() == [0, 3, 1, 0, 2] and codes.dtype == np.int64


def test_wheel_certify_imports_neither_pandas_scipy_stats_scipy_fft_nor_matplotlib(tmp_path):
    csv = tmp_path / "log.csv"
    rng = np.random.default_rng(1)
    csv.write_text("spin_id,timestamp,result\n" + "".join(
        f"{i},2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z,{r}\n" for i, r in enumerate(rng.integers(0, 37, 600), 1)))
    perm = tmp_path / "perm.txt"
    perm.write_text(" ".join(str(r) for r in rng.integers(0, 37, 600)) + "\n")
    titled = tmp_path / "titled.txt"  # a title line: the permanence reader's text path
    titled.write_text("Permanence table 3, 1 March\n" + " ".join(str(r) for r in rng.integers(0, 37, 600)) + "\n")
    jsonl = tmp_path / "log.jsonl"  # one key missing on some rows: nulls in the string columns
    jsonl.write_text("".join(f'{{"spin_id": {i}, "result": "{r}"' + (', "dealer": "D1"' if i % 3 else "") + "}\n"
                             for i, r in enumerate(rng.integers(0, 37, 600), 1)))
    code = (
        "import sys\n"
        "from rngcert.cli import main\n"
        f"for f in ({str(csv)!r}, {str(perm)!r}, {str(titled)!r}, {str(jsonl)!r}):\n"
        "    try:\n"
        f"        main(['certify', f, '--seed', '1', '--out', {str(tmp_path / 'rep')!r}])\n"
        "    except SystemExit as e:\n"
        "        assert e.code in (0, 10, 11), e.code\n"
        "bad = [m for m in ('pandas', 'scipy.stats', 'scipy.fft', 'matplotlib') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]


def test_watch_over_a_rotated_log_imports_no_pandas(tmp_path):
    """A long-running ``watch``: a log rotated twice within one poll (a file never read, a spin-id
    gap), repeated and conflicting rows, then ``rngcert watch`` of a biased log up to its alarm record:
    pandas is never imported (the log reader's pyarrow calls go through rngcert.collect._arrow)."""
    rng = np.random.default_rng(3)
    for i in range(3):
        rows = [f"{500 * i + k},2026-01-01T00:00:00Z,W1,{r}" for k, r in enumerate(rng.integers(0, 37, 500), 1)]
        if i == 2:
            other = (int(rows[0].rsplit(",", 1)[1]) + 1) % 37
            rows += [f"1001,2026-01-01T00:00:00Z,W1,{other}", rows[0], "1002,,,"]  # a conflict, a repeat, a rejected row
        (tmp_path / f"part{i}.csv").write_text("spin_id,timestamp,table,result\n" + "\n".join(rows) + "\n")
    (tmp_path / "bias.csv").write_text("spin_id,table,result\n" + "".join(f"{i},W2,{(0, 32, 15)[i % 3]}\n" for i in range(1, 3001)))
    code = f"""
import os, sys
from rngcert.cli import main
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.watch import LogWatch
d = {str(tmp_path)!r}
log = os.path.join(d, "live.csv")
parts = [open(os.path.join(d, f"part{{i}}.csv"), "rb").read() for i in range(3)]
open(log, "wb").write(parts[0])
w = LogWatch(log, load_wheel("european"), block=1, settle=0.0)
w.step()
os.rename(log, log + ".1"); open(log, "wb").write(parts[1])
os.rename(log + ".1", log + ".2"); os.rename(log, log + ".1"); open(log, "wb").write(parts[2])
w.step(); w.step(final=True)
assert w.spins == {{"W1": 1000}} and len(w.lost) == 2 and (w.conflicts, w.repeated) == (1, 1), (w.spins, w.lost, w.conflicts, w.repeated)
w.close()
try:
    main(["watch", os.path.join(d, "bias.csv"), "--db", os.path.join(d, "s.duckdb")])
except SystemExit as e:
    assert e.code == 13, e.code
bad = [m for m in ("pandas", "scipy.stats", "matplotlib", "numpy.ma") if m in sys.modules]
assert not bad, bad
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "alarm record 1 written" in res.stdout + res.stderr, res.stderr[-2000:]
