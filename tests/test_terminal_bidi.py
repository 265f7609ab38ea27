"""Unicode bidirectional controls in text read from a log are shown as code points on a terminal, as in the HTML
report (a right-to-left override in a table id would make the verdict line read backwards where the terminal
implements the bidirectional algorithm); a pipe gets the text as read."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import numpy as np

from rngcert.cli._common import _VisibleBidi, show_bidi_on_terminals
from rngcert.report.bidi import visible_bidi

RLO = "\u202e"


def test_visible_bidi_names_every_control_and_keeps_other_text():
    assert visible_bidi(f"T{RLO}LIAF1") == "T[U+202E]LIAF1"
    assert visible_bidi("Tisch \u00e9t\u00e9 \u05d0") == "Tisch \u00e9t\u00e9 \u05d0"  # letters of any script stay
    assert visible_bidi("\u2066a\u2069\u200f\u061c") == "[U+2066]a[U+2069][U+200F][U+061C]"


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_only_terminals_are_wrapped_once(monkeypatch):
    out, err = _Tty(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    show_bidi_on_terminals()
    show_bidi_on_terminals()
    assert isinstance(sys.stdout, _VisibleBidi) and not isinstance(sys.stdout._stream, _VisibleBidi)
    assert sys.stderr is err
    sys.stdout.write(f"table T{RLO}LIAF1: PASS\n")
    assert out.getvalue() == "table T[U+202E]LIAF1: PASS\n"


def _log(path) -> None:
    x = np.random.default_rng(3).integers(0, 37, 400)
    path.write_text("table,result\n" + "".join(f"T{RLO}LIAF1,{v}\n" for v in x), encoding="utf-8")


def test_certify_on_a_terminal_shows_the_control(tmp_path):
    """A real terminal (a pty): the summary shows [U+202E]; piped, the same command prints the text as read."""
    log = tmp_path / "rlo.csv"
    _log(log)
    cmd = [sys.executable, "-m", "rngcert", "certify", str(log), "--seed", "1", "--no-plots", "--resamples", "99", "--workers", "1",
           "--out", str(tmp_path / "out")]
    env = dict(os.environ, COLUMNS="200")
    env.pop("CI", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not b:
            break
        chunks.append(b)
    proc.wait(timeout=120)
    os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert "T[U+202E]LIAF1" in shown and RLO not in shown, shown[-2000:]
    piped = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert f"T{RLO}LIAF1" in piped.stdout and "[U+202E]" not in piped.stdout


def test_characters_that_print_as_nothing_are_shown_too():
    """A table `\\u200bT1` (a zero-width space before T1) is another table than `T1`: shown as `[U+200B]T1`, not as a
    second `T1` (the report said "table T1: 588 spins ... 12 spin_id(s) missing" and "table T1: 12 spins")."""
    assert visible_bidi("\u200bT1") == "[U+200B]T1"
    assert visible_bidi("D\u00ad1 \u2060\ufeff\u200c\u200d") == "D[U+00AD]1 [U+2060][U+FEFF][U+200C][U+200D]"


def test_the_html_report_tells_a_table_with_a_zero_width_space_apart(tmp_path, cli):
    r = np.random.default_rng(2)
    rows = "".join(f"{i},{'T1' if i % 50 != 30 else chr(0x200B) + 'T1'},{r.integers(37)}\n" for i in range(1, 601))
    (tmp_path / "zw.csv").write_text("spin_id,table,result\n" + rows, encoding="utf-8")
    res = cli("certify", tmp_path / "zw.csv", "--out", tmp_path / "out", "--seed", "1")
    assert res.exit_code in (0, 10, 11, 12), res.output
    (html,) = (tmp_path / "out").glob("*/report.html")
    assert "[U+200B]T1" in html.read_text(encoding="utf-8")
