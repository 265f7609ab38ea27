"""`audit --last N` reads its spins from the files of those spins only: the files of the spins before the cut are none of
its inputs, and their rejected rows count neither in its rejected rows nor against --max-rejected."""

from __future__ import annotations

import numpy as np

from rngcert.collect.store import Store
from rngcert.pipeline.audit import audit_table


def _write(path, first, n, bad_every=0):
    g = np.random.default_rng(first)
    with open(path, "w") as fh:
        fh.write("spin_id,table,result\n")
        for i in range(first, first + n):
            fh.write(f"{i},T,{'x' if bad_every and i % bad_every == 0 else g.integers(0, 37)}\n")


def test_last_window_inputs_are_its_own_files(tmp_path):
    _write(tmp_path / "old.csv", 1, 2000, bad_every=5)  # 400 of 2,000 rows unreadable (20%)
    _write(tmp_path / "new.csv", 2001, 6000)
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([tmp_path / "old.csv"])
        st.ingest([tmp_path / "new.csv"])
        sp = st.spins("T", last=6000, with_ids=False)
        assert len(st.source_infos(sp.source_ids)) == 1
        a = audit_table(st, "T", last=6000, seed=1, n_resamples=199, figures=False, outdir=None, record=False)
    assert [i["path"].rsplit("/", 1)[-1] for i in a.report["inputs"]] == ["new.csv"]
    findings = a.report["tables"][0]["key_findings"]
    assert not any("old.csv" in f or "could not be read" in f for f in findings), findings
