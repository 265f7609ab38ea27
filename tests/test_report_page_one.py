"""Page one of a report, read as a regulator reads it (issue 24): banners and headers cut on a word
boundary, the unit under test named in full where there is room, the standard that decided the
verdict named on the certificate, a demonstration banner on the bundled log's report and no other."""

from __future__ import annotations

from html import unescape

from _support import run_cli, split_tables

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


def _run(args, out):
    import json


    res = run_cli(*args, "--out", out)
    assert res.exit_code in (0, 10, 11, 12), res.output
    (rep,) = out.glob("*/report.json")
    return json.loads(rep.read_text(encoding="utf-8")), rep.with_name("report.html").read_text(encoding="utf-8"), res.output


def test_one_sp800_22_sequence_claims_no_second_level_rules(tmp_path):
    """data.e as one stream: page one said "SP 800-22's second-level rules flag no test name" and the clause
    sp800-22-second-level "met", though those rules need at least 2 sequences and never ran."""
    j, html, out = _run(["bits", "--source", "pcg64", "--streams", 1, "--length", 100_000, "--seed", 3, "--no-plots"], tmp_path / "one")
    clause = next(c for c in j["standard"]["results"] if c["id"] == "sp800-22-second-level")
    assert clause["result"] == "not applicable" and "two-level analysis not applicable" in clause["detail"]
    assert "second-level rules flag no test name" not in html and "second-level rules flag no test name" not in out
    if j["verdict"] == "PASS":
        assert "were not applied" in j["tables"][0]["key_findings"][0]
    assert "1 stream tested" in html and "1 streams" not in html
    # the unit under test is the generator, not "battery 1 stream(s) × 100,000 bits"
    assert j["unit_under_test"]["description"] == "bit generator pcg64 (seed entropy 3), software"
    assert 'unit under test: bit generator pcg64 (seed entropy 3), software; 1 stream(s) × 100,000 bits"' in html
    j, html, _ = _run(["bits", "--source", "pcg64", "--streams", 3, "--length", 100_000, "--seed", 3, "--no-plots"], tmp_path / "three")
    clause = next(c for c in j["standard"]["results"] if c["id"] == "sp800-22-second-level")
    assert clause["result"] in ("met", "not met")  # with m >= 2 the rules run and the clause is judged


def test_page_one_under_a_named_standard_states_its_rule(tmp_path, cli):
    """Under west-virginia-29-22B-909 (each test on its own at 99%) page one's "Verdict policy" quoted only
    the battery's weighted-Holm rule; it states the standard's rule first and names the standard."""


    log = tmp_path / "b.csv"
    res = cli("simulate", "wheel", "--spins", 3000, "--seed", 4, "--pocket-bias", "17:1.3", "--out", log)
    assert res.exit_code == 0, res.output
    j, html, _ = _run(["certify", log, "--standard", "west-virginia-29-22B-909", "--seed", 1, "--resamples", 199, "--no-plots"], tmp_path / "r")
    policy = unescape(html.split("<h2>Verdict policy</h2>", 1)[1].split("<nav", 1)[0])
    assert 'id="policy-standard"' in policy and j["standard"]["summary"] in policy
    assert policy.index(j["standard"]["summary"]) < policy.index(j["policy"]["summary"])
    assert 'id="demo"' not in html  # a user's log is not demonstration data
    j, html, _ = _run(["certify", log, "--seed", 1, "--resamples", 199, "--no-plots"], tmp_path / "default")
    assert 'id="policy-standard"' not in html and j["policy"]["summary"] in unescape(html)
    # the certificate (the PDF's first page) names the standard that decided and states its rule as the policy
    from rngcert.report.writer import render_html

    j, _, _ = _run(["certify", log, "--standard", "west-virginia-29-22B-909", "--seed", 1, "--resamples", 199, "--no-plots"], tmp_path / "c")
    cert = unescape(render_html(j, [[] for _ in j["tables"]], certificate=True).split('id="certificate"', 1)[1].split("</section>", 1)[0])
    assert f"{j['standard']['title']} (<code>west-virginia-29-22B-909</code>): {j['verdict']}" in cert
    assert j["standard"]["summary"] in cert and j["policy"]["summary"] not in cert


def test_identical_lines_of_a_schedule_share_one_cell():
    """The certificate of 18 live-dealer tables ran onto a second page, one sentence repeated 18 times:
    consecutive tables with the same verdict and text share one cell; every table keeps its row."""
    from rngcert.report.writer import runs_of

    ts = [{"table": n, "battery": {"verdict": v}, "why": w}
          for n, v, w in [("a", "FAIL", "x"), ("b", "INCONCLUSIVE", "y"), ("c", "INCONCLUSIVE", "y"), ("d", "INCONCLUSIVE", "y"),
                          ("e", "PASS", "y"), ("f", "INCONCLUSIVE", "z")]]
    got = [(t["table"], span) for t, span in runs_of(ts, lambda t: t["why"])]
    assert got == [("a", 1), ("b", 3), ("c", 0), ("d", 0), ("e", 1), ("f", 1)]


