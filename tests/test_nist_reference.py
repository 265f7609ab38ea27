"""SP 800-22 rev1a: worked examples (section 2), Appendix B (data.e, data.pi), errata, scipy cross-checks.

Runtime: about 3 s.
"""

import json
import math

import numpy as np
import pytest
from _support import shared_path
from scipy import special, stats

from rngcert.stats import nist

_REF_FILE = shared_path("reference", "nist_sp800_22.json")
REF = json.loads(_REF_FILE.read_text()) if _REF_FILE.exists() else {"worked_examples": [], "appendix_b": {}}
DATA = shared_path("data", "nist-sts")
pytestmark = pytest.mark.skipif(not _REF_FILE.exists(), reason=f"{_REF_FILE} not available (set RNGCERT_SHARED)")


def b(s):
    return np.array([int(c) for c in s], dtype=np.uint8)


def _example(test):
    return [ex for ex in REF["worked_examples"] if ex["test"] == test]


def _load(name):
    raw = np.frombuffer((DATA / f"data.{name}").read_bytes(), dtype=np.uint8)
    return (raw[(raw == 48) | (raw == 49)] - 48)[:1_000_000]


# ---- worked examples of section 2 -------------------------------------------------------------

@pytest.mark.parametrize("ex", _example("frequency"), ids=lambda e: e["input"][:12])
def test_frequency_examples(ex):
    assert nist.frequency(b(ex["input"])).pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


@pytest.mark.parametrize("ex", _example("block_frequency"), ids=lambda e: e["input"][:12])
def test_block_frequency_examples(ex):
    r = nist.block_frequency(b(ex["input"]), M=ex["params"]["M"])
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


@pytest.mark.parametrize("ex", _example("runs"), ids=lambda e: e["input"][:12])
def test_runs_examples(ex):
    assert nist.runs(b(ex["input"])).pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


def test_longest_run_example():
    ex = _example("longest_run_of_ones")[0]
    r = nist.longest_run(b(ex["input"]), M=ex["params"]["M"])
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)
    assert list(r.details["nu"]) == [4, 9, 3, 0]           # section 2.4.8


@pytest.mark.parametrize("ex,published_n1,computed_n1",
                         list(zip(_example("dft"), (4, 46), (5, 48))))
def test_dft_examples_erratum(ex, published_n1, computed_n1):
    """Erratum: the publication's N1 (4 and 46) disagree with its own definition; the moduli
    |F_k| < T for k = 0..n/2-1 number 5 and 48 (so do sts-2.1.2 and independent ports, see
    terrillmoore/NIST-Statistical-Test-Suite issue 9). The p-value formula is checked by feeding
    the publication's N1 into it."""
    x = b(ex["input"])
    n = x.size
    r = nist.dft(x)
    assert r.details["N1"] == computed_n1
    F = np.abs(np.fft.fft(2.0 * x - 1.0))[: n // 2]          # independent count
    assert int(np.sum(F < math.sqrt(math.log(20) * n))) == computed_n1
    d = (published_n1 - 0.95 * n / 2) / math.sqrt(n * 0.95 * 0.05 / 4)
    assert special.erfc(abs(d) / math.sqrt(2)) == pytest.approx(ex["pvalue"], abs=5e-7)


def test_non_overlapping_template_example():
    ex = _example("non_overlapping_template")[0]
    t = ex["params"]["template"]
    r = nist.non_overlapping_template(b(ex["input"]), m=len(t), N=ex["params"]["N"],
                                      templates=[t])[0]
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)
    assert list(r.details["W"]) == [2, 1]                  # section 2.7.8


