"""One certification of a card-scanner shoe log with given pickup sides (:func:`_certify_log_once`):
rebuilt orders, the wash fitted, trackers cross-fitted, the battery on all shoes and per dealer.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from rngcert.battery.core import BatteryOutcome, worst
from rngcert.battery.plain import add_shoe_findings
from rngcert.battery.shuffle import ShoeData, decide_shuffle, evaluate_shuffle, is_tracker
from rngcert.equipment import games as G
from rngcert.equipment.procedure import Procedure
from rngcert.errors import InputError
from rngcert.pipeline.certify_shuffle._common import (
    DEFAULT_POWER,
    ShuffleCertification,
    _figures,
    _has_trackers,
    _header,
    _house_edges,
    _power,
    _rules,
    _run,
    _section,
)
from rngcert.pipeline.certify_shuffle.rebuild import _faces, _log_pairs
from rngcert.pipeline.certify_shuffle.training import KERNEL_LAGS, TRAIN_TABLES, _kernel
from rngcert.pipeline.options import ShuffleOptions
from rngcert.pipeline.shoe_power import default_min_edge, power_gate
from rngcert.report import plots
from rngcert.seeding import root, stream
from rngcert.simulate import deal as D
from rngcert.simulate.fit import fit_procedure, wash_parameters
from rngcert.simulate.procedure import SIMULATION_STREAM
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)
from rngcert.stats import trackers as TR


# long: the stages of one log certification in order (rebuild, complete, wash, trackers, battery per dealer group), each feeding the next; the self-contained ones are _rank_only, _fit_wash and _tracker_kernels
def _certify_log_once(log, *, source: str, decks: int, game: str | None, proc: Procedure | None = None, before_mode: str = "pickup",
                      before_orders: dict | None = None, fit: bool = True, inputs: Sequence[dict] = (), notes: Sequence[str] = (),
                      side_of: dict | None = None, wash_override: dict | None = None, split: int = 1, options: ShuffleOptions,
                      before_log=None) -> ShuffleCertification:
    """Certify a card-scanner shoe log once, with given pickup sides (see the module docstring).

    ``side_of`` (``{previous shoe's log index: pickup side}``) overrides the procedure's pickup side
    in the rebuild; ``wash_override`` (``{parameter: value}``) trains the trackers on that wash
    instead of the fitted one (a sensitivity point); ``split`` divides every section's level (the
    number of plausible pickup assignments whose worst verdict is reported).

    Parameters
    ----------
    log : rngcert.collect.shoelog.ShoeLog
    source : str
        The log's path (for the report).
    decks : int
    game : {"baccarat", "blackjack"} or None
    proc : Procedure, optional
        The procedure the table follows: its pickup rebuilds the order before each shuffle, its
        kind sets the standard, its wash is fitted. Default: the game's pickup rules of 004.
    before_mode : {"pickup", "previous", "new-deck"}
        How a shoe's order before the shuffle is known when the log has no ``before`` stage:
        rebuilt from the previous shoe by the pickup, the previous shoe's order itself (an
        electronic reshuffle of the shoe as dealt), or new-deck order for every shoe.
    before_orders : dict, optional
        ``{(table, shoe_id): order}`` declared orders before the shuffle (``--before FILE``).
    before_log : rngcert.collect.shoelog.ShoeLog, optional
        The ``--before FILE`` as read: its unreadable rows and shoes left out count against ``--max-rejected`` as the log's.
    options : ShuffleOptions
        ``standard`` (default "edge" when ``proc`` is a manual procedure, else "uniform"), ``progress``
        (called as each stage finishes: orders rebuilt, wash fitted, trackers trained, one battery per
        section), ``min_edge`` (without the power to detect it a PASS is INCONCLUSIVE with the shoes
        needed), ``power``, ``seed``, ``alpha``, ``threshold``, ``n_resamples``, ``figures``, ``command``.

    Returns
    -------
    ShuffleCertification
    """
    o = options
    seed, alpha, threshold, n_resamples, standard, figures = o.seed, o.alpha, o.threshold, o.n_resamples, o.standard, o.figures
    command, progress, min_edge, power = o.command, o.progress, o.min_edge, o.power
    step = [0, 3]

    def advance(label: str) -> None:
        step[0] += 1
        if progress is not None:
            progress(step[0], max(step), label)

    if before_mode not in ("pickup", "previous", "new-deck"):
        raise InputError(f"before must be 'pickup', 'previous', 'new-deck' or a file, got {before_mode!r}")
    entropy = int(root(seed).entropy)
    standard = standard or (G.get(game).default_standard if proc is not None and proc.kind == "manual" and game is not None else "uniform")
    N = 52 * decks
    ser = bool(log.serialised)
    notes = list(notes)
    bj_rules = _rules(proc, decks)
    if game == "blackjack" and bj_rules is None:
        from rngcert.stats.blackjack import Rules

        bj_rules = Rules(decks=decks)
        notes.append("blackjack rules not given (no --procedure): the trackers play the defaults of rngcert.stats.blackjack.Rules")
    house = _house_edges(game, decks, bj_rules)
    min_edge, edge_basis = (min_edge, "declared") if min_edge is not None else default_min_edge(house)
    players = int(proc.deal.get("players", 7)) if proc and proc.game == game else 7
    unread = unreadable_reasons(log, o.max_rejected_share) + dealt_length_reasons(log, decks, proc, game) + repeated_shoe_reasons(log)
    if before_log is not None:
        unread += unreadable_reasons(before_log, o.max_rejected_share, shoes="shoes of the --before file")
    rng = stream(entropy, SIMULATION_STREAM, "log-completion")
    how: Counter = Counter()
    built = _log_pairs(log, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders, rng=rng, how=how,
                       side_of=side_of)
    cut = None
    if proc is not None and proc.game == game and game is not None:
        cut = N - proc.cut_card_from_back
    dealt_all = _faces(log.dealt, ser)
    lengths_all = (dealt_all >= 0).sum(axis=1)
    usable = int(lengths_all.min())
    if built is None:  # no order before any shuffle: rank and game tests only (INCONCLUSIVE: the required families cannot run)
        return _rank_only(log, o.replace(min_edge=min_edge, standard=standard), entropy=entropy, source=source, decks=decks, game=game, proc=proc,
                          inputs=inputs, notes=notes, dealt=dealt_all[:, :usable], house=house, edge_basis=edge_basis, players=players,
                          inconclusive=unread)
    idx, view, after_prefix = built
    advance(f"{idx.size} shoes rebuilt")
    known_before = view >= 0
    known_after = after_prefix >= 0
    before_c = D.complete_shoes(view, decks, rng, serialised=ser)
    after_c = D.complete_shoes(after_prefix, decks, rng, serialised=ser)
    n_filled_b = int((~known_before).sum())
    n_filled_a = int((~known_after).sum())
    notes.append(f"{idx.size} of {log.n_shoes} shoes have a known order before the shuffle "
                 f"({'; '.join(f'{v} {k}' for k, v in how.items())}); "
                 f"{n_filled_b / max(idx.size, 1):.1f} cards per shoe before and {n_filled_a / max(idx.size, 1):.1f} after it were never "
                 "seen and are filled at random (valid under a uniform shuffle; they only dilute what a weak one leaves)")
    extra, measured = _fit_wash(proc, decks, before_c, after_c, entropy, known_before, known_after, serialised=ser, source=source,
                                fit=fit, wash_override=wash_override, notes=notes)
    advance("wash fitted" if measured is not None else "no wash to fit")
    kernels = _tracker_kernels(measured, entropy, before_c, after_c, known_before, known_after, fit_parameters=(extra.get("fit") or {}).get("parameters"),
                               notes=notes if _has_trackers(game) else [])
    rot = None if log.rotated is None else log.rotated[idx]
    dealer = [log.meta[i]["dealer"] for i in idx]
    cut_pos = cut if cut is not None else int(np.median(lengths_all[idx]))
    sections, figs, outs = [], [], []
    groups = [("all shoes", np.arange(idx.size))]
    dealers = sorted({d for d in dealer if d})
    if len(dealers) > 1:
        groups += [(f"dealer {d}", np.array([j for j, x in enumerate(dealer) if x == d])) for d in dealers]
    step[1] = 3 + len(groups)
    advance("trackers trained")
    a_each = (alpha if len(groups) == 1 else alpha / 2) / split
    a_dealer = alpha / (2 * max(1, len(groups) - 1)) / split
    data_all = None
    for gi, (title, rows) in enumerate(groups):
        level = a_each if gi == 0 else a_dealer
        ks = _subset_kernels(kernels, rows)
        data = ShoeData(before_c[rows], after_c[rows], decks, game, bj_rules.dealer if bj_rules else "S17",
                        min(cut_pos, usable) if game else None, after_prefix[rows][:, :usable] if usable < N else None,
                        guess_shoes=min(2000, rows.size), mc_shoes=500,
                        before_view=view[rows] if ks else None, kernel=ks or None, threshold=threshold, bj_rules=bj_rules,
                        players=int(proc.deal.get("players", 7)) if proc and proc.game == game else 7,
                        rotated=None if rot is None else rot[rows])
        if data.kernel is not None and len(data.kernel) == 1 and data.kernel[0][1].size == rows.size:
            data.kernel = data.kernel[0][0]  # one kernel for every shoe (not trained on them)
        o = _run_folds(data, entropy=entropy, group=f"log:{title}", alpha=level, n_resamples=n_resamples, standard=standard, power=power,
                       inconclusive=unread)
        r_needed = _resolution_needed(o, level, n_resamples)
        sec_notes = [f"family-wise level {level:.3g}" + ("" if len(groups) == 1 else " (alpha split between all shoes and the dealers, Bonferroni)")
                     + (f" (alpha also split between the {split} plausible pickup-side assignments, Bonferroni: the verdict is the worst of "
                        "them, so a fair shuffle still fails with probability at most alpha)" if split > 1 else "")]
        if r_needed:
            data.kernel = (ks[0][0] if len(ks) == 1 and ks[0][1].size == rows.size else ks) or None  # as before the first run
            o = _run_folds(data, entropy=entropy, group=f"log:{title}", alpha=level, n_resamples=r_needed, standard=standard, power=power,
                           inconclusive=unread)
            sec_notes.append(f"Monte Carlo replicates raised from {n_resamples} to {r_needed} for this sample: with {n_resamples} the "
                             f"smallest p-value, {1 / (n_resamples + 1):.2g}, could not reject after Holm at level {level:.3g}, "
                             "and some test sat at it")
        # PASS needs power: the sample of all shoes is gated; a dealer's share states its power only
        gate = power_gate(o, n_shoes=rows.size, game=game, min_edge=min_edge, power=power, threshold=threshold, basis=edge_basis,
                          usable=data.usable, players=players, apply=gi == 0)
        if gi > 0 and gate["status"] == "underpowered":
            sec_notes.append("power: " + gate["sentence"] + " (a dealer's share of the shoes; the log's verdict rests on all shoes)")
        advance(f"{title}: {o.verdict}")
        outs.append(o)
        sec = _section(title, data, o, notes=sec_notes, extra={"kind": "log" if gi == 0 else "dealer", "power_gate": gate})
        sections.append(sec)
        figs.append(_figures(data, o) if figures and gi == 0 else [])
        if gi == 0:
            data_all = data
    verdict = worst([o.verdict for o in outs])
    rep = _header(command=command, inputs=inputs, equipment=_log_equipment(source, decks, proc), subject=f"shoe log {source} ({log.n_shoes} shoes)",
                  notes=notes, tables=sections, verdict=verdict, alpha=alpha, entropy=entropy, seed=seed, n_resamples=n_resamples,
                  decks=decks, game=game, rule=data_all.rule, standard=standard, rejected_count=len(log.rejected), max_rejected=options.max_rejected_share)
    rep["parameters"] = extra.pop("parameters", proc.parameters() if proc else [])
    rep |= extra
    rep["house_edge"] = house
    rep["power_effect"] = outs[0].power
    rep["power_gate"] = sections[0]["power_gate"]
    rep["reconstruction"] = {"before": before_mode, "shoes_tested": int(idx.size), "cards_filled_before_per_shoe": n_filled_b / idx.size,
                             "cards_filled_after_per_shoe": n_filled_a / idx.size,
                             "pickup": (proc.id if proc is not None else f"the {game} pickup of 004 (defaults)") if game else "none"}
    add_shoe_findings(rep)
    return ShuffleCertification(rep, figs, outs[0])


def _rank_only(log, o: ShuffleOptions, *, entropy: int, source: str, decks: int, game, proc, inputs, notes: list, dealt, house, edge_basis: str,
               players: int, inconclusive=()) -> ShuffleCertification:
    """The report of a log in which no shoe has a known order before its shuffle: the rank and game-level tests
    on the ``dealt`` cards only (INCONCLUSIVE: the required families cannot run). ``o.min_edge`` is the
    declared minimum edge (already the default's when none was declared) and ``o.standard`` the rule in force;
    ``inconclusive``: reasons the data cannot carry a verdict (:func:`unreadable_reasons`)."""
    alpha, n_resamples, standard, power, threshold = o.alpha, o.n_resamples, o.standard, o.power, o.threshold
    usable = dealt.shape[1]
    data = ShoeData(None, None, decks, game, proc.dealer_rule if proc and proc.game == "blackjack" else "S17", usable,
                    dealt, guess_shoes=min(2000, dealt.shape[0]),
                    rotated=None if log.rotated is None else log.rotated[:, :usable])
    out = _run(data, entropy=entropy, group="log", alpha=alpha, n_resamples=n_resamples, standard=standard, power=power,
               inconclusive=inconclusive)
    gate = power_gate(out, n_shoes=data.n_shoes, game=game, min_edge=o.min_edge, power=power, threshold=threshold, basis=edge_basis,
                      usable=usable, players=players)
    sections = [_section(f"shoe log {source} ({log.n_shoes} shoes)", data, out, extra={"power_gate": gate})]
    notes.append("no shoe has a known order before its shuffle (one shoe per table, no before stage, no --before): "
                 "only rank and game-level tests ran")
    rep = _header(command=o.command, inputs=inputs, equipment=_log_equipment(source, decks, proc), subject=f"shoe log {source}",
                  notes=notes, tables=sections, verdict=out.verdict, alpha=alpha, entropy=entropy, seed=o.seed,
                  n_resamples=n_resamples, decks=decks, game=game, rule=data.rule, standard=standard,
                  rejected_count=len(log.rejected), max_rejected=o.max_rejected_share)
    rep["parameters"] = proc.parameters() if proc else []
    rep["house_edge"] = house
    rep["power_effect"] = out.power
    rep["power_gate"] = gate
    add_shoe_findings(rep)
    return ShuffleCertification(rep, [[plots.pvalue_figure(out.results, alpha, out.adjusted)] if o.figures and out.applicable else []], out)


def _fit_wash(proc, decks: int, before_c, after_c, entropy: int, known_before, known_after, *, serialised: bool, source: str, fit: bool,
              wash_override: dict | None, notes: list) -> tuple[dict, Procedure | None]:
    """The procedure's wash fitted to the log (:func:`rngcert.simulate.fit.fit_procedure`): the report's ``fit``,
    ``parameters`` and ``measured_procedure`` entries, and the procedure as measured (None when there is no wash to
    fit); a parameter the log cannot identify is trained on at its worst case. Appends its notes to ``notes``."""
    ser = serialised
    extra = {}
    measured = None
    if fit and proc is not None and wash_parameters(proc) is not None:
        base = proc.with_decks(decks) if proc.decks != decks else proc
        try:
            f = fit_procedure(base, before_c, after_c, entropy, known_before=known_before, known_after=known_after, serialised=ser)
        except InputError as exc:
            f = {"error": str(exc)}
        extra["fit"] = f
        if f and "parameters" in f:
            vals = {k: v["value"] for k, v in f["parameters"].items()}
            ivs = {k: v["interval"] for k, v in f["parameters"].items()}
            # a parameter whose interval reaches both ends of the fitting grid is not identifiable from this
            # log: the trackers train on its worst case over the interval (the least mixing: the shortest
            # travel, the largest clumps), and it is never called measured
            wp = wash_parameters(base) or []
            unid = [k for k, v in f["parameters"].items() if v.get("open_low") and v.get("open_high")]
            for k in unid:
                vals[k] = ivs[k][0] if k == wp[0] else ivs[k][1]
                f["parameters"][k]["status"] = "not identifiable from this log"
                f["parameters"][k]["trained_on"] = vals[k]
            if wash_override:
                vals.update({k: float(v) for k, v in wash_override.items()})
            src = f"fit to {f['n_shoes']} shoes of {source}"
            measured = base.with_params(vals, status="measured", intervals=ivs, source=src)
            extra["parameters"] = measured.parameters()
            for p_ in extra["parameters"]:
                if p_["name"] in unid:
                    p_["status"] = "not identifiable"
                    p_["source"] = (f"{src}: the 95% interval reaches both ends of the fitting grid ({ivs[p_['name']][0]:g}..{ivs[p_['name']][1]:g}); "
                                    f"not identifiable from this log; the trackers train on its worst case, {vals[p_['name']]:g}")
            extra["measured_procedure"] = {"parameters": [{"name": k, "status": "not identifiable" if k in unid else "measured",
                                                           "interval": ivs[k], "value": vals[k], "source": src} for k in vals]}
            if unid:
                notes.append("not identifiable from this log: " + ", ".join(f"{f['parameters'][k]['label']} (interval {ivs[k][0]:g}..{ivs[k][1]:g}, "
                                                                             f"the whole fitting grid)" for k in unid)
                             + "; the trackers train on the worst case over the interval (" + ", ".join(f"{k} = {vals[k]:g}" for k in unid) + ")")
            if wash_override:
                notes.append("sensitivity point: the trackers train on the wash " + ", ".join(f"{k} = {v:g}" for k, v in wash_override.items()))
    return extra, measured


def _tracker_kernels(measured, entropy: int, before_c, after_c, known_before, known_after, *, fit_parameters, notes: list) -> list:
    """The trackers' kernels as ``(kernel, shoes it plays)``: learned from simulated tables of the procedure as
    measured (playing every shoe), else cross-fitted on the two halves of the log. Appends its note to ``notes``."""
    idx_size = before_c.shape[0]
    # trackers learn the shuffle from one half of the shoes and play the other (cross-fitting)
    fold = np.arange(idx_size) % 2
    kernels = []
    if measured is not None:
        # the tracker has studied the procedure as measured: its kernel comes from simulated tables
        # of the measured procedure (card identity known), and it plays every shoe of the log
        kernels.append((_kernel(measured, entropy, TRAIN_TABLES, key=("tracker-training", "measured")), np.arange(idx_size)))
        notes.append(f"trackers learned the shuffle from {TRAIN_TABLES} simulated tables of the procedure with the wash measured here"
                     + (" (worst case where not identifiable)" if fit_parameters and any(
                         v.get("status") for v in fit_parameters.values()) else ""))
    else:
        for f_ in (0, 1):
            tr = fold != f_
            if tr.sum() >= 10:
                k = TR.learn_kernel(before_c[tr], after_c[tr], lags=KERNEL_LAGS, known_before=known_before[tr], known_after=known_after[tr])
                kernels.append((k, np.flatnonzero(fold == f_)))
        if kernels:
            notes.append("trackers learned the shuffle from one half of the shoes and played the other, both ways (cross-fitting)")
    return kernels


def _resolution_needed(o: BatteryOutcome, level: float, n_resamples: int) -> int | None:
    """Monte Carlo replicates a section needs, or None when it has enough.

    A Monte Carlo p-value is at least 1 / (R + 1). When that floor is above Holm's first threshold
    level / k (k applicable tests), a test can never reject, and a PASS would rest on the
    resolution, not on the data (a dealer's sample at alpha / 6 with R = 1999: floor 0.0005 against
    0.00017). When some unrejected test sits at the floor, the section is run again with R + 1 the
    next multiple of 1,000 above 2k / level (the floor half of Holm's first threshold); otherwise the
    floor did not bind and the result stands.
    """
    applicable = [r for r in o.results if getattr(r, "applicable", False)]
    k = max(len(applicable), 1)
    floor = 1.0 / (n_resamples + 1)
    if floor <= level / k:
        return None
    if not any(float(r.pvalue) <= floor * (1 + 1e-9) and r.name not in o.rejected for r in applicable):
        return None
    return int(math.ceil(2 * k / level / 1000.0)) * 1000 - 1


def _subset_kernels(kernels, rows):
    """Kernels of the cross-fitting folds restricted to the section's shoes (row indices)."""
    out = []
    pos = {int(r): j for j, r in enumerate(rows)}
    for k, fold_rows in kernels:
        sel = np.array([pos[int(r)] for r in fold_rows if int(r) in pos], dtype=np.int64)
        if sel.size:
            out.append((k, sel))
    return out


#: Share of a shoe log's data rows that could not be read, and of its dealt shoes left out for problems, above which
#: every verdict is INCONCLUSIVE (DESIGN §4, the default of ``--max-rejected``); joker and cutting-card rows, named and
#: read around, and exact repeats of a row, counted once, are not unreadable.
MAX_UNREADABLE_SHARE = 0.05


def unreadable_reasons(log, max_share: float = MAX_UNREADABLE_SHARE, shoes: str = "dealt shoes") -> list[str]:
    """Reasons a shoe log cannot carry a verdict: a file with more than ``max_share`` of its data rows unreadable, or
    more than ``max_share`` of the log's dealt shoes left out for problems (a missing position, a card too many, a
    shoe split across files...): the shoes that are left are then a selection of the shoes dealt, which no test's
    null law describes (a scanner that drops the cards of some shuffles more than others selects by the shuffle).

    Parameters
    ----------
    log : rngcert.collect.shoelog.ShoeLog
        Its ``sources`` give each file's ``rows``, ``rejected_rows`` and ``non_card_rows``; its ``problems`` (stage
        ``after``: a dealt shoe) and ``after_ids`` the dealt shoes left out and kept.
    max_share : float
        Largest share of unreadable rows, and of dealt shoes left out, that a verdict may stand on.
    shoes : str
        What the log's shoes are, for the reason ("dealt shoes"; "shoes of the --before file": their orders before the
        shuffle are what is missing).

    Returns
    -------
    list of str
        One reason per file over the row limit, and one for the shoes (empty when nothing is over).
    """
    out = []
    for s in log.sources:
        rows = int(s.get("rows", 0))
        bad = int(s.get("rejected_rows", 0)) - int(s.get("non_card_rows", 0)) - int(s.get("repeated_rows", 0))
        if rows and bad / rows > max_share:
            out.append(f"{bad:,} of {rows:,} data rows ({_share(bad, rows)}) of {s['path']} could not be read, more than {_limit(max_share)}: "
                       "a verdict cannot stand on what is left (see rejects.csv: card spellings, columns, a second scanner's format)")
    kept = {tuple(k) for k in log.after_ids}
    left = {(p.table, p.shoe) for p in getattr(log, "problems", ()) if p.stage == "after"} - kept
    dealt = len(kept) + len(left)
    if dealt and len(left) / dealt > max_share:
        out.append(f"{len(left):,} of {dealt:,} {shoes} ({_share(len(left), dealt)}) were left out for problems (report.json's "
                   f"shoe_problems: missing positions, cards too many, ...), more than {_limit(max_share)}: "
                   + (f"the {len(kept):,} shoes left are a selection of the shoes dealt, and a verdict cannot stand on them"
                      if shoes == "dealt shoes" else "the other shoes' orders before the shuffle are not the ones declared")
                   + "; find why the scanner's shoes are incomplete")
    return out


#: Leading cards two dealt shoes must share to be the same shoe logged twice: a fair shuffle gives two shoes the same
#: first 20 cards with probability about 52^-20 (one deck: 1 / (52!/32!), about 3e-34).
SAME_SHOE_CARDS = 20


def repeated_shoe_reasons(log) -> list[str]:
    """A data-integrity reason when dealt shoes repeat the first :data:`SAME_SHOE_CARDS` cards of an earlier shoe (the
    same shoe logged twice under two ids, a session exported twice, or a shuffler that repeats its output): never a
    verdict on the shuffle (DESIGN §4: duplicated blocks are INCONCLUSIVE).

    Parameters
    ----------
    log : rngcert.collect.shoelog.ShoeLog
        Its ``dealt`` shoes (padded with -1), ``lengths`` and ``after_ids``.

    Returns
    -------
    list of str
        Empty, or one reason naming the first repeats.
    """
    K = SAME_SHOE_CARDS
    long_ = np.flatnonzero(np.asarray(log.lengths) >= K) if log.dealt is not None else np.zeros(0, np.int64)
    if long_.size < 2:
        return []
    if len(log.meta) == log.n_shoes:  # in the order the file gives them: the earlier shoe is named first
        long_ = np.array(sorted(long_.tolist(), key=lambda i: (log.meta[i]["file"], log.meta[i]["line"])))
    _, first, inv = np.unique(np.asarray(log.dealt)[long_, :K], axis=0, return_index=True, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    rep = np.flatnonzero(first[inv] != np.arange(long_.size))
    if not rep.size:
        return []
    name = lambda i: " ".join(str(x) for x in (("table", log.after_ids[i][0]) if log.after_ids[i][0] else ()) + ("shoe", log.after_ids[i][1]))  # noqa: E731
    shown = "; ".join(f"{name(long_[r])} = {name(long_[first[inv[r]]])}" for r in rep[:5]) + (" …" if rep.size > 5 else "")
    return [f"data integrity: {rep.size:,} of {log.n_shoes:,} dealt shoes repeat the cards of an earlier shoe ({shown}; the same first "
            f"{K} cards at least, which two shuffled shoes do not share): the same shoe logged twice under two ids, or a shuffler "
            "that repeats its output; check the scanner's export before any verdict (if the shoes were dealt so, the shuffle is "
            "not random at all)"]


def _limit(share: float) -> str:
    """A ``--max-rejected`` share as a percentage, as given (0.001 is 0.1%, not 0%)."""
    return f"{100.0 * share:.3g}%"


def _share(part: int, whole: int) -> str:
    """``part / whole`` as a percentage that never rounds to 0% or 100% when it is neither."""
    pct = 100.0 * part / whole
    if 0 < pct < 1:
        return f"{pct:.2g}%"
    if 99 < pct < 100:
        return f"{pct:.3g}%"
    return f"{pct:.0f}%"


def dealt_length_reasons(log, decks: int, proc: Procedure | None, game: str | None) -> list[str]:
    """A reason the log cannot carry a verdict when its dealt shoes stop far in front of the procedure's cutting card
    for ``decks`` decks (6-deck shoes read with ``--decks 8``: every order before a shuffle would be rebuilt wrong).

    Parameters
    ----------
    log : rngcert.collect.shoelog.ShoeLog
    decks : int
        The declared decks per shoe.
    proc : Procedure or None
        The procedure the table follows (its ``cut_card_from_back``); no check without one.
    game : str or None

    Returns
    -------
    list of str
        Empty, or one reason: the median dealt length is under 3/4 of the cutting card's place.
    """
    if proc is None or game is None or proc.game != game or not proc.cut_card_from_back or not log.n_shoes:
        return []
    cut = 52 * decks - int(proc.cut_card_from_back)
    med = float(np.median(log.lengths))
    if cut <= 0 or med >= 0.75 * cut:
        return []
    fits = [d for d in range(1, decks) if 0 < 52 * d - int(proc.cut_card_from_back) <= med]
    return [f"the dealt shoes hold a median of {med:.0f} cards, but with --decks {decks} the cutting card of {proc.id} is at card {cut} "
            f"({proc.cut_card_from_back} from the back): the shoes look like shoes of fewer decks"
            + (f" ({fits[-1]} decks put it at card {52 * fits[-1] - int(proc.cut_card_from_back)})" if fits else "")
            + "; check --decks (read with the wrong decks, every order before a shuffle is rebuilt wrong)"]


def _run_folds(data: ShoeData, **kw) -> BatteryOutcome:
    """Run the battery; with cross-fitted kernels the trackers of each fold use the other fold's kernel."""
    if not isinstance(data.kernel, list):
        return _run(data, **kw)
    power = kw.get("power", DEFAULT_POWER)
    from rngcert.battery import shuffle as BS

    folds = data.kernel
    specs = []
    for spec in BS.battery_for(data.game).specs:
        if is_tracker(spec.name) and "tracker" in spec.needs:
            specs.append(_fold_spec(spec, folds))
        else:
            specs.append(spec)
    battery = BS.Battery("shuffle", tuple(specs), BS.REQUIRED)
    data.kernel = folds[0][0]  # for lacks("tracker")
    results, errors, keys = evaluate_shuffle(data, entropy=kw["entropy"], n_resamples=kw["n_resamples"], alpha=kw["alpha"],
                                             group=kw["group"], battery=battery)
    out = decide_shuffle(results, alpha=kw["alpha"], standard=kw["standard"], errors=errors, inconclusive=kw.get("inconclusive", ()),
                         seeds={"entropy": str(kw["entropy"]), "spawn_keys": keys})
    out.power = _power(out, data, power, kw["standard"])
    return out


def _fold_spec(spec, folds):
    from dataclasses import replace

    from rngcert.battery.shuffle import ShoeData as SD

    def run(d: SD, ctx, **params):
        parts = []
        for k, rows in folds:
            sub = SD(d.before[rows], d.after[rows], d.decks, d.game, d.rule, d.usable, None if d.dealt is None else d.dealt[rows],
                     before_view=d.before_view[rows], kernel=k, threshold=d.threshold, bj_rules=d.bj_rules, players=d.players)
            r = spec.func(sub, ctx, **params)
            parts.append(r)
        # re-assemble per-shoe stakes and returns of the folds into one edge test
        app = [r for r in parts if r.applicable]
        if not app:
            return parts[0]
        tot_units = sum(r.details["units"] for r in app)
        e_num = sum(r.details["edge"] * r.details["units"] for r in app)
        var = sum((r.details["se"] * r.details["units"]) ** 2 for r in app)
        edge = e_num / tot_units
        se = math.sqrt(var) / tot_units
        d0 = dict(app[0].details)
        d0.update({"edge": edge, "se": se, "ci95": [edge - 1.96 * se, edge + 1.96 * se], "units": tot_units,
                   "n_shoes": sum(r.details["n_shoes"] for r in app), "bets_shoes": sum(r.details["bets_shoes"] for r in app),
                   "cross_fitting": "trackers learned from one half of the shoes and played the other, both ways"})
        z = (edge - d.threshold) / se if se > 0 else 0.0
        from rngcert.stats.result import TestResult

        return TestResult(spec.name, app[0].requirement, edge, None, max(float(dist.norm_sf(z)), float(np.finfo(float).tiny)),
                          d0["n_shoes"], app[0].method + ", cross-fitted", d0 | {"z": z})

    return replace(spec, func=run)


def _log_equipment(source, decks, proc):
    eq = {"id": "shoe-log", "name": f"card-scanner log, {decks} deck(s)", "kind": "shoe", "source": str(source)}
    if proc is not None:
        eq["procedure"] = proc.to_dict()
    return eq
