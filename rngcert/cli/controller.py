"""``rngcert simulate wheel --format protocol``: the simulated wheel written as its controller's
serial protocol (issue 25), for captures, ``rngcert record`` and the rotor tests.

Also ``--protocol`` of ``certify`` and ``ingest`` (``@protocol_option``). Kept apart from the
commands' modules as decorators, so each command changes by one line. ``@protocol_options`` adds
``--format``, ``--protocol`` and ``--timestamps`` to ``simulate wheel`` and takes over when
``--format protocol`` is given; the rotor options (``--direction-bias``, ``--speed-bias``,
``--speed-drift``) are the command's own.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click
import numpy as np

from rngcert import __version__
from rngcert.cli._common import refuse_given
from rngcert.errors import InputError


def protocol_format(fmt: str, protocol: str | None) -> str:
    """The reader's format for ``--format`` and ``--protocol``: ``protocol:NAME`` when a
    wheel-controller protocol is named (``--protocol`` stands for the capture format). A protocol
    that is not packaged and not a readable, valid file is an equipment error (exit 4)."""
    if protocol is None:
        return fmt
    if fmt not in ("auto", "protocol"):
        raise click.BadParameter(f"--protocol reads a wheel controller's capture; it does not go with --format {fmt}", param_hint="--protocol")
    from rngcert.equipment.protocol import load_protocol

    load_protocol(protocol)  # validated now: a bad protocol file is exit 4 before any log is read
    return f"protocol:{protocol}"


def protocol_option(f):
    """Add ``--protocol NAME|FILE.toml`` to a command that reads logs with a ``fmt`` parameter
    (certify, ingest): the logs are then read as that controller's captures. (Captures are also
    detected with ``--format auto``.)"""

    @click.option("--protocol", default=None, metavar="NAME|FILE.toml",
                  help="Read the logs as a wheel controller's serial captures in this protocol (packaged: slingshot2; or a lab's TOML file). "
                       "Captures of a packaged protocol are also recognised without it.")
    @functools.wraps(f)
    def wrapper(*args, protocol=None, **kw):
        if protocol is not None:
            kw["fmt"] = protocol_format(kw.get("fmt", "auto"), protocol)
        return f(*args, **kw)

    return wrapper


def protocol_options(f):
    """Add ``--format csv|protocol``, ``--protocol`` and ``--timestamps`` to ``simulate wheel``."""

    @click.option("--format", "fmt", type=click.Choice(["csv", "protocol"]), default="csv", show_default=True,
                  help="csv: a spin log; protocol: the wheel controller's serial messages, one game per spin, with rotor speed and direction "
                       "(e.g. --format protocol --timestamps --direction-bias 0:9:1.3 --out wheel.log; void spins: games whose ball is not sensed).")
    @click.option("--protocol", default="slingshot2", show_default=True, metavar="NAME|FILE.toml", help="With --format protocol (refused without it): the controller's protocol.")
    @click.option("--timestamps", is_flag=True, help="With --format protocol: each line behind a capture program's '[time] Receive >>> ' prefix, one message every 0.5 s.")
    @functools.wraps(f)
    def wrapper(*args, fmt, protocol, timestamps, **kw):
        if fmt != "protocol":
            if timestamps:
                raise click.UsageError("--timestamps goes with --format protocol")
            refuse_given(("protocol",), "the controller's protocol of --format protocol; a csv spin log has none")
            return f(*args, **kw)
        return simulate_protocol(protocol=protocol, timestamps=timestamps, **kw)

    return wrapper


def simulate_protocol(*, equipment, spins, seed, source, out, void_rate, protocol, timestamps, direction_bias=None, speed_bias=None,
                      speed_drift=0.0, **others):
    """Write ``spins`` simulated games as the controller's protocol (fair, or with a planted rotor bias)."""
    from rngcert.equipment.protocol import load_protocol
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.protocol import protocol_lines, write_protocol
    from rngcert.simulate.rotor import RotorBias, simulate_rotor_spins
    from rngcert.simulate.sources import generator, seed_sequence, versions

    used = [k for k in ("pocket_bias", "sector_bias", "harmonic", "signature", "signature_dealer", "mapping", "release") if others.get(k)]
    used += ["dealers"] if others.get("dealers", 1) != 1 else []
    if used:
        raise click.UsageError(f"--format protocol simulates a fair rotor or --direction-bias / --speed-bias / --speed-drift; it does not take "
                               f"{', '.join('--' + u.replace('_', '-') for u in used)}")
    refuse_given(("table", "word_bits"), "not written by --format protocol: the controller's messages carry no table id and no raw words")
    wheel = load_wheel(equipment)
    if wheel.kind != "roulette":
        raise InputError(f"--format protocol writes a roulette wheel controller's messages; {wheel.id} is a {wheel.kind}")
    proto = load_protocol(protocol)
    positions, _ = wheel.token_table()

    def arc(spec, what):
        if not spec:
            return None
        parts = spec.split(":")
        if len(parts) != 3 or parts[0].strip().lower() not in positions:
            raise click.BadParameter(f"{spec!r} must be START:WIDTH:FACTOR with START a pocket of {wheel.id}", param_hint=what)
        try:
            return (positions[parts[0].strip().lower()], int(parts[1]), float(parts[2]))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=what) from None

    rb = RotorBias(direction=arc(direction_bias, "--direction-bias"), speed=arc(speed_bias, "--speed-bias"), drift=float(speed_drift or 0.0))
    ss = seed_sequence(seed)
    rng = generator(source, ss)
    sim, speed, _ball = simulate_rotor_spins(wheel, spins, rng, bias=rb)
    void = rng.random(spins) < void_rate if void_rate > 0 else np.zeros(spins, dtype=bool)
    n_lines = write_protocol(out, protocol_lines(wheel, sim.positions, sim.direction, speed, void, proto), timestamps=timestamps)
    meta = {"rngcert": __version__, "equipment": wheel.id, "spins": spins, "seed_entropy": str(ss.entropy), "source": source, "format": "protocol",
            "protocol": proto.name, "timestamps": timestamps, "void_rate": void_rate,
            "rotor_bias": {"direction": direction_bias, "speed": speed_bias, "drift": speed_drift},
            "rotor_speed": "normal, mean 16.0 rpm, sd 0.6, in tenths (rngcert.simulate.rotor)", **versions()}
    Path(str(out) + ".json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    click.echo(f"wrote {n_lines} lines of the {proto.name} protocol ({spins} games, {int(void.sum())} void) to {out} "
               f"(seed entropy {ss.entropy}, source {source}); metadata in {out}.json", err=True)
    if others.get("as_json"):
        click.echo(json.dumps({"log": str(out), "metadata": str(out) + ".json", **meta}, indent=1))
