"""A store for many readers (issue 11, item 4): audits and `rejects` read while an ingest writes,
with a bounded wait instead of "in use"; `--no-record` audits a store it may not write; a full
disk or a damaged store is exit 3 naming the path, and nothing committed is lost.

The concurrency tests use real processes (the console script and a child Python process holding
the store), as an operator's cron jobs would. Runtime: about 30 s.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pytest
from _support import run_cli

import rngcert.collect.store as store_mod
from rngcert.collect.store import StorageError, Store
from rngcert.equipment.wheel import load_wheel
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")


def csv_log(path, n, seed, *, table="T1", bad_line=False):
    sim = simulate_spins(EU, n, np.random.default_rng(seed), dealers=3, first_spin=0)
    with open(path, "wb") as fh:
        write_spin_log(fh, EU, sim, table=table)
    if bad_line:
        with open(path, "ab") as fh:
            fh.write(f"{n + 1},2026-01-09T00:00:00Z,{table},D1,cw,3,false,99\n".encode())
    return sim


def cli(*args):
    return subprocess.run([sys.executable, "-m", "rngcert", *map(str, args)], capture_output=True, text=True, env=ENV, timeout=300)


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


_HOLD = textwrap.dedent(
    """
    import sys, time
    import rngcert.collect.store as s
    mode, db, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])

    def until_released(i):  # ... until the file sys.argv[i] exists, when given (a handshake with the test, no timing)
        if len(sys.argv) > i:
            from pathlib import Path
            release, give_up = Path(sys.argv[i]), time.monotonic() + 600
            while not release.exists() and time.monotonic() < give_up:
                time.sleep(0.02)

    if mode == "ingest":  # an ingest that holds the write lock inside its transaction
        def hook():
            print("HOLDING", flush=True)
            time.sleep(seconds)
            until_released(5)
        s.ingest._before_commit = hook
        s.ingest_files(db, [sys.argv[4]], wait=60)
    else:  # a long reader (an audit reading a large table)
        with s.Store(db, read_only=True):
            print("HOLDING", flush=True)
            time.sleep(seconds)
            until_released(4)
    print("DONE", flush=True)
    """
)


def hold(tmp_path, mode, db, seconds, *extra):
    script = tmp_path / "hold.py"
    script.write_text(_HOLD)
    p = subprocess.Popen([sys.executable, str(script), mode, str(db), str(seconds), *map(str, extra)], stdout=subprocess.PIPE, text=True, env=ENV)
    assert p.stdout.readline().strip() == "HOLDING"
    return p


@pytest.fixture
def store_a(tmp_path):
    db = tmp_path / "s.duckdb"
    a = tmp_path / "a.csv"
    csv_log(a, 4000, 1, table="A", bad_line=True)
    with Store(db) as st:
        st.ingest([a])
    return db


def _until_waiting(proc) -> list[str]:
    """Standard error lines of ``proc`` up to the one saying it waits for the store (all of them if it never says so)."""
    seen = []
    for line in proc.stderr:  # ends at the process's end: never hangs
        seen.append(line)
        if "held by another process" in line:
            break
    return seen


def test_audit_and_rejects_run_while_an_ingest_writes(tmp_path, store_a):
    """Two real processes: an ingest holding the write lock inside its transaction until the test
    lets it go, and `rngcert audit` and `rngcert rejects` started meanwhile: each says it waits for
    the store while the writer still holds it (a handshake, no timing: the writer lets go only after
    both have said so), then succeeds; the ingest commits every row."""
    db = store_a
    big = tmp_path / "b.csv"
    csv_log(big, 100_000, 2, table="B")
    release = tmp_path / "release"
    writer = hold(tmp_path, "ingest", db, 0, big, release)
    try:
        aud = subprocess.Popen([sys.executable, "-m", "rngcert", "audit", "--db", str(db), "--table", "A", "--seed", "1", "--resamples", "199",
                                "--no-plots", "--out", str(tmp_path / "rep"), "--wait", "600"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        rej = subprocess.Popen([sys.executable, "-m", "rngcert", "rejects", "--db", str(db), "--wait", "600"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        aud_wait, rej_wait = _until_waiting(aud), _until_waiting(rej)
        assert writer.poll() is None  # the writer still holds the store: both waited for it
    finally:
        release.touch()
    out, err = aud.communicate(timeout=300)
    rej_out, rej_err = rej.communicate(timeout=300)
    assert writer.wait(timeout=300) == 0
    assert "held by another process" in aud_wait[-1], "".join(aud_wait) + err
    assert "held by another process" in rej_wait[-1], "".join(rej_wait) + rej_err
    assert rej.returncode == 0, rej_err
    assert "1 rejected row(s)" in rej_err
    assert aud.returncode in (0, 10, 11, 12), out + err
    assert "VERDICT:" in out
    with Store(db, read_only=True) as st:
        assert st.count_spins("B") == 100_000 and st.count_spins("A") == 4000
        (rec,) = st.audits("A")
    assert rec["n"] == 4000


@pytest.mark.slow
def test_ingest_waits_for_a_reader_and_a_zero_wait_fails_with_exit_3(tmp_path, store_a):
    db = store_a
    more = tmp_path / "c.csv"
    csv_log(more, 2000, 3, table="C")
    release = tmp_path / "release-reader"
    reader = hold(tmp_path, "read", db, 0, release)  # holds the store until the test lets it go (no fixed sleep)
    r = cli("ingest", more, "--db", db, "--wait", "0")
    assert r.returncode == 3 and str(db) in r.stderr and "in use by another process" in r.stderr
    ing = subprocess.Popen([sys.executable, "-m", "rngcert", "ingest", str(more), "--db", str(db), "--wait", "60"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    waited = _until_waiting(ing)  # the ingest says it waits for the store the reader holds ...
    release.touch()  # ... and completes once the reader lets it go
    out, err = ing.communicate(timeout=300)
    assert reader.wait(timeout=60) == 0
    assert "held by another process" in waited[-1], "".join(waited) + err
    assert ing.returncode == 0, err
    assert "2000 new spins stored" in out
    with Store(db, read_only=True) as st:
        assert st.count_spins("C") == 2000


def test_no_record_audits_a_store_held_read_only_elsewhere_without_writing_it(tmp_path, store_a):
    """--no-record opens the store read-only only: it runs while another process reads the file
    (a writer would be refused), and the file's bytes do not change. A recording audit, told
    not to wait, is refused with exit 3."""
    db = store_a
    before = sha(db)
    reader = hold(tmp_path, "read", db, 120.0)  # killed below; long enough for a loaded machine
    try:
        r = run_cli("audit", "--db", db, "--table", "A", "--seed", "2", "--resamples", "199", "--no-plots", "--no-record", "--out", tmp_path / "rep",
                    "--wait", "0")
        assert r.exit_code in (0, 10, 11, 12), r.output
        assert "not recorded (--no-record)" in r.output
        r = run_cli("audit", "--db", db, "--table", "A", "--seed", "2", "--resamples", "199", "--no-plots", "--out", tmp_path / "rep2", "--wait", "0")
        assert r.exit_code == 3 and "in use by another process" in r.output
    finally:
        reader.kill()
        reader.wait()
    assert sha(db) == before
    with Store(db, read_only=True) as st:
        assert st.audits() == []


def test_no_record_on_a_read_only_file(tmp_path, store_a, monkeypatch):
    db = store_a
    # root can write a 0444 file anyway: make the permission check say what a non-root user sees
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if (Path(p) == db and mode == os.W_OK) else real_access(p, mode, *a, **k))
    r = run_cli("audit", "--db", db, "--table", "A", "--no-plots", "--resamples", "199", "--out", tmp_path / "r")
    assert r.exit_code == 3 and "read-only" in r.output and "--no-record" in r.output
    r = run_cli("audit", "--db", db, "--all", "--no-plots", "--resamples", "199", "--no-record", "--workers", "1", "--out", tmp_path / "r")
    assert r.exit_code in (0, 10, 11, 12), r.output


def test_a_store_marked_read_only_is_not_recorded_into_even_by_root(tmp_path, store_a):
    """The permission bits are the archive mark: a 0444 store (or one in a 0555 folder, where
    DuckDB's write-ahead log cannot be created) is audited with --no-record and refused (exit 3,
    path, mode and what to do) when recording, also for root, whom the OS would let write; the
    file's bytes do not change."""
    db = store_a
    before = sha(db)
    args = ["audit", "--db", str(db), "--table", "A", "--no-plots", "--resamples", "199", "--out", str(tmp_path / "r")]
    os.chmod(db, 0o444)
    try:
        r = run_cli(*args)
        assert r.exit_code == 3 and "read-only (mode 444)" in r.output and "--no-record" in r.output, r.output
        r = run_cli(*args, "--no-record")
        assert r.exit_code in (0, 10, 11, 12), r.output
    finally:
        os.chmod(db, 0o644)
    folder = db.parent
    mode = folder.stat().st_mode & 0o777
    os.chmod(folder, 0o555)
    try:
        r = run_cli(*args[:-2], "--out", tmp_path.parent / f"{tmp_path.name}-r2")
        assert r.exit_code == 3 and "read-only folder" in r.output and "--no-record" in r.output, r.output
    finally:
        os.chmod(folder, mode)
    assert sha(db) == before


