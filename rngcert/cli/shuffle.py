"""CLI commands for shoes and shuffles: ``rngcert shuffle certify|simulate|riffles``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rngcert.cli._common import command_line, emit_report

EXIT_TABLE = """\b
Exit codes: 0 PASS · 10 SUSPECT · 11 INCONCLUSIVE · 12 FAIL ·
3 input error · 4 procedure error · 2 usage error · 1 internal error."""


@click.group("shuffle")
def shuffle():
    """Shoes and shuffle procedures: certify, simulate, exact riffle tables."""


def _is_procedure(arg: str) -> bool:
    """A packaged procedure id or a .toml file; a name that is neither an existing file nor a
    packaged id is an equipment error that lists the packaged ids."""
    from rngcert.equipment.procedure import packaged_procedures
    from rngcert.errors import EquipmentError

    if arg.endswith(".toml") or arg in packaged_procedures():
        return True
    if not Path(arg).exists():
        raise EquipmentError(f"{arg!r} is neither a file nor a packaged procedure ({', '.join(packaged_procedures())})")
    return False


@shuffle.command(
    "certify",
    epilog="""\b
Examples:
  rngcert shuffle certify baccarat-004 --shoes 2000 --seed 1
  rngcert shuffle certify my-procedure.toml --shoes 5000
  rngcert shuffle certify scanner.csv --decks 8 --game baccarat
  rngcert shuffle certify scanner.csv --decks 6 --game blackjack --rule H17
"""
    + "\n"
    + EXIT_TABLE,
)
@click.argument("source")
@click.option("--shoes", type=click.IntRange(min=1), default=2000, show_default=True, help="PROCEDURE: tables simulated through one shuffle.")
@click.option("--start", type=click.Choice(["pickup", "new-deck"]), default="pickup", show_default=True, help="PROCEDURE: shuffle the previous shoe's discards (pickup) or new decks.")
@click.option("--decks", type=click.IntRange(1, 8), default=None, help="SHOELOG: decks per shoe (required for a log).")
@click.option("--game", type=click.Choice(["baccarat", "blackjack", "none"]), default=None, help="SHOELOG: adds the game-level tests (a procedure names its game).")
@click.option("--rule", type=click.Choice(["S17", "H17"]), default=None, help="Blackjack dealer rule (rule 4.15): stand or hit on soft 17.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed (simulation and Monte Carlo p-values; recorded).")
@click.option("--resamples", type=click.IntRange(min=99), default=1999, show_default=True, help="Monte Carlo replicates (logs of decks without #k serials).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01, show_default=True, help="Certification level.")
@click.option("--out", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"), show_default=True, help="Folder for reports/<id>-<UTC time>/.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json to standard output instead of the summary.")
@click.option("--no-plots", is_flag=True, help="Skip the figures.")
def shuffle_certify(source, shoes, start, decks, game, rule, seed, resamples, alpha, outdir, as_json, no_plots):
    """Certify a shuffle procedure (PROCEDURE.toml or a packaged id) or a card-scanner SHOELOG.

    A procedure is simulated for --shoes tables through one shuffle, starting from the previous
    shoe's discards as the deal and pickup leave them; a log is read, every shoe validated as a
    legal multiset of its decks (or a dealt prefix of one). The shuffle-quality battery then runs
    (rising sequences, adjacent pairs, displacement, zone and per-position chi-square, rank
    correlation, guessing with feedback, and the game-level tests) and the report states the
    verdict with Holm's correction at --alpha.
    """
    import numpy as np

    from rngcert.pipeline.certify_shuffle import certify_shoes

    cmd = command_line()
    ss = np.random.SeedSequence(seed)
    if _is_procedure(source):
        from rngcert.equipment.procedure import load_procedure

        proc = load_procedure(source)
        if decks is not None or game is not None:
            raise click.UsageError("--decks and --game describe a shoe log; a procedure names its own decks and game")
        from rngcert.simulate.procedure import simulate_tables

        t = simulate_tables(proc, shoes, int(ss.entropy), burn_in=1)
        before, after = (t.first_before, t.first_after) if start == "new-deck" else (t.before, t.after)
        g = None if proc.game == "none" else proc.game
        cert = certify_shoes(
            before,
            after,
            decks=proc.decks,
            game=g,
            rule=rule or proc.deal.get("rule", "S17"),
            usable=proc.cut_position,
            subject=f"{proc.name} ({shoes} simulated shoes)",
            equipment={"id": proc.id, "name": proc.name, "kind": "shuffle-procedure", "source": proc.source, "file": proc.path, "procedure": proc.to_dict()},
            inputs=[{"path": proc.path, "sha256": "", "format": "shuffle procedure (TOML)", "summary": f"{shoes} tables simulated through one shuffle, starting from {'the previous shoe’s pickup' if start == 'pickup' else 'new decks'}"}],
            seed=int(ss.entropy),
            alpha=alpha,
            command=cmd,
            figures=not no_plots,
            notes=[f"simulation seed entropy {ss.entropy}, spawn key (1,)"],
            n_resamples=resamples,
        )
        rejected = []
        eq_id = proc.id
    else:
        from rngcert.collect.shoelog import read_shoe_log

        if decks is None:
            raise click.UsageError("--decks is required to certify a shoe log")
        log = read_shoe_log([source], decks=decks)
        g = None if game in (None, "none") else game
        notes = [str(p) for p in log.problems[:20]]
        if len(log.problems) > 20:
            notes.append(f"…and {len(log.problems) - 20} more shoe problems (all in report.json)")
        cert = certify_shoes(
            log.pair_before,
            log.pair_after,
            decks=decks,
            game=g,
            rule=rule or "S17",
            dealt=log.after,
            subject=f"shoe log {Path(source).name} ({log.n_shoes} shoes)",
            equipment={"id": "shoe-log", "name": f"card-scanner log, {decks} deck(s)", "kind": "shoe", "source": str(source)},
            inputs=[
                {**s, "format": "shoe log (CSV)", "summary": f"{s.get('rows')} rows: {s.get('accepted_rows')} accepted, {s.get('rejected_rows')} rejected; {s.get('shoe_problems', 0)} shoe problem(s)"}
                for s in log.sources
            ],
            seed=int(ss.entropy),
            alpha=alpha,
            command=cmd,
            figures=not no_plots,
            notes=notes,
            rejected_count=len(log.rejected),
            n_resamples=resamples,
        )
        cert.report["shoe_problems"] = [p.to_dict() for p in log.problems]
        rejected = log.rejected
        eq_id = "shoe-log"
    emit_report(cert.report, cert.figures, rejected, outdir, eq_id, as_json)


@shuffle.command(
    "simulate",
    epilog="""\b
