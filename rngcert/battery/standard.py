"""Certification standards as data: which clauses a verdict answers, and how (issue 23).

A standard is a TOML file (the packaged ones in ``rngcert/battery/standards/``; a lab passes its own
path to ``--standard``). It has top-level keys ``id``, ``title``, ``reference``, ``summary``, ``rule``
(the one sentence that says how the statistical finding and the practical edge combine),
``suspect_level`` (a number, or ``"K*alpha"``: the looser family-wise level of SUSPECT, derived from
alpha), an optional ``[minimum_effect]`` table (what PASS needs the power to detect) and one or more
``[[clause]]`` tables:

=================  ==========================================================================
``id``, ``title``  the clause as the report names it
``applies_to``     ``wheel``, ``shoe`` (or ``shoe:manual`` / ``shoe:machine``), ``bits``
``tests``          battery test names (``rngcert/battery/wheel.py``, ``shuffle.py``, ``bits.py``);
                   ``*`` every test, ``prefix*`` a family, ``!name`` leaves one out;
                   ``exploitability`` is a wheel's best bet from its pay table
``level``          a number in (0, 1), ``"alpha"`` (the run's ``--alpha``) or ``"suspect"``
``correction``     ``per-test``, ``family-wise`` (weighted Holm) or ``second-level`` (SP 800-22's
                   own proportion and uniformity rules)
``family``         for ``family-wise``: ``battery`` (Holm over the whole battery, as rngcert's
                   verdict) or ``clause`` (Holm over the clause's tests only); default ``clause``
``rejection``      ``FAIL``, or ``finding`` (stated in words; the verdict is SUSPECT)
``min_sample``     optional: fewer units (spins, shoes, streams) make the clause inconclusive
``minimum_effect`` optional table, as the standard's, for this clause
``reference``      where the clause comes from
=================  ==========================================================================

A lab's file may not take a packaged standard's ``id`` (whatever its case, width and hyphens); names and texts are one line of visible text, and no two clause ids may read the same; each clause's tests must be tests of the battery of
the equipment it applies to (``second-level`` for bits only). Every standard carries the SHA-256 of its
text (``sha256``), which the report names.

``[minimum_effect]`` keys: ``power`` (default 0.9; wheels, audits and shoes alike unless ``--power`` is given), ``wheel_single_pocket_bias`` (relative, 0.5 = +50%;
the wheel verdict is INCONCLUSIVE, with the spins needed, when the sample cannot detect it with that
power), ``shoe_tracker_edge`` (a number, or ``"house-edge"``: the game's house edge; read by the shoe
pipeline through :meth:`Standard.shoe_min_edge`), ``bits`` (``"sp800-22"``: the sections' own minimum
lengths). A clause's own ``minimum_effect`` overrides the standard's; the strictest over the clauses
that apply is used. Undeclared, a wheel's PASS needs rngcert-default's ``wheel_single_pocket_bias`` (the certify
pipeline applies it) and a shoe's the game's house edge.

:func:`evaluate` gives each clause's result on one table's battery (``met``, ``not met``, ``not
applicable``, ``inconclusive``) and the standard's verdict: INCONCLUSIVE when the data cannot carry a
verdict; else FAIL when a FAIL clause is not met; else INCONCLUSIVE when the battery could not run a
required family; else SUSPECT when a finding clause is not met; else PASS.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import math
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rngcert.errors import EquipmentError
from rngcert.stats.multiple import holm

DEFAULT = "rngcert-default"
KINDS = ("wheel", "shoe", "shoe:manual", "shoe:machine", "bits")
CORRECTIONS = ("per-test", "family-wise", "second-level")
REJECTIONS = ("FAIL", "finding")
RESULTS = ("met", "not met", "not applicable", "inconclusive")
_TOP_KEYS = {"id", "title", "reference", "summary", "rule", "suspect_level", "minimum_effect", "clause"}
_CLAUSE_KEYS = {"id", "title", "applies_to", "tests", "level", "correction", "family", "rejection", "min_sample", "minimum_effect", "reference"}
_EFFECT_KEYS = {"power", "wheel_single_pocket_bias", "shoe_tracker_edge", "bits"}
#: Names that are not battery tests but may be named by a clause.
SPECIAL_TESTS = ("exploitability",)


class StandardError(EquipmentError):
    """A standard file that cannot be used (exit 4, like an equipment error): names file, key and reason."""


class StandardUsageError(ValueError):
    """A standard that does not apply to a command or configuration (a usage error, exit 2)."""


@dataclass(frozen=True)
class Clause:
    """One clause of a standard (see the module docstring for the fields)."""

    id: str
    title: str
    applies_to: tuple[str, ...]
    tests: tuple[str, ...]
    level: float | str
    correction: str
    rejection: str
    reference: str
    family: str = "clause"
    min_sample: int | None = None
    minimum_effect: Mapping[str, Any] = field(default_factory=dict)

    def applies(self, kind: str) -> bool:
        """Whether the clause applies to equipment ``kind`` (``wheel``, ``shoe:manual``, ...)."""
        base = kind.split(":", 1)[0]
        return any(a == kind or a == base for a in self.applies_to)

    def level_of(self, alpha: float, suspect_level: float) -> float:
        """The clause's level for a run at ``alpha``."""
        if self.level == "alpha":
            return float(alpha)
        if self.level == "suspect":
            return float(suspect_level)
        return float(self.level)

    def level_text(self, alpha: float, suspect_level: float) -> str:
        lv = self.level_of(alpha, suspect_level)
        how = {"per-test": "each test on its own", "family-wise": "family-wise, Holm over the " + ("battery" if self.family == "battery" else "clause's tests"),
               "second-level": "SP 800-22's second-level rules"}[self.correction]
        return f"{lv:g}, {how}"

    def tests_text(self, names: Sequence[str], kind: str, applicable: Sequence[str] = ()) -> str:
        """The clause's tests as they apply to a battery whose results are ``names`` (``applicable``:
        those that could run)."""
        if "*" in self.tests:
            sel = [n for n in applicable if self.selects(n)]
            out = [p[1:] for p in self.tests if p.startswith("!") and any(fnmatch.fnmatchcase(n.split("[", 1)[0], p[1:]) for n in names)]
            return f"all {len(sel)} applicable tests of the battery" + (f" except {', '.join(out)}" if out else "")
        stems = list(dict.fromkeys(n.split("[", 1)[0] for n in names if self.selects(n)))
        if "exploitability" in self.tests and kind == "wheel":
            stems.insert(0, "exploitability (best bet from the pay table)")
        return ", ".join(stems) if stems else ", ".join(self.tests)

    def selects(self, name: str) -> bool:
        """Whether a result named ``name`` is one of the clause's tests: by its full name, its stem before ``[`` (a test's
        variants) or before ``:`` (SP 800-22's ``:uniformity`` and ``:proportion`` results of one test), with or without
        ``nist_`` (the names a lab's file is checked against)."""
        stem = name.split("[", 1)[0]
        base = stem.split(":", 1)[0]
        keep = False
        for pat in self.tests:
            neg = pat.startswith("!")
            p = pat[1:] if neg else pat
            hit = any(fnmatch.fnmatchcase(x, p) for x in (name, stem, stem.removeprefix("nist_"), base, base.removeprefix("nist_")))
            if hit:
                keep = not neg
        return keep

    def to_dict(self) -> dict:
        d = {"id": self.id, "title": self.title, "applies_to": list(self.applies_to), "tests": list(self.tests), "level": self.level,
             "correction": self.correction, "rejection": self.rejection, "reference": self.reference}
        if self.correction == "family-wise":
            d["family"] = self.family
        if self.min_sample is not None:
            d["min_sample"] = self.min_sample
        if self.minimum_effect:
            d["minimum_effect"] = dict(self.minimum_effect)
        return d


