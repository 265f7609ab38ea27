"""Orchestration: read → integrity checks → tally → battery → verdict → report data.

One module per job (``certify_wheel``, ``certify_shuffle``, ``certify_bits``, ``audit``, ``watch``);
they share the report header of :mod:`rngcert.report.schema`. Nothing here prints or parses
options: that is :mod:`rngcert.cli`.
"""