@pytest.mark.parametrize("kind", ["duckdb", "oserror"])
def test_full_disk_during_ingest_is_exit_3_with_the_path_and_keeps_what_was_committed(tmp_path, store_a, monkeypatch, kind):
    db = store_a
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT * FROM spins ORDER BY seq").fetchall()
    con.close()

    def enospc():
        if kind == "duckdb":
            raise duckdb.IOException(f'IO Error: Could not write file "{db}.wal": No space left on device')
        raise OSError(errno.ENOSPC, "No space left on device", f"{db}.wal")

    monkeypatch.setattr(store_mod.ingest, "_before_commit", enospc)
    log = tmp_path / "d.csv"
    csv_log(log, 3000, 4, table="D")
    r = run_cli("ingest", log, "--db", db)
    assert r.exit_code == 3, r.output
    assert str(db) in r.output and "full" in r.output and "rolled back" in r.output
    assert "internal error" not in r.output
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT * FROM spins ORDER BY seq").fetchall() == before
    con.close()
    monkeypatch.setattr(store_mod.ingest, "_before_commit", lambda: None)
    r = run_cli("ingest", log, "--db", db)
    assert r.exit_code == 0 and "3000 new spins stored" in r.output


def test_full_disk_while_recording_an_audit_is_exit_3(tmp_path, store_a, monkeypatch):
    db = store_a

    def full(self, rec, tests):
        raise duckdb.IOException(f'IO Error: Could not write file "{db}": No space left on device')

    monkeypatch.setattr(Store, "record_audit", store_mod.schema._guarded(full))
    r = run_cli("audit", "--db", db, "--table", "A", "--no-plots", "--resamples", "199", "--out", tmp_path / "r")
    assert r.exit_code == 3 and str(db) in r.output and "full" in r.output


