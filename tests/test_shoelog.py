"""Card-scanner shoe logs, the writer, and the Shinn riffle loader (rngcert.collect.shoelog)."""

from pathlib import Path

import numpy as np
import pytest
from _support import shared_file, shared_path
from numpy.random import PCG64, Generator

from rngcert.collect.shoelog import read_shinn_riffles, read_shoe_log, write_shoe_log
from rngcert.equipment.procedure import load_procedure
from rngcert.errors import InputError, NoDataError
from rngcert.simulate.procedure import simulate_tables
from rngcert.stats.shuffle import riffle_fit, rising_sequences

SHINN = shared_path("data", "shuffles-shinn", "riffle_data.txt")


def _lines(rows, header="shoe_id,position,card"):
    return header + "\n" + "\n".join(rows) + "\n"


def _one_deck_rows(shoe="1", serial=None, drop=None, replace=None):
    from rngcert.equipment.cards import format_card
    rows = []
    for pos in range(1, 53):
        tok = format_card(pos - 1, serial=False) + (f"#{serial}" if serial else "")
        if replace and pos in replace:
            tok = replace[pos]
        if drop and pos in drop:
            continue
        rows.append(f"{shoe},{pos},{tok}")
    return rows


def test_roundtrip_simulated_shoes(tmp_path):
    t = simulate_tables(load_procedure("baccarat-004"), 5, 1, burn_in=1)
    before, after = t.before, t.after
    f = tmp_path / "sim.csv"
    assert write_shoe_log(f, after, before=before, table="T1") == 2 * 5 * 416
    log = read_shoe_log(f, decks=8)
    assert log.serialised and log.n_shoes == 5 and not log.rejected and not log.problems
    order = np.argsort([int(s) for _, s in log.after_ids])
    assert np.array_equal(log.after[order], after) and np.array_equal(log.pair_before[order], before)
    assert log.sources[0]["rows"] == 4160 and len(log.sources[0]["sha256"]) == 64


def test_prefix_shoe_accepted_and_truncated(tmp_path):
    rows = _one_deck_rows("1") + _one_deck_rows("2")[:40]
    f = tmp_path / "prefix.csv"
    f.write_text(_lines(rows))
    log = read_shoe_log(f, decks=1, min_prefix=30)
    assert log.lengths.tolist() == [52, 40] and log.after.shape == (2, 40) and not log.serialised
    with pytest.raises(NoDataError):
        read_shoe_log(_tmp(tmp_path, _lines(_one_deck_rows("2")[:10])), decks=1, min_prefix=30)


