"""Periodic wheel-bias audits on stored spins (``rngcert audit``).

An audit runs exactly the ``certify`` battery (:func:`rngcert.pipeline.certify_wheel.certify_spins`) on a window
of one table's stored spins, so its p-values equal ``certify``'s on the same spins with the same
seed, then adds the trend: the table's earlier audits and chi-square tests of homogeneity of
pocket frequencies between this window and the previous one, and between dealers.

Three steps per table, so that a store serves many readers while an ingest writes
(see :mod:`rngcert.collect.store`):

1. :func:`prepare_audit` reads the window, the previous window and the earlier audits in a
   read-only session (closed at once);
2. :func:`compute_audit` runs the battery and the trend (no I/O);
3. :func:`finish_audit` writes the report (:func:`write_audit_report`, run on the worker by
   ``audit --all`` on a local cluster) and records the audit in its own short write
   transaction (skipped with ``record=False``, which never opens the store for writing: an
   archived or read-only store can be audited).

Tables are independent work items: ``audit --all`` (:func:`audit_all`) runs steps 1-2 of every
table on Dask workers (:mod:`rngcert.pipeline.parallel`), each reading only its own table, so
tables are never all loaded at once, and step 3 here as each table finishes.

The live watch lives in :mod:`rngcert.pipeline.watch`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rngcert.errors import InputError
from rngcert.pipeline.options import CertifyOptions
from rngcert.pipeline.parallel import Plan, iter_items, pinned, preloading, table_cost
from rngcert.seeding import stream
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
    # the per-spin arrays in the smallest integer type that holds them, as read_spin_log makes them
    ids = np.int8 if space.m <= 127 else np.int16
    t = TableSpins(table=stored.table, outcomes=out[acc].astype(ids), void=int(np.count_nonzero(stored.void)))
    if getattr(stored, "order_finding", None):  # timestamps going back in spin-id order: certify's finding (c18)
        t.findings.append(stored.order_finding)
    if getattr(stored, "line_key", None) is not None:  # a permanence list: its lines, as read_spin_log marks them
        lk = stored.line_key[acc]
        t.line_start = np.r_[True, lk[1:] != lk[:-1]] if lk.size else np.zeros(0, dtype=bool)
    if stored.release is not None:
        t.release = stored.release[acc].astype(ids)
    if stored.direction is not None:
        t.direction = stored.direction[acc].astype(np.int8)
    if stored.dealer is not None:
        codes = stored.dealer[acc]
        used = np.flatnonzero(np.bincount(codes, minlength=len(stored.dealer_labels)))  # sorted codes present
        rank = np.zeros(len(stored.dealer_labels), dtype=np.int8 if used.size <= 127 else np.int16 if used.size <= 32767 else np.int32)
        rank[used] = np.arange(used.size, dtype=rank.dtype)
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
            out["first_harmonic"] = {k: r.details.get(k) for k in ("amplitude", "phase_position", "mean_resultant_length")}
    return jsonable(out)


# ---------------------------------------------------------------------------- one audit (pure)
def compute_audit(
    log,
    *,
    previous_counts: np.ndarray | None = None,
    previous_window: dict | None = None,
    earlier: Sequence[dict] = (),
    options: CertifyOptions | None = None,
    **keywords,
) -> tuple:
    """Run the certify battery on one table's window and add the trend section (no I/O).

    ``options`` (a :class:`~rngcert.pipeline.options.CertifyOptions`) and ``keywords`` (its fields:
    ``alpha``, ``seed``, ``n_resamples``, ``required_bias``, ``power``, ``command``, ``figures``,
    ``notes``, ``standard``) as in :func:`rngcert.pipeline.certify_wheel.certify_spins`; the
    ``standard`` is applied as by ``certify``.

    Returns
    -------
    (Certification, trend dict)
    """
    from rngcert.pipeline.certify_wheel import certify_spins

    opts = CertifyOptions.of(options, where="compute_audit", **keywords)
    n_resamples = opts.n_resamples
    cert = certify_spins(log, options=opts, kind="audit")
    (name, t), = log.tables.items()
    cert.report["subject"] = f"{log.wheel.name}, table {name}"
    _window_inputs(cert.report, name, t)
    entropy = int(cert.report["seed"]["entropy"])
    rng = stream(entropy, 0, _HOMOGENEITY_KEY)
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
def _open_read(store, wait: float, on_wait):
    """(store, close?) for reading: an open Store as it is, a path opened read-only."""
    from rngcert.collect.store import Store

    if hasattr(store, "con"):
        return store, False
    return Store(store, read_only=True, wait=wait, on_wait=on_wait), True


def _check_recordable(store, record: bool) -> None:
    """Refuse early (before any battery runs) to record into a store this process cannot write."""
    if not record:
        return
    if hasattr(store, "con"):
        if store.read_only:
            raise InputError(f"store {store.path} is open read-only: audit it with record=False (--no-record)")
        return
    p = Path(store)
    if not p.is_file():
        return
    # the permission bits are the archive mark: respected even by root, whom the OS would let write
    if not os.access(p, os.W_OK) or not p.stat().st_mode & 0o222:
        raise InputError(f"store {p} is read-only (mode {p.stat().st_mode & 0o777:o}): audit it with --no-record, which reads it "
                         "without recording the audit, or make it writable (chmod u+w) to record")
    d = p.resolve().parent  # recording writes DuckDB's journal (a .wal file) beside the store
    if not os.access(d, os.W_OK) or not d.stat().st_mode & 0o222:
        raise InputError(f"store {p} is in a read-only folder ({d}, mode {d.stat().st_mode & 0o777:o}), where the write-ahead log of a "
                         "recorded audit cannot be created: audit it with --no-record, or record it in a copy of the store elsewhere")


def audit_table(
    store,
    table: str,
    *,
    since=None,
    until=None,
    last: int | None = None,
    outdir: str | Path | None = "reports",
    record: bool = True,
    wait: float = 0.0,
    on_wait=None,
    pdf: bool = False,
    sign_key=None,
    subject: str | None = None,
    options: CertifyOptions | None = None,
    **keywords,
) -> AuditResult:
    """Audit one stored table: load the window, run :func:`compute_audit`, write the report
    (when ``outdir``) and the audit record (when ``record``).

    Parameters
    ----------
    store : Store or path
        An open :class:`~rngcert.collect.store.Store` (used as it is), or the store's path: then
        the window is read in a read-only session and the record written in a separate short
        write session, so the audit runs beside an ingest (waiting at most ``wait`` seconds for
        the file) and ``record=False`` never opens the store for writing.
    since, until, last
        The window (see :meth:`~rngcert.collect.store.Store.spins`).
    options, **keywords
        A :class:`~rngcert.pipeline.options.CertifyOptions` and/or its fields (``alpha``, ``seed``,
        ``n_resamples``, ``required_bias``, ``power``, ``command``, ``figures``, ``standard``), as in
        :func:`rngcert.pipeline.certify_wheel.certify_spins`.
    outdir : path or None
        Folder for ``<wheel>-<table>-<UTC time>/`` (None: no files).
    record : bool
        Record the audit in the store.
    pdf, sign_key, subject
        As in :func:`rngcert.report.writer.write_report` (``sign_key``: a PEM path, so that it can
        travel to a worker): report.pdf with its certificate, an Ed25519 signature, the unit under test.

    Raises
    ------
    NoDataError
        No spin in the window.
    InputError
        Unknown table; ``record`` on a store that cannot be written.
    StorageError
        Full disk, damaged store, or the store locked past ``wait``.
    """
    opts = CertifyOptions.of(options, where="audit_table", **keywords)
    _check_recordable(store, record)
    st, close = _open_read(store, wait, on_wait)
    try:
        work = prepare_audit(st, table, since=since, until=until, last=last)
    finally:
        if close:
            st.close()
    with pinned():  # one BLAS thread, as every work item of audit --all (same bits)
        cert, trend = _compute(work, opts)
    return finish_audit(store, work, cert, trend, outdir=outdir, record=record, options=opts, wait=wait, on_wait=on_wait,
                        report_kw={"pdf": pdf, "sign_key": sign_key, "subject": subject})


def _compute(work: dict, options: CertifyOptions) -> tuple:
    """:func:`compute_audit` on what :func:`prepare_audit` loaded (the window's notes replace the options')."""
    return compute_audit(work["log"], previous_counts=work["previous_counts"], previous_window=work["previous_window"], earlier=work["earlier"],
                         options=options.replace(notes=work["notes"]))


def _with_conflict_rows(sources: list, conflict_rows: list) -> list:
    """The sources with the rows of conflicting spin ids counted as certify counts them: read but not used,
    among each file's rejected rows."""
    if not conflict_rows:
        return sources
    from collections import Counter
    from dataclasses import replace

    per_file = Counter(r.file for r in conflict_rows)
    return [replace(s, accepted=s.accepted - min(s.accepted, per_file[s.path]), rejected=s.rejected + per_file[s.path])
            if per_file.get(s.path) else s for s in sources]


