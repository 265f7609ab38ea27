"""Review of issue 28's promise for shoe logs and money-wheel logs: inputs that cannot be misread
into a verdict (a fresh reviewer's hostile but ordinary exports)."""

from __future__ import annotations

import json

import numpy as np

from rngcert.collect.shoelog import read_shoe_log

DECK = [r + s for s in "SHDC" for r in "A23456789TJQK"]


def _shoes(n: int, seed: int = 1) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[DECK[k] for k in rng.permutation(52)] for _ in range(n)]


def _write(path, header: str, rows) -> None:
    path.write_text(header + "\n" + "".join(",".join(str(x) for x in r) + "\n" for r in rows))


def _certify_log(cli, path, tmp_path, *extra):
    res = cli("shuffle", "certify", path, "--decks", 1, "--before", "new-deck", "--out", tmp_path / "out", "--no-plots", "--json",
              "--seed", 1, "--resamples", 99, "--workers", 1, *extra)
    return res, (json.loads(res.stdout) if res.stdout.strip().startswith("{") else None)


def test_half_the_rows_unreadable_is_inconclusive_not_pass(cli, tmp_path):
    """Table T2's scanner writes suit first ('HA'): every row of its 100 shoes is rejected (50% of the
    log). The verdict cannot stand on the other table alone as if the log had been read: INCONCLUSIVE
    (exit 11), the unreadable share named (DESIGN §4: more than 5% unreadable rows)."""
    rows = [("T1" if s <= 100 else "T2", s, p, c if s <= 100 else c[1] + c[0])
            for s, cards in enumerate(_shoes(200), 1) for p, c in enumerate(cards, 1)]
    f = tmp_path / "two-scanners.csv"
    _write(f, "table,shoe_id,position,card", rows)
    res, rep = _certify_log(cli, f, tmp_path)
    assert res.exit_code == 11, res.output
    reasons = " ".join(rep["tables"][0]["battery"]["reasons"])
    assert "5,200 of 10,400" in reasons and "could not be read" in reasons


def test_joker_rows_read_around_are_not_unreadable(cli, tmp_path):
    """A joker in every one-deck shoe (c21's kind, 1 row in 53 = 1.9%; here also a cutting card: 3.7%) is
    named and read around: not counted as unreadable, so the log still gets its verdict."""
    rows = []
    for s, cards in enumerate(_shoes(70), 1):  # (70: at least the 65 shoes the whole battery needs without a game)
        cards = cards[:26] + ["JK"] + cards[26:40] + ["CUT"] + cards[40:]
        rows += [(s, p, c) for p, c in enumerate(cards, 1)]
    f = tmp_path / "jokers.csv"
    _write(f, "shoe_id,position,card", rows)
    res, rep = _certify_log(cli, f, tmp_path)
    assert res.exit_code in (0, 10), res.output
    assert not any("could not be read" in r for r in rep["tables"][0]["battery"]["reasons"])


def test_empty_table_cell_is_rejected_not_a_new_table(tmp_path):
    """The last card of shoe 5 has an empty ``table`` cell while every other row names T1: the row is
    rejected with its line, column and reason, and shoe 5 of T1 is not accepted as a 51-card shoe."""
    rows = [("" if (s == 5 and p == 52) else "T1", s, p, c) for s, cards in enumerate(_shoes(10), 1) for p, c in enumerate(cards, 1)]
    f = tmp_path / "empty-table.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    line = 1 + 4 * 52 + 52
    assert [(r.line, r.column) for r in log.rejected] == [(line, "table")]
    assert "empty table" in log.rejected[0].reason
    assert ("T1", "5") not in log.after_ids and ("", "5") not in log.after_ids
    assert any(p.shoe == "5" and p.table == "T1" for p in log.problems)
    assert log.n_shoes == 9


