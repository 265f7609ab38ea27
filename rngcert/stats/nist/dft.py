"""SP 800-22 section 2.6: discrete Fourier transform (spectral) test."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats.nist._common import _bits_iv, erfc, result
from rngcert.stats.result import Requirement

__all__ = ["dft"]

# ln(1/0.05) as written in sts-2.1.2 (discreteFourierTransform.c); ln(20) = 2.99573227355...
_LOG20_STS = 2.995732274


def dft(bits):
    """Discrete Fourier transform (spectral) test, SP 800-22 rev1a section 2.6.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}

    Returns
    -------
    TestResult
        ``name="nist_dft"``, statistic ``d`` (standardised count of peaks below the threshold).

    Notes
    -----
    H0: no periodic features. With :math:`X = 2\\varepsilon - 1`, :math:`F = \\mathrm{DFT}(X)`,
    threshold :math:`T = \\sqrt{\\ln(1/0.05)\\,n}`, :math:`N_0 = 0.95 n/2`, :math:`N_1` the number of
    :math:`|F_k| < T` for :math:`k = 0, \\dots, \\lfloor n/2 \\rfloor - 1` (the modulus list of
    sts-2.1.2, which starts with the zero-frequency term),
    :math:`d = (N_1 - N_0)/\\sqrt{n \\cdot 0.95 \\cdot 0.05 / 4}` and
    :math:`p = \\operatorname{erfc}(|d|/\\sqrt 2)` (section 2.6.4; the corrected variance
    n(0.95)(0.05)/4 of rev1a). Recommended n >= 1000 (section 2.6.7). Requirement: INDEPENDENCE.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) NIST SP 800-22 rev1a, sections 2.6 and 3.6.
    .. [2] Kim S.-J., Umeno K., Hasegawa A. (2004) Corrections of the NIST statistical test suite
       for randomness, IACR ePrint 2004/018.
    """
    x = _bits_iv(bits)
    n = x.size
    X = 2.0 * x - 1.0
    F = np.fft.rfft(X)[: n // 2]  # pocketfft as scipy.fft.rfft, bit for bit (tests/test_nist_fixed_cost.py), without scipy's array-API layer
    power = F.real ** 2 + F.imag ** 2
    T2 = _LOG20_STS * n
    N1 = int(np.count_nonzero(power < T2))
    N0 = 0.95 * n / 2.0
    d = (N1 - N0) / math.sqrt(n / 4.0 * 0.95 * 0.05)
    p = erfc(abs(d) / math.sqrt(2.0))
    return result("nist_dft", Requirement.INDEPENDENCE, d, None, p, n, "asymptotic",
                  {"N1": N1, "N0": N0, "threshold": math.sqrt(T2)})
