"""CLI commands for shoes and shuffles: ``rngcert shuffle certify|simulate|riffles|house-edge``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rngcert.cli._blackjack import blackjack_rule_options
from rngcert.cli._common import (
    MAX_BURN_IN,
    MAX_RESAMPLES,
    MAX_SHOE_TABLES,
    MAX_SHOES,
    Real,
    check_report_options,
    command_line,
    emit_report,
    given,
    progress_bar,
    refuse_existing,
    refuse_given,
    report_options,
)
from rngcert.cli._parallel import parallel_options, plan_of
from rngcert.equipment.games import GAMES

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL ·
3 input error · 4 procedure error · 2 usage error · 1 internal error · 130 Ctrl-C · 143 SIGTERM."""


@click.group("shuffle", epilog="""\b
Examples:
  rngcert shuffle certify baccarat-004 --shoes 2000 --seed 1   # a packaged procedure, simulated
  rngcert shuffle certify scanner-log.csv --procedure baccarat-004
  rngcert shuffle riffles --cards 52 --max 12
  rngcert shuffle house-edge blackjack-004
""")
def shuffle():
    """Shoes and shuffle procedures: certify, simulate, exact riffle tables, blackjack house edge."""


def _is_procedure(arg: str) -> bool:
    """A packaged procedure id or a .toml file; a name that is neither an existing file nor a
    packaged id is an equipment error that lists the packaged ids."""
    from rngcert.equipment.procedure import packaged_procedures
    from rngcert.errors import EquipmentError, InputError

    if arg.endswith(".toml") or arg in packaged_procedures():
        return True
    if not Path(arg).exists():
        if Path(arg).suffix.lower() in (".csv", ".tsv", ".txt"):  # a shoe log that is not there: an input error (exit 3)
            raise InputError(f"{arg}: no such shoe log")
        raise EquipmentError(f"{arg!r} is neither a file nor a packaged procedure ({', '.join(packaged_procedures())})")
    return False


def _apply_decks_rule(proc, decks, rule):
    """--decks and --rule on a procedure: allowed only where the rules leave them open."""
    from rngcert.errors import EquipmentError

    note = ""
    par = {p["name"]: p for p in proc.parameters()}
    if decks is not None and decks != proc.decks:
        if par["decks"]["status"] == "rule":
            # refused by the rules, like --rule H17 where the rules allow S17 only: an equipment error (exit 4)
            raise EquipmentError(f"{proc.id} fixes the number of decks at {proc.decks}: {par['decks']['source']}")
        proc = proc.with_decks(decks)  # raises EquipmentError citing the rule when not permitted
        note = (f"--decks {decks}: the cutting card stays {proc.cut_card_from_back} cards from the back, so "
                f"{100 * proc.penetration:.0f}% of the shoe is dealt")
    if rule is not None and proc.game == "blackjack" and rule != proc.dealer_rule:
        proc = proc.with_params({"deal.rule": rule})  # raises EquipmentError citing the rule when not permitted
    return proc, note


