"""Page one of a report, read as a regulator reads it (issue 24): banners and headers cut on a word
boundary, the unit under test named in full where there is room, the standard that decided the
verdict named on the certificate, a demonstration banner on the bundled log's report and no other."""

from __future__ import annotations

from rngcert.report import text
from rngcert.report.writer import overall_line, unit_under_test, uut_line

SHOE_FAIL = ("FAIL: the baccarat sequence tracker, seeing only the dealt cards, returns +3.84% of the stake (95% interval "
             "+2.42% to +5.25%) against a threshold of +0.00%: a player can beat the game, because the shuffle leaves the "
             "order of the previous shoe readable. Possible causes to check: a wash too short.")


def _table(name, verdict, finding):
    return {"table": name, "n": 300, "battery": {"verdict": verdict, "tests": []}, "key_findings": [finding]}


def test_banner_cut_on_a_word_boundary():
    """Shoe report: the FAIL banner read "... the order of the previous s…." (cut inside a word)."""
    rep = {"verdict": "FAIL", "section_word": "Sample",
           "tables": [_table("first shoe from new decks", "FAIL", SHOE_FAIL), _table("steady state", "SUSPECT", "SUSPECT: 6 tests.")]}
    line = overall_line(rep)
    assert "FAIL: the baccarat sequence tracker" in line
    assert line.endswith("…") and not line.endswith("….")
    last = line[:-1].rsplit(" ", 1)[1]
    assert last in SHOE_FAIL.split(), last  # the last word before the ellipsis is a whole word of the finding
    assert text.clip("the order of the previous shoe", 24) == "the order of the…"
    assert text.clip("short", 24) == "short"


def test_unit_under_test_not_cut_inside_a_word():
    """The shoe's unit under test read "... §2 rules 3.2-3.3) (simu; 2 samples" in the page header and in
    the table "What was certified"; "simulated" must survive the cut, and the table shows it whole."""
    rep = {"equipment": {"kind": "shuffle-procedure", "name": "Baccarat: wash, table riffle once by deck, cut (Rules for the "
                                                             "Live Casino, §2 rules 3.2-3.3)"},
           "tables": [{"table": "steady state"}, {"table": "first shoe from new decks"}], "notes": []}
    uut = unit_under_test(rep)
    head = uut_line(uut, "sample")
    assert "simulated shuffle procedure" in head and head.endswith("; 2 samples")
    desc = head.rsplit("; 2 samples", 1)[0]
    assert desc == uut["description"] or (desc.endswith("…") and desc[:-1].split()[-1] in uut["description"].split())
    full = uut_line(uut, "sample", limit=None)
    assert full == uut["description"] + "; 2 samples"
