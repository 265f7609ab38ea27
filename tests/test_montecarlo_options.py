"""``method=MonteCarlo(n_resamples, batch, rng)`` beside the keywords, as scipy's MonteCarloMethod (issue 27 item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats import MonteCarlo, category_frequency, g_test, pocket_chisquare, sector_scan

COUNTS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8])
WHEEL = np.random.default_rng(4).multinomial(740, np.full(37, 1 / 37))


def _same(a, b):
    assert a.name == b.name and a.method == b.method and a.n == b.n
    assert a.statistic == b.statistic and a.pvalue == b.pvalue


@pytest.mark.parametrize("func", [pocket_chisquare, g_test])
def test_both_spellings_give_identical_results(func):
    kw = func(COUNTS, method="monte-carlo", n_resamples=499, rng=stream(9, "t", func.__name__))
    mc = func(COUNTS, method=MonteCarlo(n_resamples=499, rng=stream(9, "t", func.__name__)))
    _same(kw, mc)
    assert mc.method == "monte-carlo, R=499"
    # the batch is a memory bound: the replicates come from the stream in the same order whatever it is
    for batch in (1, 7, 10_000):
        _same(kw, func(COUNTS, method=MonteCarlo(n_resamples=499, batch=batch, rng=stream(9, "t", func.__name__))))


def test_category_frequency_and_sector_scan_accept_the_object():
    cats = np.arange(12) % 3
    a = category_frequency(COUNTS, cats, name="c", method="monte-carlo", n_resamples=299, rng=stream(1, "c"))
    b = category_frequency(COUNTS, cats, name="c", method=MonteCarlo(299, None, stream(1, "c")))
    _same(a, b)
    s1 = sector_scan(WHEEL, n_resamples=199, rng=stream(2, "s"))
    s2 = sector_scan(WHEEL, method=MonteCarlo(n_resamples=199, batch=13, rng=stream(2, "s")))
    _same(s1, s2)
    assert s1.details["best_arc"]["start"] == s2.details["best_arc"]["start"]


def test_a_different_stream_or_size_changes_the_pvalue():
    """The comparison above can fail: the options are really used."""
    a = pocket_chisquare(COUNTS, method=MonteCarlo(n_resamples=499, rng=stream(9, "t", "x")))
    b = pocket_chisquare(COUNTS, method=MonteCarlo(n_resamples=499, rng=stream(10, "t", "x")))
    c = pocket_chisquare(COUNTS, method=MonteCarlo(n_resamples=99, rng=stream(9, "t", "x")))
    assert a.pvalue != b.pvalue and c.method == "monte-carlo, R=99"


def test_bad_options_and_options_given_twice_are_input_errors():
    with pytest.raises(InputError, match="n_resamples must be an integer >= 1"):
        MonteCarlo(n_resamples=0)
    with pytest.raises(InputError, match="batch must be an integer >= 1"):
        MonteCarlo(batch=0)
    with pytest.raises(InputError, match="rng must be a numpy.random.Generator"):
        MonteCarlo(rng=1)
    with pytest.raises(InputError, match="rng given both"):
        pocket_chisquare(COUNTS, method=MonteCarlo(rng=stream(1, "a")), rng=stream(1, "b"))
    with pytest.raises(InputError, match="n_resamples=99 as a keyword and 199"):
        pocket_chisquare(COUNTS, method=MonteCarlo(199, rng=stream(1, "a")), n_resamples=99)
    # no rng anywhere: the statistic's fixed-seed default stream (rngcert.seeding.default_stream), as with the keywords
    from rngcert.seeding import default_stream

    assert pocket_chisquare(COUNTS, method=MonteCarlo(199)).pvalue == pocket_chisquare(
        COUNTS, method=MonteCarlo(199, rng=default_stream("pocket_chisquare"))).pvalue
    with pytest.raises(InputError, match="method must be a MonteCarlo"):
        sector_scan(WHEEL, method="asymptotic", rng=stream(1, "s"))


@pytest.mark.parametrize("name", ["rngcert.stats.montecarlo", "rngcert.battery.followup", "rngcert.battery.uniform", "rngcert.seeding"])
def test_examples_of_the_new_modules_run(name):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_max_count_fallback_and_serial_pair_permutation_accept_the_object(monkeypatch):
    from rngcert.stats import frequency, max_count, pair_counts, serial_pair

    monkeypatch.setattr(frequency, "_LEVIN_MAX_LEN", 8)  # force the Monte Carlo fallback on a small wheel
    a = max_count(WHEEL, n_resamples=299, rng=stream(3, "m"))
    b = max_count(WHEEL, method=MonteCarlo(299, 17, stream(3, "m")))
    assert a.method == "monte-carlo, R=299"
    _same(a, b)
    x = np.random.default_rng(8).integers(0, 37, 300)
    tab = pair_counts(x, 37)
    c = serial_pair(tab, method="permutation", n_resamples=199, rng=stream(4, "p"), positions=x)
    d = serial_pair(tab, method=MonteCarlo(199, rng=stream(4, "p")), positions=x)
    e = serial_pair(tab, method=MonteCarlo(199, batch=5, rng=stream(4, "p")), positions=x)
    assert c.method == "permutation, R=199"
    _same(c, d)
    _same(c, e)


def test_dealer_signature_accepts_the_object():
    from rngcert.stats import dealer_signature

    offs = np.random.default_rng(5).multinomial(400, np.full(37, 1 / 37), size=3)
    a = dealer_signature(offs, n_resamples=199, rng=stream(6, "d"))
    b = dealer_signature(offs, method=MonteCarlo(n_resamples=199, batch=11, rng=stream(6, "d")))
    _same(a, b)


def test_homogeneity_chisquare_accepts_the_object():
    from rngcert.stats import homogeneity_chisquare

    tab = np.random.default_rng(7).multinomial(60, np.full(37, 1 / 37), size=3)
    a = homogeneity_chisquare(tab, method="monte-carlo", n_resamples=99, rng=stream(8, "h"))
    b = homogeneity_chisquare(tab, method=MonteCarlo(n_resamples=99, rng=stream(8, "h")))
    assert a.method == "monte-carlo, R=99"
    _same(a, b)
