"""Shared helpers of the SP 800-22 tests: input validation, result packaging, special functions.

Private module. Every public test in :mod:`rngcert.stats.nist` validates its bit sequence with
:func:`_bits_iv`, which never copies or modifies the caller's array more than needed (a view when
the input is already ``uint8``/``bool``).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer (issue 26)

#: Significance level of SP 800-22 (section 4.2.1); used by prerequisites and the two-level analysis.
ALPHA = 0.01

CONSTANTS = ("reference", "corrected")


def _bits_iv(bits, name: str = "bits") -> np.ndarray:
    """Validate a bit sequence and return it as a read-only ``uint8`` array of 0/1.

    Raises
    ------
    InputError
        If ``bits`` is not one-dimensional, is empty, or holds a value other than 0 and 1
        (the message quotes the first offending value and its index).
    """
    a = np.asarray(bits)
    if a.ndim != 1:
        raise InputError(f"{name} must be a one-dimensional array of 0/1, got shape {a.shape}")
    if a.size == 0:
        raise InputError(f"{name} is empty; a bit sequence of length n >= 1 is required")
    if a.dtype == np.bool_:
        out = a.view(np.uint8)
    else:
        if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
            raise InputError(f"{name} must hold the integers 0 and 1, got dtype {a.dtype}")
        bad = (a != 0) & (a != 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{name}[{i}] = {a[i].item()!r}; only the values 0 and 1 are allowed")
        out = a if a.dtype == np.uint8 else a.astype(np.uint8)
    out = out.view()
    out.flags.writeable = False
    return out


def _constants_iv(constants: str) -> str:
    if constants not in CONSTANTS:
        raise InputError(f"constants={constants!r}; allowed: {', '.join(map(repr, CONSTANTS))}")
    return constants


def _int_param_iv(value, name: str, low: int = 1) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}={value!r} is not an integer") from None
    if v != value or v < low:
        raise InputError(f"{name}={value!r}; an integer >= {low} is required")
    return v


def igamc(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) (cephes ``igamc`` of sts-2.1.2)."""
    return float(special.gammaincc(a, x))


def erfc(x: float) -> float:
    return float(special.erfc(x))


def result(name: str, requirement: Requirement, statistic: float, df, pvalue: float, n: int,
           method: str, details: Mapping[str, Any] | None = None) -> TestResult:
    """Package a p-value (clipped into [0, 1]) as a TestResult."""
    return TestResult(name=name, requirement=requirement, statistic=float(statistic),
                      df=None if df is None else float(df), pvalue=clip_pvalue(pvalue), n=int(n),
                      method=method, details=dict(details or {}))


def not_applicable(name: str, requirement: Requirement, n: int, reason: str) -> NotApplicable:
    return NotApplicable(name=name, requirement=requirement, n=int(n), reason=reason)


def windows(bits: np.ndarray, m: int, *, circular: bool) -> np.ndarray:
    """Integer codes (MSB first) of the m-bit windows starting at every position.

    With ``circular=True`` the first ``m - 1`` bits are appended (the "augmented" sequence of
    SP 800-22 sections 2.11.4 and 2.12.4, part of those tests' definitions); the result has n
    codes. Otherwise it has ``n - m + 1`` codes (empty when m > n).

    For m <= 25 the bits are packed into bytes and every window is cut out of the big-endian
    32-bit word starting at its byte (8 shifts over n/8 words instead of m over n bits).
    """
    n = bits.size
    if m == 0:
        return np.zeros(n, dtype=np.uint32)
    src = np.concatenate([bits, bits[: m - 1]]) if circular else bits
    count = src.size - m + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint32)
    if m > 25:
        dtype = np.uint32 if m <= 32 else np.uint64
        code = np.zeros(count, dtype=dtype)
        for k in range(m):  # loop over the window width only
            code <<= dtype(1)
            code |= src[k:k + count]
        return code
    nbytes = -(-count // 8)
    packed = np.packbits(src)
    buf = np.zeros(nbytes + 4, dtype=np.uint32)
    buf[: packed.size] = packed
    w32 = (buf[:nbytes] << 24) | (buf[1:nbytes + 1] << 16) | (buf[2:nbytes + 2] << 8) \
        | buf[3:nbytes + 3]
    mask = np.uint32((1 << m) - 1)
    out = np.empty((nbytes, 8), dtype=np.uint32)
    for r in range(8):  # loop over the bit offset within a byte
        np.bitwise_and(w32 >> np.uint32(32 - m - r), mask, out=out[:, r])
    return out.reshape(-1)[:count]

