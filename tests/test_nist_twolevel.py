"""Two-level analysis (SP 800-22 section 4.2) and bad inputs of the SP 800-22 battery.

Runtime: about 2 s.
"""

import numpy as np
import pytest
from scipy import stats

from rngcert.errors import InputError
from rngcert.stats import nist
from rngcert.stats.nist.twolevel import two_level
from rngcert.stats.result import NotApplicable, Requirement, TestResult


def two_level_u(results, **kw):
    """SP 800-22's arithmetic as published (every p-value taken as continuous U(0, 1))."""
    return two_level(results, null_law="uniform", **kw)


def _fake(name, pvals, req=Requirement.INDEPENDENCE):
    out = []
    for p in pvals:
        if p is None:
            out.append([NotApplicable(name, req, 100, "J = 3 cycles < 500")])
        else:
            out.append([TestResult(name, req, 0.0, None, p, 100, "asymptotic")])
    return out


def test_uniform_pvalues_pass_and_match_scipy_chisquare():
    p = (np.arange(200) + 0.5) / 200                       # perfectly uniform
    res = two_level_u(_fake("t", p))
    row = res.row("t")
    assert row.m == 200 and row.passes == 198 and row.verdict == "pass"
    assert row.histogram == (20,) * 10
    assert row.uniformity_pvalue == pytest.approx(1.0)
    lo, hi = row.interval
    assert lo == pytest.approx(0.99 - 3 * np.sqrt(0.99 * 0.01 / 200))
    rng = np.random.default_rng(1)
    p = rng.random(300)
    row = two_level_u(_fake("t", p)).row("t")
    hist = np.histogram(p, bins=10, range=(0, 1))[0]
    ref = stats.chisquare(hist)
    assert row.uniformity_statistic == pytest.approx(ref.statistic)
    assert row.uniformity_pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_too_many_small_pvalues_fail_proportion():
    p = np.r_[np.full(10, 0.001), np.linspace(0.02, 1, 90)]
    row = two_level_u(_fake("t", p)).row("t")
    assert row.passes == 90 and not row.proportion_ok and row.verdict == "fail"


def test_nonuniform_pvalues_fail_uniformity():
    p = np.linspace(0.5, 1.0, 200)                         # all in the upper half
    row = two_level_u(_fake("t", p)).row("t")
    assert row.proportion_ok and row.uniformity_pvalue < 1e-4
    assert not row.uniformity_ok and row.verdict == "fail"


def test_small_m_skips_uniformity_with_reason():
    row = two_level_u(_fake("t", [0.3, 0.5, 0.7, 0.9, 0.2])).row("t")
    assert row.uniformity_pvalue is None and row.uniformity_ok is None
    assert "55" in row.uniformity_reason and row.verdict == "pass"


def test_m_equal_one_is_not_applicable():
    r = two_level_u(_fake("t", [0.3]))
    assert isinstance(r, NotApplicable) and "m = 1" in r.reason


def test_m_zero_raises():
    with pytest.raises(InputError, match="m = 0"):
        two_level([])


def test_not_applicable_sequences_are_excluded_and_counted():
    p = [None] * 30 + list(np.linspace(0.01, 0.99, 70))
    row = two_level_u(_fake("t", p)).row("t")
    assert row.m == 70 and row.not_applicable == 30 and row.m_total == 100
    assert row.reasons == ("J = 3 cycles < 500",)
    allna = two_level_u(_fake("t", [None, None])).row("t")
    assert allna.verdict == "not applicable" and allna.m == 0
    # why, in the sentence a verdict reason quotes (not only in report.json's reasons)
    assert allna.uniformity_reason == "the test was not applicable to any sequence (J = 3 cycles < 500)"