def test_overlapping_template_example_erratum():
    """Erratum: the example's nu = (0,1,1,1,1,1) does not match its input, and its p-value
    0.274932 is Q(5/2, chi2) for chi2 = 3.167729 (chi2 not halved). From the input, nu =
    (0,2,0,1,1,1) (counted by hand: 5, 1, 3, 4, 1 overlapping '11' per block); the
    publication's class probabilities are reproduced exactly by the sts-2.1.2 formula."""
    ex = _example("overlapping_template")[0]
    p = ex["params"]
    x = b(ex["input"])
    r = nist.overlapping_template(x, m=len(p["template"]), M=p["M"], K=p["K"])
    assert list(r.details["nu"]) == [0, 2, 0, 1, 1, 1]
    pub_pi = [0.324652, 0.182617, 0.142670, 0.106645, 0.077147, 0.166269]
    np.testing.assert_allclose(r.details["pi"], pub_pi, atol=1.5e-6)  # last = 1 - sum of rounded
    pub_nu = np.array([0, 1, 1, 1, 1, 1])
    chi2_pub = float(np.sum((pub_nu - 5 * np.array(pub_pi)) ** 2 / (5 * np.array(pub_pi))))
    assert chi2_pub == pytest.approx(3.167729, abs=1e-5)
    assert special.gammaincc(2.5, chi2_pub) == pytest.approx(ex["pvalue"], abs=5e-7)
    # our p-value follows section 2.8.4 step 5 (chi2 halved) on the real counts
    assert r.pvalue == pytest.approx(special.gammaincc(2.5, r.statistic / 2), rel=1e-12)
    assert r.pvalue == pytest.approx(0.409635, abs=5e-7)


def test_serial_example_erratum():
    ex = _example("serial")[0]
    r = nist.serial(b(ex["input"]), m=ex["params"]["m"])
    assert [q.pvalue for q in r] == pytest.approx(ex["pvalue"], abs=5e-7)
    # section 2.11.8: psi^2_3 = 2.8, psi^2_2 = 1.2, psi^2_1 = 0.4, nabla = 1.6, nabla^2 = 0.8
    assert r[0].details["psi2_m"] == pytest.approx(2.8)
    assert r[0].details["psi2_m1"] == pytest.approx(1.2)
    assert r[0].details["psi2_m2"] == pytest.approx(0.4)
    assert (r[0].statistic, r[1].statistic) == pytest.approx((1.6, 0.8))


@pytest.mark.parametrize("ex", _example("approximate_entropy"), ids=lambda e: e["input"][:12])
def test_approximate_entropy_examples(ex):
    r = nist.approximate_entropy(b(ex["input"]), m=ex["params"]["m"])
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


@pytest.mark.parametrize("ex", _example("cumulative_sums"), ids=lambda e: e["params"]["mode"])
def test_cusum_examples(ex):
    r = nist.cumulative_sums(b(ex["input"]), mode=ex["params"]["mode"])[0]
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


def test_random_excursions_example_erratum():
    """The example's p-value 0.502529 uses pi_4 = pi_5 = 0.0312 (rounded); with the exact
    1/32 the same counts give 0.502488. Counts and chi2 match section 2.14.8."""
    ex = _example("random_excursions")[0]
    res = nist.random_excursions(b(ex["input"]), min_cycles=1)
    r = next(q for q in res if q.details["x"] == ex["params"]["x"])
    assert r.details["J"] == 3
    assert list(r.details["nu"]) == [1, 1, 0, 1, 0, 0]
    assert r.statistic == pytest.approx(4.333333, abs=1e-6)
    pub_pi = np.array([0.5, 0.25, 0.125, 0.0625, 0.0312, 0.0312])
    chi2 = float(np.sum((r.details["nu"] - 3 * pub_pi) ** 2 / (3 * pub_pi)))
    assert chi2 == pytest.approx(4.333033, abs=1e-6)
    assert special.gammaincc(2.5, chi2 / 2) == pytest.approx(ex["pvalue"], abs=5e-7)
    assert r.pvalue == pytest.approx(0.502488, abs=5e-7)


def test_random_excursions_variant_example():
    ex = _example("random_excursions_variant")[0]
    res = nist.random_excursions_variant(b(ex["input"]), min_cycles=1)
    r = next(q for q in res if q.details["x"] == ex["params"]["x"])
    assert r.pvalue == pytest.approx(ex["pvalue"], abs=5e-7)


def test_excursions_need_500_cycles_by_default():
    ex = _example("random_excursions")[0]
    r = nist.random_excursions(b(ex["input"]))
    assert not r.applicable and "J = 3" in r.reason


# ---- random excursions: visit probabilities and the c13 regression -----------------------------

def _pi_exact(a):
    """SP 800-22 section 3.14 closed form, as exact fractions (independent of the module)."""
    from fractions import Fraction as F
    q = 1 - F(1, 2 * a)
    return [q] + [F(1, 4 * a * a) * q ** (k - 1) for k in range(1, 5)] + [F(1, 2 * a) * q ** 4]