Examples:
  rngcert shuffle simulate baccarat-004 --shoes 1000 --seed 1 --out shoes.csv
  rngcert shuffle simulate my-procedure.toml --shoes 200 --start new-deck --out shoes.csv""",
)
@click.argument("procedure")
@click.option("--shoes", type=click.IntRange(min=1), default=1000, show_default=True, help="Tables simulated through one shuffle.")
@click.option("--start", type=click.Choice(["pickup", "new-deck"]), default="pickup", show_default=True, help="Shuffle the previous shoe's discards (pickup) or new decks.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in OUT.json).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output shoe log (scanner format, before and after stages).")
def shuffle_simulate(procedure, shoes, start, seed, out):
    """Write a shoe log in the card-scanner format from a simulated shuffle procedure.

    Each shoe appears twice, stage "before" (the order the shuffle starts from) and stage
    "after" (the shuffled shoe), so simulated and real shoes take the same path through
    ``rngcert shuffle certify LOG``.
    """
    import numpy as np

    from rngcert.collect.shoelog import write_shoe_log
    from rngcert.equipment.procedure import load_procedure
    from rngcert.simulate.sources import versions

    proc = load_procedure(procedure)
    ss = np.random.SeedSequence(seed)
    from rngcert.simulate.procedure import simulate_tables

    t = simulate_tables(proc, shoes, int(ss.entropy), burn_in=1)
    before, after = (t.first_before, t.first_after) if start == "new-deck" else (t.before, t.after)
    rows = write_shoe_log(out, after, before=before, table=proc.id)
    meta = {"procedure": proc.id, "file": proc.path, "shoes": shoes, "decks": proc.decks, "start": start, "seed_entropy": str(ss.entropy), **versions()}
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    click.echo(f"wrote {shoes} shoes ({rows} rows) of {proc.id} to {out}; seed entropy {ss.entropy}; metadata in {out}.json", err=True)


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
