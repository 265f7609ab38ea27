"""The shuffle battery on given shoes before and after a shuffle (:func:`certify_shoes`), no trackers.
"""

from __future__ import annotations

from typing import Sequence

from rngcert.battery.plain import add_shoe_findings
from rngcert.battery.shuffle import ShoeData
from rngcert.pipeline.certify_shuffle._common import ShuffleCertification, _figures, _header, _run, _section
from rngcert.seeding import root


def certify_shoes(before, after, *, decks: int, game: str | None, rule: str = "S17", usable: int | None = None, dealt=None,
                  subject: str, equipment: dict, inputs: Sequence[dict], seed: int | None = None, alpha: float = 0.01,
                  command: str = "", figures: bool = True, notes: Sequence[str] = (), rejected_count: int = 0,
                  n_resamples: int = 1999, standard: str = "uniform") -> ShuffleCertification:
    """Run the shuffle battery on given shoes before/after a shuffle (no trackers) and build the report."""
    entropy = int(root(seed).entropy)
    data = ShoeData(before, after, decks, game, rule, usable, dealt)
    out = _run(data, entropy=entropy, group="shuffle", alpha=alpha, n_resamples=n_resamples, standard=standard)
    sections = [_section(subject, data, out, notes=notes)]
    rep = _header(command=command, inputs=inputs, equipment=equipment, subject=subject, notes=notes, tables=sections,
                  verdict=out.verdict, alpha=alpha, entropy=entropy, seed=seed, n_resamples=n_resamples, decks=decks, game=game,
                  rule=rule, rejected_count=rejected_count, standard=standard)
    rep["power_effect"] = out.power
    add_shoe_findings(rep)
    return ShuffleCertification(rep, [_figures(data, out) if figures else []], out)
