"""Spin-log collector: formats, real-export quirks, voids, rejects with file/line/column/reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError, NoDataError

EU = load_wheel("european")
ORDER = list(EU.labels)


def pos(label):
    return ORDER.index(str(label))


def only(log):
    """The one table of a log without a table column (named after the file)."""
    (t,) = log.tables.values()
    assert t.table == next(iter(log.tables))
    return t


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8", newline="")
    return p


def test_csv_basic_positions_and_counts(tmp_path):
    p = write(tmp_path, "a.csv", "spin_id,result\n1,0\n2,32\n3,26\n4,17\n")
    log = read_spin_log(p, EU)
    t = only(log)
    assert t.outcomes.tolist() == [0, 1, 36, pos(17)]
    assert log.sources[0].accepted == 4 and log.sources[0].rejected == 0
    assert log.level == "position"


def test_bom_crlf_quotes_spaces_case(tmp_path):
    data = b'\xef\xbb\xbfSpin_ID,RESULT\r\n1, "7" \r\n2,\'12\'\r\n3,  0\r\n'
    log = read_spin_log(write(tmp_path, "b.csv", data), EU)
    assert only(log).outcomes.tolist() == [pos(7), pos(12), 0]


def test_float_labels_from_spreadsheets_but_00_stays_distinct(tmp_path):
    us = load_wheel("american")
    log = read_spin_log(write(tmp_path, "c.csv", "result\n7.0\n00\n0\n"), us)
    labels = us.labels
    got = [labels[i] for i in only(log).outcomes]
    assert got == ["7", "00", "0"]


def test_rejects_keep_file_line_column_reason(tmp_path):
    text = "spin_id,result\n1,5\n2,37\n\n3,\n4,abc\n5,1,extra\n6,36\n"
    p = write(tmp_path, "d.csv", text)
    log = read_spin_log(p, EU)
    rej = {(r.line, r.reason.split(" ")[0]) for r in log.rejected}
    assert log.sources[0].accepted == 2
    assert log.sources[0].rejected == 4
    assert log.sources[0].blank_lines == 1
    lines = sorted(r.line for r in log.rejected)
    assert lines == [3, 5, 6, 7]  # physical line numbers, blank line 4 counted
    by_line = {r.line: r for r in log.rejected}
    assert "not a pocket" in by_line[3].reason and by_line[3].column.startswith("result")
    assert by_line[5].reason == "empty result"
    assert "expected 2 fields" in by_line[7].reason
    assert all(r.file == str(p) for r in log.rejected)
    assert len(rej) == 4
    # nothing lost: accepted + void + rejected = data rows
    s = log.sources[0]
    assert s.accepted + s.void + s.rejected == 6


def test_void_spins_excluded_and_counted(tmp_path):
    text = "result,revolutions,void\n5,5,false\n6,2,false\n7,4,true\n,1,\nno spin,,\n8,3,\n"
    log = read_spin_log(write(tmp_path, "e.csv", text), EU)
    t = only(log)
    assert t.outcomes.tolist() == [pos(5), pos(8)]
    assert t.void == 4 and log.void == 4
    assert log.rejected == []


def test_bad_revolutions_and_void_values_are_rejected(tmp_path):
    text = "result,revolutions,void\n5,x,false\n6,4,maybe\n7,4,false\n"
    log = read_spin_log(write(tmp_path, "f.csv", text), EU)
    reasons = sorted(r.reason for r in log.rejected)
    assert reasons == ["revolutions is not a non-negative number", "void must be true/false"]
    assert only(log).n == 1


def test_sorted_by_timestamp_and_duplicates_reported(tmp_path):
    """Spin 2 has two different results (a conflict, c07): neither is used, both rows rejected."""
    text = (
        "spin_id,timestamp,result\n"
        "3,2024-12-01T10:02:00Z,3\n1,2024-12-01T10:00:00Z,1\n2,2024-12-01T10:01:00Z,2\n2,2024-12-01T10:01:30Z,4\n"
    )
    log = read_spin_log(write(tmp_path, "g.csv", text), EU)
    t = only(log)
    assert t.outcomes.tolist() == [pos(1), pos(3)]
    assert any("put in spin_id order" in n for n in t.notes)  # with spin ids, id order is the order (c18)
    assert any("conflicting results (2)" in n for n in t.notes)
    assert [r.line for r in log.rejected] == [4, 5] and all("conflict" in r.reason for r in log.rejected)


def test_bad_timestamp_rejected(tmp_path):
    text = "timestamp,result\n2024-12-01T10:00:00Z,1\nyesterday,2\n"
    log = read_spin_log(write(tmp_path, "h.csv", text), EU)
    assert [r.reason for r in log.rejected] == ["timestamp is not ISO 8601"]
    assert log.rejected[0].line == 3


def test_multi_table_split_and_pool(tmp_path):
    text = "table,result\nT1,1\nT2,2\nT1,3\nT2,4\nT2,5\n"
    p = write(tmp_path, "i.csv", text)
    log = read_spin_log(p, EU)
    assert {k: v.n for k, v in log.tables.items()} == {"T1": 2, "T2": 3}
    assert log.tables["T2"].outcomes.tolist() == [pos(2), pos(4), pos(5)]
    pooled = read_spin_log(p, EU, pool=True)
    assert list(pooled.tables) == ["(all)"] and pooled.tables["(all)"].n == 5  # pooled


def test_column_mapping_and_errors(tmp_path):
    p = write(tmp_path, "j.csv", "Number,Croupier\n1,ann\n2,bob\n")
    log = read_spin_log(p, EU, columns={"result": "number", "dealer": "Croupier"})
    t = only(log)
    assert t.dealer_labels == ("ann", "bob") and t.dealer.tolist() == [0, 1]
    with pytest.raises(InputError, match="no 'result' column"):
        read_spin_log(p, EU)
    with pytest.raises(InputError, match="'Nope'"):
        read_spin_log(p, EU, columns={"result": "Nope"})
    with pytest.raises(InputError, match="not spin-log columns"):
        read_spin_log(p, EU, columns={"colour": "Number"})


def test_jsonl(tmp_path):
    lines = [json.dumps({"result": 5, "dealer": "a"}), "", "{broken", json.dumps({"result": "00"}), json.dumps({"result": 36, "void": True})]
    log = read_spin_log(write(tmp_path, "k.jsonl", "\n".join(lines) + "\n"), EU)
    assert only(log).outcomes.tolist() == [pos(5)]
    reasons = sorted((r.line, r.reason[:12]) for r in log.rejected)
    assert reasons[0] == (3, "not a JSON o")
    assert reasons[1][0] == 4  # 00 is not on a European wheel
    assert log.void == 1


def test_permanence_list_lines_and_fields(tmp_path):
    text = "27,22,28\n5, 20 ,25\n\n1;31 x 17\n36\n"
    log = read_spin_log(write(tmp_path, "p.txt", text), EU)
    t = only(log)
    assert t.n == 10
    assert t.outcomes[:3].tolist() == [pos(27), pos(22), pos(28)]
    (r,) = log.rejected
    assert (r.line, r.column, r.text) == (4, "field 3", "x")
    assert log.sources[0].format == "permanence"


def test_money_wheel_symbols_and_sections(tmp_path):
    mw = load_wheel("money-wheel-52")
    log = read_spin_log(write(tmp_path, "m.csv", "result\n0\n1\n51\n"), mw)
    assert log.level == "position" and only(log).outcomes.tolist() == [0, 1, 51]
    log = read_spin_log(write(tmp_path, "n.csv", "result\nA\nb\nG\npeg\n"), mw)
    assert log.level == "symbol"
    assert [mw.symbols[i] for i in only(log).outcomes] == ["A", "B", "G"]
    assert log.void == 1


def test_crazy_time_quoted_labels(tmp_path):
    ct = load_wheel("crazy-time")
    text = 'DateTime,WheelResult\n2024-12-01T10:22:57.476Z,"""Pachinko"""\n2024-12-01T10:20:00Z,"""1"""\n2024-12-01T10:21:00Z,"""Crazy Time"""\n'
    log = read_spin_log(write(tmp_path, "ct.csv", text), ct, columns={"result": "WheelResult", "timestamp": "DateTime"})
    sym = [ct.symbols[i] for i in only(log).outcomes]
    assert sym == ["1", "CrazyBonus", "Pachinko"]


@pytest.mark.parametrize(
    "content,match",
    [
        ("", "empty"),
        ("\n\n  \n", "empty"),
        ("spin_id,result\n", "no readable spin"),
        ("result\nfoo\nbar\n", "no readable spin"),
        (b"\x00\x01\x02garbage\xff\xfe", "no readable spin|not a readable|binary data|no 'result' column"),
    ],
)
def test_nothing_readable_is_a_clear_error(tmp_path, content, match):
    p = write(tmp_path, "bad.csv", content)
    with pytest.raises(NoDataError if "|" not in match else InputError, match=match):
        read_spin_log(p, EU)


def test_money_wheel_log_given_roulette_layout(tmp_path):
    p = write(tmp_path, "mw.csv", "result\nA\nB\nA\nC\n")
    with pytest.raises(NoDataError, match="is not a pocket"):
        read_spin_log(p, EU)


def test_five_percent_bad_rows_counted(tmp_path):
    rng = np.random.default_rng(5)
    vals = rng.integers(0, 37, 2000).astype(str).astype(object)
    bad = rng.choice(2000, 100, replace=False)
    vals[bad] = "X"
    p = write(tmp_path, "five.csv", "result\n" + "\n".join(vals) + "\n")
    log = read_spin_log(p, EU)
    assert log.sources[0].rejected == 100 and log.sources[0].accepted == 1900
    assert sorted(r.line for r in log.rejected) == sorted((bad + 2).tolist())


def test_input_arrays_not_shared_between_tables(tmp_path):
    p = write(tmp_path, "t.csv", "table,result,release_pocket,direction\nA,1,5,cw\nB,2,,ccw\nA,3,7,ccw\n")
    log = read_spin_log(p, EU)
    a = log.tables["A"]
    assert a.release.tolist() == [pos(5), pos(7)] and a.direction.tolist() == [0, 1]
    assert log.tables["B"].release.tolist() == [-1]


def test_streaming_batches_give_the_one_pass_result(tmp_path, monkeypatch):
    """A log read in many small batches gives exactly the result of one batch."""
    from rngcert.collect import csvstream

    rng = np.random.default_rng(8)
    rows = ["spin_id,table,dealer,result,void"]
    for i in range(3000):
        r = str(rng.integers(0, 37)) if rng.random() > 0.01 else "x"
        rows.append(f"{i % 1500},{'AB'[i % 2]},d{i % 7},{r},{'true' if rng.random() < 0.02 else 'false'}")
        if rng.random() < 0.005:
            rows.append("")
        if rng.random() < 0.005:
            rows.append("1,2")
    p = write(tmp_path, "many.csv", "\r\n".join(rows) + "\r\n")
    one = read_spin_log(p, EU)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 2048)
    many = read_spin_log(p, EU)
    assert [r.to_dict() for r in one.rejected] == [r.to_dict() for r in many.rejected]
    assert one.sources == many.sources
    for t in ("A", "B"):
        a, b = one.tables[t], many.tables[t]
        assert a.outcomes.tolist() == b.outcomes.tolist() and a.void == b.void
        assert a.dealer_labels == b.dealer_labels and a.dealer.tolist() == b.dealer.tolist()
        assert a.notes == b.notes and any("duplicated spin_id" in n for n in a.notes)
    # physical lines of rejects point at the offending text
    lines = p.read_text().split("\n")
    for r in one.rejected:
        assert lines[r.line - 1].rstrip("\r").endswith(r.text) or r.text in lines[r.line - 1]


def test_jsonl_missing_or_null_release_pocket_is_unknown_not_rejected(tmp_path):
    """A JSON Lines row without release_pocket, or with null, has an unknown release pocket (-1),
    like an empty CSV cell; only a value that is not a pocket is rejected."""
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.equipment.wheel import load_wheel

    p = tmp_path / "rel.jsonl"
    p.write_text('{"result": "5", "release_pocket": "12"}\n{"result": "7"}\n{"result": "9", "release_pocket": null}\n'
                 '{"result": "3", "release_pocket": "99"}\n')
    log = read_spin_log([p], load_wheel("european"))
    assert log.accepted == 3 and [r.line for r in log.rejected] == [4]
    t = next(iter(log.tables.values()))
    assert t.release.tolist()[1:] == [-1, -1]


def test_a_rejected_result_is_quoted_as_written(tmp_path):
    """The reason of a rejected result quotes the cell as the log wrote it (trimmed), not the
    lower-cased token it was looked up as: ``'=SUM(A1)'``, not ``'=sum(a1)'``."""
    p = tmp_path / "q.csv"
    p.write_text("result\n5\n =SUM(A1) \nRed\n7\n")
    log = read_spin_log([p], load_wheel("european"))
    why = {r.line: r.reason for r in log.rejected}
    assert why[3].startswith("'=SUM(A1)' is not a pocket/section") and why[4].startswith("'Red' is not a pocket/section")


def test_period_of_the_spins_on_both_read_paths_and_in_the_report(tmp_path, cli):
    """``SpinLog.period`` is the first and last timestamp of the accepted and void spins (rejected
    rows left out), the same on the streaming path and on the exact path (a repeated spin_id
    sends the log there); certify's report carries it as ``period`` (ISO 8601, UTC)."""


    rows = ["spin_id,timestamp,result", "1,2026-03-01T10:00:00Z,5", "2,2026-03-01T10:00:40.5Z,7", "3,not-a-time,9",
            "4,2026-03-01T12:30:00+01:00,0"]
    a = tmp_path / "a.csv"
    a.write_text("\n".join(rows) + "\n")
    b = tmp_path / "b.csv"
    b.write_text("\n".join(rows + ["4,2026-03-01T12:30:00+01:00,0"]) + "\n")  # an exact duplicate: the exact path
    us = 1_772_359_200_000_000  # 2026-03-01T10:00:00Z
    for p in (a, b):
        log = read_spin_log([p], EU)
        assert log.period == (us, us + 5_400_000_000), p  # 11:30 UTC is the last
    none = tmp_path / "n.csv"
    none.write_text("result\n5\n7\n")
    assert read_spin_log([none], EU).period is None
    res = cli("certify", a, "--json", "--no-plots", "--out", tmp_path, "--seed", "1")
    assert json.loads(res.output)["period"] == {"first": "2026-03-01T10:00:00", "last": "2026-03-01T11:30:00"}