def test_all_empty_table_column_is_one_table(tmp_path):
    """A ``table`` column left empty on every row is no table at all (as for spin logs): nothing rejected."""
    rows = [("", s, p, c) for s, cards in enumerate(_shoes(5), 1) for p, c in enumerate(cards, 1)]
    f = tmp_path / "no-table.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert log.rejected == [] and log.n_shoes == 5


def test_row_count_includes_lines_rejected_by_the_csv_reader(tmp_path):
    """Two lines with an extra field are rejected by the CSV reader: the source's row count is the
    file's 520 data rows (518 accepted + 2 rejected), not 518."""
    rows = [(s, p, c + (",X" if (s, p) in ((5, 52), (6, 20)) else "")) for s, cards in enumerate(_shoes(10), 1) for p, c in enumerate(cards, 1)]
    f = tmp_path / "extra-field.csv"
    _write(f, "shoe_id,position,card", rows)
    src = read_shoe_log(f, decks=1).sources[0]
    assert (src["rows"], src["accepted_rows"], src["rejected_rows"]) == (520, 518, 2)


def test_roulette_log_given_to_the_money_wheel_is_not_a_fail(cli, tmp_path):
    """A fair roulette log (0..36) certified with ``--equipment money-wheel-52``: every label reads as a
    section index, sections 37..51 never come up. Not a FAIL "section B came up 0 times … a worn
    pocket": INCONCLUSIVE naming the roulette wheel the labels fit."""
    rng = np.random.default_rng(3)
    f = tmp_path / "roulette.csv"
    f.write_text("result\n" + "".join(f"{x}\n" for x in rng.integers(0, 37, 20000)))
    res = cli("certify", f, "--equipment", "money-wheel-52", "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99)
    assert res.exit_code == 11, res.output
    rep = json.loads(res.stdout)
    reasons = " ".join(r for t in rep["tables"] for r in t["battery"]["reasons"])
    assert "--equipment european" in reasons


def test_money_wheel_section_never_seen_stays_a_finding(cli, tmp_path):
    """The guard above must not hide a real money wheel whose one section never comes up: its labels
    (0..51 minus section 7) fit no roulette wheel, so the tests keep their verdict (FAIL)."""
    rng = np.random.default_rng(4)
    x = rng.integers(0, 51, 20000)
    x[x >= 7] += 1
    f = tmp_path / "mw.csv"
    f.write_text("result\n" + "".join(f"{v}\n" for v in x))
    res = cli("certify", f, "--equipment", "money-wheel-52", "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99)
    assert res.exit_code == 12, res.output


def test_money_wheel_payouts_written_as_numbers_are_not_section_indices(cli, tmp_path):
    """A fair money-wheel-52 log whose export writes each symbol's payout (1, 2, 5, 10, 20, 40, 45) instead of the
    symbol: every value reads as a section index, 45 of the 52 sections never come up, and the verdict was FAIL
    "section A came up 9,269 times against 385 expected". INCONCLUSIVE: the labels do not fit the wheel."""
    order = "FABCAADBAACBAEABCAABDAACBAGABCAADBAACBAEABCAABDAACBA"
    pay = dict(A="1", B="2", C="5", D="10", E="20", F="40", G="45")
    rng = np.random.default_rng(5)
    f = tmp_path / "payouts.csv"
    f.write_text("result\n" + "".join(pay[order[x]] + "\n" for x in rng.integers(0, 52, 20000)))
    res = cli("certify", f, "--equipment", "money-wheel-52", "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99)
    assert res.exit_code == 11, res.output
    reasons = " ".join(r for t in json.loads(res.stdout)["tables"] for r in t["battery"]["reasons"])
    assert "section indices" in reasons and "1, 2, 5, 10, 20, 40, 45" in reasons


def test_shoe_after_a_left_out_shoe_is_not_rebuilt_from_the_one_before(tmp_path):
    """Shoe 3 of a table is left out (an unreadable card): shoe 4's order before the shuffle comes from shoe 3's
    discards, which were not read. It must not be rebuilt from shoe 2 (the previous *accepted* shoe): that pairs
    two shoes that were never consecutive (on baccarat-004 a log with every third shoe left out turned SUSPECT
    into FAIL). Shoe 4 is not tested; shoes 2 and 6 are rebuilt from 1 and 5."""
    from collections import Counter

    from rngcert.pipeline.certify_shuffle.rebuild import _log_pairs

    rows = [("T1", s, p, "??" if (s == 3 and p == 10) else c) for s, cards in enumerate(_shoes(6), 1) for p, c in enumerate(cards[:40], 1)]
    f = tmp_path / "gap.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert [s for _, s in log.after_ids] == ["1", "2", "4", "5", "6"]
    how, prev = Counter(), {}
    idx, _, _ = _log_pairs(log, decks=1, game=None, proc=None, before_mode="previous", before_orders=None, rng=None, how=how, prev_out=prev)
    tested = [log.meta[int(i)]["shoe"] for i in idx]
    assert tested == ["2", "5", "6"]
    assert sum(v for k, v in how.items() if "left out" in k) == 1


def test_all_rows_rejected_shoe_also_breaks_the_chain(tmp_path):
    """A shoe whose every row is unreadable (another scanner's spelling) is a left-out shoe too: the next shoe is not
    rebuilt across it."""
    from rngcert.pipeline.certify_shuffle.rebuild import _log_pairs

    rows = [("T1", s, p, (c[1] + c[0]) if s == 3 else c) for s, cards in enumerate(_shoes(5), 1) for p, c in enumerate(cards, 1)]
    f = tmp_path / "gap2.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    idx, _, _ = _log_pairs(log, decks=1, game=None, proc=None, before_mode="previous", before_orders=None, rng=None)
    assert [log.meta[int(i)]["shoe"] for i in idx] == ["2", "5"]


def test_six_deck_shoes_read_as_eight_decks_with_the_procedure_are_inconclusive(cli, tmp_path):
    """blackjack-004 puts the cutting card 208 cards from the back: 6-deck shoes are dealt to about card 104, 8-deck
    shoes to about card 208. A log of 6-deck dealt shoes read with --decks 8 (every card at most 6 times: the deck
    check cannot tell from 115-card prefixes) gave a verdict on orders rebuilt from the wrong shoe size."""
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle.log_once import dealt_length_reasons

    f = tmp_path / "bj6.csv"
    res = cli("shuffle", "simulate", "blackjack-004", "--decks", 6, "--shoes", 40, "--seed", 2, "--out", f, "--dealt-only")
    assert res.exit_code == 0, res.output
    proc = load_procedure("blackjack-004")
    log8 = read_shoe_log(f, decks=8)
    reasons = dealt_length_reasons(log8, 8, proc, "blackjack")
    assert len(reasons) == 1 and "--decks" in reasons[0] and "6 decks put it at card 104" in reasons[0]
    assert dealt_length_reasons(read_shoe_log(f, decks=6), 6, proc, "blackjack") == []
    res = cli("shuffle", "certify", f, "--decks", 8, "--procedure", "blackjack-004", "--out", tmp_path / "out", "--no-plots", "--json",
              "--seed", 1, "--resamples", 99, "--workers", 1)
    assert res.exit_code == 11, res.output
    assert any("check --decks" in r for r in json.loads(res.stdout)["tables"][0]["battery"]["reasons"])


def _previous_tested(tmp_path, ids: list[int]) -> list[str]:
    from rngcert.pipeline.certify_shuffle.rebuild import _log_pairs

    rows = [("T1", i, p, c) for i, cards in zip(ids, _shoes(len(ids))) for p, c in enumerate(cards[:40], 1)]
    f = tmp_path / "ids.csv"
    _write(f, "table,shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    idx, _, _ = _log_pairs(log, decks=1, game=None, proc=None, before_mode="previous", before_orders=None, rng=None)
    return [log.meta[int(i)]["shoe"] for i in idx]


def test_a_shoe_missing_from_a_numbered_log_breaks_the_chain(tmp_path):
    """Shoe ids count 1, 2, 3, 5, 6, 7 at one table: shoe 4 was never logged (the scanner was off), so shoe 5's order
    before the shuffle is not shoe 3's discards. Shoe 5 is not rebuilt; the others are."""
    assert _previous_tested(tmp_path, [1, 2, 3, 5, 6, 7]) == ["2", "3", "6", "7"]


def test_ids_of_a_counter_shared_by_tables_are_not_gaps(tmp_path):
    """Ids from one counter shared by two tables (this table's shoes 1, 3, 5, 7, 9) never step by one: they are not
    read as gaps, every shoe after the first is rebuilt."""
    assert _previous_tested(tmp_path, [1, 3, 5, 7, 9]) == ["3", "5", "7", "9"]


def _cut_rows(shoes, cut_pos) -> list:
    """Rows of ``shoes`` with a cutting-card row before card 30; ``cut_pos(p)`` is the position written on it."""
    rows = []
    for s, cards in enumerate(shoes, 1):
        for p, c in enumerate(cards, 1):
            if p == 30:
                rows.append((s, cut_pos(p), "CUT"))
            rows.append((s, p, c))
    return rows


def test_cut_card_sharing_the_next_cards_position_is_read_around(tmp_path):
    """A scanner that logs the cutting card with the position of the card after it (it takes no number of its own):
    every shoe was lost with "position 30 appears twice" (the cards after it renumbered down onto 30). The cards
    keep their own positions; the cut row is rejected by name."""
    shoes = _shoes(5)
    f = tmp_path / "cut-same.csv"
    _write(f, "shoe_id,position,card", _cut_rows(shoes, lambda p: p))
    log = read_shoe_log(f, decks=1)
    assert log.problems == [] and log.n_shoes == 5
    assert [r.column for r in log.rejected] == ["card"] * 5 and "cutting card" in log.rejected[0].reason
    from rngcert.equipment.cards import parse_cards

    assert np.array_equal(log.dealt[0], parse_cards(shoes[0])[0])


def test_cut_card_without_a_position_is_read_around(tmp_path):
    """A cutting-card row with an empty position (it is not a card of the shoe): rejected by name, its shoe kept."""
    shoes = _shoes(5)
    f = tmp_path / "cut-nopos.csv"
    _write(f, "shoe_id,position,card", _cut_rows(shoes, lambda p: ""))
    log = read_shoe_log(f, decks=1)
    assert log.problems == [] and log.n_shoes == 5
    assert [r.column for r in log.rejected] == ["card"] * 5 and "cutting card" in log.rejected[0].reason
    from rngcert.equipment.cards import parse_cards

    assert np.array_equal(log.dealt[4], parse_cards(shoes[4])[0])


def test_rejects_of_the_before_file_are_kept(cli, tmp_path):
    """``--before FILE``: a row of the file of orders before the shuffle that cannot be read was dropped without a
    word (not in rejects.csv, its shoe's problem not in the report). It is kept in rejects.csv with its file and line,
    and the before file is listed among the inputs."""
    shoes = _shoes(31)
    after = [(s, p, c) for s, cards in enumerate(shoes[1:], 1) for p, c in enumerate(cards, 1)]
    before = [(s, p, "ZZ" if (s, p) == (4, 7) else c) for s, cards in enumerate(shoes[:-1], 1) for p, c in enumerate(cards, 1)]
    fa, fb = tmp_path / "after.csv", tmp_path / "before.csv"
    _write(fa, "shoe_id,position,card", after)
    _write(fb, "shoe_id,position,card", before)
    out = tmp_path / "out"
    res = cli("shuffle", "certify", fa, "--decks", 1, "--before", fb, "--out", out, "--no-plots", "--seed", 1, "--resamples", 99,
              "--workers", 1)
    assert res.exit_code in (0, 10, 11), res.output
    rejects = next(out.rglob("rejects.csv")).read_text()
    assert "before.csv" in rejects and f",{1 + 3 * 52 + 7},card," in rejects and "ZZ" in rejects
    rep = json.loads(next(out.rglob("report.json")).read_text())
    assert any("before.csv" in str(i.get("path")) for i in rep["inputs"])
    assert any(p["file"].endswith("before.csv") and p["shoe"] == "4" for p in rep["shoe_problems"])


def test_american_list_given_to_the_money_wheel_names_the_american_wheel(cli, tmp_path):
    """An American list (0..36 and 00) certified as ``money-wheel-52``: '00' is rejected and 15 sections never come up.
    The reason advised ``--alias 00=0`` ('00' looks like section 0), which cannot spell 15 empty sections; it names the
    american wheel."""
    rng = np.random.default_rng(7)
    lab = [str(i) for i in range(37)] + ["00"]
    f = tmp_path / "american.csv"
    f.write_text("result\n" + "".join(lab[x] + "\n" for x in rng.integers(0, 38, 20000)))
    res = cli("certify", f, "--equipment", "money-wheel-52", "--out", tmp_path / "out", "--no-plots", "--json", "--seed", 1,
              "--resamples", 99)
    assert res.exit_code == 11, res.output
    reasons = json.loads(res.stdout)["tables"][0]["battery"]["reasons"]
    assert "--equipment american" in reasons[0]


def _incomplete_shoes(path, n: int, left: int) -> None:
    """``n`` one-deck shoes, the first ``left`` of them without the card at position 20 (a scanner that missed it)."""
    rows = []
    for s, cards in enumerate(_shoes(n), 1):
        rows += [(s, p, c) for p, c in enumerate(cards, 1) if not (s <= left and p == 20)]
    _write(path, "shoe_id,position,card", rows)


def test_most_shoes_left_out_is_inconclusive_not_pass(cli, tmp_path):
    """180 of 200 dealt shoes miss a position and are left out: the 20 left are a selection of the shoes dealt, so no
    verdict stands on them (it was PASS on those 20, exit 0). INCONCLUSIVE (exit 11) naming the share; --max-rejected
    raises the limit as for unreadable rows, and verify --rerun reads it from the recipe."""
    from rngcert.cli.verify import VERIFY_EXIT

    f = tmp_path / "incomplete.csv"
    _incomplete_shoes(f, 200, 180)
    res, rep = _certify_log(cli, f, tmp_path)
    assert res.exit_code == 11, res.output
    reasons = " ".join(rep["tables"][0]["battery"]["reasons"])
    assert "180 of 200 dealt shoes (90%) were left out for problems" in reasons and "more than 5%" in reasons
    assert rep["rerun"]["max_rejected"] == 0.05
    res, rep = _certify_log(cli, f, tmp_path, "--max-rejected", 0.95)
    # 20 shoes without a game: INCONCLUSIVE only for too few shoes for the whole battery (the shoe reviewer of 2026-12-05)
    assert res.exit_code == 11 and [r[:14] for r in rep["tables"][0]["battery"]["reasons"]][:1] == ["too few shoes "], res.output
    assert not any("left out for problems" in r for r in rep["tables"][0]["battery"]["reasons"])
    assert rep["rerun"]["max_rejected"] == 0.95
    (folder,) = [d for d in (tmp_path / "out").glob("*-*") if json.loads((d / "report.json").read_text())["rerun"]["max_rejected"] == 0.95]
    res = cli("verify", folder, f, "--rerun")
    assert res.exit_code == VERIFY_EXIT["INTACT"] and "values recomputed, all equal" in res.output, res.output


def test_few_shoes_left_out_keep_their_verdict(tmp_path):
    """At or under the limit (10 of 200 = 5%) the shoes left out are reported, not a reason; one more is."""
    from rngcert.collect.shoelog import read_shoe_log
    from rngcert.pipeline.certify_shuffle.log_once import unreadable_reasons

    f = tmp_path / "some.csv"
    _incomplete_shoes(f, 200, 10)
    log = read_shoe_log(f, decks=1)
    assert log.n_shoes == 190 and len(log.problems) == 10
    assert unreadable_reasons(log) == []
    _incomplete_shoes(f, 200, 11)
    (reason,) = unreadable_reasons(read_shoe_log(f, decks=1))
    assert reason.startswith("11 of 200 dealt shoes (6%) were left out")
    _incomplete_shoes(f, 2000, 1)
    assert unreadable_reasons(read_shoe_log(f, decks=1), max_share=0.0)[0].startswith("1 of 2,000 dealt shoes (0.05%)")


def test_exact_repeats_of_a_row_are_counted_once_and_keep_their_shoe(cli, tmp_path):
    """A scanner that sends a read twice (shoe, position and card repeated on the next line, in 30 of 200 shoes; once
    three times): each later copy is a rejected row naming the line it repeats, not unreadable, and the shoes are
    kept (they were all left out, and the log INCONCLUSIVE). The battery's p-values equal the clean log's."""
    clean, rep_rows = [], []
    for s, cards in enumerate(_shoes(200), 1):
        r = [(s, p, c) for p, c in enumerate(cards, 1)]
        clean += r
        rep_rows += r[:20] + [r[19]] * (2 if s == 7 else 1 if s <= 30 else 0) + r[20:]
    f, g = tmp_path / "repeats.csv", tmp_path / "clean.csv"
    _write(f, "shoe_id,position,card", rep_rows)
    _write(g, "shoe_id,position,card", clean)
    log = read_shoe_log(f, decks=1)
    assert log.n_shoes == 200 and log.problems == []
    assert len(log.rejected) == 31 and log.sources[0]["repeated_rows"] == 31
    first = log.rejected[0]
    assert (first.line, first.column) == (22, "*") and "exact repeat of line 21 (shoe 1, after, position 20" in first.reason
    assert [r.reason.split(" (")[0] for r in log.rejected if "shoe 7," in r.reason] == ["exact repeat of line 339"] * 2  # 1 + 6 x 53 + 20
    assert [r.line for r in log.rejected] == sorted(r.line for r in log.rejected)
    res, rep = _certify_log(cli, f, tmp_path)
    res0, rep0 = _certify_log(cli, g, tmp_path)
    assert res.exit_code == res0.exit_code in (0, 10), res.output
    assert "31 exact repeat(s) of a row, counted once" in rep["inputs"][0]["summary"]
    p = {t["name"]: t.get("pvalue") for t in rep["tables"][0]["battery"]["tests"]}
    assert p == {t["name"]: t.get("pvalue") for t in rep0["tables"][0]["battery"]["tests"]}


def test_a_repeated_position_with_another_card_is_still_a_shoe_problem(tmp_path):
    """Position 20 given twice with two different cards (or the same card in another file) is not a repeat: the shoe
    is left out as before."""
    shoes = _shoes(3)
    rows = []
    for s, cards in enumerate(shoes, 1):
        r = [(s, p, c) for p, c in enumerate(cards, 1)]
        rows += r[:20] + ([(s, 20, cards[30])] if s == 2 else []) + r[20:]
    f = tmp_path / "other-card.csv"
    _write(f, "shoe_id,position,card", rows)
    log = read_shoe_log(f, decks=1)
    assert log.n_shoes == 2 and log.rejected == [] and {p.shoe for p in log.problems} == {"2"}
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _write(a, "shoe_id,position,card", [(1, p, c) for p, c in enumerate(shoes[0], 1)] + [(2, 1, shoes[1][0])])
    _write(b, "shoe_id,position,card", [(2, p, c) for p, c in enumerate(shoes[1], 1)])
    log = read_shoe_log([a, b], decks=1)
    assert log.rejected == [] and {p.shoe for p in log.problems} == {"2"}
