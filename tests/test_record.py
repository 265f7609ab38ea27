"""rngcert record (issue 25): a wheel recorded live from a (simulated) serial line — a pseudo-terminal
replaying the real capture with its timing compressed, a disconnect in the middle of a game, a restart
while the controller repeats a result — with exact counts; the incremental decoder equals the whole-file
reader however the stream is cut."""

from __future__ import annotations

import csv
import os
import threading
import time
import tty
from importlib import resources

import numpy as np
import pytest
from _support import shared_file

from rngcert.collect import protocol as proto_mod
from rngcert.collect.record import LiveDecoder, RecordStats, record
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.protocol import load_protocol
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError

PROTO = load_protocol("slingshot2")
SS2 = ("data", "wheel-controller-serial", "ss2-protocol-6-games.log")


def _whole(path):
    lines, no, _ = proto_mod.split_lines(path.read_bytes())
    return proto_mod.decode(lines, no, PROTO, str(path), final=False).games


@pytest.mark.parametrize("name", ["ss2-protocol-6-games.log", pytest.param("selftest-capture.log", marks=pytest.mark.slow)])
def test_live_decoder_equals_the_whole_capture_however_the_stream_is_cut(name):
    path = shared_file("data", "wheel-controller-serial", name)
    whole = _whole(path)
    want = [(int(s), int(g), r, bool(v), w) for s, g, r, v, w, c in
            zip(whole.spin_id, whole.game, whole.result, whole.void, whole.reason, whole.complete) if c]
    text = path.read_bytes().decode("ascii").split("\n")
    if text[-1] == "":
        text = text[:-1]
    rng = np.random.default_rng(25)
    dec = LiveDecoder(PROTO, str(path))
    got, i = [], 0
    while i < len(text):
        k = int(rng.integers(1, 400 if len(text) > 10_000 else 40))
        spins, _ = dec.feed(text[i:i + k])
        got += [(s.spin_id, s.game, s.result, s.void, s.void_reason) for s in spins]
        i += k
    assert got == want
    assert len(dec.lines) < 4000  # only the running game is kept


def test_live_decoder_trims_line_ends_as_the_whole_capture_does(tmp_path):
    """Trailing spaces or tabs after a message: the whole-capture reader trims them (and reads 2 games); the live
    decoder rejected every such line and wrote no game."""
    lines = [x + " " for x in _game_lines(20, "7")] + [x + "\t" for x in _game_lines(21, "8")] + ["*X;1;022;  ;0;150;1 "]
    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(lines) + "\n")
    whole = _whole(cap)
    spins, rej = LiveDecoder(PROTO).feed(lines)
    assert rej == [] and [(s.game, s.result, s.void) for s in spins] == [(20, "7", False), (21, "8", False)]
    assert whole.result[whole.complete].tolist() == ["7", "8"]


def test_restart_does_not_write_the_repeated_result_again():
    lines = shared_file(*SS2).read_bytes().decode("ascii").splitlines()
    first = LiveDecoder(PROTO)
    spins, _ = first.feed(lines[:127])  # up to the first result message of game 011
    assert spins == []  # not decided: the game has not ended (a repeat could still give another number)
    spins = first.stop()  # the recording stops: the game with its result is written now
    assert [(s.spin_id, s.game, s.result, s.void) for s in spins] == [(1, 11, "27", False)] and first.stop() == []
    again = LiveDecoder(PROTO, last=(1, 11, "27", False))  # restarted: the controller still repeats 5;011;27
    spins, _ = again.feed(lines[127:210])
    assert [(s.spin_id, s.game, s.result) for s in spins] == [(2, 12, "16")]
    assert "not written again" in again.notes[0]


def _game_lines(game: int, result: str, repeats: int = 4) -> list[str]:
    return [f"*X;{s};{game:03d};  ;0;150;1" for s in (1, 2, 3, 4)] + [f"*X;5;{game:03d};{result:>2};0;150;1"] * repeats


def test_live_two_winning_numbers_in_one_game_make_it_void_when_it_ends():
    lines = _game_lines(20, "7") + ["*X;5;020;17;0;150;1"] + _game_lines(21, "3")
    dec = LiveDecoder(PROTO)
    assert dec.feed(lines[:9]) == ([], [])  # game 020's result and its repeats: not decided yet
    spins, rej = dec.feed(lines[9:])  # the other number, then game 021 begins: game 020 is decided, void
    assert rej == [] and [(s.game, s.result, s.void) for s in spins] == [(20, "7", True)]
    assert spins[0].void_reason == "two winning numbers in one game (line 5: '7', then line 9: '17'); neither is counted"
    assert [(s.game, s.result, s.void) for s in dec.stop()] == [(21, "3", False)]


def test_restart_that_sees_another_number_for_the_last_row_says_conflict():
    again = LiveDecoder(PROTO, last=(4, 20, "7", False))  # written at a stop with 7; after the restart the controller repeats 17
    spins, _ = again.feed(["*X;5;020;17;0;150;1"] * 3 + _game_lines(21, "3") + ["*X;1;022;  ;0;150;1"])
    assert [(s.spin_id, s.game, s.result) for s in spins] == [(5, 21, "3")]  # game 020 not written again, nor counted twice
    assert again.notes and again.notes[0].startswith("CONFLICT: game 020 is the log's last row (spin 4) with result 7") and "17" in again.notes[0]


@pytest.mark.parametrize("why, before", [
    ("two winning numbers", _game_lines(21, "7", 2) + ["*X;5;021;17;0;150;1"]),  # void at the stop: 7, then 17
    ("warning flags 4", [f"*X;{s};021;  ;{4 if s == 3 else 0};150;1" for s in (1, 2, 3, 4)] + ["*X;5;021;17;0;150;1"]),
])
def test_restart_after_a_void_last_row_does_not_write_its_game_again(why, before):
    first = LiveDecoder(PROTO)
    assert [s.game for s in first.feed(_game_lines(20, "3") + before)[0]] == [20]
    rows = [(s.spin_id, s.game, s.result, s.void, s.void_reason) for s in first.stop()]
    assert rows[-1][:2] == (2, 21) and rows[-1][3] and why in rows[-1][4]  # written void at the stop
    again = LiveDecoder(PROTO, last=(2, 21, rows[-1][2], True))  # the controller still repeats 5;021;17
    spins, _ = again.feed(["*X;5;021;17;0;150;1"] * 3 + _game_lines(22, "8"))
    spins += again.stop()
    assert [(s.spin_id, s.game, s.result, s.void) for s in spins] == [(3, 22, "8", False)]  # game 021 not written again with 17
    assert "game 021 is the log's last row (spin 2, void)" in again.notes[0] and "not written again" in again.notes[0]
    other = LiveDecoder(PROTO, last=(2, 21, "", True))  # a void row without a number (it may have ended with none): 5;021 now is
    assert [(s.spin_id, s.game, s.result) for s in other.feed(["*X;5;021;17;0;150;1"] * 3 + _game_lines(22, "8"))[0]] == [(3, 21, "17")]
    # a game of its own, or the same game (void at the stop before its result): not told apart, so said (it was silent)
    assert "has the game number of the log's last row (spin 2, void without a number): written as a new game" in other.notes[0]


