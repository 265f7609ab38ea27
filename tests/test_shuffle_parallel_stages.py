"""`shuffle certify` of a procedure on a local pool (issue 26 item 6): the sensitivity grid's points run
on the workers while this process runs the other stages, the batteries' caches are filled in this process
while the workers simulate (so that the workers forked later inherit them), and the report is the serial
run's, whichever way the stages ran. Also the ``meanwhile`` hook of :func:`rngcert.pipeline.parallel.map_items`
that both use."""

from __future__ import annotations

import json
import os

import pytest

from rngcert.pipeline.parallel import Plan, map_items

VOLATILE = ("generated_utc", "command", "integrity")


def _square(x):
    return x * x


def _pid(_):
    return os.getpid()


def test_meanwhile_runs_once_in_this_process_in_every_mode(monkeypatch):
    """Serially before the items; on a local pool while its workers run them (they are forked before it:
    a worker does not see what it did); its CPU is not counted as the items'."""
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    for plan in (Plan(workers=1), Plan(workers=2)):
        calls = []
        timings: dict = {}
        got = map_items(_pid, range(4), plan=plan, timings=timings, meanwhile=lambda: calls.append(os.getpid()))
        assert calls == [os.getpid()] and timings["meanwhile_s"] >= 0.0
        if plan.workers == 2:
            assert timings["mode"] == "local pool" and os.getpid() not in got
        else:
            assert timings["mode"] == "serial" and got == [os.getpid()] * 4
    # a pool that does not start: the hook still runs once, then the items serially here
    from rngcert.pipeline.parallel import ClusterFallbackWarning

    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)
    monkeypatch.setattr(os, "fork", refuse)
    calls = []
    with pytest.warns(ClusterFallbackWarning):
        assert map_items(_square, [1, 2, 3], plan=Plan(workers=2), meanwhile=lambda: calls.append(1)) == [1, 4, 9]
    assert calls == [1]


def _certify(plan, timings_file, monkeypatch, **kw):
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle.procedure import certify_procedure

    monkeypatch.setenv("RNGCERT_TIMINGS", str(timings_file))
    cert = certify_procedure(load_procedure("baccarat-004"), seed=5, n_resamples=199, figures=False, plan=plan, **kw)
    monkeypatch.delenv("RNGCERT_TIMINGS")
    rec = [json.loads(ln) for ln in timings_file.read_text().splitlines()] if timings_file.exists() else []
    timings_file.unlink(missing_ok=True)
    return {k: v for k, v in cert.report.items() if k not in VOLATILE}, {(r["func"], r["mode"]) for r in rec}


@pytest.mark.slow
def test_shuffle_stages_on_a_pool_give_the_serial_report(tmp_path, monkeypatch):
    """The grid (4 of its points, 100 tables each) beside the other stages, and without a grid the stages on
    the pool after the caches were filled here: both reports equal the serial run's, remedies included."""
    import functools

    import rngcert.pipeline.certify_shuffle.procedure as P

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(P, "_sensitivity_grid", functools.partial(P._sensitivity_grid, clumps=(1.0, 4.0), travels=(0.15,), riffles=(1, 2)))
    t = tmp_path / "t.jsonl"
    kw = dict(tables=150, burn_in=2, sensitivity=True, sensitivity_tables=100)
    serial, modes = _certify(Plan(workers=1), t, monkeypatch, **kw)
    assert all(mode == "serial" for _, mode in modes)
    assert len(serial["sensitivity"]["rows"]) == 4 and serial["first_shoe"]["verdict"] == "FAIL" and serial["first_shoe"]["remedies_tried"]
    pooled, modes = _certify(Plan(workers=2), t, monkeypatch, **kw)
    assert pooled == serial
    # the grid on the pool, the other stages serially in this process meanwhile
    assert ("_sensitivity_point", "local pool") in modes and ("_stage_item", "serial") in modes, modes
    kw["sensitivity"] = False
    serial, _ = _certify(Plan(workers=1), t, monkeypatch, **kw)
    pooled, modes = _certify(Plan(workers=2), t, monkeypatch, **kw)
    assert pooled == serial
    # the batteries and the first shoe's candidates on one pool
    assert {("_stage_item", "local pool"), ("_stage_two_item", "local pool")} <= modes, modes


