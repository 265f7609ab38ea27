"""The local pool starts the costliest items first when asked (`audit --all`, a multi-table `certify`):
largest processing time first, so that a large table does not run alone at the end while the other cores
wait. Only the start order changes: results come back by item index (issue 26 item 6)."""

from __future__ import annotations

import os
import time

from rngcert.pipeline.parallel import Plan, dispatch_order, map_items


def _logged(item):
    log, i = item
    with open(log, "a") as fh:
        fh.write(f"{i}\n")
    time.sleep(0.05)  # (so that the other worker takes the next item meanwhile)
    return i * i, os.getpid()


def test_dispatch_order_is_the_costliest_first_ties_in_item_order():
    assert dispatch_order([1.0, 5.0, 2.0, 9.0, 5.0], 5) == [3, 1, 4, 2, 0]
    assert dispatch_order(None, 3) == [0, 1, 2]
    assert dispatch_order([1.0, 2.0], 3) == [0, 1, 2]  # (costs that do not match the items: item order)


def test_a_local_pool_starts_the_costliest_items_first_and_returns_results_in_item_order(tmp_path, monkeypatch):
    """The items are submitted to the pool (whose workers take them first in, first out) in dispatch order; results
    come back in item order. The submissions are recorded in this process: the order in which the workers then write
    a line is the scheduler's (a worker delayed 50 ms under load wrote its first item's line after the other worker's
    next two: this test failed so once, with three other test runs on the 2 cores)."""
    from concurrent.futures import ProcessPoolExecutor

    submitted: list[int] = []
    real = ProcessPoolExecutor.submit

    def submit(self, fn, *args, **kwargs):
        submitted.append(args[0] if args and isinstance(args[0], int) else args[1][1])  # (the item's index: forked, or sent)
        return real(self, fn, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    costs = [1.0, 5.0, 2.0, 9.0, 3.0, 4.0]
    for largest_first, want in ((True, [3, 1, 5, 4, 2, 0]), (False, [0, 1, 2, 3, 4, 5])):
        submitted.clear()
        log = tmp_path / f"starts-{largest_first}.txt"
        got = map_items(_logged, [(log, i) for i in range(6)], plan=Plan(workers=2), costs=costs, largest_first=largest_first)
        assert [r for r, _ in got] == [i * i for i in range(6)]
        assert os.getpid() not in {p for _, p in got}  # (run on the pool)
        assert submitted == want
        assert sorted(int(x) for x in log.read_text().split()) == list(range(6))  # each item ran once
