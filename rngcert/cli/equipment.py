"""rngcert equipment: list or show packaged wheel definitions."""

from __future__ import annotations

import json

import click


@click.command("equipment", epilog="Example:\n\n  rngcert equipment european")
@click.argument("wheel", required=False)
def equipment_cmd(wheel):
    """List the packaged wheels, or show one wheel's definition as JSON, with the result of its
    check against the seeds' equipment rules (equipment_checks: one sentence per violation)."""
    from rngcert.equipment.wheel import load_wheel, packaged_wheels

    if wheel is None:
        for w in packaged_wheels():
            d = load_wheel(w)
            click.echo(f"{w:<16} {d.k:>3} {'pockets' if d.kind == 'roulette' else 'sections'}  {d.name}")
        return
    from rngcert.equipment.paytables import seed_checks

    w = load_wheel(wheel)
    click.echo(json.dumps(w.describe() | {"equipment_checks": seed_checks(wheel=w)}, indent=1))


