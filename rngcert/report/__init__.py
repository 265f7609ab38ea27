"""Certification reports: JSON for machines, one self-contained HTML file with plots for people."""

#: the public modules (each imported on first use: ``from rngcert.report import cite``)
__all__ = ["bidi", "cite", "pdf", "plots", "schema", "svg", "text", "verify", "writer"]
