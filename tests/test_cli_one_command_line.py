"""Issue 24 item 6, one command line: `house-edge` covers every game, `--json` on every command that
prints results, progress bars on a real terminal only, reliable exit codes, notes never cut."""

from __future__ import annotations

import json

import pytest
from _support import run_cli


# ------------------------------------------------------------------ house-edge covers every game
def test_house_edge_blackjack_dispatches_to_the_shuffle_computation(cli):
    top = cli("house-edge", "blackjack", "--decks", 6, "--json")
    alias = cli("shuffle", "house-edge", "--decks", 6, "--json")
    assert top.exit_code == 0 == alias.exit_code, top.output
    assert json.loads(top.output) == json.loads(alias.output)
    assert 0.0 < json.loads(top.output)["house_edge"] < 0.02
    proc = cli("house-edge", "blackjack-004")
    assert proc.exit_code == 0 and proc.output == cli("shuffle", "house-edge", "blackjack-004").output
    assert "house edge" in proc.output and "basic strategy" in proc.output


def test_house_edge_baccarat_and_wheels_still_work_and_options_do_not_mix(cli):
    res = cli("house-edge", "baccarat", "--json")
    assert res.exit_code == 0 and json.loads(res.output)[0]["paytable"]
    res = cli("house-edge", "roulette", "--rule", "H17")
    assert res.exit_code == 2 and "not blackjack" in res.output
    res = cli("house-edge", "blackjack", "--paytable", "baccarat")
    assert res.exit_code == 2
    res = cli("house-edge", "baccarat-004", "--json")  # a baccarat procedure: baccarat at its decks
    assert res.exit_code == 0 and "exact 8-deck" in json.loads(res.output)[0]["probabilities"]
    res = cli("house-edge", "baccarat-004", "--decks", 6)
    assert res.exit_code == 4 and "fixes the number of decks at 8" in res.output  # as `shuffle certify` refuses it
    res = cli("house-edge", "poker")
    assert res.exit_code == 2 and "blackjack" in res.output  # the unknown-game message names blackjack (a usage error: README, exit codes)


# ------------------------------------------------------------------ --json on ingest, rejects, watch
def _log(tmp_path, spins=600, seed=3):
    log = tmp_path / "spins.csv"
    assert run_cli("simulate", "wheel", "--spins", spins, "--seed", seed, "--out", log).exit_code == 0
    lines = log.read_text().splitlines()
    lines[4] = lines[4].rsplit(",", 1)[0] + ",99"  # one unreadable pocket
    log.write_text("\n".join(lines) + "\n")
    return log


