"""A standard that restates a shuffle section's verdict (rngcert-default: a manual shuffle's statistical rejection is a
finding, SUSPECT, where the battery's own rule said FAIL because no tracker could bet) restates it in the report's
``steady_state`` and ``first_shoe`` blocks too, the battery's own verdict kept beside it: report.json never says
FAIL there under a SUSPECT verdict and exit code 10.
"""

from __future__ import annotations

from rngcert.equipment.procedure import load_procedure
from rngcert.pipeline.certify_shuffle.procedure import certify_procedure
from rngcert.pipeline.parallel import Plan
from rngcert.pipeline.standards import apply_standard


def test_the_blocks_of_the_sections_state_the_verdict_under_the_standard():
    # one table: the tests reject, no tracker bets on one shoe, so the battery's own rule (edge) says FAIL
    cert = certify_procedure(load_procedure("baccarat-004"), tables=1, burn_in=2, seed=1, n_resamples=99, figures=False, plan=Plan(workers=1))
    r = cert.report
    assert r["steady_state"]["verdict"] == "FAIL" and r["first_shoe"]["verdict"] == "FAIL"
    apply_standard(r, None, kind="shoe", alpha=0.01)
    by_kind = {t["kind"]: t["battery"] for t in r["tables"]}
    assert by_kind["steady_state"]["verdict"] == "SUSPECT" and by_kind["steady_state"]["battery_verdict"] == "FAIL"
    for key in ("steady_state", "first_shoe"):
        assert r[key]["verdict"] == by_kind[key]["verdict"], key
        assert r[key]["battery_verdict"] == by_kind[key]["battery_verdict"] == "FAIL", key
    assert r["verdict"] == "SUSPECT"
    assert "under standard rngcert-default" in r["first_shoe"]["needs"]  # the remedies were tried for the battery's FAIL


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
