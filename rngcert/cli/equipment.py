"""rngcert equipment: list or show packaged wheel definitions."""

from __future__ import annotations

import json

import click


@click.command("equipment", epilog="Example:\n\n  rngcert equipment european")
@click.argument("wheel", required=False)
@click.option("--json", "as_json", is_flag=True, help="The list of packaged wheels as JSON (one wheel is always shown as JSON).")
def equipment_cmd(wheel, as_json):
    """List the packaged wheels, or show one wheel's definition as JSON, with the result of its
    check against the seeds' equipment rules (equipment_checks: one sentence per violation)."""
    from rngcert.equipment.wheel import load_wheel, packaged_wheels

    if wheel is None:
        if as_json:
            out = []
            for w in packaged_wheels():
                d = load_wheel(w)
                out.append({"id": w, "name": d.name, "kind": d.kind, "k": d.k})
            click.echo(json.dumps(out, indent=1))
            return
        for w in packaged_wheels():
            d = load_wheel(w)
            click.echo(f"{w:<16} {d.k:>3} {'pockets' if d.kind == 'roulette' else 'sections'}  {d.name}")
        return
    from rngcert.equipment.paytables import seed_checks

    w = load_wheel(wheel)
    click.echo(json.dumps(w.describe() | {"equipment_checks": seed_checks(wheel=w)}, indent=1))