def test_restart_whose_later_repeat_gives_another_number_says_conflict():
    again = LiveDecoder(PROTO, last=(4, 20, "7", False))  # written at a stop with 7; the repeats after the restart: 7, 7, then 17
    spins, _ = again.feed(["*X;5;020; 7;0;150;1"] * 2 + ["*X;5;020;17;0;150;1"] + _game_lines(21, "3") + ["*X;1;022;  ;0;150;1"])
    assert [(s.spin_id, s.game, s.result) for s in spins] == [(5, 21, "3")]  # game 020 not written again
    assert "not written again" in again.notes[0]
    assert len(again.notes) == 2 and again.notes[1].startswith("CONFLICT: game 020 is the log's last row (spin 4) with result 7")
    assert "two winning numbers in one game (line 1: '7', then line 3: '17')" in again.notes[1]


# ---------------------------------------------------------------------------- a simulated wheel on a pty
class Wheel:
    """The controller's side: a pseudo-terminal whose slave is reached through a stable link
    (like /dev/serial/by-id/...), replaying lines with a fixed delay; can be unplugged and plugged
    in again (a new pty behind the same link)."""

    def __init__(self, folder):
        self.link = folder / "ttyWHEEL"
        self.master = None
        self.plug()

    def plug(self):
        m, s = os.openpty()
        tty.setraw(s)
        name = os.ttyname(s)
        os.close(s)  # (the recorder opens it by name)
        tmp = self.link.with_suffix(".new")
        os.symlink(name, tmp)
        os.replace(tmp, self.link)
        self.master = m

    def unplug(self):
        os.close(self.master)
        self.master = None

    def send(self, data: bytes):
        os.write(self.master, data)


def _wait(cond, what, timeout=20.0):  # (generous: only a failing run waits it out)
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs pseudo-terminals (POSIX)")
def test_record_from_a_pty_with_a_disconnect_mid_game_and_a_restart(tmp_path):
    lines = shared_file(*SS2).read_bytes().split(b"\n")
    lines = [ln + b"\n" for ln in lines if ln]
    assert len(lines) == 505
    wheel = Wheel(tmp_path)
    out = tmp_path / "wheel.csv"
    delay = 0.5 / 500  # the controller's 0.5 s between messages, 500 times faster
    st1, st2 = RecordStats(), RecordStats()
    stop1 = threading.Event()
    events: list[str] = []

    def run(st, stop):
        record(str(wheel.link), out, PROTO, reconnect=0.02, stop=stop.is_set, stats=st, on_event=events.append)

    t1 = threading.Thread(target=run, args=(st1, stop1), daemon=True)
    t1.start()
    _wait(lambda: any(e.startswith("connected") for e in events), "the recorder to connect")
    sent = 0

    def replay(upto):
        nonlocal sent
        while sent < upto:
            wheel.send(lines[sent])
            sent += 1
            time.sleep(delay)

    # 1. games 011, 012 and into game 013's ball-in-track state (line 225 of the capture)
    replay(225)
    _wait(lambda: st1.lines == 225, "the recorder to read 225 lines")
    # 2. the cable is pulled in the middle of a message of game 013; plugged in again; the wheel goes on
    wheel.send(b"*X;3;013;16;0;1")
    _wait(lambda: st1.bytes == sum(map(len, lines[:225])) + 15, "the fragment to arrive")
    wheel.unplug()
    _wait(lambda: st1.disconnects == 1, "the disconnect")
    wheel.plug()
    _wait(lambda: st1.reconnects == 1, "the reconnect")
    # 3. on to game 014's first result message (line 342), then the recorder is stopped (game 014, with its result,
    # is written at the stop) and restarted
    replay(342)
    _wait(lambda: st1.lines == 342 and st1.spins == 3, "spins 1-3 and game 014's first result message")
    stop1.set()
    t1.join(20)
    assert not t1.is_alive() and st1.spins == 4
    assert any(e.startswith("game 014 had its result (3) when the recording stopped") for e in events)
    stop2 = threading.Event()
    st2_thread = threading.Thread(target=run, args=(st2, stop2), daemon=True)
    n_conn = sum(e.startswith("connected") for e in events)
    st2_thread.start()
    _wait(lambda: sum(e.startswith("connected") for e in events) == n_conn + 1, "the restarted recorder to connect")
    # 4. the controller still repeats game 014's result, then plays 015, 016, and 017 is cut by a power-off
    replay(len(lines))
    _wait(lambda: st2.spins == 3, "spins 5-7")
    stop2.set()
    st2_thread.join(20)
    assert not st2_thread.is_alive()
    wheel.unplug()

    rows = list(csv.DictReader(out.open()))
    assert [r["spin_id"] for r in rows] == ["1", "2", "3", "4", "5", "6", "7"]
    assert [r["game"] for r in rows] == ["011", "012", "013", "014", "015", "016", "017"]
    assert [r["result"] for r in rows] == ["27", "16", "6", "3", "10", "0", ""]
    assert [r["void"] for r in rows] == ["false"] * 6 + ["true"] and rows[6]["void_reason"].startswith("power off (*P 0")
    assert [r["direction"] for r in rows[:6]] == ["ccw", "cw", "ccw", "cw", "ccw", "cw"]
    assert rows[2]["rotor_speed"] == "17"  # game 013's launch was read before the cable was pulled
    assert (st1.spins, st1.disconnects, st1.reconnects, st1.rejected) == (4, 1, 1, 1)
    assert any("is the log's last row (spin 4)" in e for e in events)
    rej = list(csv.DictReader(out.with_name(out.name + ".rejects.csv").open()))
    assert len(rej) == 1 and rej[0]["text"] == "*X;3;013;16;0;1" and "disconnect" in rej[0]["reason"]
    # the recorded log is a spin log like any other
    log = read_spin_log(out, load_wheel("european"))
    t = next(iter(log.tables.values()))
    assert (log.accepted, log.void) == (6, 1)
    assert t.rotor_speed.tolist() == pytest.approx([14.1, 16.1, 17.0, 16.7, 14.1, 16.2])