def test_split_by_table_moves_nothing_when_the_tables_are_grouped_and_sorts_stably_otherwise():
    """A multi-table log's rows grouped by table (issue 26 item 6: the serial part of a 20-table certify): a log whose
    tables are already together keeps its arrays (no copy); interleaved tables, 8- and 16-bit codes, split in
    several chunks, give what a stable sort by table gives."""
    from rngcert.collect.spinlog.compact import _grouped, _split_by_table

    rng = np.random.default_rng(7)
    grouped = np.repeat(np.arange(5, dtype=np.int8), [3, 1, 4, 1, 5])
    arrays = {"outcomes": rng.integers(0, 37, grouped.size).astype(np.int8)}
    out, bounds = _split_by_table(arrays, grouped, 5, chunk=4)
    assert out["outcomes"] is arrays["outcomes"] and bounds.tolist() == [0, 3, 4, 8, 9, 14]
    for tab in (rng.integers(0, 5, 1000).astype(np.int8), rng.integers(0, 300, 1000).astype(np.int16), np.r_[grouped, np.int8(0)]):
        k = int(tab.max()) + 1
        arrays = {"outcomes": rng.integers(0, 37, tab.size).astype(np.int8), "release": rng.integers(-1, 37, tab.size).astype(np.int16)}
        out, bounds = _split_by_table(arrays, tab, k, chunk=64)
        order = np.argsort(tab, kind="stable")
        assert all(np.array_equal(out[name], arrays[name][order]) for name in arrays)
        assert bounds.tolist() == np.r_[0, np.cumsum(np.bincount(tab, minlength=k))].tolist()
    # the check crosses chunk boundaries: a fall between two chunks is found
    assert not _grouped(np.array([0, 1, 1, 0], dtype=np.int8), chunk=2) and _grouped(np.array([0, 1, 1, 2], dtype=np.int8), chunk=2)
