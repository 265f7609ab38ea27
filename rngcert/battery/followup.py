"""Follow-up of chosen tests on new data (``rngcert certify --tests NAME,…``).

A SUSPECT verdict names the tests that rejected at the looser level; the lab's next step is to
rerun *those* tests on fresh spins, not the whole battery (TestU01's ``bbattery_Repeat…``). A
follow-up battery keeps the chosen specs of a battery (their functions, parameters, Holm weights
and random streams) and drops the others, so the multiple-testing family is the chosen tests
only: the family size is the number of chosen tests, and the report states it. The calibration
of the full battery (its measured share of fair sources that are SUSPECT) does not describe a
follow-up and is not printed for one.

Examples
--------
>>> from rngcert.battery.followup import family_line, followup, parse_tests
>>> from rngcert.battery.wheel import WHEEL
>>> names = parse_tests("sector_scan, pocket_chisquare", WHEEL)
>>> names
('sector_scan', 'pocket_chisquare')
>>> [s.name for s in followup(WHEEL, names).specs]
['pocket_chisquare', 'sector_scan']
>>> family_line(names)
'follow-up of 2 tests (sector_scan, pocket_chisquare); family of 2: the multiple-testing correction (weighted Holm) runs over these tests only'
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from rngcert.battery.core import Battery

__all__ = ["family_line", "followup", "parse_tests", "test_names"]


def test_names(battery: Battery) -> tuple[str, ...]:
    """The names a follow-up may choose from: every spec of ``battery``, in report order."""
    return tuple(s.name for s in battery.specs)


test_names.__test__ = False  # not a pytest test


def parse_tests(text: str | Sequence[str], battery: Battery) -> tuple[str, ...]:
    """The chosen test names of ``--tests`` (comma-separated, repeats dropped, order kept).

    Parameters
    ----------
    text : str or sequence of str
        ``"pocket_chisquare,sector_scan"``, or the names already split.
    battery : Battery
        The battery the names must belong to.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        No name given, or a name that is not a test of ``battery``; the message lists the valid
        names (the CLI turns it into a usage error, exit 2).
    """
    parts = text.split(",") if isinstance(text, str) else [p for x in text for p in str(x).split(",")]
    names = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    valid = test_names(battery)
    unknown = [n for n in names if n not in valid]
    if not names or unknown:
        what = f"unknown test name(s): {', '.join(unknown)}" if unknown else "no test named"
        raise ValueError(f"{what}; the tests of the {battery.name} battery are: {', '.join(valid)}")
    return names


def followup(battery: Battery, names: Sequence[str]) -> Battery:
    """``battery`` restricted to the specs named in ``names`` (in the battery's order).

    Each kept spec has its own function, parameters, Holm weight and random stream (keyed by
    its name), so a follow-up draws the same Monte Carlo stream for a test as the full battery
    would; only the family of the correction shrinks.

    Raises
    ------
    ValueError
        A name that is not a test of ``battery`` (see :func:`parse_tests`).
    """
    keep = set(parse_tests(list(names), battery))
    return replace(battery, name=f"{battery.name} follow-up", specs=tuple(s for s in battery.specs if s.name in keep),
                   required=tuple(r for r in battery.required if r in keep))


def family_line(names: Sequence[str]) -> str:
    """The sentence a follow-up report and the terminal print: the chosen tests and the family size."""
    k = len(names)
    return (f"follow-up of {k} test{'s' if k != 1 else ''} ({', '.join(names)}); family of {k}: the multiple-testing correction "
            f"(weighted Holm) runs over these tests only")