def test_record_cli_resumes_and_cuts_a_half_written_row(tmp_path, cli):
    cap = shared_file(*SS2)
    part = tmp_path / "part.log"
    part.write_bytes(b"\n".join(cap.read_bytes().split(b"\n")[:210]) + b"\n")  # games 011 and 012
    out = tmp_path / "w.csv"
    res = cli("record", part, "--out", out)
    assert res.exit_code == 0, res.output
    assert out.read_text().count("\n") == 3 and "game 013 was running" in res.output
    with out.open("a") as fh:
        fh.write("3,013,2026-01-01T00:00:00Z,6,fal")  # a crash while writing
    rest = tmp_path / "rest.log"  # the capture from game 013 on (the whole capture again would record games 011-012 twice: refused)
    rest.write_bytes(b"\n".join(cap.read_bytes().split(b"\n")[210:]))
    res = cli("record", rest, "--out", out, "-q")
    assert res.exit_code == 0
    assert "cut off" in res.output and "resuming" in res.output
    import json

    meta = json.loads(out.with_name("w.csv.json").read_text())
    assert meta["protocol"]["rotor_speed_assumed"] and [x["resumed_after_spin"] for x in meta["sessions"]] == [None, 2]
    rows = list(csv.DictReader(out.open()))
    assert [r["spin_id"] for r in rows] == [str(i) for i in range(1, 8)]  # games 013-017 after spin 2
    assert [r["game"] for r in rows] == ["011", "012", "013", "014", "015", "016", "017"]
    bad = tmp_path / "other.csv"
    bad.write_text("spin_id,result\n1,5\n")
    res = cli("record", cap, "--out", bad)
    assert res.exit_code == 3 and "not a log this recorder wrote" in res.output


def _part(tmp_path, upto=342):
    """The 6-game capture up to game 014's first result message: 011-013 ended, 014 running with its result."""
    part = tmp_path / "part.log"
    part.write_bytes(b"\n".join(shared_file(*SS2).read_bytes().split(b"\n")[:upto]) + b"\n")
    return part


@pytest.mark.parametrize("n, games", [(1, ["011"]), (3, ["011", "012", "013"]), (4, ["011", "012", "013", "014"])])
def test_max_spins_writes_that_many_rows_however_many_games_one_read_decides(tmp_path, n, games):
    out, events = tmp_path / "w.csv", []
    st = record(str(_part(tmp_path)), out, PROTO, max_spins=n, on_event=events.append)  # (one read holds the whole file)
    rows = list(csv.DictReader(out.open()))
    assert [r["game"] for r in rows] == games and st.spins == n
    if n < 3:
        assert any(e.startswith(f"--max-spins {n} reached: {3 - n} later game(s)") for e in events), events
    if n < 4:
        assert any("game 014" in e and "--max-spins" in e and "not written" in e for e in events), events


def test_a_void_running_game_written_at_the_stop_is_said_void_not_a_result(tmp_path):
    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(_game_lines(20, "3") + [f"*X;{s};021;  ;{4 if s == 3 else 0};150;1" for s in (1, 2, 3)]) + "\n")
    events = []
    record(str(cap), tmp_path / "w.csv", PROTO, on_event=events.append)
    assert any(e.startswith("game 021 was void (warning flags 4") and e.endswith("when the recording stopped, before it ended: written now")
               for e in events), events
    assert not any("had its result" in e for e in events)  # (it said: "had its result (warning flags 4 ...)")


def test_a_restart_stopped_again_inside_the_last_rows_game_says_it_is_written(tmp_path):
    out, events = tmp_path / "w.csv", []
    record(str(_part(tmp_path)), out, PROTO, on_event=events.append)  # game 014 written at the stop
    more = tmp_path / "more.log"
    more.write_bytes(shared_file(*SS2).read_bytes().split(b"\n")[342] + b"\n")  # the controller still repeats 5;014; 3, then the stop
    record(str(more), out, PROTO, on_event=events.append)
    assert [r["game"] for r in csv.DictReader(out.open())] == ["011", "012", "013", "014"]
    assert "game 014 (the log's last row, spin 4) was still running when the recording stopped: already written" in events
    assert not any("a restart writes it" in e for e in events)  # (it said so of game 014: untrue, a restart does not write it)


def test_ctrl_c_writes_the_running_game_that_has_its_result(tmp_path):
    calls = []

    def ctrl_c():  # the second poll: after the file's one read (games 011-013 decided, 014 with its result)
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return False

    out, events = tmp_path / "w.csv", []
    with pytest.raises(KeyboardInterrupt):
        record(str(_part(tmp_path)), out, PROTO, stop=ctrl_c, on_event=events.append)
    assert [r["game"] for r in csv.DictReader(out.open())] == ["011", "012", "013", "014"]
    assert any(e.startswith("game 014 had its result (3) when the recording stopped") for e in events)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_record_from_a_fifo_whose_writer_closes_and_comes_back(tmp_path):
    data = shared_file(*SS2).read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1  # a line boundary in the middle of the capture
    fifo = tmp_path / "wheel.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "w.csv"

    def writer():
        for part in (data[:cut], data[cut:]):
            with open(fifo, "wb") as fh:  # (blocks until the recorder has the FIFO open)
                fh.write(part)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    st = record(str(fifo), out, PROTO, reconnect=0.02, idle_timeout=0.5)
    t.join(20)
    rows = list(csv.DictReader(out.open()))
    assert [r["result"] for r in rows] == ["27", "16", "6", "3", "10", "0", ""] and st.rejected == 0
    assert st.lines == 505