@dataclass(frozen=True)
class Standard:
    """A certification standard: clauses, the SUSPECT level rule and the minimum effect."""

    id: str
    title: str
    reference: str
    summary: str
    rule: str
    clauses: tuple[Clause, ...]
    suspect_rule: float | str = "5*alpha"
    minimum_effect: Mapping[str, Any] = field(default_factory=dict)
    path: str = ""
    packaged: bool = True
    sha256: str = ""

    # ------------------------------------------------------------------ what applies
    def clauses_for(self, kind: str) -> list[Clause]:
        """The clauses that apply to equipment ``kind``."""
        return [c for c in self.clauses if c.applies(kind)]

    def check_applies(self, kind: str, command: str) -> None:
        """Refuse (:class:`StandardUsageError`) a standard with no clause for ``kind``."""
        kinds = [kind] if kind != "shoe" else ["shoe", "shoe:manual", "shoe:machine"]
        if not any(self.clauses_for(k) for k in kinds):
            where = sorted({a for c in self.clauses for a in c.applies_to})
            raise StandardUsageError(
                f"standard {self.id!r} has no clause for {kind.split(':')[0]} equipment, so it does not apply to `rngcert {command}` "
                f"(its clauses apply to: {', '.join(where)})"
            )

    def suspect_level(self, alpha: float) -> float:
        """The looser family-wise level of SUSPECT at ``alpha``; refuses (:class:`StandardUsageError`)
        a configuration in which it would not be looser than alpha."""
        s = self.suspect_rule
        lv = float(s) if not isinstance(s, str) else float(s.split("*", 1)[0]) * alpha
        if not lv > alpha or not lv < 1:
            raise StandardUsageError(
                f"--alpha {alpha:g} with standard {self.id!r}: its SUSPECT level ({s!r} = {lv:g}) must be looser than alpha and below 1; "
                f"SUSPECT would never occur, or always. Use a smaller --alpha or a standard whose suspect_level derives from alpha"
            )
        return lv

    # ------------------------------------------------------------------ minimum effect
    def effect(self, kind: str, key: str, default=None):
        """The strictest declared ``key`` of ``[minimum_effect]`` over the clauses applying to ``kind``
        (a clause's own table overrides the standard's)."""
        vals = []
        for c in self.clauses_for(kind) if kind != "shoe" else [c for k in ("shoe", "shoe:manual", "shoe:machine") for c in self.clauses_for(k)]:
            v = c.minimum_effect.get(key, self.minimum_effect.get(key))
            if v is not None:
                vals.append(v)
        if not vals:
            return self.minimum_effect.get(key, default)
        nums = [v for v in vals if isinstance(v, (int, float))]
        if key == "power":
            return max(nums) if nums else default
        if nums and len(nums) == len(vals):
            return min(nums)
        return vals[0] if not nums else min(nums)

    def power(self, kind: str | None = None) -> float:
        """Declared power of the minimum-effect requirement (default 0.9); for equipment ``kind``,
        the strictest over the clauses that apply to it (a clause's own ``power`` overrides the standard's)."""
        if kind is None:
            return float(self.minimum_effect.get("power", 0.9))
        return float(self.effect(kind, "power", 0.9))

    def wheel_min_bias(self) -> float | None:
        """Declared minimum single-pocket bias of a wheel (relative), or None."""
        v = self.effect("wheel", "wheel_single_pocket_bias")
        return None if v is None else float(v)

    def shoe_min_edge(self, house_edge: float | None) -> float | None:
        """Declared minimum tracker edge of a shoe (as a fraction of the stake): a number, or the
        game's ``house_edge`` when the standard says ``"house-edge"``; None when none is declared."""
        v = self.effect("shoe", "shoe_tracker_edge")
        if v is None:
            return None
        if v == "house-edge":
            return None if house_edge is None else float(house_edge)
        return float(v)

    def false_fail_bound(self, kind: str, alpha: float, tests: Sequence[str]) -> float:
        """An upper bound on the probability that one fair table FAILs under this standard (Bonferroni over
        its FAIL clauses): a per-test clause adds its level once for each applicable test it selects (of
        ``tests``), a family-wise clause over its own tests adds its level, and the family-wise clauses over
        the whole battery share one weighted Holm, which adds their largest level. A player's edge is not
        counted: on a fair table every bet has the house's negative expectation, so its simultaneous lower
        bound is above 0 far less often than the level."""
        sl = self.suspect_level(alpha)
        total, battery_levels = 0.0, [0.0]
        for c in self.clauses_for(kind):
            if c.rejection != "FAIL" or c.correction == "second-level":
                continue
            lv = c.level_of(alpha, sl)
            if c.correction == "per-test":
                total += lv * sum(1 for t in tests if c.selects(t))
            elif c.family == "battery":
                battery_levels.append(lv)
            elif any(c.selects(t) for t in tests):
                total += lv
        return min(1.0, total + max(battery_levels))

    def to_dict(self, alpha: float | None = None) -> dict:
        d = {"id": self.id, "title": self.title, "reference": self.reference, "summary": self.summary, "rule": self.rule,
             "suspect_level_rule": self.suspect_rule, "minimum_effect": dict(self.minimum_effect),
             "source": self.path, "packaged": self.packaged, "sha256": self.sha256, "clauses": [c.to_dict() for c in self.clauses]}
        if alpha is not None:
            d["alpha"] = alpha
            try:
                d["suspect_level"] = self.suspect_level(alpha)
            except StandardUsageError:
                d["suspect_level"] = None
        return d