def test_a_failed_commit_of_an_audit_record_reports_its_own_error(tmp_path, store_a):
    """When the COMMIT of an audit record fails (a full disk), DuckDB has already ended the
    transaction: the error reported is the full disk with the store's path, not the ROLLBACK's
    "cannot rollback - no transaction is active" (an operator saw only that); nothing is recorded."""
    db = store_a

    class FullAtCommit:
        def __init__(self, con):
            self.con = con

        def execute(self, q, *a):
            if q == "COMMIT":
                self.con.execute("ROLLBACK")  # what DuckDB has done when its commit fails
                raise duckdb.IOException(f'IO Error: Could not write file "{db}.wal": No space left on device')
            return self.con.execute(q, *a)

        def __getattr__(self, name):
            return getattr(self.con, name)

    rec = {"table_id": "A", "equipment": "european", "n": 1, "verdict": "PASS"}
    with Store(db) as st:
        real = st.con
        st.con = FullAtCommit(real)
        try:
            with pytest.raises(StorageError, match="is full") as e:
                st.record_audit(rec, [])
            assert str(db) in str(e.value) and "no transaction is active" not in str(e.value)
        finally:
            st.con = real
        assert st.audits() == []
        assert st.record_audit(rec, []) == 1  # the connection is still usable


@pytest.mark.parametrize("kind", ["oserror", "duckdb"])
def test_full_disk_during_export_leaves_no_partial_folder(tmp_path, store_a, monkeypatch, kind):
    """A full disk under the export folder names that folder, not the store (DuckDB's Parquet
    writer reports it as its own IOException, which was taken for the store's disk)."""
    db = store_a
    real = os.replace

    def replace(a, b):
        if kind == "duckdb":
            raise duckdb.IOException(f'IO Error: Could not write file "{b}/data_0.parquet": No space left on device')
        raise OSError(errno.ENOSPC, "No space left on device", str(b))

    monkeypatch.setattr(os, "replace", replace)
    out = tmp_path / "exp"
    r = run_cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 3 and "full" in r.output and str(out) in r.output
    assert f"store {db}" not in r.output, r.output
    assert not out.exists() and not [p for p in tmp_path.iterdir() if "rngcert-export" in p.name]
    monkeypatch.setattr(os, "replace", real)


