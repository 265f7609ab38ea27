"""Batteries as data: :class:`Spec` and :class:`Battery` values, the run, the multiple-testing
policy and the verdict (DESIGN §4)."""

from rngcert.battery.core import POLICY_TEXT, VERDICTS, BatteryOutcome, Spec, grade, run_battery, test_id, worst

__all__ = ["POLICY_TEXT", "VERDICTS", "BatteryOutcome", "Spec", "grade", "run_battery", "test_id", "worst"]