@pytest.mark.parametrize("x", [s for s in range(-9, 10) if s])
def test_excursion_probabilities_closed_form_rows_sum_to_one(x):
    """Every row of the corrected table is the closed form (exact rationals, rounded once to
    double) and sums to 1; the reference rows are within 1.04e-10 of it and sum to 1 within
    1.3e-10 (the 10/11 decimals of sts-2.1.2)."""
    exact = _pi_exact(abs(x))
    assert sum(exact) == 1
    cor = nist.excursion_state_probabilities(x, "corrected")
    assert cor.tolist() == [float(v) for v in exact]
    assert cor.sum() == pytest.approx(1.0, abs=1e-15)
    ref = nist.excursion_state_probabilities(x, "reference")
    np.testing.assert_allclose(ref, cor, rtol=0, atol=1.04e-10)
    assert ref.sum() == pytest.approx(1.0, abs=1.3e-10)
    if abs(x) > 4:                                 # sts-2.1.2 tabulates |x| <= 4 only
        assert ref.tolist() == cor.tolist()


# sts-2.1.2 randomExcursions.c, array pi[|x|][k] (k = 0..4, >= 5), transcribed digit for digit
# to check the reference table against it; the old rngcert table had 0.0878906250 for
# P(>= 5 visits to |x| = 2), a row summing to 1.0088 (case c13).
STS_PI_TABLE = {
    1: [0.5000000000, 0.25000000000, 0.12500000000, 0.06250000000, 0.03125000000, 0.0312500000],
    2: [0.7500000000, 0.06250000000, 0.04687500000, 0.03515625000, 0.02636718750, 0.0791015625],
    3: [0.8333333333, 0.02777777778, 0.02314814815, 0.01929012346, 0.01607510288, 0.0803755143],
    4: [0.8750000000, 0.01562500000, 0.01367187500, 0.01196289063, 0.01046752930, 0.0732727051],
}


@pytest.mark.parametrize("a", [1, 2, 3, 4])
def test_c13_excursion_reference_table_equals_sts_2_1_2(a):
    assert nist.excursion_state_probabilities(a, "reference").tolist() == STS_PI_TABLE[a]
    assert nist.excursion_state_probabilities(-a, "reference").tolist() == STS_PI_TABLE[a]
    assert nist.excursion_state_probabilities(2, "reference")[5] == 0.0791015625


def test_excursion_probabilities_bad_state_raises():
    from rngcert.errors import InputError
    for bad in (0, 2.5, "x"):
        with pytest.raises(InputError, match="state x="):
            nist.excursion_state_probabilities(bad)
    with pytest.raises(InputError, match="constants='exact'"):
        nist.excursion_state_probabilities(1, "exact")


# Output of NIST sts-2.1.2 (unmodified sts-2_1-2.zip, github terrillmoore/NIST-Statistical-
# Test-Suite commit 07cd577, built with gcc -O2) on the first 10^6 bits of data.e, all tests,
# default parameters: experiments/AlgorithmTesting/RandomExcursions[Variant]/results.txt.
# The eight excursion values are also those of case c13 (shared/cases/README.md).
STS_DATA_E_EXCURSIONS = {
    -4: "0.573306", -3: "0.197996", -2: "0.164011", -1: "0.007779",
    1: "0.786868", 2: "0.440912", 3: "0.797854", 4: "0.778186",
}
STS_DATA_E_VARIANT = {
    -9: "0.858946", -8: "0.794755", -7: "0.576249", -6: "0.493417", -5: "0.633873",
    -4: "0.917283", -3: "0.934708", -2: "0.816012", -1: "0.826009",
    1: "0.137861", 2: "0.200642", 3: "0.441254", 4: "0.939291", 5: "0.505683",
    6: "0.445935", 7: "0.512207", 8: "0.538635", 9: "0.593930",
}


def test_c13_random_excursions_data_e_all_states_equal_sts():
    """Case c13: x = -2 gave 0.111373 and x = +2 0.279909 with the wrong |x| = 2 row."""
    res = nist.random_excursions(_load("e"))
    assert [r.details["x"] for r in res] == [-4, -3, -2, -1, 1, 2, 3, 4]
    assert {r.details["x"]: f"{r.pvalue:.6f}" for r in res} == STS_DATA_E_EXCURSIONS
    assert all(r.details["J"] == 1490 for r in res)
    corrected = nist.random_excursions(_load("e"), constants="corrected")
    for r, c in zip(res, corrected):                # the two tables differ by <= 1.04e-10
        assert c.pvalue == pytest.approx(r.pvalue, abs=1e-7)
        assert "corrected" in c.method and "reference" in r.method