# ---------------------------------------------------------------------- loading
def packaged() -> list[str]:
    """Ids of the packaged standards."""
    d = resources.files("rngcert.battery") / "standards"
    return sorted(p.name[: -len(".toml")] for p in d.iterdir() if p.name.endswith(".toml"))


def load_standard(name_or_path: str | Path | None = None) -> Standard:
    """A packaged standard by id, or a lab's own TOML file by path; validated.

    Raises
    ------
    StandardError
        Unknown id, unreadable file or invalid content (file, key and reason named).
    """
    if name_or_path is not None and not str(name_or_path).strip():
        raise StandardError(f"empty standard name: give a packaged standard ({', '.join(packaged())}) or a TOML file path")
    name = str(name_or_path or DEFAULT)
    p = Path(name)
    if name not in packaged() and (p.suffix == ".toml" or p.exists() or "/" in name):  # a packaged id is never a file of the folder
        if not p.is_file():
            raise StandardError(f"{name}: standard file not found (packaged standards: {', '.join(packaged())})")
        own = _packaged_id(p)
        if own is not None:  # a packaged file named by its path is that packaged standard (the same rule, the same report)
            name = own
        else:
            return _load_file(p, name)
    if name not in packaged():
        raise StandardError(f"unknown standard {name!r}: packaged standards are {', '.join(packaged())}, or give a TOML file path")
    f = resources.files("rngcert.battery") / "standards" / f"{name}.toml"
    return parse_standard(f.read_text(encoding="utf-8"), f"rngcert/battery/standards/{name}.toml", packaged_file=True)


