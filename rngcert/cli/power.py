"""``rngcert power`` and ``rngcert house-edge`` (registered in :mod:`rngcert.cli` with
``main.add_command(power)`` and ``main.add_command(house_edge)``)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import click
import numpy as np

from rngcert.cli._blackjack import blackjack_rule_options
from rngcert.cli._common import EXIT_EQUIPMENT, EXIT_INPUT, MAX_RESAMPLES, Real, fail, refuse_given
from rngcert.errors import EquipmentError, InputError
from rngcert.seeding import root, stream

POWER_EPILOG = """\b
Examples:
  rngcert power --equipment european --alternative single-pocket --effect 0.1
  rngcert power -e european --alternative sector:5 --effect 0.2 --alpha 0.01 --power 0.9 --seed 1
  rngcert power -e european --alternative single-pocket --test max_count --effect 0.3 --seed 1
  rngcert power -e european --alternative harmonic --spins 5000
  rngcert power -e american --alternative dealer-signature:3 --groups 4 --spins 20000 --seed 7 --json
  rngcert power -e money-wheel-52 --alternative single-pocket --spins 5000 --effect 0.5

\b
Effect sizes are those of `rngcert simulate wheel`: 0.1 = the biased pocket(s) or offset
sector come up 10% more often (weight 1.1, then renormalised); for harmonic, the amplitude a of
1 + a*cos(angle). Chi-square tests use the non-central chi-square law; max/scan tests
(max_count, sector_scan, dealer_signature) are simulated with a seed (recorded)."""


# long: 15 lines of click options; the body the three questions (spins, effect, power) in one place
@click.command("power", epilog=POWER_EPILOG)
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or wheel TOML file (sets k).")
@click.option("--alternative", "-a", default="single-pocket", show_default=True,
              help="single-pocket | sector:K | harmonic | dealer-signature[:K].")
@click.option("--effect", type=Real(min=0, min_open=True), default=None, help="Effect size (0.1 = +10%; harmonic: amplitude). With --spins: print the power.")
@click.option("--spins", "-n", type=click.IntRange(min=1), default=None, help="Sample size: print the minimum detectable effect (or, with --effect, the power).")
@click.option("--alpha", type=Real(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Level of the test.")
@click.option("--power", "target", type=Real(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="Required power (refused with both --effect and --spins: the power is then computed).")
@click.option("--test", "test", default=None, help="Test to plan (default per alternative: pocket_chisquare, sector_scan, first_harmonic, dealer_signature; also max_count).")
@click.option("--method", type=click.Choice(["auto", "noncentral", "simulation"]), default="auto", show_default=True, help="Force simulation for a chi-square test (validation).")
@click.option("--groups", type=click.IntRange(min=1), default=1, show_default=True, help="Dealer/direction groups the spins are split over (dealer-signature).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the simulation (default fresh entropy, printed); refused when nothing is simulated.")
@click.option("--resamples", type=click.IntRange(100, MAX_RESAMPLES), default=10000, show_default=True, help="Simulated null replicates (critical value); refused when nothing is simulated.")
@click.option("--alt-samples", type=click.IntRange(100, MAX_RESAMPLES), default=2000, show_default=True, help="Simulated samples under the alternative (power estimate); refused when nothing is simulated.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def power(equipment, alternative, effect, spins, alpha, target, test, method, groups, seed, resamples, alt_samples, as_json):
    """Spins needed to detect a bias, or the minimum detectable bias of a sample size.

    With --effect: the spins the test needs to detect that bias with the required power at
    level alpha. With --spins: the smallest effect it detects. With both: the power.
    The output says whether the power comes from the non-central chi-square law or from a
    seeded simulation. Each answer is given for the test alone at level alpha and, on the
    'verdict:' line (--json: "verdict"), for the verdict: the probability that certify returns
    FAIL (weighted Holm over the battery, each test at a fraction of alpha).
    """
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.verdict_plan import verdict_answer
    from rngcert.stats import power as pw

    try:
        wheel = load_wheel(equipment)
        k = wheel.k
        if effect is None and spins is None:
            raise click.UsageError("give --effect (spins needed), --spins (minimum detectable effect), or both (power)")
        _refuse_before(wheel, both=spins is not None and effect is not None)
        entropy = root(seed).entropy
        rng = stream(entropy)
        kw = dict(alpha=alpha, test=test, method=method, groups=groups, n_null=resamples, n_alt=alt_samples, rng=rng)
        if not wheel.order_known:
            # symbols only (arrangement unknown): one section biased, symbol chi-square
            if alternative != "single-pocket" or (spins is not None and effect is not None):
                raise InputError(
                    f"wheel {wheel.id!r} has no known arrangement: only --alternative single-pocket with either "
                    "--effect or --spins can be planned (a single section, tested by the symbol chi-square)"
                )
            cats = np.repeat(np.arange(len(wheel.symbols)), wheel.symbol_counts)
            sec = int(np.flatnonzero(cats == int(np.argmin(wheel.symbol_counts)))[0])
            if effect is not None:
                res = pw.spins_needed_section_bias_categories(effect, cats, sec, alpha=alpha, power=target)
            else:
                res = pw.min_detectable_section_bias_categories(spins, cats, sec, alpha=alpha, power=target)
            res.details["symbol"] = wheel.symbols[int(cats[sec])]
        elif spins is not None and effect is not None:
            res = pw.power_at(spins, k, alternative, effect, **kw)
        elif effect is not None:
            res = pw.spins_needed(k, alternative, effect, power=target, **kw)
        else:
            res = pw.min_detectable_effect(spins, k, alternative, power=target, **kw)
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except InputError as exc:  # power reads no data: what it refuses is the options' values (a usage error, exit 2)
        raise click.UsageError(str(exc)) from None
    simulated = res.method.startswith("simulation")
    if not simulated:
        refuse_given(("seed", "resamples", "alt_samples"), f"options of a simulation; the power of {res.test} here is computed from the "
                                                           f"{res.method.split(' (')[0]}, nothing is simulated (--method simulation simulates it)")
    d = res.to_dict()
    d["equipment"] = wheel.id
    if simulated:
        d["seed"] = str(entropy)
    d["scope"] = (f"power, effect and n above are those of {res.test} alone at the unadjusted level alpha; "
                  "the verdict's (certify returns FAIL) are under 'verdict'")
    d["verdict"] = verdict_answer(wheel, res, alpha=alpha, target=target, effect=effect, spins=spins)
    if as_json:
        click.echo(json.dumps(d, indent=2))
        return
    click.echo(f"equipment: {wheel.id} (k={k})   alternative: {res.alternative}   test: {res.test}")
    click.echo(f"method: {res.method}" + (f"   seed: {entropy}" if simulated else ""))
    if res.solved_for == "n":
        if res.n is None:
            click.echo(f"spins needed: more than {d['details'].get('max_n')}")
        else:
            click.echo(f"spins needed: {res.n}   (power at that n: {res.achieved_power:.4f})")
    elif res.solved_for == "effect":
        click.echo("minimum detectable effect: " + ("none up to the search bound" if not math.isfinite(res.effect) else f"{res.effect:.6g}"))
    else:
        click.echo(f"power: {res.power:.4f}" + (f" (standard error {d['details']['se']:.4f})" if simulated else ""))
    click.echo(f"{res.test} alone at level {alpha} (not the verdict): " + res.text().split(": ", 1)[1])
    if "symbol" in d["details"]:
        click.echo(f"  (the biased section is one of symbol {d['details']['symbol']}, the rarest: a section of a commoner symbol "
                   "changes its symbol's share less and needs more spins)")
    click.echo(d["verdict"]["statement"])
    if d["verdict"].get("method"):
        click.echo("  (weighted Holm over the battery's count-based tests on a log without dealer ids or release pockets (with them the "
                   "dealer signature joins the family and the levels shrink), scans at certify's default --resamples 9999; a lower bound)")


def _refuse_before(wheel, *, both: bool) -> None:
    """Options of ``power`` that this question would ignore: --power when the power is what is computed
    (--effect and --spins), the test's choice on a wheel whose arrangement is unknown (the symbol chi-square)."""
    if both:
        refuse_given(("target",), "the power a search for --effect or --spins must reach; with both of them the power is what is computed")
    if not wheel.order_known:
        refuse_given(("test", "method", "groups", "seed", "resamples", "alt_samples"), f"wheel {wheel.id!r} has no known arrangement: it is planned with the symbol chi-square alone "
                                                   "(non-central law, nothing simulated)")


