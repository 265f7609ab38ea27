"""What the trackers learn before they play: the kernel of a procedure from independent simulated
tables (:func:`_kernel`), and how much they learn from (lags, tables)."""

from __future__ import annotations

from rngcert.equipment.procedure import Procedure
from rngcert.simulate.procedure import simulate_tables
from rngcert.stats import trackers as TR

#: Lags of the trackers' kernel (positions of a card before and after the shuffle that it relates).
KERNEL_LAGS = 24
#: Simulated tables the trackers learn a procedure from.
TRAIN_TABLES = 500


def _kernel(proc: Procedure, entropy: int, train_tables: int, key=("tracker-training",)):
    """The trackers' kernel of ``proc``, learned from ``train_tables`` simulated tables of stream ``key``."""
    tr = simulate_tables(proc, train_tables, entropy, burn_in=2, key=key)
    return TR.learn_kernel(tr.before, tr.after, lags=KERNEL_LAGS)
