"""Hostile lab equipment files (wheels, pay tables, protocols): each is refused with an error naming the
file, the key and the reason (exit 4), never read silently into something else."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from rngcert.equipment.paytables import house_edges, load_paytable
from rngcert.equipment.protocol import load_protocol
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import EquipmentError

_PACKAGE = Path(__file__).resolve().parents[1] / "rngcert" / "equipment"
_EUROPEAN = (_PACKAGE / "data" / "european.toml").read_text(encoding="utf-8")
_ORDER = ["0", "32", "15", "19", "4", "21", "2", "25", "17", "34", "6", "27", "13", "36", "11", "30", "8", "23", "10", "5", "24",
          "16", "33", "1", "20", "14", "31", "9", "22", "18", "29", "7", "28", "12", "35", "3", "26"]
_RED = ["1", "3", "5", "7", "9", "12", "14", "16", "18", "19", "21", "23", "25", "27", "30", "32", "34", "36"]


def _wheel_text(order, extra="", red=_RED):
    return (f'id = "lab"\nkind = "roulette"\nwheel_order = {json.dumps(order)}\nred = {json.dumps(red)}\n'
            f'green = ["0"]\n{extra}')


def _write(tmp_path, name, text, data=None):
    p = tmp_path / name
    if data is None:
        p.write_text(text, encoding="utf-8")
    else:
        p.write_bytes(data)
    return p


def _refused(loader, path, *words):
    with pytest.raises(EquipmentError) as e:
        loader(path)
    msg = str(e.value)
    assert str(path) in msg
    for w in words:
        assert w in msg, msg
    return msg


# ---------------------------------------------------------------------------- wheels
@pytest.mark.parametrize("key", ["gren", "aliasses", "wheel_ordr"])
def test_wheel_unknown_key_refused(tmp_path, key):
    """A misspelt key (``gren = ["0"]`` would leave the zero black) is refused, not ignored."""
    p = _write(tmp_path, "w.toml", _wheel_text(_ORDER, f'{key} = ["0"]\n'))
    _refused(load_wheel, p, repr(key), "unknown key")


def test_wheel_pocket_37_in_place_of_26_is_named_by_the_seed_checks(tmp_path, cli):
    """Pocket "37" in place of "26" (37 pockets, 18 red, 18 black, alternating) passed every seed check: a
    lab wheel may have other numbers (the pocket limit is 32,767), but then the report says it is not rule 3.5's."""
    p = _write(tmp_path, "w.toml", _wheel_text(_ORDER[:-1] + ["37"]))
    r = cli("equipment", str(p))
    assert r.exit_code == 0, r.output
    checks = json.loads(r.stdout)["equipment_checks"]
    assert any("37 not among the numbers 1-36" in c and "26 of them missing" in c for c in checks), checks
    assert cli("equipment", str(_write(tmp_path, "e.toml", _wheel_text(_ORDER)))).stdout.count("not among") == 0


@pytest.mark.parametrize("label", ["07", "007"])
def test_wheel_zero_padded_label_refused(tmp_path, label):
    """A pocket ``07`` in place of ``7``: a log's ``7`` would be rejected and its ``07`` read; beside ``7`` the two read the same."""
    p = _write(tmp_path, "w.toml", _wheel_text([label if x == "7" else x for x in _ORDER], red=[label if x == "7" else x for x in _RED]))
    _refused(load_wheel, p, repr(label), "zero-padded")
    _refused(load_wheel, _write(tmp_path, "v.toml", _wheel_text(_ORDER + [label])), repr(label), "'7'", "read the same")


def test_wheel_alias_spelling_another_pocket_refused(tmp_path):
    """``"07" = "0"``: a log's 07 is pocket 7; an alias may not turn it into the zero."""
    p = _write(tmp_path, "w.toml", _EUROPEAN.replace('id = "european"', 'id = "lab"') + '"07" = "0"\n')
    _refused(load_wheel, p, "'07'", "'7'")


