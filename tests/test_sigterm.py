"""SIGTERM (a batch system's time limit, ``kill``, a service manager's stop) ends a command with exit 143 after removing
the temporary folders its process made; ``record`` stops as on Ctrl-C. Before, the signal's default action ended the
process where it stood: a killed ``shuffle certify`` left its ``rngcert-remedies-*`` folder in TMPDIR (and an id sort,
an ingest's spool or an export their folders, up to a log's size), and a ``record`` stopped by its service manager lost
the running game that had its result."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from _support import end_processes, process_alive, shared_file

from rngcert import scratch

SS2 = ("data", "wheel-controller-serial", "ss2-protocol-6-games.log")
posix = pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs POSIX signals and FIFOs")


def _wait_for(pred, what: str, limit: float = 120.0) -> None:
    t0 = time.monotonic()
    while not pred():
        assert time.monotonic() - t0 < limit, f"no {what} within {limit} s"
        time.sleep(0.02)


@posix
def test_a_killed_shuffle_certify_removes_its_remedies_folder_and_says_so(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.Popen([sys.executable, "-m", "rngcert", "shuffle", "certify", "baccarat-004", "--shoes", "6000", "--no-sensitivity",
                          "--no-plots", "--workers", "2", "--out", str(tmp_path / "r"), "--json"],
                         env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        _wait_for(lambda: any(x.name.startswith("rngcert-remedies-") for x in tmp.iterdir()) or p.poll() is not None, "remedies folder")
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err.decode()
    assert "stopped by SIGTERM" in err.decode() and "1 temporary folder(s) removed" in err.decode(), err.decode()
    assert list(tmp.iterdir()) == []
    doc = out.decode().strip().splitlines()[-1]  # --json: the error document
    assert '"exit_code": 143' in doc and "SIGTERM" in doc


def test_ctrl_c_is_exit_130_and_said(tmp_path, cli, monkeypatch):
    """Ctrl-C (a KeyboardInterrupt where the command stands) is exit 130 with one line saying so, in JSON too with
    ``--json``; it was click's 'Aborted!' with exit 1, the code of an internal error. (A subprocess test would race: a
    SIGINT that arrives while the pool forks lands in a fork handler, where Python ignores it; at a terminal the
    workers get it too and the command still ends.)"""
    import rngcert.pipeline.certify_wheel as cw

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cw, "certify_log", interrupted)
    log = tmp_path / "a.csv"
    log.write_text("result\n" + "\n".join(str(k % 37) for k in range(370)) + "\n")
    r = cli("certify", log, "--out", tmp_path / "r", "--no-plots")
    assert r.exit_code == 130 and "stopped by Ctrl-C before the command ended" in r.stderr and "Aborted" not in r.output, r.output
    r = cli("certify", log, "--out", tmp_path / "r", "--no-plots", "--json")
    assert r.exit_code == 130 and '"exit_code": 130' in r.stdout, r.output


@posix
def test_record_stopped_by_sigterm_writes_the_running_game_like_ctrl_c(tmp_path):
    """The capture up to game 014's result (011-013 ended, 014 running with its result 3), from a FIFO whose writer
    stays: SIGTERM writes 014, as Ctrl-C does, and exits 0 saying why it stopped."""
    data = b"\n".join(shared_file(*SS2).read_bytes().split(b"\n")[:342]) + b"\n"
    fifo, out = tmp_path / "wheel.fifo", tmp_path / "w.csv"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer():
        with open(fifo, "wb") as fh:  # (blocks until the recorder has the FIFO open)
            fh.write(data)
            fh.flush()
            done.wait(120)  # the controller stays connected

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    p = subprocess.Popen([sys.executable, "-m", "rngcert", "record", str(fifo), "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        _wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 4 or p.poll() is not None, "three games in the log")
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        done.set()
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err.decode()
    assert "record: stopped (SIGTERM); every decided game is in the log" in err.decode(), err.decode()
    assert [r["game"] for r in csv.DictReader(out.open())] == ["011", "012", "013", "014"]


def test_scratch_folders_are_removed_only_by_the_process_that_made_them(tmp_path, monkeypatch):
    """``remove_own`` (the SIGTERM handler's) removes this process's folders, never one a parent made (a forked pool
    worker inherits its parent's list)."""
    monkeypatch.setattr(scratch, "_LIVE", {})
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    mine = scratch.make("rngcert-test-")
    (tmp_path / "parent").mkdir()
    scratch._LIVE[str(tmp_path / "parent")] = os.getpid() + 1  # made by another process
    assert scratch.live() == [type(tmp_path)(mine)]
    assert scratch.remove_own() == [mine]
    assert not os.path.exists(mine) and (tmp_path / "parent").is_dir()
    with scratch.folder("rngcert-test-") as d:
        assert os.path.isdir(d) and scratch.live() == [type(tmp_path)(d)]
    assert not os.path.exists(d) and scratch.live() == []


@posix
def _ctrl_c_as_at_a_terminal() -> None:
    """SIGINT at its default in the child, as a command run at a terminal has it: a shell without job control starts
    a background job with SIGINT ignored (POSIX), and the watch inherited that when the suite was started so
    (``bash .ci/run &`` from a script): Python then installs no KeyboardInterrupt, and the test waited 60 s for a
    watch that never saw the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_followed_watch_stopped_from_outside_sums_up_and_exits_0(tmp_path, sig):
    """`watch --follow` runs until it is stopped: Ctrl-C or SIGTERM (a service manager's stop) ended it with no summary
    and no ``end`` event (click's 'Aborted!', exit 1; SIGTERM: killed). Now it says why it stopped, sums up what it read
    (the gap of spin ids 41-45 included) and writes the ``end`` event, exit 0, as at --max-idle."""
    log = tmp_path / "live.csv"
    ids = [k for k in range(1, 201) if not 41 <= k <= 45]
    log.write_text("spin_id,result\n" + "".join(f"{k},{k * 7 % 37}\n" for k in ids))
    p = subprocess.Popen([sys.executable, "-m", "rngcert", "watch", str(log), "--follow", "--interval", "0.05", "--json", "--no-record",
                          "--db", str(tmp_path / "s.duckdb")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                         preexec_fn=_ctrl_c_as_at_a_terminal)
    seen: list[str] = []

    def read_out():
        for ln in p.stdout:
            seen.append(ln.decode())

    t = threading.Thread(target=read_out, daemon=True)
    t.start()
    try:
        _wait_for(lambda: any('"event": "status"' in x for x in seen) or p.poll() is not None, "a status event")
        assert p.poll() is None, (seen, p.stderr.read())
        p.send_signal(sig)
        p.wait(60)
        t.join(10)
        err = p.stderr.read().decode()
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    how = "SIGTERM" if sig == signal.SIGTERM else "Ctrl-C"
    assert f"watch: stopped ({how})" in err and "gap" in err, err
    import json

    end = json.loads(seen[-1])
    assert end["event"] == "end" and end["spins"] == {"live": 195} and end["missing_ids"] == {"live": 5}, end


def _small_log(tmp_path):
    log = tmp_path / "a.csv"
    log.write_text("result\n" + "\n".join(str(k * 7 % 37) for k in range(3700)) + "\n")
    return log


@posix
def test_a_sigterm_while_the_report_is_written_leaves_no_report_folder(tmp_path):
    """SIGTERM after rejects.csv was written and before report.json: the report's folder is removed with the run's
    temporary folders. Before, ``reports/european-<time>/`` stayed with rejects.csv (and report.html, report.pdf)
    but no report.json. The signal is sent by the process itself from inside the HTML rendering (no race)."""
    log, out = _small_log(tmp_path), tmp_path / "reports"
    script = (
        "import os, signal, sys\n"
        "import rngcert.report.writer as w\n"
        "real = w.render_html\n"
        "def render(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # the time limit strikes while the report is written\n"
        "    return real(*a, **k)\n"
        "w.render_html = render\n"
        "from rngcert.cli import main\n"
        f"sys.argv = ['rngcert', 'certify', {str(log)!r}, '--no-plots', '--out', {str(out)!r}]\n"
        "main()\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "TMPDIR": str(tmp_path)})
    assert p.returncode == 143, p.stderr.decode()
    assert "stopped by SIGTERM" in p.stderr.decode(), p.stderr.decode()
    assert list(out.iterdir()) == [], [list(d.iterdir()) for d in out.iterdir()]


def test_ctrl_c_while_the_report_is_written_leaves_no_report_folder(tmp_path, cli, monkeypatch):
    """Ctrl-C after rejects.csv was written: exit 130 and no report folder (it stayed with rejects.csv only)."""
    import rngcert.report.writer as w

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(w, "render_html", interrupted)
    out = tmp_path / "reports"
    r = cli("certify", _small_log(tmp_path), "--no-plots", "--out", out)
    assert r.exit_code == 130, r.output
    assert list(out.iterdir()) == [], [list(d.iterdir()) for d in out.iterdir()]
    assert scratch.live() == []


@pytest.mark.parametrize("how", ["RuntimeError", "InterruptException"])
def test_ctrl_c_during_a_store_query_is_exit_130_not_an_internal_error(tmp_path, cli, monkeypatch, how):
    """DuckDB handles Ctrl-C itself while a query runs and raises ``RuntimeError('Query interrupted')`` (DuckDB 2.0;
    ``duckdb.InterruptException`` in others): an export (or ingest, audit) interrupted there ended with exit 1,
    'internal error … please report it'. It is Ctrl-C: exit 130, the export's temporary folder removed."""
    import duckdb

    from rngcert.collect.store.export import ExportMixin

    db = tmp_path / "s.duckdb"
    assert cli("ingest", _small_log(tmp_path), "--db", db).exit_code == 0

    def interrupted(self, *a, **k):
        raise RuntimeError("Query interrupted") if how == "RuntimeError" else duckdb.InterruptException("Query interrupted")

    monkeypatch.setattr(ExportMixin, "_export_spins", interrupted)
    r = cli("export", "--db", db, "--parquet", tmp_path / "x")
    assert r.exit_code == 130 and "stopped by Ctrl-C" in r.stderr and "internal error" not in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "s.duckdb"]


_DEAF_POOL = """
import os, signal, sys, time
from pathlib import Path
from rngcert.cli import _common
from rngcert.pipeline.parallel import Plan, iter_items
D = Path(sys.argv[1])
def deaf(i):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # a worker whose SIGTERM handler does not run
    (D / f"worker.{os.getpid()}").write_text("")
    time.sleep(600)
    return i
signal.signal(signal.SIGTERM, _common._on_sigterm)
for _ in iter_items(deaf, [0, 1], plan=Plan(workers=2)):
    pass
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_command_stopped_by_sigterm_ends_its_workers_even_when_they_do_not_end_on_sigterm(tmp_path):
    """The command's SIGTERM handler ends its pool's workers before it ends: SIGTERM, then SIGKILL after
    ``WORKER_GRACE_S``. Before, it relied on the kernel's SIGTERM to each worker at its end: a worker that did not act
    on it (seen: an ``rngcert bits`` worker blocked writing its result to the ended command's pipe) ran on, here for
    600 s. The workers block SIGTERM themselves; the signal is sent once both have said they run."""
    p = subprocess.Popen([sys.executable, "-c", _DEAF_POOL, str(tmp_path)], stdout=subprocess.DEVNULL,
                         stderr=(tmp_path / "err").open("wb"), cwd=tmp_path)
    pids: list[int] = []
    try:
        _wait_for(lambda: len(list(tmp_path.glob("worker.*"))) == 2 or p.poll() is not None, "two running workers")
        pids = [int(w.name.split(".")[1]) for w in tmp_path.glob("worker.*")]
        assert p.poll() is None, (tmp_path / "err").read_text()
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=120) == 143, (tmp_path / "err").read_text()
        assert [pid for pid in pids if process_alive(pid)] == []
    finally:
        end_processes(p, pids)


def test_ingest_json_stopped_after_a_file_was_committed_lists_it(tmp_path, cli, monkeypatch):
    """``ingest --json`` stopped (Ctrl-C here; SIGTERM and an error write the same document) after its first file was
    committed: the JSON error document lists that file, as the human output had already said it; it listed nothing,
    so a program could not tell what was stored."""
    import rngcert.collect.store.core as core

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for k, f in enumerate((a, b)):
        f.write_text("table,spin_id,result\n" + "\n".join(f"T{k},{i},{i * 7 % 37}" for i in range(1, 371)) + "\n")
    real = core.prepare_file

    def second_interrupted(p, *args, **kw):
        if str(p).endswith("b.csv"):
            raise KeyboardInterrupt
        return real(p, *args, **kw)

    monkeypatch.setattr(core, "prepare_file", second_interrupted)
    r = cli("ingest", a, b, "--db", tmp_path / "s.duckdb", "--json")
    assert r.exit_code == 130, r.output
    import json

    doc = json.loads(r.stdout)
    assert doc["exit_code"] == 130 and [f["path"] for f in doc["files"]] == [str(a)] and doc["files"][0]["status"] == "ingested", doc


def test_ingest_json_error_document_does_not_say_an_already_stored_file_was_committed(tmp_path, cli):
    """A file already stored by an earlier run, then a file in error: the document listed the first and said 'the files
    listed in files were committed before the error', though this run committed nothing of it."""
    import json

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("spin_id,result\n1,5\n2,7\n")
    b.write_text("foo,bar\n1,2\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", a, "--db", db).exit_code == 0
    r = cli("ingest", a, b, "--db", db, "--json")
    assert r.exit_code == 3, r.output
    doc = json.loads(r.stdout)
    assert [f["status"] for f in doc["files"]] == ["already ingested"], doc
    assert "were committed before" not in doc["stored"] and "'already ingested': stored before, nothing added" in doc["stored"], doc
