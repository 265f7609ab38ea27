"""Issue 24 item 6: every public function of rngcert.stats has numpydoc Examples, and they run
(doctest) in the test suite; Monte Carlo tests work without rng= (a fixed-seed default stream)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import rngcert.stats as S
from rngcert.errors import InputError

MODULES = sorted({f"rngcert.stats.{m}" for m in S._API.values()} | {"rngcert.stats", "rngcert.seeding", "rngcert.stats.nist.twolevel"})
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    mod = importlib.import_module(name)
    mods = [mod] + ([importlib.import_module(f"{name}.{m.name}") for m in pkgutil.iter_modules(mod.__path__)]
                    if hasattr(mod, "__path__") and name != "rngcert.stats" else [])  # a package (stats.shuffle): its modules too
    res = [doctest.testmod(m, optionflags=FLAGS, verbose=False, report=True) for m in mods]
    attempted, failed = sum(r.attempted for r in res), sum(r.failed for r in res)
    assert attempted > 0 and failed == 0, f"{name}: {failed} of {attempted} examples failed"


@pytest.mark.parametrize("name", [n for n in S.__all__ if n not in ("NotApplicable", "Requirement", "TestResult")])
def test_every_public_function_has_examples_that_run(name):
    fn = getattr(S, name)
    doc = fn.__doc__ or ""
    assert "\n    Examples\n    --------\n" in doc, f"{name}: no numpydoc Examples section"
    (test,) = [t for t in doctest.DocTestFinder(recurse=False).find(fn, name, globs={}) if t.examples]
    assert any(name in ex.source for ex in test.examples)
    res = doctest.DocTestRunner(optionflags=FLAGS).run(test)
    assert res.failed == 0


def test_monte_carlo_tests_default_to_a_fixed_seed_stream():
    from rngcert.seeding import default_stream

    counts = np.full(37, 100)
    counts[10:13] += 30
    a = S.sector_scan(counts, n_resamples=199)  # no rng=: it used to raise
    b = S.sector_scan(counts, n_resamples=199, rng=default_stream("sector_scan"))
    assert a.pvalue == b.pvalue and a.method == "monte-carlo, R=199"
    sparse = np.array([[3, 0, 1, 2, 0], [0, 4, 1, 0, 2]])
    r = S.homogeneity_chisquare(sparse, n_resamples=199)
    assert r.method == "monte-carlo, R=199" and r.pvalue == S.homogeneity_chisquare(sparse, n_resamples=199).pvalue
    offs = np.random.default_rng(1).integers(0, 37, (2, 37))
    assert S.dealer_signature(offs, n_resamples=99).applicable
    with pytest.raises(InputError, match="numpy.random.Generator"):
        S.sector_scan(counts, rng=7)  # a seed is not a stream: say so
