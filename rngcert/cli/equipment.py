"""rngcert equipment: list or show packaged wheel definitions."""

from __future__ import annotations

import json

import click


@click.command("equipment", epilog="Example:\n\n  rngcert equipment european")
@click.argument("wheel", required=False)
def equipment_cmd(wheel):
    """List the packaged wheels, or show one wheel's definition as JSON."""
    from rngcert.equipment.wheel import load_wheel, packaged_wheels

    if wheel is None:
        for w in packaged_wheels():
            d = load_wheel(w)
            click.echo(f"{w:<16} {d.k:>3} {'pockets' if d.kind == 'roulette' else 'sections'}  {d.name}")
        return
    click.echo(json.dumps(load_wheel(wheel).describe(), indent=1))


