"""pyarrow imported on first use (private; issue 26 item 1: fixed cost).

``import pyarrow`` with ``pyarrow.compute`` costs about 0.07 CPU-s, and a certify of a permanence list
(the shape casinos publish) never needs it: its reader parses the file with numpy. The collect modules
that use pyarrow on other paths (the CSV and JSON Lines readers, the exact permanence reader for lines
with text) name it through :data:`pa`, :data:`pc` and :data:`pacsv` instead of importing it at module
level: each is a stand-in that imports its module on the first attribute looked up, so a run imports
pyarrow only when it calls something of it, and then the real module's objects are used (every value
the same).
"""

from __future__ import annotations

import importlib

__all__ = ["LazyModule", "pa", "pacsv", "pc"]


class LazyModule:
    """A stand-in for the module ``name``, imported when an attribute is first looked up.

    Parameters
    ----------
    name : str
        The module's dotted name (``"pyarrow.compute"``).

    Notes
    -----
    Each attribute found is kept on the stand-in, so later look-ups are plain attribute reads (a
    module's attributes are its functions and types, which do not change).
    """

    def __init__(self, name: str):
        object.__setattr__(self, "_lazy_name", name)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):  # (copy, pickle and introspection probes: not the module's names)
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._lazy_name), attr)
        object.__setattr__(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}>"


#: ``pyarrow``, imported on first use.
pa = LazyModule("pyarrow")
#: ``pyarrow.compute``, imported on first use.
pc = LazyModule("pyarrow.compute")
#: ``pyarrow.csv``, imported on first use.
pacsv = LazyModule("pyarrow.csv")
