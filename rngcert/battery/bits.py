"""The SP 800-22 battery as data: one :class:`~rngcert.battery.core.Spec` per section of NIST
SP 800-22 rev1a (2.1 frequency ... 2.15 random excursions variant), run on one bit stream.

A spec's function is the section's runner of :data:`rngcert.stats.nist.SECTIONS` on the stream's
:class:`~rngcert.stats.nist.BitView`, which computes the intermediates several sections share (the
random walk, the circular window codes) once. The first level is deterministic (no test draws
random numbers), so each spec's stream is unused; the judgement is the second level across
streams (:mod:`rngcert.stats.nist.twolevel`, :func:`rngcert.pipeline.certify_bits.bits_verdict`).

Adding a section is one entry in ``SECTIONS`` and one ``Spec`` here; ``SP800_22.without(...)``
runs a subset.

Examples
--------
>>> from rngcert.battery.bits import SP800_22, BitsData
>>> from rngcert.simulate.sources import generate_bits
>>> res, errors, _ = SP800_22.evaluate(BitsData(generate_bits("pcg64", 1_000_000, seed=1)), entropy=0)
>>> len(res), res[0].name, errors
(188, 'nist_frequency', [])
"""

from __future__ import annotations

from rngcert.battery.core import Battery, Spec
from rngcert.stats import nist

__all__ = ["BitsData", "SP800_22"]


class BitsData:
    """One bit stream for the SP 800-22 battery.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    params : dict, optional
        Per-section overrides of :data:`rngcert.stats.nist.DEFAULT_PARAMS`.
    constants : {"reference", "corrected"}
        Class probabilities of sts-2.1.2 (default) or the corrected ones.
    """

    def __init__(self, bits, *, params=None, constants: str = "reference"):
        self.view = nist.BitView(bits, params=params, constants=constants)

    @property
    def n(self) -> int:
        return self.view.n

    def lacks(self, need: str) -> str | None:
        # the sections' own minimum lengths and prerequisites are checked by run_section, which
        # gives one NotApplicable per result name (148 templates, 8 excursion states, ...)
        return f"the bit stream does not provide {need!r}"


def _section(data: BitsData, ctx, *, key: str):
    return nist.run_section(data.view, key)


#: NIST SP 800-22 rev1a, sections 2.1-2.15, in the order of the publication (188 results with the
#: default parameters). Every section is required: a stream too short for one of them is reported
#: per name as not applicable, with the minimum length.
SP800_22 = Battery(
    "sp800-22",
    tuple(Spec(key, _section, nist.REQUIREMENT[key], params={"key": key}) for key in nist.DEFAULT_PARAMS),
)


def run_stream(bits, *, params=None, constants: str = "reference") -> list:
    """The 188 first-level results of one stream (the pipeline's work item), through :data:`SP800_22`.

    Raises
    ------
    RuntimeError
        When a section raised (its message): a first-level result is never silently replaced.
    """
    res, errors, _ = SP800_22.evaluate(BitsData(bits, params=params, constants=constants), entropy=0)
    if errors:
        raise RuntimeError("; ".join(errors))
    return res
