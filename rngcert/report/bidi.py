"""Unicode bidirectional controls shown, not obeyed, wherever rngcert shows text it read from a log.

A right-to-left override (U+202E) in a table id or a dealer name reorders the rest of its paragraph wherever text is
laid out with the Unicode bidirectional algorithm: on the HTML page, in a terminal that implements it, in a PDF. A
table ``T<U+202E>LIAF1`` then reads "T1FAIL", and the verdict's reason after it reads backwards. The report shows
each such control as its code point, ``[U+202E]``; report.json keeps the text as read (it is the data).
"""

from __future__ import annotations

__all__ = ["BIDI_CONTROLS", "visible_bidi"]

#: Unicode's bidirectional embeddings, overrides, isolates and marks, each mapped to its visible code point
#: (for :meth:`str.translate`).
BIDI_CONTROLS = {c: f"[U+{c:04X}]" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}


def visible_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as ``[U+XXXX]`` (ASCII text is returned as it is).

    Examples
    --------
    >>> visible_bidi("T\\u202eLIAF1")
    'T[U+202E]LIAF1'
    """
    return text if text.isascii() else text.translate(BIDI_CONTROLS)