@pytest.mark.parametrize("spelling", ["zero", "Zero", " ZERO "])
def test_command_line_alias_cannot_move_a_wheel_alias_to_another_pocket(spelling):
    """``--alias zero=5`` on the European wheel, whose own ``zero`` is pocket 0: spelled as the packaged alias it replaced
    it silently (every zero counted as 5: a FAIL of a fair log), spelled ``Zero`` it was refused; refused either way now."""
    wheel = load_wheel("european")
    with pytest.raises(EquipmentError, match="cannot name two pockets"):
        wheel.with_aliases({spelling: "5"})
    assert wheel.with_aliases({spelling: "0"}).aliases  # the same reading again is no conflict


@pytest.mark.parametrize("body", ['kind = "money-wheel"\n[segment_counts]\nA = 3\na = 4\nB = 5\n',
                                  'kind = "money-wheel"\n[segment_counts]\nA = 3\n" A" = 4\nB = 5\n',
                                  'kind = "money-wheel"\n[segment_counts]\n"7" = 3\n"07" = 4\nB = 5\n',
                                  'kind = "money-wheel"\nsections = ["A", "a", "B", "A", "b"]\n',
                                  'kind = "money-wheel"\nsections = ["A", "Peg", "B", "A", "B"]\n',
                                  'kind = "roulette"\nwheel_order = ["0", "1", "2", "Zero", "zero"]\nred = ["1"]\ngreen = ["0", "Zero", "zero"]\n'])
def test_labels_that_read_the_same_refused(tmp_path, body):
    """``A`` and ``a`` (or ``A`` and `` A``, ``7`` and ``07``) were two symbols a log cannot tell apart: every ``A`` was counted
    as ``a`` and the other symbol never came up."""
    p = _write(tmp_path, "w.toml", 'id = "lab"\n' + body)
    _refused(load_wheel, p, "segment_counts" if "segment" in body else "sections" if "sections" in body else "wheel_order")


def test_wheel_with_bom_reads_as_without(tmp_path):
    p = _write(tmp_path, "w.toml", "", data=b"\xef\xbb\xbf" + _wheel_text(_ORDER).encode())
    q = _write(tmp_path, "v.toml", _wheel_text(_ORDER))
    assert load_wheel(p).labels == load_wheel(q).labels


def test_lab_wheel_file_hash_in_its_description(tmp_path):
    p = _write(tmp_path, "w.toml", _wheel_text(_ORDER))
    d = load_wheel(p).describe()
    assert d["file"] == str(p)
    assert d["sha256"] == hashlib.sha256(p.read_bytes()).hexdigest()
    assert "sha256" not in load_wheel("european").describe()  # the packaged wheel is named by its id and version


def test_wheel_32767_pockets_loads(tmp_path):
    order = ["0"] + [str(i) for i in range(1, 37)]
    text = _wheel_text(order)
    money = 'id = "m"\nkind = "money-wheel"\nsections = ' + json.dumps(["A", "B"] * 16383 + ["C"]) + "\n"
    assert load_wheel(_write(tmp_path, "m.toml", money)).k == 32767
    assert load_wheel(_write(tmp_path, "w.toml", text)).k == 37


# ---------------------------------------------------------------------------- pay tables
_PT = 'id = "lab-pt"\ngame = "roulette"\nwheel = "european"\nzero = ["0"]\nzero_rule = "half-back"\n'
_REDS = json.dumps(_RED)


def test_paytable_unknown_key_refused(tmp_path):
    """``zero_rules`` (a typo) would leave the zero rule at 'lose': a different house edge, silently."""
    p = _write(tmp_path, "p.toml", _PT.replace("zero_rule", "zero_rules") + f'[[bets]]\nname = "red"\nodds = "1:1"\nnumbers = {_REDS}\n')
    _refused(load_paytable, p, "'zero_rules'", "unknown key")


def test_paytable_unknown_bet_key_refused(tmp_path):
    p = _write(tmp_path, "p.toml", _PT + f'[[bets]]\nname = "red"\nodds = "1:1"\nevenmoney = true\nnumbers = {_REDS}\n')
    _refused(load_paytable, p, "'evenmoney'", "bets[0]")


def test_paytable_even_money_must_be_boolean(tmp_path):
    """``even_money = "no"`` was read as true (the half-back rule applied to a bet the lab said was not even money)."""
    p = _write(tmp_path, "p.toml", _PT + f'[[bets]]\nname = "red"\nodds = "1:1"\neven_money = "no"\nnumbers = {_REDS}\n')
    _refused(load_paytable, p, "even_money", "true or false")


