"""A bits run too large for the machine's memory (``--streams 1 --length 1000000000`` under an 8 GB limit): each
SP 800-22 section's MemoryError was recorded as a test error and the stream re-raised them as one RuntimeError, so
the command ended with exit 1, "internal error ... please report it", where the README promises exit 3, "not enough
memory" (as certify says)."""

from __future__ import annotations

import json

import pytest
from _support import run_cli


@pytest.mark.parametrize("as_json", [False, True])
def test_bits_out_of_memory_in_a_section_is_exit_3(monkeypatch, tmp_path, as_json):
    import rngcert.stats.nist as nist

    real = nist.run_section

    def dft_without_memory(view, key):
        if key == "dft":
            raise MemoryError
        return real(view, key)

    monkeypatch.setattr(nist, "run_section", dft_without_memory)
    args = ["bits", "--source", "pcg64", "--streams", "1", "--length", "2000", "--seed", "1", "--workers", "1",
            "--no-plots", "--out", str(tmp_path)] + (["--json"] if as_json else [])
    res = run_cli(*args)
    assert res.exit_code == 3, res.output
    assert "not enough memory" in res.stderr and "internal error" not in res.stderr, res.stderr
    if as_json:
        assert json.loads(res.stdout)["exit_code"] == 3


def test_bits_help_lists_every_exit_code_bits_can_return(tmp_path):
    """``bits --standard nosuch.toml`` is exit 4 (and Ctrl-C 130, SIGTERM 143); its --help listed 0, 10-12, 3, 2 and 1 only."""
    assert run_cli("bits", "--source", "pcg64", "--streams", "2", "--length", "1000", "--standard", str(tmp_path / "nosuch.toml"),
                   "--no-plots", "--out", str(tmp_path)).exit_code == 4
    text = " ".join(run_cli("bits", "--help").output.split())
    assert "4 equipment error" in text and "130 stopped by Ctrl-C" in text and "143 stopped by SIGTERM" in text, text
