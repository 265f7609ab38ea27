"""Second review of shoe-log reading and certification: exact repeats of a row (counted once) and the share of dealt
shoes left out (``--max-rejected``), tried with hostile but ordinary scanner exports."""

from __future__ import annotations

import json

import numpy as np
from test_shoe_inputs_review import DECK, _certify_log, _shoes, _write  # the first review's scanner-log helpers

from rngcert.collect.shoelog import read_shoe_log


def test_a_cutting_card_row_sent_twice_keeps_its_shoe(tmp_path):
    """The cutting-card row of shoe 2 is sent twice (the same line repeated): it is one cutting card, so the cards
    after it move up one position, not two. It left shoe 2 out with 'position 30 appears twice', a position the
    file gives once."""
    rows = []
    for s, cards in enumerate(_shoes(3), 1):
        r = [(s, p, c) for p, c in enumerate(cards[:30] + ["CUT"] + cards[30:], 1)]
        rows += r[:31] + ([r[30]] if s == 2 else []) + r[31:]
    f = tmp_path / "cut-twice.csv"
    _write(f, "shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert log.problems == [] and log.n_shoes == 3
    assert [r.line for r in log.rejected] == [32, 85, 86, 139]
    assert log.sources[0]["non_card_rows"] == 4
    assert all(log.lengths == 52)


def test_two_different_non_card_rows_at_one_position_still_take_two_numbers(tmp_path):
    """A joker and the cutting card logged with the same position and the cards after them numbered two on (as
    before): not an exact repeat, both read around."""
    rows = []
    for s, cards in enumerate(_shoes(2), 1):
        rows += [(s, p, c) for p, c in enumerate(cards[:30], 1)] + [(s, 31, "JK"), (s, 31, "CUT")]
        rows += [(s, p, c) for p, c in enumerate(cards[30:], 33)]
    f = tmp_path / "two-non-cards.csv"
    _write(f, "shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert log.problems == [] and log.n_shoes == 2


def test_a_repeat_whose_other_cell_differs_is_not_an_exact_repeat(tmp_path):
    """Position 11 of shoe 2 is logged twice with the same card but another read id (a column rngcert does not use):
    the second line is not an exact repeat of the first, so it must not be named one and counted once; the shoe is
    a shoe problem, as when its timestamp or dealer differs."""
    rows = []
    for s, cards in enumerate(_shoes(3), 1):
        r = [(s, p, c, f"{s}-{p}") for p, c in enumerate(cards, 1)]
        rows += r[:11] + ([(2, 11, cards[10], "2-11b")] if s == 2 else []) + r[11:]
    f = tmp_path / "read-id.csv"
    _write(f, "shoe_id,position,card,read_id", rows)
    log = read_shoe_log(f, decks=1)
    assert not any("exact repeat" in r.reason for r in log.rejected)
    assert {p.shoe for p in log.problems} == {"2"} and log.n_shoes == 2
    # the same line sent twice, read id included, is an exact repeat
    rows = [r for r in rows if r[3] != "2-11b"]
    rows.insert(rows.index((2, 11, _shoes(3)[1][10], "2-11")) + 1, (2, 11, _shoes(3)[1][10], "2-11"))
    _write(f, "shoe_id,position,card,read_id", rows)
    log = read_shoe_log(f, decks=1)
    assert log.problems == [] and [r.reason.split(" (")[0] for r in log.rejected] == ["exact repeat of line 64"]
    assert log.rejected[0].text == _shoes(3)[1][10]  # (rejects.csv's text: the card, as for the other rejected rows)


def test_a_card_spelled_another_way_is_not_an_exact_repeat(tmp_path):
    """'QH' then 'Q♥' (or 'qh') at one position: the same card, but not the same line sent twice (a second reader,
    a corrected read): not named an exact repeat, the shoe stays a shoe problem as for another timestamp."""
    shoes = _shoes(3)
    rows = []
    for s, cards in enumerate(shoes, 1):
        r = [(s, p, c) for p, c in enumerate(cards, 1)]
        rows += r[:11] + ([(2, 11, cards[10].lower())] if s == 2 else []) + r[11:]
    f = tmp_path / "spelled.csv"
    _write(f, "shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert not any("exact repeat" in r.reason for r in log.rejected)
    assert {p.shoe for p in log.problems} == {"2"}


def _incomplete_shoes(path, n: int, left: int) -> None:
    """``n`` one-deck shoes, the first ``left`` of them without the card at position 20."""
    rows = []
    for s, cards in enumerate(_shoes(n), 1):
        rows += [(s, p, c) for p, c in enumerate(cards, 1) if not (s <= left and p == 20)]
    _write(path, "shoe_id,position,card", rows)


def test_a_small_limit_is_not_worded_as_zero_percent(tmp_path):
    """--max-rejected 0.001: 3 of 2,000 shoes left out (0.15%) and 2 unreadable rows of 1,040 (0.19%) are over it. The
    reasons said '(0%) ... more than 0%' (a share not over the limit it names); they give the shares and the limit as
    they are."""
    from rngcert.pipeline.certify_shuffle.log_once import unreadable_reasons

    f = tmp_path / "small.csv"
    _incomplete_shoes(f, 2000, 3)
    (shoes,) = unreadable_reasons(read_shoe_log(f, decks=1), max_share=0.001)
    assert "3 of 2,000 dealt shoes (0.15%)" in shoes and "more than 0.1%" in shoes, shoes
    rows = [(s, p, "ZZ" if (s, p) in ((3, 5), (4, 6)) else c) for s, cards in enumerate(_shoes(20), 1) for p, c in enumerate(cards, 1)]
    _write(f, "shoe_id,position,card", rows)
    reasons = unreadable_reasons(read_shoe_log(f, decks=1), max_share=0.001)
    (row,) = [r for r in reasons if "could not be read" in r]
    assert "2 of 1,040 data rows (0.19%)" in row and "more than 0.1%" in row, row
    assert not any("(0%)" in r or "than 0%" in r for r in reasons)


def test_a_log_report_states_its_max_rejected_share(cli, tmp_path):
    """The share above which a log's verdict is INCONCLUSIVE is part of the verdict policy (DESIGN §4: state it in every
    report): --max-rejected 0.95 gave PASS on 20 of 200 shoes with nothing but the rerun recipe to say the limit was
    not 5%. report.json's declared parameters and its INCONCLUSIVE policy name it."""
    f = tmp_path / "incomplete.csv"
    _incomplete_shoes(f, 200, 180)
    res, rep = _certify_log(cli, f, tmp_path, "--max-rejected", 0.95)
    # 20 shoes without a game: INCONCLUSIVE only for too few shoes for the whole battery (the shoe reviewer of 2026-12-05)
    assert res.exit_code == 11 and [r[:14] for r in rep["tables"][0]["battery"]["reasons"]][:1] == ["too few shoes "], res.output
    assert rep["certified"]["declared"]["largest share of unreadable rows or of dealt shoes left out"] == "95%"
    assert "more than 95% of a file's data rows unreadable or of the dealt shoes left out" in rep["policy"]["verdicts"]["INCONCLUSIVE"]


def test_a_position_or_stage_written_another_way_is_not_an_exact_repeat(tmp_path):
    """Position '011' after '11', or stage 'After' after 'after': the same place, but not the same line sent twice."""
    for header, extra, copy in (("shoe_id,position,card", (), lambda s, c: (s, "011", c)),
                                ("shoe_id,position,card,stage", ("after",), lambda s, c: (s, 11, c, "After"))):
        rows = []
        for s, cards in enumerate(_shoes(3), 1):
            r = [(s, p, c, *extra) for p, c in enumerate(cards, 1)]
            rows += r[:11] + ([copy(s, cards[10])] if s == 2 else []) + r[11:]
        f = tmp_path / "written.csv"
        _write(f, header, rows)
        log = read_shoe_log(f, decks=1)
        assert not any("exact repeat" in r.reason for r in log.rejected), header
        assert {p.shoe for p in log.problems} == {"2"}, header


def _before_file_logs(tmp_path, unreadable_every: int):
    """200 dealt shoes and a --before file of their orders before the shuffle, every ``unreadable_every``-th shoe of
    which is written suit first ('HA', unreadable)."""
    rng = np.random.default_rng(5)
    after_rows, before_rows = [], []
    for s in range(1, 201):
        before = [DECK[k] for k in rng.permutation(52)]
        after = [before[k] for k in rng.permutation(52)]
        after_rows += [(s, p, c) for p, c in enumerate(after, 1)]
        before_rows += [(s, p, c[1] + c[0] if s % unreadable_every == 0 else c) for p, c in enumerate(before, 1)]
    a, b = tmp_path / "after.csv", tmp_path / "before.csv"
    _write(a, "shoe_id,position,card", after_rows)
    _write(b, "shoe_id,position,card", before_rows)
    return a, b


def test_a_before_file_half_unreadable_is_inconclusive(cli, tmp_path):
    """--before FILE with half its rows unreadable (a second scanner writing suit first): half the shoes lost their
    declared order before the shuffle and were tested against the previous shoe's dealt order instead, with a verdict
    (exit 0) as if the file had been read. The --before file's rows and shoes count against --max-rejected as the
    log's do: INCONCLUSIVE, naming the file; a few unreadable rows (under 5%) keep the verdict."""
    a, b = _before_file_logs(tmp_path, 2)
    res = cli("shuffle", "certify", a, "--decks", 1, "--before", b, "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99, "--workers", 1)
    assert res.exit_code == 11, res.output
    reasons = " ".join(json.loads(res.stdout)["tables"][0]["battery"]["reasons"])
    assert f"5,200 of 10,400 data rows (50%) of {b} could not be read" in reasons, reasons
    assert "100 of 200 shoes of the --before file (50%) were left out" in reasons, reasons
    a, b = _before_file_logs(tmp_path, 50)
    res = cli("shuffle", "certify", a, "--decks", 1, "--before", b, "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99, "--workers", 1)
    assert res.exit_code in (0, 10), res.output


def test_the_rebuild_note_accounts_for_every_shoe(cli, tmp_path):
    """--before pickup over two tables of 100 shoes, 11 of them left out for problems (over 5%): the note gave '177 of
    189 shoes have a known order (177 ...; 11 not tested ...)', leaving the first shoe of each table unaccounted for
    (177 + 11 is not 189). Every shoe kept is in the tally, the first shoes named."""
    rows = []
    for s, cards in enumerate(_shoes(200, 2), 1):
        rows += [("T1" if s <= 100 else "T2", s, p, c) for p, c in enumerate(cards, 1) if not (s % 18 == 0 and p == 20)]
    f = tmp_path / "two-tables.csv"
    _write(f, "table,shoe_id,position,card", rows)
    res = cli("shuffle", "certify", f, "--decks", 1, "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1, "--resamples", 99,
              "--workers", 1)
    assert res.exit_code == 11, res.output
    rep = json.loads(res.stdout)
    assert "11 of 200 dealt shoes (6%) were left out" in " ".join(rep["tables"][0]["battery"]["reasons"])
    (note,) = [n for n in rep["notes"] if "have a known order before the shuffle" in n]
    assert note.startswith("176 of 189 shoes"), note
    assert "176 the previous shoe's dealt order" in note and "11 not tested: the shoe dealt before it was left out" in note, note
    assert "2 not tested: the first shoe of its table" in note, note


def test_rejected_count_includes_the_before_files_rows(cli, tmp_path):
    """A --before file with 208 unreadable rows (4 shoes written suit first, under 5%): rejects.csv keeps the 208
    rows, but report.json's rejected_count (and the summary's 'rejects.csv (0 rows)') counted the log's only."""
    a, b = _before_file_logs(tmp_path, 50)
    out = tmp_path / "out"
    res = cli("shuffle", "certify", a, "--decks", 1, "--before", b, "--out", out, "--no-plots", "--seed", 1, "--resamples", 99,
              "--workers", 1)
    assert res.exit_code in (0, 10), res.output
    (folder,) = out.glob("*-*")
    rep = json.loads((folder / "report.json").read_text())
    assert len((folder / "rejects.csv").read_text().splitlines()) - 1 == rep["rejected_count"] == 208
    assert "rejects.csv (208 rows)" in res.output, res.output


def test_summary_names_cutting_cards_and_repeats_in_one_bracket(cli, tmp_path):
    """A log with a cutting card in every shoe and one row sent twice: the summary read '62 rejected (60 joker or
    cutting-card row(s) left out, their shoes kept) (1 exact repeat(s) of a row, counted once)'; one bracket now."""
    rows = []
    for s, cards in enumerate(_shoes(70), 1):  # (70: at least the 65 shoes the whole battery needs without a game)
        r = [(s, p, c) for p, c in enumerate(cards[:30] + ["CUT"] + cards[30:], 1)]
        rows += r[:10] + ([r[9]] if s == 3 else []) + r[10:]
    f = tmp_path / "cut-and-repeat.csv"
    _write(f, "shoe_id,position,card", rows)
    res, rep = _certify_log(cli, f, tmp_path)
    assert res.exit_code in (0, 10), res.output
    assert rep["inputs"][0]["summary"] == ("3711 rows: 3640 accepted, 71 rejected (70 joker or cutting-card row(s) left out, their shoes kept; "
                                           "1 exact repeat(s) of a row, counted once); 0 shoe(s) left out for problems")


def test_the_same_shoe_logged_twice_under_two_ids_is_not_a_fail(cli, tmp_path):
    """An export that holds a session twice, the second time under new shoe ids (shoes 101-200 repeat the card orders
    of shoes 1-100): FAIL 'cards end up nearer their place before the shuffle ... lengthen the wash'. Two fair shoes
    that agree in their first 20 cards do not occur (1 in 10^33): a data-integrity finding (DESIGN §4, duplicated
    blocks), INCONCLUSIVE naming the shoes. A fair log with distinct shoes keeps its verdict."""
    shoes = _shoes(100, 7)
    f = tmp_path / "twice.csv"
    _write(f, "shoe_id,position,card", [(s, p, c) for s, cards in enumerate(shoes + shoes, 1) for p, c in enumerate(cards, 1)])
    res, rep = _certify_log(cli, f, tmp_path)
    assert res.exit_code == 11, res.output
    reasons = " ".join(rep["tables"][0]["battery"]["reasons"])
    assert "100 of 200 dealt shoes repeat the cards of an earlier shoe" in reasons and "shoe 101 = shoe 1" in reasons, reasons
    g = tmp_path / "distinct.csv"
    _write(g, "shoe_id,position,card", [(s, p, c) for s, cards in enumerate(_shoes(200, 7), 1) for p, c in enumerate(cards, 1)])
    res, rep = _certify_log(cli, g, tmp_path)
    assert res.exit_code in (0, 10) and not any("repeat the cards" in r for r in rep["tables"][0]["battery"]["reasons"]), res.output
