"""Orchestration: read → integrity checks → tally → battery → verdict → report data.

One module per job (``certify_wheel``, ``certify_shuffle``, ``certify_bits``, ``audit``, ``watch``);
each takes its options as one object (:mod:`rngcert.pipeline.options`, built once in the CLI); they
share the report header of :mod:`rngcert.report.schema`. Nothing here prints or parses options: that
is :mod:`rngcert.cli`.
"""

#: the public modules (each imported on first use: ``from rngcert.pipeline import audit``)
__all__ = ["audit", "certify_bits", "certify_shuffle", "certify_wheel", "checks", "group_audit", "lawcache",
           "options", "parallel", "pickup_side", "rage", "shoe_power", "standards", "watch"]