def test_ingest_and_rejects_json(tmp_path, cli):
    log = _log(tmp_path)
    db = tmp_path / "s.duckdb"
    res = cli("ingest", log, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    (f,) = d["files"]
    assert f["status"] == "ingested" and f["rejected"] == 1 and f["inserted"] == d["store_spins"] > 0 and d["store_tables"] >= 1
    again = json.loads(cli("ingest", log, "--db", db, "--json").output)
    assert again["files"][0]["status"] == "already ingested" and again["store_spins"] == d["store_spins"]
    res = cli("rejects", "--db", db, "--json")
    r = json.loads(res.output)
    assert res.exit_code == 0 and r["count"] == 1
    (row,) = r["rejects"]
    assert row["line"] == 5 and row["column"].startswith("result") and "99" in row["text"] and row["reason"]
    assert cli("rejects", "--db", db, "--json", "--csv").exit_code == 2


def test_watch_json_lines(tmp_path, cli):
    log = _log(tmp_path, spins=450)
    res = cli("watch", log, "--json", "--no-record", "--block", 100)
    assert res.exit_code == 0, res.output
    events = [json.loads(ln) for ln in res.stdout.splitlines()]  # every line of stdout is one JSON object
    kinds = [e["event"] for e in events]
    assert [k for k in kinds if k != "note"][0] == "start" and kinds[-1] == "end" and "status" in kinds
    end = events[-1]
    assert sum(end["spins"].values()) == max(e["spins"] for e in events if e["event"] == "status") and end["rejected"] == 1
    st = next(e for e in events if e["event"] == "status")
    assert {"table", "spins", "log_evidence", "log_threshold", "leader", "alarm"} <= set(st)


def test_watch_json_alarm_is_the_last_event(tmp_path, cli):
    log = tmp_path / "biased.csv"
    log.write_text("spin_id,result\n" + "".join(f"{i},{17 if i % 3 == 0 else i % 37}\n" for i in range(1, 3001)))
    res = cli("watch", log, "--json", "--no-record")
    assert res.exit_code == 13, res.output
    events = [json.loads(ln) for ln in res.stdout.splitlines()]
    assert events[-1]["event"] == "alarm" and events[-1]["spin"] > 0 and events[-1]["alarm_record"] is None


def test_every_command_that_prints_results_has_json(tmp_path, cli):
    """keygen prints only the two paths it wrote; every other command has --json."""
    cmds = [["certify"], ["simulate", "wheel"], ["equipment"], ["bits"], ["scaling"], ["shuffle", "certify"], ["shuffle", "simulate"],
            ["shuffle", "riffles"], ["shuffle", "house-edge"], ["power"], ["house-edge"], ["ingest"], ["rejects"], ["audit"], ["watch"],
            ["export"], ["verify"]]
    for c in cmds:
        assert "--json" in cli(*c, "--help").output, c
    wheels = json.loads(cli("equipment", "--json").output)
    assert {"european", "american"} <= {w["id"] for w in wheels} and all(w["k"] > 0 for w in wheels)
    res = cli("simulate", "wheel", "--spins", 20, "--seed", 1, "--out", tmp_path / "x.csv", "--json")
    assert json.loads(res.stdout)["spins"] == 20
    res = cli("shuffle", "simulate", "baccarat-004", "--shoes", 2, "--seed", 1, "--out", tmp_path / "s.csv", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["rows"] > 0


# ------------------------------------------------------------------ progress bars: a real terminal only
def _pty_run(args, env, cwd):
    """Run the CLI with stdin, stdout and stderr on a fresh pseudo-terminal (no window size set,
    as `docker exec -t` or `script` give); return (exit code, everything the terminal received)."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "rngcert", *map(str, args)], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                         close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=120), out.decode("utf-8", "replace")


def _cli_env(**extra):
    import os
    from pathlib import Path

    import rngcert

    env = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(Path(rngcert.__file__).resolve().parents[1])
    env.update(extra)
    return env


@pytest.mark.slow
def test_progress_bar_on_a_pty_and_silent_when_piped_or_in_ci(tmp_path):
    import subprocess
    import sys

    log = _log(tmp_path, spins=3000)
    args = ["certify", log, "--no-plots", "--resamples", 199, "--seed", 1, "--out", tmp_path / "r"]
    code, out = _pty_run(args, _cli_env(), tmp_path)
    assert code in (0, 10, 11), out
    assert "certifying" in out and "%|" in out and "spin/s" in out, out[:400]  # the bar, drawn at 80 columns
    assert "VERDICT:" in out
    code, out = _pty_run(args, _cli_env(CI="true"), tmp_path)
    assert code in (0, 10, 11) and "VERDICT:" in out and "certifying" not in out and "%|" not in out, out[:400]
    piped = subprocess.run([sys.executable, "-m", "rngcert", *map(str, args)], capture_output=True, text=True, env=_cli_env(), cwd=tmp_path, timeout=120)
    assert piped.returncode in (0, 10, 11) and "VERDICT:" in piped.stdout
    assert "certifying" not in piped.stderr and "%|" not in piped.stderr, piped.stderr


# ------------------------------------------------------------------ exit codes: no abort from library threads
@pytest.mark.slow
def test_mistyped_column_exits_3_every_time(tmp_path):
    """A mistyped --column aborted with exit 134 (pyarrow's read-ahead thread at interpreter exit) in
    about half the runs. 20 runs of the real process, each must return 3 and say why."""
    import subprocess
    import sys

    log = tmp_path / "tiny.csv"
    log.write_text("spin_id,number\n" + "".join(f"{i},{(7 * i) % 37}\n" for i in range(1, 200)))
    env = _cli_env()
    for i in range(20):
        p = subprocess.run([sys.executable, "-m", "rngcert", "certify", str(log), "--column", "result=nmber", "--out", str(tmp_path / "r")],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 3, (i, p.returncode, p.stderr[-500:])
        assert "column 'nmber' (given for 'result') is not in the file" in p.stderr


def test_csv_reader_and_parse_thread_are_closed_when_the_first_batch_fails(tmp_path):
    """The in-process half of the fix: when processing a batch raises, the pyarrow reader is closed
    and the parsing thread joined before the error reaches the caller (nothing left to run at exit)."""
    import threading

    from rngcert.collect import csvstream

    p = tmp_path / "many.csv"
    p.write_text("spin_id,result\n" + "".join(f"{i},{i % 37}\n" for i in range(1, 60001)))
    with open(p, "rb") as fh:
        scan = csvstream.scan_lines(fh)
    closed = []
    real_open_csv = csvstream.pacsv.open_csv

    class Spy:
        def __init__(self, reader):
            self.reader = reader

        def read_next_batch(self):
            return self.reader.read_next_batch()

        def close(self):
            closed.append(True)
            self.reader.close()

    def spy_open_csv(*a, **kw):
        return Spy(real_open_csv(*a, **kw))

    def process(cols, lines, bad):
        raise ValueError("bad column")

    csvstream.pacsv.open_csv = spy_open_csv
    try:
        for threads in (1, 2):
            closed.clear()
            with pytest.raises(ValueError, match="bad column"):
                csvstream.read_csv_parts(lambda: open(p, "rb"), str(p), scan, process, block_size=64 << 10, encoding="utf-8", threads=threads)
            assert closed == [True], threads
            assert not [t for t in threading.enumerate() if t.name.startswith("rngcert-parse")]
    finally:
        csvstream.pacsv.open_csv = real_open_csv


# ------------------------------------------------------------------ notes wrap, never cut
def test_notes_wrap_and_keep_commands_whole():
    from rngcert.cli._common import DEFAULT_LOG_COMMAND, _wrap

    WRAP_WIDTH = 100

    note = ("no log given: certifying the bundled default log /usr/lib/python3/site-packages/rngcert/data/default-european-spins.csv "
            f"(a fair European wheel simulated by rngcert itself; regenerate with: {DEFAULT_LOG_COMMAND})")
    lines = _wrap("  note: ", note, WRAP_WIDTH)
    assert len(lines) > 1 and "…" not in "".join(lines)
    assert any(DEFAULT_LOG_COMMAND in ln for ln in lines)  # the whole command on one line, to copy
    assert all(len(ln) <= WRAP_WIDTH for ln in lines if DEFAULT_LOG_COMMAND not in ln)
    assert " ".join(ln.strip() for ln in lines).replace("  note: ", "") == "note: " + note  # nothing lost, nothing cut
    assert all(ln.startswith(" " * len("  note: ")) for ln in lines[1:])
    assert _wrap("    why: ", "use --resamples 4800 or more", 21) == ["    why: use", "         --resamples", "         4800 or more"]
    long = "x " * 200 + DEFAULT_LOG_COMMAND  # not a terminal: wrapped at 240 columns, where it was cut before
    assert all(len(ln) <= 248 or DEFAULT_LOG_COMMAND in ln for ln in _wrap("  note: ", long)) and len(_wrap("  note: ", long)) == 3


@pytest.mark.slow
def test_default_log_note_is_not_cut_in_the_summary(tmp_path, cli):
    from rngcert.cli._common import DEFAULT_LOG_COMMAND

    res = cli("certify", "--no-plots", "--resamples", 199, "--seed", 1, "--out", tmp_path)
    assert res.exit_code in (0, 10, 11), res.output
    assert "regenerate with:" in res.output
    note = [ln for ln in res.output.splitlines() if DEFAULT_LOG_COMMAND in ln]  # whole, on one line
    assert note and "…" not in "".join(note)


def test_house_edge_blackjack_line_names_every_rule_that_changes_the_edge(cli):
    """--obo and --resplit-aces change the edge: the printed line must say so, or two different edges read alike."""
    enhc = cli("house-edge", "blackjack", "--decks", 6, "--double", "9-11", "--das", "--split-hands", 4, "--resplit-aces")
    obo = cli("house-edge", "blackjack", "--decks", 6, "--double", "9-11", "--das", "--split-hands", 4, "--resplit-aces", "--obo")
    assert enhc.exit_code == 0 and obo.exit_code == 0
    a, b = enhc.output.splitlines()[0], obo.output.splitlines()[0]
    assert "(ENHC)" in a and "(OBO)" in b and "aces resplit" in a and "blackjack pays 3 to 2" in a
    assert "house edge 0.548%" in a  # Wizard of Odds #294 (reference/blackjack.json): 0.55% for these rules


def test_bits_from_standard_input_is_a_clear_usage_error(cli):
    """`certify -` reads standard input; `bits -` answered "-: cannot read: No such file or directory" (exit 3)."""
    r = cli("bits", "-", "--format", "ascii", "--streams", "1", "--length", "100", input="0101" * 25, catch_exceptions=True)
    assert r.exit_code == 2 and "standard input" in r.output and "save the dump to a file" in r.output