def test_to_test_results():
    rng = np.random.default_rng(2)
    res = two_level_u(_fake("nist_runs", rng.random(100)) and
                    [a + b for a, b in zip(_fake("nist_runs", rng.random(100)),
                                           _fake("nist_dft", rng.random(100)))])
    out = res.to_test_results()
    assert [r.name for r in out] == ["nist_runs:uniformity", "nist_runs:proportion",
                                    "nist_dft:uniformity", "nist_dft:proportion"]
    for r in out:
        assert r.applicable and 0 <= r.pvalue <= 1
    prop = out[1]
    assert prop.pvalue == pytest.approx(stats.binomtest(int(prop.statistic), 100, 0.99).pvalue)
    assert "interval" in prop.details and len(prop.details["histogram"]) == 10
    small = two_level_u(_fake("t", [0.5, 0.6])).to_test_results()
    assert not small[0].applicable and small[1].applicable
    assert res.to_dict()["rows"][0]["name"] == "nist_runs"


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad,match", [
    (np.array([0, 1, 2, 1]), r"bits\[2\] = 2"),
    (np.array([[0, 1], [1, 0]]), "one-dimensional"),
    (np.array([], dtype=np.uint8), "empty"),
    (np.array([0.0, 0.5]), r"bits\[1\] = 0.5"),
    (np.array(["0", "1"]), "dtype"),
])
def test_bad_bits_raise(bad, match):
    with pytest.raises(InputError, match=match):
        nist.run_sp800_22(bad)
    with pytest.raises(InputError, match=match):
        nist.frequency(bad)


def test_bad_options_raise():
    x = np.zeros(1000, dtype=np.uint8)
    with pytest.raises(InputError, match="constants='exact'"):
        nist.run_sp800_22(x, constants="exact")
    with pytest.raises(InputError, match="unknown test 'foo'"):
        nist.run_sp800_22(x, params={"foo": {}})
    with pytest.raises(InputError, match="unknown parameter 'Q'"):
        nist.run_sp800_22(x, params={"serial": {"Q": 3}})
    with pytest.raises(InputError, match="periodic"):
        nist.non_overlapping_template(x, m=3, N=2, templates=["010"])
    with pytest.raises(InputError, match="M=0"):
        nist.block_frequency(x, M=0)


def test_short_sequence_gives_not_applicable_per_name_and_no_replay():
    x = np.random.default_rng(3).integers(0, 2, 5000, dtype=np.uint8)
    res = nist.run_sp800_22(x)
    names = [nm for v in nist.test_names().values() for nm in v]
    assert [r.name for r in res] == names
    na = {r.name: r for r in res if not r.applicable}
    assert set(na) >= {"nist_rank", "nist_linear_complexity", "nist_universal",
                       "nist_overlapping_template", "nist_serial[1]", "nist_serial[2]",
                       "nist_random_excursions[x=-4]", "nist_approximate_entropy"}
    assert "n = 5000 < 38912" in na["nist_rank"].reason
    for r in res:
        if r.applicable:
            assert r.n == 5000 and 0 <= r.pvalue <= 1
    assert res[0].applicable                                    # frequency applies


def test_tiny_inputs_never_crash():
    for n in (1, 2, 3, 7, 99, 100, 101, 127, 128, 1001):
        x = np.random.default_rng(n).integers(0, 2, n, dtype=np.uint8)
        for r in nist.run_sp800_22(x):
            assert (not r.applicable) or 0 <= r.pvalue <= 1
    # constant sequences
    for v in (0, 1):
        res = {r.name: r for r in nist.run_sp800_22(np.full(2000, v, dtype=np.uint8))}
        assert res["nist_frequency"].pvalue < 1e-10
        assert not res["nist_runs"].applicable


def test_odd_length_sequences():
    x = np.random.default_rng(4).integers(0, 2, 1_000_001, dtype=np.uint8)
    res = {r.name: r for r in nist.run_sp800_22(x)}
    assert all(r.applicable or r.name.startswith("nist_random_excursions") for r in res.values())
    assert res["nist_dft"].details["N0"] == pytest.approx(0.95 * 1_000_001 / 2)


def test_inputs_not_modified_and_bool_accepted():
    x = np.random.default_rng(5).integers(0, 2, 50_000).astype(bool)
    y = x.copy()
    a = nist.run_sp800_22(x)
    np.testing.assert_array_equal(x, y)
    b = nist.run_sp800_22(x.astype(np.int64))
    assert [r.pvalue for r in a if r.applicable] == [r.pvalue for r in b if r.applicable]


# ---- the law of discrete p-values (case c02) ------------------------------------------------

def _battery_like(name, n, pvals):
    """Results named like the battery's, of length n, with the given p-values."""
    return [[TestResult(name, Requirement.UNIFORMITY, 0.0, None, p, n, "asymptotic")]
            for p in pvals]


