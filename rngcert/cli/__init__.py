"""Command-line interface: one click group per file, shared helpers in :mod:`rngcert.cli._common`.

The entry point is :func:`rngcert.cli.app.main` (``rngcert = "rngcert.cli:main"``); the exit codes
are the public constants re-exported here.
"""

from rngcert.cli._common import EXIT, EXIT_EQUIPMENT, EXIT_INPUT
from rngcert.cli.app import main

__all__ = ["EXIT", "EXIT_EQUIPMENT", "EXIT_INPUT", "main"]
