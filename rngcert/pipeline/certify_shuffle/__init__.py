"""Shuffle certification end to end (DESIGN §4, §5): shoes → shuffle battery and trackers →
verdict → report, with the same report writer as the wheel. No printing here.

Two sources of shoes, one battery:

* :func:`certify_procedure` — a procedure (packaged or a lab's TOML) simulated at ``tables``
  tables: each table deals ``burn_in`` shoes from new decks before the shoe under test (steady
  state); the first shoe from new decks is judged separately (its own section and verdict line,
  and, when it fails, what a new deck needs). Trackers learn the procedure from independent
  simulated tables. Optionally a sensitivity grid over the assumed wash and riffle parameters.
* :func:`certify_log` — a card-scanner log. Shoes with a ``before`` stage are used as recorded;
  a log of dealt cards only is certified by rebuilding each shoe's order before the shuffle from
  the previous shoe of the same table and the procedure's pickup (or from ``--before``); the cards
  nobody saw are filled at random (valid under a uniform shuffle, see
  :func:`rngcert.simulate.deal.complete_shoes`). Trackers learn from one half of the shoes and play
  the other (cross-fitting). The battery runs on all shoes and per dealer; when the procedure has
  a wash, its travel and clump size are measured (:func:`rngcert.simulate.fit.fit_procedure`).

Every report carries: the procedure's parameters marked measured/rule/assumed, the trackers'
edges with intervals against the house edge, the findings in words, the power and effect-size
statement, the game's house edges and the equipment checks.
"""

from __future__ import annotations

from rngcert.pipeline.certify_shuffle._common import DEFAULT_POWER as DEFAULT_POWER
from rngcert.pipeline.certify_shuffle._common import REQUIREMENT_TEXT, ShuffleCertification
from rngcert.pipeline.certify_shuffle._common import _figures as _figures
from rngcert.pipeline.certify_shuffle._common import _finding_sentence as _finding_sentence
from rngcert.pipeline.certify_shuffle._common import _findings as _findings
from rngcert.pipeline.certify_shuffle._common import _header as _header
from rngcert.pipeline.certify_shuffle._common import _house_edges as _house_edges
from rngcert.pipeline.certify_shuffle._common import _max_edge as _max_edge
from rngcert.pipeline.certify_shuffle._common import _power as _power
from rngcert.pipeline.certify_shuffle._common import _rules as _rules
from rngcert.pipeline.certify_shuffle._common import _run as _run
from rngcert.pipeline.certify_shuffle._common import _section as _section
from rngcert.pipeline.certify_shuffle._common import _trackers as _trackers
from rngcert.pipeline.certify_shuffle.log import _log_sensitivity as _log_sensitivity
from rngcert.pipeline.certify_shuffle.log import certify_log
from rngcert.pipeline.certify_shuffle.log_once import _certify_log_once as _certify_log_once
from rngcert.pipeline.certify_shuffle.log_once import _fold_spec as _fold_spec
from rngcert.pipeline.certify_shuffle.log_once import _log_equipment as _log_equipment
from rngcert.pipeline.certify_shuffle.log_once import _resolution_needed as _resolution_needed
from rngcert.pipeline.certify_shuffle.log_once import _run_folds as _run_folds
from rngcert.pipeline.certify_shuffle.log_once import _subset_kernels as _subset_kernels
from rngcert.pipeline.certify_shuffle.procedure import _batch_item as _batch_item
from rngcert.pipeline.certify_shuffle.procedure import _first_shoe_remedy as _first_shoe_remedy
from rngcert.pipeline.certify_shuffle.procedure import _procedure_data as _procedure_data
from rngcert.pipeline.certify_shuffle.procedure import _remedies as _remedies
from rngcert.pipeline.certify_shuffle.procedure import _sensitivity as _sensitivity
from rngcert.pipeline.certify_shuffle.procedure import _simulate as _simulate
from rngcert.pipeline.certify_shuffle.procedure import certify_procedure
from rngcert.pipeline.certify_shuffle.rebuild import _faces as _faces
from rngcert.pipeline.certify_shuffle.rebuild import _log_pairs as _log_pairs
from rngcert.pipeline.certify_shuffle.rebuild import _pickup as _pickup
from rngcert.pipeline.certify_shuffle.shoes import certify_shoes
from rngcert.pipeline.certify_shuffle.training import KERNEL_LAGS as KERNEL_LAGS
from rngcert.pipeline.certify_shuffle.training import TRAIN_TABLES as TRAIN_TABLES
from rngcert.pipeline.certify_shuffle.training import _kernel as _kernel

__all__ = ["ShuffleCertification", "certify_procedure", "certify_log", "certify_shoes", "REQUIREMENT_TEXT"]