def test_paytable_duplicate_bet_names_refused(tmp_path):
    """Two bets named ``red``: the house edge of one was printed beside the odds of the other."""
    bets = '[[bets]]\nname = "red"\nodds = "1:1"\nnumbers = ["1"]\n[[bets]]\nname = "red"\nodds = "35:1"\nnumbers = ["2"]\n'
    p = _write(tmp_path, "p.toml", _PT + bets)
    _refused(load_paytable, p, "'red'", "bets[1]")


def test_paytable_pocket_not_on_wheel_names_the_file(tmp_path):
    p = _write(tmp_path, "p.toml", _PT + '[[bets]]\nname = "s"\nodds = "35:1"\nnumbers = ["77"]\n')
    with pytest.raises(EquipmentError) as e:
        house_edges(load_paytable(p))
    assert str(p) in str(e.value) and "'77'" in str(e.value)


def test_house_edge_cli_pocket_not_on_wheel_exit_4(tmp_path, cli):
    p = _write(tmp_path, "p.toml", _PT + '[[bets]]\nname = "s"\nodds = "35:1"\nnumbers = ["07"]\n')
    r = cli("house-edge", "roulette", "--paytable", str(p))
    assert r.exit_code == 4, r.output
    assert "Traceback" not in r.output


# ---------------------------------------------------------------------------- protocols
def test_protocol_unknown_key_refused(tmp_path):
    text = (_PACKAGE / "protocols" / "slingshot2.toml").read_text(encoding="utf-8")
    p = _write(tmp_path, "proto.toml", text.replace('name = "slingshot2"', 'name = "lab-proto"\nencodng = "latin-1"'))
    _refused(load_protocol, p, "'encodng'", "unknown key")


@pytest.mark.parametrize("scalar", ["serial", "rotor_speed"])
def test_protocol_table_that_is_not_a_table_refused(tmp_path, scalar):
    """``serial = 5`` and ``[fields] rotor_speed = 5`` were tracebacks (``dict(5)``, ``5.get``)."""
    text = (_PACKAGE / "protocols" / "slingshot2.toml").read_text(encoding="utf-8").replace('name = "slingshot2"', 'name = "lab-proto"')
    if scalar == "serial":
        text = re.sub(r"(?m)^serial = \{.*\}$", "serial = 5", text)
    else:
        text = text.split("[fields.rotor_speed]")[0] + "[fields]\nrotor_speed = 5\n"
    p = _write(tmp_path, "proto.toml", text)
    _refused(load_protocol, p, "must be a table", scalar)


def test_paytable_bet_that_is_not_a_table_refused(tmp_path):
    """``bets = [1]`` was a traceback (``'name' in 1``)."""
    p = _write(tmp_path, "p.toml", _PT + "bets = [1]\n")
    _refused(load_paytable, p, "bets[0]", "must be a table")


# ---------------------------------------------------------------------------- procedures
def test_edited_packaged_procedure_refused_and_lab_procedure_hashed(tmp_path):
    """A lab file ``id = "baccarat-004"`` with clumps of 5 was reported as the packaged baccarat-004 (no hash either)."""
    from rngcert.equipment.procedure import load_procedure

    text = (_PACKAGE / "procedures" / "baccarat-004.toml").read_text(encoding="utf-8")
    _refused(load_procedure, _write(tmp_path, "b.toml", text.replace("clump = 4", "clump = 5")), "'baccarat-004'", "steps")
    same = load_procedure(_write(tmp_path, "same.toml", text))  # the packaged file copied: accepted
    assert same.id == "baccarat-004" and same.steps == load_procedure("baccarat-004").steps
    lab = _write(tmp_path, "lab.toml", text.replace('id = "baccarat-004"', 'id = "lab-bac"').replace("clump = 4", "clump = 5"))
    proc = load_procedure(lab)
    assert proc.sha256 == hashlib.sha256(lab.read_bytes()).hexdigest() == proc.to_dict()["sha256"]
    assert load_procedure("baccarat-004").sha256 == "" and "sha256" not in load_procedure("baccarat-004").to_dict()


