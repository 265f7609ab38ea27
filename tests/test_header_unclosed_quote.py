"""A header with a quote that is never closed (``spin_id,"result``) is an input error naming the line,
the column and the field, for certify, ingest and the Python API; before, the parsers disagreed (the
fast parser saw one record swallowing the file, the line reader read the header as if the quote were
not there) and a report was written from a guess."""

from __future__ import annotations

import pytest
from _support import run_cli

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError

BODY = "".join(f"{i},{(7 * i) % 37},D{i % 2}\n" for i in range(1, 300))


@pytest.mark.parametrize(
    ("header", "where"),
    [
        ('spin_id,"result,dealer', "line 1, column 2: the header has a quote that is never closed ('result,dealer')"),
        ('"spin_id","result","dealer', "line 1, column 3: the header has a quote that is never closed ('dealer')"),
        ('spin_id;result;"dealer', "line 1, column 3"),
    ],
)
def test_unclosed_quote_in_header_is_refused(tmp_path, header, where):
    log = tmp_path / "log.csv"
    log.write_text(header + "\n" + (BODY.replace(",", ";") if ";" in header else BODY))
    with pytest.raises(InputError) as e:
        read_spin_log(log, load_wheel("european"))
    assert where in str(e.value) and "log.csv" in str(e.value)
    r = run_cli("certify", log, "--out", tmp_path / "r")
    assert r.exit_code == 3 and where in r.output and not (tmp_path / "r").exists()
    r = run_cli("ingest", log, "--db", tmp_path / "s.duckdb")
    assert r.exit_code == 3 and where in r.output


@pytest.mark.parametrize("header", ['"spin_id","result","dealer"', 'spin_id,result,"dealer ""D"""', "spin_id,result,dealer"])
def test_closed_quotes_still_read(tmp_path, header):
    log = tmp_path / "log.csv"
    log.write_text(header + "\n" + BODY)
    assert read_spin_log(log, load_wheel("european"), columns={"dealer": 'dealer "D"'} if '""' in header else None).accepted == 299
