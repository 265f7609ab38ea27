"""One options object for the Monte Carlo p-values (issue 27 item 2), as scipy passes
``scipy.stats.MonteCarloMethod(n_resamples, batch, rng)``.

The Monte Carlo tests of :mod:`rngcert.stats` (:func:`~rngcert.stats.pocket_chisquare`,
:func:`~rngcert.stats.g_test`, :func:`~rngcert.stats.category_frequency`,
:func:`~rngcert.stats.sector_scan`, :func:`~rngcert.stats.dealer_signature`,
:func:`~rngcert.stats.serial_pair`, :func:`~rngcert.stats.homogeneity_chisquare` and the fallback of
:func:`~rngcert.stats.max_count`) take ``method=MonteCarlo(...)`` beside their ``n_resamples=``
and ``rng=`` keywords, which stay for compatibility. Both spellings give the same result, bit for
bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rngcert.errors import InputError

__all__ = ["MonteCarlo"]


@dataclass(frozen=True)
class MonteCarlo:
    """Options of a Monte Carlo p-value: how many replicates, how many at once, from which stream.

    Parameters
    ----------
    n_resamples : int
        Replicates R drawn under the null hypothesis (default 9999); the p-value is
        ``(b + 1) / (R + 1)`` with b the replicates at least as extreme as the data, so its floor
        is ``1 / (R + 1)``.
    batch : int, optional
        Replicates drawn per vectorised step (a memory bound). None: rngcert's own, about
        2,000,000 cells a step. The replicates are drawn from the stream in the same order
        whatever the batch, so the p-value does not depend on it.
    rng : numpy.random.Generator
        The stream of the replicates; pass one from :func:`rngcert.seeding.stream` so that the
        p-value can be reproduced. Required when the Monte Carlo branch runs.
    stop_after : int, optional
        Sequential stopping (Besag & Clifford 1991) for the scans (:func:`~rngcert.stats.sector_scan`,
        :func:`~rngcert.stats.dealer_signature`): stop drawing at the replicate l where the h-th
        replicate at least as extreme as the data appears, with the p-value h / l. Every p-value
        at or below h / (R + 1) is then the full run's (of the same draws), bit for bit, and a
        larger one stays above h / (R + 1): a decision at any level below h / R is the full run's.
        rngcert's batteries set h = floor(level * R) + 1 for the largest level any clause of the
        standard decides at. None (default): all R replicates. With several groups each group
        draws from its own child stream (``Generator.spawn``), so the draws differ from those
        of ``stop_after=None``.

    Raises
    ------
    InputError
        ``n_resamples`` or ``batch`` not a positive integer, or ``rng`` not a Generator.

    See Also
    --------
    scipy.stats.MonteCarloMethod : the object this one follows.

    Examples
    --------
    The same Monte Carlo p-value, spelled with the options object or with the keywords:

    >>> import numpy as np
    >>> from rngcert.seeding import stream
    >>> from rngcert.stats import MonteCarlo, pocket_chisquare
    >>> counts = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    >>> a = pocket_chisquare(counts, method=MonteCarlo(n_resamples=999, rng=stream(1, "doc")))
    >>> b = pocket_chisquare(counts, method="monte-carlo", n_resamples=999, rng=stream(1, "doc"))
    >>> a.method, a.pvalue == b.pvalue
    ('monte-carlo, R=999', True)
    """

    n_resamples: int = 9999
    batch: int | None = None
    rng: np.random.Generator | None = None
    stop_after: int | None = None

    def __post_init__(self):
        for what, v in (("n_resamples", self.n_resamples), ("batch", self.batch), ("stop_after", self.stop_after)):
            if v is None and what in ("batch", "stop_after"):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"MonteCarlo: {what} must be an integer >= 1, got {v!r}")
        if self.rng is not None and not isinstance(self.rng, np.random.Generator):
            raise InputError(f"MonteCarlo: rng must be a numpy.random.Generator (from rngcert.seeding.stream), got {self.rng!r}")


def monte_carlo_args(method, n_resamples, rng, name: str, *, default_n: int, mc_method: str | None = "monte-carlo",
                     sequential: bool = False):
    """``(method, n_resamples, rng, batch)`` of a test called with ``method=`` a string or a
    :class:`MonteCarlo` (whose fields then replace the keywords).

    ``mc_method`` is the method string a :class:`MonteCarlo` stands for (None for a test
    without a ``method`` choice, whose method is then returned as None). Giving ``rng`` or a
    non-default ``n_resamples`` both as keywords and in the object is an input error (two values
    for one option); so is ``stop_after`` for a test that does not stop early (``sequential`` False).
    """
    if not isinstance(method, MonteCarlo):
        return method, n_resamples, rng, None
    if method.stop_after is not None and not sequential:
        raise InputError(f"{name}: MonteCarlo(stop_after=...) (sequential stopping) is implemented for the scans only "
                         f"(sector_scan, dealer_signature); give stop_after=None")
    if rng is not None and rng is not method.rng:
        raise InputError(f"{name}: rng given both as a keyword and in method=MonteCarlo(...): give it once")
    if n_resamples != default_n and n_resamples != method.n_resamples:
        raise InputError(f"{name}: n_resamples={n_resamples} as a keyword and {method.n_resamples} in method=MonteCarlo(...): give it once")
    return mc_method, method.n_resamples, method.rng, method.batch
