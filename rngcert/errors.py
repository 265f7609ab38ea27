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