def _unusable(stored) -> str:
    """Why a window without a spin to audit may still hold stored rows: conflicted spin ids, void spins."""
    why = []
    if stored.conflicted:
        why.append(f"{stored.conflicted} stored spin(s) have conflicting results in the store (audits use neither result; see rngcert rejects)")
    if stored.n:
        why.append(f"{stored.n} void spin(s)")
    return (" that an audit can use: " + "; ".join(why)) if why else ""


def _time_span(store, table: str, since, until) -> str:
    """For an empty --since/--until window: when the table's stored spins are (their first and last timestamp, UTC), and
    how many have no timestamp (a time window holds none of them)."""
    if since is None and until is None:
        return ""
    first, last, n, untimed = store.time_span(table)
    if not n:
        return ""
    said = [f"the table's {n - untimed:,} stored spin(s) with a timestamp run from {_ts(first)} to {_ts(last)} UTC"] if n > untimed else []
    if untimed:
        said.append(f"{untimed:,} stored spin(s) have no timestamp, so no --since/--until window holds them (audit them with --last N "
                    "or without a window)")
    return "; " + "; ".join(said)


def _gap_note(store, table: str, stored, n_rejected: int) -> list[str]:
    """The note of the spin ids missing from the store between the window's lowest and highest id (:meth:`Store.id_gaps`),
    as certify words the gaps of a log; none when none is missing. (Certify of the same log counts a rejected row's id
    as present: the store kept no id of it, so the note names the rejected rows of the window's sources.)"""
    gaps = store.id_gaps(table, stored.seq_range, stored.seq)
    if not gaps:
        return []
    why = ("the sources never carried, or rows rejected on ingest, which stored no spin id "
           f"({n_rejected:,} rejected row(s) in this window's sources: see rngcert rejects)" if n_rejected else "the sources never carried")
    return [f"{gaps[0]:,} spin_id(s) missing between {gaps[1]} and {gaps[2]} (gaps in the sequence): not in the store: spins {why}"]


