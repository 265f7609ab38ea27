"""The group statement of ``rngcert audit --all`` (issue 23): the false FAILs a group of tables can
expect per run and per year, and which tables the group's statement names after controlling them
across tables (Holm or Benjamini-Hochberg) and over each table's audits (alpha-spending,
:mod:`rngcert.stats.group`). Each table keeps its own verdict at alpha: the standards rngcert
packages require per-table tests, and the statement says so."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from rngcert.stats.group import expected_false_fails, group_control, spending_level, spent_pvalue

RULE = ("each table's smallest weighted-Holm p-value is judged on the alpha-spending scale of its audit history "
        "(the i-th audit of a table at alpha·6/(π²·i²), which sums to alpha over all its audits), then {control} across the tables of this run")
CONTROL_WORDS = {"holm": "Holm (family-wise: P(any false alarm of the group, over every table and audit) <= alpha)",
                 "bh": "Benjamini-Hochberg (false discovery rate <= alpha)", "none": "no correction across tables"}


def group_statement(reports: Sequence[Mapping[str, Any]], *, alpha: float, control: str = "holm", audits_per_year: float = 12.0,
                    time_control: bool = True, standard_id: str = "rngcert-default", per_table: float | None = None,
                    recorded: bool = True) -> dict:
    """The group statement over the audit reports of one run.

    Parameters
    ----------
    reports : sequence of report dicts
        One audit report per table (``tables[0].min_holm``, ``audit.earlier_audits``).
    alpha : float
        The run's level.
    control : {"holm", "bh", "none"}
        Control across the tables.
    audits_per_year : float
        For the yearly figure.
    time_control : bool
        Spend alpha over each table's audits (default True).
    standard_id : str
        The standard whose per-table verdicts the tables keep.
    per_table : float, optional
        Bound on one fair table's false-FAIL probability under that standard
        (:meth:`rngcert.battery.standard.Standard.false_fail_bound`); None: alpha (a family-wise standard).
        A standard of per-test clauses (four named tests each at 99%) gives far more than alpha.
    recorded : bool
        Whether this run's audits are recorded in the store (False: ``--no-record``). A run not recorded
        does not enter the tables' audit histories, so the next run judges each table at the same audit
        number again and the bound over every audit does not cover such runs: the statement says so.

    Returns
    -------
    dict
        ``expected`` (false FAILs per run and year of per-table tests), ``rule``, ``tables`` (per
        table: its verdict, p, audit number i, its spending level, the spent p, the adjusted p and
        whether the group's statement names it) and ``statement`` (sentences).
    """
    rows = []
    for r in reports:
        t = r["tables"][0]
        p = t.get("min_holm")
        i = len((r.get("audit") or {}).get("earlier_audits", [])) + 1
        rows.append({"table": t["table"], "verdict": t["battery"]["verdict"], "p": 1.0 if p is None else float(p), "audit_number": i,
                     "level": spending_level(alpha, i) if time_control else alpha})
    p = np.array([x["p"] for x in rows])
    i = np.array([x["audit_number"] for x in rows])
    ps = spent_pvalue(p, i) if time_control and p.size else p
    rej, adj = group_control(np.atleast_1d(ps), alpha, control)
    for x, s, a, j in zip(rows, np.atleast_1d(ps), adj, rej):
        x.update(p_spent=float(s), p_group=float(a), named=bool(j))
    rate = alpha if per_table is None else float(per_table)
    exp = expected_false_fails(len(rows), rate, audits_per_year)
    named = [x["table"] for x in rows if x["named"]]
    fails = [x["table"] for x in rows if x["verdict"] == "FAIL"]
    rule = RULE.format(control=CONTROL_WORDS[control]) if time_control else f"{CONTROL_WORDS[control]} across the tables of this run"
    sentences = [
        f"{len(rows)} table(s) audited at alpha = {alpha:g}: with every table fair, per-table tests give up to {exp['per_run']:.2g} false FAIL(s) "
        + ("a run (k × alpha)" if rate == alpha else f"a run (k × {rate:.3g}, the bound on a fair table's false FAILs under standard {standard_id})")
        + f" and {exp['per_year']:.3g} a year at {audits_per_year:g} audits a year.",
        f"Group statement ({rule}): " + (f"{len(named)} table(s) named: {', '.join(map(str, named))}." if named else "no table is named."),
        f"Each table keeps its own verdict at alpha ({len(fails)} FAIL): standard {standard_id} requires per-table tests.",
    ]
    if time_control and not recorded:
        sentences.append("This run is not recorded (--no-record): its audits do not enter the tables' audit histories, so the next run "
                         "judges each table at the same audit number again, and the bound over every audit holds for recorded audits only.")
    return {"alpha": alpha, "control": control, "time_control": time_control, "recorded": recorded, "rule": rule, "expected": exp, "tables": rows,
            "named": named, "statement": " ".join(sentences)}
