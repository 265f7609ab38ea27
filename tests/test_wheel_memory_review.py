"""A lab wheel of many pockets (the loader takes up to 32,767): certify holds a dense k x k table of consecutive pairs
in about 16 arrays at once (2.1 GB at k = 4,000, 7.8 GB at 8,000). At 32,767 pockets it grew past 24 GB and the kernel
killed it (exit 137, not a word), where the exit-code table promises "not enough memory", exit 3. It is now refused
before any work when the table cannot fit in the memory available, with the sizes."""

from __future__ import annotations

import json

import rngcert.pipeline.certify_wheel as cw


def test_a_pair_table_larger_than_the_memory_is_refused_before_any_work(tmp_path, cli, monkeypatch):
    labels = [str(i) for i in range(1000)]
    wheel = tmp_path / "w1000.toml"
    wheel.write_text(f'id = "w1000"\nkind = "roulette"\nwheel_order = {json.dumps(labels)}\nred = {json.dumps(labels[1::2])}\n'
                     'green = ["0"]\n', encoding="utf-8")
    log = tmp_path / "log.csv"
    assert cli("simulate", "wheel", "--equipment", str(wheel), "--spins", "3000", "--seed", "1", "--out", str(log)).exit_code == 0
    monkeypatch.setattr(cw, "_available_memory", lambda: 64 * 2**20)  # 64 MiB: the table of 10^6 cells needs about 122 MiB
    r = cli("certify", str(log), "--equipment", str(wheel), "--out", str(tmp_path / "rep"), "--tests", "pocket_chisquare", "--json")
    assert r.exit_code == 3, r.output
    assert "not enough memory" in r.stderr and "1,000 x 1,000 table of consecutive pairs" in r.stderr, r.stderr
    assert json.loads(r.stdout)["exit_code"] == 3
    assert not (tmp_path / "rep").exists() or not any((tmp_path / "rep").rglob("report.json"))
    monkeypatch.setattr(cw, "_available_memory", lambda: 1 << 30)  # 1 GiB: it fits, and runs
    r = cli("certify", str(log), "--equipment", str(wheel), "--out", str(tmp_path / "rep"), "--tests", "pocket_chisquare", "--json")
    assert r.exit_code in (0, 10, 11, 12), r.output