# long: one line per report part (parameters, trackers, first shoe, pickup, power), in print order
def _shuffle_lines(report: dict) -> list[str]:
    """The shuffle-specific lines printed before the common summary."""
    out = []
    par = report.get("parameters") or []
    assumed = [p for p in par if p["status"] == "assumed"]
    measured = [p for p in par if p["status"] == "measured"]
    if par:
        out.append(f"parameters: {len(measured)} measured, {sum(p['status'] == 'rule' for p in par)} fixed by the rules, "
                   f"{len(assumed)} ASSUMED: " + ", ".join(f"{p['name']}={p['value']}" for p in assumed[:12]))
        for p in measured:
            if p.get("interval"):
                out.append(f"  measured {p['name']} = {p['value']:.3g} (interval {p['interval'][0]:.3g}..{p['interval'][1]:.3g}; {p['source']})")
            else:  # a measured choice (the pickup side): its evidence is in its source
                out.append(f"  measured {p['name']} = {p['value']} ({p['source'][:200]})")
        for p in (p for p in par if p["status"] == "not identifiable"):
            out.append(f"  NOT IDENTIFIABLE {p['name']}: {p['source']}")
    fit = report.get("fit")
    if fit and fit.get("parameters"):
        for k, v in fit["parameters"].items():
            # an end at the grid's edge is open: the interval reaches at least that far
            hi = f"{v['interval'][1]:.3g}" + (" or more (grid edge)" if v["open_high"] else "")
            lo = ("at most " if v["open_low"] else "") + f"{v['interval'][0]:.3g}" + (" (grid edge)" if v["open_low"] else "")
            out.append(f"  fitted {v['label']}: {v['value']:.3g} (95% interval {lo}..{hi})"
                       + (f" — not identifiable from this log; trackers trained on {v['trained_on']:.3g}" if v.get("status") else ""))
        gsr = (f"; equivalent GSR riffles {fit['gsr_equivalent_riffles']:.2f}" if fit.get("gsr_equivalent_riffles") is not None
               else f"; {fit['gsr_equivalent_withheld']}" if fit.get("gsr_equivalent_withheld") else "")
        out.append(f"  share of neighbouring pairs kept {100 * fit['share_adjacent_kept']:.2f}%{gsr}"
                   + (f" ({fit['summaries_basis']})" if fit.get("summaries_basis") else ""))
    he = report.get("house_edge")
    if he:
        if he.get("sentence"):  # a game of the registry words its own house edge
            out.append(f"house edge ({he['decks']} decks): {he['sentence']}")
        elif he["game"] == "baccarat":
            out.append(f"house edge ({he['decks']} decks): Banker {100 * he['banker']:.3f}%, Player {100 * he['player']:.3f}%")
        else:
            out.append(f"house edge, basic strategy ({he['decks']} decks, {he['rules']['dealer']}, hole card {he['rules']['hole_card']}): "
                       f"{100 * he['basic_strategy']:.3f}%; insurance {100 * he['insurance']:.2f}%")
    for t in report["tables"]:
        for tr in t.get("trackers", []):
            out.append(f"  [{t['table']}] tracker {tr['name']}: {tr['sentence']}")
        for f in t.get("findings", [])[:6]:
            out.append(f"  [{t['table']}] finding: {f}")
    fs = report.get("first_shoe")
    if fs:
        out.append(f"first shoe from new decks: {fs['verdict']}" + (f" — {fs['needs']}" if fs.get("needs") else ""))
    sens = report.get("sensitivity")
    if sens:
        axes = list(sens["axes"])
        out.append(f"sensitivity at {sens['tables_per_point']} tables a point (verdict, best tracker edge [95% interval], the edge "
                   "detectable with 90% power; SUSPECT = findings, no edge established at this size): " + " × ".join(axes))
        for r in sens["rows"]:
            e = "no bets" if r["edge"] is None else f"{100 * r['edge']:+.2f}% [{100 * r['ci95'][0]:+.1f}, {100 * r['ci95'][1]:+.1f}] ({r['tracker']})"
            if r.get("detectable_edge") is not None:
                e += f"; detectable {100 * r['detectable_edge']:+.1f}%"
            out.append("  " + ", ".join(f"{a}={r[a]}" for a in axes) + f": {r['verdict']}, {e}")
    ps = report.get("pickup_side")
    if ps and ps.get("sentence"):
        out.append(ps["sentence"])
    ls = report.get("log_sensitivity")
    if ls:
        out.append("sensitivity of this log's verdict (pickup side × wash the trackers train on):")
        for r in ls["rows"]:
            e = "no bets" if r["edge"] is None else f"{100 * r['edge']:+.2f}% [{100 * r['ci95'][0]:+.1f}, {100 * r['ci95'][1]:+.1f}] ({r['tracker']})"
            w = r["wash"] if isinstance(r["wash"], str) else ", ".join(f"{k}={v:g}" for k, v in r["wash"].items())
            out.append(f"  pickup {r['pickup']}, wash {w}: {r['verdict']}, {e}")
    pe = report.get("power_effect")
    if pe and pe.get("statement"):
        out.append(f"power: {pe['statement']}")
    pg = report.get("power_gate")
    if pg and pg.get("status") in ("powered", "underpowered"):
        out.append(f"power gate ({pg['status']}): {pg['sentence']}")
    return [x for x in out if x]


def _not_unreadable(src: dict) -> str:
    """The rejected rows of a shoe-log file that are not unreadable (joker and cutting-card rows, exact repeats), in one
    bracket, or nothing."""
    parts = ([f"{src['non_card_rows']} joker or cutting-card row(s) left out, their shoes kept"] if src.get("non_card_rows") else []) + (
        [f"{src['repeated_rows']} exact repeat(s) of a row, counted once"] if src.get("repeated_rows") else [])
    return f" ({'; '.join(parts)})" if parts else ""


