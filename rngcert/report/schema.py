"""The one schema of ``report.json`` and the builder of its header, shared by every pipeline
(``certify_wheel``, ``certify_shuffle``, ``certify_bits`` and ``audit``).

A report is a JSON object. Its header (everything but ``tables``, ``verdict`` and the
pipeline-specific sections) is built by :func:`header`, so the four pipelines cannot drift
apart. :data:`FIELDS` lists every top-level field with its meaning; ``tests/test_report_schema.py``
checks that the reports of every pipeline use only these fields and carry the required ones.

Top-level fields
----------------
See :data:`FIELDS` (printed as a table in the README's "report.json" section). Per table section
(``tables[i]``) see :data:`TABLE_FIELDS`; per test (``tables[i].battery.tests[j]``) see
:data:`TEST_FIELDS`.

P-values below the smallest representable double are stored as ``null`` with
``"pvalue_bound": "< 1e-300"`` beside them, and printed as "< 1e-300".
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

#: Version of the report format. 2: integrity block, ``kind``, ``title``, ``certified``, ``rerun``.
REPORT_FORMAT = 2

#: Every top-level field of report.json: name -> (required, meaning).
FIELDS: dict[str, tuple[bool, str]] = {
    "report_format": (True, "version of this schema (2)"),
    "kind": (True, '"certification" or "audit"'),
    "title": (True, 'document title, e.g. "Certification report" or "Audit report"'),
    "software": (True, "versions: rngcert, python, scipy, numpy, randomgen"),
    "generated_utc": (True, "when the report was made (ISO 8601, UTC)"),
    "command": (True, "the command line as typed (empty when made from Python)"),
    "inputs": (True, "input files: path, sha256 (of the file's bytes), format, counts and a one-line summary"),
    "rows": (False, "spin logs: accepted / void / rejected rows over all inputs"),
    "rejected_count": (True, "rows that could not be read (kept in rejects.csv)"),
    "rejected_sample": (False, "the first rejected rows (file, line, column, reason, text)"),
    "rejects_file": (False, "path of rejects.csv when it was written"),
    "equipment": (True, "the equipment definition certified (id, name, kind, source, ...)"),
    "subject": (True, "what was certified, in one line"),
    "unit_under_test": (False, "the unit a certificate names: description (--subject, e.g. a wheel's serial), table ids, demonstration data or not"),
    "equipment_line": (True, "the equipment in one sentence"),
    "certified": (True, "rules cited (document title and rule number) and the lab-declared parameters"),
    "unit": (True, "what n counts: spins, shoes or streams"),
    "section_word": (True, 'heading word of a table section ("Table", "Sample" (of shoes), "Battery")'),
    "level": (True, "position, symbol, cards or bits"),
    "period": (False, "first and last timestamp of the data, when the data have timestamps"),
    "policy": (True, "alpha, correction, verdict rules, the requirement and a two-sentence summary"),
    "seed": (True, "root entropy and how it was chosen; Monte Carlo replicates"),
    "notes": (True, "notes on the whole run"),
    "tables": (True, "one section per table (or stream set, or shoe set); see TABLE_FIELDS"),
    "verdict": (True, "PASS, SUSPECT, INCONCLUSIVE or FAIL (the worst table's)"),
    "audit": (False, "audits: the window, earlier audits, homogeneity tests and bias estimates"),
    "shoe_problems": (False, "shoe logs: every finding on a shoe that is not a legal multiset of its decks (a shoe can have several)"),
    "rerun": (False, "what `rngcert verify --rerun` needs to recompute the report from its inputs"),
    "integrity": (False, "SHA-256 of the canonical content, report id, hashes of the written files, signature"),
    "steady_state": (False, "shuffle procedures: burn-in shoes before the tested shoe, and the steady-state verdict"),
    "first_shoe": (False, "shuffle procedures: the verdict on the first shoe from new decks, and remedies tried"),
    "sensitivity": (False, "shuffle procedures: verdict and tracker edge over a grid of the assumed parameters"),
    "parameters": (False, "shuffle procedures: every parameter, measured, given by the rules, or assumed"),
    "assumed_parameters": (False, "shuffle procedures: names of the assumed parameters"),
    "house_edge": (False, "shuffles: the game's house edge under the declared rules"),
    "power_effect": (False, "shuffles: the smallest adjacency retention and tracker edge detected with 90% power"),
    "fit": (False, "shoe logs: the wash and riffle parameters fitted to the recorded shoes, with intervals"),
    "before_mode": (False, "shoe logs: how the order before each shuffle was obtained (pickup, previous, new-deck, file)"),
    "dealers": (False, "shoe logs: the dealers seen"),
    "standard": (False, "the certification standard (id, clauses, rule, SUSPECT level, minimum effect) and each clause's result per table "
                        "and over all tables (met / not met / not applicable / inconclusive), with the verdict under it"),
    "power_gate": (False, "shuffles: whether the shoes detect the declared minimum tracker edge with the declared power (else INCONCLUSIVE), "
                          "the detectable edge per tracker, the edge not excluded and the shoes needed"),
    "pickup_side": (False, "shoe logs: the pickup side fitted per dealer and shift (measured, with evidence, or not identifiable) and "
                           "the verdict under each plausible side"),
    "log_sensitivity": (False, "shoe logs: the verdict under each plausible pickup side and at the ends of each fitted wash interval"),
    "reconstruction": (False, "shoe logs: how the order before each shuffle was rebuilt, and the cards filled at random"),
    "measured_procedure": (False, "shoe logs: the procedure's parameters as measured from the log"),
}

#: Fields of one table section (``tables[i]``).
TABLE_FIELDS: dict[str, str] = {
    "table": "table, wheel, stream set or shoe set id",
    "n": "outcomes tested (spins, streams, shoes)",
    "void": "void spins excluded",
    "notes": "notes on this table",
    "labels": "outcome labels in wheel order",
    "counts": "outcome counts in wheel order",
    "dealers": "dealer ids seen",
    "min_holm": "smallest Holm-adjusted p-value",
    "battery": "verdict, reasons, alpha, tests, power (with statement), seeds, ...",
    "figures": "id, title and caption of each figure drawn in report.html",
    "two_level": "SP 800-22: the two-level analysis per test name",
    "plot_data": "shuffles: numbers behind the figures",
    "key_findings": "plain sentences: what was observed, causes to check, next step",
    "next_steps": "plain sentences",
    "integrity": "data-integrity checks run before the battery: findings and summary",
    "roulette_rage": "single-zero wheels: Roulette Rage rounds counted on the log (003 rules 3.15-3.18): run lengths after the "
                     "establishing spin against the exact law and the return of each pay table (reported, not in the verdict)",
    "procedure": "wheels: rule checks over every spin (ball spun against the rotor): rule, spins checked, breaches, first breaching spins; no p-value",
    "parameters": "shuffles: procedure parameters, measured or assumed",
    "trackers": "shuffles: realistic trackers' edge",
    "sensitivity": "shuffles: sensitivity of the verdict to assumed parameters",
    "first_shoe": "shuffles: the first shoe from new decks",
    "findings": "shuffles: plain sentences on statistical rejections without a practical edge",
    "kind": "shuffles: steady_state, first_shoe, dealer or overall",
    "burn_in": "shuffles: shoes dealt before the tested shoe",
    "power_gate": "shuffles: the sample's power to detect the declared minimum tracker edge (a PASS needs it)",
    "length_needed": "bits: the stream length, in bits, at which every required SP 800-22 test can run (present only when the "
                     "streams are shorter: the INCONCLUSIVE next step names it)",
}

#: Fields of one test (``tables[i].battery.tests[j]``).
TEST_FIELDS: dict[str, str] = {
    "name": "stable test id",
    "requirement": "independence, uniformity or unpredictability",
    "applicable": "false: not applicable, with the reason and no p-value",
    "statistic": "test statistic",
    "df": "degrees of freedom, where the law has them",
    "pvalue": "raw p-value in (0, 1]; null with pvalue_bound when below the representable floor",
    "pvalue_bound": '"< 1e-300" when pvalue is null because it underflowed',
    "pvalue_holm": "weighted-Holm adjusted p-value",
    "holm_weight": "the test's weight in the weighted Holm procedure (its share of alpha)",
    "rejected_familywise": "rejected by weighted Holm at alpha (FAIL)",
    "rejected_at_suspect_level": "rejected by weighted Holm at the looser SUSPECT level only",
    "grade": "plain-words grade of the raw p-value (legend in the report)",
    "method": "asymptotic, exact or monte-carlo, R=...; a scan that stopped early (README: the scans stop early): sequential monte-carlo, l of R=... (Besag-Clifford: stopped at h exceedances); the HTML shows the part before the parenthesis",
    "n": "sample size of the statistic",
    "details": "supporting numbers; keys that name pockets or sections (pocket, pockets, pockets_rejected_holm, direction_pocket, "
               "phase_pocket, best_arc.pockets) hold labels as printed on the wheel; positions (position, positions, "
               "positions_rejected_holm, best_arc.start) are wheel positions, 0 = the reference pocket, in wheel order; *_position "
               "keys are fractional positions (angles in units of one pocket); arrays per outcome (observed, expected, residuals, "
               "pocket_binomial_holm_pvalues) are in the order of the table's labels",
    "reason": "why the test is not applicable",
    "plain": "one plain sentence on the finding",
}


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def software() -> dict[str, str]:
    """Versions of everything a result depends on (streams are reproducible only on the same
    numpy/randomgen)."""
    import numpy

    from rngcert import __version__

    return {"rngcert": __version__, "python": sys.version.split()[0], "scipy": _package_version("scipy"), "numpy": numpy.__version__,
            "randomgen": _package_version("randomgen")}


def _package_version(package: str) -> str:
    """``package.__version__`` without importing the package when it is not imported yet: scipy's own
    ``__init__`` costs about 0.04 CPU-s (a wheel certification loads only scipy's compiled ufuncs,
    :mod:`rngcert.stats.ufuncs`) and randomgen 0.12 s, a tenth of a small certification, when no stream
    of it was made in this process. Read from the installed package's metadata, else imported."""
    mod = sys.modules.get(package)
    if mod is not None and getattr(mod, "__version__", None):
        return str(mod.__version__)
    found = _dist_info_version(package)
    if found is not None:
        return found
    try:
        from importlib.metadata import version

        return version(package)
    except Exception:  # no metadata (a vendored copy): import it
        import importlib

        return str(importlib.import_module(package).__version__)