def test_watch_refuses_a_raw_capture_and_says_what_to_run(tmp_path, cli):
    res = cli("watch", shared_file(*SS2), "--no-record", "--db", tmp_path / "s.duckdb")
    assert res.exit_code == 3 and "rngcert record" in res.output


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs pseudo-terminals (POSIX)")
def test_pty_replays_a_real_capture_with_its_own_timing(tmp_path):
    """The self-test capture's game of 2025-09-16 (lines 42,536-42,700), sent as the controller sent it:
    only the 'Receive >>>' messages, without the capture program's prefix, spaced by their own timestamps
    compressed 1,000 times. One game with a result (31, game 001, launched at 16.2 rpm, ccw); the game
    that follows is still running when the replay ends, so it is not written."""
    from datetime import datetime

    raw = shared_file("data", "wheel-controller-serial", "selftest-capture.log").read_text(encoding="ascii").splitlines()[42535:42700]
    msgs = [(datetime.strptime(ln[1:24], "%Y-%m-%d %H:%M:%S.%f"), ln[26:].split(">>> ", 1)[1]) for ln in raw if "] Receive >>> " in ln]
    assert len(msgs) == 163  # grep -c "Receive >>>" on those lines
    wheel = Wheel(tmp_path)
    out = tmp_path / "w.csv"
    st, stop, events = RecordStats(), threading.Event(), []
    t = threading.Thread(target=lambda: record(str(wheel.link), out, PROTO, reconnect=0.02, stop=stop.is_set, stats=st, on_event=events.append),
                         daemon=True)
    t.start()
    _wait(lambda: any(e.startswith("connected") for e in events), "the recorder to connect")
    for i, (when, msg) in enumerate(msgs):
        if i:
            time.sleep((when - msgs[i - 1][0]).total_seconds() / 1000)
        wheel.send(msg.encode("ascii") + b"\r\n")
    _wait(lambda: st.lines == len(msgs), "every message to be read")
    stop.set()
    t.join(20)
    wheel.unplug()
    rows = list(csv.DictReader(out.open()))
    assert [(r["spin_id"], r["game"], r["result"], r["void"], r["direction"], r["rotor_speed"]) for r in rows] == [("1", "001", "31", "false", "ccw", "16.2")]
    assert st.rejected == 0 and any("game 002 was running" in e for e in events)


def test_record_source_errors_exit_3_and_leave_no_log(tmp_path, cli):
    out = tmp_path / "w.csv"
    res = cli("record", tmp_path / "capture.lgo", "--out", out)
    assert res.exit_code == 3 and "no such file, FIFO or serial port" in res.output and not out.exists()
    res = cli("record", "/dev/ttyRNGCERT-NONE", "--out", out, "--max-wait", "0.2", "--reconnect", "0.05")
    assert res.exit_code == 3 and "gave up after 0.2 s" in res.output
    res = cli("record", shared_file(*SS2), "--out", out, "--protocol", "no-such")
    assert res.exit_code == 4 and "slingshot2" in res.output


def test_a_port_that_never_opens_leaves_no_header_only_log(tmp_path, cli):
    """A serial port that never opened before --max-wait gave up (exit 3): the log (its header only), its rejects file and
    OUT.json were left behind, a log of a recording that never ran (certify read it as 0 spins). Removed now; a log that
    was there before (a resume) is kept as it was, and its session says 0 rows."""
    out = tmp_path / "w.csv"
    res = cli("record", "/dev/ttyRNGCERT-NONE", "--out", out, "--max-wait", "0.2", "--reconnect", "0.05")
    assert res.exit_code == 3 and "gave up after 0.2 s" in res.output and "never opened" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    out.write_text("spin_id,game,timestamp,result,void,void_reason,direction,rotor_speed\n1,011,2026-12-01T10:00:00Z,27,false,,ccw,13.6\n")
    before = out.read_bytes()
    res = cli("record", "/dev/ttyRNGCERT-NONE", "--out", out, "--max-wait", "0.2", "--reconnect", "0.05")
    assert res.exit_code == 3 and out.read_bytes() == before
    import json

    sessions = json.loads((tmp_path / "w.csv.json").read_text())["sessions"]
    assert len(sessions) == 1 and sessions[-1]["rows_written"] == 0 and sessions[-1]["source"] == "/dev/ttyRNGCERT-NONE"


def test_a_log_rotated_while_the_recorder_was_stopped_continues_its_spin_ids(tmp_path):
    """logrotate renamed the log while the recorder was stopped: the restarted recorder made a new log whose spin ids began
    at 1 again, repeating the rotated file's (watch across the rotation took them for repeats or conflicts; a store of both
    files used neither result). OUT.json keeps each session's last row: the ids continue after it, said; after a session
    that did not end (a crash) that is not known, and said."""
    import json

    text = shared_file(*SS2).read_text()
    lines = text.splitlines(keepends=True)
    part1, part2 = tmp_path / "part1.log", tmp_path / "part2.log"
    part1.write_text("".join(lines[:250]))
    part2.write_text("".join(lines[250:]))
    out = tmp_path / "w.csv"
    record(str(part1), out, PROTO)
    assert [r["spin_id"] for r in csv.DictReader(out.open())] == ["1", "2"]
    os.rename(out, tmp_path / "w.csv.1")
    events = []
    st = record(str(part2), out, PROTO, on_event=events.append)
    rows = list(csv.DictReader(out.open()))
    assert [(r["spin_id"], r["game"]) for r in rows] == [("3", "013"), ("4", "014"), ("5", "015"), ("6", "016"), ("7", "017")]
    assert any("wrote up to spin 2 (game 012): spin ids continue after it" in e for e in events) and st.spins == 5
    meta = json.loads((tmp_path / "w.csv.json").read_text())
    assert meta["sessions"][-1]["last_row"] == {"spin_id": 7, "game": 17, "result": "", "void": True}
    del meta["sessions"][-1]["ended_utc"]  # the last session crashed
    (tmp_path / "w.csv.json").write_text(json.dumps(meta))
    os.rename(out, tmp_path / "w.csv.2")
    events.clear()
    record(str(part1), out, PROTO, on_event=events.append)
    assert [r["spin_id"] for r in csv.DictReader(out.open())] == ["1", "2"] and any("did not end (a crash)" in e for e in events)


