"""The normal, chi-square, F and t laws that rngcert's pipelines and simulations use for p-values, critical values
and power: ``scipy.stats``' numbers, the same bits, without importing ``scipy.stats`` (about 0.5 s, the largest
serial part of a ``shuffle certify``; issue 26).

The functions are those of :mod:`rngcert.stats._dist` (the statistics' own hot path), exported here for the
packages outside :mod:`rngcert.stats`; ``tests/test_dist.py`` checks each against ``scipy.stats`` on grids with
the edges of their domains.

Examples
--------
>>> from rngcert.stats import distributions as dist
>>> round(float(dist.norm_isf(0.025)), 6)
1.959964
>>> round(float(dist.chi2_sf(3.841458820694124, 1)), 6)
0.05
"""

from __future__ import annotations

from rngcert.stats._dist import binom_cdf, binom_sf, chi2_cdf, chi2_isf, chi2_ppf, chi2_sf, f_sf, norm_cdf, norm_isf, norm_sf, t_sf

__all__ = ["binom_cdf", "binom_sf", "chi2_cdf", "chi2_isf", "chi2_ppf", "chi2_sf", "f_sf", "norm_cdf", "norm_isf", "norm_sf", "t_sf"]
