"""Error over tables and time (issue 23 item 5): a group of fair tables audited monthly.

200 fair European tables, each audited 12 times (one month of spins per audit, --spins), simulated
--years times. Each audit's table p-value is the pocket chi-square's (asymptotic; the statistics
directly, not the CLI, so it is fast: the statement's bounds hold for any valid table p-value, the
battery's smallest weighted-Holm p included). Printed for each rule, beside its stated figure:

* the group's false-alarm rate per run (some fair table named in one audit run) and per year (some
  fair table named in any of the 12 runs);
* the power kept: one more table turns biased in month 6 (one pocket ``--bias`` times as likely); the
  share of years in which it is named by month 12, and the median month it is first named.

Rules: per-table tests at alpha (today's audit --all), Holm across tables each run, and Holm or
Benjamini-Hochberg across tables on the alpha-spending scale of each table's audits
(alpha_i = alpha·6/(π² i²), rngcert audit --all's default with --group-control holm).

    python benchmarks/bench_group_audit.py                 # 200 tables x 12 audits, 1,000 years (about 20 s)
    python benchmarks/bench_group_audit.py --years 200     # quick look
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats as sps

from rngcert.stats.group import group_control, spending_level, spent_pvalue


def cp(k: int, n: int) -> tuple[float, float]:
    """95% Clopper-Pearson interval of k in n."""
    lo = 0.0 if k == 0 else float(sps.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def pocket_p(counts: np.ndarray, n: int) -> np.ndarray:
    """Asymptotic pocket chi-square p-values of count vectors (last axis: 37 pockets)."""
    k = counts.shape[-1]
    e = n / k
    x2 = ((counts - e) ** 2).sum(axis=-1) / e
    return sps.chi2.sf(x2, k - 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--audits", type=int, default=12)
    ap.add_argument("--years", type=int, default=1000)
    ap.add_argument("--spins", type=int, default=5000, help="spins per table per audit (one month)")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--bias", type=float, default=1.5, help="the biased table's pocket is this many times as likely from month --turn")
    ap.add_argument("--turn", type=int, default=6)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    k, T, Y, n, alpha = 37, a.tables, a.years, a.spins, a.alpha
    fair = np.full(k, 1.0 / k)
    biased = fair.copy()
    biased[17] *= a.bias
    biased /= biased.sum()
    t0 = time.perf_counter()
    # p-values: (years, audits, tables + 1); the last table turns biased at month `turn`
    p = np.empty((Y, T + 1, a.audits))
    for y0 in range(0, Y, 50):  # in blocks of years: bounded memory
        y1 = min(Y, y0 + 50)
        c = rng.multinomial(n, fair, size=(y1 - y0, T + 1, a.audits))
        late = rng.multinomial(n, biased, size=(y1 - y0, a.audits - a.turn + 1))
        c[:, T, a.turn - 1:, :] = late
        p[y0:y1] = pocket_p(c, n)
    p = p.transpose(0, 2, 1)  # (years, audits, tables)
    sim_s = time.perf_counter() - t0
    i = np.arange(1, a.audits + 1)
    rules = {
        "per-table at alpha (no group control)": ("none", False),
        "Holm across tables, each run": ("holm", False),
        "Holm across tables + alpha-spending (default)": ("holm", True),
        "Benjamini-Hochberg + alpha-spending": ("bh", True),
    }
    spend_total = float(np.sum(spending_level(alpha, i)))
    print(f"== group audit: {T} fair tables x {a.audits} audits of {n:,} spins, {Y:,} simulated years, alpha = {alpha}; "
          f"one more table turns biased (pocket x{a.bias}) in month {a.turn}; simulation {sim_s:.1f} s")
    print(f"   expected false FAILs of per-table tests: {T * alpha:.2f} a run, {T * alpha * a.audits:.1f} a year")
    print(f"   {'rule':<46}{'false alarm / run [95% CI]':>30}{'stated':>11}{'false alarm / year [95% CI]':>30}{'stated':>11}"
          f"{'power by month 12':>19}{'median month':>14}")
    for name, (ctl, spend) in rules.items():
        run_alarm = np.zeros((Y, a.audits), dtype=bool)
        named_biased = np.zeros((Y, a.audits), dtype=bool)
        for m in range(a.audits):
            q = p[:, m, :]
            if spend:
                q = spent_pvalue(q, m + 1)
            rej = np.array([group_control(row, alpha, ctl)[0] for row in q])
            run_alarm[:, m] = rej[:, :T].any(axis=1)
            named_biased[:, m] = rej[:, T]
        per_run = run_alarm.mean()
        per_year = run_alarm.any(axis=1).mean()
        if ctl == "none":
            s_run, s_year = 1 - (1 - alpha) ** T, 1 - (1 - alpha) ** (T * a.audits)
        elif not spend:
            s_run, s_year = alpha, min(1.0, alpha * a.audits)
        else:
            s_run, s_year = spending_level(alpha, 1), spend_total
        after = named_biased[:, a.turn - 1:]
        power = after.any(axis=1).mean()
        first = np.where(after.any(axis=1), after.argmax(axis=1) + a.turn, np.nan)
        med = np.nanmedian(first) if np.isfinite(first).any() else math.nan
        sr = f"<= {s_run:.4f}" if ctl != "none" else f"~{s_run:.3f}"
        sy = f"<= {s_year:.4f}" if ctl != "none" else f"~{s_year:.3f}"
        lr, hr = cp(int(run_alarm.sum()), run_alarm.size)
        ly, hy = cp(int(run_alarm.any(axis=1).sum()), Y)
        print(f"   {name:<46}{f'{per_run:.4f} [{lr:.4f}, {hr:.4f}]':>30}{sr:>11}{f'{per_year:.4f} [{ly:.4f}, {hy:.4f}]':>30}{sy:>11}"
              f"{power:>19.3f}{med:>14.1f}")
    print(f"   (stated: the bound each rule guarantees; Holm + spending bounds a false alarm of the group over the year by "
          f"alpha·Σ6/(π²i²) = {spend_total:.4f}, and over every audit ever by alpha; per-table tests: independent tables)")
    print(f"   wall {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