def test_c13_random_excursions_variant_data_e_all_states_equal_sts():
    res = nist.random_excursions_variant(_load("e"))
    assert {r.details["x"]: f"{r.pvalue:.6f}" for r in res} == STS_DATA_E_VARIANT


def test_c13_cli_data_e_excursions(tmp_path, cli):
    """The case's own command: rngcert bits data.e --format ascii --streams 1 --length 10^6."""
    import json as _json

    res = cli("bits", DATA / "data.e", "--format", "ascii", "--streams", "1", "--length", "1000000", "--json", "--no-plots", "--processes", "1",
              "--out", tmp_path)
    tests = {t["name"]: t for t in _json.loads(res.output)["tables"][0]["battery"]["tests"]}
    for x, want in STS_DATA_E_EXCURSIONS.items():
        assert f"{tests[f'nist_random_excursions[x={x}]']['pvalue']:.6f}" == want


# ---- Appendix B --------------------------------------------------------------------------------

APPB_NAMES = {
    "frequency": "nist_frequency", "block_frequency_M128": "nist_block_frequency",
    "cusum_forward": "nist_cumulative_sums[forward]",
    "cusum_reverse": "nist_cumulative_sums[reverse]", "runs": "nist_runs",
    "longest_run": "nist_longest_run", "rank": "nist_rank", "dft": "nist_dft",
    "non_overlapping_template_000000001": "nist_non_overlapping_template[000000001]",
    "overlapping_template_m9": "nist_overlapping_template", "universal": "nist_universal",
    "approximate_entropy_m10": "nist_approximate_entropy",
    "random_excursions_x+1": "nist_random_excursions[x=1]",
    "random_excursions_variant_x-1": "nist_random_excursions_variant[x=-1]",
    "linear_complexity_M500": "nist_linear_complexity", "serial_m16_p1": "nist_serial[1]",
}
# Erratum: Appendix B prints 0.669887 / 0.724266 for the cusum test on data.e; the formula of
# section 2.13.4 (and sts-2.1.2's code, replicated term by term below) gives 0.6698865 /
# 0.7242653 for the same z (956, 898). They agree to 1e-6, not to 6 rounded decimals.
CUSUM_E_TOL = 1e-6


@pytest.fixture(scope="module", params=["e", "pi"])
def appendix_b(request):
    bits = _load(request.param)
    before = bits.copy()
    res = {r.name: r for r in nist.run_sp800_22(bits)}
    np.testing.assert_array_equal(bits, before)              # input never modified
    return request.param, bits, res


def test_appendix_b(appendix_b):
    name, _, res = appendix_b
    for key, want in REF["appendix_b"][name].items():
        r = res[APPB_NAMES[key]]
        tol = CUSUM_E_TOL if (name == "e" and key.startswith("cusum")) else 5e-7
        assert r.pvalue == pytest.approx(want, abs=tol), key
        assert r.method.startswith("asymptotic")


def test_appendix_b_battery_shape(appendix_b):
    _, bits, res = appendix_b
    assert len(res) == 188
    assert list(res) == [nm for names in nist.test_names().values() for nm in names]
    for r in res.values():
        assert r.applicable and 0.0 <= r.pvalue <= 1.0 and r.n == 1_000_000
    assert res["nist_frequency"].requirement.value == "uniformity"
    assert res["nist_runs"].requirement.value == "independence"
    assert res["nist_longest_run"].details["constants"] == "reference"


def test_cusum_e_sts_replica():
    """sts-2.1.2 cumulativeSums.c arithmetic, term by term with libm erf, for z = 956, 898."""
    def phi(x):
        return 0.5 * (1 + math.erf(x / math.sqrt(2))) if x > 0 else 0.5 * (1 - math.erf(-x / math.sqrt(2)))

    def cdiv(a, d):
        q = abs(a) // abs(d)
        return q if (a >= 0) == (d >= 0) else -q

    def sts(z, n):
        s1 = s2 = 0.0
        for k in range(cdiv(cdiv(-n, z) + 1, 4), cdiv(cdiv(n, z) - 1, 4) + 1):
            s1 += phi((4 * k + 1) * z / math.sqrt(n)) - phi((4 * k - 1) * z / math.sqrt(n))
        for k in range(cdiv(cdiv(-n, z) - 3, 4), cdiv(cdiv(n, z) - 1, 4) + 1):
            s2 += phi((4 * k + 3) * z / math.sqrt(n)) - phi((4 * k + 1) * z / math.sqrt(n))
        return 1 - s1 + s2

    res = nist.cumulative_sums(_load("e"))
    assert [r.statistic for r in res] == [956, 898]
    for r in res:
        assert r.pvalue == pytest.approx(sts(int(r.statistic), 1_000_000), abs=1e-12)