@pytest.mark.parametrize("where", ["header", "block"])
def test_damaged_store_is_exit_3_with_the_path(tmp_path, store_a, where):
    db = tmp_path / "damaged.duckdb"
    shutil.copy(store_a, db)
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        fh.seek(0 if where == "header" else 4096)
        fh.write(os.urandom(8192))
    assert size > 12288
    for args in (["audit", "--db", str(db), "--table", "A", "--no-plots"], ["rejects", "--db", str(db)], ["audit", "--db", str(db), "--all", "--workers", "1"]):
        r = run_cli(*args)
        assert r.exit_code == 3, (args, r.output)
        assert str(db) in r.output and "internal error" not in r.output
    r = run_cli("ingest", tmp_path / "none.csv", "--db", db)
    assert r.exit_code == 3


def test_storage_error_mapping():
    assert store_mod.storage_error("x.duckdb", ValueError("no")) is None
    e = store_mod.storage_error("x.duckdb", OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(e, StorageError) and "x.duckdb" in str(e) and "full" in str(e)
    e = store_mod.storage_error("x.duckdb", duckdb.Error("Corrupt database file: computed checksum 1 does not match stored checksum 2"))
    assert "damaged" in str(e)
    assert store_mod.storage_error("x.duckdb", duckdb.BinderException("Referenced column not found")) is None  # a bug stays a bug


def _dead_pid() -> int:
    """The pid of a process that has ended (a child reaped here)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_export_removes_the_temporary_folder_a_killed_export_left_and_keeps_a_running_ones(tmp_path, store_a):
    """SIGKILL (or a power cut) leaves an export's .NAME.rngcert-export-PID folder, which no handler can remove: the
    next export to the same folder removes it and says so; a folder whose process still runs (another export now) is
    left alone, as are folders of other names."""
    db, out = store_a, tmp_path / "exp"
    dead, alive = _dead_pid(), os.getppid()
    from rngcert.collect.store.export import _host

    stale = tmp_path / f".exp.rngcert-export-{_host()}-{dead}"
    (stale / "table_id=A").mkdir(parents=True)
    (stale / "table_id=A" / "part.parquet").write_bytes(b"half")
    running = tmp_path / f".exp.rngcert-export-{_host()}-{alive}"
    running.mkdir()
    other = tmp_path / f".other.rngcert-export-{_host()}-{dead}"
    other.mkdir()
    elsewhere = tmp_path / f".exp.rngcert-export-another-machine-{dead}"  # (its pid means nothing on this machine)
    elsewhere.mkdir()
    r = run_cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 0, r.output
    assert not stale.exists() and f"removed {stale}" in r.output and f"({dead})" in r.output
    assert running.is_dir() and other.is_dir() and elsewhere.is_dir() and str(running) not in r.output and str(elsewhere) not in r.output
    assert (out / "_rngcert" / "manifest.json").is_file()


def test_export_does_not_say_it_removed_a_stale_folder_it_could_not_remove(tmp_path, store_a, monkeypatch):
    """The stale folder's removal ignores errors (a file in it of another user, a read-only mount): the export said
    'removed PATH' whether or not it was gone. It says it could not remove it, and the folder is named."""
    import rngcert.scratch as scratch

    db, out = store_a, tmp_path / "exp"
    from rngcert.collect.store.export import _host

    dead = _dead_pid()
    stale = tmp_path / f".exp.rngcert-export-{_host()}-{dead}"
    stale.mkdir()
    real = scratch.shutil.rmtree
    monkeypatch.setattr(scratch.shutil, "rmtree", lambda p, ignore_errors=False, **kw: None if str(p) == str(stale) else real(p, ignore_errors=ignore_errors, **kw))
    r = run_cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 0, r.output
    assert stale.is_dir() and f"removed {stale}" not in r.output and f"could not remove {stale}" in r.output, r.output


def test_truncated_store_is_called_damaged(tmp_path, store_a):
    """A store cut short (a copy or a download that stopped) is damaged, with what to do, not a bare 'storage error'."""
    db = tmp_path / "cut.duckdb"
    shutil.copy(store_a, db)
    os.truncate(db, 20000)
    r = run_cli("rejects", "--db", str(db))
    assert r.exit_code == 3 and str(db) in r.output
    assert "is damaged" in r.output and "restore it from a backup" in r.output, r.output
