"""The Python API a statistician already knows: `from rngcert.stats import ...`, results that unpack
as (statistic, pvalue) with a short repr and an HTML table, `rngcert.certify_outcomes` giving the
CLI's report, and the numpydoc Examples run as doctests."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from scipy import stats as sps

import rngcert
from rngcert import stats
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log

#: modules whose Examples are doctest-clean (run here, with the normal test command)
DOCTEST_MODULES = ("rngcert", "rngcert.stats", "rngcert.stats.result", "rngcert.seeding", "rngcert.stats.frequency", "rngcert.stats.sector",
                   "rngcert.stats.tally")


@pytest.mark.parametrize("name", DOCTEST_MODULES)
def test_examples_run_as_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert res.attempted > 0 and res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples failed"


def test_curated_api_is_importable_and_documented():
    for name in stats.__all__:
        obj = getattr(stats, name)
        assert obj.__doc__, name
        assert f":func:`{name}`" in stats.__doc__ or f":class:`{name}`" in stats.__doc__, name
    from rngcert.stats import pocket_chisquare, runs_test, sector_scan  # noqa: F401
    with pytest.raises(AttributeError):
        stats.not_a_test  # noqa: B018


def test_results_unpack_like_scipy():
    counts = np.array([30, 22, 25, 31, 17, 25])
    stat, p = stats.pocket_chisquare(counts)
    ref = sps.chisquare(counts)
    assert stat == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    res = stats.pocket_chisquare(counts)
    assert res[0] == stat and res[1] == p and len(res) == 2
    r = repr(res)
    assert r.startswith("TestResult(pocket_chisquare:") and "[" not in r and len(r) < 120  # no arrays dumped
    html = res._repr_html_()
    assert html.startswith("<table") and "pocket_chisquare" in html and "p-value" in html
    # runs_test needs no name=; a constant sequence is not applicable and cannot be unpacked
    assert stats.runs_test([0, 1, 1, 0, 1, 0, 0, 1]).name == "runs"
    na = stats.runs_test([1, 1, 1])
    assert not na.applicable and "NotApplicable(runs" in repr(na) and "<table" in na._repr_html_()
    with pytest.raises(ValueError, match="not applicable"):
        _, _ = na


def test_certify_outcomes_gives_the_cli_report(tmp_path):
    spins = np.random.default_rng(11).integers(0, 37, 2500)
    cert = rngcert.certify_outcomes(spins, "european", table="T9", seed=4, n_resamples=199, figures=False)
    # the same values as a log file through the command's path
    log = tmp_path / "T9.csv"
    log.write_text("result\n" + "\n".join(map(str, spins.tolist())) + "\n")
    ref = certify_log([log], load_wheel("european"), seed=4, n_resamples=199, figures=False)
    a, b = cert.report["tables"][0], ref.report["tables"][0]
    assert a["table"] == b["table"] == "T9" and a["counts"] == b["counts"]
    assert [(x["name"], x.get("statistic"), x.get("pvalue")) for x in a["battery"]["tests"]] == [(x["name"], x.get("statistic"), x.get("pvalue")) for x in b["battery"]["tests"]]
    assert cert.report["inputs"][0]["sha256"] == ref.report["inputs"][0]["sha256"]
    assert cert.verdict == ref.verdict and set(cert.report) - {"rerun"} >= set(ref.report) - {"rerun"}
    assert "<table>" in cert._repr_html_() and cert.verdict in repr(cert)
    paths = cert.write(tmp_path / "out")
    assert paths["json"].is_file() and paths["html"].is_file()


def test_certify_outcomes_takes_a_pandas_series_of_labels():
    pd = pytest.importorskip("pandas")
    labels = [str(x) for x in np.random.default_rng(2).integers(0, 37, 1200)]
    s = pd.Series(labels, name="wheel-7")
    cert = rngcert.certify_outcomes(s, "european", seed=1, n_resamples=199, figures=False)
    (t,) = cert.report["tables"]
    assert t["table"] == "wheel-7" and t["n"] == 1200 and "pandas Series" in cert.report["inputs"][0]["path"]
    with pytest.raises(ValueError, match="no outcomes"):
        rngcert.certify_outcomes([], "european")