def test_c02_discrete_frequency_pvalues_use_their_exact_law():
    """c02: at n = 128 the frequency p-value takes 65 values; p-values drawn from that law
    pass with null_law="exact" and fail SP 800-22's flat check as published."""
    from rngcert.stats.nist.nulllaw import pvalue_law
    n, m = 128, 1000
    k = np.random.default_rng(7).binomial(n, 0.5, size=m)
    p = [nist.frequency(np.r_[np.ones(kk, np.uint8), np.zeros(n - kk, np.uint8)]).pvalue
         for kk in k]
    exact = two_level(_battery_like("nist_frequency", n, p)).row("nist_frequency")
    flat = two_level_u(_battery_like("nist_frequency", n, p)).row("nist_frequency")
    assert flat.uniformity_pvalue < 1e-20 and flat.verdict == "fail"
    assert exact.uniformity_pvalue > 1e-3 and exact.verdict == "pass"
    law = pvalue_law("frequency", n)
    assert exact.law_kind == "exact" and exact.pass_probability == pytest.approx(
        law.pass_probability)
    # bin [0.6, 0.7) cannot be reached at n = 128: it is merged with a neighbour
    assert law.bins[6] == 0.0 and len(exact.classes) == 9 and exact.uniformity_df == 8
    assert sum(exact.expected) == pytest.approx(m)
    assert all(e >= 5 for e in exact.expected)
    tr = {r.name: r for r in two_level(_battery_like("nist_frequency", n, p)).to_test_results()}
    assert tr["nist_frequency:uniformity"].df == 8
    assert "exact" in tr["nist_frequency:uniformity"].method
    assert tr["nist_frequency:proportion"].details["pass_probability"] == pytest.approx(
        law.pass_probability)


def test_continuous_law_is_sp800_22_check_exactly():
    rng = np.random.default_rng(1)
    p = rng.random(300)
    r = [[TestResult("nist_universal", Requirement.INDEPENDENCE, 0.0, None, q, 10 ** 6,
                     "asymptotic")] for q in p]
    row = two_level(r).row("nist_universal")
    ref = stats.chisquare(np.histogram(p, bins=10, range=(0, 1))[0])
    assert row.law_kind == "continuous" and row.uniformity_df == 9
    assert row.uniformity_pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert row.pass_probability == pytest.approx(0.99)


def test_unknown_law_makes_uniformity_not_applicable_with_reason():
    row = two_level(_fake("t", np.linspace(0.01, 0.99, 100))).row("t")
    assert row.uniformity_pvalue is None and row.law_kind == "unknown"
    assert "law of this p-value under H0 is not available" in row.uniformity_reason
    assert row.pass_probability == pytest.approx(0.99) and row.proportion_ok
    out = {r.name: r for r in two_level(_fake("t", np.linspace(0.01, 0.99, 100)))
           .to_test_results()}
    assert not out["t:uniformity"].applicable and out["t:proportion"].applicable


def test_too_few_expected_counts_make_uniformity_not_applicable():
    from rngcert.stats.nist.nulllaw import PValueLaw
    law = PValueLaw("exact", (0.0,) * 9 + (1.0,), 1.0, 0.01, "exact: a point mass at p = 1")
    row = two_level(_fake("t", [1.0] * 60), null_law=lambda r, a: law).row("t")
    assert row.uniformity_pvalue is None and "fewer than 5" in row.uniformity_reason
    assert row.proportion_ok and row.interval == (1.0, 1.0)


def test_monte_carlo_law_divides_the_chi_square_by_one_plus_m_over_r():
    from rngcert.stats.nist.nulllaw import PValueLaw
    p = np.random.default_rng(4).random(500)
    plain = two_level(_fake("t", p), null_law="uniform").row("t")
    mc = PValueLaw("monte-carlo", (0.1,) * 10, 0.99, 0.01, "mc", replicates=1000)
    row = two_level(_fake("t", p), null_law=lambda r, a: mc).row("t")
    assert row.uniformity_statistic == pytest.approx(plain.uniformity_statistic / 1.5)


def test_mixed_lengths_average_their_laws():
    from rngcert.stats.nist.nulllaw import pvalue_law
    res = _battery_like("nist_frequency", 128, [0.5] * 30) + \
        _battery_like("nist_frequency", 200, [0.5] * 70)
    row = two_level(res).row("nist_frequency")
    want = (30 * pvalue_law("frequency", 128).pass_probability
            + 70 * pvalue_law("frequency", 200).pass_probability) / 100
    assert row.pass_probability == pytest.approx(want)


def test_bad_null_law_raises():
    with pytest.raises(InputError, match="null_law='flat'"):
        two_level(_fake("t", [0.5, 0.6]), null_law="flat")
