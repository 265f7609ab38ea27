"""NIST SP 800-22 rev1a statistical test suite for random bit generators.

One module per test family (sections 2.1-2.15 of the publication), :mod:`.twolevel` for the
analysis over many sequences (section 4.2) and :mod:`.nulllaw` for the law of each test's
p-value under H0 at a given n, against which that analysis judges discrete p-values (case c02). :func:`run_sp800_22` runs all 15 tests with the
default parameters of the publication and of its reference implementation sts-2.1.2.

Requirement mapping (DESIGN §4): the two frequency-type tests, ``nist_frequency`` and
``nist_block_frequency``, serve UNIFORMITY (they test P(1) = 1/2 overall and per block); every
other test (runs, longest run, rank, DFT, templates, universal, linear complexity, serial,
approximate entropy, cumulative sums, random excursions) examines the order of the bits and
serves INDEPENDENCE.

Constants. Where the publication's constants were later corrected, ``constants="reference"``
(default) uses the values of sts-2.1.2, so that the Appendix B p-values reproduce, and
``constants="corrected"`` the exact ones; each affected result names the choice in its
``method`` and ``details["constants"]``:

* longest run of ones (section 3.4): sts rounds the M = 10000 class probabilities to 4 decimals;
  corrected = exact probabilities by dynamic programming;
* overlapping template (section 3.8): sts-2.1.2 overwrites its table with the compound-Poisson
  approximation ``Pr(u, eta)`` of rev1; corrected = exact probabilities (Hamano & Kaneko 2007,
  those printed in rev1a section 3.8), computed here by dynamic programming;
* random excursions (section 3.14): both tables are derived from the closed form; reference =
  rounded to the 10/11 decimals sts-2.1.2 tabulates (with its one deviation, pi_5(3)),
  corrected = the closed form in double precision (see
  :func:`~rngcert.stats.nist.excursions.excursion_state_probabilities`).

Errata of the publication handled here (see the tests): the serial worked example's step-5
values (0.9057, 0.8805 are misprints; 0.808792, 0.670320 follow from its own formulas), the
overlapping template worked example's nu vector (inconsistent; the p-value 0.274932 is
reproduced), the DFT variance n(.95)(.05)/4 of rev1a.
"""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.nist._common import _bits_iv, _constants_iv, not_applicable, windows
from rngcert.stats.nist.complexity import berlekamp_massey_blocks, linear_complexity
from rngcert.stats.nist.dft import dft
from rngcert.stats.nist.excursions import excursion_state_probabilities, random_excursions, random_excursions_variant
from rngcert.stats.nist.frequency import block_frequency, cumulative_sums, frequency
from rngcert.stats.nist.rank import binary_matrix_rank, rank_probabilities
from rngcert.stats.nist.runs import longest_run, longest_run_class_probabilities, runs
from rngcert.stats.nist.serial import approximate_entropy, serial
from rngcert.stats.nist.templates import aperiodic_templates, non_overlapping_template, overlapping_class_probabilities, overlapping_template
from rngcert.stats.nist.universal import universal
from rngcert.stats.result import NotApplicable, Requirement

__all__ = [
    "run_sp800_22", "run_section", "BitView", "SECTIONS", "REQUIREMENT", "test_names", "DEFAULT_PARAMS", "MIN_LENGTH",
    "frequency", "block_frequency", "runs", "longest_run", "binary_matrix_rank", "dft",
    "non_overlapping_template", "overlapping_template", "universal", "linear_complexity",
    "serial", "approximate_entropy", "cumulative_sums", "random_excursions",
    "random_excursions_variant", "aperiodic_templates", "rank_probabilities",
    "longest_run_class_probabilities", "overlapping_class_probabilities",
    "excursion_state_probabilities", "berlekamp_massey_blocks",
]

#: Default parameters of SP 800-22 rev1a / sts-2.1.2, by test key.
DEFAULT_PARAMS = {
    "frequency": {},
    "block_frequency": {"M": 128},
    "runs": {},
    "longest_run": {"M": None},            # None: 8 / 128 / 10000 from n, as sts-2.1.2
    "rank": {"M": 32, "Q": 32},
    "dft": {},
    "non_overlapping_template": {"m": 9, "N": 8},
    "overlapping_template": {"m": 9, "M": 1032, "K": 5},
    "universal": {"L": None, "Q": None},   # None: L from n as sts-2.1.2 (7 for 10^6 bits), Q = 10*2^L
    "linear_complexity": {"M": 500},
    "serial": {"m": 16},
    "approximate_entropy": {"m": 10},
    "cumulative_sums": {},
    "random_excursions": {},
    "random_excursions_variant": {},
}

