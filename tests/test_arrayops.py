"""rngcert.stats.arrayops gives numpy's own arrays, bit for bit, without importing numpy.ma."""

import subprocess
import sys

import numpy as np
import pytest

from rngcert.stats.arrayops import quantile, unique


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.bool_])
def test_unique_equals_numpy(dtype):
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    for size in (0, 1, 2, 7, 100, 5000):
        for span in (1, 3, 40, 1 << 20, None):
            if info is None:
                v = rng.integers(0, 2, size).astype(bool)
            elif span is None:  # the whole range: the sorted path
                v = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
            else:
                lo = max(info.min, -span) if info.min < 0 else info.max - min(span, info.max)
                v = rng.integers(lo, min(info.max, lo + span), size, dtype=dtype, endpoint=True)
            got, want = unique(v), np.unique(v)
            assert got.dtype == want.dtype and np.array_equal(got, want), (dtype, size, span)
    assert np.array_equal(unique(np.array([[3, 1], [3, 2]])), [1, 2, 3])
    s = np.array(["b", "a", "b", "", "ab"])
    assert np.array_equal(unique(s), np.unique(s)) and unique(s).dtype == s.dtype
    f = np.array([np.nan, 1.0, np.nan, 0.5])  # floats: numpy's own (NaN collapsed)
    assert np.array_equal(unique(f), np.unique(f), equal_nan=True)


def test_quantile_equals_numpy_bit_for_bit():
    rng = np.random.default_rng(11)
    qs = [[0.025, 0.975], [0.0, 1.0], [0.5], [0.1, 0.25, 0.5, 0.75, 0.9, 0.999], list(rng.random(20))]
    worst = 0
    for trial in range(400):
        size = int(rng.choice([1, 2, 3, 10, 99, 1000, 9999]))
        kind = trial % 4
        if kind == 0:
            x = rng.normal(size=size)
        elif kind == 1:  # ties: few distinct values (sums of whole-unit nets / rounds)
            x = rng.integers(-50, 50, size) / 37.0
        elif kind == 2:
            x = rng.exponential(size=size) * 10.0 ** rng.integers(-12, 12)
        else:
            x = np.full(size, rng.normal())
        for q in qs:
            got, want = quantile(x, q), np.quantile(x, q)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), (size, kind, q, got, want)
            worst += 1
    assert worst == 400 * len(qs)
    x = rng.normal(size=50)
    x0 = x.copy()
    quantile(x, [0.3])
    assert np.array_equal(x, x0)  # the sample is not reordered
    # what it does not cover goes to numpy: NaN, a bare number, integers, 2-D
    for args in ((np.r_[x, np.nan], [0.5]), (x, 0.5), (np.arange(10), [0.3]), (x.reshape(5, 10), [0.2])):
        assert np.array_equal(quantile(*args), np.quantile(*args), equal_nan=True)


def test_neither_imports_numpy_ma():
    code = ("import sys, numpy as np\n"
            "from rngcert.stats.arrayops import quantile, unique\n"
            "unique(np.arange(100) % 7); unique(np.array([5, 2**40, 2])); quantile(np.linspace(0, 1, 101), [0.025, 0.975])\n"
            "assert 'numpy.ma' not in sys.modules\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
