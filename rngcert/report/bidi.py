"""Unicode bidirectional controls shown, not obeyed, wherever rngcert shows text it read from a log.

A right-to-left override (U+202E) in a table id or a dealer name reorders the rest of its paragraph wherever text is
laid out with the Unicode bidirectional algorithm: on the HTML page, in a terminal that implements it, in a PDF. A
table ``T<U+202E>LIAF1`` then reads "T1FAIL", and the verdict's reason after it reads backwards. The report shows
each such control as its code point, ``[U+202E]``; report.json keeps the text as read (it is the data).
"""

from __future__ import annotations

__all__ = ["BIDI_CONTROLS", "visible_bidi"]

#: Characters that print as nothing: zero-width space, non-joiner and joiner, word joiner, the byte-order mark inside a
#: text, the soft hyphen. ``\u200bT1`` is another table than ``T1`` and would print the same (a log's cell is read as
#: written: two such tables are two tables, and the report must tell them apart).
INVISIBLE = (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD)
#: Unicode's bidirectional embeddings, overrides, isolates and marks, and the :data:`INVISIBLE` characters, each mapped
#: to its visible code point (for :meth:`str.translate`).
BIDI_CONTROLS = {c: f"[U+{c:04X}]" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, *INVISIBLE)}


def visible_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as ``[U+XXXX]`` (ASCII text is returned as it is).

    Examples
    --------
    >>> visible_bidi("T\\u202eLIAF1")
    'T[U+202E]LIAF1'
    """
    return text if text.isascii() else text.translate(BIDI_CONTROLS)