def test_record_watch_alarms_on_a_biased_wheel_and_not_on_a_fair_one(tmp_path, cli):
    from rngcert.simulate.protocol import protocol_lines, write_protocol
    from rngcert.stats.alternatives import WheelBias, position_probabilities

    eu = load_wheel("european")
    rng = np.random.default_rng(7)
    n = 3000
    for name, p, code in (("fair", None, 0), ("sector", position_probabilities(37, WheelBias(sectors=((0, 5, 1.6),))), 13)):
        pos = rng.choice(37, size=n, p=p)
        cap = tmp_path / f"{name}.log"
        write_protocol(cap, protocol_lines(eu, pos, np.arange(n) % 2, np.full(n, 16.0), np.zeros(n, bool), PROTO))
        out = tmp_path / f"{name}.csv"
        res = cli("record", cap, "--out", out, "-q", "--watch")
        assert res.exit_code == code, res.output
        rows = list(csv.DictReader(out.open()))
        if code:
            assert "ALARM" in res.output and "positions 0..4" in res.output and len(rows) < n
        else:
            assert len(rows) == n
        assert not out.with_name(out.name + ".rejects.csv").read_text().strip().count("\n")  # header only


def test_record_from_standard_input_with_a_table_column(tmp_path, cli):
    out = tmp_path / "w.csv"
    res = cli("record", "-", "--out", out, "--table", "wheel-7", "-q", input=shared_file(*SS2).read_bytes())
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 7 and {r["table"] for r in rows} == {"wheel-7"}
    log = read_spin_log(out, load_wheel("european"))
    assert list(log.tables) == ["wheel-7"] and (log.accepted, log.void) == (6, 1)
    res = cli("record", "-", "--out", out, "-q", input=b"")  # resuming without the table: another log's shape
    assert res.exit_code == 3 and "same --table" in res.output


def test_record_help_has_examples_and_exit_codes(cli):
    res = cli("record", "--help")
    assert res.exit_code == 0 and "Examples" in res.output and "13 ALARM" in res.output and "--baud" in res.output


def test_record_rejects_and_table_cells_are_safe_in_a_spreadsheet(tmp_path, cli):
    """A garbled line from the wire that starts with '=', '+', '-', '@' or a tab was written as it came
    into LOG.rejects.csv (a spreadsheet runs it); so was --table '=T1' in the log. Both get the README's
    quote prefix, and rngcert reads its own table cell back as it was given."""
    from rngcert.collect.csvsafe import original_cell

    lines = [f"*X;{s};011;  ;0;150;0" for s in (1, 2, 3, 4)] + ["*X;5;011; 5;0;150;0"] * 3
    bad = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "'q"]
    lines += bad + [f"*X;{s};012; 5;0;150;1" for s in (1, 2, 3, 4)] + ["*X;5;012;17;0;150;1"] * 3
    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(lines) + "\n")
    out = tmp_path / "w.csv"
    res = cli("record", cap, "--out", out, "--table", "=T1", "-q")
    assert res.exit_code == 0, res.output
    with open(str(out) + ".rejects.csv", newline="") as fh:
        texts = [r["text"] for r in csv.DictReader(fh)]
    assert texts == ["'" + b for b in bad] and [original_cell(t) for t in texts] == bad
    with open(out, newline="") as fh:
        assert {r["table"] for r in csv.DictReader(fh)} == {"'=T1"}
    rep = cli("certify", out, "--out", tmp_path / "r", "--json")
    assert '"=T1"' in rep.stdout and "'=T1" not in rep.stdout


def test_record_watch_says_when_the_log_written_before_already_alarms(tmp_path, cli):
    """The detector replays the log's earlier spins first: an alarm among them is said so (it has no spin of this
    recording to name; was 'spin_id None')."""
    from rngcert.simulate.protocol import protocol_lines, write_protocol
    from rngcert.stats.alternatives import WheelBias, position_probabilities

    eu = load_wheel("european")
    rng = np.random.default_rng(7)
    n = 3000
    pos = rng.choice(37, size=n, p=position_probabilities(37, WheelBias(sectors=((0, 5, 1.6),))))
    cap, more = tmp_path / "biased.log", tmp_path / "more.log"
    write_protocol(cap, protocol_lines(eu, pos, np.arange(n) % 2, np.full(n, 16.0), np.zeros(n, bool), PROTO))
    write_protocol(more, protocol_lines(eu, pos[:2], np.arange(2) % 2, np.full(2, 16.0), np.zeros(2, bool), PROTO))
    out = tmp_path / "w.csv"
    assert cli("record", cap, "--out", out, "-q").exit_code == 0  # recorded without watching
    res = cli("record", more, "--out", out, "-q", "--watch")
    assert res.exit_code == 13, res.output
    assert "(among the log's spins written before this recording)" in res.output and "None" not in res.output


@pytest.mark.parametrize("eol", [b"\r", b"\r\n"])
def test_a_capture_with_carriage_return_line_ends_is_read_line_by_line(tmp_path, eol):
    """A capture whose lines end with a lone CR (a terminal program's default): record read the whole 505-line capture as one
    line, took it for one settings message ('*P 1\\r*X;6;...' matches '^\\*[^X].*$'), and wrote 0 rows, 0 rejected, exit 0.
    Every line end (LF, CR LF, a lone CR) ends a line, in a whole capture and in a stream however it is cut."""
    lf = shared_file(*SS2).read_bytes().replace(b"\r\n", b"\n")
    cap = tmp_path / "cap.log"
    cap.write_bytes(lf.replace(b"\n", eol))
    st = record(str(cap), tmp_path / "w.csv", PROTO)
    rows = list(csv.DictReader((tmp_path / "w.csv").open()))
    assert (st.lines, st.spins, st.void, st.rejected) == (505, 7, 1, 0)
    assert [r["result"] for r in rows] == ["27", "16", "6", "3", "10", "0", ""]
    lines, no, _ = proto_mod.split_lines(cap.read_bytes())
    assert len(lines) == 505 and proto_mod.decode(lines, no, PROTO, str(cap)).counts["with_result"] == 6


