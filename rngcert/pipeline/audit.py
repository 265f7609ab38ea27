"""Periodic wheel-bias audits on stored spins, and the live watch.

An audit runs exactly the ``certify`` battery (:func:`rngcert.pipeline.certify_wheel.certify_spins`) on a window
of one table's stored spins, so its p-values equal ``certify``'s on the same spins with the same
seed, then adds the trend: the table's earlier audits and chi-square tests of homogeneity of
pocket frequencies between this window and the previous one, and between dealers. Tables are
independent work items (:func:`compute_audit` does no I/O), so ``audit --all`` can run them in
parallel (``jobs``).

The watch keeps the e-detector of :mod:`rngcert.stats.sequential` over a growing log or a stored
table and raises an alarm when the evidence crosses its threshold; guarantee: with ``alpha`` and
``horizon`` N, the probability of any false alarm during the first N spins of a fair wheel is at
most ``alpha`` and the mean time to a false alarm is at least N/alpha spins.
"""

from __future__ import annotations

import datetime as _dt
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rngcert.stats import sequential as sq
from rngcert.stats.result import jsonable

#: Spawn key (second element) of the audit's homogeneity tests (the battery uses (table, CRC)).
_HOMOGENEITY_KEY = 0x484F4D  # "HOM"


@dataclass
class AuditResult:
    """One table's audit."""

    table: str
    report: dict
    figures: list
    certification: object
    window: dict
    trend: dict
    audit_id: int | None = None
    paths: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return self.report["verdict"]


# ---------------------------------------------------------------------------- spins → SpinLog
def spinlog_from_store(stored, wheel, *, notes: Sequence[str] = ()):
    """Build the :class:`~rngcert.collect.spinlog.SpinLog` of one stored table window, as
    ``read_spin_log`` would have built it from the same rows (same outcome order, dealer
    indices, directions and release pockets)."""
    from rngcert.collect.spinlog import SpinLog, TableSpins

    acc = ~stored.void
    all_pos = bool(np.all(stored.pos[acc] >= 0))
    if wheel.kind == "roulette" or (wheel.order_known and all_pos):
        level, space, out = "position", wheel.position_space(), stored.pos
    else:
        level, space, out = "symbol", wheel.symbol_space(), stored.sym
    lognotes = list(notes)
    if level == "symbol" and wheel.order_known:
        lognotes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
    t = TableSpins(table=stored.table, outcomes=out[acc].astype(np.int32), void=int(stored.void.sum()))
    if stored.release is not None:
        t.release = stored.release[acc].astype(np.int32)
    if stored.direction is not None:
        t.direction = stored.direction[acc].astype(np.int8)
    if stored.dealer is not None:
        codes = stored.dealer[acc]
        used = np.flatnonzero(np.bincount(codes, minlength=len(stored.dealer_labels)))  # sorted codes present
        rank = np.zeros(len(stored.dealer_labels), dtype=np.int32)
        rank[used] = np.arange(used.size, dtype=np.int32)
        t.dealer = rank[codes]
        t.dealer_labels = tuple(stored.dealer_labels[u] if stored.dealer_labels[u] else "(none)" for u in used)
    return SpinLog(wheel, level, space, {stored.table: t}, [], [], lognotes)


# ---------------------------------------------------------------------------- bias estimates
def bias_estimates(counts: np.ndarray, probs: np.ndarray, labels: Sequence[str], outcome) -> dict:
    """Plain bias estimates of a window: the most over-represented pocket, the best arc of the
    sector scan and the first-harmonic amplitude (from the battery's results)."""
    n = int(counts.sum())
    out: dict = {"n": n}
    if n:
        rel = counts / (n * probs) - 1.0
        j = int(np.argmax(rel))
        out["max_pocket"] = {"label": labels[j], "relative_excess": float(rel[j]), "count": int(counts[j]), "expected": float(n * probs[j])}
        i = int(np.argmin(rel))
        out["min_pocket"] = {"label": labels[i], "relative_excess": float(rel[i]), "count": int(counts[i]), "expected": float(n * probs[i])}
    for r in outcome.results:
        if not r.applicable:
            continue
        if r.name == "sector_scan":
            out["best_arc"] = r.details.get("best_arc")
        elif r.name == "first_harmonic":
            out["first_harmonic"] = {k: r.details.get(k) for k in ("amplitude", "phase_pockets", "mean_resultant_length")}
    return jsonable(out)


