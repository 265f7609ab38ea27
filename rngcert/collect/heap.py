"""The C allocator's thresholds for block-sized temporaries (issue 26 item 2).

The fast readers parse a log in blocks and the statistics read a table in spans: each block makes
and frees some MB of numpy temporaries of a few hundred kB each. glibc's allocator, by default,
hands the top of its heap back to the kernel as soon as more than about twice the largest recent
allocation lies free there, so every block faulted its memory in again, 4 kB at a time: 160,000
page faults and 0.5-0.7 CPU-s of kernel time for a 10 M-spin permanence list, more than numpy's
own parse of the file. :func:`keep_freed_heap` keeps up to :data:`TRIM_THRESHOLD` of freed heap
for the next block and serves allocations below :data:`MMAP_THRESHOLD` from the heap (numpy asks
the kernel for huge pages from 4 MB on, so larger arrays stay separate mappings, returned when
freed). The freed heap is reused, not added to: peak memory did not grow (certify of a 10 M-spin
list, with the statistics' 64 Ki spans: 336 -> 171 MB; CSV 485 -> 382 MB). It changes no number:
only where the bytes live.
"""

from __future__ import annotations

import os
import sys

#: Free heap kept for the next block (glibc's ``M_TRIM_THRESHOLD``).
TRIM_THRESHOLD = 32 << 20
#: Allocations from this size on get their own mapping (glibc's ``M_MMAP_THRESHOLD``; numpy's huge-page size).
MMAP_THRESHOLD = 4 << 20

#: The shuffle simulation's arrays (tables x cards, 2-8 bytes a card: 2,000 tables of 8 decks are 0.8-6.7 MB
#: each) are made and freed at every step of every shoe. Above 4 MB each was a fresh mapping, faulted in 4 kB at
#: a time: ``rngcert shuffle certify baccarat-004 --shoes 6000 --no-sensitivity`` made 115,000-140,000 page
#: faults serially (0.5 CPU-s of kernel time) and 225,000 on the local pool, where each worker starts with
#: none of the heap it needs. Kept on the heap up to these sizes: 31,000 and 135,000, kernel time 0.3 and
#: 0.6-0.7 CPU-s, peak memory 285-295 MB against 273-291 (2026-12-04, the 2-core machine).
SHUFFLE_TRIM_THRESHOLD = 128 << 20
SHUFFLE_MMAP_THRESHOLD = 32 << 20

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
_done = False


def keep_freed_heap(trim: int = TRIM_THRESHOLD, mmap: int = MMAP_THRESHOLD) -> bool:
    """Set the thresholds once per process (glibc on Linux only; elsewhere, or when the user set
    ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_MMAP_THRESHOLD_``, nothing is changed). The first call of
    the process sets them; later calls change nothing.

    Parameters
    ----------
    trim : int
        Bytes of free heap kept (``M_TRIM_THRESHOLD``); default :data:`TRIM_THRESHOLD`.
    mmap : int
        Allocations from this many bytes on get their own mapping (``M_MMAP_THRESHOLD``, at most
        32 MiB in glibc); default :data:`MMAP_THRESHOLD`. The shuffle simulation passes
        :data:`SHUFFLE_TRIM_THRESHOLD` and :data:`SHUFFLE_MMAP_THRESHOLD`.

    Returns
    -------
    bool
        Whether this call or an earlier one set them.
    """
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux") or "MALLOC_TRIM_THRESHOLD_" in os.environ or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: another allocator
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    _done = bool(mallopt(_M_MMAP_THRESHOLD, int(mmap))) and bool(mallopt(_M_TRIM_THRESHOLD, int(trim)))
    return _done
