"""Inputs that cannot be misread (issue 28): cases c16, c18, c19, c20 and their kinds, as
regression tests named by case id, plus the formats a lab's tools write (JSON arrays, standard
input, Excel's ``sep=;`` line, decimal commas) and near-duplicate rounds.

The case generators and files are copied into tests/data/cases/.
"""

from __future__ import annotations

import csv
import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from rngcert.collect.labels import plausible_label, rejected_values
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel, wheel_from_dict
from rngcert.errors import EquipmentError, InputError
from rngcert.pipeline.certify_wheel import certify_log

CASES = Path(__file__).resolve().parent / "data" / "cases"
EU = load_wheel("european")
AM = load_wheel("american")


def _case_file(name: str, tmp_path: Path, monkeypatch) -> Path:
    """Run a case generator in ``tmp_path`` and return the file it writes."""
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(CASES / name), run_name="__main__")
    (out,) = [p for p in tmp_path.iterdir() if p.suffix in (".csv", ".jsonl", ".txt")]
    return out


def _fair_log(path: Path, n: int, seed: int, zero: str = "0", k: int = 37) -> np.ndarray:
    x = np.random.default_rng(seed).integers(0, k, n)
    with open(path, "w") as f:
        f.write("spin_id,result\n")
        for i, v in enumerate(x, 1):
            f.write(f"{i},{zero if v == 0 else v}\n")
    return x


def _certify(path, wheel=EU, **kw):
    return certify_log([path], wheel, seed=1, n_resamples=99, figures=False, **kw)


# ------------------------------------------------------------------------------------ c16 labels
def test_c16_zero_spelled_is_read_by_the_packaged_alias(tmp_path, monkeypatch):
    """c16: a fair wheel whose export writes 0 as 'zero' is not FAILed: the packaged European
    wheel reads 'zero' (and 'O') as pocket 0, so every row is accepted."""
    p = _case_file("c16-zero-spelled.py", tmp_path, monkeypatch)
    cert = _certify(p)
    assert cert.verdict != "FAIL"
    assert cert.log.accepted == 20_000 and not cert.log.rejected
    assert cert.report["tables"][0]["counts"][0] > 400  # pocket 0 has its spins


@pytest.mark.parametrize("spelling", ["Null", "green", "nought"])
def test_c16_kind_a_spelling_without_alias_is_inconclusive_naming_value_and_option(tmp_path, spelling, cli):
    """The kind: a spelling the wheel does not declare leaves pocket 0 empty; the verdict is
    INCONCLUSIVE ("labels that do not fit the wheel"), never FAIL, naming the value, its rows and
    the --alias option that reads it, even though the rejected share (2.7%) is under --max-rejected."""
    p = tmp_path / "z.csv"
    _fair_log(p, 6000, 16, zero=spelling)
    cert = _certify(p)
    assert cert.verdict == "INCONCLUSIVE"
    why = " ".join(cert.outcomes[0].reasons)
    assert "labels that do not fit the wheel" in why and repr(spelling) in why and f"--alias {spelling}=0" in why
    assert "pocket 0 has no accepted row" in why
    # the option named reads them: then the wheel is judged on all its spins
    res = cli("certify", p, "--alias", f"{spelling}=0", "--out", tmp_path / "r", "--no-plots", "--resamples", 99, "--seed", 1, "--json")
    rep = json.loads(res.output)
    assert rep["rows"]["rejected"] == 0 and rep["verdict"] != "FAIL"
    assert rep["rerun"]["aliases"][spelling] == "0"


def test_c16_kind_concentrated_unknown_value_is_inconclusive_even_with_a_large_max_rejected(tmp_path):
    """A value that is no plausible spelling but carries a pocket's worth of rows ('X' for 300 rows
    of 6000) is a label of the export, not a random loss: INCONCLUSIVE whatever --max-rejected says."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 37, 6000).astype(object)
    x[rng.choice(6000, 300, replace=False)] = "X"
    p = tmp_path / "x.csv"
    p.write_text("result\n" + "\n".join(map(str, x)) + "\n")
    cert = _certify(p, max_rejected_share=0.5)
    assert cert.verdict == "INCONCLUSIVE"
    why = " ".join(cert.outcomes[0].reasons)
    assert "'X'" in why and "--alias VALUE=LABEL" in why


def test_c16_kind_scattered_typos_are_random_losses_not_a_label_finding(tmp_path):
    """A few distinct typos (one row each) of pockets that have counts are random losses: no
    label reason (the --max-rejected rule covers them)."""
    x = np.random.default_rng(4).integers(0, 37, 3000).astype(object)
    for i, bad in zip(range(5, 3000, 600), ["7x7", "??", "3 3", "1-", "abc"]):
        x[i] = bad
    p = tmp_path / "t.csv"
    p.write_text("result\n" + "\n".join(map(str, x)) + "\n")
    cert = _certify(p)
    assert not any("labels that do not fit" in r for r in cert.outcomes[0].reasons)
    assert cert.log.sources[0].rejected == 5


def test_c16_kind_double_zero_on_a_single_zero_wheel_names_the_choice(tmp_path):
    """'00' on a European wheel is not read as 0 (it is the American double zero); when it
    carries pocket 0's spins the reason names it, with the alias that would read it."""
    p = tmp_path / "dz.csv"
    _fair_log(p, 4000, 5, zero="00")
    cert = _certify(p)
    assert cert.verdict == "INCONCLUSIVE"
    assert "--alias 00=0" in " ".join(cert.outcomes[0].reasons)


