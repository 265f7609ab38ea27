"""Exception tree of rngcert.

Every error a user can cause derives from :class:`RngcertError`; the input errors also derive
from :class:`ValueError` so callers may catch either (the pattern of Honno/coinflip).
"""

from __future__ import annotations


class RngcertError(Exception):
    """Base class of every rngcert error."""


class InputError(RngcertError, ValueError):
    """An input (log file, option, equipment file) that cannot be used as given."""


class EquipmentError(InputError):
    """An equipment definition (wheel layout, pay table, procedure) that is not valid."""


class NoDataError(InputError):
    """An input in which no row at all could be read."""


class StorageError(InputError):
    """The store or an output folder cannot be read or written (corrupt, read-only, disk full):
    exit code 3, like an input error, with the path named."""


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM (a batch system's time limit, ``kill``, a service manager's stop): raised in the main
    thread by the command line's handler so that the run unwinds as on Ctrl-C (temporary folders removed, ``record``'s
    running game written) and ends with exit 143 (128 + 15) instead of dying where it stood."""