def _slingshot_as(name="lab-proto"):
    return (_PACKAGE / "protocols" / "slingshot2.toml").read_text(encoding="utf-8").replace('name = "slingshot2"', f'name = "{name}"')


def test_protocol_field_inside_another_refused(tmp_path):
    r"""``(?P<game>\d(?P<result>\d{2}))``: the winning number was read out of the game number (6 spins accepted)."""
    text = _slingshot_as().replace(r"(?P<game>\d{3});(?P<result>[ 0-9]{2})", r"(?P<game>\d(?P<result>\d{2}));[ 0-9]{2}")
    p = _write(tmp_path, "proto.toml", text)
    _refused(load_protocol, p, "message 1", "'result'", "inside group 'game'")
    ok = _slingshot_as().replace(r"(?P<result>[ 0-9]{2})", r"(?P<result>[ 0-9(]{2}|(?:\d)\))")  # '(' in a class, an unnamed group
    assert load_protocol(_write(tmp_path, "ok.toml", ok)).name == "lab-proto"


def test_protocol_whose_ignore_message_takes_every_line_says_so(tmp_path, cli):
    """An 'ignore' message '^.*$' before the state message: the error said 'no readable spin in 0 row(s) (no data rows)'."""
    text = _slingshot_as().replace('[[message]]\nkind = "state"', "[[message]]\nkind = \"ignore\"\npattern = '^.*$'\n\n[[message]]\nkind = \"state\"", 1)
    p = _write(tmp_path, "proto.toml", text)
    cap = _write(tmp_path, "cap.log", "*P 1\n*X;6;011;34;0;000;0\n*X;1;012;  ;0;000;1\n*X;5;012;17;0;000;1\n")
    r = cli("certify", str(cap), "--protocol", str(p), "--seed", "1", "--out", str(tmp_path / "rep"))
    assert r.exit_code == 3, r.output
    assert "0 game-state messages" in r.output and "protocol lab-proto" in r.output, r.output


@pytest.mark.parametrize("edit, words", [
    (('push_on = ["tie"]', 'push_on = ["tie", "banker"]'), ("push_on", "'banker'")),  # a banker bet that never wins: edge 44.6%
    (('outcomes = ["banker", "player", "tie"]', 'outcomes = ["banker", "player", "tie", "banker"]'), ("twice",)),
])
def test_baccarat_paytable_contradictions_refused(tmp_path, edit, words):
    text = (_PACKAGE / "paytables" / "baccarat.toml").read_text(encoding="utf-8").replace('id = "baccarat"', 'id = "lab-bac"')
    _refused(load_paytable, _write(tmp_path, "b.toml", text.replace(*edit, 1)), *words)


def test_baccarat_outcome_without_probability_names_the_file(tmp_path, cli):
    text = (_PACKAGE / "paytables" / "baccarat.toml").read_text(encoding="utf-8").replace('id = "baccarat"', 'id = "lab-bac"')
    p = _write(tmp_path, "b.toml", text.replace('"player", "tie"]', '"player", "tie", "dragon"]'))
    r = cli("house-edge", "baccarat", "--paytable", str(p))
    assert r.exit_code == 4 and str(p) in r.output and "'dragon'" in r.output, r.output


def test_house_edge_of_a_procedure_file_that_does_not_validate_names_its_reason(tmp_path, cli):
    """``house-edge lab.toml`` with ``decks = 0`` said 'unknown game' (exit 3); the procedure's own error is exit 4."""
    text = (_PACKAGE / "procedures" / "baccarat-004.toml").read_text(encoding="utf-8").replace('id = "baccarat-004"', 'id = "lab-bac"')
    p = _write(tmp_path, "lab.toml", text.replace("decks = 8", "decks = 0"))
    r = cli("house-edge", str(p))
    assert r.exit_code == 4 and "'decks'" in r.output and "unknown game" not in r.output, r.output