def test_stream_line_splitting_does_not_depend_on_where_reads_cut():
    """A CR LF cut between two reads is one line end; a lone CR is one too (the rest waits for the next read)."""
    from rngcert.collect.record import take_lines

    data = b"*P 1\r\n*X;1;011;  ;0;150;0\r*X;2;011;  ;0;150;0\n\r\n*P OK\r"
    want = [b"*P 1", b"*X;1;011;  ;0;150;0", b"*X;2;011;  ;0;150;0", b"", b"*P OK"]
    for cut in range(len(data) + 1):
        got, rest, after_cr = take_lines(data[:cut])
        more, rest, _ = take_lines(rest + data[cut:], after_cr)
        assert got + more == want and rest == b"", cut


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs pseudo-terminals (POSIX)")
def test_a_line_the_controller_left_unfinished_is_rejected_at_the_idle_timeout(tmp_path):
    """The controller sent half a message and went silent until --idle-timeout stopped the recording: the fragment was
    dropped without a word (only a disconnect or the end of a file rejected it). It is rejected with its line and reason."""
    wheel = Wheel(tmp_path)
    data = ("\n".join(_game_lines(11, "27")) + "\n").encode() + b"*X;1;012;  ;0;1"
    st, out = RecordStats(), tmp_path / "w.csv"
    # sent as soon as the port is open (opening it empties its input), so the first reads find it all, then silence
    record(str(wheel.link), out, PROTO, stats=st, idle_timeout=0, on_event=lambda e: e.startswith("connected") and wheel.send(data))
    assert (st.lines, st.spins, st.rejected) == (9, 1, 1)
    rej = list(csv.DictReader(out.with_name("w.csv.rejects.csv").open()))
    assert [(r["line"], r["text"]) for r in rej] == [("9", "*X;1;012;  ;0;1")] and "--idle-timeout" in rej[0]["reason"]


def test_an_unreadable_provenance_file_is_kept_aside_not_overwritten(tmp_path):
    """LOG.json keeps every session's source and settings. One left unreadable (a crash while it was written) was replaced
    without a word by a file with the new session only: the earlier sessions' provenance was lost. It is kept aside, the
    recording says so, and the new file is whole."""
    import json

    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(_game_lines(11, "27") + _game_lines(12, "5")) + "\n")
    out = tmp_path / "w.csv"
    side = tmp_path / "w.csv.json"
    side.write_text('{"protocol": {"name": "slingshot2"}, "sessions": [{"source": "/dev/ttyUSB0", "started_utc": "2026-11-')
    events: list[str] = []
    record(str(cap), out, PROTO, on_event=events.append)
    kept = tmp_path / "w.csv.json.unreadable"
    assert kept.read_text().endswith('"2026-11-') and [s["source"] for s in json.loads(side.read_text())["sessions"]] == [str(cap)]
    assert any(str(kept) in e and "cannot be read" in e for e in events)


def test_a_capture_file_with_a_byte_order_mark(tmp_path, cli):
    """A capture saved by a Windows tool: with a UTF-8 BOM its first message was rejected as 'not a message'; as UTF-16 every
    line was rejected, exit 0, with the advice to check --baud and --parity (refused for a file). The UTF-8 BOM is read past;
    a UTF-16 file is refused as certify refuses it (exit 3), before a log is made."""
    text = "\n".join(_game_lines(11, "27") + _game_lines(12, "5")) + "\n"
    cap = tmp_path / "cap.log"
    cap.write_bytes(b"\xef\xbb\xbf" + text.encode())
    st = record(str(cap), tmp_path / "w.csv", PROTO)
    assert (st.lines, st.spins, st.rejected) == (16, 2, 0)
    lines, no, _ = proto_mod.split_lines(cap.read_bytes())
    assert proto_mod.decode(lines, no, PROTO, str(cap)).counts["rejected"] == 0
    cap.write_bytes(text.encode("utf-16"))
    out = tmp_path / "u16.csv"
    res = cli("record", cap, "--out", out)
    assert res.exit_code == 3 and "UTF-16" in res.output and str(cap) in res.output and not out.exists(), res.output
    cap.write_text("garbage\n" * 25)  # no message at all: a file has no line settings to check
    events: list[str] = []
    record(str(cap), tmp_path / "g.csv", PROTO, on_event=events.append)
    assert any("check --protocol" in e for e in events) and not any("--baud" in e for e in events)


def test_a_byte_order_mark_split_across_reads_is_read_past(tmp_path, monkeypatch):
    """A stream whose reads give one byte at a time (a serial port at 9600 baud can): the byte-order mark was stripped only
    when the first read began with all three of its bytes, so the first line was rejected as 'not a message'."""
    from rngcert.collect.record import Source

    def one_byte(self):
        data = self.h.read(1)
        self.ended = not data
        return data

    text = "\n".join(_game_lines(11, "27") + _game_lines(12, "5")) + "\n"
    cap = tmp_path / "cap.log"
    cap.write_bytes(b"\xef\xbb\xbf" + text.encode())
    monkeypatch.setattr(Source, "read", one_byte)
    st = record(str(cap), tmp_path / "w.csv", PROTO)
    assert (st.lines, st.spins, st.rejected) == (16, 2, 0) and st.bytes == len(cap.read_bytes())


def test_a_stream_without_line_ends_is_rejected_as_it_arrives_not_kept(tmp_path, monkeypatch):
    """Bytes that never end a line (wrong line settings, noise): every read was added to the unfinished line, kept whole in
    memory (and copied at each read) for as long as the recording ran. Beyond MAX_LINE bytes it is rejected as it arrives,
    with its reason; the games before and after it are read."""
    from rngcert.collect import record as rec

    monkeypatch.setattr(rec, "MAX_LINE", 100, raising=False)
    def chunks(self):
        data = self.h.read(64)
        self.ended = not data
        return data

    text = "\n".join(_game_lines(11, "27")) + "\n" + "\x00" * 1000 + "\n" + "\n".join(_game_lines(12, "5")) + "\n"
    cap = tmp_path / "cap.log"
    cap.write_bytes(text.encode())
    monkeypatch.setattr(rec.Source, "read", chunks)
    st = record(str(cap), tmp_path / "w.csv", PROTO)
    rej = list(csv.DictReader((tmp_path / "w.csv.rejects.csv").open()))
    assert st.spins == 2 and len(rej) == 8 and all("no line end within 100 bytes" in r["reason"] for r in rej[:-1])
    assert rej[-1]["reason"].startswith("not a message of protocol") and sum(len(r["text"]) for r in rej) == 1000
    assert [r["result"] for r in csv.DictReader((tmp_path / "w.csv").open())] == ["27", "5"]