# ---------------------------------------------------------------------------- one audit (pure)
def compute_audit(
    log,
    *,
    previous_counts: np.ndarray | None = None,
    previous_window: dict | None = None,
    earlier: Sequence[dict] = (),
    alpha: float = 0.01,
    seed: int | None = None,
    n_resamples: int = 9999,
    required_bias: float | None = None,
    power: float = 0.9,
    command: str | None = None,
    figures: bool = True,
    notes: Sequence[str] = (),
) -> tuple:
    """Run the certify battery on one table's window and add the trend section (no I/O).

    Returns
    -------
    (Certification, trend dict)
    """
    from rngcert.pipeline.certify_wheel import certify_spins

    cert = certify_spins(
        log, alpha=alpha, seed=seed, n_resamples=n_resamples, required_bias=required_bias, power=power,
        command=command, figures=figures, notes=notes, kind="audit",
    )
    (name, t), = log.tables.items()
    cert.report["subject"] = f"{log.wheel.name}, table {name}"
    _window_inputs(cert.report, name, t)
    entropy = int(cert.report["seed"]["entropy"])
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(0, _HOMOGENEITY_KEY))))
    m = log.space.m
    counts = np.bincount(t.outcomes, minlength=m)
    trend: dict = {"earlier_audits": [_audit_summary(a) for a in earlier]}
    if previous_counts is not None and previous_counts.sum() > 0:
        res = sq.homogeneity_chisquare(
            np.stack([previous_counts, counts]), rng=rng, n_resamples=min(n_resamples, 1999),
            name="window_homogeneity", group_labels=("previous window", "this window"),
        )
        trend["window_homogeneity"] = res.to_dict()
        trend["previous_window"] = previous_window
    else:
        trend["window_homogeneity"] = {"applicable": False, "reason": "no earlier spins of this table in the store"}
    if t.dealer is not None and len(t.dealer_labels) >= 2:
        tab = np.zeros((len(t.dealer_labels), m), dtype=np.int64)
        np.add.at(tab, (t.dealer, t.outcomes), 1)
        res = sq.homogeneity_chisquare(tab, rng=rng, n_resamples=min(n_resamples, 1999), name="dealer_homogeneity", group_labels=t.dealer_labels)
        trend["dealer_homogeneity"] = res.to_dict()
    else:
        trend["dealer_homogeneity"] = {"applicable": False, "reason": "the log names fewer than two dealers in this window"}
    trend["bias"] = bias_estimates(counts, np.asarray(log.space.probs), log.space.labels, cert.outcomes[0])
    cert.report["audit"] = jsonable(trend)
    return cert, trend


def _window_inputs(report: dict, table: str, t) -> None:
    """The audit report's inputs and counts describe this table's window, not the whole files the
    store read the spins from (their SHA-256 still identifies them)."""
    n, void = int(t.n), int(t.void)
    for f in report["inputs"]:
        f["summary"] = (
            f"stored file (SHA-256 below; {f.get('rows')} rows in all, every table); "
            f"this audit reads {n} spins and {void} void spins of table {table} from the store"
        )
    report["rows"] = {"accepted": n, "void": void, "rejected": report.get("rejected_count", 0)}


def _audit_summary(a: dict) -> dict:
    return jsonable(
        {
            "audit_id": a.get("audit_id"),
            "created_utc": str(a.get("created_utc")),
            "window": {"first_ts": str(a.get("first_ts")), "last_ts": str(a.get("last_ts")), "first_seq": a.get("first_seq"), "last_seq": a.get("last_seq"), "n": a.get("n")},
            "verdict": a.get("verdict"),
            "pvalues": a.get("pvalues"),
            "bias": a.get("bias"),
            "report_path": a.get("report_path"),
            "report_sha256": a.get("report_sha256"),
        }
    )


# ---------------------------------------------------------------------------- store-level audit
def audit_table(
    store,
    table: str,
    *,
    since=None,
    until=None,
    last: int | None = None,
    alpha: float = 0.01,
    seed: int | None = None,
    n_resamples: int = 9999,
    required_bias: float | None = None,
    power: float = 0.9,
    outdir: str | Path | None = "reports",
    figures: bool = True,
    command: str | None = None,
    record: bool = True,
) -> AuditResult:
    """Audit one stored table: load the window, run :func:`compute_audit`, write the report
    (when ``outdir``) and the audit record (when ``record``)."""
    work = prepare_audit(store, table, since=since, until=until, last=last)
    cert, trend = compute_audit(
        work["log"], previous_counts=work["previous_counts"], previous_window=work["previous_window"], earlier=work["earlier"],
        alpha=alpha, seed=seed, n_resamples=n_resamples, required_bias=required_bias, power=power, command=command, figures=figures,
        notes=work["notes"],
    )
    return finish_audit(store, work, cert, trend, outdir=outdir, record=record, alpha=alpha, n_resamples=n_resamples)


