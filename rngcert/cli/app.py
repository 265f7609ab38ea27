"""Command-line interface (click).

Exit codes (one table, documented in the README and in ``rngcert --help``):

====  =========================================================================
code  meaning
====  =========================================================================
0     PASS (or a command that certifies nothing finished normally)
10    SUSPECT: no family-wise rejection, but some raw p-value < alpha
11    INCONCLUSIVE: sample too small for the declared bias, or a test could not run
12    FAIL: some test rejects after Holm's correction at alpha
13    ALARM: ``rngcert watch`` saw the evidence cross its threshold
14    spins lost: ``rngcert watch`` saw a rotation it could not follow (a file never read)
3     input or storage error: missing, unreadable or empty log, nothing readable, an option the data
      cannot satisfy (a --column the log lacks); a store or report folder that cannot be read or
      written (corrupt, read-only, disk full)
4     equipment error: unknown or invalid wheel, pay table, procedure, protocol or standard
1     unexpected internal error (a bug: please report it with the command line)
2     usage error: unknown option, missing argument, an option value that is wrong on the command
      line alone (not a number, nan or inf, out of range, malformed, at odds with another option)
====  =========================================================================
"""

from __future__ import annotations

import click

from rngcert import __version__
from rngcert.cli._common import EXIT_TABLE
from rngcert.cli._lazy import LazyGroup

#: Each command and where it is defined: its module is imported only when the command runs (or for --help).
COMMANDS = {
    "certify": "rngcert.cli.certify:certify", "simulate": "rngcert.cli.simulate:simulate",
    "equipment": "rngcert.cli.equipment:equipment_cmd", "bits": "rngcert.cli.rng:bits", "scaling": "rngcert.cli.rng:scaling",
    "shuffle": "rngcert.cli.shuffle:shuffle", "power": "rngcert.cli.power:power", "house-edge": "rngcert.cli.power:house_edge",
    "ingest": "rngcert.cli.store:ingest", "rejects": "rngcert.cli.store:rejects", "audit": "rngcert.cli._audit:audit",
    "watch": "rngcert.cli.store:watch", "export": "rngcert.cli.store:export", "verify": "rngcert.cli.verify:verify",
    "keygen": "rngcert.cli.verify:keygen", "record": "rngcert.cli.record:record",
}


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, help=f"rngcert {__version__}: certify the randomness of casino gaming equipment.\n\n{EXIT_TABLE}", epilog="""\b
Examples:
  rngcert certify spins.csv                      # a wheel's spin log (the bundled default log without a file)
  rngcert shuffle certify baccarat-004           # a packaged shuffle procedure
  rngcert bits --source pcg64 --streams 100 --length 1000000 --seed 1
  rngcert ingest spins.csv && rngcert audit --all
  rngcert COMMAND --help                         # each command's options and examples
""")
@click.version_option(__version__, prog_name="rngcert")
def main():
    pass


if __name__ == "__main__":  # pragma: no cover
    main()
