"""Certification reports: JSON for machines, one self-contained HTML file with plots for people."""