# long: the two sources of shoes (a procedure, a scanner log) with their checks, one options object and the rerun recipe
def _certify_shuffle(source, *, shoes=2000, burn_in=10, decks=None, game=None, procedure=None, before="pickup", standard=None, rule=None,
                     threshold=0.0, sensitivity=None, sensitivity_shoes=400, seed=None, resamples=1999, alpha=0.01, figures=True,
                     command="", progress=True, plan=None, min_edge=None, power=None, pickup=None, max_rejected=0.05):
    """`shuffle certify` without the output: (certification, rejected rows, equipment id). Also
    what `rngcert verify --rerun` calls with a report's recorded recipe."""

    from rngcert.cli._standard import load_for
    from rngcert.pipeline.certify_shuffle import certify_log, certify_procedure
    from rngcert.pipeline.options import ShuffleOptions
    from rngcert.pipeline.standards import apply_standard
    from rngcert.seeding import root

    # --standard: a packaged id or a lab's TOML; 'uniform' is the older name of 'uniformity'. The packaged edge and
    # uniformity standards also choose the shuffle battery's own rule; others leave it to the procedure's kind
    std = load_for("uniformity" if standard == "uniform" else standard, "shoe", "shuffle certify", alpha)
    internal = {"edge": "edge", "uniformity": "uniform"}.get(std.id) if std.packaged else None
    ss = root(seed)
    thr = threshold / 100.0
    # the declared minimum tracker edge: --min-edge, else the standard's (a number, or "house-edge": the game's, which the
    # pipeline computes when given None); the declared power likewise
    me = min_edge / 100.0 if min_edge is not None else std.shoe_min_edge(None)
    power = std.power("shoe") if power is None else power
    # the certification's options, built once here and passed down as one object
    options = ShuffleOptions(seed=int(ss.entropy), alpha=alpha, threshold=thr, n_resamples=resamples, standard=internal, figures=figures,
                             command=command, plan=plan, min_edge=me, power=power, max_rejected_share=max_rejected)
    if _is_procedure(source):
        from rngcert.equipment.procedure import load_procedure

        if procedure is not None or before != "pickup" or pickup is not None:
            raise click.UsageError("--procedure, --before and --pickup describe a shoe log; a procedure names its own pickup")
        proc = load_procedure(source)
        if game not in (None, proc.game):  # the procedure's shuffle dealing another game: that game's deal and pickup
            proc = proc.with_game(game)
        proc, note = _apply_decks_rule(proc, decks, rule)
        sensitivity = True if sensitivity is None else bool(sensitivity)  # a procedure's report shows its assumptions' grid
        with progress_bar(enabled=None if progress else False, unit="stage", desc=f"{proc.id}") as bar:
            cert = certify_procedure(proc, tables=shoes, burn_in=burn_in, sensitivity=sensitivity, sensitivity_tables=sensitivity_shoes,
                                     decks_note=note, options=options.replace(progress=bar.callback()))
        rejected = []
        eq_id = proc.id
    else:
        from rngcert.collect.shoelog import read_shoe_log

        if decks is None:
            raise click.UsageError("--decks is required to certify a shoe log")
        proc = None
        if procedure is not None:
            from rngcert.equipment.procedure import load_procedure

            proc = load_procedure(procedure)
            proc, _ = _apply_decks_rule(proc, decks if proc.game == "blackjack" else None, rule)
            if proc.game != "none" and game not in (None, proc.game):
                raise click.UsageError(f"--game {game} but procedure {proc.id} is for {proc.game}")
            game = game or proc.game
            if proc.game not in ("blackjack", "none") and decks != proc.decks:
                from rngcert.errors import EquipmentError

                raise EquipmentError(f"{proc.id} is for {proc.decks} decks; the log was read with --decks {decks}")
        g = None if game in (None, "none") else game
        from rngcert.pipeline.pickup_side import SIDES

        if pickup is not None and pickup not in SIDES.get(g or "", ()):
            raise click.UsageError(f"--pickup {pickup}: the pickup sides of game {g or 'none'} are {list(SIDES.get(g or '', ())) or 'none'}")
        before_mode, before_orders, blog = before, None, None
        if before not in ("pickup", "previous", "new-deck"):
            blog = read_shoe_log([before], decks=decks, orders=True)
            src = blog.pair_before if blog.pair_before is not None else blog.dealt
            ids = blog.pair_ids if blog.pair_before is not None else blog.after_ids
            before_orders = {tuple(k): src[i] for i, k in enumerate(ids)}
            before_mode = "pickup"
        log = read_shoe_log([source], decks=decks)
        if before_orders is not None:
            _before_matches(before, before_orders, log, source)
        _refuse_unused_rebuild(log, source)
        # the --before file's rejected rows and shoe problems are kept and reported with the log's
        problems = log.problems + (blog.problems if blog is not None else [])
        notes = [str(p) for p in problems[:20]]
        if len(problems) > 20:
            notes.append(f"…and {len(problems) - 20} more shoe problems (all in report.json)")
        notes += log.notes
        inputs = [{**s, "format": "shoe log (CSV)", "summary": f"{s.get('rows')} rows: {s.get('accepted_rows')} accepted, "
                   f"{s.get('rejected_rows')} rejected" + _not_unreadable(s)
                   + f"; {s.get('shoe_problems', 0)} shoe(s) left out for problems"
                   + (f" ({s['shoe_problem_findings']} findings)" if s.get("shoe_problem_findings", 0) > s.get("shoe_problems", 0) else "")}
                  for s in log.sources + (blog.sources if blog is not None else [])]
        with progress_bar(enabled=None if progress else False, unit="stage", desc=f"{log.n_shoes} shoes") as bar:
            cert = certify_log(log, source=str(source), decks=decks, game=g, proc=proc, before_mode=before_mode, before_orders=before_orders,
                               inputs=inputs, notes=notes, pickup=pickup, sensitivity=bool(sensitivity),
                               options=options.replace(progress=bar.callback()), before_log=blog)
        cert.report["shoe_problems"] = [p.to_dict() for p in problems]
        rejected = log.rejected + (blog.rejected if blog is not None else [])
        cert.report["rejected_count"] = len(rejected)  # (rejects.csv holds the --before file's too)
        eq_id = "shoe-log"
    apply_standard(cert.report, std, kind="shoe", alpha=alpha)
    if seed is None:  # (the pipeline was given the entropy drawn here as its seed)
        cert.report["seed"]["how"] = "fresh OS entropy, recorded here"
    cert.report["rerun"] = {
        "pipeline": "certify_shuffle", "source": str(source), "shoes": shoes, "burn_in": burn_in, "decks": decks, "game": game,
        "procedure": procedure, "before": before, "standard": standard, "rule": rule, "threshold": threshold, "sensitivity": sensitivity,
        "sensitivity_shoes": sensitivity_shoes, "seed": int(ss.entropy),
        "resamples": resamples, "alpha": alpha, "min_edge": min_edge, "power": power, "pickup": pickup, "max_rejected": max_rejected,
    }
    return cert, rejected, eq_id