@pytest.mark.parametrize("edit, words", [
    (('[deal]\npickup = "banker-first"\nundealt = "top"', "deal = 3"), ("[deal] must be a table",)),  # was a TypeError traceback
    (('name = "decks"\nstatus', 'name = "dekcs"\nstatus'), ("parameters entry 1", "'dekcs'")),  # did not name the file
])
def test_procedure_errors_name_the_file(tmp_path, edit, words):
    from rngcert.equipment.procedure import load_procedure

    text = (_PACKAGE / "procedures" / "baccarat-004.toml").read_text(encoding="utf-8").replace('id = "baccarat-004"', 'id = "lab-bac"')
    assert edit[0] in text
    _refused(load_procedure, _write(tmp_path, "lab.toml", text.replace(*edit, 1)), *words)


def test_certify_report_names_the_lab_wheel_file_and_its_hash(tmp_path, cli):
    wheel = _write(tmp_path, "lab-eu.toml", _EUROPEAN.replace('id = "european"', 'id = "lab-eu"'))
    log = _write(tmp_path, "spins.csv", "result\n" + "\n".join(str((7 * i) % 37) for i in range(300)) + "\n")
    r = cli("certify", str(log), "-e", str(wheel), "--seed", "1", "--resamples", "99", "--no-plots", "--json", "--out", str(tmp_path / "rep"))
    eq = json.loads(r.stdout)["equipment"]
    assert eq["file"] == str(wheel) and eq["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()


@pytest.mark.parametrize("pid", ["../../outside", "a/b", ""])
def test_procedure_id_that_is_not_a_folder_name_refused(tmp_path, pid):
    """The id names the report's folder (reports/<id>-<time>): ``../../outside`` wrote the report outside --out."""
    from rngcert.equipment.procedure import load_procedure

    text = (_PACKAGE / "procedures" / "baccarat-004.toml").read_text(encoding="utf-8").replace('id = "baccarat-004"', f'id = "{pid}"')
    _refused(load_procedure, _write(tmp_path, "lab.toml", text), "id", "letters, digits")


def test_lab_protocol_and_paytable_files_carry_their_hash(tmp_path, cli):
    proto = _write(tmp_path, "proto.toml", _slingshot_as())
    assert load_protocol(proto).describe()["sha256"] == hashlib.sha256(proto.read_bytes()).hexdigest()
    assert "sha256" not in load_protocol("slingshot2").describe()
    pt = _write(tmp_path, "p.toml", _PT + '[[bets]]\nname = "s"\nodds = "35:1"\nnumbers = ["17"]\n')
    assert load_paytable(pt).describe()["sha256"] == hashlib.sha256(pt.read_bytes()).hexdigest()
    assert "sha256" not in load_paytable("roulette-single-zero").describe()
    cap = _write(tmp_path, "cap.log", "*P 1\n*X;1;012;  ;0;000;1\n*X;3;012;  ;0;170;1\n*X;5;012;17;0;000;1\n*X;1;013;  ;0;000;0\n")
    r = cli("certify", str(cap), "--protocol", str(proto), "--seed", "1", "--resamples", "99", "--no-plots", "--json", "--out", str(tmp_path / "r"))
    notes = json.dumps(json.loads(r.stdout)["notes"])
    assert f"sha256 {hashlib.sha256(proto.read_bytes()).hexdigest()}" in notes, notes


def test_edited_packaged_paytable_or_protocol_refused(tmp_path):
    """A lab file ``id = "roulette-single-zero"`` paying 40:1 was printed as the packaged table (house edge -10.8%)."""
    pt = (_PACKAGE / "paytables" / "roulette-single-zero.toml").read_text(encoding="utf-8")
    _refused(load_paytable, _write(tmp_path, "p.toml", pt.replace('odds = "35:1"', 'odds = "40:1"', 1)), "'roulette-single-zero'", "bets")
    assert load_paytable(_write(tmp_path, "same.toml", pt)).bets == load_paytable("roulette-single-zero").bets
    proto = (_PACKAGE / "protocols" / "slingshot2.toml").read_text(encoding="utf-8")
    _refused(load_protocol, _write(tmp_path, "s.toml", proto.replace("scale = 0.1", "scale = 0.2")), "'slingshot2'", "rotor_scale")
    assert load_protocol(_write(tmp_path, "same2.toml", proto)).rotor_scale == 0.1