def _previous_window(store, table, window_seq: np.ndarray, n: int, earlier: Sequence[dict], m: int, key: str, conflicted: int = 0) -> tuple:
    """(pocket counts, description) of the window before this one, or (None, description or None).

    "Before" is in the table's spin order (:meth:`Store.spins`: spin ids), not in ingest order (``seq``), so a month
    ingested after a later one (a backfill) is the later one's previous window, never the other way round: the most
    recent earlier audit whose spins (its recorded seq range, holding as many as it counted) all come before this window's
    first spin, else the ``n``
    non-void spins just before that spin, where available."""
    if store.stored_rows(table) <= len(window_seq) + conflicted:
        return None, None  # the window is the whole table (its conflicting ids aside): no spin before it, nothing more to read
    whole = store.spins(table, with_ids=False)  # in spin order, each spin's seq
    inside = np.isin(whole.seq, window_seq)
    start = int(np.argmax(inside)) if inside.any() else 0
    pick, prev_window = None, None
    for a in reversed(earlier):  # the most recent first
        if a["last_seq"] is None:
            continue
        theirs = np.flatnonzero((whole.seq >= a["first_seq"]) & (whole.seq <= a["last_seq"]))
        # (its seq range holds its spins alone, as it counted them: else that range spans spins ingested in another order)
        if theirs.size and theirs[-1] < start and int((~whole.void[theirs]).sum()) == int(a.get("n") or -1):
            pick = theirs
            prev_window = {"kind": f"window of audit {a['audit_id']}", "first_seq": a["first_seq"], "last_seq": a["last_seq"]}
            break
    if pick is None:
        before = np.flatnonzero(~whole.void[:start])
        pick = before[max(0, before.size - n):]
        prev_window = {"kind": "the spins just before this window (as many as in it, where available)"}
    pick = pick[~whole.void[pick]]
    vals = getattr(whole, key)[pick]
    vals = vals[vals >= 0]
    if not vals.size:
        return None, prev_window
    counts = np.bincount(vals, minlength=m)
    prev_window.update({"first_seq": int(whole.seq[pick].min()), "last_seq": int(whole.seq[pick].max()), "n": int(counts.sum())})
    return counts, prev_window


