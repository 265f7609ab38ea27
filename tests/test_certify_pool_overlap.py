"""What a multi-table ``certify`` does beside its local pool (issue 26 item 6): this process imports the report's
writer while the workers run the tables (``meanwhile``), never on a serial plan; the report written is the serial
run's; and the writer's seal reuses the content hash it computed for the HTML, with the same integrity block."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline import certify_wheel
from rngcert.pipeline.parallel import Plan
from rngcert.report import verify
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
# the integrity block hashes the whole report (its time and command included): compared through everything else
VOLATILE = ("generated_utc", "command", "rejects_file", "integrity")


def _log(path):
    with open(path, "wb") as fh:
        for k, n in enumerate((3000, 2500, 2000)):
            write_spin_log(fh, EU, simulate_spins(EU, n, np.random.default_rng(40 + k)), table=f"T{k}", header=k == 0)
    return path


@pytest.mark.slow
def test_the_writer_is_imported_beside_the_pool_and_the_report_is_the_serial_one(tmp_path, monkeypatch):
    log = _log(tmp_path / "log.csv")
    calls = []
    real = certify_wheel._import_writer
    monkeypatch.setattr(certify_wheel, "_import_writer", lambda: (calls.append(1), real())[1])
    reports = {}
    for workers in (1, 2):
        cert = certify_wheel.certify_log([log], EU, seed=5, n_resamples=199, plan=Plan(workers=workers), figures=True)
        paths = cert.write(tmp_path / f"w{workers}")
        assert calls == ([] if workers == 1 else [1])  # a serial run imports nothing earlier than before
        rep = json.loads(paths["json"].read_text(encoding="utf-8"))
        assert verify.content_sha256(rep) == rep["integrity"]["report_sha256"]
        reports[workers] = {k: v for k, v in rep.items() if k not in VOLATILE}
    assert reports[1] == reports[2]


def test_seal_with_the_content_hash_given_is_the_seal_that_computes_it(tmp_path):
    report = {"verdict": "PASS", "tables": [{"table": "T1", "n": 3, "p": 0.5}], "notes": ["é"]}
    f = tmp_path / "report.html"
    f.write_text("<html></html>", encoding="utf-8")
    content = verify.content_sha256(report)
    assert verify.seal(report, {"html": f}, content=content) == verify.seal(report, {"html": f})
