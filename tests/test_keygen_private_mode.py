"""`rngcert keygen` wrote the private key with the default mode (0644 under umask 022) and chmod-ed it to 0600
after: in between, any user of the machine could read the lab's signing key. The file is private from its creation,
also when --force replaces a readable file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rngcert.report import verify as vmod


def test_private_key_is_never_readable_by_others(tmp_path, monkeypatch):
    key = tmp_path / "lab.pem"
    key.write_text("old key\n")
    os.chmod(key, 0o644)  # what --force replaces
    monkeypatch.setattr(Path, "chmod", lambda self, mode: None)  # no chmod after the write: the mode is the one the file was written with
    vmod.generate_key(key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert vmod.load_private_key(key) is not None


def test_keygen_never_writes_the_public_key_over_the_private_one(tmp_path, cli):
    """`rngcert keygen lab.pub` wrote the private key to lab.pub, then the public key (lab.pub, its default name) over it,
    and printed "private key: lab.pub (keep it secret)": the signing key was lost and the message false. The same with
    --public naming the private key's file. A usage error (exit 2), and nothing is written."""
    res = cli("keygen", tmp_path / "lab.pub")
    assert res.exit_code == 2 and "same file" in res.stderr, (res.output, res.stderr)
    assert not (tmp_path / "lab.pub").exists()
    (tmp_path / "k").mkdir()
    res = cli("keygen", tmp_path / "lab.pem", "--public", tmp_path / "k" / ".." / "lab.pem")
    assert res.exit_code == 2 and not (tmp_path / "lab.pem").exists(), (res.output, res.stderr)