def _packaged_id(p: Path) -> str | None:
    """The id of the packaged standard whose file ``p`` is, or None."""
    d = resources.files("rngcert.battery") / "standards"
    try:
        here = Path(str(d)).resolve()
        return p.stem if p.resolve().parent == here and p.suffix == ".toml" and p.stem in packaged() else None
    except (OSError, RuntimeError):
        return None


def _load_file(p: Path, name: str) -> Standard:
    """A lab's standard file, read and validated (at most :data:`rngcert.equipment.MAX_FILE_BYTES`, as an equipment file:
    the size is checked before anything is read)."""
    from rngcert.equipment import read_equipment_file

    digest: list[str] = []
    try:
        text = read_equipment_file(p, "standard file", digest)
    except EquipmentError as exc:
        raise StandardError(str(exc)) from None
    std = dataclasses.replace(parse_standard(text, str(p), packaged_file=False), sha256=digest[0])  # the file's bytes, a BOM included
    same = next((k for k in packaged() if _skeleton(k) == _skeleton(std.id)), None)
    if same is not None:
        raise StandardError(f"{p}: key 'id': {std.id!r} is the id of a packaged standard: a lab's own file needs its own id, or a "
                            f"report would cite the packaged standard for rules it does not hold (ids are compared whatever their case, width and "
                            f"hyphens; name the packaged one as --standard {same})")
    return std


def _skeleton(text: str) -> str:
    """How a name reads: Unicode compatibility forms folded (full-width letters), case folded, every dash a hyphen,
    surrounding spaces cut. Two clause ids, or a lab's id and a packaged one, that read the same are one name."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join("-" if unicodedata.category(ch) == "Pd" else ch for ch in folded).strip()


def _hidden(text: str) -> str:
    """The first control or invisible character of ``text`` as ``U+XXXX`` (a line break, an escape sequence, a
    zero-width or bidirectional control), or "" when it has none."""
    ch = next((ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
    return "" if ch is None else f"U+{ord(ch):04X}"


def _check_visible(doc: Mapping[str, Any], keys: Sequence[str], at: str, bad: Callable[[str, str], None]) -> None:
    """The names and texts of a standard are one line of visible text: a line break in a clause id printed a line of its
    own in the terminal summary (a forged "VERDICT: PASS"); an invisible character makes two names look alike."""
    for k in keys:
        h = _hidden(str(doc.get(k, "")))
        if h:
            bad(f"{at}{k}", f"holds a control or invisible character ({h}): a standard's names and texts are one line of visible text")


def _known_tests() -> dict[str, set[str]]:
    """The test names of each equipment's battery (``wheel``, ``shoe``, ``bits``), as a clause may name them."""
    from rngcert.battery.bits import SP800_22
    from rngcert.battery.shuffle import SHUFFLE
    from rngcert.battery.wheel import WHEEL
    from rngcert.stats import shuffle as sh

    return {"wheel": {s.name for s in WHEEL.specs} | set(SPECIAL_TESTS),
            "shoe": {s.name for s in SHUFFLE.specs} | set(sh._PERM_TESTS) | {"orientation_share", "card_tracking"},
            "bits": {s.name for s in SP800_22.specs} | {f"nist_{s.name}" for s in SP800_22.specs}}


def _check_tests(clause: Clause, at: str, known: dict[str, set[str]], bad: Callable[[str, str], None]) -> None:
    """Every test a clause names is one of the batteries of the equipment it applies to, and the clause selects at
    least one of them: a clause that can never check anything would be reported "not applicable" on every log."""
    kinds = sorted({a.split(":", 1)[0] for a in clause.applies_to})
    mine = set().union(*(known[k] for k in kinds))
    every = set().union(*known.values())
    for t in clause.tests:
        p = t.lstrip("!")
        hit = (lambda names: any(fnmatch.fnmatchcase(k, p) for k in names)) if ("*" in p or "?" in p) else (lambda names: p in names)
        if hit(mine):
            continue
        if hit(every):
            owners = sorted(k for k, v in known.items() if hit(v))
            bad(f"{at}.tests", f"{t!r} is a test of the {', '.join(owners)} battery, not of the {', '.join(kinds)} battery its "
                               f"applies_to names: the clause would never check it")
        if "*" in p or "?" in p:
            bad(f"{at}.tests", f"pattern {t!r} matches no battery test")
        close = sorted(k for k in every if p.split("_")[0] in k)[:6]
        bad(f"{at}.tests", f"unknown test {p!r}" + (f" (did you mean one of {', '.join(close)}?)" if close else ""))
    if not any(clause.selects(n) for n in mine):
        bad(f"{at}.tests", f"{clause.tests!r} selects no test of the {', '.join(kinds)} battery (a name with '!' only leaves a test out)")


