"""The Python API checks its options as the command line does (one table, pipeline.options._RANGES):
a break test found ``n_resamples=5`` accepted by the API (the CLI wants >= 99) and ``alpha="0.05"``
failing deep inside with a bare numpy TypeError.

Runtime budget: under 1 s (every bad value is refused before any work).
"""

from __future__ import annotations

import numpy as np
import pytest

import rngcert
from rngcert.errors import InputError
from rngcert.pipeline.certify_bits import certify_streams
from rngcert.pipeline.certify_shuffle import certify_procedure
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.pipeline.options import BitsOptions, CertifyOptions, ShuffleOptions
from rngcert.stats import holm

SPINS = np.random.default_rng(7).integers(0, 37, 50)

# (keyword, bad value, error, words of the message): a value out of range is a ValueError (InputError), a value of the
# wrong type a TypeError; both name the argument and the range the command line allows
BAD = [
    ("n_resamples", 5, ValueError, "n_resamples must be an integer >= 99, got 5"),
    ("n_resamples", 98, ValueError, ">= 99"),
    ("n_resamples", 999.5, TypeError, "n_resamples must be an integer >= 99"),
    ("alpha", "0.05", TypeError, "alpha must be a number in (0, 1), got '0.05' (str)"),
    ("alpha", 0.0, ValueError, "alpha must be in (0, 1), got 0.0"),
    ("alpha", 1.0, ValueError, "alpha must be in (0, 1), got 1.0"),
    ("alpha", float("nan"), ValueError, "in (0, 1)"),
    ("power", 1.5, ValueError, "power must be in (0, 1), got 1.5"),
    ("required_bias", 0.0, ValueError, "required_bias must be > 0, got 0.0"),
    ("required_bias", "20%", TypeError, "required_bias must be a number > 0 or None"),
    ("seed", -1, ValueError, "seed must be an integer >= 0"),
    ("seed", True, TypeError, "seed must be an integer >= 0"),
]


@pytest.mark.parametrize("key, value, err, words", BAD)
def test_certify_outcomes_refuses_what_the_cli_refuses(key, value, err, words):
    with pytest.raises(err) as exc:
        rngcert.certify_outcomes(SPINS, **{key: value})
    assert str(exc.value).startswith("certify_outcomes(): ") and words in str(exc.value)
    if err is ValueError:
        assert isinstance(exc.value, InputError)  # an input error: exit 3 where a command meets it


@pytest.mark.parametrize("key, value, err, words", BAD)
def test_certify_log_and_the_options_object_refuse_alike(tmp_path, key, value, err, words):
    p = tmp_path / "log.csv"
    p.write_text("result\n" + "\n".join(map(str, SPINS.tolist())) + "\n")
    with pytest.raises(err, match=r"^certify_log\(\): ") as exc:
        certify_log([p], "european", **{key: value})
    assert words in str(exc.value)
    with pytest.raises(err):
        CertifyOptions(**{key: value})


def test_shuffle_and_bits_options_have_the_same_ranges():
    with pytest.raises(ValueError, match=r"^certify_procedure\(\): n_resamples must be an integer >= 99, got 19"):
        certify_procedure("baccarat-004", tables=10, n_resamples=19)
    with pytest.raises(TypeError, match="alpha must be a number in"):
        ShuffleOptions(alpha="0.01")
    with pytest.raises(ValueError, match="min_edge must be > 0"):
        ShuffleOptions(min_edge=-0.01)
    with pytest.raises(ValueError, match=r"^certify_streams\(\): alpha must be in \(0, 1\), got 2"):
        certify_streams([np.zeros(128, np.uint8)], source="zeros", alpha=2)
    with pytest.raises(ValueError, match="max_rejected_share must be in \\[0, 1\\], got 1.5"):
        CertifyOptions(max_rejected_share=1.5)
    # numpy numbers are numbers, stored as the Python numbers the report's JSON holds
    o = CertifyOptions(n_resamples=np.int64(199), alpha=np.float32(0.05), seed=np.uint32(3))
    assert type(o.n_resamples) is int and type(o.alpha) is float and type(o.seed) is int
    assert o.n_resamples == 199 and o.seed == 3 and BitsOptions(alpha=0.001).alpha == 0.001


def test_holm_names_a_bad_alpha():
    with pytest.raises(TypeError, match=r"alpha must be a number in \(0, 1\), got '0.05' \(str\)"):
        holm([0.01, 0.2], alpha="0.05")
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 5"):
        holm([0.01, 0.2], alpha=5)


def test_statistics_name_a_bad_level_alike():
    """The statistics that take a level or a power check it with the same function (rngcert.stats.params)."""
    from rngcert.stats.frequency import pocket_binomial
    from rngcert.stats.power.planning import spins_needed
    from rngcert.stats.sequential import detector_threshold

    with pytest.raises(TypeError, match=r"alpha must be a number in \(0, 1\), got '0.05' \(str\)"):
        spins_needed(37, "single-pocket", 0.2, alpha="0.05")
    with pytest.raises(TypeError, match=r"power must be a number in \(0, 1\), got '90%'"):
        spins_needed(37, "single-pocket", 0.2, power="90%")
    with pytest.raises(ValueError, match=r"power must be in \(alpha, 1\)"):
        spins_needed(37, "single-pocket", 0.2, alpha=0.5, power=0.4)
    with pytest.raises(TypeError, match=r"alpha must be a number in \(0, 1\)"):
        detector_threshold("0.01", 1000, 10)
    with pytest.raises(ValueError, match=r"pocket_binomial_holm: alpha must be in \(0, 1\), got 0"):
        pocket_binomial(np.full(37, 10), alpha=0)