def _refuse_other_game_options(game: str) -> None:
    """``house-edge``: --decks for a wheel game, --equipment for baccarat would change nothing: a usage error (exit 2)."""
    if game == "baccarat":
        refuse_given(("equipment",), "a wheel of the wheel games; baccarat's probabilities are those of a shoe of --decks decks")
    else:
        refuse_given(("decks",), f"the decks of a card game; {game!r} is played on a wheel (--equipment)")


HOUSE_EDGE_EPILOG = """\b
Examples:
  rngcert house-edge roulette
  rngcert house-edge roulette --paytable roulette-double-zero
  rngcert house-edge money-wheel --paytable money-wheel-option-three
  rngcert house-edge roulette-rage --paytable roulette-rage-minimum-odds
  rngcert house-edge baccarat --decks 8 --json
  rngcert house-edge roulette --paytable my-casino.toml
  rngcert house-edge blackjack                      # basic strategy, 8 decks (the shuffle command's rules)
  rngcert house-edge blackjack-004 --decks 6        # a blackjack procedure's rules
  rngcert house-edge blackjack --decks 6 --hole-card none --double 9-11 --das --split-hands 4
  rngcert house-edge casino-war --decks 6

\b
GAME is roulette (single-zero by default), european, american, money-wheel, roulette-rage,
baccarat, blackjack, any other card game of the registry (casino-war), or a shuffle procedure (blackjack-004, baccarat-004 at its decks, or a
procedure TOML file). Without
--paytable every packaged pay table of the game that is defined on the wheel is printed (the others are named on stderr). Blackjack is the same computation as
`rngcert shuffle house-edge` (kept as an alias); its options apply to blackjack only."""