def _refuse_unused_rebuild(log, source: str) -> None:
    """``--before`` or ``--pickup`` given for a log that records every dealt shoe's order before the shuffle (stage
    before): neither would be used, so they are refused (an option given is applied or refused, never silently
    ignored); an input error (exit 3), because the log, not the command line, makes them idle."""
    from rngcert.errors import InputError

    used = given("before", "pickup")
    if used and log.n_shoes and set(map(tuple, log.pair_ids)) >= set(map(tuple, log.after_ids)):
        raise InputError(f"{', '.join(used)}: every dealt shoe of {source} ({log.n_shoes:,}) has its order before the shuffle recorded "
                         "(stage before), so the order is never rebuilt or declared and this option would not be used; leave it out")


def _before_matches(before: str, orders: dict, log, source: str) -> None:
    """A ``--before FILE`` none of whose shoes is a dealt shoe of the log (another table name, other shoe ids) is an input
    error: its orders would all go unused, and every shoe's order before the shuffle would silently come from elsewhere."""
    from rngcert.errors import InputError

    dealt = [tuple(k) for k in log.after_ids]
    if set(orders) & set(dealt):
        return

    def some(keys) -> str:
        keys = sorted(keys, key=lambda k: (str(k[0]), len(str(k[1])), str(k[1])))
        return ", ".join(f"table {t!r} shoe {s_!r}" for t, s_ in keys[:3]) + (f" … ({len(keys):,} in all)" if len(keys) > 3 else "")

    raise InputError(f"{before}: none of its {len(orders):,} shoes is a dealt shoe of {source} (a shoe is matched by its table and "
                     f"shoe_id): the --before file has {some(orders)}; the log has {some(dealt)}")