def test_corrected_constants_differ_and_are_labelled(appendix_b):
    _, bits, _ = appendix_b
    res = {r.name: r for r in nist.run_sp800_22(bits, constants="corrected",
                                                tests=["longest_run", "overlapping_template"])}
    for nm in ("nist_longest_run", "nist_overlapping_template"):
        assert res[nm].details["constants"] == "corrected"
        assert "corrected" in res[nm].method


# ---- constants and closed forms ----------------------------------------------------------------

def test_overlapping_corrected_probabilities_match_hamano_kaneko():
    pi = nist.overlapping_class_probabilities(9, 1032, 5, "corrected")
    np.testing.assert_allclose(pi, [0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865],
                               atol=1e-6)
    assert pi.sum() == pytest.approx(1.0)


def test_overlapping_exact_probabilities_brute_force():
    """Exact DP against enumeration of all 2^12 sequences (m = 2, M = 12, K = 5)."""
    m, M, K = 2, 12, 5
    counts = np.zeros(K + 1)
    for v in range(1 << M):
        s = format(v, f"0{M}b")
        w = sum(s[i:i + m] == "1" * m for i in range(M - m + 1))
        counts[min(w, K)] += 1
    np.testing.assert_allclose(nist.overlapping_class_probabilities(m, M, K, "corrected"),
                               counts / (1 << M), atol=1e-14)


@pytest.mark.parametrize("M", [8, 128])
def test_longest_run_reference_constants_close_to_exact(M):
    _, ref = nist.longest_run_class_probabilities(M, "reference")
    _, exact = nist.longest_run_class_probabilities(M, "corrected")
    np.testing.assert_allclose(ref, exact, atol=1e-8)


def test_longest_run_exact_m8_brute_force():
    V, pi = nist.longest_run_class_probabilities(8, "corrected")
    runs = [max((len(r) for r in format(v, "08b").split("0")), default=0) for v in range(256)]
    cls = np.clip(runs, V[0], V[-1]) - V[0]
    np.testing.assert_allclose(pi, np.bincount(cls, minlength=4) / 256, atol=1e-15)


def test_rank_probabilities_closed_form():
    p = nist.rank_probabilities(32, 32)
    # SP 800-22 section 3.5: 0.2888, 0.5776, 0.1336
    np.testing.assert_allclose(p, [0.2888, 0.5776, 0.1336], atol=1e-4)
    # brute force over all 3x3 binary matrices
    from rngcert.stats.nist.rank import gf2_rank_rows
    rows = np.array([[(v >> 6) & 7, (v >> 3) & 7, v & 7] for v in range(512)], dtype=np.uint64)
    r = gf2_rank_rows(rows, 3)
    np.testing.assert_allclose(nist.rank_probabilities(3, 3),
                               [np.mean(r == 3), np.mean(r == 2), np.mean(r <= 1)], atol=1e-15)


def test_rank_gf2_against_reference_elimination():
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 2 ** 32, size=(300, 32), dtype=np.uint64)
    rows[:50, 5] = rows[:50, 3] ^ rows[:50, 7]                # forced dependencies
    rows[50:60, :] &= np.uint64(0xFFFF)

    def rank_ref(rs):
        rs = [int(v) for v in rs]
        r = 0
        for bit in range(31, -1, -1):
            piv = next((i for i in range(r, len(rs)) if rs[i] >> bit & 1), None)
            if piv is None:
                continue
            rs[r], rs[piv] = rs[piv], rs[r]
            for i in range(len(rs)):
                if i != r and rs[i] >> bit & 1:
                    rs[i] ^= rs[r]
            r += 1
        return r

    from rngcert.stats.nist.rank import gf2_rank_rows
    assert gf2_rank_rows(rows, 32).tolist() == [rank_ref(r) for r in rows]