def _procedure_of(game: str, kind: str):
    """The procedure named by GAME (a packaged id or a TOML file) when it is one of ``kind`` (``""``: any game), else None."""
    from rngcert.equipment import paytables as pt

    if game in pt.GAME_PAYTABLES or game.lower() == "blackjack":
        return None
    from rngcert.equipment.procedure import load_procedure

    try:
        proc = load_procedure(game)
    except (EquipmentError, InputError, OSError):
        if game.endswith(".toml"):  # a lab's procedure file that does not validate: its own error (file, key, reason), not 'unknown game'
            raise
        return None
    return proc if proc.game == kind or not kind else None


def _blackjack_procedure(game: str) -> str | None:
    """"" for plain blackjack, the procedure for a blackjack procedure id or file, None for any other game."""
    if game.lower() == "blackjack":
        return ""
    return game if _procedure_of(game, "blackjack") is not None else None


def _other_card_game(game: str):
    """(registered card game, its procedure or None) when GAME names a game of the registry
    (:mod:`rngcert.equipment.games`) whose house edge comes from its module (not a pay table, not
    blackjack), or a procedure dealing one; else None."""
    from rngcert.equipment import games as G
    from rngcert.equipment import paytables as pt

    def own(name: str) -> bool:
        return name in G.names() and name not in pt.GAME_PAYTABLES and name != "blackjack"

    if own(game):
        return game, None
    proc = _procedure_of(game, "")
    return (proc.game, proc) if proc is not None and own(proc.game) else None


def _card_game_edge(game: str, proc, decks: int | None, as_json: bool) -> None:
    """Print the house edge of a registered card game from its module (:func:`rngcert.simulate.games.play`)."""
    from rngcert.equipment import games as G
    from rngcert.simulate.games import play

    if decks is None:
        decks = proc.decks if proc is not None else 8
    try:
        block = play(game).house_edge(decks, None)
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except InputError as exc:  # the only option of the game is --decks
        raise click.BadParameter(f"{game}: {exc}", param_hint="--decks") from None
    info = G.get(game)
    if as_json:
        click.echo(json.dumps([{"game": game, "title": info.title, "rules": info.rules, "house_edge": block}], indent=2, default=str))
        return
    click.echo(f"{game}: {info.title} ({block.get('decks', decks)} decks)")
    click.echo(f"  source: {info.rules}")
    if block.get("sentence"):
        click.echo(f"  house edge: {block['sentence']}")
    for k, v in block.items():
        if isinstance(v, float) and k != "edge":
            click.echo(f"  {k:<16} {v:8.4%}  ({v:.6f})" if not k.startswith("sd_") else f"  {k:<16} {v:.6f}")
    click.echo(f"  method: {block.get('method', '')}")


