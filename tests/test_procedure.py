"""Shuffle procedures as TOML (rngcert.equipment.procedure) and their execution
(rngcert.simulate.procedure): packaged seeds, validation errors, the step table."""

import inspect

import numpy as np
import pytest
from numpy.random import PCG64, Generator

from rngcert.battery.shuffle import shuffle_results
from rngcert.equipment.procedure import STEPS, load_procedure, packaged_procedures
from rngcert.errors import EquipmentError
from rngcert.simulate import procedure as SP
from rngcert.simulate import shufflers
from rngcert.stats.multiple import holm


def test_packaged_procedures_load():
    pk = packaged_procedures()
    assert {"baccarat-004", "blackjack-004"} <= set(pk)
    b = load_procedure("baccarat-004")
    assert b.game == "baccarat" and b.decks == 8 and b.cut_card_from_back == 7 and b.cut_position == 409
    assert [s.op for s in b.steps] == ["wash", "grab_riffle", "cut"]
    j = load_procedure(pk["blackjack-004"])
    assert j.game == "blackjack" and j.cut_card_from_back == 208 and j.deal["rule"] == "S17"
    assert j.to_dict()["steps"][0]["op"] == "wash"


def test_simulate_is_reproducible_and_permutes():
    p = load_procedure("baccarat-004")
    t1 = SP.simulate_tables(p, 20, 1, burn_in=3)
    t2 = SP.simulate_tables(p, 20, 1, burn_in=3)
    assert np.array_equal(t1.after, t2.after) and np.array_equal(t1.before, t2.before)
    assert not np.array_equal(SP.simulate_tables(p, 20, 1, burn_in=3, key=("other",)).after, t1.after)
    assert np.array_equal(np.sort(t1.after, axis=1), np.tile(np.arange(416), (20, 1)))
    assert np.array_equal(t1.first_before[0], np.arange(416))
    # the wash turns about half the clumps; the cards a player never saw are the cut-off tail
    assert 0.4 < t1.after_rotated.mean() < 0.6
    # (the coup under way when the cutting card appears is completed: 0..7 cards stay behind)
    assert np.all(t1.before_unseen.sum(axis=1) <= 7) and t1.before_unseen.sum() > 0


def test_steps_table_matches_the_shufflers():
    # adding a step is one entry in STEPS plus a shuffler of the same name taking those keywords
    for op, (kind, spec) in STEPS.items():
        fn = SP.step_function(op)
        assert fn is getattr(shufflers, op) and kind in ("manual", "machine")
        kw = {k for k, p in inspect.signature(fn).parameters.items() if p.kind is p.KEYWORD_ONLY}
        assert set(spec) == kw, op


def test_parameters_are_labelled_and_rules_enforced(tmp_path):
    b = load_procedure("baccarat-004")
    par = {p["name"]: p for p in b.parameters()}
    assert par["decks"]["status"] == "rule" and "1.3.1" in par["decks"]["source"]
    assert par["steps[1].intensity"]["status"] == "assumed" and par["steps[1].clump"]["value"] == 4
    m = b.with_params({"steps[1].intensity": 0.3}, status="measured", source="fit", intervals={"steps[1].intensity": [0.2, 0.4]})
    mp = {p["name"]: p for p in m.parameters()}
    assert mp["steps[1].intensity"] == {**mp["steps[1].intensity"], "status": "measured", "value": 0.3, "interval": [0.2, 0.4]}
    j = load_procedure("blackjack-004")
    with pytest.raises(EquipmentError, match="4.4 ii"):
        j.with_params({"deal.rule": "H17"})
    six = j.with_decks(6)
    assert six.n_cards == 312 and six.cut_position == 104 and round(six.penetration, 3) == 0.333
    # a number of decks that puts the rule's cutting card outside the shoe: the rule and the decks that work, named
    for d in (1, 4):
        with pytest.raises(EquipmentError, match=r"cutting card is 208 cards from the back \(004 §3 rule 3.3 i.*5 to 8 decks"):
            j.with_decks(d)
    assert j.with_decks(5).n_cards - j.with_decks(5).cut_card_from_back == 52
    assert load_procedure(_write(tmp_path, BASE + '[[steps]]\nop = "fisher_yates"\n')).kind == "machine"