def test_c16_kind_american_list_on_the_european_default_names_the_american_wheel(tmp_path):
    """A fair American permanence list certified with the European default: its '00' rows (1/38)
    are a pocket of the American wheel, not a spelling of 0 (pocket 0 has its own rows). The reason
    names --equipment american, never --alias 00=0 (which would FAIL the wheel on double zeros)."""
    x = np.random.default_rng(4).integers(0, 38, 3800)
    p = tmp_path / "am.txt"
    p.write_text("\n".join(" ".join("00" if v == 37 else str(v) for v in x[i:i + 10]) for i in range(0, x.size, 10)) + "\n")
    cert = _certify(p)
    why = " ".join(cert.outcomes[0].reasons)
    assert cert.verdict == "INCONCLUSIVE"
    assert "--equipment american" in why and "--alias 00=0" not in why


def test_c16_kind_european_list_as_american_is_no_verdict_naming_both_causes(tmp_path):
    """A fair European list certified with --equipment american FAILed: 'pocket 00 came up 0 times against
    211 expected (-100%) ... a worn, shallow or loose pocket'. Every result is a European pocket and only 00
    never came up: INCONCLUSIVE, naming --equipment european and the pocket to inspect if the wheel has it.
    A pocket that both wheels have and that never came up still FAILs."""
    x = np.random.default_rng(9).integers(0, 37, 8000)
    p = tmp_path / "eu.txt"
    p.write_text("\n".join(" ".join(map(str, x[i:i + 10])) for i in range(0, x.size, 10)) + "\n")
    cert = _certify(p, AM)
    why = " ".join(cert.outcomes[0].reasons)
    assert cert.verdict == "INCONCLUSIVE" and "--equipment european" in why and "inspect it" in why
    y = np.where(x == 17, 18, x)  # pocket 17 never comes up: no other packaged wheel lacks it
    q = tmp_path / "no17.txt"
    q.write_text("\n".join(" ".join(map(str, y[i:i + 10])) for i in range(0, y.size, 10)) + "\n")
    assert _certify(q, EU).verdict == "FAIL"


def test_labels_plausible_spellings():
    assert plausible_label("ZERO", EU) == "0" and plausible_label("#7", EU) == "7" and plausible_label("No. 12", EU) == "12"
    assert plausible_label("7,0", EU) == "7" and plausible_label("double zero", AM) == "00" and plausible_label("seven", EU) == "7"
    assert plausible_label("banana", EU) is None and plausible_label("99", EU) is None
    ct = load_wheel("crazy-time")
    assert plausible_label("coin flip", ct) == "CoinFlip" and plausible_label("Crazy-Time", ct) == "CrazyBonus"


