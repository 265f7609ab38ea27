"""The folder where rngcert keeps results between runs (verdict power, compiled report templates, the
exact SP 800-22 null laws), in a module of its own: the report writer and ``rngcert bits`` need the
folder, not :mod:`rngcert.battery.power` and the wheel battery it imports (about 0.02 CPU-s)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path | None:
    """Where the verdict-power results persist between runs: ``$RNGCERT_CACHE``, else
    ``$XDG_CACHE_HOME/rngcert`` (default ``~/.cache/rngcert``); ``RNGCERT_CACHE=off`` disables it.

    The cached numbers are those the simulation gives for the same key (it is seeded by the key),
    so a cache hit changes the run time, never a report."""
    env = os.environ.get("RNGCERT_CACHE")
    if env is not None:
        return None if env.strip().lower() in ("", "0", "off", "no", "none") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rngcert"
