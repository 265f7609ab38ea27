"""Pure statistical functions on numpy arrays; each returns a TestResult or NotApplicable.

Nothing in this package reads files, prints or plots.
"""

from rngcert.stats.result import NotApplicable, Requirement, TestResult

__all__ = ["NotApplicable", "Requirement", "TestResult"]
