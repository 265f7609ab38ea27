"""The orders before each shuffle of a card-scanner log: recorded, declared, or rebuilt from the
previous shoe by the game's pickup (:func:`_log_pairs`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from rngcert.equipment.cards import new_shoe
from rngcert.equipment.procedure import Procedure
from rngcert.simulate import deal as D
from rngcert.simulate import games


# ----------------------------------------------------------------------------- scanner logs
def _pickup(proc: Procedure | None, game: str | None):
    """The game's deal-and-pickup function and its parameters (:mod:`rngcert.simulate.games`)."""
    if game is None:
        return None, {}
    return games.play(game).deal, games.deal_params(game, proc)


def _faces(x, serialised):
    a = np.asarray(x).astype(np.int64)
    return np.where(a >= 0, a if serialised else a % 52, -1).astype(np.int16)


def _consecutive(meta: list, prev: int, i: int) -> bool:
    """Shoe ``prev`` was dealt just before shoe ``i`` (no shoe of the table left out for problems between them); True
    when the log does not rank its shoes."""
    a, b = meta[prev].get("rank"), meta[i].get("rank")
    return a is None or b is None or b == a + 1


# long: one pass over consecutive shoes of each table, choosing how each order before the shuffle is known
def _log_pairs(log, *, decks: int, game, proc, before_mode, before_orders, rng, how: Counter | None = None, side_of: dict | None = None,
               prev_out: dict | None = None):
    """Rebuild (before view, after prefix) pairs from consecutive dealt shoes of each table.

    Returns arrays over the shoes that can be tested and their indices into the log; ``how``
    (when given) counts where each shoe's order before the shuffle came from. ``side_of``
    (``{previous shoe's log index: pickup side}``) overrides the procedure's pickup side shoe by
    shoe; ``prev_out`` (when given) receives ``{log index of a rebuilt shoe: previous shoe's index}``."""
    how = Counter() if how is None else how
    ser = bool(log.serialised)
    dealt = _faces(log.dealt, ser)
    lengths = (dealt >= 0).sum(axis=1)
    fn, params = _pickup(proc, game)
    idx, views = [], []
    rebuild = []  # (slot in views, previous shoe): rebuilt by the pickup in one vectorised call
    recorded = {}
    if log.pair_ids:
        pos = {k: i for i, k in enumerate(log.after_ids)}
        for j, k in enumerate(log.pair_ids):
            recorded[pos[k]] = _faces(log.pair_before[j], ser)
    for table, seq in log.sequence().items():
        for j, i in enumerate(seq):
            if i in recorded:
                idx.append(i)
                views.append(recorded[i])
                how["recorded in the log (stage before)"] += 1
            elif before_orders is not None and (table, log.meta[i]["shoe"]) in before_orders:
                idx.append(i)
                views.append(_faces(before_orders[(table, log.meta[i]["shoe"])], ser))
                how["given in the --before file"] += 1
            elif before_mode == "new-deck":
                idx.append(i)
                views.append(_faces(new_shoe(decks), ser))
                how["new decks in order (--before new-deck)"] += 1
            elif j > 0 and not _consecutive(log.meta, seq[j - 1], i):
                how["not tested: the shoe dealt before it was left out for problems or is not in the log"] += 1
            elif j > 0:
                prev = seq[j - 1]
                idx.append(i)
                if before_mode == "previous" or fn is None:
                    views.append(dealt[prev].astype(np.int16))
                    how["the previous shoe's dealt order"] += 1
                else:
                    how["rebuilt from the previous shoe by the pickup rules"] += 1
                    rebuild.append((len(views), prev))
                    views.append(None)
            else:  # (every shoe kept is in the tally)
                how["not tested: the first shoe of its table (no shoe dealt before it in the log)"] += 1
    if not idx:
        return None
    if rebuild:
        slots, prevs = (np.array(x) for x in zip(*rebuild))
        if prev_out is not None:
            prev_out.update({int(idx[s_]): int(p_) for s_, p_ in zip(slots, prevs)})
        sides = np.array([(side_of or {}).get(int(p_), params.get("pickup", "")) for p_ in prevs])
        for side in np.unique(sides):  # one vectorised rebuild per pickup side
            sel = sides == side
            kw = dict(params) | ({"pickup": str(side)} if side else {})
            rebuilt = D.rebuild_before(fn, dealt[prevs[sel]], lengths[prevs[sel]], **kw)
            for s_, v in zip(slots[sel], np.where(rebuilt >= 0, rebuilt, -1).astype(np.int16)):
                views[s_] = v
    idx = np.array(idx)
    view = np.stack(views)
    after_prefix = dealt[idx]
    return idx, view, after_prefix
