"""Certification of a card-scanner shoe log (:func:`certify_log`): the pickup side fitted per dealer
and shift or declared, the verdict the worst over the plausible sides, and the log's sensitivity table.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rngcert.battery.plain import add_shoe_findings
from rngcert.equipment import games as G
from rngcert.equipment.procedure import Procedure
from rngcert.errors import InputError
from rngcert.pipeline.certify_shuffle._common import ShuffleCertification, keep_shuffle_heap
from rngcert.pipeline.certify_shuffle.log_once import _certify_log_once
from rngcert.pipeline.certify_shuffle.rebuild import _log_pairs
from rngcert.pipeline.options import ShuffleOptions


def certify_log(log, *, source: str, decks: int, game: str | None, proc: Procedure | None = None, before_mode: str = "pickup",
                before_orders: dict | None = None, fit: bool = True, inputs: Sequence[dict] = (), notes: Sequence[str] = (),
                pickup: str | None = None, sensitivity: bool = False, options: ShuffleOptions | None = None, before_log=None,
                **keywords) -> ShuffleCertification:
    """Certify a card-scanner shoe log (see :mod:`rngcert.pipeline.certify_shuffle`).

    When the order before a shuffle is rebuilt through a pickup whose side the rules leave to the
    dealer (baccarat, 004 §2 rule 3.6.2), the side is fitted from the log per dealer and shift
    (:mod:`rngcert.pipeline.pickup_side`) unless ``pickup`` declares it; where the log cannot tell,
    the log is certified with each plausible side and the verdict is the worst of them. The other
    parameters are documented at :func:`_certify_log_once`, which certifies once with given sides.

    Parameters
    ----------
    options : ShuffleOptions, optional
        The certification's options as one object (:class:`rngcert.pipeline.options.ShuffleOptions`);
        keywords given beside it (its fields: ``seed``, ``alpha``, ``threshold``, ``n_resamples``,
        ``standard``, ``figures``, ``command``, ``progress``, ``min_edge``, ``power``) replace its fields.
    pickup : str, optional
        A declared pickup side for every shoe (``"banker-first"``, ``"player-first"``): not fitted.
    sensitivity : bool
        Also certify the log under every plausible pickup side and at both ends of every wash
        parameter's interval, and tabulate the verdicts (``report["log_sensitivity"]``).
    before_log : rngcert.collect.shoelog.ShoeLog, optional
        The ``--before FILE`` as read (its unreadable rows and shoes left out count against ``--max-rejected``).
    """
    from rngcert.pipeline.pickup_side import SIDES

    keep_shuffle_heap()  # (before any pool forks: its workers inherit the thresholds)
    kw = dict(source=source, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders, fit=fit,
              inputs=inputs, notes=notes, options=ShuffleOptions.of(options, where="certify_log", **keywords), before_log=before_log)
    sides = SIDES.get(game) if game and before_mode == "pickup" else None
    if pickup is not None:
        if not sides or pickup not in sides:
            raise InputError(f"pickup {pickup!r}: the {game or 'no'} game's pickup sides are {list(sides or [])}")
    if not sides:
        cert = _certify_log_once(log, **kw)
        return _log_sensitivity(cert, log, kw, [None]) if sensitivity else cert
    # rebuild with each side; the shoes rebuilt through a pickup (not recorded or declared before orders)
    prev_of: dict = {}
    built = {}
    for sd in sides:
        side_all = {i: sd for i in range(log.n_shoes)}
        built[sd] = _log_pairs(log, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders,
                               rng=None, side_of=side_all, prev_out=prev_of)
    if not prev_of or built[sides[0]] is None:
        cert = _certify_log_once(log, **kw)
        return _log_sensitivity(cert, log, kw, [None]) if sensitivity else cert
    idx = built[sides[0]][0]
    rows = np.array([j for j, i in enumerate(idx) if int(i) in prev_of])
    prevs = np.array([prev_of[int(idx[j])] for j in rows])
    if pickup is not None:
        assignments = [{i: pickup for i in range(log.n_shoes)}]
        info = {"status": "declared", "side": pickup, "groups": [], "method": "declared with --pickup (not fitted)"}
    else:
        info, assignments = _fitted_sides(log, built, sides, rows, prevs)
    runs = []
    for a in assignments:
        c = _certify_log_once(log, **kw, side_of=a, split=len(assignments))
        best = max((t for t in c.report["tables"][0].get("trackers", []) if t.get("edge") is not None), key=lambda t: t["edge"], default=None)
        runs.append((c, {"sides": sorted(set(a.values())), "verdict": c.verdict,
                         "best_tracker": None if best is None else {"name": best["name"], "edge": best["edge"], "ci95": best["ci95"]}}))
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    cert = max(runs, key=lambda x: order[x[0].verdict])[0] if len(runs) > 1 else runs[0][0]
    named = [{g["group"]: asg[gi] for gi, g in enumerate(info["groups"])} for asg in info.get("assignments", [])] if pickup is None else []
    info = dict(info) | {"runs": [r for _, r in runs], "verdict": cert.verdict, "assignments": named}
    _state_sides(cert, info, runs, game=game, pickup=pickup, sides=sides)
    cert.report["reconstruction"]["pickup_side"] = info.get("side") or [r["sides"] for _, r in runs]
    if sensitivity:
        cert = _log_sensitivity(cert, log, kw, assignments)
    return cert


def _fitted_sides(log, built: dict, sides, rows, prevs) -> tuple[dict, list[dict]]:
    """The pickup side fitted per dealer and shift (:func:`rngcert.pipeline.pickup_side.fit_sides`) from the
    orders rebuilt with each side; returns the fit and the plausible assignments ``{previous shoe: side}``."""
    from rngcert.pipeline.pickup_side import fit_sides, kept_pairs

    kept = {sd: kept_pairs(built[sd][1][rows], built[sd][2][rows]) for sd in sides}
    by = [c for c in ("dealer", "shift") if c in log.columns]
    keys = [tuple(log.meta[int(p_)][c] for c in by) for p_ in prevs]
    labels = sorted(set(keys))
    gid = np.array([labels.index(k) for k in keys])
    names = [", ".join(f"{c} {v or '(none)'}" for c, v in zip(by, k)) or "whole log" for k in labels]
    info = fit_sides(kept, gid, names)
    info["grouped_by"] = by or ["whole log (no dealer or shift column)"]
    group_of_prev = {int(p_): int(g) for p_, g in zip(prevs, gid)}
    return info, [{p_: a[g] for p_, g in group_of_prev.items()} for a in info["assignments"]]


def _state_sides(cert, info: dict, runs: list, *, game, pickup, sides) -> None:
    """The pickup side in the report: a note (fitted or declared), ``pickup_side`` and the ``deal.pickup`` parameter."""
    if pickup is None:
        meas = [g for g in info["groups"] if g["side"]]
        unid = [g for g in info["groups"] if not g["side"]]
        rule_ref = G.get(game).pickup_rule
        line = f"pickup side ({rule_ref} leaves it to each dealer for a shift), fitted from the log: "
        line += "; ".join(f"{g['group']}: {g['side']} measured ({g['evidence']})" for g in meas)
        if unid:
            line += ("; " if meas else "") + "; ".join(f"{g['group']}: not identifiable from this log ({g['evidence']})" for g in unid)
            line += ("; the log was certified with each plausible side and the verdict is the worst: "
                     + ", ".join(f"{'/'.join(r['sides'])} {r['verdict']}" for _, r in runs))
        cert.report["notes"].append(line)
        info["sentence"] = line
    else:
        cert.report["notes"].append(f"pickup side declared: {pickup} (--pickup; not fitted from the log)")
        info["sentence"] = cert.report["notes"][-1]
    cert.report["pickup_side"] = info
    if cert.report.get("parameters") is not None and not any(p_["name"] == "deal.pickup" for p_ in cert.report["parameters"]):
        cert.report["parameters"].append({"name": "deal.pickup", "label": "deal.pickup", "value": sides[0], "status": "assumed",
                                          "interval": None, "source": "004 default"})
    for p_ in cert.report.get("parameters") or []:
        if p_["name"] == "deal.pickup":  # the procedure's declared side is not what the log was read with
            if pickup is not None:
                p_.update(value=pickup, status="assumed", source="declared with --pickup")
            elif all(g["side"] for g in info["groups"]):
                vals = sorted({g["side"] for g in info["groups"]})
                p_.update(value=vals[0] if len(vals) == 1 else "/".join(vals), status="measured", source=info["sentence"])
            else:
                p_.update(value="/".join(sides), status="not identifiable",
                          source="not identifiable from this log for some dealers or shifts: the verdict is the worst over both sides")
    add_shoe_findings(cert.report)  # (the findings name the assumed parameters: again, now that the pickup side is known)


def _log_sensitivity(cert, log, kw, assignments):
    """--sensitivity on a log: the verdict under each plausible pickup assignment and at both ends of
    every fitted wash parameter's interval (trackers trained there); the report's verdict is unchanged
    (it is already the worst over the plausible sides), the table shows how much rests on each."""
    rows = []
    fitp = (cert.report.get("fit") or {}).get("parameters") or {}
    corners = [None]
    if fitp:
        names = list(fitp)
        ends = [(fitp[n_]["interval"][0], fitp[n_]["interval"][1]) for n_ in names]
        from itertools import product

        corners += [{n_: e[i] for n_, e, i in zip(names, ends, idx_)} for idx_ in product((0, 1), repeat=len(names))]
    for a in assignments:
        for cn in corners:
            c = _certify_log_once(log, **kw, side_of=a, wash_override=cn)
            best = max((t for t in c.report["tables"][0].get("trackers", []) if t.get("edge") is not None), key=lambda t: t["edge"], default=None)
            rows.append({"pickup": "declared/default" if a is None else "/".join(sorted(set(a.values()))),
                         "wash": "fitted" if cn is None else {k.split(".")[-1]: v for k, v in cn.items()}, "verdict": c.verdict,
                         "edge": None if best is None else best["edge"], "ci95": None if best is None else best["ci95"],
                         "tracker": None if best is None else best["name"]})
    cert.report["log_sensitivity"] = {
        "rows": rows,
        "note": ("each row certifies this log again with the pickup side(s) shown and the trackers trained on the procedure with the "
                 "wash shown (fitted, or an end of its 95% interval); the report's verdict is the worst over the plausible pickup sides "
                 "(and the worst case of a wash parameter the log cannot identify), the table shows what each assumption changes")}
    return cert