class _Proc:
    def parameters(self):
        return []


def _remedy(item):
    """A remedy work item that only says which candidate it is and the process it ran in; index 3 is the remedy."""
    _, label, change, *_ = item
    return {"change": label, "verdict": "PASS" if change["i"] == 3 else "FAIL", "pid": os.getpid()}, change["i"] == 3


@pytest.mark.parametrize("workers", [1, 2])
def test_remedy_waves_with_one_candidate_here(monkeypatch, workers):
    """Waves of one candidate a worker and one in this process (the search on a cluster, or where a pool does not pay):
    the remedy and the candidates tried are the serial search's."""
    from rngcert.pipeline.certify_shuffle import procedure as P

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(P, "_remedies", lambda proc: [(f"candidate {i}", {"i": i}) for i in range(6)])
    monkeypatch.setattr(P, "_remedy_item", _remedy)
    fix, tried = P._first_shoe_remedy(_Proc(), 1, tables=10, alpha=0.01, threshold=0.0, n_resamples=9, standard="edge", bj_rules=None,
                                      plan=Plan(workers=workers))
    assert fix == "candidate 3"
    assert [t["change"] for t in tried] == [f"candidate {i}" for i in range(4)]
    pids = [t["pid"] for t in tried]
    if workers == 2:  # waves of 3: candidates 0 and 3 here, 1 and 2 on the two workers
        assert pids[0] == pids[3] == os.getpid() and os.getpid() not in pids[1:3]
    else:
        assert pids == [os.getpid()] * 4


class _Outcome:
    def __init__(self, verdict):
        self.verdict = verdict


def _battery(item):
    """A battery work item that says which section it is: the first shoe's verdict is the item's third field."""
    data, kw, verdict = item
    return _Outcome(verdict if kw["group"] == "first-shoe" else "PASS"), [kw["group"], os.getpid()]


def _candidates(n, remedy_at=None):
    return [(_Proc(), f"candidate {i}", {"i": i, "remedy_at": remedy_at}, 1, 10, {}) for i in range(n)]


def _candidate(item):
    """A remedy work item that says which candidate it is and where it ran; ``remedy_at`` is the remedy."""
    return {"change": item[1], "pid": os.getpid()}, item[2]["i"] == item[2]["remedy_at"]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("remedy_at", [0, 3, None])
def test_batteries_and_remedies_on_one_pool_give_the_serial_search(monkeypatch, workers, remedy_at):
    """The two batteries and the first shoe's candidates as items of one pool (no barrier between them): the remedy and
    the candidates tried are the serial search's (:func:`_first_shoe_remedy`), wherever the first remedy is, or none."""
    from rngcert.pipeline.certify_shuffle import procedure as P

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    pair = [(None, {"group": "steady-state"}, "FAIL"), (None, {"group": "first-shoe"}, "FAIL")]
    # (module-level functions given, not patched in: a pool started by a fork server, as under pytest-xdist, imports them)
    both, (fix, tried) = P._batteries_and_remedies(Plan(workers=workers), pair, [1.0, 1.0], _candidates(6, remedy_at), 1.0,
                                                   battery=_battery, remedy=_candidate)
    assert [b[1][0] for b in both] == ["steady-state", "first-shoe"] and both[1][0].verdict == "FAIL"
    last = 5 if remedy_at is None else remedy_at
    assert fix == (None if remedy_at is None else f"candidate {remedy_at}")
    assert [t["change"] for t in tried] == [f"candidate {i}" for i in range(last + 1)]


def test_candidates_not_needed_are_not_computed(monkeypatch):
    """A first shoe that is not FAIL needs no remedy: the candidates after it are skipped, not computed (serially: none;
    on a pool, at most one a worker that was started before the first shoe's result came back), and the result says
    no search ran."""
    from rngcert.pipeline.certify_shuffle import procedure as P

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    computed = []
    pair = [(None, {"group": "steady-state"}, "FAIL"), (None, {"group": "first-shoe"}, "PASS")]
    both, searched = P._batteries_and_remedies(Plan(workers=1), pair, [1.0, 1.0], _candidates(4), 1.0, battery=_battery,
                                               remedy=lambda item: computed.append(item[1]) or ({"change": item[1]}, False))
    assert searched is None and both[1][0].verdict == "PASS" and computed == []
    # an earlier remedy settles the search too: serially, the candidates after it are never computed
    pair[1] = (None, {"group": "first-shoe"}, "FAIL")
    both, (fix, tried) = P._batteries_and_remedies(Plan(workers=1), pair, [1.0, 1.0], _candidates(4, 1), 1.0, battery=_battery,
                                                   remedy=lambda item: computed.append(item[1]) or _candidate(item))
    assert fix == "candidate 1" and computed == ["candidate 0", "candidate 1"] and len(tried) == 2


