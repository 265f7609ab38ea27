"""Spin ids and table names of read rows as numpy arrays, for the consumers of
:func:`rngcert.collect.spinlog.read_spin_rows` (the ``watch``): without pyarrow's pandas shim,
which ``pa.array``, ``to_numpy`` and Python scalars given to compute functions go through
(pandas is imported on first use: about 0.25 s of a long-running watch's start)."""

from __future__ import annotations

import numpy as np

from rngcert.collect import _arrow

__all__ = ["PREFIXED_ID", "counter_ids", "prefixed_numbers", "table_codes", "whole_number_ids"]

#: a spin id that is a whole number (as stored: up to 18 digits, so that it fits int64)
_WHOLE = r"^[0-9]{1,18}$"
#: a text spin id of letters and a whole number without a leading zero (``R1200``): the shape whose number gives the
#: spin order (the readers' pattern too: :mod:`rngcert.collect.spinlog.idorder`)
PREFIXED_ID = r"^(?P<prefix>[A-Za-z][A-Za-z_\-:#/.]*)(?P<number>0|[1-9][0-9]{0,17})$"


def table_codes(table) -> tuple[np.ndarray, list]:
    """The table column of read rows as codes.

    Parameters
    ----------
    table : pyarrow.Array or pyarrow.ChunkedArray
        The rows' table names (strings, null where a row has none).

    Returns
    -------
    codes : numpy.ndarray
        (n,) int64: the index of each row's name in ``names``.
    names : list
        The distinct names in order of first appearance, then ``None`` (the code of a null name).
    """
    enc = table.dictionary_encode()
    names = enc.dictionary.to_pylist() + [None]
    return _arrow.ints(enc.indices, fill=len(names) - 1).astype(np.int64), names


def whole_number_ids(spin_id, take: np.ndarray | None = None):
    """The spin ids of read rows, trimmed, with their whole-number values.

    Parameters
    ----------
    spin_id : pyarrow.Array or pyarrow.ChunkedArray
        The rows' spin ids (any type castable to string; null where a row has none).
    take : numpy.ndarray, optional
        Integer indices of the rows wanted (all rows when omitted).

    Returns
    -------
    text : pyarrow.Array
        The ids as strings without surrounding white space.
    number : numpy.ndarray
        (n,) int64: the id's value where it is a whole number of at most 18 digits, else 0.
    is_number : numpy.ndarray
        (n,) bool: where ``number`` holds the id.
    empty : numpy.ndarray
        (n,) bool: where the row has no id (null or empty).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = spin_id.take(_arrow.array(np.asarray(take, dtype=np.int64))) if take is not None else spin_id
    text = pc.utf8_trim_whitespace(raw.cast(pa.string()))
    whole = pc.match_substring_regex(text, _WHOLE)
    number = _arrow.ints(pc.cast(pc.if_else(whole, text, _arrow.texts([None])[0]), pa.int64()), fill=0)
    is_number = _arrow.bools(whole, fill=False)
    empty = _arrow.bools(pc.equal(text, _arrow.text_scalar("")), fill=True)
    return text, number, is_number, empty


def counter_ids(spin_id, prefix: str | None, take: np.ndarray | None = None):
    """The spin ids of read rows as the numbers of a counter: whole numbers, or text ids of one prefix and a number.

    Parameters
    ----------
    spin_id : pyarrow.Array or pyarrow.ChunkedArray
        The rows' spin ids (as in :func:`whole_number_ids`).
    prefix : str or None
        The table's prefix: ``""`` for whole-number ids, ``"R"`` for ids like ``R1200``; None when the table has
        none yet (it is then ``""`` when at least as many rows have whole-number ids as text ids of that shape, as the
        readers take the ids of a file whose ids are mostly whole numbers for numbers; else that of the first text id).
    take : numpy.ndarray, optional
        Integer indices of the rows wanted (all rows when omitted).

    Returns
    -------
    number : numpy.ndarray
        (n,) int64: the id's number where ``is_number``, else 0.
    is_number : numpy.ndarray
        (n,) bool: where the id is of the table's shape (a whole number, or the table's prefix and a number).
    prefix : str or None
        The table's prefix (None: no row has an id of either shape).

    Examples
    --------
    >>> import pyarrow as pa
    >>> n, ok, pre = counter_ids(pa.array(["R7", "R9", "Q8", "10"]), None)
    >>> n.tolist(), ok.tolist(), pre
    ([7, 9, 0, 0], [True, True, False, False], 'R')
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    text, number, whole, _ = whole_number_ids(spin_id, take)
    if prefix == "" or (prefix is None and whole.size and whole.all()):
        return number, whole, ""
    parts = pc.extract_regex(text, PREFIXED_ID)
    found = _arrow.bools(pc.is_valid(parts), fill=False)
    if prefix is None:
        first = np.flatnonzero(found)
        if not first.size and not whole.any():
            return number, np.zeros(number.size, dtype=bool), None
        if np.count_nonzero(whole) >= first.size:  # (most ids whole numbers: a text id among them is a rejected row's, as the readers say)
            return number, whole, ""
        prefix = pc.struct_field(parts, "prefix")[int(first[0])].as_py()
    same = found & _arrow.bools(pc.equal(pc.struct_field(parts, "prefix"), _arrow.text_scalar(prefix)), fill=False)
    num = _arrow.ints(pc.cast(pc.struct_field(parts, "number"), pa.int64()), fill=0)  # (struct_field: null where no match)
    return np.where(same, num, 0).astype(np.int64), same, prefix


def prefixed_numbers(ids, prefix: str) -> np.ndarray:
    """The numbers of the text spin ids ``ids`` that are ``prefix`` and a number (:data:`PREFIXED_ID`), others left out.

    Parameters
    ----------
    ids : iterable of str
        Text spin ids (few: those of rows the reader could not split).
    prefix : str
        The table's prefix (``"R"`` for ``R1200``).

    Returns
    -------
    numpy.ndarray
        (k,) int64: the numbers, in the order of ``ids``.

    Examples
    --------
    >>> prefixed_numbers(["R7", "Q8", "R09", "R10"], "R").tolist()
    [7, 10]
    """
    import re

    got = (re.fullmatch(PREFIXED_ID, str(s).strip()) for s in ids)
    return np.asarray([int(m.group("number")) for m in got if m is not None and m.group("prefix") == prefix], dtype=np.int64)