def test_multi_table_page_one_and_shoe_two_lines(tmp_path):
    """Three tables of one simulated log: the summary table gives each table its row and one cell to a
    sentence they share. A shoe's page one gives the two lines (statistical finding, practical edge) of
    each sample, the deciding sample first."""
    log = tmp_path / "three.csv"
    assert run_cli("simulate", "wheel", "--spins", 2400, "--seed", 2, "--out", log, catch_exceptions=True).exit_code == 0
    split_tables(log, 800)
    rep, html, _ = _run(["certify", log, "--seed", 1, "--resamples", 199, "--no-plots"], tmp_path / "multi")
    summary = html.split('<h2 id="summary">', 1)[1].split("</table>", 1)[0]
    for t in ("T1", "T2", "T3"):
        assert f">{t}</a></td>" in summary
    assert 'id="two-lines"' in html and html.count("Statistical finding:") == 3  # 3 tables: the two lines of each on page one
    import copy

    from rngcert.report.writer import render_html

    six = copy.deepcopy(rep)  # more than 4 tables: the two lines go to each table's own section
    six["tables"] = [dict(copy.deepcopy(t), table=f"{t['table']}{k}") for k in "ab" for t in rep["tables"]]
    many = render_html(six, [[] for _ in six["tables"]])
    assert 'id="two-lines"' not in many and many.count('class="small two-lines"') == 6 and many.count("Practical edge:") == 6
    heads = [text.headline(t) for t in rep["tables"]]
    same = len(set(heads)) == 1 and len({t["battery"]["verdict"] for t in rep["tables"]}) == 1
    assert ('rowspan="3"' in summary) == same and summary.count("<td class=\"small\"") == (1 if same else len(set(heads)))
    shoe, html, _ = _run(["shuffle", "certify", "baccarat-004", "--shoes", 120, "--seed", 1, "--no-sensitivity", "--no-plots"],
                         tmp_path / "shoe")
    two = unescape(html.split('id="two-lines"', 1)[1].split("</div>", 1)[0])
    names = [t["table"] for t in text.by_severity(shoe["tables"])]
    assert [two.index(f"<b>{n}</b>") for n in names] == sorted(two.index(f"<b>{n}</b>") for n in names)
    assert two.count("Statistical finding") == len(names) and two.count("Practical edge") == len(names)


def test_finding_of_a_contingency_table_is_not_a_dump_of_numbers():
    """direction_homogeneity's finding cell printed both rows of its 2 x 37 table (74 numbers, 20 lines)."""
    t = {"name": "direction_homogeneity", "applicable": True,
         "details": {"observed": [[270] * 37, [268] * 37], "expected": [[269.0] * 37, [269.0] * 37]}}
    assert text.finding(t, [str(i) for i in range(37)], "roulette") == "2 × 37 table of counts (in report.json)"
    flat = {"name": "outside_colour", "applicable": True, "details": {"observed": [9628, 9595, 564], "expected": [9626, 9626, 534.8]}}
    assert text.finding(flat) == "9,628 / 9,595 / 564 (expected 9,626 / 9,626 / 534.8)"


def test_shoe_also_rejected_does_not_count_the_tracker_twice():
    """'Also rejected after Holm (9 test(s))' counted the tracker whose FAIL the finding before it states, while
    the standard's statistical line said 8."""
    from rngcert.battery.plain import shoe_findings

    sec = {"table": "first shoe", "n": 200, "battery": {"verdict": "FAIL", "tests": []},
           "trackers": [{"name": "baccarat_sequence", "edge": 0.05, "ci95": [0.03, 0.07], "threshold": 0.0, "beats_threshold": True}],
           "findings": ["rising_sequences: cards end up nearer their place", "adjacent_pairs: pairs kept",
                        "tracker_edge:baccarat_sequence: the tracker wins"]}
    keys, _ = shoe_findings(sec)
    also = next(k for k in keys if k.startswith("Also rejected"))
    assert also.startswith("Also rejected after Holm (2 test(s))") and "tracker edge" not in also


def test_reading_note_gives_the_standards_own_rule_not_the_default_one(tmp_path, cli):
    """Under a standard other than the default, 'Reading this report' does not say that only a Holm-adjusted
    p-value below alpha makes a FAIL (the West Virginia clauses judge each test on its own)."""
    import numpy as np

    x = np.random.default_rng(3).integers(0, 37, 8000)
    log = tmp_path / "s.csv"
    log.write_text("result\n" + "\n".join(map(str, x)) + "\n")
    r = cli("certify", log, "--seed", 1, "--resamples", 199, "--no-plots", "--standard", "west-virginia-29-22B-909", "--out", tmp_path / "r")
    html = next((tmp_path / "r").glob("*/report.html")).read_text()
    note = html[html.index('id="reading"'):html.index('class="legend"', html.index('id="reading"'))]
    assert r.exit_code in (0, 10, 11, 12) and "only an adjusted p-value below alpha makes a FAIL" not in note
    assert "what makes a FAIL is the rule of the standard" in note


def test_terminal_verdict_line_of_the_bundled_log_says_demonstration_data(tmp_path, cli):
    """The bundled default log is rngcert's own simulated wheel: the terminal's VERDICT line says so, as page one does."""
    r = cli("certify", "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "r")
    last = [ln for ln in r.output.splitlines() if ln.startswith("VERDICT: ")]
    assert r.exit_code == 0 and last and "DEMONSTRATION DATA" in last[-1]
    log = tmp_path / "own.csv"
    log.write_text("result\n" + "\n".join(str(i % 37) for i in range(400)) + "\n")
    own = cli("certify", log, "--seed", 1, "--resamples", 199, "--no-plots", "--out", tmp_path / "o")
    assert "DEMONSTRATION" not in own.output
