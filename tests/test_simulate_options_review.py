"""``simulate wheel`` options that plant no bias: a sector or signature of the whole wheel (or wider: it wrapped onto
itself), of width 0 or negative, wrote a fair log whose metadata claimed the bias (a lab checking rngcert's power on it
would conclude a bias goes undetected). Refused now (exit 2), as the README's rule says: applied or refused, never
silently ignored. ``--mapping --word-bits 4`` on a 37-pocket wheel was exit 3; as ``scaling``, it is a usage error."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("opt", [["--sector-bias", "0:40:1.1"], ["--sector-bias", "0:37:1.1"], ["--sector-bias", "0:0:1.1"],
                                 ["--sector-bias", "0:-2:1.1"], ["--signature", "0:37:1.2"],
                                 ["--rotor", "--direction-bias", "0:37:1.2"], ["--mapping", "modulo", "--word-bits", "4"]])
def test_an_option_that_biases_nothing_is_refused(tmp_path, cli, opt):
    out = tmp_path / "s.csv"
    r = cli("simulate", "wheel", "--spins", "100", "--seed", "1", "--out", str(out), *opt)
    assert r.exit_code == 2, r.output
    assert not out.exists()


@pytest.mark.parametrize("opt", [["--sector-bias", "0:36:1.1"], ["--signature", "0:36:1.2"], ["--mapping", "modulo", "--word-bits", "6"]])
def test_the_widest_real_bias_is_still_written(tmp_path, cli, opt):
    r = cli("simulate", "wheel", "--spins", "100", "--seed", "1", "--out", str(tmp_path / "s.csv"), *opt)
    assert r.exit_code == 0, r.output