def _refuse_unused(source: str, *, procedure, game, rule, sensitivity) -> None:
    """The options of ``shuffle certify`` that the other kind of source (PROCEDURE or SHOELOG) would
    ignore, a --sensitivity-shoes without a grid, and a --rule without a blackjack procedure, are usage
    errors (exit 2): an option given is applied or refused. (--procedure, --before and --pickup with a
    PROCEDURE are refused in :func:`_certify_shuffle`.)"""
    from rngcert.equipment.procedure import load_procedure

    is_procedure = _is_procedure(source)
    if is_procedure:
        refuse_given(("max_rejected",), "a share of a SHOELOG's rows and shoes; a PROCEDURE's shoes are simulated, none is unreadable")
    else:
        refuse_given(("shoes", "burn_in", "sensitivity_shoes"), "options of a simulated PROCEDURE; a SHOELOG's shoes are the ones it holds")
    if sensitivity is False:
        refuse_given(("sensitivity_shoes",), "the tables per point of the sensitivity grid, which --no-sensitivity turns off")
    if rule is None:
        return
    if not is_procedure and procedure is None:
        raise click.UsageError("--rule: the dealer rule of a blackjack procedure; with a SHOELOG give the table's --procedure too "
                               "(without it no blackjack rules are applied)")
    proc = load_procedure(source if is_procedure else procedure)
    dealt = game if is_procedure and game is not None else proc.game
    if dealt != "blackjack":
        raise click.UsageError(f"--rule {rule}: a blackjack dealer rule; {proc.id} deals {dealt}")


@shuffle.command(
    "certify",
    epilog="""\b
Examples:
  rngcert shuffle certify baccarat-004 --shoes 2000 --seed 1
  rngcert shuffle certify blackjack-004 --decks 6 --seed 1
  rngcert shuffle certify baccarat-004 --no-sensitivity --seed 1
  rngcert shuffle certify my-procedure.toml --shoes 5000
  rngcert shuffle certify baccarat-004 --shoes 20000 --workers 2 --seed 1
  rngcert shuffle certify scanner.csv --decks 8 --game baccarat --procedure baccarat-004
  rngcert shuffle certify scanner.csv --decks 8 --game baccarat --standard uniform --before new-deck
"""
    + "\n"
    + EXIT_TABLE,
)
@click.argument("source")
@click.option("--shoes", type=click.IntRange(1, MAX_SHOES), default=2000, show_default=True, help="PROCEDURE: tables simulated (one tested shoe each; refused with a SHOELOG).")
@click.option("--burn-in", type=click.IntRange(1, MAX_BURN_IN), default=10, show_default=True, help="PROCEDURE: shoes a table deals before the tested shoe (steady state; refused with a SHOELOG).")
@click.option("--decks", type=click.IntRange(1, 8), default=None, help="SHOELOG: decks per shoe (required). PROCEDURE: decks in play where the rules leave it open (blackjack), "
                   "as many as keep the cutting card inside the shoe (blackjack-004: 5 to 8, its card is 4 decks from the back).")
@click.option("--game", type=click.Choice([*GAMES, "none"]), default=None,
              help="The game dealt (rngcert.equipment.games): adds its game-level tests and trackers. SHOELOG: the log's game "
                   "(default the --procedure's); PROCEDURE: deal this game instead of the procedure's own.")
@click.option("--procedure", "procedure", default=None, help="SHOELOG: the procedure the table follows (pickup rules, wash to measure, standard).")
@click.option("--before", "before", default="pickup", show_default=True, help="SHOELOG without a before stage: pickup (rebuild from the previous shoe), previous, new-deck, or a shoe-log FILE with the orders before.")
@click.option("--standard", default=None, metavar="NAME|PATH", help="Certification standard: rngcert-default (the default: a manual procedure FAILs on a tracker edge, a machine on any rejection), edge, uniformity (or uniform), maryland-comar-36.05.02.17F, or a lab's own TOML file.")
@click.option("--rule", type=click.Choice(["S17", "H17"]), default=None, help="Blackjack dealer rule (003 rule 4.15); refused where the procedure's rules forbid it (004 §3 rule 4.4 ii), for another game, "
                   "and for a SHOELOG without --procedure.")
@click.option("--threshold", type=Real(), default=0.0, show_default=True, help="Tracker edge, in % of the stake, declared in advance: FAIL above it.")
@click.option("--min-edge", type=Real(min=0, min_open=True), default=None,
              help="Declared minimum tracker edge, in % of the stake above --threshold, that the shoes must detect with --power for a "
                   "PASS (default: the game's house edge); too few shoes give INCONCLUSIVE with the shoes needed.")
