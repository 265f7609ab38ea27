"""Spin-log collector: wheel-controller and surveillance exports, and casino permanence lists.

Reads a log into per-table outcome sequences for a given wheel (DESIGN §3 "Spin log"):

* CSV with a header (``.csv``, ``.tsv``; UTF-8 with or without BOM; LF or CRLF), columns matched
  case-insensitively; ``result`` is required, ``spin_id``, ``timestamp``, ``table``, ``dealer``,
  ``direction``, ``release_pocket``, ``revolutions``, ``void``, ``rotor_speed`` (the wheel head's
  speed at the ball's launch, in the log's own unit), ``ball_direction`` (cw/ccw) and
  ``result_source`` (which device read the result: see :data:`PRIMARY_SOURCES`) are optional. Foreign names are
  mapped with ``columns={"result": "Number"}`` (CLI: ``--column result=Number``).
* JSON Lines (``.jsonl``, ``.ndjson``), one object per line with the same keys.
* Permanence lists (``.txt`` or any file whose first line has no letters): pocket numbers
  separated by commas, semicolons, whitespace or newlines, in spin order, one table per file
  (the format casinos publish, e.g. Spielbank Wiesbaden).

Every row ends in exactly one of three places, and the counts always add up:

* **accepted** — a readable, valid spin;
* **void** — a spin declared void (``void`` true, ``revolutions`` < 3 — rules 4.2 and 5.1-5.4 of
  the money-wheel rules — or a result such as ``void``/``no spin``/``peg``); excluded from the tests
  and counted;
* **rejected** — a row that cannot be read (unknown pocket, empty result, bad number, bad
  timestamp, wrong number of fields, a control character in a label or result cell:
  :data:`~rngcert.collect.spinlog.core.CONTROL_CHECKED`), kept as a :class:`RejectedRow` with file,
  line, column and reason.

Blank lines are not rows; they are counted separately. Parsing is vectorised with pyarrow: the
per-row work is done in C++, and Python only sees the distinct labels.

Modules: :mod:`.core` (the types, the row-to-spin core :func:`_process`, file-level checks), :mod:`.columns`
(column decoders), :mod:`.detect` (format detection), one reader per format (:mod:`.csv`, :mod:`.jsonl`,
:mod:`.permanence`, :mod:`.capture` for controller captures and live feeds), :mod:`.order` (result sources,
repeats, near-duplicates, tables in spin order, time order), :mod:`.compact` (large clean logs in small
integers) and :mod:`.read` (:func:`read_spin_log`, :func:`read_spin_rows`). This package re-exports
their names, private ones included, so ``rngcert.collect.spinlog.NAME`` keeps working.
"""