def _player_favoured(edges: dict) -> list[str]:
    """One sentence per bet whose house edge is negative (the pay table pays more than the bet's fair odds): not a
    breach of a seed's minimum odds, but a pay table no casino offers by intent (a typing error in the odds?)."""
    return [f"bet {b} pays more than its fair odds on these probabilities: house edge {float(e):+.4%}, the player gains "
            f"{-float(e):.4%} of each stake on average; check the odds" for b, e in edges.items() if e < 0]


# long: one branch per kind of GAME (a blackjack procedure, a baccarat procedure, pay tables), then the printing
@click.command("house-edge", epilog=HOUSE_EDGE_EPILOG)
@click.argument("game")
@click.option("--paytable", "-p", "paytable_name", default=None, help="Packaged pay table id or a pay-table TOML file.")
@click.option("--equipment", "-e", default=None, help="Wheel games: wheel id or TOML file (default: the pay table's wheel).")
@click.option("--decks", type=click.IntRange(min=1), default=None,
              help="Baccarat: decks in the shoe (exact probabilities by enumeration; default 8). Blackjack: 1-8 (default: the procedure's, else 8).")
@click.option("--json", "as_json", is_flag=True, help="Print the house edges as JSON.")
@click.option("--strict", is_flag=True, help="Refuse (exit 4) a pay table or wheel that breaks the seeds' rules, instead of warning.")
@blackjack_rule_options(prefix="Blackjack: ")
@click.pass_context
def house_edge(ctx, game, paytable_name, equipment, decks, as_json, strict, rule, hole_card, double, das, split_hands, resplit_aces, obo):
    """Each bet's house edge (expected loss per unit staked) from the exact probabilities.

    Roulette and money wheel: fair-wheel probabilities; Roulette Rage: the exact law of the
    run length after the establishing spin, capped at 14 (rules 3.26-3.27); baccarat: exact
    banker/player/tie probabilities of a full shoe of --decks decks (ties push banker and
    player wagers); blackjack: basic strategy under a procedure's rules or the options given
    (the same as `rngcert shuffle house-edge`).
    """
    from rngcert.equipment import paytables as pt
    from rngcert.equipment.wheel import load_wheel

    procedure = _blackjack_procedure(game)
    if procedure is not None:
        from rngcert.cli.shuffle import shuffle_house_edge

        if paytable_name or equipment or strict:
            raise click.UsageError("--paytable, --equipment and --strict are for wheel games and baccarat, not blackjack")
        if decks is not None and not 1 <= decks <= 8:
            raise click.BadParameter(f"{decks} is not in the range 1<=x<=8 for blackjack", param_hint="--decks")
        return ctx.invoke(shuffle_house_edge, procedure=procedure or None, decks=decks, rule=rule, hole_card=hole_card, double=double,
                          das=das, split_hands=split_hands, resplit_aces=resplit_aces, obo=obo, as_json=as_json)
    other = _other_card_game(game)
    if other is not None:  # a card game of the registry (e.g. casino-war): the house edge its module computes
        used = [o for o, v in (("--paytable", paytable_name), ("--equipment", equipment), ("--strict", strict or None), ("--rule", rule),
                               ("--hole-card", hole_card), ("--double", double), ("--das", das), ("--split-hands", split_hands),
                               ("--resplit-aces", resplit_aces or None), ("--obo", obo or None)) if v is not None]
        if used:
            raise click.UsageError(f"{', '.join(used)}: not options of {other[0]!r} (only --decks and --json are)")
        return _card_game_edge(other[0], other[1], decks, as_json)
    baccarat_proc = _procedure_of(game, "baccarat")
    if baccarat_proc is not None:  # a baccarat procedure: the baccarat pay table at its decks (--decks only where its rules allow)
        from rngcert.cli.shuffle import _apply_decks_rule

        try:
            baccarat_proc, _ = _apply_decks_rule(baccarat_proc, decks, None)
        except EquipmentError as exc:
            fail(EXIT_EQUIPMENT, str(exc))
        game, decks = "baccarat", baccarat_proc.decks
    used = [o for o, v in (("--rule", rule), ("--hole-card", hole_card), ("--double", double), ("--das", das), ("--split-hands", split_hands),
                           ("--resplit-aces", resplit_aces or None), ("--obo", obo or None)) if v is not None]
    if used:
        raise click.UsageError(f"{', '.join(used)}: blackjack options; {game!r} is not blackjack")
    decks = 8 if decks is None else decks
    try:
        if game not in pt.GAME_PAYTABLES:
            from rngcert.equipment import games as G

            known = list(pt.GAME_PAYTABLES) + [g for g in G.names() if g not in pt.GAME_PAYTABLES]
            raise click.BadParameter(f"unknown game {game!r}; known: {', '.join(known)} (or a procedure: "
                                     "blackjack-004, baccarat-004, a procedure TOML file)", param_hint="GAME")
        _refuse_other_game_options(game)
        candidates = list(pt.paytables_for_game(game))  # validates GAME
        ids = [paytable_name] if paytable_name else candidates
        wheel = load_wheel(equipment) if equipment else None
        out, skipped = [], []
        for pid in ids:
            table = pt.load_paytable(pid)
            want = {"european": "roulette", "american": "roulette"}.get(game, game)
            if table.game != want:
                raise click.BadParameter(f"pay table {table.id!r} is for {table.game!r}, not {game!r}", param_hint="--paytable")
            probs = None
            note = ""
            if table.game == "baccarat":
                from rngcert.equipment.cards import baccarat_exact, value_composition

                p = baccarat_exact(value_composition(decks, "baccarat"))
                probs = dict(zip(("banker", "player", "tie"), (float(x) for x in p)))
                note = f"exact {decks}-deck probabilities: " + ", ".join(f"{o} {v:.6f}" for o, v in probs.items())
            edges = _edges_or_skip(table, wheel, probs, skipped if not paytable_name else None)
            if edges is None:
                continue
            warnings = pt.seed_checks(table, wheel, strict=strict) + _player_favoured(edges)
            out.append((table, edges, note, warnings))
        if not out:  # no packaged pay table of the game is defined on this wheel: say why for each
            raise EquipmentError("; ".join(skipped))
        for why in skipped:
            click.echo(f"rngcert: warning: {why}; left out (give --paytable FILE for this wheel)", err=True)
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except InputError as exc:
        fail(EXIT_INPUT, str(exc))
    if as_json:
        doc = []
        for table, edges, note, warnings in out:
            doc.append({
                "paytable": table.describe(),
                "equipment_checks": warnings,
                "probabilities": note or ("fair wheel" if table.game != "roulette-rage" else "run-length law, fair single-zero wheel"),
                "house_edge": {
                    b: {"value": float(e), **({"fraction": f"{e.numerator}/{e.denominator}"} if isinstance(e, Fraction) else {})}
                    for b, e in edges.items()
                },
            })
        click.echo(json.dumps(doc, indent=2))
        return
    for table, edges, note, warnings in out:
        click.echo(f"{table.id}: {table.name}")
        click.echo(f"  source: {table.source}")
        for w in warnings:
            click.echo(f"  WARNING: {w}")
        if note:
            click.echo(f"  {note}")
        width = max(len(b) for b in edges)
        for b, e in edges.items():
            bet = table.bet(b)
            odds = f"{bet.odds.numerator}:{bet.odds.denominator}"
            frac = f"  = {e.numerator}/{e.denominator}" if isinstance(e, Fraction) and e.denominator < 10**6 else ""
            click.echo(f"  {b:<{width}}  odds {odds:>7}  house edge {float(e):8.4%}  ({float(e):.6f}){frac}")


def _edges_or_skip(table, wheel, probs, skipped: list | None):
    """The house edges of ``table`` on ``wheel``; with ``skipped`` (every packaged table of the game, no --paytable), None
    when the table is not defined on a lab's wheel (``roulette-double-zero`` on a single-zero wheel, a bet on pocket 17 of
    a 4-pocket wheel), the reason appended to ``skipped``: one table that does not apply does not hide the others."""
    from rngcert.equipment import paytables as pt

    try:
        return pt.house_edges(table, wheel=wheel, probs=probs)
    except (EquipmentError, InputError) as exc:
        if skipped is None or wheel is None:
            raise
        skipped.append(f"pay table {table.id} does not apply to wheel {wheel.id}: {exc}")
        return None