#: Minimum sequence length of each test in the battery (SP 800-22 "input size recommendation"
#: of sections 2.x.7; for serial and approximate entropy the rules m < floor(log2 n) - 2 and
#: m < floor(log2 n) - 5 give 2^19 and 2^16 bits at the default m). For the non-overlapping
#: template test, which has no stated minimum, rngcert requires an expected count
#: (M - m + 1)/2^m >= 5 per block (20,544 bits at m = 9, N = 8) so the normal approximation of
#: the block counts holds.
MIN_LENGTH = {
    "frequency": 100, "block_frequency": 100, "runs": 100, "longest_run": 128,
    "rank": 38 * 32 * 32, "dft": 1000, "non_overlapping_template": 8 * (5 * 512 + 8),
    "overlapping_template": 1_000_000, "universal": 387_840, "linear_complexity": 1_000_000,
    "serial": 2 ** 19, "approximate_entropy": 2 ** 16, "cumulative_sums": 100,
    "random_excursions": 1_000_000, "random_excursions_variant": 1_000_000,
}


def _min_length(key: str, params: dict) -> int:
    if key == "serial":
        return 2 ** (params["m"] + 3)
    if key == "approximate_entropy":
        return 2 ** (params["m"] + 6)
    if key == "non_overlapping_template":
        m, N = params["m"], params["N"]
        return N * (5 * 2 ** m + m - 1)
    return MIN_LENGTH[key]


def test_names(params=None) -> dict[str, list[str]]:
    """Result names each test of the battery produces, by test key, in battery order."""
    p = _params_iv(params)
    tmpl = aperiodic_templates(p["non_overlapping_template"]["m"])
    return {
        "frequency": ["nist_frequency"],
        "block_frequency": ["nist_block_frequency"],
        "runs": ["nist_runs"],
        "longest_run": ["nist_longest_run"],
        "rank": ["nist_rank"],
        "dft": ["nist_dft"],
        "non_overlapping_template": [f"nist_non_overlapping_template[{t}]" for t in tmpl],
        "overlapping_template": ["nist_overlapping_template"],
        "universal": ["nist_universal"],
        "linear_complexity": ["nist_linear_complexity"],
        "serial": ["nist_serial[1]", "nist_serial[2]"],
        "approximate_entropy": ["nist_approximate_entropy"],
        "cumulative_sums": ["nist_cumulative_sums[forward]", "nist_cumulative_sums[reverse]"],
        "random_excursions": [f"nist_random_excursions[x={s}]"
                              for s in (-4, -3, -2, -1, 1, 2, 3, 4)],
        "random_excursions_variant": [f"nist_random_excursions_variant[x={s}]"
                                      for s in range(-9, 10) if s],
    }


_SECTION = {k: f"2.{i + 1}" for i, k in enumerate(
    ["frequency", "block_frequency", "runs", "longest_run", "rank", "dft",
     "non_overlapping_template", "overlapping_template", "universal", "linear_complexity",
     "serial", "approximate_entropy", "cumulative_sums", "random_excursions",
     "random_excursions_variant"])}

_REQ = {k: (Requirement.UNIFORMITY if k in ("frequency", "block_frequency")
            else Requirement.INDEPENDENCE) for k in DEFAULT_PARAMS}


def _params_iv(params) -> dict[str, dict]:
    out = {k: dict(v) for k, v in DEFAULT_PARAMS.items()}
    if params is None:
        return out
    if not isinstance(params, dict):
        raise InputError(f"params must be a dict of dicts keyed by test, got {type(params).__name__}")
    for key, val in params.items():
        if key not in out:
            raise InputError(f"params: unknown test {key!r}; valid: {', '.join(out)}")
        if not isinstance(val, dict):
            raise InputError(f"params[{key!r}] must be a dict, got {val!r}")
        for pk in val:
            if pk not in out[key]:
                allowed = ", ".join(out[key]) or "none"
                raise InputError(f"params[{key!r}]: unknown parameter {pk!r}; allowed: {allowed}")
        out[key].update(val)
    return out