from rngcert.collect.spinlog.capture import (
    _capture_format as _capture_format,
)
from rngcert.collect.spinlog.capture import (
    _options_iv as _options_iv,
)
from rngcert.collect.spinlog.capture import (
    _read_capture as _read_capture,
)
from rngcert.collect.spinlog.capture import (
    _read_feed as _read_feed,
)
from rngcert.collect.spinlog.columns import (
    _DIRECTIONS as _DIRECTIONS,
)
from rngcert.collect.spinlog.columns import (
    _FALSE as _FALSE,
)
from rngcert.collect.spinlog.columns import (
    _ID_DTYPE as _ID_DTYPE,
)
from rngcert.collect.spinlog.columns import (
    _NUMBER as _NUMBER,
)
from rngcert.collect.spinlog.columns import (
    _TRUE as _TRUE,
)
from rngcert.collect.spinlog.columns import (
    _as_text as _as_text,
)
from rngcert.collect.spinlog.columns import (
    _byte_view as _byte_view,
)
from rngcert.collect.spinlog.columns import (
    _clean_text as _clean_text,
)
from rngcert.collect.spinlog.columns import (
    _decode as _decode,
)
from rngcert.collect.spinlog.columns import (
    _decode_norm as _decode_norm,
)
from rngcert.collect.spinlog.columns import (
    _directions as _directions,
)
from rngcert.collect.spinlog.columns import (
    _join_kinds as _join_kinds,
)
from rngcert.collect.spinlog.columns import (
    _norm_text as _norm_text,
)
from rngcert.collect.spinlog.columns import (
    _numbers as _numbers,
)
from rngcert.collect.spinlog.columns import (
    _pocket_number as _pocket_number,
)
from rngcert.collect.spinlog.columns import (
    _resolve_labels as _resolve_labels,
)
from rngcert.collect.spinlog.columns import (
    _speeds as _speeds,
)
from rngcert.collect.spinlog.columns import (
    _timestamps as _timestamps,
)
from rngcert.collect.spinlog.columns import (
    _truthy as _truthy,
)
from rngcert.collect.spinlog.columns import (
    timestamp_kinds,
    timestamp_notes,
)
from rngcert.collect.spinlog.compact import (
    _CompactLog as _CompactLog,
)
from rngcert.collect.spinlog.compact import (
    _groups as _groups,
)
from rngcert.collect.spinlog.compact import (
    _Grow as _Grow,
)
from rngcert.collect.spinlog.compact import (
    _NeedExact as _NeedExact,
)
from rngcert.collect.spinlog.compact import (
    _split_by_table as _split_by_table,
)
from rngcert.collect.spinlog.core import (
    KNOWN_COLUMNS,
    PRIMARY_SOURCES,
    SECOND_SOURCE_REASON,
    IntIds,
    RejectedRow,
    SourceInfo,
    SpinLog,
    TableSpins,
    sha256_of,
)
from rngcert.collect.spinlog.core import (
    _codes_labels as _codes_labels,
)
from rngcert.collect.spinlog.core import (
    _concat_parts as _concat_parts,
)
from rngcert.collect.spinlog.core import (
    _file_checks as _file_checks,
)
from rngcert.collect.spinlog.core import (
    _id_value as _id_value,
)
from rngcert.collect.spinlog.core import (
    _merge_codes as _merge_codes,
)
from rngcert.collect.spinlog.core import (
    _process as _process,
)
from rngcert.collect.spinlog.core import (
    _reject_rows as _reject_rows,
)
from rngcert.collect.spinlog.core import (
    _small_int as _small_int,
)
from rngcert.collect.spinlog.core import (
    _span as _span,
)
from rngcert.collect.spinlog.csv import (
    _ROW_KEYS as _ROW_KEYS,
)
from rngcert.collect.spinlog.csv import (
    _read_csv_streaming as _read_csv_streaming,
)
from rngcert.collect.spinlog.detect import (
    _numbers_under_a_title as _numbers_under_a_title,
)
from rngcert.collect.spinlog.detect import (
    detect_format,
)
from rngcert.collect.spinlog.jsonl import (
    _DuplicateKey as _DuplicateKey,
)
from rngcert.collect.spinlog.jsonl import (
    _no_duplicate_keys as _no_duplicate_keys,
)
from rngcert.collect.spinlog.jsonl import (
    _read_jsonl as _read_jsonl,
)
from rngcert.collect.spinlog.jsonl import (
    _text_of as _text_of,
)
from rngcert.collect.spinlog.jsonl import (
    json_array_error,
)
from rngcert.collect.spinlog.order import (
    CLOCK_ADJUST_S,
    DST_TOLERANCE_S,
    DUPLICATE_REASON,
    NEAR_DUPLICATE_MAX_SHARE,
    NEAR_DUPLICATE_REASON,
    NEAR_DUPLICATE_RULE,
    outcome_key,
    repeat_status,
    time_order_finding,
)
from rngcert.collect.spinlog.order import (
    _assemble_tables as _assemble_tables,
)
from rngcert.collect.spinlog.order import (
    _clock_change_only as _clock_change_only,
)
from rngcert.collect.spinlog.order import (
    _id_numbers as _id_numbers,
)
from rngcert.collect.spinlog.order import (
    _mark_near_duplicates as _mark_near_duplicates,
)
from rngcert.collect.spinlog.order import (
    _mark_repeats as _mark_repeats,
)
from rngcert.collect.spinlog.order import (
    _sort_key_of_ids as _sort_key_of_ids,
)
from rngcert.collect.spinlog.order import (
    _split_sources as _split_sources,
)
from rngcert.collect.spinlog.permanence import (
    _read_permanence as _read_permanence,
)
from rngcert.collect.spinlog.permanence import (
    _title_lines as _title_lines,
)
from rngcert.collect.spinlog.read import (
    STDIN_NAME,
    SpinRows,
    read_spin_log,
    read_spin_rows,
)
from rngcert.collect.spinlog.read import (
    _check_readable as _check_readable,
)
from rngcert.collect.spinlog.read import (
    _read_file as _read_file,
)
from rngcert.collect.spinlog.read import (
    _read_spin_log_compact as _read_spin_log_compact,
)
from rngcert.collect.spinlog.read import (
    _source_info as _source_info,
)
from rngcert.collect.spinlog.read import (
    _stdin_path as _stdin_path,
)

__all__ = [
    "CLOCK_ADJUST_S",
    "DST_TOLERANCE_S",
    "DUPLICATE_REASON",
    "IntIds",
    "KNOWN_COLUMNS",
    "NEAR_DUPLICATE_MAX_SHARE",
    "NEAR_DUPLICATE_REASON",
    "NEAR_DUPLICATE_RULE",
    "PRIMARY_SOURCES",
    "RejectedRow",
    "SECOND_SOURCE_REASON",
    "STDIN_NAME",
    "SourceInfo",
    "SpinLog",
    "SpinRows",
    "TableSpins",
    "detect_format",
    "json_array_error",
    "outcome_key",
    "read_spin_log",
    "read_spin_rows",
    "repeat_status",
    "sha256_of",
    "time_order_finding",
    "timestamp_kinds",
    "timestamp_notes",
]