def test_recording_the_same_capture_file_twice_into_one_log_is_refused(tmp_path, cli):
    """`rngcert record capture.log --out spins.csv` run twice (or again after the capture grew) resumed the log and wrote
    every game of the capture again as new spins (14 rows from 7 games: 12 results where the wheel gave 6), exit 0. The
    capture's SHA-256 is kept per session; a capture that starts with the bytes of one already recorded into the log is
    refused (exit 3) and the log is left as it was."""
    import json

    data = shared_file(*SS2).read_bytes()
    cap = tmp_path / "cap.log"
    cap.write_bytes(data[: data.index(b"*X;2;013")])  # games 011 and 012, then the capture grows
    out = tmp_path / "spins.csv"
    assert cli("record", cap, "--out", out, "-q").exit_code == 0
    before = out.read_bytes()
    session = json.loads((tmp_path / "spins.csv.json").read_text())["sessions"][0]
    assert session["capture"]["bytes"] == cap.stat().st_size and session["serial"] is None  # no line settings for a file
    for grown in (False, True):
        if grown:
            cap.write_bytes(data)
        res = cli("record", cap, "--out", out, "-q")
        assert res.exit_code == 3 and "already recorded" in res.output and str(out) in res.output, res.output
        assert out.read_bytes() == before
    other = tmp_path / "other.log"
    other.write_bytes(data[data.index(b"*X;2;013"):])  # another capture (the later games): recorded after the log's spins
    assert cli("record", other, "--out", out, "-q").exit_code == 0
    assert [r["spin_id"] for r in csv.DictReader(out.open())] == ["1", "2", "3", "4", "5", "6", "7"]


def test_each_session_ends_with_its_counts_and_a_capture_that_wrote_nothing_can_be_recorded_again(tmp_path):
    """LOG.json said where a session began, never what it wrote. Each session now ends with its counts (rows, void, lines,
    rejected); a capture file whose session wrote no row (read with the wrong protocol file, say) may be recorded again."""
    import json

    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(_game_lines(11, "27") + _game_lines(12, "5")) + "\n")
    lab = tmp_path / "lab.toml"  # a lab's protocol file that expects another message letter: nothing is a message
    text = (resources.files("rngcert.equipment") / "protocols" / "slingshot2.toml").read_text()
    lab.write_text(text.replace("'^\\*X;", "'^\\*Z;").replace('name = "slingshot2"', 'name = "lab"'))
    out = tmp_path / "w.csv"
    record(str(cap), out, load_protocol(str(lab)))
    record(str(cap), out, PROTO)
    sessions = json.loads((tmp_path / "w.csv.json").read_text())["sessions"]
    assert [(s["rows_written"], s["void"], s["lines"], s["rejected"]) for s in sessions] == [(0, 0, 16, 16), (2, 0, 16, 0)]
    with pytest.raises(InputError, match="already recorded"):
        record(str(cap), out, PROTO)
    out.write_bytes(b"")  # the log emptied (or a FIFO): none of the capture's games is in it
    assert record(str(cap), out, PROTO).spins == 2


def test_a_log_rotated_while_recording_goes_on_in_a_new_file_at_its_path(tmp_path):
    """logrotate renames the spin log while the recorder runs: every later row went into the renamed file (rot.csv.1) and
    the path stayed empty, so `watch LOG --follow` finished the rotated file and never saw them. The recorder follows its
    path: later rows go to a new file there, with its header, and it says so."""
    from rngcert.collect.record import Spin, SpinLogWriter

    log = tmp_path / "rot.csv"
    w = SpinLogWriter(log, fsync=False)
    spin = lambda i: Spin(i, 10 + i, "2026-01-01T00:00:00Z", str(i), False, "", "cw", 15.0, i)  # noqa: E731
    w.write(spin(1))
    log.rename(tmp_path / "rot.csv.1")
    w.write(spin(2))
    w.close()
    assert [r["spin_id"] for r in csv.DictReader((tmp_path / "rot.csv.1").open())] == ["1"]
    assert [r["spin_id"] for r in csv.DictReader(log.open())] == ["2"]
    assert any("renamed or deleted" in n and "spin 2" in n for n in w.notes)


def test_a_log_copy_truncated_while_recording_goes_on_with_its_header(tmp_path):
    """logrotate's copytruncate (copy the log, then empty it in place) while recording: a new log was written at the offset
    the file had had (a hole of NUL bytes, then the rows, no header: certify and watch read no spin log), a resumed one
    from byte 0 without its header. The log is appended to, and a header is written again into the emptied file, said."""
    import shutil

    out, events = tmp_path / "w.csv", []

    def rotate_once(s):
        if s.spin_id == 2:
            shutil.copy(out, tmp_path / "w.csv.1")
            os.truncate(out, 0)

    record(str(shared_file(*SS2)), out, PROTO, on_spin=rotate_once, on_event=events.append)
    text = out.read_bytes()
    assert text.startswith(b"spin_id,game,result,") and b"\x00" not in text
    assert [r["spin_id"] for r in csv.DictReader(out.open())] == ["3", "4", "5", "6", "7"]
    assert [r["spin_id"] for r in csv.DictReader((tmp_path / "w.csv.1").open())] == ["1", "2"]
    assert any("emptied while recording (a copy-truncate rotation)" in e and "spin 3 and later" in e for e in events)
    log = read_spin_log(out, load_wheel("european"))
    assert (log.accepted, log.void) == (4, 1)


def test_a_capture_without_timestamps_gives_no_times(tmp_path, cli):
    """A capture file without the capture program's timestamps (ss2: bare messages) says nothing of when its games ran:
    every row took the time the file was read (all 7 at one instant of the day it was recorded), and a certification of
    the log stated that as its data period. The log has no timestamp column then, and says why."""
    out = tmp_path / "w.csv"
    res = cli("record", shared_file(*SS2), "--out", out)
    assert res.exit_code == 0, res.output
    header = out.read_text().splitlines()[0].split(",")
    assert "timestamp" not in header and header[:2] == ["spin_id", "game"]
    assert "no timestamps" in res.output
    rows = list(csv.DictReader(out.open()))
    assert [r["result"] for r in rows] == ["27", "16", "6", "3", "10", "0", ""]
    res = cli("certify", out, "--seed", "1", "--json", "--no-plots", "--out", tmp_path / "rep")
    rep = __import__("json").loads(res.output)
    assert rep.get("period") is None and rep["inputs"][0]["rejected"] == 0  # no data period claimed, no row lost


def test_a_capture_with_timestamps_gives_its_own(tmp_path):
    """The self-test capture's prefixes carry the controller's times: the log keeps them (not the reading time)."""
    out = tmp_path / "w.csv"
    record(str(shared_file("data", "wheel-controller-serial", "selftest-capture.log")), out, PROTO)
    rows = list(csv.DictReader(out.open()))
    assert rows and all(r["timestamp"].startswith("2025-") for r in rows), rows[:3]  # (the capture spans Sep-Nov 2025)



