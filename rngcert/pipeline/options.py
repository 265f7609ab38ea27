"""The options of a certification, as one object built once and passed down (issue 27 item 2).

``rngcert certify`` (and ``audit``) build one :class:`CertifyOptions`, ``rngcert shuffle certify`` one
:class:`ShuffleOptions` and ``rngcert bits`` one :class:`BitsOptions`; the pipeline passes the
object down instead of a chain of keywords, so a new option is one field here. The Python API still takes
the keywords, as scipy's functions do: ``certify_log(paths, wheel, alpha=0.05, seed=1)`` builds the
options from them (:meth:`CertifyOptions.of`), and ``options=`` may be given instead, or both (the
keywords then replace the object's fields).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Sequence

__all__ = ["CertifyOptions", "ShuffleOptions", "BitsOptions"]


#: The ranges of the numeric options, as the command line's options allow them (``--resamples`` >= 99, ``--alpha`` in
#: (0, 1), ...): {field: keywords of :func:`rngcert.stats.params.check_number`}. One table for the three classes.
_OPEN01 = {"low": 0, "high": 1, "low_open": True, "high_open": True}
_RANGES = {
    "alpha": _OPEN01,
    "power": {**_OPEN01, "none_ok": True},
    "seed": {"low": 0, "integer": True, "none_ok": True},
    "seed_entropy": {"low": 0, "integer": True, "none_ok": True},
    "n_resamples": {"low": 99, "integer": True},
    "required_bias": {"low": 0, "low_open": True, "none_ok": True},
    "min_edge": {"low": 0, "low_open": True, "none_ok": True},
    "max_rejected_share": {"low": 0, "high": 1},
    "threshold": {},
}


class _Options:
    """What the three options classes share: built from an object and/or keywords in one place, and checked in one
    place (the same ranges as the command line's options: :data:`_RANGES`)."""

    def __post_init__(self) -> None:
        from rngcert.stats.params import check_number

        for f in fields(self):  # a handful of fields
            if f.name in _RANGES:  # a numpy number becomes the Python number the report's JSON holds
                object.__setattr__(self, f.name, check_number(getattr(self, f.name), f.name, **_RANGES[f.name]))

    @classmethod
    def of(cls, options=None, /, *, where: str = "", **keywords):
        """The options ``options`` (None: the defaults) with the given ``keywords`` replacing its fields.

        Raises
        ------
        TypeError
            A keyword that is no field of the class (named with ``where``, the calling function),
            ``options`` of another class, or an option of the wrong type (``alpha="0.05"``).
        rngcert.errors.InputError
            (a ``ValueError``) an option outside the range its command-line option allows
            (``n_resamples=5``: at least 99), naming the option and the range.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - names)
        if unknown:
            raise TypeError(f"{where or cls.__name__}() got an unexpected keyword argument {unknown[0]!r} "
                            f"(options: {', '.join(sorted(names))})")
        if options is not None and not isinstance(options, cls):
            raise TypeError(f"{where or cls.__name__}(): options must be a {cls.__name__}, got {type(options).__name__}")
        try:
            if options is None:
                return cls(**keywords)
            return replace(options, **keywords) if keywords else options
        except (TypeError, ValueError) as exc:  # a value out of its range: named with the calling function
            raise type(exc)(f"{where or cls.__name__}(): {exc}") from None

    def replace(self, **changes):
        """A copy with ``changes`` (the object is frozen)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class CertifyOptions(_Options):
    """Options of a wheel certification (``certify``) and of a store audit (``audit``).

    Parameters
    ----------
    alpha : float
        Certification level (default 0.01).
    seed : int, optional
        Root seed; fresh OS entropy (recorded) when None.
    n_resamples : int
        Monte Carlo replicates per test.
    required_bias : float, optional
        Lab's declared minimum detectable single-pocket bias (relative, e.g. 0.2 = +20%); None: the
        standard's declared minimum effect.
    power : float, optional
        Power for the power statement and ``required_bias``; None (default): the standard's declared
        power (the strictest of its clauses for wheels; 0.9 in every packaged standard).
    command : str, optional
        The command line, as the report states it.
    figures : bool
        Draw the figures.
    progress : callable, optional
        ``progress(spins_done, spins_total, label)``.
    notes : sequence of str
        Notes the report prints.
    max_rejected_share : float
        Share of unreadable rows above which every verdict is INCONCLUSIVE.
    plan : rngcert.pipeline.parallel.Plan, optional
        Where the tables run (default serial).
    standard : Standard, str or None
        The certification standard (None: ``rngcert-default``).
    tests : sequence of str, optional
        A follow-up: run only these tests of the battery.
    """

    alpha: float = 0.01
    seed: int | None = None
    n_resamples: int = 9999
    required_bias: float | None = None
    power: float | None = None
    command: str | None = None
    figures: bool = True
    progress: Callable[[int, int, str], None] | None = None
    notes: Sequence[str] = ()
    max_rejected_share: float = 0.05
    plan: Any = None
    standard: Any = None
    tests: Sequence[str] | None = None


@dataclass(frozen=True)
class ShuffleOptions(_Options):
    """Options of a shuffle certification (``shuffle certify``: a procedure or a shoe log).

    Parameters
    ----------
    alpha, seed, command, figures, plan
        As in :class:`CertifyOptions` (``plan``: where the batches of simulated tables run).
    n_resamples : int
        Monte Carlo replicates (default 1999; only when card identity is ambiguous).
    threshold : float
        Tracker edge (per unit staked) declared in advance; above it the shuffle FAILs.
    standard : {"edge", "uniform"}, optional
        The shuffle battery's rule; default "edge" for a manual procedure, "uniform" otherwise.
    progress : callable, optional
        ``progress(done, total, label)`` as each stage finishes: the CLI's progress bar.
    min_edge : float, optional
        Declared minimum tracker edge above ``threshold`` that the shoes must detect with ``power``
        for a PASS (:mod:`rngcert.pipeline.shoe_power`); default the game's house edge.
    power : float
        Declared power (default 0.9, as the wheel's ``--power``).
    max_rejected_share : float
        Shoe logs: the largest share of unreadable rows, and of dealt shoes left out for problems, that a verdict
        may stand on (above it every verdict is INCONCLUSIVE; default 0.05, as the wheel's ``--max-rejected``).
    """

    alpha: float = 0.01
    seed: int | None = None
    n_resamples: int = 1999
    threshold: float = 0.0
    standard: str | None = None
    command: str = ""
    figures: bool = True
    progress: Callable | None = None
    plan: Any = None
    min_edge: float | None = None
    power: float = 0.9
    max_rejected_share: float = 0.05


@dataclass(frozen=True)
class BitsOptions(_Options):
    """Options of an SP 800-22 certification of bit streams (``rngcert bits``).

    Parameters
    ----------
    alpha : float
        Certification level; also the per-sequence pass level of SP 800-22 (0.01).
    constants : {"reference", "corrected"}
        Constants of sts-2.1.2 (default; reproduces Appendix B) or the corrected ones.
    null_law : {"exact", "uniform"}
        Law of the p-values in the two-level analysis: "exact" (default; the law of each test's
        p-value at this n, case c02) or "uniform" (SP 800-22 as published).
    command, figures
        As in :class:`CertifyOptions`.
    seed_entropy : int, optional
        The root seed of a generated stream, as the report states it.
    plan : rngcert.pipeline.parallel.Plan, optional
        Where the m streams run (independent work items); default serial.
    progress : callable, optional
        ``progress(done, total)`` as streams finish (the CLI's progress bar).
    """

    alpha: float = 0.01
    constants: str = "reference"
    null_law: str = "exact"
    command: str = ""
    figures: bool = True
    seed_entropy: int | None = None
    plan: Any = None
    progress: Callable | None = None