def test_overlap_only_where_it_pays():
    from rngcert.pipeline.certify_shuffle.procedure import _overlap_pays

    assert _overlap_pays(0.7, 3.8, 2)  # the benchmark's grid: 500 shoes, 32 points of 100 tables
    assert not _overlap_pays(20.0, 3.8, 2)  # a long main run: it takes its own pool first
    assert not _overlap_pays(2.5, 10.6, 16)  # many cores: the main run on them, then the grid
    assert not _overlap_pays(1.0, 1.0, 1)


def test_grid_workers_beside_the_stages_lower_their_own_priority_once(monkeypatch):
    """A forked worker running the grid beside the stages adds GRID_NICE to its niceness (the stages, the
    critical path, get the cores first); the process that runs the stages never changes its own."""
    import rngcert.pipeline.certify_shuffle.procedure as P

    before = os.nice(0)
    monkeypatch.setattr(P, "_BESIDE", os.getpid())
    P._yield_to_stages()  # in the stages' own process: nothing
    assert os.nice(0) == before and P._BESIDE == os.getpid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a worker: lowers its priority once
        P._yield_to_stages()
        P._yield_to_stages()
        os.write(w, str(os.nice(0)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    assert int(os.read(r, 100)) == min(19, before + P.GRID_NICE)
    os.close(r)


def _figure_pid(fig_fn):
    def draw(*args, **kwargs):
        fig = fig_fn(*args, **kwargs)
        return type(fig)(fig.id, fig.title, fig.data_base64, f"{fig.caption} [pid {os.getpid()}]", fig.mime)
    return draw


def test_battery_items_draw_their_sections_figures_on_the_workers(monkeypatch):
    """The steady-state and first-shoe figures are drawn by the work item that ran the section's battery (on a
    pool: in the workers, at once, instead of one after the other in this process after both batteries); the
    figures are the serial run's, drawing for drawing."""
    import rngcert.pipeline.certify_shuffle.procedure as P
    from rngcert.equipment.procedure import load_procedure

    certify_procedure = P.certify_procedure
    # the plots module the battery item's _figures draws with (whatever other tests did to sys.modules before)
    plots = P._figures.__globals__["plots"]
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(plots, "position_heatmap", _figure_pid(plots.position_heatmap))
    got = {}
    for w in (1, 2):
        cert = certify_procedure(load_procedure("baccarat-004"), seed=5, n_resamples=99, figures=True, tables=150, burn_in=2,
                                 plan=Plan(workers=w))
        got[w] = cert
    serial, pooled = got[1], got[2]
    assert [len(f) for f in serial.figures] == [4, 4]  # heat map, rising sequences, guessing, p-values; each section
    heat = [[f for f in sec if f.id == "position_heatmap"][0] for sec in pooled.figures]
    # drawn by the workers, not here (forked workers inherit the patch and name their pids; workers of a fork server,
    # used when another test left a thread running here, draw without it)
    assert not any(h.caption.endswith(f"[pid {os.getpid()}]") for h in heat)
    pids = {h.caption.rsplit("[pid ", 1)[1] for h in heat if "[pid " in h.caption}
    assert len(pids) in (0, 2)
    assert all(h.caption.endswith(f"[pid {os.getpid()}]") for sec in serial.figures for h in sec if h.id == "position_heatmap")
    strip = lambda figs: [[(f.id, f.title, f.data_base64, f.caption.rsplit(" [pid ", 1)[0]) for f in sec] for sec in figs]  # noqa: E731
    assert strip(pooled.figures) == strip(serial.figures)
    assert {k: v for k, v in pooled.report.items() if k not in VOLATILE} == {k: v for k, v in serial.report.items() if k not in VOLATILE}
