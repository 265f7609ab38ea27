"""Scanner logs of dealt cards only (issue 12): the order before each shuffle rebuilt from the
previous shoe, the wash measured from it, held-out faulty shufflers, and the calibration of the
verdict on Fisher-Yates logs."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.collect.shoelog import read_shoe_log, write_shoe_log
from rngcert.equipment.procedure import load_procedure, parse_procedure
from rngcert.errors import InputError
from rngcert.pipeline.certify_shuffle import certify_log
from rngcert.simulate.deal import complete_shoes, deal_pickup_baccarat, deal_pickup_blackjack, rebuild_before
from rngcert.simulate.procedure import shuffle, simulate_log


def _machine(op: str, game: str = "baccarat") -> object:
    base = load_procedure("baccarat-004" if game == "baccarat" else "blackjack-004")
    raw = dict(base.raw)
    raw.update({"id": f"{op}-table", "steps": [{"op": op}], "kind": "machine",
                "parameters": [p for p in raw.get("parameters", []) if not p["name"].startswith("steps")]})
    return parse_procedure(raw, f"<{op}>")


def _scan(tmp_path, proc, shoes, seed, *, serial=False, name="scan.csv"):
    seq = simulate_log(proc, shoes, seed)
    turns = any(st.op == "wash" and st.full_params()["rotate"] > 0 for st in proc.steps)  # orientation modelled
    f = tmp_path / name
    write_shoe_log(f, seq.after[0], table="T1", lengths=seq.n_dealt[0], rotated=seq.rotated[0] if turns else None, serial=serial)
    return f, seq


@pytest.mark.parametrize("pid, fn", [("baccarat-004", deal_pickup_baccarat), ("blackjack-004", deal_pickup_blackjack)])
def test_rebuild_is_exact_where_the_cards_were_seen(pid, fn):
    p = load_procedure(pid)
    seq = simulate_log(p, 20, 3)
    after, before, nd = seq.after[0], seq.before[0], seq.n_dealt[0]
    dealt = np.where(np.arange(p.n_cards)[None, :] < nd[:, None], after, -1)
    params = p.deal if p.game == "baccarat" else {"players": p.deal["players"], "rule": p.deal["rule"]}
    rb = rebuild_before(fn, dealt[:-1], nd[:-1], **params)
    known = rb >= 0
    assert np.array_equal(rb[known], before[1:][known])
    assert np.array_equal((~known).sum(axis=1), p.n_cards - nd[:-1])  # exactly the cards left behind the cutting card


def test_complete_shoes_fills_the_missing_multiset():
    rng = np.random.default_rng(1)
    full = rng.permuted(np.tile(np.arange(416) % 52, (50, 1)), axis=1).astype(np.int16)
    part = np.where(rng.random(full.shape) < 0.3, -1, full)
    out = complete_shoes(part, 8, rng)
    assert np.array_equal(np.sort(out, axis=1), np.sort(full, axis=1)) and np.array_equal(out[part >= 0], part[part >= 0])
    with pytest.raises(InputError, match="more often"):
        complete_shoes(np.zeros((1, 416), np.int16), 8, rng)


@pytest.mark.slow
def test_dealt_only_stream_recovers_the_wash_and_matches_before_after(tmp_path):
    # 500 consecutive shoes of one table, a known wash (travel 0.15, clumps of 4): the scanner stream
    # (dealt cards only, no serials) recovers the wash within its intervals and gives the verdict of
    # the before/after analysis of the same shoes
    proc = load_procedure("baccarat-004")
    f, seq = _scan(tmp_path, proc, 500, 11)
    log = read_shoe_log(f, decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=proc, seed=1, n_resamples=199, figures=False)
    fit = cert.report["fit"]["parameters"]
    for name, truth in (("steps[1].intensity", 0.15), ("steps[1].clump", 4.0)):
        lo, hi = fit[name]["interval"]
        assert lo <= truth <= hi, (name, fit[name])
    # the share of pairs kept is stated on identified cards: that of the fitted wash (about 36% for this
    # wash), not the share seen on faces (about 2%, copies of a face matched in order)
    summ = cert.report["fit"]
    ident = np.tile(np.arange(416, dtype=np.int16), (400, 1))
    true_share = float((np.diff(np.argsort(shuffle(proc, ident, np.random.default_rng(5)) & 1023, axis=1), axis=1) == 1).mean())
    assert "implied by the fitted wash" in summ["summaries_basis"] and abs(summ["share_adjacent_kept"] - true_share) < 0.08, (summ, true_share)
    assert summ["observed"]["share_adjacent_kept"] < 0.1
    ba = tmp_path / "ba.csv"  # the same 500 shoes (simulated once) with their orders before
    write_shoe_log(ba, seq.after[0], before=seq.before[0], table="T1", serial=False)
    log2 = read_shoe_log(ba, decks=8)
    cert2 = certify_log(log2, source=str(ba), decks=8, game="baccarat", proc=proc, seed=1, n_resamples=199, figures=False)
    assert cert.report["tables"][0]["battery"]["verdict"] == cert2.report["tables"][0]["battery"]["verdict"]
    assert {p["name"]: p["status"] for p in cert.report["parameters"]}["steps[1].clump"] == "measured"


@pytest.mark.parametrize("op", ["sattolo", "naive_swap"])
def test_held_out_faulty_shufflers_fail(tmp_path, op):
    # an electronic shuffler at a baccarat table with a defective algorithm; the scanner log has the
    # dealt cards only; certified without a procedure (uniform standard)
    f, _ = _scan(tmp_path, _machine(op), 250, 21)
    log = read_shoe_log(f, decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=None, seed=2, n_resamples=199, figures=False)
    assert cert.verdict == "FAIL", cert.report["tables"][0]["battery"]["reasons"]
    rejected = set(cert.report["tables"][0]["battery"]["rejected_familywise"])
    assert ("fixed_points" if op == "sattolo" else "position_correlation") in rejected


def test_fisher_yates_log_passes(tmp_path):
    f, _ = _scan(tmp_path, _machine("fisher_yates"), 120, 5)
    log = read_shoe_log(f, decks=8)
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=None, seed=3, n_resamples=199, figures=False)
    # 120 shoes cannot exclude the default minimum edge (the Banker's house edge, 1.06%): INCONCLUSIVE, with the shoes needed
    gate = cert.report["power_gate"]
    assert cert.verdict == "INCONCLUSIVE" and gate["status"] == "underpowered" and gate["shoes_needed"] > 120
    assert cert.report["tables"][0]["battery"]["reasons"][0] == gate["sentence"]
    assert "every-round bettor" in gate["detectable"][0]["tracker"]  # no tracker bet: the bound of a bettor on every coup
    # with a declared minimum edge these shoes can see (20% of the stake) the same log PASSes
    cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=None, seed=3, n_resamples=199, figures=False, min_edge=0.2)
    assert cert.verdict == "PASS" and cert.report["policy"]["standard"] == "uniform"
    assert cert.report["power_gate"]["status"] == "powered"
    assert cert.report["tables"][0]["trackers"][0]["edge"] is None  # no information, no bet


@pytest.mark.slow
def test_fisher_yates_logs_pass_at_the_calibrated_rate(tmp_path):
    # >= 99% of 200 Fisher-Yates logs PASS at alpha = 0.01 (serialised marked decks: every identity
    # test runs exactly, no Monte Carlo floor); the false FAIL rate is Holm's family-wise alpha
    verdicts = []
    seq = simulate_log(_machine("fisher_yates"), 60, 1000, tables=200)  # 200 independent tables, simulated at once
    for k in range(200):
        f = tmp_path / f"fy{k}.csv"
        write_shoe_log(f, seq.after[k], table="T1", lengths=seq.n_dealt[k], serial=True)
        log = read_shoe_log(f, decks=8)
        cert = certify_log(log, source=str(f), decks=8, game="baccarat", proc=None, seed=k, n_resamples=199, figures=False,
                           min_edge=0.5)  # a false FAIL rate, not the power gate
        verdicts.append(cert.verdict)
        f.unlink()
    share = np.mean([v == "PASS" for v in verdicts])
    assert share >= 0.99, {v: verdicts.count(v) for v in set(verdicts)}


def test_monte_carlo_replicates_are_raised_when_their_floor_cannot_reject_at_the_samples_level():
    """A dealer's sample at alpha / 6 with R = 1999: p >= 0.0005 can never pass Holm's first
    threshold 0.00167 / 10, so a test at that floor must be run again with more replicates
    (a PASS there would rest on the resolution, not on the data); at alpha the floor binds not."""
    from types import SimpleNamespace as NS

    from rngcert.pipeline.certify_shuffle import _resolution_needed

    def outcome(p_first, rejected=()):
        res = [NS(name=f"t{i}", applicable=True, pvalue=p) for i, p in enumerate([p_first] + [0.5] * 9)]
        return NS(results=res, rejected=list(rejected))

    floor = 1 / 2000
    assert _resolution_needed(outcome(floor), 0.01 / 6, 1999) == 11999  # next multiple of 1,000 above 2 * 10 / level
    assert 1 / (11999 + 1) <= (0.01 / 6) / 10 / 2
    assert _resolution_needed(outcome(0.2), 0.01 / 6, 1999) is None  # the floor did not bind: the result stands
    assert _resolution_needed(outcome(floor, rejected=["t0"]), 0.01 / 6, 1999) is None  # rejected anyway
    assert _resolution_needed(outcome(floor), 0.01, 999) is None  # 0.001 <= 0.01 / 10: enough
