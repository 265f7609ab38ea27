"""rngcert simulate: logs from simulated equipment (fair or with planted biases)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import numpy as np

from rngcert import __version__
from rngcert.cli._common import (
    MAX_SIMULATED_SPINS,
    Real,
    interactive,
    known_source,
    refuse_existing,
    refuse_given,
    written_table_id,
)
from rngcert.cli.controller import protocol_options
from rngcert.errors import InputError


@click.group(epilog="""\b
Examples:
  rngcert simulate wheel --spins 20000 --seed 1 --out fair.csv
  rngcert simulate wheel --spins 50000 --pocket-bias 17:1.2 --seed 2 --out biased.csv
""")
def simulate():
    """Produce logs from simulated equipment (fair or with planted biases)."""


def _split(spec: str, n: int, what: str) -> list[str]:
    parts = spec.split(":")
    if len(parts) != n:
        raise click.BadParameter(f"{spec!r} must have {n} ':'-separated parts", param_hint=what)
    return parts


# long: 34 lines of click options, then one pass: bias parsed, the rotor branch, the log written in chunks, its metadata
@simulate.command(
    "wheel",
    epilog="""\b
Examples:
  rngcert simulate wheel --spins 50000 --seed 7 --out fair.csv
  rngcert simulate wheel --spins 50000 --pocket-bias 17:1.2 --out pocket17.csv
  rngcert simulate wheel --spins 50000 --sector-bias 32:5:1.1 --out sector.csv
  rngcert simulate wheel --spins 20000 --signature 10:7:1.15 --out dealer.csv
  rngcert simulate wheel --spins 20000 --rotor --direction-bias 32:5:1.3 --out rotor.csv
  rngcert simulate wheel --spins 100000 --source pcg64 --mapping modulo --word-bits 8 --out byte-mod37.csv