def test_berlekamp_massey_against_scalar_implementation():
    def bm(s):
        n = len(s)
        c, bb = [0] * (n + 1), [0] * (n + 1)
        c[0] = bb[0] = 1
        L, m = 0, -1
        for N in range(n):
            d = s[N]
            for i in range(1, L + 1):
                d ^= c[i] & s[N - i]
            if d:
                t = c[:]
                for i in range(0, n - N + m):
                    c[N - m + i] ^= bb[i]
                if 2 * L <= N:
                    L, m, bb = N + 1 - L, N, t
        return L

    rng = np.random.default_rng(11)
    blocks = rng.integers(0, 2, size=(40, 150), dtype=np.uint8)
    blocks[0] = 0
    blocks[1, :] = 0
    blocks[1, -1] = 1
    blocks[2] = np.tile([1, 0, 1, 1, 0], 30)
    got = nist.berlekamp_massey_blocks(blocks)
    assert got.tolist() == [bm(list(map(int, r))) for r in blocks]
    assert got[0] == 0 and got[1] == 150


def test_aperiodic_templates_148_deterministic():
    t = nist.aperiodic_templates(9)
    assert len(t) == 148 and t[0] == "000000001" and t[1] == "000000011" and t[-1] == "111111110"
    assert t == sorted(t) and t == nist.aperiodic_templates(9)
    assert [len(nist.aperiodic_templates(m)) for m in range(2, 9)] == [2, 4, 6, 12, 20, 40, 74]


def test_template_counts_against_greedy_scan():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, 20_000, dtype=np.uint8)
    res = nist.non_overlapping_template(x, m=4, N=4)
    s = "".join(map(str, x))
    M = x.size // 4
    for r in res:
        tpl = r.details["template"]
        W = []
        for j in range(4):
            blk, i, w = s[j * M:(j + 1) * M], 0, 0
            while i <= M - 4:
                if blk[i:i + 4] == tpl:
                    w, i = w + 1, i + 4
                else:
                    i += 1
            W.append(w)
        assert list(r.details["W"]) == W


# ---- scipy cross-checks ------------------------------------------------------------------------

def test_frequency_matches_scipy_normal_and_binomtest():
    x = np.random.default_rng(2).integers(0, 2, 5000, dtype=np.uint8)
    r = nist.frequency(x)
    z = abs(2 * x.sum() - x.size) / math.sqrt(x.size)
    assert r.pvalue == pytest.approx(2 * stats.norm.sf(z), rel=1e-12)
    # the normal approximation is close to the exact binomial test
    assert r.pvalue == pytest.approx(stats.binomtest(int(x.sum()), x.size).pvalue, abs=0.02)


def test_serial_and_apen_match_scipy_chi2():
    x = np.random.default_rng(4).integers(0, 2, 4096, dtype=np.uint8)
    s1, s2 = nist.serial(x, m=5)
    assert s1.pvalue == pytest.approx(stats.chi2.sf(s1.statistic, 2 ** 4), rel=1e-10)
    assert s2.pvalue == pytest.approx(stats.chi2.sf(s2.statistic, 2 ** 3), rel=1e-10)
    a = nist.approximate_entropy(x, m=3)
    assert a.pvalue == pytest.approx(stats.chi2.sf(a.statistic, 2 ** 3), rel=1e-10)


def test_block_frequency_matches_scipy_chi2():
    x = np.random.default_rng(6).integers(0, 2, 12_800, dtype=np.uint8)
    r = nist.block_frequency(x, M=128)
    assert r.pvalue == pytest.approx(stats.chi2.sf(r.statistic, 100), rel=1e-10)


def test_cusum_matches_brownian_maximum_law():
    """The cusum p-value is P(max|W| >= z) of Brownian motion, a series; compare with the
    independent theta-series form sum_k (-1)^k 4/(pi(2k+1)) exp(-pi^2 (2k+1)^2 n / (8 z^2))."""
    x = np.random.default_rng(8).integers(0, 2, 200_000, dtype=np.uint8)
    for r in nist.cumulative_sums(x):
        z, n = r.statistic, x.size
        k = np.arange(200)
        cdf = np.sum((-1.0) ** k * 4 / (math.pi * (2 * k + 1))
                     * np.exp(-math.pi ** 2 * (2 * k + 1) ** 2 * n / (8 * z ** 2)))
        assert r.pvalue == pytest.approx(1 - cdf, abs=2e-3)