def prepare_audit(store, table, *, since=None, until=None, last=None) -> dict:
    """Load everything one audit needs from the store (window spins, previous window, earlier audits)."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.errors import NoDataError

    stored = store.spins(table, since=since, until=until, last=last, with_ids=False)
    if stored.n == 0 or not np.any(~stored.void):
        raise NoDataError(f"table {table!r}: no spins in the window (since={since}, until={until}, last={last})")
    wheel = load_wheel(stored.equipment)
    window = {
        "table": table, "since": None if since is None else str(since), "until": None if until is None else str(until), "last": last,
        "first_seq": int(stored.seq.min()), "last_seq": int(stored.seq.max()), "n": int((~stored.void).sum()), "void": int(stored.void.sum()),
        "first_ts": _ts(stored.ts.min()) if stored.ts is not None else None, "last_ts": _ts(stored.ts.max()) if stored.ts is not None else None,
    }
    notes = [f"audit of stored table {table!r}: spins with seq {window['first_seq']}..{window['last_seq']} of store {store.path}"]
    log = spinlog_from_store(stored, wheel, notes=notes)
    log.sources = store.source_infos(stored.source_ids)
    log.rejected = store.rejected_rows(stored.source_ids)
    earlier = store.audits(table)
    # previous window: the most recent earlier audit's window if it ends before this one starts,
    # else the same number of spins just before this window.
    prev_counts, prev_window = None, None
    cand = [a for a in earlier if a["last_seq"] is not None and a["last_seq"] < window["first_seq"]]
    m = log.space.m
    key = "pos" if log.level == "position" else "sym"
    if cand:
        a = cand[-1]
        ps = store.spins(table, after_seq=a["first_seq"] - 1, before_seq=a["last_seq"] + 1, with_ids=False)
        prev_window = {"kind": f"window of audit {a['audit_id']}", "first_seq": a["first_seq"], "last_seq": a["last_seq"]}
    else:
        ps = store.spins(table, before_seq=window["first_seq"], with_ids=False)
        if ps.n:
            k = int((~ps.void).sum())
            keep = max(0, k - window["n"])
            idx = np.flatnonzero(~ps.void)[keep:] if k else np.zeros(0, int)
            ps.pos, ps.sym, ps.void, ps.seq = ps.pos[idx], ps.sym[idx], ps.void[idx], ps.seq[idx]
        prev_window = {"kind": "the spins just before this window (as many as in it, where available)"}
    if ps.n and np.any(~ps.void):
        vals = getattr(ps, key)[~ps.void]
        vals = vals[vals >= 0]
        prev_counts = np.bincount(vals, minlength=m)
        prev_window.update({"first_seq": int(ps.seq.min()), "last_seq": int(ps.seq.max()), "n": int(prev_counts.sum())})
    return {"table": table, "stored": stored, "wheel": wheel, "window": window, "log": log, "earlier": earlier,
            "previous_counts": prev_counts, "previous_window": prev_window, "notes": notes}


def finish_audit(store, work, cert, trend, *, outdir, record, alpha, n_resamples) -> AuditResult:
    """Write the report and the audit record of a computed audit."""
    from rngcert.report.writer import report_dir, write_report

    table, window = work["table"], work["window"]
    cert.report["audit"]["window"] = window
    paths = {}
    if window.get("first_ts") or window.get("last_ts"):
        cert.report["period"] = {"first": window.get("first_ts"), "last": window.get("last_ts")}
    if outdir is not None:
        out = report_dir(outdir, f"{work['wheel'].id}-{_safe(table)}")
        paths = write_report(cert.report, cert.figures, cert.log.rejected, out)
    res = AuditResult(table, cert.report, cert.figures, cert, window, trend, paths=paths)
    if record:
        tr = cert.report["tables"][0]["battery"]
        tests = [
            {
                "name": x["name"], "requirement": x["requirement"], "applicable": x["applicable"], "statistic": x.get("statistic"),
                "df": x.get("df"), "pvalue": x.get("pvalue"), "pvalue_holm": x.get("pvalue_holm"), "method": x.get("method"), "reason": x.get("reason"),
            }
            for x in tr["tests"]
        ]
        hom = {k: trend.get(k) for k in ("window_homogeneity", "dealer_homogeneity", "previous_window")}
        rec = {
            "table_id": table, "equipment": work["stored"].equipment, "created_utc": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
            "since": window["since"], "until": window["until"], "last_n": window["last"], "first_seq": window["first_seq"], "last_seq": window["last_seq"],
            "first_ts": window["first_ts"], "last_ts": window["last_ts"], "n": window["n"], "void": window["void"], "verdict": cert.report["verdict"],
            "seed": cert.report["seed"]["entropy"], "alpha": alpha, "n_resamples": n_resamples, "report_path": str(paths.get("json", "")) or None,
            "report_sha256": (cert.report.get("integrity") or {}).get("report_sha256"),
            "pvalues": json.dumps(jsonable({x["name"]: x["pvalue"] for x in tests if x["applicable"]})),
            "bias": json.dumps(jsonable(trend["bias"])), "homogeneity": json.dumps(jsonable(hom)),
        }
        res.audit_id = store.record_audit(rec, tests)
    return res


def audit_all(store, *, jobs: int = 1, progress: Callable[[str], None] | None = None, **kw) -> list[AuditResult]:
    """Audit every table of the store. Tables are independent: with ``jobs > 1`` their batteries
    run in a thread pool (numpy/scipy release the GIL in the heavy parts); loading and recording
    stay on the calling thread because one DuckDB connection serves them."""
    from rngcert.errors import NoDataError

    tables = [t["table"] for t in store.tables() if t["spins"]]
    window = {k: kw.pop(k, None) for k in ("since", "until", "last")}
    outdir, record = kw.pop("outdir", "reports"), kw.pop("record", True)
    works = []
    for t in tables:
        try:
            works.append(prepare_audit(store, t, **window))
        except NoDataError:
            if progress:
                progress(f"table {t}: no spins in the window, skipped")

    figures = kw.pop("figures", True)

    def run(w, figs):
        return compute_audit(w["log"], previous_counts=w["previous_counts"], previous_window=w["previous_window"], earlier=w["earlier"], notes=w["notes"], figures=figs, **kw)

    if jobs > 1:
        # matplotlib (pyplot) is not thread-safe: batteries in threads, figures afterwards here
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            computed = list(ex.map(lambda w: run(w, False), works))
        if figures:
            from rngcert.pipeline.certify_wheel import _figures

            for cert, _ in computed:
                (t,) = cert.log.tables.values()
                cert.figures = [_figures(t.outcomes, cert.log.space, cert.outcomes[0])]
    else:
        computed = [run(w, figures) for w in works]
    out = []
    for w, (cert, trend) in zip(works, computed):
        out.append(finish_audit(store, w, cert, trend, outdir=outdir, record=record, alpha=kw.get("alpha", 0.01), n_resamples=kw.get("n_resamples", 9999)))
        if progress:
            progress(f"table {w['table']}: {out[-1].verdict}")
    return out


def _ts(us) -> str | None:
    if us is None or us == np.iinfo(np.int64).min:
        return None
    return _dt.datetime.fromtimestamp(int(us) / 1e6, _dt.timezone.utc).replace(tzinfo=None).isoformat()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


# ---------------------------------------------------------------------------- watch
@dataclass
class WatchStatus:
    spins: int
    blocks: int
    log_evidence: float
    log_threshold: float
    leader: str
    alarm: bool
    alarm_spin: int | None = None

    def line(self) -> str:
        state = "ALARM" if self.alarm else "ok"
        return (
            f"{self.spins} spins · evidence log M = {self.log_evidence:.2f} / threshold {self.log_threshold:.2f} "
            f"(M/A = {np.exp(self.log_evidence - self.log_threshold):.2g}) · leading: {self.leader} · {state}"
        )


class Watcher:
    """Incremental e-detector over a stream of spins (wheel positions, void spins removed).

    Spins are buffered into blocks of ``block``; after each full block the mixture
    Shiryaev–Roberts e-detector (:func:`rngcert.stats.sequential.e_detector`) is updated.
    Guarantee: :func:`rngcert.stats.sequential.detector_threshold` (any false alarm within
    ``horizon`` spins has probability <= ``alpha``; mean time to false alarm >= horizon/alpha).
    """

    def __init__(self, space, *, alpha: float = 0.01, horizon: int = 100_000, block: int = 100, release: bool = False):
        self.k = space.m
        self.block = block
        self.family = sq.wheel_alternatives(space.probs, circular=space.circular, distance=space.circular and bool(np.allclose(space.probs, 1 / space.m)), release=release)
        self.log_threshold = sq.detector_threshold(alpha, horizon, block)
        self.alpha, self.horizon = alpha, horizon
        self.state = sq.DetectorState.start(self.family)
        self.pending = np.zeros(0, dtype=np.int64)
        self.pending_release = np.zeros(0, dtype=np.int64)
        self.previous: int | None = None
        self.spins = 0
        self.log_m = -np.inf
        self.leader = "-"
        self.alarm_spin: int | None = None
        self.use_release = release

    def guarantee(self) -> str:
        return (
            f"P(any false alarm within the first {self.horizon} spins of a fair wheel) <= {self.alpha} "
            f"(within t spins: <= {self.alpha}*t/{self.horizon}); "
            f"mean spins to a false alarm >= {self.horizon / self.alpha:.3g} (mixture Shiryaev-Roberts e-detector, "
            f"Shin-Ramdas-Rinaldo 2022, checked every {self.block} spins, {self.family.size} alternatives)"
        )

    def update(self, positions, release=None) -> WatchStatus:
        """Add spins (in order); returns the status after the last complete block."""
        x = np.concatenate([self.pending, np.asarray(positions, dtype=np.int64)])
        r = np.concatenate([self.pending_release, np.asarray(release if release is not None else np.full(len(positions), -1), dtype=np.int64)])
        nfull = (x.size // self.block) * self.block
        if nfull and self.alarm_spin is None:
            xs, rs = x[:nfull], r[:nfull]
            fv = sq.feature_values(xs, self.k, release=rs if self.use_release else None, previous=self.previous)
            counts = {f: sq.block_counts(fv[f], self.k, self.block) for f in self.family.features}
            path = sq.e_detector(counts, self.family, self.log_threshold, state=self.state)
            if path.alarm >= 0:
                b = int(path.alarm)
                self.alarm_spin = self.spins + (b + 1) * self.block
                self.log_m = float(path.log_m[b])
                self.leader = self.family.names[int(path.leader[b])]
                # state up to the alarm block only
                nfull = (b + 1) * self.block
                self.state = sq.DetectorState(self.state.log_r, self.state.blocks + b + 1)
            else:
                self.state = path.state
                self.log_m = float(path.log_m[-1])
                self.leader = self.family.names[int(path.leader[-1])]
            self.previous = int(x[nfull - 1])
            self.spins += nfull
        self.pending, self.pending_release = x[nfull:], r[nfull:]
        return self.status()

    def status(self) -> WatchStatus:
        return WatchStatus(self.spins + self.pending.size, self.state.blocks, self.log_m, self.log_threshold, self.leader, self.alarm_spin is not None, self.alarm_spin)


def simulate_watch(
    wheel,
    *,
    runs: int,
    n_fair: int,
    n_biased: int = 0,
    bias=None,
    seed: int = 0,
    alpha: float = 0.01,
    horizon: int = 100_000,
    block: int = 100,
    chunk: int = 20,
) -> np.ndarray:
    """Spin at which the watch's detector alarms in ``runs`` simulated streams (-1: no alarm).

    Each run is ``n_fair`` fair spins followed by ``n_biased`` spins with ``bias``
    (:class:`rngcert.simulate.wheel.WheelBias`), drawn with
    :func:`rngcert.simulate.wheel.simulate_spins` from its own generator spawned from
    ``SeedSequence(seed)``. The detector is the one :class:`Watcher` uses, run on all runs of a
    chunk at once (array operations over runs x blocks x alternatives; no loop over spins).

    Returns
    -------
    (runs,) ndarray of int64
        1-based spin index of the alarm (a multiple of ``block``), or -1.
    """
    from rngcert.simulate.wheel import WheelBias, simulate_spins

    space = wheel.position_space()
    k = space.m
    fam = sq.wheel_alternatives(space.probs, circular=True, distance=True)
    log_a = sq.detector_threshold(alpha, horizon, block)
    children = np.random.SeedSequence(seed).spawn(runs)
    out = np.full(runs, -1, dtype=np.int64)
    for c0 in range(0, runs, chunk):  # chunks of runs bound the memory
        xs = []
        for ss in children[c0 : c0 + chunk]:  # loop over runs: one vectorised draw each
            rng = np.random.Generator(np.random.PCG64(ss))
            parts = [simulate_spins(wheel, n_fair, rng).positions]
            if n_biased:
                parts.append(simulate_spins(wheel, n_biased, rng, bias=bias or WheelBias()).positions)
            xs.append(np.concatenate(parts))
        x = np.stack(xs)
        fv = sq.feature_values(x, k)
        counts = {f: sq.block_counts(fv[f], k, block) for f in fam.features}
        path = sq.e_detector(counts, fam, log_a)
        out[c0 : c0 + len(xs)] = np.where(path.alarm >= 0, (path.alarm + 1) * block, -1)
    return out
