"""numpy views of pyarrow arrays without pyarrow's pandas shim (private).

``pyarrow.Array.to_numpy``, ``pa.scalar`` and ``pa.array`` consult pyarrow's lazy pandas shim,
which imports pandas (about 0.25 s here) on first use if it is installed, although nothing of
pandas is used. The readers only ever need the fixed-width buffers of integer and boolean arrays,
and read them directly: the same values, from the Arrow columnar format's documented layout
(a validity bitmap and a data buffer, least-significant bit first).
"""

from __future__ import annotations

import numpy as np

from rngcert.collect._lazy import pa

_INT: dict = {}  # pyarrow integer type -> numpy dtype, filled on first use (pyarrow is imported only when used)


def _int_dtype(typ):
    if not _INT:
        _INT.update({pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                     pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64})
    return _INT.get(typ)


def _bits(buf, offset: int, n: int) -> np.ndarray:
    raw = np.frombuffer(buf, dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little", count=offset + n)[offset:].astype(bool)


def _one(arr):
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def valid(arr) -> np.ndarray:
    """(n,) bool: True where ``arr`` is not null."""
    arr = _one(arr)
    vb = arr.buffers()[0]
    if arr.null_count == 0 or vb is None:
        return np.ones(len(arr), dtype=bool)
    return _bits(vb, arr.offset, len(arr))


def ints(arr, fill: int | None = None) -> np.ndarray:
    """An integer pyarrow array as a numpy array of its own dtype (a copy, writable); nulls
    become ``fill`` (required when there are nulls)."""
    arr = _one(arr)
    dt = _int_dtype(arr.type)
    if dt is None:
        raise TypeError(f"not an integer array: {arr.type}")
    n, off = len(arr), arr.offset
    out = np.frombuffer(arr.buffers()[1], dtype=dt, count=off + n)[off:].copy() if n else np.zeros(0, dt)
    if arr.null_count:
        if fill is None:
            raise ValueError("the array has nulls and no fill value was given")
        out[~valid(arr)] = fill
    return out


def bools(arr, fill: bool = False) -> np.ndarray:
    """A boolean pyarrow array as a numpy bool array; nulls become ``fill``."""
    arr = _one(arr)
    if not pa.types.is_boolean(arr.type):
        raise TypeError(f"not a boolean array: {arr.type}")
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=bool)
    out = _bits(arr.buffers()[1], arr.offset, n)
    if arr.null_count:
        out[~valid(arr)] = fill
    return out


def mask(values: np.ndarray) -> pa.BooleanArray:
    """A numpy bool array as a pyarrow BooleanArray without nulls (for ``filter``)."""
    v = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), v.size, [None, pa.py_buffer(np.packbits(v, bitorder="little"))])


def strings(offsets: np.ndarray, data: bytes, null: np.ndarray | None = None) -> pa.Array:
    """The string array whose i-th value is ``data[offsets[i]:offsets[i + 1]]`` (UTF-8); a
    large_string array when the data do not fit 32-bit offsets. ``null``: True where the value is null."""
    small = len(data) < 2**31 - 1
    offs = np.ascontiguousarray(offsets, dtype=np.int32 if small else np.int64)
    typ = pa.string() if small else pa.large_string()
    nulls = int(np.count_nonzero(null)) if null is not None else 0
    valid_buf = pa.py_buffer(np.packbits(~np.asarray(null, dtype=bool), bitorder="little")) if nulls else None
    return pa.Array.from_buffers(typ, offs.size - 1, [valid_buf, pa.py_buffer(offs), pa.py_buffer(data)], null_count=nulls)


_FROM_NUMPY: dict = {}  # numpy dtype -> pyarrow integer type, filled on first use


def _arrow_int(dtype):
    if not _FROM_NUMPY:
        _int_dtype(None)
        _FROM_NUMPY.update({np.dtype(v): k for k, v in _INT.items()})
    return _FROM_NUMPY[dtype]


def array(values: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A numpy integer or bool array as a pyarrow array (``pa.array`` without the pandas shim); ``null``: True
    where the value is null."""
    v = np.ascontiguousarray(values)
    n = v.size
    valid_buf = None
    nulls = 0
    if null is not None:
        nulls = int(np.count_nonzero(null))
        if nulls:
            valid_buf = pa.py_buffer(np.packbits(~np.asarray(null, dtype=bool), bitorder="little"))
    if v.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), n, [valid_buf, pa.py_buffer(np.packbits(v, bitorder="little"))], null_count=nulls)
    return pa.Array.from_buffers(_arrow_int(v.dtype), n, [valid_buf, pa.py_buffer(v)], null_count=nulls)


def repeat_text(text: str, n: int) -> pa.Array:
    """A string array of ``n`` copies of ``text`` (``pa.repeat`` without the pandas shim)."""
    b = text.encode()
    return strings(np.arange(n + 1, dtype=np.int64) * len(b), b * n)


def texts(values) -> pa.Array:
    """A string array of Python strings, None for null (``pa.array(list, pa.string())`` without the pandas shim)."""
    null = None
    if any(v is None for v in values):
        null = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    enc = [b"" if v is None else v.encode() for v in values]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    if enc:
        np.cumsum([len(b) for b in enc], out=offsets[1:])
    return strings(offsets, b"".join(enc), null)


def bool_scalar(value: bool) -> pa.Scalar:
    """A boolean scalar (``pa.scalar(value)`` without the pandas shim: ``fill_null(x, False)`` goes through it)."""
    return array(np.full(1, bool(value)))[0]


def text_scalar(text: str) -> pa.Scalar:
    """A string scalar (``pa.scalar(text)`` without the pandas shim), for the compute functions: a Python ``str``
    given to them is made a scalar through that shim."""
    return repeat_text(text, 1)[0]


def byte_view(col: pa.Array):
    """(starts, ends, data) of a string array's cells as byte offsets into its data buffer, or None
    (a large-string or sliced array: the caller uses the string kernels)."""
    if not pa.types.is_string(col.type) or len(col) == 0:
        return None
    bufs = col.buffers()
    if len(bufs) < 3 or bufs[1] is None:
        return None
    offs = np.frombuffer(bufs[1], dtype=np.int32)[col.offset : col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offs[:-1], offs[1:], data


def floats(arr, fill: float = np.nan) -> np.ndarray:
    """A float64 pyarrow array as a numpy array (a copy, writable); nulls become ``fill`` (NaN by default, as
    ``to_numpy`` gives them, without the pandas shim)."""
    arr = _one(arr)
    if not pa.types.is_float64(arr.type):
        raise TypeError(f"not a float64 array: {arr.type}")
    n, off = len(arr), arr.offset
    out = np.frombuffer(arr.buffers()[1], dtype=np.float64, count=off + n)[off:].copy() if n else np.zeros(0, np.float64)
    if arr.null_count:
        out[~valid(arr)] = fill
    return out
