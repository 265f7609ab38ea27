"""Adversarial review of `rngcert watch` (session of 2026-12-04): every spin counted once across
byte-sliced appends, CRLF and a concurrent writer; two copy-truncates within one poll reported
(exit 14), not skipped silently; the false-alarm bound checked by simulation; a planted bias alarmed.
Deterministic (fixed seeds, polls driven step by step); runtime a few seconds.
"""

from __future__ import annotations

import os
import shutil
import threading

import numpy as np
from scipy import stats
from test_watch_follow import EU, lines

from rngcert.pipeline.watch import LogWatch, Watcher
from rngcert.stats import sequential as sq


def _copytruncate(log, data: bytes) -> None:
    """logrotate copytruncate: live.csv.1 -> live.csv.2, a copy of the log as live.csv.1, the log truncated and written anew."""
    one = log.parent / f"{log.name}.1"
    if one.exists():
        os.rename(one, log.parent / f"{log.name}.2")
    shutil.copy(log, one)
    with open(log, "r+b") as fh:
        fh.truncate(0)
        fh.write(data)


def _lost(w: LogWatch, final=False) -> list[str]:
    evs = w.step(final=final)
    assert not any(e.kind == "alarm" for e in evs)
    return [e.text for e in evs if e.kind == "lost"]