def prepare_audit(store, table, *, since=None, until=None, last=None) -> dict:
    """Load everything one audit needs from an open store (window spins, previous window,
    earlier audits, provenance)."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.errors import NoDataError

    stored = store.spins(table, since=since, until=until, last=last, with_ids=False)  # seq: where the window lies in the table
    if stored.n == 0 or not np.any(~stored.void):
        raise NoDataError(f"table {table!r}: no spins in the window (since={since}, until={until}, last={last})" + _unusable(stored)
                          + _time_span(store, table, since, until))
    wheel = load_wheel(stored.equipment)
    window = {
        "table": table, "since": None if since is None else str(since), "until": None if until is None else str(until), "last": last,
        "first_seq": stored.seq_range[0], "last_seq": stored.seq_range[1], "n": int((~stored.void).sum()), "void": int(stored.void.sum()),
        "first_ts": _ts(stored.ts_range[0]) if stored.ts_range else None, "last_ts": _ts(stored.ts_range[1]) if stored.ts_range else None,
    }
    notes = [f"audit of stored table {table!r}: spins with seq {window['first_seq']}..{window['last_seq']} of store {store.path}"]
    if stored.conflicted:  # the rule of certify (c07): a spin id with two results is left out, and said
        notes.append(f"{stored.conflicted:,} spin_id(s) of table {table!r} have conflicting results in the store (both rows among the "
                     "rejected rows): neither result is used")
    log = spinlog_from_store(stored, wheel, notes=notes)
    log.sources = store.source_infos(stored.source_ids)
    log.rejected = store.rejected_rows(stored.source_ids) + stored.conflict_rows
    notes += _gap_note(store, table, stored, len(log.rejected) - len(stored.conflict_rows))
    log.sources = _with_conflict_rows(log.sources, stored.conflict_rows)
    earlier = store.audits(table)
    prev_counts, prev_window = _previous_window(store, table, stored.seq, window["n"], earlier, log.space.m,
                                                "pos" if log.level == "position" else "sym", stored.conflicted)
    return {"table": table, "equipment": stored.equipment, "wheel": wheel, "window": window, "log": log, "earlier": earlier,
            "previous_counts": prev_counts, "previous_window": prev_window, "notes": notes}


def finish_audit(store, work, cert, trend, *, outdir, record, options: CertifyOptions | None = None, wait: float = 0.0, on_wait=None,
                 report_kw: dict | None = None, **keywords) -> AuditResult:
    """Write the report and record a computed audit (its own short write transaction).

    ``store`` is an open Store (recorded through it) or the store's path (opened for writing
    only for the record, waiting at most ``wait`` seconds for the file). The record states the
    ``alpha`` and ``n_resamples`` of ``options`` (or given as ``keywords``)."""
    opts = CertifyOptions.of(options, where="finish_audit", **keywords)
    table, window = work["table"], work["window"]
    paths = cert.paths if isinstance(cert, _Computed) and cert.paths is not None else write_audit_report(work, cert, outdir, **(report_kw or {}))
    res = AuditResult(table, cert.report, cert.figures, cert, window, trend, paths=paths)
    if record:
        rec, tests = _record_of(work, cert.report, trend, paths, opts)
        if hasattr(store, "con"):
            res.audit_id = store.record_audit(rec, tests)
        else:
            from rngcert.collect.store import Store

            with Store(store, wait=wait, on_wait=on_wait) as st:
                res.audit_id = st.record_audit(rec, tests)
    return res


def write_audit_report(work, cert, outdir, *, pdf: bool = False, sign_key=None, subject: str | None = None) -> dict:
    """Put the window into the report and write it to a new folder under ``outdir`` (nothing
    when ``outdir`` is None); returns the paths. Runs where the audit was computed (a Dask worker
    of a local cluster writes its own table's report) or in :func:`finish_audit`. ``pdf``,
    ``sign_key`` and ``subject`` as in :func:`rngcert.report.writer.write_report` (the code paths of
    ``rngcert certify --pdf --sign``)."""
    from rngcert.report.writer import report_dir, write_report

    window = work["window"]
    cert.report["audit"]["window"] = window
    if window.get("first_ts") or window.get("last_ts"):
        cert.report["period"] = {"first": window.get("first_ts"), "last": window.get("last_ts")}
    if outdir is None:
        return {}
    out = report_dir(outdir, f"{work['wheel'].id}-{_safe(work['table'])}")
    rejected = cert.rejected if isinstance(cert, _Computed) else cert.log.rejected
    return write_report(cert.report, cert.figures, rejected, out, pdf=pdf, sign_key=sign_key, subject=subject)


def _record_of(work, report, trend, paths, options: CertifyOptions) -> tuple[dict, list[dict]]:
    window = work["window"]
    tr = report["tables"][0]["battery"]
    tests = [
        {
            "name": x["name"], "requirement": x["requirement"], "applicable": x["applicable"], "statistic": x.get("statistic"),
            "df": x.get("df"), "pvalue": x.get("pvalue"), "pvalue_holm": x.get("pvalue_holm"), "method": x.get("method"), "reason": x.get("reason"),
        }
        for x in tr["tests"]
    ]
    hom = {k: trend.get(k) for k in ("window_homogeneity", "dealer_homogeneity", "previous_window")}
    rec = {
        "table_id": work["table"], "equipment": work["equipment"], "created_utc": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
        "since": window["since"], "until": window["until"], "last_n": window["last"], "first_seq": window["first_seq"], "last_seq": window["last_seq"],
        "first_ts": window["first_ts"], "last_ts": window["last_ts"], "n": window["n"], "void": window["void"], "verdict": report["verdict"],
        "seed": report["seed"]["entropy"], "alpha": options.alpha, "n_resamples": options.n_resamples, "report_path": str(paths.get("json", "")) or None,
        "report_sha256": (report.get("integrity") or {}).get("report_sha256"),
        "pvalues": json.dumps(jsonable({x["name"]: x["pvalue"] for x in tests if x["applicable"]})),
        "bias": json.dumps(jsonable(trend["bias"])), "homogeneity": json.dumps(jsonable(hom)),
    }
    return rec, tests


@dataclass
class _Computed:
    """What a worker sends back for one table: the report, figures and trend, the provenance for
    rejects.csv; never the table's spins."""

    report: dict
    figures: list
    trend: dict
    rejected: list
    paths: dict | None = None  # the report's files when the worker wrote them (else None: finish_audit writes)


#: What an audit item imports on its first table (a worker forked after these imports pays none):
#: the certification, the report writers, numpy's fft and ma. (Not pandas: 0.3 CPU-s, which ``pa.array([])`` in
#: Store.spins imported; an audit uses none of it.)
_PRELOAD = ("rngcert.pipeline.certify_wheel", "rngcert.pipeline.rage", "rngcert.report.writer", "rngcert.report.verify",
            "rngcert.report.text", "rngcert.collect.csvsafe", "rngcert.collect.labels", "numpy.fft", "numpy.ma", "numpy.random")


#: Read-only sessions of a local-pool worker, by store path: ``[Store, spins it has served]``, opened by the
#: worker's first table and kept for its next ones.
_WORKER_SESSIONS: dict = {}
#: Spins a kept session serves before it is closed and opened afresh: DuckDB keeps the blocks a session has read
#: (about 5 bytes a spin of the worker's memory), so a worker that reads many large tables releases them every
#: 10 M spins (about 50 MB) at the cost of one more open (0.03 s, against seconds to audit 10 M spins).
SESSION_SPINS = 10_000_000


@contextlib.contextmanager
def _read_session(db, wait: float):
    """A read-only session of the store ``db`` for one table's item; yields ``(store, served)``, where
    ``served(n)`` counts the spins the item read.

    In a worker of the local pool (:func:`~rngcert.pipeline.parallel.in_pool_worker`) the session
    is opened by the worker's first table and kept for its next ones (about 0.03 CPU-s a table
    saved) until it has served :data:`SESSION_SPINS` spins; the last one ends with the worker, when
    the pool closes, before ``audit_all`` records anything. Everywhere else (a serial run, which may
    write between tables; a Dask worker, which outlives the command) it is opened for this table
    alone and closed at once.
    """
    from rngcert.collect.store import Store
    from rngcert.pipeline.parallel import in_pool_worker

    if not in_pool_worker():
        with Store(db, read_only=True, wait=wait) as st:
            yield st, lambda n: None
        return
    key = str(db)
    entry = _WORKER_SESSIONS.get(key)
    if entry is not None and entry[1] >= SESSION_SPINS:
        entry[0].close()
        entry = None
    if entry is None:
        if key not in _WORKER_SESSIONS:
            from multiprocessing import util

            util.Finalize(None, _close_session, args=(key,), exitpriority=0)  # the last one closed as the worker ends
        entry = _WORKER_SESSIONS[key] = [Store(db, read_only=True, wait=wait), 0]

    def served(n: int) -> None:
        entry[1] += int(n)

    yield entry[0], served


def _close_session(key: str) -> None:
    entry = _WORKER_SESSIONS.pop(key, None)
    if entry is not None:
        entry[0].close()


def _spins_read(work: dict) -> int:
    """Spins (void ones included) of the window and of the previous window that :func:`prepare_audit` read."""
    n = sum(int(t.n) + int(t.void) for t in work["log"].tables.values())
    return n + int((work.get("previous_window") or {}).get("n") or 0)


def _audit_item(item):
    """Steps 1-2 of one table's audit (a Dask work item): read the table read-only
    (:func:`_read_session`), compute. Returns ``(table, work without the spins, _Computed)``, or
    ``(table, None, reason)`` when the window is empty."""
    from rngcert.errors import NoDataError

    db, table, window, opts, wait, outdir, *more = item  # (a 7th element: write_report's pdf, sign_key, subject)
    report_kw = more[0] if more else {}
    try:
        with _read_session(db, wait) as (st, served):
            work = prepare_audit(st, table, **window)
            served(_spins_read(work))
    except NoDataError as exc:
        return table, None, str(exc)
    cert, trend = _compute(work, opts)
    slim = {k: work[k] for k in ("table", "equipment", "wheel", "window")}
    comp = _Computed(cert.report, cert.figures, trend, list(work["log"].rejected))
    if outdir is not False:  # write the report here (the worker shares the client's file system)
        comp.paths = write_audit_report(slim, comp, outdir, **report_kw)
        comp.figures = []  # written: not sent back
    return table, slim, comp


# long: a third is the numpydoc docstring; the serial and the cluster paths share their setup, each one loop over tables in order
def audit_all(
    store,
    *,
    plan: Plan | None = None,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    wait: float = 0.0,
    on_wait=None,
    options: CertifyOptions | None = None,
    **kw,
) -> list[AuditResult]:
    """Audit every table of the store; tables are independent work items.

    Parameters
    ----------
    store : path or Store
        The store's path: every table is read by its own work item in a read-only session (on
        Dask workers unless the plan is serial), and each audit is recorded here: in its own short
        write transaction as soon as it is computed when serial; after the last table on a
        cluster (whose workers hold read sessions that a writer would wait for), all in one transaction. An open Store is accepted for serial plans
        only (its connection is used for everything).
    plan : rngcert.pipeline.parallel.Plan, optional
        Default serial (``Plan(workers=jobs or 1)``); ``Plan()`` = a local cluster of every core.
    jobs : int, optional
        Older name of ``plan=Plan(workers=jobs)``.
    progress : callable, optional
        Told one line per table as it finishes (or is skipped).
    on_start : callable, optional
        Told the number of tables to audit before the first one starts (a progress bar's total).
    wait, on_wait
        For every open of the store file (see :class:`~rngcert.collect.store.Store`).
    **kw
        ``since``, ``until``, ``last`` (the window), ``outdir``, ``record``, ``figures``, ``pdf``, ``sign_key``
        and ``subject`` (as in :func:`audit_table`), and the fields of ``options`` (``alpha``, ``seed``,
        ``n_resamples``, ...: :class:`~rngcert.pipeline.options.CertifyOptions`), which replace the object's.

    Returns
    -------
    list of AuditResult
        In table order, whatever order the tables finished in; a result's ``figures`` and
        ``certification`` are dropped once its report is written (memory stays bounded).
        The audit of a table is the same, bit for bit, wherever it ran.
    """
    from rngcert.errors import NoDataError

    plan = plan or Plan(workers=jobs or 1)
    window = {k: kw.pop(k, None) for k in ("since", "until", "last")}
    outdir, record = kw.pop("outdir", "reports"), kw.pop("record", True)
    report_kw = {k: kw.pop(k, None) for k in ("pdf", "sign_key", "subject")}
    report_kw["pdf"] = bool(report_kw["pdf"])
    opts = CertifyOptions.of(options, where="audit_all", **kw)
    figures = opts.figures
    _check_recordable(store, record)
    if hasattr(store, "con"):
        if not plan.serial:
            raise InputError("audit_all with an open Store runs serially; pass the store's path to run tables on Dask workers")
        tables = store.tables_with_spins()
        if on_start:
            on_start(len(tables))
        out = []
        for t in tables:
            try:
                work = prepare_audit(store, t, **window)
            except NoDataError:
                if progress:
                    progress(f"table {t}: no spins in the window, skipped")
                continue
            with pinned():
                cert, trend = _compute(work, opts)
            out.append(finish_audit(store, work, cert, trend, outdir=outdir, record=record, options=opts, report_kw=report_kw))
            if progress:
                progress(f"table {t}: {out[-1].verdict}")
        return out
    from rngcert.collect.store import Store

    costs = None
    preload = _PRELOAD + (("rngcert.report.plots",) if figures else ())
    # the items' modules are imported while the store is opened and its spins counted (not after it, before the fork)
    with preloading(plan, preload), Store(store, read_only=True, wait=wait, on_wait=on_wait) as st:
        # the default plan: a pool only where it pays; any local pool: the largest tables start first
        if not plan.serial and not plan.address:
            n = st.tables_with_spins(counts=True)  # (the tables and their sizes in one pass)
            tables = list(n)
            costs = [table_cost(n[t]) for t in tables] if len(tables) > 1 else None
        else:
            tables = st.tables_with_spins()
    if on_start:
        on_start(len(tables))
    # a local cluster's workers (or this process) write each table's report where it is computed;
    # on a remote cluster the client writes them (its workers need not see the output folder)
    where = outdir if plan.serial or not plan.address else False
    items = [(str(store), t, window, opts, wait, where, report_kw) for t in tables]
    out: list[AuditResult] = []
    pending: dict[int, tuple] = {}  # finished out of order, waiting for the tables before them
    nxt = 0
    # Serially each audit is recorded as soon as it is computed. On a cluster the workers read the
    # store while the tables are computed, and a DuckDB file takes no writer while another process
    # reads it: the audits are recorded after the last table is computed, in table order, all in
    # one transaction of one write session (the reports are written already).
    defer = record and plan.runs_parallel(len(items), costs)
    deferred: list[tuple[AuditResult, dict, list]] = []
    finished = iter_items(_audit_item, items, plan=plan, preload=preload, costs=costs, largest_first=True)
    try:
        for i, got in finished:
            pending[i] = got
            while nxt in pending:  # reports and records in table order: audit ids as in a serial run
                table, work, comp = pending.pop(nxt)
                nxt += 1
                if work is None:
                    if progress:
                        progress(f"table {table}: no spins in the window, skipped")
                    continue
                res = finish_audit(store, work, comp, comp.trend, outdir=outdir, record=record and not defer, options=opts,
                                   wait=wait, on_wait=on_wait, report_kw=report_kw)
                if defer:
                    deferred.append((res, *_record_of(work, res.report, comp.trend, res.paths, opts)))
                res.figures, res.certification = [], None
                out.append(res)
                if progress:
                    progress(f"table {table}: {res.verdict}")
    finally:  # a table that fails does not lose the audits computed before it
        finished.close()  # (the cluster first: its workers' read sessions end)
        if deferred:
            with Store(store, wait=wait, on_wait=on_wait) as st:  # in one transaction: one commit, not one a table
                for (res, _, _), aid in zip(deferred, st.record_audits([(rec, tests) for _, rec, tests in deferred])):
                    res.audit_id = aid
    return out


def _ts(us) -> str | None:
    if us is None or us == np.iinfo(np.int64).min:
        return None
    return _dt.datetime.fromtimestamp(int(us) / 1e6, _dt.timezone.utc).replace(tzinfo=None).isoformat()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


