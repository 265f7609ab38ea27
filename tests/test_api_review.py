"""Review of the Python API as a statistician uses it (2026-12-05): inputs that scipy-style code
passes (floats, DataFrames, wheel ids) are either handled as documented or refused with an error
naming the argument, never silently turned into something else."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.errors import InputError
from rngcert.seeding import stream


@pytest.mark.parametrize("bad", [1.5, 1.0, True, None, [1, 2]])
def test_stream_refuses_an_entropy_that_is_not_an_integer(bad):
    # stream(1.5, ...) was stream(1, ...): two different float seeds gave one identical stream
    with pytest.raises(TypeError, match="entropy must be a non-negative integer"):
        stream(bad, "t")


@pytest.mark.parametrize("bad", [-1, "-1", "abc", "1.5"])
def test_stream_refuses_a_negative_or_unreadable_entropy_naming_it(bad):
    with pytest.raises(InputError, match="entropy must be a non-negative integer"):
        stream(bad, "t")


def test_stream_reads_the_decimal_string_a_report_records():
    a = stream("2026", "t").integers(0, 1 << 30, 4)
    b = stream(np.int64(2026), "t").integers(0, 1 << 30, 4)
    assert (a == stream(2026, "t").integers(0, 1 << 30, 4)).all() and (a == b).all()


def test_certify_outcomes_refuses_a_dataframe_or_2d_array_naming_outcomes():
    # a (spins, 2) frame of result and dealer was flattened row by row and certified: results and
    # dealer ids interleaved as one table's spins (PASS on 7,400 "spins" of a 3,700-spin log)
    import pandas as pd

    import rngcert

    spins = np.random.default_rng(7).integers(0, 37, 3700)
    df = pd.DataFrame({"result": spins, "dealer": np.arange(3700) % 4})
    with pytest.raises(InputError, match=r"outcomes must be one-dimensional.*shape \(3700, 2\).*df\['result'\]"):
        rngcert.certify_outcomes(df, seed=1, n_resamples=99, figures=False)
    with pytest.raises(InputError, match=r"outcomes must be one-dimensional.*shape \(2, 1850\)"):
        rngcert.certify_outcomes(spins.reshape(2, -1), seed=1, n_resamples=99, figures=False)


def test_certify_log_takes_a_wheel_id_like_certify_outcomes(tmp_path):
    # certify_log(paths, "european") raised AttributeError: 'str' object has no attribute 'k'
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline.certify_wheel import certify_log

    log = tmp_path / "t1.csv"
    log.write_text("result\n" + "\n".join(map(str, np.random.default_rng(3).integers(0, 37, 2000))) + "\n")
    kw = dict(seed=2, n_resamples=99, figures=False)
    by_id = certify_log([log], "european", **kw).report["tables"][0]["battery"]["tests"]
    by_wheel = certify_log([log], load_wheel("european"), **kw).report["tables"][0]["battery"]["tests"]
    assert [(t["name"], t.get("pvalue")) for t in by_id] == [(t["name"], t.get("pvalue")) for t in by_wheel]
    with pytest.raises(TypeError, match="wheel must be a Wheel, a packaged wheel id or a TOML path, got 37"):
        certify_log([log], 37, **kw)


def test_certify_outcomes_names_the_outcomes_not_its_temporary_file():
    # errors and rejected rows named /tmp/rngcert-XXXX/outcomes.csv (gone when read) and its line,
    # not the Series and the position of the bad value in it
    import pandas as pd

    import rngcert

    s = pd.Series(np.random.default_rng(7).integers(0, 37, 3000).astype(float), name="T9")
    s.iloc[5], s.iloc[9] = np.nan, 40
    rep = rngcert.certify_outcomes(s, seed=1, n_resamples=99, figures=False).report
    assert [(r["file"], r["index"], r["text"]) for r in rep["rejected_sample"]] == [("pandas Series T9", 5, "nan"), ("pandas Series T9", 9, "40.0")]
    with pytest.raises(InputError) as e:
        rngcert.certify_outcomes(np.arange(100) + 0.5, seed=1, n_resamples=99, figures=False)
    assert str(e.value).startswith("certify_outcomes: array outcomes: no readable spin in 100 row(s)") and "rngcert-" not in str(e.value)


@pytest.mark.parametrize(("args", "error", "match"), [
    ((21, 10, 10), InputError, r"runs=21 is impossible with n0=10 and n1=10 \(a sequence of them has 2..20 runs\)"),
    ((50, 10, 10), InputError, "runs=50 is impossible"),
    ((0, 10, 10), InputError, "runs=0 is impossible"),
    ((5, -1, 4), InputError, "n0 must be >= 0, got -1"),
    ((5.5, 10, 10), TypeError, r"runs must be an integer, got 5.5 \(float\)"),
    (("5", 10, 10), TypeError, "runs must be an integer"),
])
def test_runs_test_from_counts_refuses_counts_no_sequence_has(args, error, match):
    # each of these gave a p-value (runs=21 of 10 and 10: p = 1.3e-05; n0=-1: p = 0.0053)
    from rngcert.stats import runs_test_from_counts

    with pytest.raises(error, match=match):
        runs_test_from_counts(*args)


def test_runs_test_from_counts_takes_the_extremes_and_numpy_ints():
    from statsmodels.sandbox.stats.runs import runstest_1samp

    from rngcert.stats import runs_test, runs_test_from_counts

    seq = np.array([0, 1] * 30 + [0])  # 61 runs of 31 zeros and 30 ones: the most there can be
    res = runs_test_from_counts(np.int64(61), np.int64(31), np.int64(30))
    assert (res.statistic, res.pvalue) == tuple(runs_test(seq))
    assert res.statistic == pytest.approx(runstest_1samp(seq, cutoff=0.5)[0], rel=1e-12)
    assert runs_test_from_counts(2, 5, 7).applicable and not runs_test_from_counts(1, 0, 7).applicable


@pytest.mark.parametrize(("pvalues", "error", "match"), [
    (["0.001", "0.2"], TypeError, "holm: pvalues must be numbers, got dtype <U5"),
    ([0.001, None], TypeError, "holm: pvalues must be numbers, got dtype object"),
    ([True, False], TypeError, "holm: pvalues must be numbers, got dtype bool"),
    ([0.2, float("nan")], ValueError, r"holm: pvalues must lie in \[0, 1\], found nan at index 1 \(1 outside\)"),
    ([0.1, 1.5, -1.0], ValueError, r"found 1.5 at index 1 \(2 outside\)"),
])
def test_holm_names_the_bad_pvalue(pvalues, error, match):
    # strings were read as numbers (holm(["0.001", "0.2"]) rejected the first), None as NaN and the
    # error said only "p-values must lie in [0, 1]", True was p = 1
    from rngcert.stats import holm

    with pytest.raises(error, match=match):
        holm(pvalues, alpha=0.05)


def test_holm_still_agrees_with_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from rngcert.stats import holm

    p = np.random.default_rng(1).random(30) ** 3
    reject, adjusted = holm(list(p), alpha=0.05)
    ref = multipletests(p, alpha=0.05, method="holm")
    assert (reject == ref[0]).all() and np.allclose(adjusted, ref[1], rtol=1e-12, atol=0)


def test_runs_test_reads_a_boolean_mask_as_zeros_and_ones():
    # runs_test(np.isin(spins, red)) raised "must hold integer category ids, got dtype bool"
    import pandas as pd
    from statsmodels.sandbox.stats.runs import runstest_1samp

    from rngcert.stats import runs_test

    mask = np.random.default_rng(4).random(300) < 0.5
    res = runs_test(pd.Series(mask))
    assert tuple(res) == tuple(runs_test(mask.astype(int)))
    assert (res.statistic, res.pvalue) == pytest.approx(runstest_1samp(mask.astype(float), cutoff=0.5), rel=1e-12)


def test_shuffle_tests_name_rows_of_different_lengths():
    # a ragged list of shoes raised numpy's "setting an array element with a sequence ... inhomogeneous shape"
    from rngcert.stats import rank_correlation, rising_sequences

    for f in (rising_sequences, rank_correlation):
        with pytest.raises(InputError, match=r"perm must be an integer array \(n_shoes, n_cards >= 2\): its rows have different lengths \[2, 3\]"):
            f([[0, 1, 2], [1, 0]])


def test_certify_procedure_takes_a_procedure_id():
    # certify_procedure("baccarat-004") raised AttributeError: 'str' object has no attribute 'kind'
    import json

    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle import certify_procedure

    kw = dict(tables=20, first_shoe=False, seed=3, figures=False)
    by_id = certify_procedure("baccarat-004", **kw).report
    by_proc = certify_procedure(load_procedure("baccarat-004"), **kw).report
    drop = ("generated_utc",)
    assert json.dumps({k: v for k, v in by_id.items() if k not in drop}, sort_keys=True, default=str) == json.dumps(
        {k: v for k, v in by_proc.items() if k not in drop}, sort_keys=True, default=str)
    with pytest.raises(TypeError, match="proc must be a Procedure, a packaged procedure id or a TOML path, got 4"):
        certify_procedure(4, **kw)


def test_homogeneity_takes_a_transposed_nullable_frame_and_names_a_bad_count():
    # pd.DataFrame of Int64 columns, transposed (object dtype), was "table must hold non-negative
    # integer counts" (they were); a NaN or -1 was the same message without the function, value or cell
    import pandas as pd
    from scipy.stats import chi2_contingency

    from rngcert.stats import homogeneity_chisquare

    g = np.random.default_rng(9)
    t = np.stack([g.multinomial(740, np.full(37, 1 / 37)) for _ in range(2)])
    frame = pd.DataFrame({"D1": pd.Series(t[0], dtype="Int64"), "D2": pd.Series(t[1], dtype="Int64")}).T
    res = homogeneity_chisquare(frame, method="asymptotic")
    ref = chi2_contingency(t[:, t.sum(axis=0) > 0], correction=False)
    assert (res.statistic, res.pvalue, res.df) == pytest.approx((ref.statistic, ref.pvalue, ref.dof), rel=1e-12)
    bad = t.astype(float)
    bad[1, 4] = np.nan
    with pytest.raises(InputError, match=r"pocket_homogeneity: table must hold non-negative integer counts, found nan at row 1, column 4"):
        homogeneity_chisquare(bad)
    with pytest.raises(InputError, match=r"found -1 at row 0, column 0"):
        homogeneity_chisquare(np.r_[[[-1] + [1] * 36], t[1:]])


def test_certify_outcomes_rejects_csv_names_the_outcomes(tmp_path):
    # rejects.csv written by .write() named /tmp/rngcert-XXXX/T9.csv, a file gone by then
    import pandas as pd

    import rngcert

    s = pd.Series(np.random.default_rng(7).integers(0, 37, 3000).astype(float), name="T9")
    s.iloc[5] = np.nan
    paths = rngcert.certify_outcomes(s, seed=1, n_resamples=99, figures=False).write(tmp_path)
    assert paths["rejects"].read_text().splitlines()[1:] == ["pandas Series T9,7,result (column 1),''nan' is not a pocket/section of wheel 'european',nan"]


def test_max_count_refuses_a_single_position():
    # max_count([10]) gave statistic nan and p-value 2.2e-16 (z = 0/0): a FAIL-sized p for nothing
    from rngcert.stats import max_count

    with pytest.raises(InputError, match=r"max_count: needs k >= 2 positions, got k=1"):
        max_count([10])
    assert max_count([6, 4]).pvalue == pytest.approx(2 * 0.376953125)  # P(O1 >= 6 or O2 >= 6), disjoint, Bin(10, 1/2)


def test_every_curated_function_documents_parameters_returns_and_examples():
    # g_test said "Parameters and returns as pocket_chisquare" and riffle_tv_distance had neither section
    import inspect

    from rngcert import stats

    missing = {n: [h for h in ("Parameters\n", "Returns\n", "Examples\n") if h not in inspect.getdoc(getattr(stats, n))]
               for n in stats.__all__ if inspect.isfunction(getattr(stats, n))}
    assert {n: m for n, m in missing.items() if m} == {}