def run_sp800_22(bits, *, params=None, constants: str = "reference", tests=None):
    """Run the 15 tests of NIST SP 800-22 rev1a on one bit sequence.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
        The sequence (not modified).
    params : dict, optional
        Per-test overrides of :data:`DEFAULT_PARAMS`, e.g. ``{"block_frequency": {"M": 256}}``.
    constants : {"reference", "corrected"}
        Class probabilities of sts-2.1.2 (default; reproduces Appendix B) or the corrected ones
        (longest run, overlapping template, random excursions); see the module docstring.
    tests : sequence of str, optional
        Subset of test keys (keys of :data:`DEFAULT_PARAMS`) to run; default all 15.

    Returns
    -------
    list of TestResult or NotApplicable
        In the order of SP 800-22 sections 2.1-2.15, one entry per name of
        :func:`test_names` (188 for the defaults: 148 templates, 2 serial, 2 cusum, 8 excursion
        states, 18 variant states). A test whose minimum length (:data:`MIN_LENGTH`) is not met,
        whose prerequisite fails (runs) or whose cycle count J is below max(0.005 sqrt(n), 500)
        (excursions) gives a NotApplicable for each of its names, with the reason.

    Raises
    ------
    InputError
        Invalid bits, unknown test key or parameter, unknown ``constants``.

    Notes
    -----
    H0 of every test: the bits are independent and uniformly distributed (fair coin flips).
    Each test is documented in its own function (sections 2.1-2.15 of [1]); intermediate
    arrays (the +/-1 random walk, the circular window codes) are computed once and shared.
    The p-values are first-level only; judge many sequences with
    :func:`rngcert.stats.nist.twolevel.two_level`.

    References
    ----------
    .. [1] Rukhin A. et al. (2010) A statistical test suite for random and pseudorandom number
       generators for cryptographic applications. NIST SP 800-22 rev1a.
    .. [2] NIST sts-2.1.2, the reference implementation (constants, block-length rules).

    Examples
    --------
    >>> from rngcert.simulate.sources import generate_bits
    >>> res = run_sp800_22(generate_bits("pcg64", 1_000_000, seed=1))
    >>> len(res), res[0].name
    (188, 'nist_frequency')
    """
    view = BitView(bits, params=params, constants=constants)
    keys = list(DEFAULT_PARAMS)
    if tests is not None:
        bad = [t for t in tests if t not in DEFAULT_PARAMS]
        if bad:
            raise InputError(f"unknown test(s) {bad!r}; valid: {', '.join(DEFAULT_PARAMS)}")
        keys = [k for k in keys if k in set(tests)]
    out = []
    for key in keys:
        out.extend(run_section(view, key))
    return out


class BitView:
    """One bit sequence with the intermediates several SP 800-22 tests share, computed once.

    Parameters
    ----------
    bits : (n,) array_like of {0, 1}
    params : dict, optional
        Per-test overrides of :data:`DEFAULT_PARAMS`.
    constants : {"reference", "corrected"}

    Notes
    -----
    The +/-1 random walk serves cumulative sums and both excursion tests; one pass of circular
    window codes of the longest pattern serves serial, approximate entropy and both template
    tests: shorter windows are prefixes (code >> (mmax - m)), and circular pattern counts
    marginalise exactly (SP 800-22 2.11.4 / 2.12.4 augmentation).
    """

    def __init__(self, bits, *, params=None, constants: str = "reference"):
        self.x = _bits_iv(bits)
        _constants_iv(constants)
        self.constants = constants
        self.params = _params_iv(params)
        self.n = int(self.x.size)
        self.names = test_names(self.params)
        p = self.params
        self.mmax = max(p["serial"]["m"], p["approximate_entropy"]["m"] + 1,
                        p["non_overlapping_template"]["m"], p["overlapping_template"]["m"])
        self._cache: dict = {}

    def walk(self) -> np.ndarray:
        if "S" not in self._cache:
            self._cache["S"] = np.cumsum(2 * self.x.astype(np.int32) - 1, dtype=np.int32)
        return self._cache["S"]

    def _circ(self) -> np.ndarray:
        if "circ" not in self._cache:
            self._cache["circ"] = windows(self.x, self.mmax, circular=True)
        return self._cache["circ"]

    def codes(self, m: int):
        if m > self.mmax or self.mmax > 25 or self.n < self.mmax:
            return None
        if ("codes", m) not in self._cache:
            self._cache[("codes", m)] = (self._circ() >> np.uint32(self.mmax - m))[: self.n - m + 1]
        return self._cache[("codes", m)]

    def counts(self, m: int):
        if m > self.mmax or self.mmax > 25 or self.n < self.mmax:
            return None
        if "counts" not in self._cache:
            self._cache["counts"] = np.bincount(self._circ(), minlength=1 << self.mmax)
        return self._cache["counts"].reshape(-1, 1 << (self.mmax - m)).sum(axis=1)