@pytest.mark.parametrize("pid", ["baccarat-004", "blackjack-004"])
def test_seed_procedures_fail_and_say_which_tests(pid):
    # the weak seed procedures (as assumed) are rejected (Holm at 0.01) by the order-memory tests
    p = load_procedure(pid)
    t = SP.simulate_tables(p, 300, 2, burn_in=2)
    before, after = t.before, t.after
    res = shuffle_results(before, after, decks=p.decks, entropy=2, game=p.game, usable=p.cut_position, guess_shoes=100)
    app = [r for r in res if r.applicable]
    reject, _ = holm([r.pvalue for r in app], 0.01)
    failed = {r.name for r, rej in zip(app, reject) if rej}
    assert {"adjacent_pairs", "guessing", "position_chisquare", "rising_sequences"} <= failed


def _write(tmp_path, text, name="proc.toml"):
    f = tmp_path / name
    f.write_text(text)
    return f


BASE = 'id = "x"\ndecks = 1\ngame = "none"\n'


def test_unknown_step_names_file_and_step(tmp_path):
    f = _write(tmp_path, BASE + '[[steps]]\nop = "riffle"\n[[steps]]\nop = "faro"\n')
    with pytest.raises(EquipmentError) as e:
        load_procedure(f)
    msg = str(e.value)
    assert str(f) in msg and "step 2" in msg and "'faro'" in msg and "riffle" in msg


def test_negative_parameter_names_step_and_parameter(tmp_path):
    f = _write(tmp_path, BASE + '[[steps]]\nop = "wash"\nintensity = -0.5\n')
    with pytest.raises(EquipmentError) as e:
        load_procedure(f)
    msg = str(e.value)
    assert str(f) in msg and "step 1" in msg and "'intensity'" in msg and "-0.5" in msg and "negative" in msg


@pytest.mark.parametrize("body, needle", [
    ('[[steps]]\nop = "riffle"\nswitches = 0.4\n', "unknown parameter 'switches'"),
    ('[[steps]]\nop = "riffle"\ntimes = 1.5\n', "integer"),
    ('[[steps]]\nop = "shelf"\nshelves = "ten"\n', "number"),
    ('[[steps]]\nop = "grab_riffle"\ngrab = 50\n', "divide"),
    ('[[steps]]\nop = "cut"\nlo = 30\nhi = 10\n', "lo <= hi"),
    ('[[steps]]\nop = "overhand"\np = 2\n', "[1e-09, 1.0]"),
    ('[[steps]]\nop = "wash"\nclump = 0.5\n', "'clump'"),
])
def test_bad_parameters(tmp_path, body, needle):
    f = _write(tmp_path, BASE + body)
    with pytest.raises(EquipmentError, match="step 1") as e:
        load_procedure(f)
    assert needle in str(e.value)


@pytest.mark.parametrize("text, needle", [
    ('id = "x"\ndecks = 9\n[[steps]]\nop = "riffle"\n', "'decks'"),
    ('id = "x"\ndecks = 1\n', "'steps'"),
    ('id = "x"\ndecks = 1\ncolour = 1\n[[steps]]\nop = "riffle"\n', "unknown top-level"),
    ('id = "x"\ndecks = 1\ngame = "poker"\n[[steps]]\nop = "riffle"\n', "'game'"),
    ('id = "x"\ndecks = 1\ngame = "baccarat"\n[deal]\npickup = "sideways"\n[[steps]]\nop = "riffle"\n', "pickup"),
    ('id = "x"\ndecks = 1\ncut_card_from_back = -3\n[[steps]]\nop = "riffle"\n', "cut_card_from_back"),
    ('id = "x"\ndecks = [\n', "not valid TOML"),
])
def test_bad_procedure_files(tmp_path, text, needle):
    f = _write(tmp_path, text)
    with pytest.raises(EquipmentError) as e:
        load_procedure(f)
    assert str(f) in str(e.value) and needle in str(e.value)


def test_missing_procedure():
    with pytest.raises(EquipmentError, match="neither a file nor a packaged procedure"):
        load_procedure("no-such-procedure")


def test_every_step_op_runs_from_toml(tmp_path):
    text = BASE + "".join(f'[[steps]]\nop = "{op}"\n' for op in sorted(STEPS))
    p = load_procedure(_write(tmp_path, text))
    out = SP.shuffle(p, np.tile(np.arange(52), (4, 1)), Generator(PCG64(3)))
    assert np.array_equal(np.sort(out, axis=1), np.tile(np.arange(52), (4, 1)))
