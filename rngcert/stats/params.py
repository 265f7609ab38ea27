"""The ranges of numeric parameters, checked in one place: the options of the Python API take the
ranges of the command line's options (:data:`rngcert.pipeline.options._RANGES`), and statistics
such as :func:`rngcert.stats.holm` check their level with the same function and message."""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError

__all__ = ["check_number"]


def _range_text(low, high, low_open: bool, high_open: bool) -> str:
    """The allowed range as a reader writes it: ``(0, 1)``, ``[0, 1]``, ``>= 99``, ``> 0``."""
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    return f"{'<' if high_open else '<='} {high:g}"


def check_number(value, name: str, *, low=None, high=None, low_open: bool = False, high_open: bool = False,
                 integer: bool = False, none_ok: bool = False):
    """Check a numeric parameter of the API against the range its command-line option allows.

    Parameters
    ----------
    value : object
        The value given.
    name : str
        The argument's name, as the error names it.
    low, high : float, optional
        Bounds of the allowed range (None: unbounded on that side).
    low_open, high_open : bool
        The bound itself is excluded.
    integer : bool
        The value must be a whole number (an ``int`` or a numpy integer).
    none_ok : bool
        None is allowed (an option left to its default).

    Returns
    -------
    int, float or None
        ``value`` as a Python ``int`` (with ``integer``) or ``float``, or None.

    Raises
    ------
    TypeError
        ``value`` is not a number (a string, a bool, None where not allowed) or, with ``integer``,
        not an integer type; the message names the argument and the range.
    rngcert.errors.InputError
        (a ``ValueError``) ``value`` is NaN, infinite or outside the range; the message names the
        argument and the range.
    """
    if value is None and none_ok:
        return value
    rng = _range_text(low, high, low_open, high_open) if (low, high) != (None, None) else ""
    where = f"in {rng}" if low is not None and high is not None else rng
    types = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, types):
        want = ("an integer" if integer else "a number") + (f" {where}" if where else "") + (" or None" if none_ok else "")
        raise TypeError(f"{name} must be {want}, got {value!r} ({type(value).__name__})")
    v = float(value)
    bad = not np.isfinite(v)
    bad = bad or (low is not None and (v <= low if low_open else v < low)) or (high is not None and (v >= high if high_open else v > high))
    if bad:
        raise InputError(f"{name} must be {'an integer ' if integer else ''}{where or 'finite'}, got {value!r}")
    return int(value) if integer else float(value) if isinstance(value, np.floating) else value