def _tmp(tmp_path, text, name="x.csv"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_missing_card_reported_with_place(tmp_path):
    f = _tmp(tmp_path, _lines(_one_deck_rows("7", drop={10}) + _one_deck_rows("8")))
    log = read_shoe_log(f, decks=1)
    assert log.n_shoes == 1 and log.after_ids == [("", "8")]
    (p,) = [p for p in log.problems if p.shoe == "7"]
    assert p.position == 10 and "position 10 missing" in p.reason and p.file == str(f)
    # a complete-length shoe with one card replaced by a second copy: extra + missing card named
    f2 = _tmp(tmp_path, _lines(_one_deck_rows("9", replace={5: "AS"})), "y.csv")
    with pytest.raises(NoDataError):
        read_shoe_log(f2, decks=1)
    probs = _problems(f2)
    text = " | ".join(str(p) for p in probs)
    assert "card AS appears 2 times" in text and "missing card 5S" in text and ":6: shoe 9 (after), position 5" in text


def _problems(f, decks=1):
    try:
        return read_shoe_log(f, decks=decks).problems
    except NoDataError:  # all shoes rejected: re-read the problems via a good shoe appended
        g = Path(str(f) + ".plus.csv")
        g.write_text(Path(f).read_text() + "\n".join(_one_deck_rows("ok", serial=1 if "#" in Path(f).read_text() else None)) + "\n")
        return read_shoe_log(g, decks=decks).problems


def test_duplicated_serial_reported(tmp_path):
    rows = _one_deck_rows("1", serial=1, replace={30: "QH#1"})  # QH#1 is already at position 25
    probs = _problems(_tmp(tmp_path, _lines(rows)))
    text = " | ".join(str(p) for p in probs)
    assert "duplicated serial card QH#1 (also at line 26, position 25)" in text
    assert "position 30" in text


def test_serial_above_decks(tmp_path):
    rows = _one_deck_rows("1", serial=1, replace={3: "3S#2"})
    probs = _problems(_tmp(tmp_path, _lines(rows)))
    assert any("deck serial #2" in p.reason and p.position == 3 for p in probs)


def test_unknown_card_token_rejected_row_kept(tmp_path):
    rows = _one_deck_rows("1", replace={12: "ZZ"}) + _one_deck_rows("2")
    f = _tmp(tmp_path, _lines(rows))
    log = read_shoe_log(f, decks=1)
    (r,) = log.rejected
    assert r.line == 13 and r.column == "card" and "unknown card token" in r.reason and r.text == "ZZ"
    assert log.after_ids == [("", "2")]  # the shoe with the unreadable card is excluded, and said so
    assert any(p.shoe == "1" and "rejected" in p.reason for p in log.problems)
    assert log.sources[0]["rejected_rows"] == 1


def test_bad_position_and_stage_rows(tmp_path):
    rows = _one_deck_rows("1", replace={}) + _one_deck_rows("2")
    rows[3] = "1,four,4S"
    f = _tmp(tmp_path, _lines(rows))
    log = read_shoe_log(f, decks=1)
    assert log.rejected[0].column == "position" and log.rejected[0].line == 5
    rows2 = [r + ",during" for r in _one_deck_rows("3")]
    f2 = _tmp(tmp_path, _lines(rows2, "shoe_id,position,card,stage") + "\n".join(r + ",after" for r in _one_deck_rows("4")) + "\n", "s.csv")
    log2 = read_shoe_log(f2, decks=1)
    assert len(log2.rejected) == 52 and log2.rejected[0].column == "stage" and log2.after_ids == [("", "4")]


def test_missing_column_and_empty(tmp_path):
    with pytest.raises(InputError, match="missing column"):
        read_shoe_log(_tmp(tmp_path, "shoe,pos,card\n1,1,AS\n"), decks=1)
    with pytest.raises(NoDataError):
        read_shoe_log(_tmp(tmp_path, "\n\n", "e.csv"), decks=1)
    with pytest.raises(InputError, match="decks"):
        read_shoe_log(_tmp(tmp_path, "a\n", "d.csv"), decks=0)


def test_shinn_riffles_load_and_fit():
    shared_file("data", "shuffles-shinn", "riffle_data.txt")  # skips, naming the file, without ../shared
    s = read_shinn_riffles(SHINN)
    assert s.drops.shape == (8, 48) and s.cuts.tolist() == [23, 24, 25, 25, 25, 24, 25, 24]
    assert np.array_equal(np.sort(s.perms, axis=1), np.tile(np.arange(48), (8, 1)))
    # a riffle leaves exactly two rising sequences, the two packets
    hist = rising_sequences(s.perms).details["histogram"]
    assert hist[1] == 8 and hist.sum() == 8
    # top of the new deck = last dropped card; packet '1' holds the top cards 0..c-1 in order
    line0 = SHINN.read_text().split()[0]
    assert s.perms[0, 0] == (0 if line0[-1] == "1" else s.cuts[0])
    fit = {r.name: r for r in riffle_fit(s.drops)}
    assert fit["riffle_drop_lrt"].details["switch_hat"] == pytest.approx(179 / 376)
    assert fit["riffle_cut_dispersion"].pvalue < 0.001  # hand cuts far more even than Binomial(48, 1/2)
    assert fit["riffle_drop_lrt"].pvalue > 0.05  # drops consistent with GSR (author: GSR preferred by AIC)
    assert fit["riffle_drop_lrt"].details["aic_gsr"] < fit["riffle_drop_lrt"].details["aic_markov"]


def test_shinn_bad_line(tmp_path):
    with pytest.raises(InputError, match=":2: expected a string of 0 and 1"):
        read_shinn_riffles(_tmp(tmp_path, "0101\n01x1\n"))


def test_log_to_battery_path(tmp_path):
    # simulated shoes written without serials take the real-log path: rank/game tests on all
    # dealt shoes, identity tests by Monte Carlo on the before/after pairs
    from rngcert.battery.shuffle import shuffle_results

    rng = Generator(PCG64(3))
    t = simulate_tables(load_procedure("baccarat-004"), 70, 3, burn_in=1)
    before, after = t.before, t.after
    f = tmp_path / "noserial.csv"
    write_shoe_log(f, after, before=before, serial=False)
    log = read_shoe_log(f, decks=8)
    assert not log.serialised and log.pair_before.shape == (70, 416)
    res = shuffle_results(log.pair_before, log.pair_after, dealt=log.after, decks=8, entropy=int(rng.integers(2**31)), game="baccarat",
                          n_resamples=19, mc_shoes=20)
    by = {r.name: r for r in res}
    assert by["adjacent_pairs"].method == "monte-carlo, R=19" and by["adjacent_pairs"].pvalue == pytest.approx(0.05)
    assert by["position_rank_chisquare"].applicable and by["baccarat_outcomes"].applicable
    only_dealt = shuffle_results(None, None, dealt=log.after, decks=8, entropy=int(rng.integers(2**31)), game="baccarat")
    assert sum(r.applicable for r in only_dealt) == 2


def test_shoes_ordered_by_time_not_by_the_text_of_the_timestamp(tmp_path):
    """A table's shoes are taken in time order: "09:58" comes before "10:05" (as text it sorts
    after), a zone is honoured, and a cell that is not a date and time is a rejected row (file,
    line, column), never a silently misplaced shoe."""
    stamps = {"1": "2026-01-01T10:05:00Z", "2": "2026-01-01T09:58:00Z", "3": "2026-01-01T11:30:00+02:00"}  # 3 is 09:30 UTC
    rows = [f"{r},{stamps[r.split(',')[0]]}" for s in ("1", "2", "3") for r in _one_deck_rows(s)]
    f = _tmp(tmp_path, _lines(rows, "shoe_id,position,card,timestamp"))
    log = read_shoe_log(f, decks=1)
    assert not log.rejected
    assert [log.meta[i]["shoe"] for i in log.sequence()[""]] == ["3", "2", "1"]
    bad = list(rows)
    bad[60] = bad[60].rsplit(",", 1)[0] + ",notatime"  # shoe 2, position 9: line 62 of the file
    log = read_shoe_log(_tmp(tmp_path, _lines(bad, "shoe_id,position,card,timestamp"), "bad.csv"), decks=1)
    assert [(r.line, r.column) for r in log.rejected] == [(62, "timestamp")]
    assert "ISO 8601" in log.rejected[0].reason and "notatime" in log.rejected[0].reason
    assert "2" not in [log.meta[i]["shoe"] for i in log.sequence()[""]]  # its shoe lacks a card: a shoe problem, not tested
    assert any(p.shoe == "2" for p in log.problems)