def test_labels_rejected_values_group_by_value_with_lines(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("result\n1\nNull\n2\n null \nfoo\n")
    log = read_spin_log(p, EU)
    vals = rejected_values(log.rejected, EU)
    assert [(v.value, v.count, v.guess) for v in vals] == [("Null", 2, "0"), ("foo", 1, None)]
    assert vals[0].lines == [(str(p), 3), (str(p), 5)]


def test_a_value_twice_on_one_permanence_line_names_the_line_once(tmp_path):
    """A permanence line holding the same unreadable value twice was named twice ('lines 41, 41, 42')."""
    p = tmp_path / "p.txt"
    p.write_text("".join(f"{(7 * i) % 37} {(5 * i) % 37}\n" for i in range(40)) + "17 38 22 38\n" + "5 38\n" + "9 8\n" * 5)
    (v,) = [v for v in rejected_values(read_spin_log(p, EU).rejected, EU) if v.value == "38"]
    assert v.count == 3 and v.lines == [(str(p), 41), (str(p), 42)]
    assert v.where() == f"{p} lines 41, 42 …"
    assert type(v)(v.value, 2, [(str(p), 41)]).where() == f"{p} line 41 …"


@pytest.mark.parametrize("word", ["void", "No Spin", "peg"])
def test_an_alias_cannot_read_a_void_word_as_a_pocket(tmp_path, word):
    """'void' = '0' under [aliases] (or --alias) read every void spin (rule 5.2) as pocket 0, and a fair wheel
    FAILed ('zero came up 326 times against 108 expected'). A void word is refused as an alias."""
    doc = {"id": "eu-al", "kind": "roulette", "wheel_order": list(EU.labels),
           "red": [lab for lab, c in zip(EU.labels, EU.colours) if c == "red"], "green": ["0"], "aliases": {word: "0"}}
    with pytest.raises(EquipmentError, match="marks a void spin"):
        wheel_from_dict(doc, "al.toml")
    with pytest.raises(EquipmentError, match="marks a void spin"):
        EU.with_aliases({word: "0"})


def test_aliases_validated_in_linear_time_and_never_name_two_pockets():
    base = {"id": "w", "kind": "roulette", "wheel_order": [str(i) for i in range(37)], "red": ["1"], "green": ["0"]}
    assert wheel_from_dict(dict(base, aliases={"zero": "0", "O": "0"})).token_table()[0]["o"] == 0
    for bad, msg in (({"zero": "0", "ZERO": "5"}, "cannot name two pockets"), ({"0": "5"}, "is itself the label"),
                     ({"x": "99"}, "is not a label"), ({" ": "0"}, "empty alias")):
        with pytest.raises(EquipmentError, match=msg):
            wheel_from_dict(dict(base, aliases=bad))
    with pytest.raises(EquipmentError, match="cannot name two pockets"):
        EU.with_aliases({"Zero": "32"})  # the packaged 'zero' is pocket 0
    # linear: 30,000 aliases of a 37-pocket wheel validate at once
    many = {f"p{i}": str(i % 37) for i in range(30_000)}
    assert len(wheel_from_dict(dict(base, aliases=many)).aliases) == 30_000


def test_packaged_wheels_carry_the_common_spellings():
    pos, _ = EU.token_table()
    assert pos["zero"] == pos["o"] == pos["0"] and "00" not in pos
    pos, _ = AM.token_table()
    assert pos["double zero"] == pos["00"] != pos["zero"]


# ------------------------------------------------------------------------------------ c19 duplicate keys
def test_c19_duplicate_json_key_rejects_the_row_with_line_and_reason(tmp_path):
    """c19: row 100 names 'result' twice: rejected with its line, the key as column, and why;
    neither value is taken; the other 199 rows are read."""
    log = read_spin_log(CASES / "c19-duplicate-key.jsonl", EU)
    assert log.accepted == 199
    (r,) = log.rejected
    assert (r.line, r.column) == (100, "result") and "given twice" in r.reason and '"result": 18' in r.text


@pytest.mark.parametrize("block", [None, 4096])
def test_c19_kind_one_key_in_two_cases_is_one_column(tmp_path, monkeypatch, block):
    """JSON keys are matched case-insensitively, as CSV columns are: an object giving 'result' and
    'RESULT' (or 'spin_id' and ' Spin_Id') names one column twice and is rejected (one value was taken
    silently); a row that spells the key 'Result' alone is read as 'result' (it was an 'empty result').
    ``block``: the streamed reader's block size, so that the rows fall in a later block."""
    from rngcert.collect.spinlog import jsonl

    if block:
        monkeypatch.setattr(jsonl, "JSONL_BLOCK", block)
    rows = [json.dumps({"spin_id": i, "result": i % 37}) for i in range(1, 400)]
    rows[300] = '{"spin_id": 301, "result": 5, "RESULT": 6}'
    rows[301] = '{"spin_id": 302, "result": 7, " Spin_Id": 999}'
    rows[302] = '{"spin_id": 303, "Result": 8}'
    p = tmp_path / "k.jsonl"
    p.write_text("\n".join(rows) + "\n")
    log = read_spin_log(p, EU)
    assert [(r.line, r.column) for r in log.rejected] == [(301, "RESULT"), (302, " Spin_Id")]
    assert all("ambiguous" in r.reason and "case-insensitively" in r.reason for r in log.rejected)
    assert log.accepted == 397
    t = next(iter(log.tables.values()))
    assert EU.labels[t.outcomes[-97]] == "8"  # spin 303, read from its 'Result' key


def test_c19_kind_a_json_array_is_named_and_the_fix_given(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps([{"result": i % 37} for i in range(50)], indent=1))
    with pytest.raises(InputError, match="a JSON array, not JSON Lines.*jq -c"):
        read_spin_log(p, EU)
    p2 = tmp_path / "a.jsonl"
    p2.write_text(json.dumps([{"result": 1}]))
    with pytest.raises(InputError, match="a JSON array"):
        read_spin_log(p2, EU)


def test_c18_kind_zoneless_local_times_mixed_with_zoned_keep_the_file_order(tmp_path):
    """No spin ids; the exporter wrote local times without a zone, then with '+02:00'. Read as UTC, the
    zone-less half lands two hours late: the rows were re-sorted by time (240 rows interleaved) and 6
    pairs of different rounds, now '0 s apart', were rejected as near-duplicates. The file order is the
    spin order; the disagreement is a finding (mixed zones), and no row is lost."""
    import datetime as dt

    x = np.random.default_rng(21).integers(0, 37, 6000)
    t0 = dt.datetime(2026, 6, 1, 8, 0, 0)
    p = tmp_path / "mz.csv"
    p.write_text("timestamp,result\n" + "".join(
        f"{(t0 + dt.timedelta(seconds=30 * i)).isoformat()}{'' if i < 3000 else '+02:00'},{v}\n" for i, v in enumerate(x)))
    log = read_spin_log(p, EU)
    t = next(iter(log.tables.values()))
    assert log.accepted == 6000 and not log.rejected
    assert [EU.labels[i] for i in t.outcomes] == [str(v) for v in x]  # the file's order
    assert not any("sorted by timestamp" in n for n in t.notes)
    (f,) = [f for f in t.findings if f["name"] == "time_order"]
    assert f["evidence"]["cause"] == "timestamps in mixed time zones" and not f["inconclusive"]


@pytest.mark.parametrize("stamp", ["2016-12-31T23:59:60Z", "2016-12-31 23:59:60.5+00:00", "2016-12-31T23:59:60"])
def test_c18_kind_a_leap_second_is_a_time_not_a_rejected_row(tmp_path, stamp):
    """23:59:60 (the leap second of 2016-12-31, valid UTC and ISO 8601) rejected its spin as 'timestamp is not
    ISO 8601'. It is read as the last microsecond before it, so the spin keeps its place in time order."""
    p = tmp_path / "leap.csv"
    p.write_text("spin_id,timestamp,result\n1,2016-12-31T23:59:30Z,5\n2," + stamp + ",7\n3,2017-01-01T00:00:30Z,9\n")
    log = read_spin_log(p, EU)
    t = next(iter(log.tables.values()))
    assert log.accepted == 3 and not log.rejected and not t.findings
    assert [EU.labels[i] for i in t.outcomes] == ["5", "7", "9"]


# ------------------------------------------------------------------------------------ c20 titles
@pytest.mark.parametrize("fmt", ["{n} {v}", "{n}. {v}", "{n} {v} {w}"])
def test_c20_kind_numbered_permanence_lines_are_not_read_as_results(tmp_path, fmt):
    """A fair list whose lines carry a running coup number (1-25, again on every page) before the results:
    the numbers were read as spins and the wheel FAILed ('the longest run of one colour was 5 spins
    against about 13.4 expected'). The numbering is named and the verdict is INCONCLUSIVE."""
    x = np.random.default_rng(11).integers(0, 37, (4000, 2))
    p = tmp_path / "numbered.txt"
    p.write_text("\n".join(fmt.format(n=i % 25 + 1, v=a, w=b) for i, (a, b) in enumerate(x)) + "\n")
    cert = _certify(p)
    why = " ".join(cert.outcomes[0].reasons)
    assert cert.verdict == "INCONCLUSIVE" and "the lines are numbered" in why and "(1, 2, 3, 4" in why


def test_c20_kind_a_fair_list_of_several_spins_a_line_is_not_taken_for_numbered(tmp_path):
    x = np.random.default_rng(12).integers(0, 37, 6000)
    p = tmp_path / "fair.txt"
    p.write_text("\n".join(" ".join(map(str, x[i:i + 2])) for i in range(0, x.size, 2)) + "\n")
    cert = _certify(p)
    assert not any("numbered" in r for r in cert.outcomes[0].reasons)


@pytest.mark.parametrize("sep", ["|", " | "])
def test_c20_kind_vertical_bars_separate_a_permanence_list(tmp_path, sep):
    """'15|32|35' read as one unreadable token a line (nothing readable, exit 3), and ' | ' gave 3,600 rejected
    '|' rows with the advice --alias VALUE=LABEL for a separator. A vertical bar separates like a comma,
    in the streamed read and in the exact read of a line with a word (the title below)."""
    x = np.random.default_rng(9).integers(0, 37, 4000)
    lines = [sep.join(map(str, x[i:i + 10])) for i in range(0, x.size, 10)]
    p, q = tmp_path / "bars.txt", tmp_path / "spaces.txt"
    p.write_text("Tisch 5 | 19.04.2026\n" + "\n".join(lines) + "\n" + sep.join(["17", "22", "x"]) + "\n")
    q.write_text("\n".join(" ".join(map(str, x[i:i + 10])) for i in range(0, x.size, 10)) + "\n17 22 x\n")
    a, b = read_spin_log(p, EU), read_spin_log(q, EU)
    ta, tb = next(iter(a.tables.values())), next(iter(b.tables.values()))
    assert a.accepted == b.accepted == 4002 and np.array_equal(ta.outcomes, tb.outcomes)
    assert [(r.line, r.text) for r in a.rejected] == [(1, "Tisch 5 | 19.04.2026"), (402, "x")]


def test_c20_kind_a_label_of_two_words_in_a_comma_list_is_one_token(tmp_path):
    """A Crazy Time list 'Coin Flip, 2, Cash Hunt, 1' was split on every blank: 'Coin' and 'Flip' rejected with
    the advice --alias Coin=..., which cannot read it. In a line with commas (semicolons, bars) the pieces are
    the tokens ('Coin Flip'), read with the alias the reason names; numbers apart by blanks still split."""
    ct = load_wheel("crazy-time")
    s = ["1"] * 21 + ["2"] * 13 + ["5"] * 7 + ["10"] * 4 + ["Coin Flip"] * 4 + ["Pachinko"] * 2 + ["Cash Hunt"] * 2 + ["Crazy Time"]
    x = np.random.default_rng(3).choice(s, 3000)
    p = tmp_path / "ct.txt"
    p.write_text("\n".join(", ".join(x[i:i + 8]) for i in range(0, x.size, 8)) + "\n1 2, 5\n")
    log = read_spin_log(p, ct)
    assert {r.text for r in log.rejected if r.column != "line"} >= {"Coin Flip", "Cash Hunt"}
    assert not any(r.text in ("Coin", "Flip", "Cash", "Hunt") for r in log.rejected)
    read = read_spin_log(p, ct.with_aliases({"Coin Flip": "CoinFlip", "Cash Hunt": "CashHunt"}))
    assert read.accepted == 3000 + 3 and not read.rejected


@pytest.mark.parametrize("per_line", [10, 1])
def test_c20_kind_decimal_commas_in_a_permanence_list_are_not_separators(tmp_path, per_line):
    """'15,0 32,0 35,0 ...' (a spreadsheet export with decimal commas) was read as the spins 15, 0, 32, 0, ...
    and a fair wheel FAILed: 'pocket 0 came up 4,087 times against 216 expected (+1790%)'. When every comma
    of the list stands before the zeros that end a number, it is a decimal comma (with a note); a
    comma-separated list (whose commas precede any number) is read as before."""
    x = np.random.default_rng(9).integers(0, 37, 4000)
    p = tmp_path / "dc.txt"
    p.write_text("\n".join(" ".join(f"{v},0" for v in x[i:i + per_line]) for i in range(0, x.size, per_line)) + "\n")
    log = read_spin_log(p, EU)
    t = next(iter(log.tables.values()))
    assert log.accepted == 4000 and [EU.labels[i] for i in t.outcomes] == [str(v) for v in x]
    assert any("decimal comma" in n for n in _all_notes(log))
    q = tmp_path / "commas.txt"
    q.write_text("\n".join(",".join(map(str, x[i:i + 10])) for i in range(0, x.size, 10)) + "\n")
    cl = read_spin_log(q, EU)
    assert cl.accepted == 4000 and not any("decimal comma" in n for n in _all_notes(cl))


def _all_notes(log) -> list:
    return list(log.notes) + [n for t in log.tables.values() for n in t.notes]


def test_c20_permanence_title_line_rejected_whole(tmp_path):
    """c20: the title 'Spielbank Tisch 1 19.04.2026' is one rejected row (line 1, reason), and no
    spin '1' is taken from it."""
    log = read_spin_log(CASES / "c20-permanence-title.txt", EU)
    (r,) = log.rejected
    assert r.line == 1 and r.column == "line" and "title" in r.reason and r.text.startswith("Spielbank")
    first_numbers = (CASES / "c20-permanence-title.txt").read_text().splitlines()[1].split(",")
    t = next(iter(log.tables.values()))
    assert [EU.labels[i] for i in t.outcomes[:3]] == first_numbers[:3]
    assert log.accepted == 600


def test_c20_kind_text_lines_anywhere_but_labels_are_not_text(tmp_path):
    """A text line in the middle is a title too; a line of numbers with one word keeps its numbers;
    a line of pocket labels spelled in words ('zero') is results, not a title."""
    p = tmp_path / "perm.txt"
    p.write_text("5 17 32\nFortsetzung Tisch 2\n1 2 banana 3\nzero zero 4\n")
    log = read_spin_log(p, EU)
    rej = {(r.line, r.column) for r in log.rejected}
    assert rej == {(2, "line"), (3, "field 3")}
    assert log.accepted == 9


def test_c20_kind_titled_permanence_list_on_standard_input(cli, tmp_path):
    """c20's list piped in (no .txt name): it was taken for a CSV whose one column is the title, and
    refused ("no 'result' column"); a one-column CSV with a header stays a CSV."""
    from rngcert.collect.spinlog import detect_format

    data = (CASES / "c20-permanence-title.txt").read_bytes()
    assert detect_format(Path("(standard input)"), data) == "permanence"
    assert detect_format(Path("x.csv"), data) == "csv"  # a .csv name is a CSV
    assert detect_format(Path("(standard input)"), b"result\n3\n5\n7\n9\n") == "csv"
    res = cli("certify", "-", "--out", tmp_path, "--no-plots", "--resamples", 99, "--seed", 1, "--json", input=data.decode())
    rep = json.loads(res.output)
    assert rep["rows"]["accepted"] == 600 and rep["rows"]["rejected"] == 1


# ------------------------------------------------------------------------------------ formats
def test_standard_input_as_dash(cli, tmp_path):
    data = "result\n" + "\n".join(str(i % 37) for i in range(400)) + "\n"
    res = cli("certify", "-", "--out", tmp_path, "--no-plots", "--resamples", 99, "--seed", 1, "--json", input=data)
    rep = json.loads(res.output)
    assert rep["rows"]["accepted"] == 400 and rep["inputs"][0]["path"] == "(standard input)"


def test_excel_sep_line_and_decimal_commas(tmp_path):
    p = tmp_path / "excel.csv"
    p.write_bytes(b"\xef\xbb\xbfsep=;\r\nspin_id;result;revolutions\r\n1;7,0;3,5\r\n2;12;4\r\n3;\"0\";5\r\n4;36,00;2,5\r\n")
    log = read_spin_log(p, EU)
    t = next(iter(log.tables.values()))
    assert [EU.labels[i] for i in t.outcomes] == ["7", "12", "0"] and log.void == 1  # 2,5 revolutions: void
    assert not log.rejected and any("sep=;" in n for n in log.notes)
    assert log.sources[0].blank_lines == 0


def test_excel_sep_line_with_a_single_column(tmp_path):
    p = tmp_path / "one.csv"
    p.write_text("sep=;\nresult\n7,0\n5\n")
    log = read_spin_log(p, EU)
    assert log.accepted == 2 and not log.rejected


# ------------------------------------------------------------------------------------ c18 order
def test_c18_dst_fallback_spin_id_order_is_the_order_and_the_clock_change_is_named(tmp_path, monkeypatch):
    """c18: naive local times across the end of summer time; the spins stay in spin-id order, the
    disagreement is a data-integrity finding with counts and where (a clock change), the
    zone-less timestamps are named; being explained, it does not make the verdict INCONCLUSIVE."""
    p = _case_file("c18-dst-fallback.py", tmp_path, monkeypatch)
    x = np.array([int(r["result"]) for r in csv.DictReader(open(p))])
    cert = _certify(p, required_bias=3.0)  # +300%: 400 spins cannot carry the default +50% (issue 23); the point here is the order
    (t,) = cert.log.tables.values()
    assert [EU.labels[i] for i in t.outcomes] == [str(v) for v in x]  # file order = id order, not re-sorted
    (f,) = t.findings
    assert f["name"] == "time_order" and f["inconclusive"] == ""
    ev = f["evidence"]
    assert ev["backward_steps"] == 1 and ev["spins_out_of_time_order"] == 101 and "clock change" in ev["cause"]
    assert "spin_id 299" in f["text"] and "spin_id 300" in f["text"]
    assert any("400 timestamp(s) have no time zone" in n for n in cert.report["notes"])
    integ = cert.report["tables"][0]["integrity"]
    assert integ["findings"][0]["name"] == "time_order" and "time order against spin-id order" in integ["checks"]
    assert cert.verdict in ("PASS", "SUSPECT")  # explained: a finding, not a reason for no verdict
    assert not any("time order" in r for r in cert.outcomes[0].reasons)


def test_c18_kind_unexplained_disagreement_is_inconclusive_and_shuffled_file_keeps_id_order(tmp_path):
    """Timestamps that go back against the ids by 7 minutes at several places are not a clock
    change: INCONCLUSIVE with counts. A file whose rows are shuffled but whose ids and times
    agree is put in id order with a note, and gives no finding."""
    rng = np.random.default_rng(2)
    n = 400
    x = rng.integers(0, 37, n)
    t0 = np.datetime64("2026-03-01T10:00:00")
    ts = t0 + np.arange(n) * np.timedelta64(30, "s")
    ts_bad = ts.copy()
    for j in (50, 150, 250):
        ts_bad[j:] -= np.timedelta64(420, "s")
    p = tmp_path / "bad.csv"
    p.write_text("spin_id,timestamp,result\n" + "".join(f"{i + 1},{ts_bad[i]}Z,{x[i]}\n" for i in range(n)))
    cert = _certify(p)
    (t,) = cert.log.tables.values()
    assert t.findings[0]["evidence"]["backward_steps"] == 3 and t.findings[0]["inconclusive"]
    assert cert.verdict == "INCONCLUSIVE" and any("against the spin-id order" in r for r in cert.outcomes[0].reasons)
    perm = rng.permutation(n)
    q = tmp_path / "shuffled.csv"
    q.write_text("spin_id,timestamp,result\n" + "".join(f"{i + 1},{ts[i]}Z,{x[i]}\n" for i in perm))
    log = read_spin_log(q, EU)
    (t,) = log.tables.values()
    assert [EU.labels[i] for i in t.outcomes] == [str(v) for v in x] and not t.findings
    assert any("spin_id order" in s for s in t.notes)


def test_c18_kind_date_only_and_mixed_zones_are_named(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("timestamp,result\n2026-10-25,1\n2026-10-25,2\n2026-10-26T10:00:00+01:00,3\n2026-10-26T10:01:00+02:00,4\n")
    log = read_spin_log(p, EU)
    text = " ".join(log.notes)
    assert "2 timestamp(s) are a date only (e.g. '2026-10-25')" in text and "mixed time zones (+01:00, +02:00)" in text


# ------------------------------------------------------------------------------------ near-duplicate rounds
def test_near_duplicate_rounds_on_the_crazy_time_log():
    """The Crazy Time log (shared data) has 17 rounds scraped twice, 0.18-0.65 s apart (a round
    lasts at least 34 s there): one finding listing the 17 pairs, each round counted once."""
    from _support import shared_file

    f = shared_file("data", "money-wheel-crazytime", "CleanData.csv")
    cert = _certify(f, load_wheel("crazy-time"), columns={"result": "WheelResult", "timestamp": "DateTime"})
    (t,) = cert.report["tables"]
    assert t["n"] == 10909 - 17
    (fd,) = [x for x in t["integrity"]["findings"] if x["name"] == "near_duplicates"]
    pairs = fd["evidence"]["pairs"]
    assert len(pairs) == 17 and all(p["seconds_apart"] < 1 for p in pairs)
    assert {"first_line": 67, "second_line": 66, "seconds_apart": 0.565, "result": "5"} in pairs
    assert "Rule applied" in fd["text"] and fd["evidence"]["min_round_interval_s"] == 5.0
    src = cert.report["inputs"][0]
    assert src["near_duplicates"] == 17 and "17 of them near-duplicate rounds" in src["summary"]
    assert cert.verdict != "INCONCLUSIVE"  # counted once; 0.16% of the rows


def test_near_duplicates_respin_payout_and_resolution(tmp_path):
    """A bonus re-spin under the same round id with another result is a spin; rows with the same
    result but different payouts are not duplicates; minute-resolution stamps are not judged;
    --min-round-interval 0 turns the check off."""
    rows = ["round_id,timestamp,result,payout"]
    base = np.datetime64("2026-01-01T12:00:00")
    rng = np.random.default_rng(9)
    res = rng.choice(["1", "2", "5", "10"], 300)
    for i in range(300):
        rows.append(f"r{i},{base + np.timedelta64(45 * i, 's')}Z,{res[i]},{i}")
    rows.append(f"r299,{base + np.timedelta64(45 * 299 + 2, 's')}Z,{'2' if res[299] != '2' else '1'},7")  # re-spin, other result
    rows.append(f"r300,{base + np.timedelta64(45 * 300, 's')}Z,5,100")
    rows.append(f"r300,{base + np.timedelta64(45 * 300, 's')}.3Z,5,100")  # scraped twice: a near-duplicate
    rows.append(f"r301,{base + np.timedelta64(45 * 301, 's')}Z,5,1")
    rows.append(f"r302,{base + np.timedelta64(45 * 301 + 1, 's')}Z,5,2")  # same result, other payout: not a duplicate
    p = tmp_path / "mw.csv"
    p.write_text("\n".join(rows) + "\n")
    ct = load_wheel("crazy-time")
    log = read_spin_log(p, ct, min_round_interval=5)
    (t,) = log.tables.values()
    (f,) = t.findings
    assert [(q["first_line"], q["second_line"]) for q in f["evidence"]["pairs"]] == [(303, 304)]
    assert f["evidence"]["compared"] == ["table", "timestamp", "result", "payout"]
    assert t.n == 304 and log.sources[0].near_duplicates == 1
    assert read_spin_log(p, ct, min_round_interval=0).tables[next(iter(log.tables))].n == 305
    m = tmp_path / "minutes.csv"
    m.write_text("timestamp,result\n" + "".join(f"2026-01-01T12:{i // 2:02d}:00Z,{1 + (i % 3 == 0)}\n" for i in range(60)))
    (tm,) = read_spin_log(m, ct, min_round_interval=5).tables.values()
    assert tm.n == 60 and not tm.findings and any("whole minutes" in n for n in tm.notes)


def test_min_round_interval_option(cli, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("timestamp,result\n2026-01-01T12:00:00Z,5\n2026-01-01T12:00:03Z,5\n2026-01-01T12:00:40Z,7\n")
    rep = json.loads(cli("certify", p, "--json", "--no-plots", "--resamples", 99, "--seed", 1, "--out", tmp_path).output)
    assert rep["rows"]["accepted"] == 2 and rep["rerun"]["min_round_interval"] == 5.0
    rep = json.loads(cli("certify", p, "--json", "--no-plots", "--resamples", 99, "--seed", 1, "--out", tmp_path, "--min-round-interval", "2s").output)
    assert rep["rows"]["accepted"] == 3
    res = cli("certify", p, "--min-round-interval", "soon", "--out", tmp_path)
    assert res.exit_code == 2 and "not a duration" in res.output


# ------------------------------------------------------------------------------------ JSON keys
def test_keys_that_list_pockets_hold_labels_and_positions_are_named_positions(tmp_path):
    """Issue 28: on a byte-modulo-37 log the per-pocket Holm rejections are pockets 34, 36 and 35
    (wheel positions 9, 13, 34): ``pockets_rejected_holm`` holds those labels, the positions are
    ``positions_rejected_holm``; the sector's arc and the first harmonic name their pockets too."""
    x = np.random.default_rng(1).integers(0, 256, 40000) % 37
    p = tmp_path / "mod.csv"
    p.write_text("result\n" + "\n".join(map(str, x)) + "\n")
    cert = _certify(p)
    tests = {t["name"]: t for t in cert.report["tables"][0]["battery"]["tests"]}
    mc = tests["max_count"]["details"]
    assert mc["pockets_rejected_holm"] == ["34", "36", "35"] and mc["positions_rejected_holm"] == [9, 13, 34]
    assert [EU.labels[i] for i in mc["positions_rejected_holm"]] == mc["pockets_rejected_holm"]
    assert mc["pocket"] == EU.labels[mc["position"]]
    arc = tests["sector_scan"]["details"]["best_arc"]
    assert arc["pockets"] == [EU.labels[i] for i in arc["positions"]]
    fh = tests["first_harmonic"]["details"]
    assert fh["phase_pocket"] == EU.labels[round(fh["phase_position"]) % 37] and "phase_pockets" not in fh


def test_c18_kind_without_spin_ids_a_clock_change_keeps_the_file_order(tmp_path, monkeypatch):
    """Without spin ids, naive local times across the DST fall-back are not re-sorted (a sort would
    interleave the two passes of the repeated hour): the file order is kept and the step named.
    A file whose times are shuffled otherwise is still sorted by time."""
    p = _case_file("c18-dst-fallback.py", tmp_path, monkeypatch)
    rows = list(csv.DictReader(open(p)))
    q = tmp_path / "noids.csv"
    q.write_text("timestamp,result\n" + "".join(f"{r['timestamp']},{r['result']}\n" for r in rows))
    log = read_spin_log(q, EU)
    (t,) = log.tables.values()
    assert [EU.labels[i] for i in t.outcomes] == [r["result"] for r in rows]
    (f,) = t.findings
    assert "clock change" in f["evidence"]["cause"] and f["evidence"]["order"] == "file order" and not f["inconclusive"]
    assert "spin 300 of the table" in f["text"]
    cert = _certify(q)  # certify's near-duplicate check compares neighbours in file order too: the repeated hour is no duplicate
    assert cert.log.accepted == 400 and not cert.log.rejected


def test_c16_kind_money_wheel_symbol_spelled_with_a_space_names_the_shell_ready_alias(tmp_path):
    ct = load_wheel("crazy-time")
    syms = np.array(ct.symbols)
    x = syms[np.random.default_rng(1).choice(len(syms), 5000, p=np.array(ct.symbol_counts) / 54)]
    p = tmp_path / "ct.csv"
    p.write_text("result\n" + "\n".join(np.where(x == "CoinFlip", "Coin Flip", x)) + "\n")
    cert = _certify(p, ct)
    assert cert.verdict == "INCONCLUSIVE"
    first = cert.outcomes[0].reasons[0]  # the cause before the unreadable share that follows from it
    assert first.startswith("labels that do not fit the wheel") and '--alias "Coin Flip=CoinFlip"' in first


def test_near_duplicates_not_judged_when_the_equipment_logs_rounds_that_fast(tmp_path):
    """A log whose rounds are 2 s apart (an RNG terminal, a test harness): same results 2 s apart
    are its rounds, not copies; nothing is rejected (rejecting them would bias against repeats),
    and the finding says why the check was not applied."""
    x = np.random.default_rng(5).integers(0, 37, 2000)
    p = tmp_path / "fast.csv"
    p.write_text("spin_id,timestamp,result\n" + "".join(f"{i + 1},2026-01-01T00:00:00Z,{v}\n".replace("00:00:00", f"{(2 * i) // 3600:02d}:{(2 * i) // 60 % 60:02d}:{2 * i % 60:02d}") for i, v in enumerate(x)))
    cert = _certify(p)
    assert cert.log.accepted == 2000 and not cert.log.rejected
    t = cert.log.tables["fast"]
    assert not t.findings and any("not checked" in n and "every 2 s" in n for n in t.notes)


@pytest.mark.slow  # a subprocess (imports rngcert afresh)
def test_ingest_reads_standard_input_as_dash(tmp_path):
    """`rngcert ingest -` reads a piped log (a real pipe: the CLI runner's stdin is not /dev/stdin)."""
    import subprocess
    import sys

    data = "spin_id,result\n" + "".join(f"{i},{i % 37}\n" for i in range(1, 51))
    db = tmp_path / "s.duckdb"
    res = subprocess.run([sys.executable, "-m", "rngcert", "ingest", "-", "--db", str(db), "--table", "T1"], input=data.encode(),
                         capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr.decode()
    assert b"50 new spins stored" in res.stdout


def test_c16_kind_an_unknown_spelling_of_an_empty_pocket_is_named(tmp_path):
    """A value rngcert does not recognise ('Ø', 6 rows) while pocket 0 has no accepted row in a
    log where a fair wheel gives it 11: INCONCLUSIVE, the value and the empty pocket named, even
    though 6 rows are too few to count as concentrated by themselves. Latin-1 permanence lists are
    decoded as Latin-1 (with a note), not with replacement characters."""
    x = np.random.default_rng(28).integers(0, 37, 400)
    x[x == 0] = 1
    x[[10, 50, 90, 130, 170, 210]] = 0
    cells = ["Ø" if v == 0 else str(v) for v in x]
    p = tmp_path / "perm.txt"
    p.write_bytes("\n".join(",".join(cells[a : a + 10]) for a in range(0, 400, 10)).encode("latin-1") + b"\n")
    cert = _certify(p)
    why = cert.outcomes[0].reasons[0]
    assert cert.verdict == "INCONCLUSIVE" and "'Ø'" in why and "pocket 0 has no accepted row" in why
    assert any("read as latin-1" in n for n in cert.log.notes)


def test_a_header_repeated_inside_the_log_is_named_as_such(tmp_path):
    """Two exports joined with `cat`: the second header line is rejected with its line and the cause, not only
    "'Number' is not a pocket" (found by a new user's break test)."""
    rows = [str(i % 37) for i in range(1, 200)]
    p = tmp_path / "joined.csv"
    p.write_text("Number\n" + "\n".join(rows[:100]) + "\nNumber\n" + "\n".join(rows[100:]) + "\n")
    cert = certify_log([p], EU, columns={"result": "Number"}, seed=1, n_resamples=99, figures=False)
    (rej,) = cert.log.rejected
    assert rej.line == 102 and "header line repeated" in rej.reason and "Number" in rej.reason


def test_c18_kind_a_shuffled_log_with_mixed_zones_is_still_sorted_by_time(tmp_path):
    """The file order is kept for zone-less times beside zoned ones only where the clock can explain the
    steps back (a few, each within the zones' span); a shuffled copy is still put in time order."""
    import datetime as dt

    x = np.random.default_rng(22).integers(0, 37, 2000)
    t0 = dt.datetime(2026, 6, 1, 8, 0, 0)
    rows = [f"{(t0 + dt.timedelta(seconds=30 * i)).isoformat()}{'' if i < 1000 else '+02:00'},{v}\n" for i, v in enumerate(x)]
    shuffled = [rows[i] for i in np.random.default_rng(1).permutation(len(rows))]
    p, q = tmp_path / "a.csv", tmp_path / "b.csv"
    p.write_text("timestamp,result\n" + "".join(rows))
    q.write_text("timestamp,result\n" + "".join(shuffled))
    ta = next(iter(read_spin_log(p, EU, min_round_interval=0).tables.values()))
    tb = next(iter(read_spin_log(q, EU, min_round_interval=0).tables.values()))
    assert any("sorted by timestamp" in n for n in tb.notes)
    assert not any("sorted by timestamp" in n for n in ta.notes)


@pytest.mark.parametrize("kind", ["txt", "csv"])
def test_c14_kind_a_log_of_another_wheels_labels_that_reads_nothing_names_the_wheel(tmp_path, kind):
    """A money-wheel list (symbols A-G) given to the European default read nothing and said only
    '500× a title or text line' (or "'A' is not a pocket"): the error names money-wheel-52 and the option."""
    s = np.array(list("A" * 24 + "B" * 12 + "C" * 8 + "D" * 4 + "EEFG"))
    x = np.random.default_rng(9).choice(s, 2000)
    p = tmp_path / f"mw.{kind}"
    if kind == "txt":
        p.write_text("\n".join(" ".join(x[i:i + 10]) for i in range(0, x.size, 10)) + "\n")
    else:
        p.write_text("result\n" + "\n".join(x) + "\n")
    with pytest.raises(InputError, match="look like the money-wheel-52 wheel's labels: certify with --equipment money-wheel-52"):
        read_spin_log(p, EU)
    q = tmp_path / "dates.csv"
    q.write_text("timestamp,result\n" + "".join(f"06/01/2026 12:00:{i:02d},{i}\n" for i in range(30)))
    with pytest.raises(InputError) as exc:
        read_spin_log(q, EU)
    assert "--equipment" not in str(exc.value)


def test_c19_kind_a_csv_read_as_json_lines_says_no_line_is_an_object(tmp_path):
    """--format jsonl on a CSV log said "no 'result' column (columns: )": the error names what is wrong
    (no line is a JSON object, the first line's reason) and the option given."""
    p = tmp_path / "a.csv"
    p.write_text("spin_id,result\n" + "".join(f"{i},{i % 37}\n" for i in range(1, 50)))
    with pytest.raises(InputError, match=r"none is a JSON object \(first: line 1: .*--format jsonl"):
        read_spin_log(p, EU, fmt="jsonl")


@pytest.mark.parametrize("kind", ["txt", "csv"])
def test_a_log_of_pockets_with_their_colours_that_reads_nothing_says_so(tmp_path, kind):
    """'17 Red', 'Black 20', '0-green' in every result cell read nothing and the error listed the cells only:
    it now says that the results carry the colour and that the number alone is read. Cells of words are not
    taken for colours, nor numbers that are not the wheel's pockets."""
    rng = np.random.default_rng(4)
    n = rng.integers(0, 37, 500)
    colour = np.where(n == 0, "Green", np.where(np.isin(n, [1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]), "Red", "Black"))
    cells = [f"{a} {c}" if i % 3 else f"{c.lower()}-{a}" for i, (a, c) in enumerate(zip(n, colour))]
    p = tmp_path / f"colours.{kind}"
    p.write_text(("\n".join(cells) if kind == "txt" else "result\n" + "\n".join(cells)) + "\n")
    with pytest.raises(InputError, match="the results give each pocket with its colour .*write the number only"):
        read_spin_log(p, EU)
    for bad in (["Red wine", "Black tie"] * 20, [f"{v} Red" for v in range(40, 80)]):
        q = tmp_path / "words.csv"
        q.write_text("result\n" + "\n".join(bad) + "\n")
        with pytest.raises(InputError) as exc:
            read_spin_log(q, EU)
        assert "colour" not in str(exc.value)
