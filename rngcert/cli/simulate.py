"""rngcert simulate: logs from simulated equipment (fair or with planted biases)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np

from rngcert import __version__
from rngcert.cli._common import (
    interactive,
)
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


@simulate.command(
    "wheel",
    epilog="""\b
Examples:
  rngcert simulate wheel --spins 50000 --seed 7 --out fair.csv
  rngcert simulate wheel --spins 50000 --pocket-bias 17:1.2 --out pocket17.csv
  rngcert simulate wheel --spins 50000 --sector-bias 32:5:1.1 --out sector.csv
  rngcert simulate wheel --spins 20000 --signature 10:7:1.15 --out dealer.csv
  rngcert simulate wheel --spins 100000 --source pcg64 --mapping modulo --word-bits 8 --out byte-mod37.csv
  rngcert simulate wheel --spins 2000 --format protocol --timestamps --seed 3 --out wheel.log   # the controller's serial protocol
  rngcert simulate wheel --spins 20000 --format protocol --direction-bias 0:9:1.3 --out dirbias.log
  rngcert simulate wheel --spins 20000 --speed-bias 10:9:1.3 --out speedbias.csv             # CSV with rotor_speed, ball_direction
""",
)
@click.option("--equipment", "-e", default="european", show_default=True, help="Wheel id or TOML file (arrangement must be known).")
@click.option("--spins", "-n", type=click.IntRange(min=1), default=10000, show_default=True, help="Number of spins, void ones included.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in the output's sidecar .json; default fresh entropy).")
@click.option("--source", default="pcg64", show_default=True, help="Bit generator: pcg64, philox, chacha, aes, sfc64, mt19937, threefry, xoshiro256, ...")
@click.option("--pocket-bias", multiple=True, metavar="POCKET:FACTOR", help="Multiply a pocket's weight, e.g. 17:1.2 for +20% (repeatable).")
@click.option("--sector-bias", multiple=True, metavar="START:WIDTH:FACTOR", help="WIDTH adjacent pockets from START get weight FACTOR.")
@click.option("--harmonic", default=None, metavar="AMPLITUDE[:PHASE_DEG]", help="Smooth rotor bias 1 + a·cos(angle − phase).")
@click.option("--signature", default=None, metavar="OFFSET:WIDTH:FACTOR", help="Dealer signature: landing offset sector centred OFFSET pockets past the reference, FACTOR times as likely.")
@click.option("--signature-dealer", type=click.IntRange(min=1), default=None, help="Only this dealer (1-based) has the signature.")
@click.option("--dealers", type=click.IntRange(min=1), default=1, show_default=True, help="Dealers, in shifts of 50 spins.")
@click.option("--release", is_flag=True, help="Also log the release pocket (signature measured from it).")
@click.option("--void-rate", type=click.FloatRange(0, 1, max_open=True), default=0.0, show_default=True, help="Share of void spins (< 3 revolutions).")
@click.option("--table", default="SIM-1", show_default=True, help="Table id written in the log.")
@click.option("--mapping", type=click.Choice(["modulo", "multiply-shift", "rejection"]), default=None, help="Electronic wheel: map raw words of --source to pockets by this method (see rngcert scaling).")
@click.option("--word-bits", type=click.IntRange(1, 64), default=32, show_default=True, help="With --mapping: bits per raw word (8 = a byte).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output CSV spin log.")
@click.option("--format", "fmt", type=click.Choice(["csv", "protocol"]), default="csv", show_default=True,
              help="csv: a spin log; protocol: the wheel controller's serial messages (rotor speed and direction; void spins as games whose ball is not sensed).")
@click.option("--protocol", default="slingshot2", show_default=True, metavar="NAME|FILE.toml", help="With --format protocol: the controller's protocol.")
@click.option("--timestamps", is_flag=True, help="With --format protocol: each line behind a capture program's '[time] Receive >>> ' prefix, one message every 0.5 s.")
@click.option("--direction-bias", default=None, metavar="START:WIDTH:FACTOR", help="Rotor: WIDTH pockets from START weigh FACTOR in clockwise games and 2-FACTOR in counter-clockwise ones.")
@click.option("--speed-bias", default=None, metavar="START:WIDTH:FACTOR", help="Rotor: the same arc, FACTOR in games faster than the mean rotor speed, 2-FACTOR in slower ones.")
@click.option("--rotor-drift", type=float, default=0.0, show_default=True, help="Rotor: change of the mean rotor speed (rpm) from the first game to the last.")
@click.option("--same-direction", type=click.FloatRange(0, 1), default=0.0, show_default=True, help="Share of games in which the ball is spun with the rotor (CSV: ball_direction).")
def simulate_wheel(equipment, spins, seed, source, pocket_bias, sector_bias, harmonic, signature, signature_dealer, dealers, release, void_rate, table, mapping, word_bits, out,
                   fmt, protocol, timestamps, direction_bias, speed_bias, rotor_drift, same_direction):
    """Write a spin log from a fair or deliberately biased simulated wheel.

    Draws come from the named bit generator seeded from one SeedSequence; the seed, source and
    library versions are written to OUT.json beside the log so the log can be regenerated.
    """
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.sources import generator, seed_sequence, versions
    from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

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
        pockets = tuple((pos_of(a, "--pocket-bias"), float(f)) for a, f in (_split(s, 2, "--pocket-bias") for s in pocket_bias))
        sectors = tuple((pos_of(a, "--sector-bias"), int(w), float(f)) for a, w, f in (_split(s, 3, "--sector-bias") for s in sector_bias))
        harm = None
        if harmonic:
            hp = harmonic.split(":")
            harm = (float(hp[0]), np.deg2rad(float(hp[1])) if len(hp) > 1 else 0.0)
        sig = None
        if signature:
            o, w, f = _split(signature, 3, "--signature")
            sig = (int(o), int(w), float(f))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    bias = WheelBias(pockets, sectors, harm, sig, None if signature_dealer is None else signature_dealer - 1)
    ss = seed_sequence(seed)
    rng = generator(source, ss)
    if fmt == "protocol" or direction_bias or speed_bias or rotor_drift or same_direction:
        _simulate_rotor(wheel, spins, rng, ss, source, out, fmt=fmt, protocol=protocol, timestamps=timestamps, direction_bias=direction_bias,
                        speed_bias=speed_bias, drift=rotor_drift, same_direction=same_direction, void_rate=void_rate, table=table, pos_of=pos_of,
                        others=bias != WheelBias() or mapping is not None or dealers > 1 or release)
        return
    if mapping is not None and bias != WheelBias():
        raise click.BadParameter("--mapping simulates an electronic wheel from raw words; it takes no planted bias", param_hint="--mapping")
    chunk = 1_000_000
    bar = None
    if interactive() and spins > chunk:
        from tqdm import tqdm

        bar = tqdm(total=spins, unit=" spins", desc="simulating", file=sys.stderr)
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


def _simulate_rotor(wheel, spins, rng, ss, source, out, *, fmt, protocol, timestamps, direction_bias, speed_bias, drift, same_direction, void_rate,
                    table, pos_of, others):
    """simulate wheel with rotor data (issue 25): a CSV spin log with rotor_speed and ball_direction, or the
    controller's protocol; fair, or with a planted direction- or speed-dependent bias."""
    from rngcert.simulate.rotor import RotorBias, simulate_rotor_spins
    from rngcert.simulate.wheel import write_spin_log

    if others:
        raise click.UsageError("rotor simulation (--format protocol, --direction-bias, --speed-bias, --rotor-drift, --same-direction) takes no "
                               "pocket/sector/harmonic/signature bias, --mapping, --dealers or --release")

    def arc(spec, what):
        if not spec:
            return None
        a, w, f = _split(spec, 3, what)
        try:
            return (pos_of(a, what), int(w), float(f))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=what) from None

    rb = RotorBias(direction=arc(direction_bias, "--direction-bias"), speed=arc(speed_bias, "--speed-bias"), drift=drift, same_direction=same_direction)
    sim, speed, ball = simulate_rotor_spins(wheel, spins, rng, bias=rb)
    sim.void = rng.random(spins) < void_rate if void_rate > 0 else np.zeros(spins, dtype=bool)
    if fmt == "protocol":
        from rngcert.equipment.protocol import load_protocol
        from rngcert.simulate.protocol import protocol_lines, write_protocol

        if wheel.kind != "roulette":
            raise InputError(f"--format protocol writes a roulette wheel controller's messages; {wheel.id} is a {wheel.kind}")
        proto = load_protocol(protocol)
        n_lines = write_protocol(out, protocol_lines(wheel, sim.positions, sim.direction, speed, sim.void, proto), timestamps=timestamps)
        what = f"{n_lines} lines of the {proto.name} protocol ({spins} games)"
    else:
        sim.rotor_speed, sim.ball_direction = speed, ball
        write_spin_log(out, wheel, sim, table=table)
        what = f"{spins} spins with rotor_speed and ball_direction"
    meta = {"rngcert": __version__, "equipment": wheel.id, "spins": spins, "seed_entropy": str(ss.entropy), "source": source, "format": fmt,
            "protocol": protocol if fmt == "protocol" else None, "rotor_bias": {k: v for k, v in rb.__dict__.items()}, "void_rate": void_rate,
            "rotor_speed": "normal, mean 16.0 rpm, sd 0.6, in tenths", **versions_dict()}
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")
    click.echo(f"wrote {what} to {out} (seed entropy {ss.entropy}, source {source}); metadata in {out}.json", err=True)


def versions_dict() -> dict:
    from rngcert.simulate.sources import versions

    return versions()
