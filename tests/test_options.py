"""One options object per certification (issue 27 item 2): built once, passed down, and the
keyword spelling of the Python API still works and gives the same report."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.pipeline.options import BitsOptions, CertifyOptions, ShuffleOptions


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("opts") / "T1.csv"
    spins = np.random.default_rng(27).integers(0, 37, 1500)
    p.write_text("result\n" + "\n".join(map(str, spins.tolist())) + "\n")
    return p


def _stats(cert):
    return [(x["name"], x.get("statistic"), x.get("pvalue")) for x in cert.report["tables"][0]["battery"]["tests"]]


def test_options_object_and_keywords_give_the_same_report(log_path):
    wheel = load_wheel("european")
    a = certify_log([log_path], wheel, seed=3, n_resamples=199, alpha=0.05, figures=False)
    opts = CertifyOptions(seed=3, n_resamples=199, alpha=0.05, figures=False)
    b = certify_log([log_path], wheel, options=opts)
    # keywords beside the object replace its fields
    c = certify_log([log_path], wheel, options=opts.replace(alpha=0.01), alpha=0.05)
    assert _stats(a) == _stats(b) == _stats(c)
    assert a.report["rerun"] == b.report["rerun"] == c.report["rerun"]
    assert a.report["rerun"]["alpha"] == 0.05 and a.report["rerun"]["n_resamples"] == 199


def test_unknown_keyword_and_wrong_object_are_type_errors(log_path):
    wheel = load_wheel("european")
    with pytest.raises(TypeError, match="certify_log.*'n_resample'"):
        certify_log([log_path], wheel, n_resample=199)
    with pytest.raises(TypeError, match="options must be a CertifyOptions"):
        certify_log([log_path], wheel, options=ShuffleOptions())


@pytest.mark.parametrize("cls", [CertifyOptions, ShuffleOptions, BitsOptions])
def test_options_are_frozen(cls):
    o = cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.alpha = 0.5  # type: ignore[misc]
    assert o.replace(alpha=0.05).alpha == 0.05 and o.alpha == 0.01


def test_bits_options_object_and_keywords_give_the_same_report():
    from rngcert.pipeline.certify_bits import certify_streams
    from rngcert.simulate import sources

    arr = sources.generate_bits("pcg64", 20_000, seed=np.random.SeedSequence(1), streams=3)
    src = {"generator": "pcg64", "seed_entropy": "1"}
    a = certify_streams(arr, source=src, seed_entropy=1, figures=False).report
    b = certify_streams(arr, source=src, options=BitsOptions(seed_entropy=1, figures=False)).report
    assert a["verdict"] == b["verdict"] and a["tables"] == b["tables"] and a["seed"] == b["seed"]


def test_shuffle_pipeline_refuses_an_unknown_option_before_it_simulates():
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle import certify_procedure

    with pytest.raises(TypeError, match="certify_procedure.*'resamples'"):
        certify_procedure(load_procedure("baccarat-004"), tables=10, resamples=99)
    with pytest.raises(TypeError, match="options must be a ShuffleOptions"):
        certify_procedure(load_procedure("baccarat-004"), tables=10, options=CertifyOptions())