# long: validation of every key of a standard's TOML with one error message each, in file order (a lab's file is checked here)
def parse_standard(text: str, source: str = "<string>", *, packaged_file: bool = False) -> Standard:
    """Parse and validate a standard's TOML text (``source`` names it in errors)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StandardError(f"{source}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise StandardError(f"{source}: arrays or tables are nested too deeply to be a standard") from None

    def bad(key: str, why: str):
        raise StandardError(f"{source}: key {key!r}: {why}")

    for k in doc:
        if k not in _TOP_KEYS:
            bad(k, f"unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    for k in ("id", "title", "reference", "summary", "rule"):
        if not isinstance(doc.get(k), str) or not doc[k].strip():
            bad(k, "required, a non-empty string")
    _check_visible(doc, ("id", "title", "reference", "summary", "rule"), "", bad)
    sl = doc.get("suspect_level", "5*alpha")
    if isinstance(sl, str):
        if not re.fullmatch(r"\s*\d+(\.\d+)?\s*\*\s*alpha\s*", sl):
            bad("suspect_level", f"{sl!r} is neither a number in (0, 1) nor 'K*alpha' (e.g. '5*alpha')")
        sl = sl.replace(" ", "")
        if not float(sl.split("*")[0]) > 1:
            bad("suspect_level", "K of 'K*alpha' must be above 1: the SUSPECT level is looser than alpha")
    elif not isinstance(sl, (int, float)) or isinstance(sl, bool) or not 0 < sl < 1:
        bad("suspect_level", f"{sl!r} is not a number in (0, 1)")

    def effect(tbl, where: str) -> dict:
        if not isinstance(tbl, dict):
            bad(where, "must be a table")
        for k, v in tbl.items():
            key = f"{where}.{k}"
            if k not in _EFFECT_KEYS:
                bad(key, f"unknown key (allowed: {', '.join(sorted(_EFFECT_KEYS))})")
            if k == "power" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1):
                bad(key, "a number in (0, 1)")
            if k == "wheel_single_pocket_bias" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf):
                bad(key, "a finite relative bias above 0 (0.5 = +50%)")
            if k == "shoe_tracker_edge" and not (v == "house-edge" or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1)):
                bad(key, "'house-edge' or a number in (0, 1) (a share of the stake)")
            if k == "bits" and v != "sp800-22":
                bad(key, "only 'sp800-22' (SP 800-22's own minimum lengths)")
        return dict(tbl)

    me = effect(doc.get("minimum_effect", {}), "minimum_effect")
    raw = doc.get("clause")
    if not isinstance(raw, list) or not raw:
        bad("clause", "at least one [[clause]] table is required")
    # a lab's file: every test name is checked against the batteries here. The packaged files are checked the same way by
    # the test suite (tests/test_standards.py), not on every load: the shuffle and SP 800-22 batteries import scipy.stats,
    # which a plain wheel certify does not need (issue 26's fixed cost)
    known = None if packaged_file else _known_tests()
    clauses, ids = [], set()
    for i, c in enumerate(raw):
        at = f"clause[{i}]"
        if not isinstance(c, dict):
            bad(at, "must be a table")
        for k in c:
            if k not in _CLAUSE_KEYS:
                bad(f"{at}.{k}", f"unknown key (allowed: {', '.join(sorted(_CLAUSE_KEYS))})")
        for k in ("id", "title", "reference"):
            if not isinstance(c.get(k), str) or not c[k].strip():
                bad(f"{at}.{k}", "required, a non-empty string")
        _check_visible(c, ("id", "title", "reference"), f"{at}.", bad)
        if _skeleton(c["id"]) in ids:
            bad(f"{at}.id", f"duplicate clause id {c['id']!r} (ids are compared whatever their case, width, hyphens and surrounding spaces)")
        ids.add(_skeleton(c["id"]))
        ap = c.get("applies_to")
        if not isinstance(ap, list) or not ap or any(a not in KINDS for a in ap):
            bad(f"{at}.applies_to", f"a non-empty list of {', '.join(KINDS)}; got {ap!r}")
        tests = c.get("tests")
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) and t.strip() for t in tests):
            bad(f"{at}.tests", "a non-empty list of test names")
        lv = c.get("level")
        if not (lv in ("alpha", "suspect") or (isinstance(lv, (int, float)) and not isinstance(lv, bool) and 0 < lv < 1)):
            bad(f"{at}.level", f"a number in (0, 1), 'alpha' or 'suspect'; got {lv!r}")
        corr = c.get("correction")
        if corr not in CORRECTIONS:
            bad(f"{at}.correction", f"one of {', '.join(CORRECTIONS)}; got {corr!r}")
        if corr == "second-level" and any(a != "bits" for a in ap):
            bad(f"{at}.correction", "'second-level' (SP 800-22's proportion and uniformity rules) exists only for bits; applies_to names "
                                    f"{', '.join(a for a in ap if a != 'bits')}, whose batteries have no second-level analysis")
        fam = c.get("family", "clause")
        if fam not in ("battery", "clause"):
            bad(f"{at}.family", f"'battery' or 'clause'; got {fam!r}")
        if "family" in c and corr != "family-wise":
            bad(f"{at}.family", f"applies only to a 'family-wise' correction; this clause's is {corr!r}")
        rej = c.get("rejection")
        if rej not in REJECTIONS:
            bad(f"{at}.rejection", f"'FAIL' or 'finding'; got {rej!r}")
        ms = c.get("min_sample")
        if ms is not None and (not isinstance(ms, int) or isinstance(ms, bool) or ms < 1):
            bad(f"{at}.min_sample", "a whole number of units (spins, shoes, streams) of at least 1")
        ce = effect(c.get("minimum_effect", {}), f"{at}.minimum_effect")
        clauses.append(Clause(c["id"], c["title"], tuple(ap), tuple(tests), lv if isinstance(lv, str) else float(lv), corr, rej,
                              c["reference"], fam, ms, ce))
        if known is not None:
            _check_tests(clauses[-1], at, known, bad)
    return Standard(doc["id"], doc["title"], doc["reference"], doc["summary"], doc["rule"], tuple(clauses),
                    sl if isinstance(sl, str) else float(sl), me, source, packaged_file, hashlib.sha256(text.encode("utf-8")).hexdigest())


# ---------------------------------------------------------------------- evaluation
def _p(t: Mapping[str, Any]) -> float:
    p = t.get("pvalue")
    return 0.0 if p is None else float(p)


def _uniformity_unchecked(second: dict) -> str:
    """The part of SP 800-22's second-level clause that did not run: the uniformity of p-values needs 55 sequences."""
    names, checked = second.get("names"), second.get("uniformity_checked")
    if names is None or checked is None or checked >= names:
        return ""
    return (f"; the uniformity of p-values checked for {checked} of {names} test names (SP 800-22 asks for 55 sequences or more "
            "on which the test applies): the others were judged by the proportion rule only")


