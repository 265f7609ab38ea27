r"""Power of the *verdict*: the probability that a battery returns FAIL under a stated alternative.

A battery FAILs when (weighted) Holm rejects at level alpha. Holm's procedure rejects something
if and only if its first step rejects, i.e. some applicable test i has :math:`p_i \le \alpha w_i/W`
(W the total weight of the applicable tests). So

.. math:: P(\text{FAIL}) = P\big(\exists i:\ p_i \le \alpha w_i / W\big),

a union of per-test rejections at fixed levels. This module estimates it by simulating count
vectors under the alternative and computing, on the same vectors, every count-based test of the
battery that carries power against it (pocket chi-square, max count, sector scan, first harmonic,
the outside-bet category chi-squares when their partitions are given; for a dealer signature, the
dealer-signature scan), each against its own level :math:`a_i = \alpha w_i/W`:

* the chi-square statistics against their asymptotic critical values (as the battery computes
  them);
* the max count against its **exact** null law, which is what the battery uses (Levin's
  representation [1]_, :func:`max_count_sf`): it rejects exactly when the largest count reaches
  the critical count :math:`c^*`. (Beyond the battery's FFT limit, hundreds of millions of spins,
  the battery takes a Monte Carlo p-value, modelled as below with the exact :math:`q`.)
* the scan statistics (sector scan, dealer signature) with the battery's Monte Carlo rule modelled
  exactly: a test with R resamples rejects when :math:`(b+1)/(R+1) \le a`, and given the observed
  statistic s, :math:`b \sim \mathrm{Bin}(R, q(s))` with :math:`q(s) = P_0(M \ge s)` the null
  exceedance probability, so :math:`P(\text{reject} \mid s) = P(\mathrm{Bin}(R, q(s)) \le
  \lfloor a(R+1)\rfloor - 1)`. Only the upper tail of :math:`q` matters (where that probability
  is above :data:`NEGLIGIBLE`); it is estimated by importance sampling over the arcs, the
  estimator of Naiman & Priebe [2]_ (:func:`scan_null_tail`), whose relative error does not
  grow as the level shrinks. Where the estimated tail ends (:math:`s < s_0`, the rejection
  probability is below :data:`NEGLIGIBLE` there) the rejection probability is taken as 0.

Tests that need the order (runs, gap, serial correlation) are valid conditional tests under the
i.i.d. alternatives used here and reject at about their own level, so leaving them out makes the
stated power a lower bound by at most the sum of their levels (about 0.5 percentage point at
alpha = 0.01). The validation (``tests/test_verdict.py``) runs the real battery on simulated
wheels at the stated 90% point.

**The search over the effect.** Under a block alternative (one pocket, a sector of K pockets, a
dealer signature on K offsets) the counts given the block's total m are multinomial with uniform
cells inside and outside the block, whatever the effect. So one sample drawn at a proposal
effect :math:`e_0` serves every effect e with the likelihood-ratio weights
:math:`w(m) = \mathrm{Bin}(m; n, \pi_e)/\mathrm{Bin}(m; n, \pi_{e_0})`, :math:`\pi_e` the
block's probability (importance sampling on the block total, Owen [3]_ ch. 9): the estimated
power curve is a smooth function of e, solved exactly for the 90% point. Its standard error
combines, in quadrature, that of the draws (the power's standard error over the curve's slope)
and that of the estimated null tails (the root again with q one relative standard error lower
and higher). The proposal is re-centred on the root until the root lies within half a standard
deviation of the block total from it (the effective sample size is then at least 78%). Groups
(dealer × direction) are exchangeable under the model (each of ``n // groups`` spins, which
drops at most groups - 1 spins: a lower bound), and the dealer-signature statistic is the
maximum over groups, so :math:`P(\text{FAIL}) = \int \phi\, dF^g` with F the law of one group's
statistic: one group is simulated, and the null tail of g groups is
:math:`1 - (1 - q_1)^g`. (:math:`\hat F^g` is a V-statistic: its bias, of order :math:`g^2/N`,
lowers the estimated power, by less than 0.001 for 20 groups and N = 4000 draws.)

**Modules.** :mod:`.common` (constants, the block alternatives), :mod:`.maxcount` (the max
count's exact law and rule), :mod:`.scan` (the scans' importance-sampled null tails and rule),
:mod:`.battery` (the tests at their levels, the reweighted power curve), :mod:`.search` (the
power at an effect, the searches over the effect and over n).

References
----------
.. [1] Levin, B. (1981), "A representation for multinomial cumulative distribution functions",
       Ann. Statist. 9, 1123-1126.
.. [2] Naiman, D. Q. & Priebe, C. E. (2001), "Computing scan statistic p values using importance
       sampling, with applications to genetics and medical image analysis", J. Comput. Graph.
       Statist. 10, 296-328.
.. [3] Owen, A. B. (2013), *Monte Carlo theory, methods and examples*, ch. 9 (importance
       sampling, self-normalised estimates and their effective sample size).

Examples
--------
>>> from rngcert.stats.verdict_power import verdict_power
>>> levels = {"pocket_chisquare": 0.001, "max_count": 0.001, "sector_scan": 0.001, "first_harmonic": 0.001}
>>> p = verdict_power(20000, 37, "single-pocket", 0.5, levels, n_alt=200)
>>> 0.9 < p <= 1.0
True
"""

from __future__ import annotations

# private names (imported "as" themselves) that the tests of the model use
from rngcert.stats.verdict_power.battery import _sample as _sample
from rngcert.stats.verdict_power.battery import _setup as _setup
from rngcert.stats.verdict_power.common import COUNT_TESTS, NEGLIGIBLE
from rngcert.stats.verdict_power.common import _block_pi as _block_pi
from rngcert.stats.verdict_power.common import _parse as _parse
from rngcert.stats.verdict_power.common import _probs as _probs
from rngcert.stats.verdict_power.maxcount import _LEVIN_LOW_SD as _LEVIN_LOW_SD
from rngcert.stats.verdict_power.maxcount import _LEVIN_MAX_LEN as _LEVIN_MAX_LEN
from rngcert.stats.verdict_power.maxcount import _MaxCountRule as _MaxCountRule
from rngcert.stats.verdict_power.maxcount import max_count_critical, max_count_sf
from rngcert.stats.verdict_power.scan import ScanTail, scan_null_tail
from rngcert.stats.verdict_power.scan import _arcs as _arcs
from rngcert.stats.verdict_power.scan import _scan as _scan
from rngcert.stats.verdict_power.scan import _scan_lengths as _scan_lengths
from rngcert.stats.verdict_power.scan import _tail_values as _tail_values
from rngcert.stats.verdict_power.search import (
    VerdictEffect,
    min_detectable_verdict_effect,
    spins_needed_for_verdict,
    verdict_effect,
    verdict_power,
)

__all__ = [
    "COUNT_TESTS",
    "NEGLIGIBLE",
    "VerdictEffect",
    "ScanTail",
    "max_count_sf",
    "max_count_critical",
    "scan_null_tail",
    "verdict_power",
    "verdict_effect",
    "min_detectable_verdict_effect",
    "spins_needed_for_verdict",
]
