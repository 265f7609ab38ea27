"""A CSV log that grows or is cut while it is read is refused (exit 3), never read as other bytes than the
SHA-256 that the report and the store give for it (the line scan hashes the file once, the parse reads it
again)."""

from __future__ import annotations

import pytest

from rngcert.collect import csvstream
from rngcert.errors import InputError

LOG = "spin_id,result\n" + "".join(f"{i},{i % 37}\n" for i in range(1, 201))


def _scan(path):
    with open(path, "rb") as fh:
        return csvstream.scan_lines(fh)


def _parse(path, scan, open_fh):
    return csvstream.read_csv_parts(open_fh, path.name, scan, lambda cols, lines, rej: len(lines), block_size=1 << 20, encoding="utf-8")


def test_unchanged_file_is_read_whole(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text(LOG)
    scan = _scan(p)
    assert scan.size == p.stat().st_size
    parts, note = _parse(p, scan, lambda: open(p, "rb"))
    assert sum(parts) == 200 and note is None


@pytest.mark.parametrize("change", ["grows", "cut"])
def test_file_changed_between_scan_and_parse_is_refused(tmp_path, change):
    p = tmp_path / "log.csv"
    p.write_text(LOG)
    scan = _scan(p)

    def open_changed():
        if change == "grows":  # a controller still appending spins
            with open(p, "a") as fh:
                fh.write("201,5\n202,17\n")
        else:
            p.write_text(LOG[: len(LOG) // 2].rsplit("\n", 1)[0] + "\n")
        return open(p, "rb")

    with pytest.raises(InputError, match=r"log\.csv: the file changed while it was read \(\d+ bytes when hashed, \d+ after parsing\)"):
        _parse(p, scan, open_changed)


def test_bytes_in_memory_are_not_checked_against_a_file(tmp_path):
    import io

    data = LOG.encode()
    scan = csvstream.scan_lines(io.BytesIO(data))
    parts, _ = _parse(tmp_path / "stdin.csv", scan, lambda: io.BytesIO(data))
    assert sum(parts) == 200