# long: each clause of a standard judged on one battery, then the standard's verdict from the clauses; 26 lines are its docstring
def evaluate(std: Standard, kind: str, battery: Mapping[str, Any], *, alpha: float, n: int | None = None,
             edge: Callable[[float], Mapping[str, Any] | None] | None = None, underpowered: Sequence[str] = (),
             unmeasured: str | None = None) -> dict:
    """Each clause's result on one table's battery, and the standard's verdict.

    Parameters
    ----------
    std : Standard
    kind : str
        ``wheel``, ``shoe:manual``, ``shoe:machine`` or ``bits``.
    battery : mapping
        The table's battery as the report carries it (:meth:`BatteryOutcome.to_dict`): ``tests``
        with ``pvalue``, ``holm_weight`` and ``applicable``; ``verdict``; ``data_inconclusive``;
        ``second_level_flags`` (SP 800-22).
    alpha : float
        The run's certification level.
    n : int, optional
        Units of the table (spins, shoes, streams), for ``min_sample``.
    edge : callable, optional
        ``edge(level)`` → the wheel's best bet at simultaneous confidence 1 - level:
        ``{"demonstrated": bool, "bet", "expected_return", "ci", "line"}`` (None: not assessed).
    underpowered : sequence of str
        Why the sample cannot detect the standard's declared minimum effect with its declared power
        (empty: it can, or no minimum effect applies). A PASS under the standard then becomes
        INCONCLUSIVE with these reasons, whatever the battery's own verdict was: a standard more lenient
        than the battery does not turn a rejected, underpowered sample into a PASS.
    unmeasured : str, optional
        Why the equipment has no practical edge to measure (a wheel without a pay table, a game without
        a tracker). A statistical rejection that a finding clause would call a finding, because a
        practical-edge clause found no edge, then stays a FAIL: that clause judged nothing.

    Returns
    -------
    dict
        ``verdict``, ``reasons`` and ``clauses``: one ``{"id", "title", "tests", "level", "result",
        "rejection", "detail", "rejected"}`` per clause (clauses that do not apply to ``kind`` are
        listed as not applicable).
    """
    sl = std.suspect_level(alpha)
    tests = [t for t in battery.get("tests", []) if t.get("applicable")]
    data_inc = bool(battery.get("data_inconclusive"))
    all_names = [t["name"] for t in battery.get("tests", [])]
    rows = []
    for c in std.clauses:
        lv = c.level_of(alpha, sl)
        row = {"id": c.id, "title": c.title, "tests": c.tests_text(all_names, kind, [t["name"] for t in tests]), "level": c.level_text(alpha, sl), "rejection": c.rejection,
               "reference": c.reference, "rejected": [], "for_equipment": c.applies(kind)}
        if not c.applies(kind):
            rows.append(dict(row, result="not applicable", detail=f"applies to {', '.join(c.applies_to)}"))
            continue
        mine = [t for t in tests if c.selects(t["name"])]
        wants_edge = "exploitability" in c.tests and kind == "wheel"
        ex = edge(lv) if (wants_edge and edge is not None) else None
        if not mine and ex is None:
            named = [t["name"] for t in battery.get("tests", []) if c.selects(t["name"])]
            why = "its tests were not applicable to these data" if named else "none of its tests is in this battery"
            if wants_edge and (battery.get("exploitability") or {}).get("reason"):  # the wheel's edge not assessed: say why
                why = f"exploitability not assessed: {battery['exploitability']['reason']}"
            rows.append(dict(row, result="not applicable", detail=why))
            continue
        if c.correction == "second-level" and (battery.get("second_level") or {}).get("applicable") is not True:
            why = (battery.get("second_level") or {}).get("reason") or "this battery has no second-level analysis"
            rows.append(dict(row, result="not applicable", detail=f"two-level analysis not applicable: {why}"))
            continue
        if c.min_sample is not None and n is not None and n < c.min_sample:
            rows.append(dict(row, result="inconclusive", detail=f"{n:,} units, fewer than the clause's minimum sample {c.min_sample:,}"))
            continue
        rejected: list[str] = []
        if c.correction == "per-test":
            rejected = [t["name"] for t in mine if _p(t) < lv]
        elif c.correction == "family-wise":
            fam = tests if c.family == "battery" else mine
            if fam:
                w = np.array([float(t.get("holm_weight", 1.0) or 1.0) for t in fam])
                rej, _ = holm([_p(t) for t in fam], alpha=lv, weights=w)
                rejected = [t["name"] for t, r in zip(fam, rej) if r and c.selects(t["name"])]
        else:  # SP 800-22's second-level rules, as the battery judged them
            rejected = [x for x in battery.get("second_level_flags", []) if c.selects(x)]
        if ex is not None and ex.get("demonstrated"):
            rejected.append(f"exploitability ({ex.get('demonstrated_bet') or ex.get('bet')})")
        if data_inc:
            res = "inconclusive"
            detail = "the data cannot carry a verdict (see the reasons)" + (f"; {len(rejected)} rejection(s) overridden" if rejected else "")
        elif rejected:
            res = "not met"
            detail = f"rejected: {', '.join(rejected)}"
        elif _floor_blocked(c, mine, lv, tests):
            res, detail = "inconclusive", _floor_blocked(c, mine, lv, tests)
        else:
            res = "met"
            detail = f"{len(mine)} test(s), none rejects at {lv:g}" if mine else ""
            if c.correction == "second-level":  # met by the flag-count rule, which some flagged names may not break
                here = str(battery.get("suspect_rule") or "").partition("; here ")[2]
                detail = f"no more test names flagged than a good generator gives by chance at {lv:g}" + (f": {here}" if here else "")
                detail += _uniformity_unchecked(battery.get("second_level") or {})
            if ex is not None:
                detail += ("; " if detail else "") + f"no bet's simultaneous {1 - lv:.0%} lower bound is above 0"
        rows.append(dict(row, result=res, detail=detail, rejected=rejected))
    applying = [r for r in rows if r["result"] != "not applicable"]
    reasons: list[str] = []
    base = battery.get("verdict", "INCONCLUSIVE")
    kept = _uncleared(std, kind, rows, alpha, sl) if unmeasured else []
    fail = [r for r in rows if r["result"] == "not met" and (r["rejection"] == "FAIL" or r in kept)]
    finding = [r for r in rows if r["result"] == "not met" and r["rejection"] == "finding" and r not in kept]
    inc = [r for r in rows if r["result"] == "inconclusive"]
    if data_inc:
        verdict = "INCONCLUSIVE"
        reasons.append("the data cannot carry a verdict (see the battery's reasons)")
    elif not any(r["for_equipment"] for r in rows):  # not the data: the standard has nothing to say on this equipment
        verdict = "INCONCLUSIVE"
        where = ", ".join(sorted({a for c in std.clauses for a in c.applies_to}))
        reasons.append(f"no clause of standard {std.id!r} applies to {kind} equipment (its clauses apply to: {where})")
    elif not applying:
        verdict = "INCONCLUSIVE"
        reasons.append(f"no clause of standard {std.id!r} could be evaluated on these data")
    elif fail:
        verdict = "FAIL"
        reasons += [f"clause {r['id']} not met ({r['title']}): {r['detail']}" for r in fail]
    elif base == "INCONCLUSIVE" or inc:
        verdict = "INCONCLUSIVE"
        own = [str(r) for r in battery.get("reasons") or [] if not str(r).startswith("no test rejects")]
        reasons += [f"clause {r['id']}: {r['detail']}" for r in inc] or [
            "every applicable clause is met on the tests that ran, but the battery's own verdict is INCONCLUSIVE: "
            + (own[0] if own else "a required test family could not run (see its reasons)")]
    elif finding:
        verdict = "SUSPECT"
        reasons += [f"clause {r['id']} not met ({r['title']}; a finding): {r['detail']}" for r in finding]
    elif underpowered:  # PASS needs power under every standard (DESIGN §4), whatever the battery's own verdict
        verdict = "INCONCLUSIVE"
        reasons += [f"every applicable clause of {std.id!r} is met, but: {r}" for r in underpowered]
    else:
        verdict = "PASS"
        reasons.append(f"every applicable clause of {std.id!r} is met ({len(applying)})")
    return {"verdict": verdict, "reasons": reasons, "clauses": rows}


