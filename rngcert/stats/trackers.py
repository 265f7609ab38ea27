"""The player's edge: realistic trackers that know only what a player sees.

A tracker sits at the table. It saw the previous shoe dealt (rank and suit of every card dealt,
no deck serials) and knows how the dealer picks the cards up, so it knows the order the shuffle
starts from except the cards that stayed behind the cutting card (``-1`` in ``before``). It
watches the new shoe card by card. Before every coup (baccarat) or round (blackjack) it decides
whether and how much to bet from what it has seen; the bet is then settled on the cards actually
dealt. Its *edge* is the realised return per unit staked, with a confidence interval over shoes
(the independent unit), and it is compared with the house edge.

What the tracker knows about the shuffle is an :class:`OffsetKernel`: for a card dealt at position
j, where the card dealt t positions before it sat in the order before the shuffle, relative to it.
It is learned from shoes of the procedure under test whose card identity is known (a simulation,
or shoes of a log the evaluation does not use): what a player learns by watching a procedure long
enough. Under a uniform shuffle every offset has probability 1/(N-1) and the tracker never sees a
positive edge.

Trackers
--------
* :func:`baccarat_sequence_tracker`: locates the last dealt card in the order before the shuffle
  (weighing its copies by how well the cards dealt before it fit the kernel: key-card and sequence
  tracking), predicts the value law of the next coup's first four cards, and bets Player or Banker
  when the predicted expected return (exact, :func:`baccarat_prefix_returns`) is positive.
* :func:`blackjack_zone_tracker`: the same locator predicts the Hi-Lo density of the next round's
  cards (the zone of the discards they come from) and spreads its bet 1-8 on it.
* :func:`hilo_counter`: the Hi-Lo running count of the cards seen in this shoe, bet spread 1-8 on
  the true count: what the cutting card's depth allows without any shuffle weakness.

:func:`tracker_edge` turns stakes and returns into a :class:`~rngcert.stats.result.TestResult`
(one-sided test of "edge <= threshold", threshold declared in advance). Nothing here does I/O;
hot paths are vectorised over shoes, with loops over coups/rounds and lags only.

The code is split by job: :mod:`rngcert.stats.tracker_kernel` (the kernel and the locator),
:mod:`rngcert.stats.tracker_baccarat`, :mod:`rngcert.stats.tracker_blackjack` and
:mod:`rngcert.stats.tracker_edge`; every public name is importable from here.
"""

from __future__ import annotations

from rngcert.stats.tracker_baccarat import BaccaratTrack, baccarat_prefix_returns, baccarat_sequence_tracker
from rngcert.stats.tracker_blackjack import SPREAD, blackjack_sequence_tracker, blackjack_zone_tracker, hilo_counter, spread_bet
from rngcert.stats.tracker_edge import edge_summary, tracker_edge
from rngcert.stats.tracker_kernel import OffsetKernel, learn_kernel

__all__ = ["OffsetKernel", "learn_kernel", "baccarat_prefix_returns", "BaccaratTrack", "baccarat_sequence_tracker",
           "blackjack_zone_tracker", "blackjack_sequence_tracker", "hilo_counter", "tracker_edge", "SPREAD", "spread_bet",
           "edge_summary"]
