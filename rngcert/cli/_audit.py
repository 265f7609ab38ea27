"""Where ``rngcert audit`` is loaded from: one BLAS thread before numpy loads, then the command.

The command itself is defined in :mod:`rngcert.cli.store`. Every statistic of an audit runs with one
BLAS thread anyway (each table is a work item inside :func:`rngcert.pipeline.parallel.pinned`), so the
process starts no OpenBLAS worker threads: imported with numpy, two of them spin idle for about 0.1
CPU-s on the 2-core machine, beside the pool's workers (issue 26 item 6), as ``rngcert certify``
already avoids. A value the user set is kept.
"""

from __future__ import annotations

import os
import sys

if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rngcert.cli.store import audit  # noqa: E402 (after the BLAS setting)

__all__ = ["audit"]