def _floor_blocked(c: Clause, mine: Sequence[Mapping[str, Any]], lv: float, family: Sequence[Mapping[str, Any]]) -> str:
    """Why a clause cannot be met on these p-values, or "": a Monte Carlo test of the clause sits at its floor
    1/(R+1), which is not below the level the clause would reject it at (the level itself per test; its first
    Holm step lv·w/W over a clause's own family), so no data could have made the clause "not met" (a lab's
    clause at 0.001 with 999 replicates). The battery-wide family at alpha is the pipeline's (its own note)."""
    if c.correction == "second-level" or (c.correction == "family-wise" and c.family == "battery"):
        return ""
    total = sum(float(t.get("holm_weight", 1.0) or 1.0) for t in mine) or 1.0
    out = []
    for t in mine:
        m = re.search(r"monte-carlo, R=(\d+)", str(t.get("method") or ""))
        if m is None or t.get("pvalue") is None:
            continue
        floor = 1.0 / (int(m.group(1)) + 1)
        step = lv if c.correction == "per-test" else lv * float(t.get("holm_weight", 1.0) or 1.0) / total
        if float(t["pvalue"]) <= floor * (1 + 1e-9) and floor >= step:
            out.append((t["name"], floor, step))
    if not out:
        return ""
    need = max(int(math.ceil(2.0 / step / 100.0)) * 100 for _, _, step in out)
    return (f"{', '.join(n for n, _, _ in out)} at the Monte Carlo floor {out[0][1]:.2g} = 1/(R+1), not below the level "
            f"{min(x[2] for x in out):.2g} it would be rejected at: these replicates cannot decide the clause; use --resamples {need} or more")


