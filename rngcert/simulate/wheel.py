"""Simulated wheels: fair or deliberately biased spin sequences, for calibration and planning.

Every draw comes from a named bit generator seeded from one recorded seed
(:mod:`rngcert.simulate.sources`), so a simulated log is reproducible from its seed.

Bias models (pocket, sector, harmonic, dealer signature) are defined once, in
:mod:`rngcert.stats.alternatives`, so that power analysis and the simulator mean the same bias.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rngcert.equipment.wheel import Wheel
from rngcert.errors import InputError
from rngcert.stats.alternatives import WheelBias, offset_probabilities, position_probabilities

__all__ = ["SimulatedSpins", "WheelBias", "mapped_positions", "offset_probabilities", "position_probabilities", "simulate_spins", "write_spin_log"]


@dataclass
class SimulatedSpins:
    """Arrays of a simulated log (length n each)."""

    positions: np.ndarray
    void: np.ndarray
    release: np.ndarray | None
    dealer: np.ndarray
    direction: np.ndarray
    revolutions: np.ndarray
    meta: dict = field(default_factory=dict)
    #: rotor speed at launch (float, NaN unknown) and ball direction (0 cw, 1 ccw), written when set
    rotor_speed: np.ndarray | None = None
    ball_direction: np.ndarray | None = None


def simulate_spins(
    wheel: Wheel,
    n: int,
    rng: np.random.Generator,
    *,
    bias: WheelBias = WheelBias(),
    void_rate: float = 0.0,
    dealers: int = 1,
    with_release: bool = False,
    first_spin: int = 0,
    start: int | None = None,
) -> SimulatedSpins:
    """Draw ``n`` spins of ``wheel``.

    Parameters
    ----------
    wheel : Wheel
        A wheel whose arrangement is known (positions are simulated).
    n : int
        Number of spins including void ones.
    rng : numpy.random.Generator
        Source of randomness (from :func:`rngcert.simulate.sources.generator`).
    bias : WheelBias
        Planted bias; the default is a fair wheel.
    void_rate : float
        Probability that a spin is void (fewer than 3 revolutions, rule 4.2). Void spins still get
        a drawn result, which the collector must exclude.
    dealers : int
        Number of dealers; spins are dealt in shifts of 50 spins in turn.
    with_release : bool
        Also simulate the release pocket (uniform), and measure the signature from it.
    first_spin : int
        Index of the first spin (for chunked simulation: shifts of dealers continue).
    start : int, optional
        Previous result, for a chunk that continues a dealer-signature sequence.

    Returns
    -------
    SimulatedSpins
    """
    if not wheel.order_known:
        raise InputError(f"wheel {wheel.id!r} has no known arrangement; simulation needs one")
    if n < 1:
        raise InputError(f"number of spins must be positive, got {n}")
    if not 0 <= void_rate < 1:
        raise InputError(f"void rate must be in [0, 1), got {void_rate}")
    k = wheel.k
    shift = (first_spin + np.arange(n)) // 50
    dealer = (shift % max(1, dealers)).astype(np.int32)
    direction = (shift % 2).astype(np.int8)  # rule 4.1: direction alternates between shifts
    release = rng.integers(0, k, size=n, dtype=np.int32) if with_release else None
    marginal = bias.pockets or bias.sectors or bias.harmonic
    if bias.signature is not None:
        if marginal:
            raise InputError("a dealer signature cannot be combined with pocket/sector/harmonic biases")
        off, width, factor = bias.signature
        p_sig = offset_probabilities(k, off, width, factor)
        fair = np.full(k, 1.0 / k)
        d_sig = rng.choice(k, size=n, p=p_sig)
        d_fair = rng.choice(k, size=n, p=fair)
        if bias.signature_dealer is not None:
            d = np.where(dealer == bias.signature_dealer, d_sig, d_fair)
        else:
            d = d_sig
        if with_release:
            pos = (release + d) % k
        else:
            if start is None:
                start = int(rng.integers(0, k))
            pos = (start + np.cumsum(d)) % k
    else:
        pos = rng.choice(k, size=n, p=position_probabilities(k, bias))
    void = rng.random(n) < void_rate if void_rate > 0 else np.zeros(n, dtype=bool)
    revolutions = np.where(void, rng.integers(1, 3, size=n), rng.integers(3, 9, size=n)).astype(np.int32)
    return SimulatedSpins(pos.astype(np.int32), void, release, dealer, direction, revolutions)


def check_written_table(table: str) -> None:
    """Refuse a table id that :func:`write_spin_log` cannot write as one CSV cell that reads back the same.

    Raises
    ------
    InputError
        ``table`` is empty, has blanks at its edges, or holds a comma, semicolon, quote or control character.
    """
    if not table or table != table.strip() or any(ch in table for ch in ',;"') or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in table):
        raise InputError(f"table id {table!r} must be non-empty and free of commas, semicolons, quotes, control characters "
                         "(tabs, newlines) and edge blanks")


def write_spin_log(
    out,
    wheel: Wheel,
    sim: SimulatedSpins,
    *,
    table: str = "SIM-1",
    start_time: str = "2026-01-01T00:00:00Z",
    first_spin: int = 0,
    header: bool = True,
) -> int:
    """Write simulated spins as a CSV spin log in the DESIGN §3 format.

    Columns: ``spin_id, timestamp, table, dealer, direction, release_pocket, rotor_speed,
    ball_direction, revolutions, void, result`` (release pocket, rotor speed and ball direction
    when simulated); one spin every 40 seconds from ``start_time``. ``out`` is a path or a binary file
    object (chunks are appended with ``header=False``). Returns the number of rows written.
    """
    check_written_table(table)
    labels = np.array(wheel.position_space().labels if wheel.kind == "roulette" else [str(i) for i in range(wheel.k)], dtype=object)
    n = sim.positions.size
    t0 = np.datetime64(start_time.replace("Z", ""), "s")
    ids = first_spin + np.arange(n)
    ts = (t0 + ids * np.timedelta64(40, "s")).astype("datetime64[s]").astype(str)
    cols = {
        "spin_id": pa.array(ids + 1),
        "timestamp": pa.array(np.char.add(ts, "Z")),
        "table": pa.array(np.full(n, table, dtype=object)),
        "dealer": pa.array(np.char.add("D", (sim.dealer + 1).astype(str))),
        "direction": pa.array(np.where(sim.direction == 0, "cw", "ccw")),
    }
    if sim.release is not None:
        cols["release_pocket"] = pa.array(labels[sim.release])
    if sim.rotor_speed is not None:
        cols["rotor_speed"] = pa.array(np.char.mod("%.6g", sim.rotor_speed))
    if sim.ball_direction is not None:
        cols["ball_direction"] = pa.array(np.where(sim.ball_direction == 0, "cw", "ccw"))
    cols["revolutions"] = pa.array(sim.revolutions)
    cols["void"] = pa.array(np.where(sim.void, "true", "false"))
    cols["result"] = pa.array(labels[sim.positions])
    from rngcert.collect.csvsafe import safe_column

    cols = {k: safe_column(v) for k, v in cols.items()}  # a spreadsheet runs no cell (e.g. a table id "=A1")
    opts = pacsv.WriteOptions(include_header=header, quoting_style="none")
    pacsv.write_csv(pa.table(cols), out if not isinstance(out, (str, bytes)) and hasattr(out, "write") else str(out), write_options=opts)
    return n


def mapped_positions(wheel: Wheel, n: int, bitgen: np.random.BitGenerator, *, method: str, word_bits: int, native_bits: int = 64) -> tuple[np.ndarray, int]:
    """Outcomes of an electronic wheel that maps raw RNG words to pockets.

    Each raw word of ``bitgen`` (``native_bits`` wide) is cut to its top ``word_bits`` bits and
    mapped to a wheel position by ``method`` (:func:`rngcert.equipment.scaling.map_words`:
    ``modulo``, ``multiply-shift`` or ``rejection``). This is the path from the RNG's raw output
    to the final outcome that the scaling check (``rngcert scaling``) computes exactly, so the
    wheel battery can test it. Rejection draws more words until ``n`` outcomes are accepted.

    Returns
    -------
    positions : (n,) int32
    rejected : int
        Words discarded (rejection only).
    """
    from rngcert.equipment.scaling import map_words

    if not 1 <= word_bits <= native_bits:
        raise InputError(f"word bits must be in 1..{native_bits}, got {word_bits}")
    out: list[np.ndarray] = []
    have = 0
    rejected = 0
    shift = np.uint64(native_bits - word_bits)
    while have < n:
        need = n - have
        words = bitgen.random_raw(need + need // 8 + 16).astype(np.uint64) >> shift
        pos, rej = map_words(words, wheel.k, method, bits=word_bits)
        rejected += rej
        out.append(pos[:need])
        have += min(need, pos.size)
    return np.concatenate(out).astype(np.int32), rejected
