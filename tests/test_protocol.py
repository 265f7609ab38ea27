"""Wheel-controller protocols (issue 25): the protocol as data, captures read into one spin per game,
void games with their reason, rejected lines, and certify end to end on the real captures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import shared_file

from rngcert.cli import EXIT, EXIT_EQUIPMENT
from rngcert.collect import protocol as proto_mod
from rngcert.collect.spinlog import detect_format, read_spin_log
from rngcert.equipment.protocol import load_protocol, packaged_protocols, protocol_from_dict
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import EquipmentError

CAPTURES = ("data", "wheel-controller-serial")
EU = load_wheel("european")


def _capture(name):
    return shared_file(*CAPTURES, name)


def _read(tmp_path, text: str, name="cap.log", **kw):
    p = tmp_path / name
    p.write_bytes(text.encode("ascii"))
    return read_spin_log(p, EU, **kw)


def _game(game: int, result: str, *, rotor=(150, 160), direction=(0, 1), warn: dict | None = None, repeats=3, prefix=None) -> list[str]:
    """The messages of one game as the controller sends them: 1, 2 (rotor reverses), 3, 4, the
    number alone, then the result state repeated."""
    warn = warn or {}
    nn = f"{result:>2}"
    out = []
    for s, d, r in ((1, direction[0], rotor[0]), (2, direction[0], rotor[0]), (2, direction[1], rotor[1]), (3, direction[1], rotor[1]),
                    (4, direction[1], rotor[1] - 5)):
        out.append(f"*X;{s};{game:03d};  ;{warn.get(s, 0)};{r:03d};{d}")
    out.append(nn)
    out += [f"*X;5;{game:03d};{nn};0;{rotor[1] - 6:03d};{direction[1]}"] * repeats
    return out


# ---------------------------------------------------------------------------- the protocol as data
def test_packaged_protocol_loads_and_states_its_assumptions():
    assert "slingshot2" in packaged_protocols()
    p = load_protocol("slingshot2")
    assert p.result_state == 5 and p.launch_state == 3 and p.closed_states == (6,)
    assert p.rotor_unit == "rpm" and p.rotor_assumed and p.rotor_scale == pytest.approx(0.1)
    assert p.direction_map == {"0": "cw", "1": "ccw"} and p.direction_assumed
    assert any("assumed" in n for n in p.notes)
    assert p.serial["baudrate"] == 9600


def _doc():
    import tomllib
    from importlib import resources

    return tomllib.loads((resources.files("rngcert.equipment") / "protocols" / "slingshot2.toml").read_text())


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("states"), "missing key 'states'"),
    (lambda d: d["message"].pop(0), "exactly one message of kind 'state'"),
    (lambda d: d["message"][0].update(pattern=r"^\*X;(?P<state>\d);(?P<game>\d{3})$"), "no group result"),
    (lambda d: d["message"][1].update(pattern=r"^\*P (?P<power>(?!x)\d)$"), "look-around"),
    (lambda d: d["message"][1].update(pattern=r"^\*P (?P<power>[0-9)$"), "not a regular expression"),
    (lambda d: d["message"][1].update(kind="noise"), "kind 'noise'"),
    (lambda d: d["game"].update(result_state=9), "result_state = 9 is not a state"),
    (lambda d: d["game"].update(closed_states=[5]), "closed_states may not contain"),
    (lambda d: d["fields"]["direction"].update(map={"0": "left"}), "'cw' or 'ccw'"),
    (lambda d: d["fields"]["rotor_speed"].update(scale=-1), "positive number"),
    (lambda d: d["serial"].update(parity="X"), "serial.parity"),
    (lambda d: d["prefix"].update(timezone="CET"), "prefix.timezone"),
])
def test_protocol_validation_names_the_fault(change, words):
    d = _doc()
    change(d)
    with pytest.raises(EquipmentError, match=words.replace("(", r"\(").replace("*", r"\*")):
        protocol_from_dict(d, "lab.toml")


def test_a_bad_protocol_file_is_exit_4_and_a_lab_protocol_file_works(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[states]\n1 = "a"\n')
    cap = tmp_path / "cap.log"
    cap.write_text("\n".join(_game(1, "7")) + "\n")
    res = cli("certify", cap, "--protocol", bad, "--out", tmp_path, "--no-plots")
    assert res.exit_code == EXIT_EQUIPMENT, res.output
    assert "bad.toml" in res.output and "message" in res.output
    res = cli("certify", cap, "--protocol", "no-such-wheel", "--out", tmp_path)
    assert res.exit_code == EXIT_EQUIPMENT and "slingshot2" in res.output
    # a lab's own controller: the same messages with '#' instead of ';' — no code, a TOML file
    text = (_doc_text().replace(r"^\*X;(?P<state>\d);(?P<game>\d{3});(?P<result>[ 0-9]{2});(?P<warning>\d{1,3});(?P<rotor_speed>\d{3});(?P<direction>\d)$",
                                r"^\*X#(?P<state>\d)#(?P<game>\d{3})#(?P<result>[ 0-9]{2})#(?P<warning>\d{1,3})#(?P<rotor_speed>\d{3})#(?P<direction>\d)$")
            .replace('name = "slingshot2"', 'name = "lab-wheel"'))
    lab = tmp_path / "lab-wheel.toml"
    lab.write_text(text)
    cap2 = tmp_path / "lab.log"
    cap2.write_text("\n".join(ln.replace(";", "#") for g in range(1, 4) for ln in _game(g, str(g * 5))) + "\n")
    log = read_spin_log(cap2, EU, fmt=f"protocol:{lab}")
    assert log.accepted == 3 and log.sources[0].format == "protocol:lab-wheel"


def _doc_text():
    from importlib import resources

    return (resources.files("rngcert.equipment") / "protocols" / "slingshot2.toml").read_text()


# ---------------------------------------------------------------------------- the real captures
def test_ss2_capture_six_games_and_a_power_off():
    log = read_spin_log(_capture("ss2-protocol-6-games.log"), EU)
    src = log.sources[0]
    assert src.format == "protocol:slingshot2"
    assert (src.accepted, src.void, src.rejected) == (6, 1, 0)
    t = next(iter(log.tables.values()))
    labels = [EU.labels[i] for i in t.outcomes]
    assert labels == ["27", "16", "6", "3", "10", "0"]
    assert t.direction.tolist() == [1, 0, 1, 0, 1, 0]  # alternating from game to game, read at the launch
    assert t.rotor_speed.tolist() == pytest.approx([14.1, 16.1, 17.0, 16.7, 14.1, 16.2])
    assert any("power off (*P 0, line 489)" in n and "game 017" in n for n in log.notes)


def test_selftest_capture_counts_and_unique_ids_though_game_numbers_repeat(tmp_path):
    path = _capture("selftest-capture.log")
    lines, no, _ = proto_mod.split_lines(path.read_bytes())
    dec = proto_mod.decode(lines, no, load_protocol("slingshot2"), str(path))
    g = dec.games
    # counted independently with awk (README of the tests: same rules, another implementation): 31 games, 3 results
    assert g.n == 31 and int((~g.void).sum()) == 3 and int(g.void.sum()) == 28
    assert g.result[~g.void].tolist() == ["31", "32", "27"]
    assert set(g.game[~g.void].tolist()) == {1}  # game 001 every time, on three different days
    assert np.unique(g.spin_id).size == g.n
    assert [r.line for r in dec.rejected] == [253]  # "Receive >>> 00;0": a truncated message
    assert dec.counts["host_lines"] == 128
    reasons = " | ".join(g.reason[g.void])
    assert "warning flags 4" in reasons and "table closed" in reasons and "the capture ends" in reasons
    log = read_spin_log(path, EU)
    assert (log.sources[0].accepted, log.sources[0].void, log.sources[0].rejected) == (3, 28, 1)
    assert log.period is not None


def test_settings_session_has_one_game_that_never_ran():
    log = read_spin_log(_capture("settings-session.log"), EU)
    src = log.sources[0]
    assert (src.accepted, src.void, src.rejected) == (0, 1, 0)
    assert any("no result: table closed (state 6, line 309) in state 2" in n for n in log.notes)


@pytest.mark.parametrize("name, accepted, void", [("ss2-protocol-6-games.log", 6, 1), ("selftest-capture.log", 3, 28), ("settings-session.log", 0, 1)])
def test_certify_real_captures_end_to_end_inconclusive_for_size(tmp_path, name, accepted, void, cli):
    res = cli("certify", _capture(name), "--seed", "1", "--resamples", "999", "--no-plots", "--out", tmp_path, "--json")
    assert res.exit_code == EXIT["INCONCLUSIVE"], res.output
    rep = json.loads(res.output[res.output.index("{"):])
    assert rep["verdict"] == "INCONCLUSIVE"
    inp = rep["inputs"][0]
    assert (inp["format"], inp["accepted"], inp["void"]) == ("protocol:slingshot2", accepted, void)
    txt = cli("certify", _capture(name), "--protocol", "slingshot2", "--seed", "1", "--resamples", "999", "--no-plots", "--out", tmp_path).output
    assert f"{accepted} accepted, {void} void" in txt and "too few" in txt


# ---------------------------------------------------------------------------- quirks, on small synthetic captures
def test_result_repeats_are_one_game_and_two_winning_numbers_void_it(tmp_path):
    """A repeat of the result state with another number (c07's kind: a conflict is reported, neither result chosen):
    the game is void, both numbers named with their lines; a repeat without a number is rejected, the number stands."""
    lines = _game(11, "27", repeats=11) + _game(12, "5") + _game(13, "8")
    lines[len(_game(11, "27", repeats=11)) + 7] = "*X;5;012; 6;0;154;1"  # game 012's second repeat gives 6
    lines[-1] = "*X;5;013;  ;0;154;1"  # game 013's last repeat gives no number
    log = _read(tmp_path, "\r\n".join(lines) + "\r\n")
    assert (log.accepted, log.void) == (2, 1)
    t = next(iter(log.tables.values()))
    assert [EU.labels[i] for i in t.outcomes] == ["27", "8"]  # game 012 counts neither 5 nor 6
    assert any("two winning numbers in one game (line 24: '5', then line 25: '6'); neither is counted" in n for n in log.notes), log.notes
    assert [r.line for r in log.rejected] == [len(lines)] and "repeats without a winning number (the game's is '8'" in log.rejected[0].reason
    lines_a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    g = proto_mod.decode(lines_a, no, load_protocol("slingshot2"), "cap.log").games
    assert g.void.tolist() == [False, True, False] and g.line.tolist()[1] == 25 and g.result.tolist() == ["27", "5", "8"]


def test_game_numbers_that_wrap_and_repeat_stay_separate_spins(tmp_path):
    lines = _game(998, "1") + _game(999, "2") + _game(0, "3") + _game(1, "4") + ["*X;6;002; 4;0;000;0"] + _game(1, "5")
    p = tmp_path / "wrap.log"
    p.write_text("\n".join(lines) + "\n")
    lines_a, no, _ = proto_mod.split_lines(p.read_bytes())
    g = proto_mod.decode(lines_a, no, load_protocol("slingshot2"), "wrap.log").games
    assert g.game.tolist() == [998, 999, 0, 1, 1] and g.spin_id.tolist() == [1, 2, 3, 4, 5]
    assert g.result.tolist() == ["1", "2", "3", "4", "5"] and not g.void.any()


def test_warning_flag_and_power_off_make_void_spins_with_reasons(tmp_path):
    lines = _game(1, "7") + _game(2, "8", warn={4: 4}) + _game(3, "9")[:3] + ["*P 0"] + _game(3, "9")[3:] + _game(4, "10")
    log = _read(tmp_path, "\n".join(lines) + "\n")
    assert (log.accepted, log.void) == (2, 2)
    notes = " ".join(log.notes)
    assert "warning flags 4 (warning flag 4) in state 4" in notes and "spin 2 (game 002)" in notes
    assert "power off (*P 0, line" in notes and "spin 3 (game 003)" in notes


def test_truncated_and_garbled_lines_are_rejected_with_line_and_reason(tmp_path):
    lines = _game(1, "7") + ["*X;3;002;  ;0;1", "\x00\x01junk"] + _game(2, "8")
    text = "\n".join(lines) + "\n*X;5;00"  # the capture itself ends mid-message
    p = tmp_path / "t.log"
    p.write_bytes(text.encode("latin-1"))
    log = read_spin_log(p, EU, fmt="protocol")
    assert log.accepted == 2
    bad = {r.line: r for r in log.rejected}
    assert set(bad) == {10, 11, len(lines) + 1}
    assert all("not a message of protocol slingshot2" in r.reason for r in bad.values())


def test_prefixes_host_lines_and_bare_messages_mix(tmp_path):
    body = _game(5, "0")
    lines = ["[2025-11-13 12:37:10.995] ERROR >>> Serial port error: could not open port", "[2025-11-13 12:37:19.953] Send <<< *T D"]
    for i, m in enumerate(body):
        lines.append(f"[2025-11-13 12:38:{i:02d}.000] Receive >>> {m}" if i % 2 else m)
        lines.append(f"[2025-11-13 12:38:{i:02d}.100] Auto-send <<< *P 0")  # the host's command, not the wheel's power-off
    log = _read(tmp_path, "\n".join(lines) + "\n")
    assert (log.accepted, log.void, len(log.rejected)) == (1, 0, 0)
    assert "host lines skipped" in log.notes[0] and f"{2 + len(body)} host lines" in log.notes[0]


def test_game_seen_only_from_its_result_and_capture_ending_mid_game(tmp_path):
    lines = _game(1, "7")[-3:] + _game(2, "8")[:4]
    p = tmp_path / "c.log"
    p.write_text("\n".join(lines) + "\n")
    pr = load_protocol("slingshot2")
    a, no, _ = proto_mod.split_lines(p.read_bytes())
    g = proto_mod.decode(a, no, pr, "c").games
    assert g.result.tolist() == ["7", ""] and g.void.tolist() == [False, True]
    assert np.isnan(g.rotor_speed[0]) and g.direction[0] == "ccw"  # no launch seen: speed unknown, direction from the result state
    assert "the capture ends" in g.reason[1]
    live = proto_mod.decode(a, no, pr, "c", final=False).games  # live: the running game is not finished, not void
    assert live.complete.tolist() == [True, False] and live.void.tolist() == [False, False]


def test_format_detection():
    from pathlib import Path

    assert detect_format(Path("x.log"), b"*P 1\r\n*X;6;011;34;0;000;0\r\n") == "protocol:slingshot2"
    assert detect_format(Path("x.log"), b"[2025-11-13 12:37:10.995] ERROR >>> x\n[2025-11-13 12:37:19.954] Receive >>> *X;6;001;  ;0;000;0\n") == "protocol:slingshot2"
    assert detect_format(Path("x.csv"), b"spin_id,result\n1,5\n") == "csv"
    assert detect_format(Path("x.txt"), b"1 2 3\n") == "permanence"


def test_rotor_speed_and_direction_reach_the_spinlog_from_csv_too(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("spin_id,result,direction,rotor_speed\n1,5,cw,16.2\n2,7,ccw,\n3,9,cw,abc\n")
    log = read_spin_log(p, EU)
    t = next(iter(log.tables.values()))
    assert t.direction.tolist() == [0, 1]
    assert t.rotor_speed[0] == pytest.approx(16.2) and np.isnan(t.rotor_speed[1])
    assert log.rejected[0].line == 4 and "rotor_speed is not a non-negative number" in log.rejected[0].reason


# ---------------------------------------------------------------------------- simulated controller (item 5)
def test_simulated_protocol_reads_back_exactly(tmp_path):
    from rngcert.simulate.protocol import protocol_lines, write_protocol
    from rngcert.simulate.rotor import simulate_rotor_spins

    rng = np.random.default_rng(2025)
    sim, speed, _ = simulate_rotor_spins(EU, 400, rng)
    void = rng.random(400) < 0.05
    pr = load_protocol("slingshot2")
    for ts in (False, True):
        p = tmp_path / f"sim{ts}.log"
        write_protocol(p, protocol_lines(EU, sim.positions, sim.direction, speed, void, pr, first_game=990), timestamps=ts)
        log = read_spin_log(p, EU)
        t = next(iter(log.tables.values()))
        assert (log.accepted, log.void, len(log.rejected)) == (int((~void).sum()), int(void.sum()), 0)
        assert t.outcomes.tolist() == sim.positions[~void].tolist()
        assert t.direction.tolist() == sim.direction[~void].tolist()
        assert t.rotor_speed == pytest.approx(np.round(speed[~void], 1))
        assert (log.period is not None) == ts


def test_simulate_wheel_protocol_cli_with_a_direction_bias(tmp_path, cli):
    out = tmp_path / "dir.log"
    res = cli("simulate", "wheel", "--format", "protocol", "--spins", "3000", "--seed", "5", "--direction-bias", "0:9:1.5", "--out", out)
    assert res.exit_code == 0, res.output
    t = next(iter(read_spin_log(out, EU).tables.values()))
    arc = t.outcomes < 9  # positions 0-8
    cw, ccw = arc[t.direction == 0].mean(), arc[t.direction == 1].mean()
    # planted: the arc weighs 1.5 in clockwise games and 0.5 in counter-clockwise ones (9/37 of the wheel)
    assert cw == pytest.approx(9 * 1.5 / (28 + 9 * 1.5), abs=0.035) and ccw == pytest.approx(9 * 0.5 / (28 + 9 * 0.5), abs=0.035)
    assert abs(arc.mean() - 9 / 37) < 0.03  # pooled over both directions it is nearly fair
    res = cli("simulate", "wheel", "--format", "protocol", "--pocket-bias", "17:1.2", "--out", out)
    assert res.exit_code == 2 and "does not take --pocket-bias" in res.output


def test_capture_timestamps_take_the_protocol_files_zone(tmp_path):
    d = _doc()
    d["prefix"]["timezone"] = "+08:00"
    pr = protocol_from_dict(d, "lab.toml")
    text = "\n".join(f"[2025-11-13 12:38:{i:02d}.000] Receive >>> {m}" for i, m in enumerate(_game(5, "0"))) + "\n"
    lines, no, _ = proto_mod.split_lines(text.encode())
    g = proto_mod.decode(lines, no, pr, "x").games
    assert g.timestamp.tolist() == ["2025-11-13T12:38:06.000+08:00"]  # the first result message (the 7th line)
    assert any("read as +08:00" in n for n in pr.notes)


def test_unknown_state_bad_direction_and_a_result_without_number(tmp_path):
    g2 = _game(2, "8")
    g2[6:] = ["*X;5;002;  ;0;150;1"] * 3  # the result state arrives without a number
    lines = _game(1, "7") + ["*X;7;001; 7;0;150;1", "*X;3;001; 7;0;150;2"] + g2 + _game(3, "9")
    log = _read(tmp_path, "\n".join(lines) + "\n")
    assert (log.accepted, log.void) == (2, 1)
    why = {r.line: (r.column, r.reason) for r in log.rejected}
    assert why[10][0] == "state" and "state 7 is not a state" in why[10][1]
    assert why[11][0] == "direction" and "direction '2'" in why[11][1]
    assert any("the result state has no winning number" in n and "spin 2 (game 002)" in n for n in log.notes)


def test_a_result_state_without_a_number_then_with_one_names_it(tmp_path):
    """The result state gives no number at first, then a number in a repeat: void (neither is chosen), and the reason
    names the number and its line (it said 'has no winning number' and the number's lines were nowhere)."""
    g2 = _game(2, "8")
    g2[6:] = ["*X;5;002;  ;0;150;1", "*X;5;002;17;0;150;1", "*X;5;002;17;0;150;1"]
    lines = _game(1, "7") + g2 + _game(3, "9")
    log = _read(tmp_path, "\n".join(lines) + "\n")
    assert (log.accepted, log.void) == (2, 1) and [r.line for r in log.rejected] == [15]  # (the number alone, 8, differs)
    assert any("spin 2 (game 002): the result state has no winning number (line 16), then line 17 gives '17'; not counted" in n
               for n in log.notes), log.notes


def test_ingest_a_capture(tmp_path, cli):
    db = tmp_path / "s.duckdb"
    res = cli("ingest", _capture("ss2-protocol-6-games.log"), "--db", db)
    assert res.exit_code == 0, res.output
    assert "7 rows → 7 new spins stored" in res.output and "(1 void among the rows)" in res.output
    res = cli("ingest", _capture("ss2-protocol-6-games.log"), "--db", db, "--protocol", "slingshot2")
    assert res.exit_code == 0 and "already ingested" in res.output and "7 spins in 1 table" in res.output


def test_a_state_message_with_a_garbled_letter_is_rejected_not_ignored(tmp_path):
    """A framing error or bit flip in the 'X' of a game-state message ('*Y;5;...', '*\\ufffd;5;...') matched the catch-all of
    acknowledgements and settings ('^\\*[^X].*$'): ignored, not rejected, not said. No settings message of the captures has a
    ';': a line with one that is not a game-state message is rejected with its line; the settings stay ignored."""
    lines = _game(1, "7") + ["*Y;5;001; 7;0;150;1", "*\x87;5;001; 7;0;150;1", "*T s 16.0 18.0", "*o BUSY", "*u OK", "*P OK"] + _game(2, "8")
    p = tmp_path / "g.log"
    p.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    log = read_spin_log(p, EU, fmt="protocol")
    assert log.accepted == 2
    n = len(_game(1, "7"))
    assert [r.line for r in log.rejected] == [n + 1, n + 2] and all("not a message of protocol" in r.reason for r in log.rejected)


def test_a_result_state_message_with_another_game_number_is_rejected_not_a_new_game(tmp_path):
    """One repeat of game 704's result state with its game number garbled ('*X;5;705;18;...', a bit flip 4 -> 5) made three
    spins with result 18 out of one: game 704, a game 705 that began at its result, and game 704 again. No game of the
    captures begins in the result state right after another game's message (each begins in state 1 or 2): such a message is
    rejected with its line and reason, and game 704 goes on. A real next game that follows the stray message is kept."""
    g704 = _game(704, "18")
    stray = g704[-1].replace(";704;", ";705;")
    lines = g704[:-1] + [stray, g704[-1]] + _game(705, "3") + [stray.replace(";705;18;", ";706; 3;")] + _game(706, "22")
    p = tmp_path / "s.log"
    p.write_text("\n".join(lines) + "\n")
    a, no, _ = proto_mod.split_lines(p.read_bytes())
    dec = proto_mod.decode(a, no, load_protocol("slingshot2"), "s")
    assert dec.games.game.tolist() == [704, 705, 706] and dec.games.result.tolist() == ["18", "3", "22"] and not dec.games.void.any()
    assert [(r.line, r.column) for r in dec.rejected] == [(len(g704), "game"), (len(g704) + 1 + len(_game(705, "3")) + 1, "game")]
    assert "cannot begin at its result" in dec.rejected[0].reason and "while game 704 was running" in dec.rejected[0].reason


def test_a_capture_with_bare_cr_line_ends_is_detected_whatever_its_first_line(tmp_path):
    """A capture whose lines end in a bare CR was detected only when its very first byte began a message: one that opens with
    a blank line went to the CSV reader and was refused ('lines end in a bare CR'). It is read as the capture it is."""
    from pathlib import Path

    assert detect_format(Path("x.log"), b"\r*P 1\r*X;6;011;34;0;000;0\r") == "protocol:slingshot2"
    log = _read(tmp_path, "\r" + "\r".join(_game(1, "7") + _game(2, "8")) + "\r")
    assert (log.accepted, len(log.rejected)) == (2, 0)


# ---------------------------------------------------------------------------- game numbers that jump or go back
def test_game_numbers_that_jump_leave_spin_id_gaps_and_steps_back_are_said():
    """Real: the self-test capture's game numbers jump (game 002, then game 158 on 2025-09-24: the capture program did not
    run in between) and go back (002 then 001, 179 then 001, 208 then 038). Every game had one spin id after the last, so the games that
    may be missing were not said anywhere. A forward jump now leaves the missing games' numbers as a gap in the spin ids
    (certify states spin_id gaps); a step back (a reset of the count, or a wrap with games missing) is said too."""
    path = _capture("selftest-capture.log")
    lines, no, _ = proto_mod.split_lines(path.read_bytes())
    proto = load_protocol("slingshot2")
    dec = proto_mod.decode(lines, no, proto, str(path))
    g = dec.games
    j = np.flatnonzero(g.missing)
    assert [(int(g.after[i]), int(g.game[i]), int(g.missing[i])) for i in j] == [(2, 158, 155), (158, 178, 19), (2, 208, 205)]
    assert (g.spin_id[j] - g.spin_id[j - 1]).tolist() == [156, 20, 206]  # the missing games' ids are left out
    assert g.spin_id[-1] == 31 + 155 + 19 + 205 and np.all(np.diff(g.spin_id) > 0)
    b = np.flatnonzero(g.back)
    assert [(int(g.after[i]), int(g.game[i])) for i in b] == [(2, 1), (179, 1), (208, 38)]
    notes = " | ".join(proto_mod.describe(dec, proto, "cap"))
    assert "games 003 to 157 (155) missing between game 002 (spin 21) and game 158 (spin 177)" in notes, notes
    assert "379 game(s) missing in 3 jump(s)" in notes and "3 step(s) back" in notes and "game 179 then game 001" in notes


def test_game_numbers_that_follow_on_wrap_or_repeat_a_void_game_are_not_gaps(tmp_path):
    """999 then 000 (or 001: the protocol does not say where the count restarts) is no gap; a game that ended without a
    result may give its number to the next (the self-test capture's 001 after each aborted game); a game number repeated
    after a game with a result is a step back; 005 then 009 misses 3 games. (A number below the one before is a step back,
    one above it a jump by the numbers between: which way a wrap went cannot be told.)"""
    proto = load_protocol("slingshot2")
    aborted = [f"*X;{s};004;  ;0;150;1" for s in (1, 2)] + ["*X;6;004;  ;0;000;0"]
    lines = _game(998, "1") + _game(999, "2") + _game(0, "3") + _game(0, "4") + _game(1, "5") + aborted + _game(4, "6") + _game(4, "7")
    lines += _game(5, "8") + _game(9, "9")
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    g = proto_mod.decode(a, no, proto, "w").games
    assert g.game.tolist() == [998, 999, 0, 0, 1, 4, 4, 4, 5, 9]
    assert g.missing.tolist() == [0, 0, 0, 0, 0, 2, 0, 0, 0, 3] and g.back.tolist() == [False] * 3 + [True] + [False] * 3 + [True, False, False]
    assert g.spin_id.tolist() == [1, 2, 3, 4, 5, 8, 9, 10, 11, 15]


def test_certify_of_a_capture_with_a_jump_states_the_missing_games(tmp_path, cli):
    p = tmp_path / "jump.log"
    p.write_text("\n".join(_game(1, "7") + _game(2, "8") + _game(158, "9") + _game(159, "10")) + "\n")
    res = cli("certify", p, "--seed", "1", "--resamples", "99", "--no-plots", "--out", tmp_path / "rep")
    assert "155 spin_id(s) missing between 1 and 159" in res.output, res.output
    assert "games 003 to 157 (155) missing between game 002 (spin 2) and game 158 (spin 158)" in res.output


# ---------------------------------------------------------------------------- the winning number alone on a line
def _lone(g: int, lone: str, result: str | None, between=()) -> list[str]:
    """Game ``g`` with the winning number alone (``lone``) after its state 4, ``between`` after it, then its result state
    with ``result`` (None: the game reaches no result state)."""
    out = [f"*X;{s};{g:03d};  ;0;150;1" for s in (1, 2, 3, 4)] + [lone] + list(between)
    return out + ([f"*X;5;{g:03d};{result:>2};0;150;1"] * 3 if result is not None else [])


@pytest.mark.parametrize("between, result, reason", [
    ((), "17", "winning number '27' alone (line 14) and the result state of game 002 (line 15: '17') disagree"),
    (("*X;4;002;  ;0;150;1",), "17", "winning number '27' alone (line 14) and the result state of game 002 (line 16: '17') disagree"),
    ((), None, "winning number '27' alone (line 14), but game 002 reaches no result state (the next game began, line 15)"),
])
def test_a_lone_winning_number_that_disagrees_with_the_state_is_a_reject_saying_so(tmp_path, between, result, reason):
    """The number alone on a line was checked only against the state message right after it: one more state-4 message in
    between (or no result state at all, the game void) and '27' against the controller's '17' passed without a word. The
    line is rejected wherever the game's result state is, the reason naming both lines and saying they disagree; the game
    counts the result state's number (or is void), whole capture and live alike."""
    closed = ["*X;6;003; 5;0;000;0", "9", "*X;6;003; 5;0;000;0"]  # and a number alone while the table is closed
    lines = _game(1, "7") + _lone(2, "27", result, between) + _game(3, "5") + closed + _game(4, "8")
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    proto = load_protocol("slingshot2")
    dec = proto_mod.decode(a, no, proto, "c")
    assert dec.games.result.tolist() == ["7", result or "", "5", "8"]
    n = len(lines) - len(_game(4, "8")) - 1
    assert [(r.line, r.column) for r in dec.rejected] == [(14, "result"), (n, "result")] and dec.rejected[0].reason.startswith(reason)
    assert dec.rejected[1].reason == f"winning number '9' alone (line {n}), but no game is running (the table is closed); this line is not counted"
    from rngcert.collect.record import LiveDecoder

    live, rej = LiveDecoder(proto), []
    for ln in lines:
        rej += live.feed([ln])[1]
    assert [(r.line, r.reason) for r in rej] == [(r.line, r.reason) for r in dec.rejected]
    agree = _game(1, "7") + _lone(2, "17", "17", between) + _game(3, "5")
    a, no, _ = proto_mod.split_lines(("\n".join(agree) + "\n").encode())
    assert proto_mod.decode(a, no, proto, "c").rejected == []


# ---------------------------------------------------------------------------- a stray state message mid-game
@pytest.mark.parametrize("stray, what", [
    ("*X;3;999;  ;0;150;1", "game 999 in state 3"),   # another game number (a garbled or stray line)
    ("*X;1;002;  ;0;150;1", "game 002 in state 1"),   # the game's own number, its state gone back
    ("*X;6;002;  ;0;000;0", "game 002 in state 6"),   # the table closed, for one message
    ("*X;5;002;33;0;150;1", "game 002 in state 5"),   # a state garbled into the result state: 33 and 17 were both counted
])
def test_a_stray_state_message_before_the_result_is_rejected_not_two_phantom_games(stray, what):
    """One state message between two of the running game, before its result, with another game number (or a state gone
    back, or closed): the game was cut in two (void 'the next game began', then the rest with the result), with the stray
    line's own void game between: two phantom void spins for one game (and, with another number, a jump and a step back of
    the game number). The line is rejected, naming the lines around it, and the game is one spin; live, the game's void row
    waits for the message after (no row with a result waits: watch counts those)."""
    g2 = _game(2, "17")
    lines = _game(1, "7") + g2[:4] + [stray] + g2[4:] + _game(3, "5")
    at = len(_game(1, "7")) + 5  # the stray's line
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    proto = load_protocol("slingshot2")
    dec = proto_mod.decode(a, no, proto, "c")
    g = dec.games
    assert g.game.tolist() == [1, 2, 3] and g.result.tolist() == ["7", "17", "5"] and not g.void.any()
    assert not g.missing.any() and not g.back.any()
    assert [(r.line, r.column) for r in dec.rejected] == [(at, "state")]
    assert f"{what} between two messages of game 002 (lines {at - 1} and {at + 1}, state 3 then 4)" in dec.rejected[0].reason
    _live_reads_as_whole(proto, lines, dec)


@pytest.mark.parametrize("stray, what, repeat", [
    ("*X;2;999;  ;0;150;1", "game 999 in state 2", "17"),  # another game number while the result state repeats
    ("*X;6;002;17;0;000;0", "game 002 in state 6", "17"),  # the table closed for one message: the result was counted twice
    ("*X;2;999;  ;0;150;1", "game 999 in state 2", "33"),  # and a repeat after it with another number
])
def test_a_stray_state_message_in_the_result_state_is_rejected_and_the_row_is_written_at_once(stray, what, repeat):
    """One message of another game (or the table closed) while the result state repeats: the game's repeats after it were
    rejected and the stray made a phantom void game (with a false jump of 996 games and a step back of the game number),
    or, closed for one message, the repeats began a second game with the same result: counted twice. The stray is rejected
    and the repeats stay in the game. Live, the row with the result is written when the stray arrives (watch counts it at
    once, no waiting); a repeat after the stray with another number is said as a CONFLICT (the whole capture voids it)."""
    from rngcert.collect.record import LiveDecoder

    g2 = _game(2, "17", repeats=4)
    lines = _game(1, "7") + g2[:-2] + [stray] + [g2[-1].replace(";17;", f";{repeat};")] * 2 + _game(3, "5")
    at = len(_game(1, "7")) + len(g2) - 1
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    proto = load_protocol("slingshot2")
    dec = proto_mod.decode(a, no, proto, "c")
    g = dec.games
    assert g.game.tolist() == [1, 2, 3] and g.spin_id.tolist() == [1, 2, 3] and not g.missing.any() and not g.back.any()
    assert g.void.tolist() == [False, repeat != "17", False]
    assert [(r.line, r.column) for r in dec.rejected] == [(at, "state")] and what in dec.rejected[0].reason
    live, got, rej = LiveDecoder(proto), [], []
    for k, ln in enumerate(lines, 1):
        s, r = live.feed([ln])
        assert not s or k != at + 1  # (nothing waits for the message after the stray: the row came with the stray)
        got += s
        rej += r
    got += live.stop()
    assert [(s.spin_id, s.game, s.result, s.void) for s in got] == [(1, 1, "7", False), (2, 2, "17", False), (3, 3, "5", False)]
    assert [(r.line, r.reason) for r in rej] == [(r.line, r.reason) for r in dec.rejected]
    conflict = [n for n in live.notes if n.startswith("CONFLICT")]
    assert len(conflict) == (repeat != "17") and all("game 002 (spin 2) was written with result 17" in n for n in conflict), live.notes


@pytest.mark.parametrize("stray, at", [
    ("*X;3;999;  ;0;150;1", 4),  # another game number, twice, before the result
    ("*X;1;002;  ;0;150;1", 4),  # the game's state gone back, twice
    ("*X;6;002;  ;0;000;0", 4),  # the table closed for two messages
    ("*X;5;002;33;0;150;1", 4),  # a state garbled into the result state, twice: 33 was counted as a game beside 17
    ("*X;2;999;  ;0;150;1", 7),  # another game number, twice, while the result state repeats
])
def test_one_stray_state_message_repeated_is_rejected_not_phantom_games(stray, at):
    """The same stray message twice in a row (repeated 0.5 s later) inside a running game: the second was judged against
    the first, so neither was taken for a stray: the game was cut in two void spins beside the stray's own (with a jump of
    996 games and a step back), or 33 and 17 were both counted. Both lines are rejected now, naming the lines around the
    pair, and the game is one spin, live as whole. Two different messages in a row stay as they were (a game that closed
    and the next that began with its number would look the same)."""
    g2 = _game(2, "17", repeats=4)
    lines = _game(1, "7") + g2[:at] + [stray, stray] + g2[at:] + _game(3, "5")
    first = len(_game(1, "7")) + at + 1  # the first stray's line
    a, no, _ = proto_mod.split_lines(("\n".join(lines) + "\n").encode())
    proto = load_protocol("slingshot2")
    dec = proto_mod.decode(a, no, proto, "c")
    g = dec.games
    assert g.game.tolist() == [1, 2, 3] and g.result.tolist() == ["7", "17", "5"] and not g.void.any()
    assert g.spin_id.tolist() == [1, 2, 3] and not g.missing.any() and not g.back.any()
    assert [(r.line, r.column) for r in dec.rejected] == [(first, "state"), (first + 1, "state")]
    assert all(f"(lines {first - 1} and {first + 2}," in r.reason and "one of two stray" in r.reason for r in dec.rejected)
    _live_reads_as_whole(proto, lines, dec)


def _live_reads_as_whole(proto, lines, dec):
    """The live decoder fed ``lines`` one at a time gives games 1-3 (7, 17, 5) and the rejected lines of ``dec``, the
    decode of the whole capture."""
    from rngcert.collect.record import LiveDecoder

    live, got, rej = LiveDecoder(proto), [], []
    for ln in lines:
        s, r = live.feed([ln])
        got += s
        rej += r
    got += live.stop()
    assert [(s.spin_id, s.game, s.result, s.void) for s in got] == [(1, 1, "7", False), (2, 2, "17", False), (3, 3, "5", False)]
    assert [(r.line, r.reason) for r in rej] == [(r.line, r.reason) for r in dec.rejected]