def _edge_clause(c: Clause) -> bool:
    """Whether a clause judges the practical edge (a wheel's best bet, a shoe's trackers)."""
    return any(t == "exploitability" or t.startswith("tracker_edge") for t in c.tests)


def _uncleared(std: Standard, kind: str, rows: list[dict], alpha: float, sl: float) -> list[dict]:
    """The finding clauses whose rejection the standard cannot clear, so that it stays a FAIL, on equipment with no
    practical edge to measure (a game without a tracker, a wheel without a pay table): a statistical rejection at
    alpha is only a finding because a practical-edge clause judged the player's edge and found none; when every
    practical-edge FAIL clause of the equipment was not applicable, nothing judged it (issue 23: a game without a
    tracker never downgrades a statistical FAIL). Findings by nature (card orientation) and findings at a
    looser level than alpha stay findings. Each kept row's detail says why."""
    by_id = {c.id: c for c in std.clauses}
    edge = [r for r in rows if r["for_equipment"] and r["rejection"] == "FAIL" and _edge_clause(by_id[r["id"]])]
    if not edge or any(r["result"] != "not applicable" for r in edge):
        return []
    finding_only: tuple = ()
    if kind.startswith("shoe"):
        from rngcert.battery.shuffle import FINDING_ONLY as finding_only
    kept = [r for r in rows if r["result"] == "not met" and r["rejection"] == "finding" and by_id[r["id"]].level_of(alpha, sl) <= alpha
            and any(str(x).split("[", 1)[0] not in finding_only for x in r["rejected"])]
    for r in kept:
        r["detail"] += (f"; not cleared: nothing measured the player's edge (clause {', '.join(e['id'] for e in edge)} not applicable: "
                        f"{edge[0]['detail']}), so this rejection stays a FAIL")
    return kept


def summarise(std: Standard, tables: Sequence[Mapping[str, Any]], *, alpha: float, kind: str) -> dict:
    """The report's ``standard`` object: the standard, its per-clause results per table and over all
    tables (``met`` only when every table meets it), and the verdict under it."""
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    per = [dict(t) for t in tables]
    overall = []
    for i, c in enumerate(std.clauses):
        res = [t["clauses"][i]["result"] for t in per]
        applying = [r for r in res if r != "not applicable"]
        if not applying:
            r = "not applicable"
        elif "not met" in applying:
            r = "not met"
        elif "inconclusive" in applying:
            r = "inconclusive"
        else:
            r = "met"
        names = [str(t.get("table")) for t, x in zip(per, res) if x == "not met"]
        if len(per) == 1:
            detail = per[0]["clauses"][i]["detail"]
        else:
            detail = f"met in {res.count('met')} of {len(res)}"
            if names:
                detail += f"; not met: {', '.join(names[:6])}" + (" …" if len(names) > 6 else "")
            if res.count("inconclusive"):
                detail += f"; inconclusive in {res.count('inconclusive')}"
        head = {k: per[0]["clauses"][i][k] for k in ("id", "title", "tests", "level", "rejection", "reference", "for_equipment")} if per else c.to_dict()
        overall.append({**head, "result": r, "detail": detail})
    verdict = max((t["verdict"] for t in per), key=lambda v: order[v]) if per else "INCONCLUSIVE"
    d = std.to_dict(alpha)
    d.update(kind=kind, results=overall, tables=per, verdict=verdict)
    return d