@click.option("--power", type=Real(0, 1, min_open=True, max_open=True), default=None,
              help="Power for the power statement and --min-edge (default: the standard's declared power, 0.9 in rngcert-default).")
@click.option("--pickup", type=click.Choice(["banker-first", "player-first", "right-to-left", "left-to-right"]), default=None,
              help="SHOELOG: the pickup side, declared (baccarat: banker-first or player-first; blackjack: right-to-left or "
                   "left-to-right). Default: fitted from the log per dealer and shift (004 §2 rule 3.6.2 and §3 rule 3.6 leave it to "
                   "each dealer for a shift), and where the log cannot tell, the worst verdict over both sides.")
@click.option("--sensitivity/--no-sensitivity", default=None,
              help="PROCEDURE: verdict, edge and detectable edge over a grid of the assumed parameters (wash travel × clump × riffles); "
                   "on by default for a procedure (about 7 s). SHOELOG: the verdict again under each plausible pickup side and at "
                   "the ends of each fitted wash interval (off by default).")
@click.option("--sensitivity-shoes", type=click.IntRange(100, MAX_SHOES), default=400, show_default=True,
              help="PROCEDURE: tables per sensitivity grid point (refused with a SHOELOG and with --no-sensitivity).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed (simulation and Monte Carlo p-values; recorded).")
@click.option("--resamples", type=click.IntRange(99, MAX_RESAMPLES), default=1999, show_default=True, help="Monte Carlo replicates (logs of decks without #k serials).")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification level.")
@click.option("--max-rejected", type=Real(0, 1), default=0.05, show_default=True,
              help="SHOELOG: share of unreadable rows, and of dealt shoes left out for problems, above which every verdict is INCONCLUSIVE "
                   "(refused with a PROCEDURE).")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder for reports/<id>-<UTC time>/.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json to standard output instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
@report_options
@parallel_options
def shuffle_certify(source, shoes, burn_in, decks, game, procedure, before, standard, rule, threshold, min_edge, power, pickup, sensitivity,
                    sensitivity_shoes, seed, resamples, alpha, max_rejected, outdir, as_json, no_plots, pdf, sign_key, workers, scheduler):
    """Certify a shuffle procedure (PROCEDURE.toml or a packaged id) or a card-scanner SHOELOG.

    A procedure is simulated at --shoes tables; each deals --burn-in shoes from new decks before
    the shoe under test (steady state), and the first shoe from new decks is judged on its own.
    A log is read and every shoe validated; a log of dealt cards only is certified by rebuilding
    each shoe's order before the shuffle from the previous shoe of the table and the pickup
    rules. The battery then runs (rising sequences, adjacent pairs, displacement, correlations,
    fixed points, zones, guessing, game-level tests, orientation) with realistic trackers that see
    only the dealt cards; the report gives their edge in % of the stake with its interval, every
    procedure parameter as measured, fixed by the rules or assumed, and the verdict with Holm's
    correction at --alpha. A procedure's tables are simulated in batches of 2,000; they and the
    sensitivity grid's points are work items (on a local process pool of every core by default
    when there are two or more, see --workers).
    """
    cmd = command_line()
    _refuse_unused(source, procedure=procedure, game=game, rule=rule, sensitivity=sensitivity)
    key = check_report_options(pdf, sign_key)
    cert, rejected, eq_id = _certify_shuffle(
        source, shoes=shoes, burn_in=burn_in, decks=decks, game=game, procedure=procedure, before=before, standard=standard, rule=rule,
        threshold=threshold, sensitivity=sensitivity, sensitivity_shoes=sensitivity_shoes, seed=seed, resamples=resamples, alpha=alpha,
        figures=not no_plots, command=cmd, plan=plan_of(workers, scheduler), min_edge=min_edge, power=power, pickup=pickup,
        max_rejected=max_rejected)
    details = [] if as_json else list(_shuffle_lines(cert.report))
    emit_report(cert.report, cert.figures, rejected, outdir, eq_id, as_json, pdf=pdf, sign_key=key, details=details)


