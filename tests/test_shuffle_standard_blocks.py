"""A standard that restates a shuffle section's verdict (uniformity: a statistical rejection FAILs a manual shuffle that
the battery's own edge rule calls SUSPECT because no tracker beats the house) restates it in the report's
``steady_state`` and ``first_shoe`` blocks too, the battery's own verdict kept beside it: report.json never says
SUSPECT there under a FAIL verdict and exit code 12. And a FAIL that stands because no tracker could bet (one
table: too few shoes) is not cleared by the default standard's "a manual shuffle's rejection is a finding"
(issue 23: a tracker that measured nothing downgrades nothing, as a game without a tracker).
"""

from __future__ import annotations

from rngcert.equipment.procedure import load_procedure
from rngcert.pipeline.certify_shuffle.procedure import certify_procedure
from rngcert.pipeline.parallel import Plan
from rngcert.pipeline.standards import apply_standard


def test_the_blocks_of_the_sections_state_the_verdict_under_the_standard():
    # 20 tables: the tests reject, the trackers bet and beat nothing, so the battery's own rule (edge) says SUSPECT
    cert = certify_procedure(load_procedure("baccarat-004"), tables=20, burn_in=2, seed=1, n_resamples=99, figures=False, plan=Plan(workers=1))
    r = cert.report
    assert r["steady_state"]["verdict"] == "SUSPECT" and r["first_shoe"]["verdict"] == "SUSPECT"
    apply_standard(r, "uniformity", kind="shoe", alpha=0.01)
    by_kind = {t["kind"]: t["battery"] for t in r["tables"]}
    for key in ("steady_state", "first_shoe"):
        assert by_kind[key]["verdict"] == "FAIL" and by_kind[key]["battery_verdict"] == "SUSPECT", key
        assert r[key]["verdict"] == by_kind[key]["verdict"], key
        assert r[key]["battery_verdict"] == by_kind[key]["battery_verdict"] == "SUSPECT", key
    assert r["verdict"] == "FAIL"


def test_a_fail_no_tracker_could_bet_on_stays_a_fail_under_the_default_standard():
    # one table: the tests reject, no tracker bets on one shoe, so nothing measured the player's edge
    cert = certify_procedure(load_procedure("baccarat-004"), tables=1, burn_in=2, seed=1, n_resamples=99, figures=False, plan=Plan(workers=1))
    r = cert.report
    assert r["steady_state"]["verdict"] == "FAIL" and r["first_shoe"]["verdict"] == "FAIL"
    apply_standard(r, None, kind="shoe", alpha=0.01)
    for t in r["tables"]:
        assert t["battery"]["verdict"] == "FAIL", t["kind"]
    assert r["verdict"] == "FAIL"
    assert r["steady_state"]["verdict"] == r["first_shoe"]["verdict"] == "FAIL"
    text = str(r["standard"])
    assert "not cleared: nothing measured the player's edge" in text


def test_a_run_without_seed_says_its_seed_is_fresh_entropy(cli, tmp_path):
    """Without --seed the report says the seed is fresh OS entropy (as ``certify`` does), not 'given with --seed'; with
    --seed it says given."""
    import json

    proc = tmp_path / "cut-only.toml"
    proc.write_text('id = "cut-only"\nname = "a cut only"\nsource = "test"\ngame = "baccarat"\nkind = "manual"\ndecks = 8\n'
                    'cut_card_from_back = 7\n[deal]\npickup = "banker-first"\nundealt = "top"\n[[steps]]\nop = "cut"\nlo = 52\nhi = -52\n')
    for args, how in (([], "fresh OS entropy, recorded here"), (["--seed", "3"], "given with --seed")):
        r = cli("shuffle", "certify", str(proc), "--shoes", "2", "--no-sensitivity", "--workers", "1", "--json", "--no-plots",
                "--out", str(tmp_path / "out"), *args)
        assert r.exit_code in (10, 11, 12), r.output
        assert json.loads(r.stdout)["seed"]["how"] == how


def test_which_shoes_have_no_measured_edge():
    """A tracker that bet too little measured nothing (as no tracker); one that never found a bet judged the edge (none
    to take: a Fisher-Yates shoe's trackers never bet); an applicable one measured it."""
    from rngcert.pipeline.standards import unmeasured
    from rngcert.stats.tracker_edge import NO_BET

    few = {"name": "tracker_edge:baccarat_sequence", "applicable": False, "reason": "the tracker bet 42 unit(s) in 1 shoe(s): fewer than 30 units or 10 shoes"}
    never = {"name": "tracker_edge:ace_sequencer", "applicable": False, "reason": NO_BET}
    bet = {"name": "tracker_edge:ace_sequencer", "applicable": True, "pvalue": 0.4}
    chi = {"name": "position_chisquare", "applicable": True, "pvalue": 0.001}
    assert unmeasured("shoe:manual", {"tests": [chi]}) == "no tracker for this game"
    assert "bet enough" in unmeasured("shoe:manual", {"tests": [chi, few]})
    assert unmeasured("shoe:manual", {"tests": [chi, few, never]}) is None
    assert unmeasured("shoe:manual", {"tests": [chi, few, bet]}) is None
    assert unmeasured("bits", {"tests": [chi]}) is None
