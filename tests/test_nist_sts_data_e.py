"""Every p-value of the SP 800-22 battery on data.e against the output of NIST sts-2.1.2.

``tests/data/sts_2_1_2_data_e.json`` holds the 188 p-values that sts-2.1.2 printed for the
first 10^6 bits of data.e (all 15 tests, default parameters), produced by
``benchmarks/bench_nist_vs_sts.py --write-json`` (see the file's ``produced_by``). With the
default ``constants="reference"`` rngcert must print the same six decimals for every one.
Runtime: about 1 s.
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from _support import shared_file, shared_path

from rngcert.collect.bits import read_bit_streams
from rngcert.stats import nist

KNOWN = json.loads((Path(__file__).parent / "data" / "sts_2_1_2_data_e.json").read_text())
DATA_E = shared_path("data", "nist-sts", "data.e")


@pytest.fixture(scope="module")
def results():
    shared_file("data", "nist-sts", "data.e")  # skips every test here, naming the file, without ../shared
    assert hashlib.sha256(DATA_E.read_bytes()).hexdigest() == KNOWN["input"]["sha256"]
    bits, _ = read_bit_streams(DATA_E, 1, KNOWN["input"]["bits"], fmt="ascii")
    return nist.run_sp800_22(bits[0])


def test_known_answers_cover_the_whole_battery(results):
    names = [nm for v in nist.test_names().values() for nm in v]
    assert list(KNOWN["pvalues"]) == names and len(names) == 188
    assert [r.name for r in results] == names


def test_every_pvalue_equals_sts_2_1_2_to_6_decimals(results):
    got = {r.name: f"{r.pvalue:.6f}" for r in results}
    diff = {nm: (got[nm], want) for nm, want in KNOWN["pvalues"].items() if got[nm] != want}
    assert not diff, diff
    # the printed values are sts's %f: equal strings mean |difference| <= 5e-7
    for r in results:
        assert abs(r.pvalue - float(KNOWN["pvalues"][r.name])) <= 5e-7 + 1e-12


def test_corrected_constants_change_only_the_labelled_tests(results):
    """With the corrected constants only longest run and overlapping template move (random
    excursions changes below the 6th decimal on data.e); everything else is unchanged."""
    cor = nist.run_sp800_22(read_bit_streams(DATA_E, 1, 1_000_000, fmt="ascii")[0][0],
                            constants="corrected")
    moved = {a.name for a, b in zip(results, cor) if f"{a.pvalue:.6f}" != f"{b.pvalue:.6f}"}
    assert moved <= {"nist_longest_run", "nist_overlapping_template"}
    assert "nist_overlapping_template" in moved
    assert np.isclose(cor[0].pvalue, results[0].pvalue)