def test_a_capture_file_that_ends_inside_a_game_says_what_becomes_of_it(tmp_path, cli):
    """At the end of a capture file the running game is not written (a capture that continues it may follow: recorded
    into the same log, it writes the game when it ends), but the message said 'a restart writes it when it ends', which a
    capture file never gets (recorded again, it is refused); and certify of the capture alone counts that game void.
    The message says both."""
    cap = shared_file("data", "wheel-controller-serial", "selftest-capture.log")
    res = cli("record", cap, "--out", tmp_path / "w.csv")
    assert res.exit_code == 0, res.output
    assert "a restart writes it" not in res.output
    assert "the capture file ends inside it" in res.output and "certify of this capture counts it void" in res.output


def test_a_recording_of_no_message_at_all_is_an_input_error(tmp_path, cli):
    """Every line rejected (another controller's capture, the wrong --protocol): 0 rows and exit 0 said the recording
    went well. Exit 3, naming the protocol and where the rejected lines are (kept, with their reasons)."""
    cap = tmp_path / "other.log"
    cap.write_text("".join(f"GAME {i} RESULT {i % 37}\n" for i in range(40)))
    out = tmp_path / "w.csv"
    res = cli("record", cap, "--out", out)
    assert res.exit_code == 3, res.output
    assert "none of its 40 lines is a message of protocol slingshot2" in res.output and "w.csv.rejects.csv" in res.output
    assert len((tmp_path / "w.csv.rejects.csv").read_text().splitlines()) == 41  # header + every line, with its reason


# ---------------------------------------------------------------------------- game numbers that jump
def test_live_decoder_carries_a_jump_across_every_cut_and_after_a_restart():
    """A game number that jumps after the table closed (158 closed, then 178: the self-test capture's) or while the
    recorder was stopped: the live decoder forgot the lines before the running game, so a jump across them gave the next
    spin id with nothing said. Fed line by line, it gives the whole capture's ids and says the missing games."""
    lines = _game_lines(1, "7") + _game_lines(2, "8") + [f"*X;{s};158;  ;0;150;1" for s in (1, 2)] + ["*X;6;158;  ;0;000;1"] * 2
    lines += _game_lines(178, "9") + _game_lines(179, "10") + _game_lines(1, "11") + ["*X;1;002;  ;0;150;1"]
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    whole = proto_mod.decode(a, no, PROTO, "w", final=False).games
    dec = LiveDecoder(PROTO)
    spins = [s for ln in lines for s in dec.feed([ln])[0]]
    assert [s.spin_id for s in spins] == whole.spin_id[whole.complete].tolist() == [1, 2, 158, 178, 179, 180]
    assert [(s.game, s.after_game, s.missing, s.back) for s in spins if s.missing or s.back] == [(158, 2, 155, False), (178, 158, 19, False),
                                                                                               (1, 179, 0, True)]
    again = LiveDecoder(PROTO, last=(4, 20, "7", False))  # restarted: games 021 to 024 ran while the recorder was stopped
    spins = again.feed(_game_lines(25, "3") + ["*X;1;026;  ;0;150;1"])[0]
    assert [(s.spin_id, s.game, s.after_game, s.missing) for s in spins] == [(9, 25, 20, 4)]


def test_recording_a_capture_whose_game_numbers_jump_says_the_missing_games_everywhere(tmp_path, cli):
    """The self-test capture: game 002 then game 158 (and 158 then 178, 002 then 208), and the number going back (002 then
    001, 179 then 001). record wrote 31 rows with spin ids 1..31 and said nothing: a certification of the log
    could not tell that games were missing. Each jump is said when its row is written and at the end (first missing, last
    missing, how many), kept in LOG.json's session, and left as a gap in the spin ids, which certify of the log states.
    Exit 0: like rejected lines and void games, a property of the data recorded whole, not a failure of the recording."""
    import json

    out = tmp_path / "w.csv"
    res = cli("record", shared_file("data", "wheel-controller-serial", "selftest-capture.log"), "--out", out, "-q")
    assert res.exit_code == 0, res.output
    err = res.stderr
    assert "GAMES MISSING: games 003 to 157 (155) missing between game 002 (spin 21) and game 158 (spin 177)" in err, err
    assert ("379 game(s) missing by the controller's game numbers, in 3 jump(s): 003-157 (155), 159-177 (19), 003-207 (205)" in err
            and "2 step(s) back of the game number" in err and "179 then 001 (spin 200)" in err)
    ses = json.loads((tmp_path / "w.csv.json").read_text())["sessions"][-1]
    assert ses["games_missing"] == 379
    assert [(d["after_game"], d["game"], d["first_missing"], d["last_missing"], d["missing"]) for d in ses["game_number_steps"]] == [
        (2, 1, None, None, 0), (2, 158, 3, 157, 155), (158, 178, 159, 177, 19), (179, 1, None, None, 0), (2, 208, 3, 207, 205)]
    # (208 then 038: game 038 is running when the capture ends, not written; a capture that continues it says the step)
    ids = [int(r["spin_id"]) for r in csv.DictReader(out.open())]
    assert len(ids) == 30 and ids[-1] == 409  # (game 038, running when the capture ends, is not written)
    rep = cli("certify", out, "--seed", "1", "--resamples", "99", "--no-plots", "--out", tmp_path / "rep")
    assert "379 spin_id(s) missing between 1 and 409 (gaps in the sequence)" in rep.output, rep.output


def test_a_void_game_waiting_for_the_message_after_its_end_is_written_at_the_stop(tmp_path):
    """A game without its result that the last message ended waits for the next one (that message may be a stray); a
    recording that stops there writes it void, says so, and leaves the running game as before."""
    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(_game_lines(1, "7") + [f"*X;{s};002;  ;0;150;1" for s in (1, 2, 3)] + ["*X;1;003;  ;0;150;1"]) + "\n")
    events: list[str] = []
    out = tmp_path / "w.csv"
    st = record(str(cap), out, PROTO, on_event=events.append)
    rows = [(r["spin_id"], r["game"], r["result"], r["void"]) for r in csv.DictReader(out.open())]
    assert rows == [("1", "001", "7", "false"), ("2", "002", "", "true")] and st.spins == 2
    assert any("game 002 ended void before the recording stopped (no result: the next game began (line 12)" in e for e in events), events
    assert any("game 003 was running when the recording stopped" in e for e in events)
