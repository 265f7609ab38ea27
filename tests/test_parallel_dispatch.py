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


def test_a_local_pool_starts_the_costliest_items_first_and_returns_results_in_item_order(tmp_path):
    costs = [1.0, 5.0, 2.0, 9.0, 3.0, 4.0]
    for largest_first, want in ((True, [3, 1, 5, 4, 2, 0]), (False, [0, 1, 2, 3, 4, 5])):
        log = tmp_path / f"starts-{largest_first}.txt"
        got = map_items(_logged, [(log, i) for i in range(6)], plan=Plan(workers=2), costs=costs, largest_first=largest_first)
        assert [r for r, _ in got] == [i * i for i in range(6)]
        assert os.getpid() not in {p for _, p in got}  # (run on the pool)
        starts = [int(x) for x in log.read_text().split()]
        # the workers take the items in this order; two workers may write their line in either order
        assert sorted(starts) == list(range(6)) and all(abs(starts.index(i) - k) <= 1 for k, i in enumerate(want)), starts
