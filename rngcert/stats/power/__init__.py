r"""Power and sample size of the wheel tests against named bias alternatives.

Alternatives (effect sizes exactly as planted by :mod:`rngcert.stats.alternatives` (the models the simulator plants)):

``single-pocket``
    one pocket's weight is multiplied by ``1 + effect`` (``effect = 0.1`` is "+10%"), then all
    weights are renormalised: that pocket has probability :math:`(1+\delta)/(k+\delta)`;
``sector:K``
    ``K`` contiguous pockets get weight ``1 + effect``;
``harmonic``
    weight :math:`1 + a\cos(2\pi j/k - \phi)` with amplitude ``a = effect`` (``0 <= a < 1``);
``dealer-signature`` or ``dealer-signature:K``
    the landing offset from the reference pocket falls in a ``K``-pocket sector (default K = 1)
    ``1 + effect`` times as often as fair, in every dealer/direction group.

How power is computed (stated in every result's ``method``):

* **non-central chi-square** for the tests whose statistic is chi-square: ``pocket_chisquare``
  and category tests (df k-1; Pearson's :math:`X^2 \approx s\,\chi'^2_{k-1}(\lambda')` with s and
  :math:`\lambda'` fitted to the exact mean and variance of :math:`X^2` under the alternative,
  Broffitt & Randles 1977, Patnaik 1949 — the local law :math:`\lambda = n w^2` of Cochran 1952
  and Cohen 1988 §7.2 overstates the power against a concentrated bias, see
  :func:`chisquare_power`) and ``first_harmonic`` (df 2, local law
  :math:`\lambda = n(\mu_1-\mu_0)^T\Sigma_0^{-1}(\mu_1-\mu_0)`, which is :math:`n a^2/2` for the
  harmonic alternative on a uniform wheel);
* **seeded simulation** for the max and scan statistics ``max_count``, ``sector_scan`` and
  ``dealer_signature``: the critical value is taken from simulated null replicates exactly as the
  battery's Monte Carlo decision ``(b+1)/(R+1) <= alpha`` would, and power is the share of
  simulated alternative samples rejected. Searches over n or the effect use common random
  numbers (the same seeds at every candidate), so the estimated power curve is smooth.
  Any test can be forced to simulation with ``method="simulation"`` (used to validate the
  non-central approximation).

Power is per test at level ``alpha`` (not the power of the whole battery after Holm).

Modules: :mod:`.base` (alternatives, argument checks, :class:`PowerResult`), :mod:`.noncentral`
(the non-central chi-square laws), :mod:`.simulation` (the max and scan statistics by
simulation), :mod:`.planning` (power, sample size, minimum detectable effect of one test),
:mod:`.sections` (a category test against one biased section), :mod:`.statement` (the report's
power statement).
"""

from __future__ import annotations

# private names (imported "as" themselves) that the tests of the laws use
from rngcert.stats.power.base import ALTERNATIVES, TESTS, PowerResult, alternative_probs, parse_alternative
from rngcert.stats.power.noncentral import _noncentrality_per_spin as _noncentrality_per_spin
from rngcert.stats.power.noncentral import _pearson_moments as _pearson_moments
from rngcert.stats.power.noncentral import chisquare_power
from rngcert.stats.power.planning import min_detectable_effect, power_at, spins_needed
from rngcert.stats.power.sections import min_detectable_section_bias_categories, spins_needed_section_bias_categories
from rngcert.stats.power.simulation import _simulate as _simulate
from rngcert.stats.power.simulation import _statistics as _statistics
from rngcert.stats.power.statement import chisquare_min_detectable_pocket_bias, chisquare_spins_needed, power_statement

__all__ = [
    "PowerResult",
    "ALTERNATIVES",
    "TESTS",
    "parse_alternative",
    "alternative_probs",
    "chisquare_power",
    "power_at",
    "spins_needed",
    "min_detectable_effect",
    "min_detectable_section_bias_categories",
    "spins_needed_section_bias_categories",
    "chisquare_min_detectable_pocket_bias",
    "chisquare_spins_needed",
    "power_statement",
]