def _dist_info_version(package: str) -> str | None:
    """The ``Version:`` field of the one ``<package>-*.dist-info/METADATA`` beside the installed package (what
    ``importlib.metadata.version`` reads), without importing ``importlib.metadata`` and its ``email`` parser
    (0.02-0.05 s of a small certification); None when not exactly one is found."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            return None
        site = Path(list(spec.submodule_search_locations)[0]).parent
        metas = [m for m in site.glob(f"{package}-*.dist-info/METADATA") if m.is_file()]
        if len(metas) != 1:
            return None
        with open(metas[0], encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
                if not line.strip():  # the end of the headers
                    return None
    except (OSError, ValueError, ImportError):
        return None
    return None


def policy(alpha: float, correction: str, requirement: str) -> dict[str, Any]:
    """The verdict policy block: alpha, the correction, the four verdict rules (DESIGN §4), the
    requirement the battery answers, and the policy in two sentences for page one."""
    from rngcert.battery.core import POLICY_TEXT

    return {
        "alpha": alpha,
        "correction": correction,
        "verdicts": dict(POLICY_TEXT),
        "requirement": requirement,
        "summary": (
            f"INCONCLUSIVE first, when the data cannot carry a verdict (too few outcomes, unreadable rows, labels of "
            f"another wheel, a data-integrity artefact, too little power); otherwise FAIL when some test rejects "
            f"randomness after the family-wise correction ({correction.split(' (')[0]}) at the certification level "
            f"alpha = {alpha:g}. SUSPECT when a test rejects only at the battery's looser rule (re-test with more "
            f"data), PASS otherwise: no evidence of non-randomness at this sample size."
        ),
    }


def normalise_inputs(inputs: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Inputs with a SHA-256 each: an input file given without one (a procedure TOML) is hashed
    here; a named generator has no file and keeps ``sha256 = ""``."""
    out = []
    for f in inputs:
        d = dict(f)
        p = d.get("path") or ""
        if not d.get("sha256") and p and not str(p).startswith("generator:") and Path(p).is_file():
            d["sha256"] = sha256_file(p)
        d.setdefault("sha256", "")
        d.setdefault("format", "")
        d.setdefault("summary", "")
        out.append(d)
    return out


