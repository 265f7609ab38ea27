"""Running a shuffle procedure: its steps, the deal and pickup between shoes, and whole tables.

The procedure itself is data (:mod:`rngcert.equipment.procedure`); a step named ``op`` runs the
shuffler function of the same name in :mod:`rngcert.simulate.shufflers`, so adding a step is one
entry in :data:`rngcert.equipment.procedure.STEPS` plus that function.

Random streams come only from :func:`rngcert.seeding.stream` ``(entropy, "shuffle-simulation",
*key)``: a simulation is repeated exactly from the entropy recorded in the report and its key.

A *table* deals shoe after shoe: new decks are shuffled (the first shoe), dealt to the cutting card,
picked up (:mod:`rngcert.simulate.deal`), shuffled again, and so on. :func:`simulate_tables` runs
many tables at once (vectorised over tables, a loop over shoes) through a stated burn-in and
returns the first shoe from new decks and a steady-state shoe; :func:`simulate_log` returns the
consecutive shoes of each table as a card scanner would see them.

Card orientation travels in bit :data:`~rngcert.simulate.shufflers.ROTATED` of the codes during
the simulation (the wash turns clumps); every array returned here holds plain codes, with the
orientation in separate boolean arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rngcert.equipment.cards import new_shoe
from rngcert.equipment.procedure import STEPS, Procedure, Step
from rngcert.errors import EquipmentError, InputError
from rngcert.seeding import stream
from rngcert.simulate import games, shufflers
from rngcert.simulate.deal import Deal

__all__ = ["step_function", "apply_step", "shuffle", "deal_pickup", "Tables", "simulate_tables", "simulate_batch", "concat_tables",
           "table_batches", "batch_key", "TABLE_BATCH", "ShoeSequence", "simulate_log", "SIMULATION_STREAM", "DEFAULT_BURN_IN"]

SIMULATION_STREAM = "shuffle-simulation"
#: Shoes a simulated table deals before the shoe under test (steady state), unless stated.
DEFAULT_BURN_IN = 10
_MASK = shufflers.CODE_MASK


def step_function(op: str):
    """The shuffler function of a step ``op`` (same name in :mod:`rngcert.simulate.shufflers`)."""
    if op not in STEPS:
        raise EquipmentError(f"unknown step {op!r}; known steps: {sorted(STEPS)}")
    fn = getattr(shufflers, op, None)
    if not callable(fn):  # the step table and the shufflers disagree: a bug, said plainly
        raise RuntimeError(f"step {op!r} is in equipment.procedure.STEPS but simulate.shufflers has no function {op!r}")
    return fn


def apply_step(step: Step, shoes, rng: np.random.Generator) -> np.ndarray:
    """Run one step on shoes of shape (n_shoes, n_cards); returns a new array."""
    return step_function(step.op)(shoes, rng, **step.params)


def shuffle(proc: Procedure, shoes, rng: np.random.Generator) -> np.ndarray:
    """Apply the procedure's steps, in order, to shoes of shape (n_shoes, 52·decks).

    Codes may carry the orientation bit; it travels with the cards and the wash may flip it.
    Returns a new array.
    """
    out = np.asarray(shoes)
    if out.ndim != 2 or out.shape[1] != proc.n_cards:
        raise EquipmentError(f"{proc.path}: procedure is for {proc.decks} decks ({proc.n_cards} cards), got shoes of shape {out.shape}")
    for st in proc.steps:
        out = apply_step(st, out, rng)
    return out


def deal_pickup(proc: Procedure, shoes, cut_position=None) -> Deal:
    """Deal shoes to the cutting card (or to ``cut_position``, per shoe) and pick them up.

    Game "none": nothing is dealt by rule; the whole shoe is "dealt" and the next shuffle starts
    from the shoe as it is (an electronic shuffle of the previous order).
    """
    a = np.asarray(shoes)
    cp = proc.cut_position if cut_position is None else cut_position
    if proc.game != "none":  # the game's deal and pickup (rngcert.simulate.games)
        return games.play(proc.game).deal(a, cut_position=cp, **games.deal_params(proc.game, proc))
    m, n = a.shape
    order = np.broadcast_to(np.arange(n), (m, n)).copy()
    return Deal(a.copy(), order, np.full((m, 0), -1, dtype=np.int8), np.full(m, n, dtype=np.int64))


def _split(x: np.ndarray):
    return (x & _MASK).astype(np.int16), (x & shufflers.ROTATED) > 0


@dataclass(frozen=True)
class Tables:
    """Simulated tables: the first shoe from new decks and a shoe in steady state.

    Attributes
    ----------
    first_before, first_after : (n_tables, N) ndarray of int16
        New-deck order and the first shuffled shoe.
    first_after_rotated : (n_tables, N) ndarray of bool
    before, after : (n_tables, N) ndarray of int16
        The order before the shuffle under test (the discards of the previous shoe) and the shoe
        it produces, after ``burn_in`` shoes dealt at the table.
    after_rotated : (n_tables, N) ndarray of bool
    before_unseen : (n_tables, N) ndarray of bool
        Positions of ``before`` holding cards the previous shoe left behind the cutting card: a
        player never saw them, so their order is unknown to a tracker.
    burn_in : int
    key : tuple
        The stream key (after ``"shuffle-simulation"``).
    """

    first_before: np.ndarray
    first_after: np.ndarray
    first_after_rotated: np.ndarray
    before: np.ndarray
    after: np.ndarray
    after_rotated: np.ndarray
    before_unseen: np.ndarray
    burn_in: int
    key: tuple


def _iv_count(name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise InputError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


#: Tables simulated by one work item: ``n`` tables are simulated in batches of this many, batch b
#: from its own stream (batch 0 from the plain key, so that up to this many tables the simulation is
#: that of one vectorised pass), whether the batches run here or on Dask workers.
TABLE_BATCH = 2000


def table_batches(n_tables: int) -> list[tuple[int, int]]:
    """``(batch index, tables)`` of the :data:`TABLE_BATCH` batches of ``n_tables`` tables."""
    n_tables = _iv_count("n_tables", n_tables)
    return [(b, min(TABLE_BATCH, n_tables - b * TABLE_BATCH)) for b in range(-(-n_tables // TABLE_BATCH))]


def batch_key(key: tuple, batch: int) -> tuple:
    """Stream key of batch ``batch`` (the plain key for batch 0)."""
    return tuple(key) if batch == 0 else tuple(key) + ("batch", int(batch))


def simulate_tables(proc: Procedure, n_tables: int, entropy: int, *, burn_in: int = DEFAULT_BURN_IN, key: tuple = ("tables",)) -> Tables:
    """Simulate ``n_tables`` independent tables from new decks through ``burn_in`` dealt shoes.

    Parameters
    ----------
    proc : Procedure
    n_tables : int >= 1
    entropy : int
        Root entropy; batch b of :data:`TABLE_BATCH` tables draws from
        ``stream(entropy, "shuffle-simulation", *key)``, with ``"batch", b`` appended for b >= 1.
    burn_in : int >= 1
        Shoes dealt before the shoe under test: shoe 1 is the first shuffle of new decks, shoe
        ``burn_in + 1`` is tested (steady state). ``burn_in = 1`` is the second shoe after new decks.
    key : tuple
        Stream key (distinct keys give independent simulations).

    Returns
    -------
    Tables
        The batches in order (:func:`concat_tables` of :func:`simulate_batch`); the same tables
        whether the batches ran here or as work items elsewhere.
    """
    n_tables = _iv_count("n_tables", n_tables)
    burn_in = _iv_count("burn_in", burn_in)
    return concat_tables([simulate_batch(proc, b, size, entropy, burn_in=burn_in, key=key) for b, size in table_batches(n_tables)])


def simulate_batch(proc: Procedure, batch: int, n_tables: int, entropy: int, *, burn_in: int = DEFAULT_BURN_IN,
                   key: tuple = ("tables",)) -> Tables:
    """Batch ``batch`` of :func:`simulate_tables`: ``n_tables`` tables in one vectorised pass (a work item)."""
    n_tables = _iv_count("n_tables", n_tables)
    burn_in = _iv_count("burn_in", burn_in)
    rng = stream(entropy, SIMULATION_STREAM, *batch_key(key, batch))
    fresh = np.tile(new_shoe(proc.decks), (n_tables, 1)).astype(np.int16)
    x = shuffle(proc, fresh, rng)
    first_after, first_rot = _split(x)
    d = None
    for _ in range(burn_in):  # loop over shoes at the table, vectorised over tables
        d = deal_pickup(proc, x)
        x = shuffle(proc, d.discards, rng)
    before, _ = _split(d.discards)
    after, rot = _split(x)
    unseen = d.order >= d.n_dealt[:, None]
    return Tables(fresh, first_after, first_rot, before, after, rot, unseen, burn_in, tuple(key))


def concat_tables(parts: list[Tables]) -> Tables:
    """The batches of one simulation, in order, as one :class:`Tables`."""
    if len(parts) == 1:
        return parts[0]
    cat = {f: np.concatenate([getattr(t, f) for t in parts]) for f in
           ("first_before", "first_after", "first_after_rotated", "before", "after", "after_rotated", "before_unseen")}
    return Tables(**cat, burn_in=parts[0].burn_in, key=parts[0].key)


@dataclass(frozen=True)
class ShoeSequence:
    """Consecutive shoes of simulated tables, as a card scanner sees them.

    Attributes
    ----------
    after : (n_tables, n_shoes, N) ndarray of int16
        Every shoe's full order after its shuffle (shoe 0 is the first shoe from new decks).
    before : (n_tables, n_shoes, N) ndarray of int16
        The order each shuffle started from (new-deck order for shoe 0).
    rotated : (n_tables, n_shoes, N) ndarray of bool
        Orientation of the cards of ``after``.
    n_dealt : (n_tables, n_shoes) ndarray of int
        Cards dealt from each shoe (a scanner logs only these).
    """

    after: np.ndarray
    before: np.ndarray
    rotated: np.ndarray
    n_dealt: np.ndarray


def simulate_log(proc: Procedure, n_shoes: int, entropy: int, *, tables: int = 1, key: tuple = ("log",)) -> ShoeSequence:
    """Simulate ``n_shoes`` consecutive shoes at each of ``tables`` tables, from new decks.

    Parameters
    ----------
    proc : Procedure
    n_shoes : int >= 1
    entropy : int
    tables : int >= 1
    key : tuple
        Stream key after ``"shuffle-simulation"``.

    Returns
    -------
    ShoeSequence
    """
    n_shoes = _iv_count("n_shoes", n_shoes)
    tables = _iv_count("tables", tables)
    rng = stream(entropy, SIMULATION_STREAM, *key)
    N = proc.n_cards
    after = np.empty((tables, n_shoes, N), dtype=np.int16)
    before = np.empty_like(after)
    rot = np.empty((tables, n_shoes, N), dtype=bool)
    dealt = np.empty((tables, n_shoes), dtype=np.int64)
    x = np.tile(new_shoe(proc.decks), (tables, 1)).astype(np.int16)
    for s in range(n_shoes):  # loop over shoes at the table, vectorised over tables
        before[:, s] = x & _MASK
        x = shuffle(proc, x, rng)
        after[:, s], rot[:, s] = _split(x)
        d = deal_pickup(proc, x)
        dealt[:, s] = d.n_dealt
        x = d.discards
    return ShoeSequence(after, before, rot, dealt)