""",
)
@protocol_options
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (arrangement must be known).")
@click.option("--spins", "-n", type=click.IntRange(1, MAX_SIMULATED_SPINS), default=10000, show_default=True, help="Number of spins, void ones included.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in the output's sidecar .json; default fresh entropy).")
@click.option("--source", default="pcg64", show_default=True, callback=known_source, help="Bit generator: pcg64, philox, chacha, aes, sfc64, mt19937, threefry, xoshiro256, ...")
@click.option("--pocket-bias", multiple=True, metavar="POCKET:FACTOR", help="Multiply a pocket's weight, e.g. 17:1.2 for +20% (repeatable).")
@click.option("--sector-bias", multiple=True, metavar="START:WIDTH:FACTOR", help="WIDTH adjacent pockets from START get weight FACTOR (WIDTH 1 to k - 1).")
@click.option("--harmonic", default=None, metavar="AMPLITUDE[:PHASE_DEG]", help="Smooth rotor bias 1 + a·cos(angle − phase).")
@click.option("--signature", default=None, metavar="OFFSET:WIDTH:FACTOR", help="Dealer signature: landing offset sector centred OFFSET pockets past the reference, FACTOR times as likely.")
@click.option("--signature-dealer", type=click.IntRange(min=1), default=None, help="With --signature: only this dealer (1-based) has the signature.")
@click.option("--dealers", type=click.IntRange(min=1), default=1, show_default=True, help="Dealers, in shifts of 50 spins.")
@click.option("--release", is_flag=True, help="Also log the release pocket (signature measured from it).")
@click.option("--void-rate", type=Real(0, 1, max_open=True), default=0.0, show_default=True, help="Share of void spins (< 3 revolutions).")
@click.option("--table", default="SIM-1", show_default=True, callback=written_table_id, help="Table id written in the log.")
@click.option("--mapping", type=click.Choice(["modulo", "multiply-shift", "rejection"]), default=None, help="Electronic wheel: map raw words of --source to pockets by this method (see rngcert scaling); outcome i is the i-th pocket in wheel order.")
@click.option("--word-bits", type=click.IntRange(1, 64), default=32, show_default=True, help="With --mapping (refused without it): bits per raw word (8 = a byte).")
@click.option("--rotor", is_flag=True, help="Simulate the rotor too: direction alternating every spin, rotor_speed at launch (16.0 +- 0.6) and ball_direction columns.")
@click.option("--direction-bias", default=None, metavar="START:WIDTH:FACTOR", help="With the rotor: WIDTH pockets from START get weight FACTOR in cw spins and 2 - FACTOR in ccw spins.")
@click.option("--speed-bias", default=None, metavar="START:WIDTH:FACTOR", help="With the rotor: the same arc, FACTOR in spins faster than the mean rotor speed, 2 - FACTOR in slower ones.")
@click.option("--speed-drift", type=Real(), default=0.0, show_default=True, help="With the rotor: change of the mean rotor speed from the first spin to the last.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output CSV spin log.")
@click.option("--json", "as_json", is_flag=True, help="Print the log's metadata (the sidecar OUT.json, with the log's path) as JSON on standard output.")
@click.option("--force", is_flag=True, help="Overwrite OUT and OUT.json if they exist (without it an existing file is refused, exit 3).")
def simulate_wheel(equipment, spins, seed, source, pocket_bias, sector_bias, harmonic, signature, signature_dealer, dealers, release, void_rate, table, mapping, word_bits,
                   rotor, direction_bias, speed_bias, speed_drift, out, as_json=False, force=False):
    """Write a spin log from a fair or deliberately biased simulated wheel.

    Draws come from the named bit generator seeded from one SeedSequence; the seed, source and
    library versions are written to OUT.json beside the log so the log can be regenerated.
    """
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.sources import generator, seed_sequence, versions
    from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

    _refuse_unused(mapping, signature, signature_dealer)
    refuse_existing(out, force)
    wheel = load_wheel(equipment)
    if not wheel.order_known:
        raise InputError(f"wheel {wheel.id!r} has no known arrangement; simulation needs one")
    positions, _ = wheel.token_table()

    def pos_of(label, what):
        key = str(label).strip().lower()
        if key not in positions:
            raise click.BadParameter(f"{label!r} is not a pocket/section of {wheel.id}", param_hint=what)
        return positions[key]

    try:
        pockets = tuple((pos_of(a, "--pocket-bias"), _factor(f, "--pocket-bias")) for a, f in (_split(s, 2, "--pocket-bias") for s in pocket_bias))
        sectors = tuple((pos_of(a, "--sector-bias"), int(w), _factor(f, "--sector-bias")) for a, w, f in (_split(s, 3, "--sector-bias") for s in sector_bias))
        harm = None
        if harmonic:
            hp = harmonic.split(":")
            harm = (_factor(hp[0], "--harmonic"), np.deg2rad(_factor(hp[1], "--harmonic", signed=True)) if len(hp) > 1 else 0.0)
        sig = None
        if signature:
            o, w, f = _split(signature, 3, "--signature")
            sig = (int(o), int(w), _factor(f, "--signature"))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if sig is not None and (pockets or sectors or harm):
        raise click.BadParameter("a dealer signature cannot be combined with --pocket-bias, --sector-bias or --harmonic "
                                 "(it draws each result from the previous one or the release pocket)", param_hint="--signature")
    bias = _checked_bias(wheel.k, WheelBias(pockets, sectors, harm, sig, None if signature_dealer is None else signature_dealer - 1))
    ss = seed_sequence(seed)
    rng = generator(source, ss)
    if rotor or direction_bias or speed_bias or speed_drift:
        from rngcert.simulate.rotor import RotorBias, simulate_rotor_spins

        if bias != WheelBias() or mapping is not None or dealers != 1 or release or void_rate:
            raise click.BadParameter("the rotor simulation takes only --direction-bias, --speed-bias and --speed-drift (one dealer, no void spins)", param_hint="--rotor")
        try:
            arcs = {k: (pos_of(a, k), int(w), float(f)) for k, v in (("--direction-bias", direction_bias), ("--speed-bias", speed_bias)) if v
                    for a, w, f in [_split(v, 3, k)]}
            rb = RotorBias(direction=arcs.get("--direction-bias"), speed=arcs.get("--speed-bias"), drift=speed_drift)
            sim, speed, ball = simulate_rotor_spins(wheel, spins, rng, bias=rb)
        except (ValueError, InputError) as exc:
            raise click.BadParameter(str(exc), param_hint="--rotor") from None
        sim.rotor_speed, sim.ball_direction = speed, ball
        write_spin_log(out, wheel, sim, table=table)
        meta = {"rngcert": __version__, "equipment": wheel.id, "spins": spins, "seed_entropy": str(ss.entropy), "source": source,
                "rotor_bias": {"direction": direction_bias, "speed": speed_bias, "drift": speed_drift}, **versions()}
        Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        click.echo(f"wrote {spins} spins with rotor data to {out} (seed entropy {ss.entropy}, source {source}); metadata in {out}.json", err=True)
        if as_json:
            click.echo(json.dumps({"log": str(out), "metadata": str(out) + ".json", **meta}, indent=1))
        return
    if mapping is not None and bias != WheelBias():
        raise click.BadParameter("--mapping simulates an electronic wheel from raw words; it takes no planted bias", param_hint="--mapping")
    if mapping is not None and 2 ** word_bits < wheel.k:  # (as `rngcert scaling --outcomes` above 2^bits: a usage error)
        raise click.BadParameter(f"a word of {word_bits} bits has {2 ** word_bits} values, fewer than the {wheel.k} pockets of "
                                 f"{wheel.id}", param_hint="--word-bits")
    chunk = 1_000_000
    bar = None
    if interactive() and spins > chunk:
        from rngcert.cli._common import progress_bar

        bar = progress_bar(total=spins, unit="spins", desc="simulating", scale=True)
    prev = None
    with open(out, "wb") as fh:
        for first in range(0, spins, chunk):
            m = min(chunk, spins - first)
            sim = simulate_spins(wheel, m, rng, bias=bias, void_rate=void_rate, dealers=dealers, with_release=release, first_spin=first, start=prev)
            if mapping is not None:
                from rngcert.simulate.sources import BIT_GENERATORS as _BG
                from rngcert.simulate.wheel import mapped_positions

                sim.positions, _rej = mapped_positions(wheel, m, rng.bit_generator, method=mapping, word_bits=word_bits, native_bits=_BG[source.lower()][1])
            prev = int(sim.positions[-1])
            write_spin_log(fh, wheel, sim, table=table, first_spin=first, header=first == 0)
            if bar is not None:
                bar.update(m)
    if bar is not None:
        bar.close()
    meta = {
        "rngcert": __version__,
        "equipment": wheel.id,
        "spins": spins,
        "seed_entropy": str(ss.entropy),
        "source": source,
        "bias": bias.describe(wheel),
        "void_rate": void_rate,
        "dealers": dealers,
        "release": release,
        "mapping": None if mapping is None else {"method": mapping, "word_bits": word_bits},
        **versions(),
    }
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    click.echo(f"wrote {spins} spins to {out} (seed entropy {ss.entropy}, source {source}); metadata in {out}.json", err=True)
    if as_json:
        click.echo(json.dumps({"log": str(out), "metadata": str(out) + ".json", **meta}, indent=1))


def _factor(text: str, what: str, *, signed: bool = False) -> float:
    """A number of a bias option (``17:1.2``'s 1.2): finite, and not negative unless ``signed`` (a phase);
    else a usage error (exit 2) naming the option."""
    try:
        v = float(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a number", param_hint=what) from None
    if not math.isfinite(v) or (v < 0 and not signed):
        raise click.BadParameter(f"{text!r} is not a finite{'' if signed else ' non-negative'} number", param_hint=what)
    return v


def _checked_bias(k: int, bias):
    """``bias`` when each part of it leaves a probability law on the wheel's ``k`` positions; else a usage error
    (exit 2) naming the option: the options' values, not the simulation, are wrong."""
    from rngcert.stats.alternatives import WheelBias, offset_probabilities, position_probabilities

    parts = (("--harmonic", lambda: position_probabilities(k, WheelBias(harmonic=bias.harmonic)) if bias.harmonic else None),
             ("--signature", lambda: offset_probabilities(k, *bias.signature) if bias.signature else None),
             ("--pocket-bias/--sector-bias", lambda: position_probabilities(k, bias)))
    for hint, law in parts:
        try:
            with np.errstate(invalid="ignore", divide="ignore"):
                p = law()
        except InputError as exc:
            raise click.BadParameter(str(exc), param_hint=hint) from None
        if p is not None and not np.all(np.isfinite(p)):
            raise click.BadParameter("the factors leave no pocket with a positive probability", param_hint=hint)
    return bias


def _refuse_unused(mapping, signature, signature_dealer) -> None:
    """``--word-bits`` without ``--mapping`` and ``--signature-dealer`` without ``--signature`` would change
    nothing in the log: a usage error (exit 2), not a log the user believes has them."""
    if mapping is None:
        refuse_given(("word_bits",), "the bits per raw word of --mapping; without --mapping the wheel is drawn directly")
    if signature_dealer is not None and not signature:
        raise click.UsageError("--signature-dealer: the dealer who has the --signature; without --signature no dealer has one")