def test_two_copytruncates_within_one_poll_are_lost_spins_not_skipped_silently(tmp_path):
    """Spins 351-450 are only in the middle copy (live.csv.1), which starts after the lines read:
    before the fix the watch read 450 of 550 spins, said nothing and would exit 0."""
    log = tmp_path / "live.csv"
    log.write_bytes(lines(300, 1, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    assert _lost(w) == []
    with open(log, "ab") as fh:
        fh.write(lines(50, 2, first=300))
    _copytruncate(log, lines(100, 3, first=350, header=True))
    _copytruncate(log, lines(100, 4, first=450, header=True))
    lost = _lost(w) + _lost(w, final=True)
    assert w.spins["W1"] == 450
    assert len(lost) == 1 and "truncated more than once between two polls" in lost[0] and "live.csv.1" in lost[0], lost
    w.close()


def test_truncation_that_loses_nothing_is_not_a_gap(tmp_path):
    """Copy-truncate with the copy beside the log, and a log rewritten whole: no spin lost, none reported lost."""
    log = tmp_path / "live.csv"
    log.write_bytes(lines(200, 8, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    _lost(w)
    with open(log, "ab") as fh:
        fh.write(lines(20, 9, first=200))
    _copytruncate(log, lines(80, 10, first=220, header=True))
    assert _lost(w) == [] and w.spins["W1"] == 300
    whole = lines(200, 8, header=True) + lines(20, 9, first=200) + lines(80, 10, first=220) + lines(50, 11, first=300)
    with open(log, "r+b") as fh:
        fh.truncate(0)
        fh.write(whole)
    assert _lost(w, final=True) == [] and w.spins["W1"] == 350 and w.repeated == 300
    w.close()


def _sliced(data: bytes, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    cuts = np.unique(rng.integers(1, len(data), 300))
    return [data[a:b] for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(data)])]


def test_byte_sliced_crlf_appends_count_every_spin_once(tmp_path):
    """A writer that flushes at arbitrary bytes (inside a line, between CR and LF): every poll
    sees a partial line; each spin is counted exactly once, nothing rejected."""
    data = lines(2000, 12, header=True).replace(b"\n", b"\r\n")
    log = tmp_path / "live.csv"
    log.write_bytes(b"")
    w = LogWatch(log, EU, block=7, settle=1e9)
    for part in _sliced(data, 13):
        with open(log, "ab") as fh:
            fh.write(part)
        assert _lost(w) == []
    _lost(w, final=True)
    assert w.spins == {"W1": 2000} and w.rejected == 0 and w.repeated == 0
    w.close()


def test_concurrent_writer_with_a_short_poll_counts_every_spin_once(tmp_path):
    """A thread appends byte slices while the watch polls in a loop; the count does not depend on the interleaving."""
    data = lines(3000, 14, header=True)
    log = tmp_path / "live.csv"
    log.write_bytes(b"")
    done = threading.Event()

    def writer():
        for part in _sliced(data, 15):
            with open(log, "ab") as fh:
                fh.write(part)
        done.set()

    w = LogWatch(log, EU, block=10, settle=1e9)
    t = threading.Thread(target=writer)
    t.start()
    while not done.is_set():
        assert _lost(w) == []
        w.follower.wait(0.001)
    t.join()
    _lost(w, final=True)
    assert w.spins == {"W1": 3000} and w.rejected == 0 and w.repeated == 0
    w.close()


def test_false_alarm_rate_over_the_horizon_is_below_alpha():
    """2,000 fair streams of 2,000 spins checked after every block of 20 (alpha 0.2): the rate of
    any alarm within the horizon is below alpha with a one-sided 99.9% Clopper-Pearson bound."""
    alpha, horizon, block, runs = 0.2, 2_000, 20, 2_000
    space = EU.position_space()
    fam = sq.wheel_alternatives(space.probs, circular=True, distance=True)
    x = np.random.default_rng(20261204).integers(0, space.m, (runs, horizon))
    fv = sq.feature_values(x, space.m)
    counts = {f: sq.block_counts(fv[f], space.m, block) for f in fam.features}
    path = sq.e_detector(counts, fam, sq.detector_threshold(alpha, horizon, block))
    alarms = int((path.alarm >= 0).sum())
    upper = stats.beta.ppf(0.999, alarms + 1, runs - alarms)
    print(f"\n{alarms} false alarm(s) in {runs} fair runs; 99.9% upper bound on the rate {upper:.3f} < alpha {alpha}")
    assert upper < alpha, (alarms, upper)
    # the rule looks at every block: the alarm is the first block at or over the threshold
    assert np.array_equal(path.alarm >= 0, (path.log_m >= path.log_threshold).any(axis=-1))


def test_planted_bias_in_a_followed_log_is_alarmed_at_a_spin_of_the_log(tmp_path):
    """Pocket 17 at 3x its rate from spin 1,001 on: the alarm comes after the change and names a spin_id of the log."""
    rng = np.random.default_rng(16)
    p = np.full(37, 1.0)
    p[EU.position_space().labels.index("17")] = 3.0
    pos = np.r_[rng.integers(0, 37, 1000), rng.choice(37, 9000, p=p / p.sum())]
    labels = EU.position_space().labels
    body = "".join(f"W1,{i + 1},{labels[q]}\n" for i, q in enumerate(pos.tolist()))
    log = tmp_path / "live.csv"
    log.write_text("table,spin_id,result\n" + body)
    w = LogWatch(log, EU, block=50, alpha=0.01, horizon=100_000)
    evs = w.step(final=True)
    alarm = [e for e in evs if e.kind == "alarm"]
    assert len(alarm) == 1 and 1000 < int(alarm[0].spin_id) == alarm[0].watcher.alarm_spin <= 10_000
    assert "17" in alarm[0].watcher.leader
    w.close()


def test_watcher_fed_spin_by_spin_equals_one_pass():
    x = np.random.default_rng(17).integers(0, 37, 1_234)
    one = Watcher(EU.position_space(), block=25).update(x)
    w = Watcher(EU.position_space(), block=25)
    for i in range(x.size):  # spin by spin, as a slow log delivers them
        st = w.update(x[i : i + 1])
    assert (st.spins, st.blocks, st.log_evidence, st.leader) == (one.spins, one.blocks, one.log_evidence, one.leader)


def test_repeated_single_copytruncates_with_shifted_and_compressed_archives_lose_nothing(tmp_path):
    """One copy-truncate per poll, the older copy shifted (.1 -> .2) and compressed: no spin lost, none reported lost."""
    import gzip

    log = tmp_path / "live.csv"
    (tmp_path / "live.csv.1").write_bytes(lines(100, 20, first=-100, header=True))  # an older archive
    log.write_bytes(lines(300, 21, header=True))
    w = LogWatch(log, EU, block=1, settle=0.0)
    assert _lost(w) == []
    n = 300
    for i in range(1, 4):
        with open(log, "ab") as fh:
            fh.write(lines(25, 21 + 2 * i, first=n))  # written after the last poll: only in the copy
        _copytruncate(log, lines(300, 22 + 2 * i, first=n + 25, header=True))
        n += 325
        a2 = tmp_path / "live.csv.2"
        (tmp_path / "live.csv.2.gz").write_bytes(gzip.compress(a2.read_bytes()))
        a2.unlink()
        assert _lost(w) + _lost(w) == []
    assert w.spins["W1"] == n == 1275 and w.repeated == 0 and w.conflicts == 0
    w.close()


def test_cli_exits_14_when_copytruncated_twice_between_two_polls(tmp_path, monkeypatch, cli):
    """`rngcert watch --follow`: two copy-truncates between its first and second poll (done by the
    wait between polls, no timing): SPINS LOST names the copy never read, the count is true, exit 14."""
    from rngcert.pipeline.watch import LogFollower

    log = tmp_path / "live.csv"
    log.write_bytes(lines(400, 30, header=True))
    calls = []

    def wait(self, timeout):
        if not calls:
            _copytruncate(log, lines(100, 31, first=400, header=True))
            _copytruncate(log, lines(100, 32, first=500, header=True))
        calls.append(timeout)

    monkeypatch.setattr(LogFollower, "wait", wait)
    r = cli("watch", log, "--no-record", "--follow", "--interval", "0.1", "--block", "1", "--settle", "0", "--max-idle", "3")
    assert r.exit_code == 14, r.output
    assert "SPINS LOST" in r.output and "live.csv.1" in r.output and "500 spin(s) were watched" in r.output, r.output


def test_alarm_record_names_the_spin_at_the_alarm_with_void_spins_before_it(tmp_path, cli):
    """Every 7th spin void: the alarm's spin_count counts non-void spins, and its spin_id is the
    id of that spin (for a log and for a stored table), not the id at the same row number."""
    from rngcert.collect.store import Store

    rng = np.random.default_rng(18)
    p = np.full(37, 1.0)
    p[5] = 4.0
    labels = EU.position_space().labels
    pos = rng.choice(37, 6000, p=p / p.sum())
    void = (np.arange(6000) % 7) == 6
    body = "".join(f"W1,{i + 1},{labels[q]},{'1' if v else ''}\n" for i, (q, v) in enumerate(zip(pos.tolist(), void.tolist())))
    log = tmp_path / "live.csv"
    log.write_text("table,spin_id,result,void\n" + body)
    live_ids = np.flatnonzero(~void) + 1
    for args in (("watch", log), ("watch", "--table", "W1")):
        db = tmp_path / f"s{len(args)}.duckdb"
        if len(args) == 3:
            assert cli("ingest", log, "--db", db).exit_code == 0
        r = cli(*args, "--db", db, "--block", "50")
        assert r.exit_code == 13, r.output
        with Store(db, read_only=True) as st:
            (al,) = st.alarms()
        assert al["spin_count"] % 50 == 0 and al["spin_id"] == str(live_ids[al["spin_count"] - 1]), (args, al)