#: How each SP 800-22 section runs on a :class:`BitView` ``v`` with its parameters ``kp``: the
#: battery as data (rngcert.battery.bits makes one Spec of each).
SECTIONS = {
    "frequency": lambda v, kp: frequency(v.x),
    "block_frequency": lambda v, kp: block_frequency(v.x, **kp),
    "runs": lambda v, kp: runs(v.x),
    "longest_run": lambda v, kp: longest_run(v.x, kp["M"], constants=v.constants),
    "rank": lambda v, kp: binary_matrix_rank(v.x, **kp),
    "dft": lambda v, kp: dft(v.x),
    "non_overlapping_template": lambda v, kp: non_overlapping_template(v.x, kp["m"], kp["N"], _codes=v.codes(kp["m"])),
    "overlapping_template": lambda v, kp: overlapping_template(v.x, kp["m"], kp["M"], kp["K"], constants=v.constants,
                                                               _codes=v.codes(kp["m"])),
    "universal": lambda v, kp: universal(v.x, **kp),
    "linear_complexity": lambda v, kp: linear_complexity(v.x, **kp),
    "serial": lambda v, kp: serial(v.x, **kp, _counts=v.counts(kp["m"])),
    "approximate_entropy": lambda v, kp: approximate_entropy(v.x, **kp, _counts=v.counts(kp["m"] + 1)),
    "cumulative_sums": lambda v, kp: cumulative_sums(v.x, _walk=v.walk()),
    "random_excursions": lambda v, kp: random_excursions(v.x, constants=v.constants, _S=v.walk()),
    "random_excursions_variant": lambda v, kp: random_excursions_variant(v.x, _S=v.walk()),
}

#: Requirement each section serves.
REQUIREMENT = {k: (Requirement.UNIFORMITY if k in ("frequency", "block_frequency") else Requirement.INDEPENDENCE)
               for k in DEFAULT_PARAMS}


def _params_words(kp: dict) -> str:
    """A section's parameters in words for a reason: ``" with m = 9, M = 1032, K = 5"``, ``" with L and Q chosen from
    n"`` (a parameter left None is chosen from the length), or nothing for a section without parameters (the
    reasons said "parameters default" and "{'M': None}")."""
    given = [f"{k} = {v}" for k, v in kp.items() if v is not None]
    chosen = [k for k, v in kp.items() if v is None]
    parts = given + ([f"{' and '.join(chosen)} chosen from n"] if chosen else [])
    return f" with {', '.join(parts)}" if parts else ""


def run_section(view: BitView, key: str) -> list:
    """SP 800-22 section ``key`` (a key of :data:`DEFAULT_PARAMS`) on ``view``: one result per
    name of :func:`test_names`; below the section's minimum length, or when its prerequisite fails,
    a NotApplicable for each name, with the reason."""
    if key not in SECTIONS:
        raise InputError(f"unknown test {key!r}; valid: {', '.join(DEFAULT_PARAMS)}")
    kp = view.params[key]
    need = _min_length(key, kp)
    if view.n < need:
        r = not_applicable(key, _REQ[key], view.n,
                           f"n = {view.n} < {need}, the minimum length of this test{_params_words(kp)} (SP 800-22 section "
                           f"{_SECTION[key]}.7; see rngcert.stats.nist.MIN_LENGTH)")
    else:
        r = SECTIONS[key](view, kp)
    if isinstance(r, NotApplicable):
        return [NotApplicable(nm, r.requirement, r.n, r.reason) for nm in view.names[key]]
    return list(r) if isinstance(r, list) else [r]