@shuffle.command(
    "simulate",
    epilog="""\b
Examples:
  rngcert shuffle simulate baccarat-004 --shoes 500 --seed 1 --out scanner.csv --dealt-only
  rngcert shuffle simulate blackjack-004 --tables 4 --shoes 200 --dealers 3 --out shoes.csv""",
)
@click.argument("procedure")
@click.option("--shoes", type=click.IntRange(1, MAX_SHOES), default=1000, show_default=True, help="Consecutive shoes per table, from new decks.")
@click.option("--tables", type=click.IntRange(1, MAX_SHOE_TABLES), default=1, show_default=True, help="Tables.")
@click.option("--dealt-only", is_flag=True, help="Write what a card scanner sees: the dealt cards of each shoe, no 'before' stage.")
@click.option("--dealers", type=click.IntRange(min=1), default=None, help="Write a dealer column, dealers D1..Dk taking turns shoe by shoe.")
@click.option("--serials/--no-serials", default=None, help="Write #k deck serials (a lab's marked decks). Default: serials with both stages, none with --dealt-only (a live scanner reads rank and suit).")
@click.option("--decks", type=click.IntRange(1, 8), default=None, help="Decks in play where the procedure's rules leave it open.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in OUT.json).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output shoe log (scanner format).")
@click.option("--json", "as_json", is_flag=True, help="Print the log's metadata (the sidecar OUT.json, with the log's path and row count) as JSON.")
@click.option("--force", is_flag=True, help="Overwrite OUT and OUT.json if they exist (without it an existing file is refused, exit 3).")
def shuffle_simulate(procedure, shoes, tables, dealt_only, dealers, serials, decks, seed, out, as_json=False, force=False):
    """Write a shoe log in the card-scanner format from simulated tables.

    Every table deals --shoes consecutive shoes from new decks, each the previous one's discards
    shuffled by the procedure. By default every shoe appears twice, stage "before" (the order the
    shuffle starts from) and stage "after" (the whole shuffled shoe); with --dealt-only only the
    cards dealt to the cutting card are written, with their orientation, as a live scanner logs
    them. Simulated and real shoes take the same path through ``rngcert shuffle certify LOG``.
    """

    from rngcert.collect.shoelog import write_shoe_log
    from rngcert.equipment.procedure import load_procedure
    from rngcert.seeding import root
    from rngcert.simulate.procedure import simulate_log
    from rngcert.simulate.sources import versions

    # the tables' parts OUT.t0, OUT.t1, ... are written beside OUT, then joined into it and removed
    refuse_existing(out, force, *(Path(str(out) + f".t{t}") for t in range(tables) if tables > 1))
    proc = load_procedure(procedure)
    proc, note = _apply_decks_rule(proc, decks, None)
    ss = root(seed)
    seq = simulate_log(proc, shoes, int(ss.entropy), tables=tables)
    serial = (not dealt_only) if serials is None else serials
    turns = any(st.op == "wash" and st.full_params()["rotate"] > 0 for st in proc.steps)  # orientation is modelled only then
    rows = 0
    tmp = []
    for t in range(tables):
        f = Path(str(out) + f".t{t}") if tables > 1 else Path(out)
        dl = None if dealers is None else [f"D{1 + (s % dealers)}" for s in range(shoes)]
        ids = [f"{s + 1}" for s in range(shoes)]
        tname = proc.id if tables == 1 else f"{proc.id}-T{t + 1}"
        if dealt_only:
            rows += write_shoe_log(f, seq.after[t], shoe_ids=ids, table=tname, lengths=seq.n_dealt[t], rotated=seq.rotated[t] if turns else None, dealer=dl,
                                   serial=serial)
        else:
            rows += write_shoe_log(f, seq.after[t], before=seq.before[t], shoe_ids=ids, table=tname, rotated=seq.rotated[t] if turns else None, dealer=dl,
                                   serial=serial)
        tmp.append(f)
    if tables > 1:
        with open(out, "w", encoding="utf-8") as fh:
            for i, f in enumerate(tmp):
                lines = f.read_text(encoding="utf-8").splitlines(True)
                fh.writelines(lines if i == 0 else lines[1:])
                f.unlink()
    meta = {"procedure": proc.id, "file": proc.path, "shoes": shoes, "tables": tables, "decks": proc.decks, "dealt_only": dealt_only,
            "serials": serial,
            "seed_entropy": str(ss.entropy), "stream": "shuffle-simulation/log", "parameters": proc.parameters(), **versions()}
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    click.echo(f"wrote {tables} table(s) x {shoes} shoes ({rows} rows) of {proc.id} to {out}; seed entropy {ss.entropy}; "
               f"metadata in {out}.json" + (f"; {note}" if note else ""), err=True)
    if as_json:
        click.echo(json.dumps({"log": str(out), "metadata": str(out) + ".json", "rows": rows, "note": note or "", **meta}, indent=1))