# long: 44 lines of docstring (every header field) and 21 of signature (one keyword a field); the code is 35 lines
def header(
    *,
    kind: str = "certification",
    subject: str,
    command: str | None,
    inputs: Sequence[Mapping[str, Any]],
    equipment: Mapping[str, Any],
    equipment_line: str,
    unit: str,
    section_word: str,
    level: str,
    policy: Mapping[str, Any],
    seed: Mapping[str, Any],
    notes: Sequence[str] = (),
    rejected_count: int = 0,
    rules: Sequence[str] = (),
    declared: Mapping[str, Any] | None = None,
    period: Mapping[str, Any] | None = None,
    title: str | None = None,
    **extra: Any,
) -> dict:
    """The header of a report, in the documented field order (:data:`FIELDS`).

    Parameters
    ----------
    kind : {"certification", "audit"}
        Sets the default ``title``.
    subject : str
        What was certified, in one line.
    command : str or None
        The command line as typed.
    inputs : sequence of mapping
        One per input: ``path``, ``sha256``, ``format``, ``summary`` (and counts); files without a
        SHA-256 are hashed here (:func:`normalise_inputs`).
    equipment, equipment_line, unit, section_word, level
        See :data:`FIELDS`.
    policy : mapping
        From :func:`policy`.
    seed : mapping
        ``entropy`` (str), ``how``, ``n_resamples``.
    notes : sequence of str
        Notes on the whole run.
    rejected_count : int
        Rows that could not be read.
    rules : sequence of str
        Rules cited, each as "document title, rule number" (never a file name).
    declared : mapping, optional
        Lab-declared parameters (label -> value), e.g. ``{"certification level alpha": 0.01}``.
    period : mapping, optional
        ``{"first": ..., "last": ...}`` timestamps of the data.
    title : str, optional
        Default "Certification report" or "Audit report".
    **extra
        Pipeline-specific header fields that are in :data:`FIELDS` (``rows``, ``rejected_sample``).

    Returns
    -------
    dict
        Without ``tables`` and ``verdict``, which the pipeline adds.

    Raises
    ------
    ValueError
        An unknown ``kind`` or an extra field that :data:`FIELDS` does not document.
    """
    if kind not in ("certification", "audit"):
        raise ValueError(f"kind must be 'certification' or 'audit', got {kind!r}")
    unknown = sorted(set(extra) - set(FIELDS))
    if unknown:
        raise ValueError(f"report fields {unknown} are not in rngcert.report.schema.FIELDS")
    h: dict[str, Any] = {
        "report_format": REPORT_FORMAT,
        "kind": kind,
        "title": title or ("Audit report" if kind == "audit" else "Certification report"),
        "software": software(),
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command or "",
        "inputs": normalise_inputs(inputs),
    }
    if "rows" in extra:
        h["rows"] = extra.pop("rows")
    h["rejected_count"] = int(rejected_count)
    if "rejected_sample" in extra:
        h["rejected_sample"] = extra.pop("rejected_sample")
    h.update(
        {
            "equipment": dict(equipment),
            "subject": subject,
            "equipment_line": equipment_line,
            "certified": {"rules": list(rules), "declared": dict(declared or {})},
            "unit": unit,
            "section_word": section_word,
            "level": level,
        }
    )
    if period:
        h["period"] = dict(period)
    h.update({"policy": dict(policy), "seed": dict(seed), "notes": list(notes)})
    h.update(extra)
    return h


def check_report(report: Mapping[str, Any]) -> list[str]:
    """Problems of a report against the schema (missing required or undocumented fields)."""
    problems = [f"missing field {k!r}" for k, (req, _) in FIELDS.items() if req and k not in report]
    problems += [f"undocumented field {k!r}" for k in report if k not in FIELDS]
    for i, t in enumerate(report.get("tables", [])):
        problems += [f"tables[{i}]: undocumented field {k!r}" for k in t if k not in TABLE_FIELDS]
        for x in (t.get("battery") or {}).get("tests", []):
            problems += [f"tables[{i}] test {x.get('name')!r}: undocumented field {k!r}" for k in x if k not in TEST_FIELDS]
    return problems
