"""What the store's commands share (``rngcert ingest``, ``rejects``, ``audit``, ``export`` in
:mod:`rngcert.cli.store`, ``watch`` in :mod:`rngcert.cli._watch`): the ``--db`` and ``--wait``
options, the mapping of errors to exit codes, and the message of a command that waits for the store."""

from __future__ import annotations

from pathlib import Path

import click

from rngcert.cli._common import EXIT_EQUIPMENT, EXIT_INPUT, Real, fail
from rngcert.collect.store import DEFAULT_DB, DEFAULT_WAIT

_DB_OPTION = click.option(
    "--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True, help="The store (a DuckDB file)."
)
_WAIT_OPTION = click.option(
    "--wait", "wait", type=Real(min=0), default=DEFAULT_WAIT, show_default=True, metavar="SECONDS",
    help="When another process holds the store (DuckDB: one writer or many readers), retry for up to this long before giving up (exit 3).",
)


def _run(fn):
    """Map rngcert errors to the documented exit codes when the command runs outside cli.main."""
    from rngcert.errors import EquipmentError, InputError, RngcertError

    try:
        return fn()
    except BrokenPipeError:  # the reader of the output went away (rngcert rejects | head): not an input error
        raise
    except EquipmentError as exc:
        fail(EXIT_EQUIPMENT, str(exc))
    except (InputError, RngcertError, OSError, UnicodeDecodeError) as exc:
        fail(EXIT_INPUT, str(exc))


def _waiting(db):
    """The ``on_wait`` callback: tell the user once per open that the command is waiting."""

    def on_wait(msg):
        click.echo(f"store {db} is held by another process ({msg}); waiting for it…", err=True)

    return on_wait
