"""rngcert: statistical certification of the randomness of casino gaming equipment.

Outcomes must be statistically independent, uniformly distributed over their range and
unpredictable (money-wheel rules, rule 2.4). rngcert reads wheel results, shoe orders and raw
RNG output, runs batteries of tests filed under those three requirements, and writes
certification reports.
"""

__version__ = "0.1.0"
