"""``--standard NAME|PATH`` of the certifying commands (issue 23): load, validate and check that the
standard applies to the command; a standard that does not apply, or a SUSPECT level that is not
looser than --alpha, is a usage error (exit 2); an invalid standard file an equipment error (exit 4)."""

from __future__ import annotations

import click

STANDARD_HELP = ("Certification standard: a packaged id (rngcert-default, uniformity, edge, maryland-comar-36.05.02.17F, "
                 "west-virginia-29-22B-909, new-mexico-15.1.7.13) or a lab's own TOML file. Its clauses, SUSPECT level and "
                 "minimum effect decide the verdict; page one gives the result of each clause.")


def standard_option(f):
    """The ``--standard`` option (default rngcert-default)."""
    return click.option("--standard", "standard", default=None, metavar="NAME|PATH", help=STANDARD_HELP + " [default: rngcert-default]")(f)


def load_for(name: str | None, kind: str, command: str, alpha: float | None = None):
    """The standard ``name`` for ``rngcert command`` on equipment ``kind``, or a usage error."""
    from rngcert.battery.standard import StandardUsageError, load_standard

    std = load_standard(name)
    try:
        std.check_applies(kind, command)
        if alpha is not None:
            std.suspect_level(alpha)
    except StandardUsageError as exc:
        raise click.UsageError(str(exc)) from exc
    return std