@shuffle.command("riffles", epilog="Example:\n\n  rngcert shuffle riffles --cards 52 --max 12")
@click.option("--cards", type=click.IntRange(2, 1000), default=52, show_default=True, help="Cards in the deck.")
@click.option("--max", "kmax", type=click.IntRange(1, 40), default=10, show_default=True, help="Largest number of riffles.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def shuffle_riffles(cards, kmax, as_json):
    """Exact total-variation distance to uniform after k GSR riffle shuffles.

    Bayer & Diaconis (1992): after k riffles a permutation with r rising sequences has probability
    C(2^k + n − r, n) / 2^(kn); summing over the Eulerian numbers gives the distance exactly.
    """
    from rngcert.stats.shuffle import riffle_tv_table

    rows = riffle_tv_table(cards, range(1, kmax + 1))
    if as_json:
        click.echo(json.dumps({"cards": cards, "rows": rows}, indent=1))
        return
    click.echo(f"GSR riffle shuffles of {cards} cards: total-variation distance to uniform (Bayer & Diaconis 1992)")
    click.echo("riffles  distance")
    for r in rows:
        click.echo(f"{r['riffles']:>7}  {r['tv']:.3f}")


@shuffle.command(
    "house-edge",
    epilog="""\b
Examples:
  rngcert shuffle house-edge blackjack-004
  rngcert shuffle house-edge blackjack-004 --decks 6
  rngcert shuffle house-edge --decks 6 --hole-card none --double 9-11 --das --split-hands 4 --resplit-aces --json""",
)
@click.argument("procedure", required=False)
@click.option("--decks", type=click.IntRange(1, 8), default=None, help="Decks (default: the procedure's, else 8).")
@blackjack_rule_options()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def shuffle_house_edge(procedure, decks, rule, hole_card, double, das, split_hands, resplit_aces, obo, as_json):
    """House edge of blackjack basic strategy under a procedure's rules or the options given.

    003 rule 4.5: the house edge for the number of decks in play must be displayed at the table.
    Method: first deals weighted exactly from the shoe, the dealer's outcome exact for the shoe
    less those cards, the player's further cards from that composition (two-card
    composition-dependent), splits by the expected hands of "split whenever allowed".
    """
    from dataclasses import replace

    from rngcert.stats.blackjack import Rules, house_edge

    if procedure:
        from rngcert.equipment.procedure import load_procedure

        proc = load_procedure(procedure)
        if proc.game != "blackjack":
            raise click.UsageError(f"{proc.id} is a {proc.game} procedure; the house edge here is blackjack's")
        proc, _ = _apply_decks_rule(proc, decks, rule)
        r = Rules.from_procedure(proc)
    else:
        r = Rules(decks=decks or 8)
    kw = {k: v for k, v in {"dealer": rule, "hole_card": hole_card, "double": double, "double_after_split": das,
                             "split_hands": split_hands}.items() if v is not None}
    if resplit_aces:
        kw["resplit_aces"] = True
    if obo:
        kw["enhc_takes_all"] = False
    if decks and not procedure:
        kw["decks"] = decks
    r = replace(r, **kw)
    h = house_edge(r)
    if as_json:
        click.echo(json.dumps({"house_edge": h["house_edge"], "insurance_house_edge": h["insurance_house_edge"], "rules": h["rules"],
                               "method": h["method"], "strategy": h["strategy"].to_dict()}, indent=1))
        return
    # every rule that changes the edge is named, so two lines with different edges never read alike (--obo, --resplit-aces)
    from fractions import Fraction

    def _odds(x: float) -> str:
        f = Fraction(x).limit_denominator(10)
        return f"{f.numerator} to {f.denominator}"

    aces = ("aces resplit" if r.resplit_aces else "aces not resplit") + (", one card to a split ace" if r.split_aces_one_card else "")
    nohole = ("" if r.hole_card != "none" else
              ", a dealer blackjack takes doubled and split bets too (ENHC)" if r.enhc_takes_all else
              ", a dealer blackjack takes the original bet only (OBO)")
    click.echo(f"blackjack, {r.decks} decks, {r.dealer}, hole card {r.hole_card}{nohole}, double {r.double}, DAS {r.double_after_split}, "
               f"split to {r.split_hands} hands, {aces}, blackjack pays {_odds(r.blackjack_pays)}: house edge {100 * h['house_edge']:.3f}% "
               f"(basic strategy); insurance {100 * h['insurance_house_edge']:.2f}%")
    click.echo(f"method: {h['method']}")
