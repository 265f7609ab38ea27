"""Shuffle-quality tests: does the order after a shuffle still remember the order before it?

Inputs are card orders of many shoes at once: ``before`` and ``after``, integer arrays of shape
``(n_shoes, n_cards)`` of card codes (:mod:`rngcert.equipment.cards`), position 0 = top = first
card dealt. Most tests work on the *permutation* ``perm`` of shape ``(n_shoes, n_cards)``:
``perm[i, j]`` is the position before the shuffle of the card found at position ``j`` after it
(:func:`card_permutation`). H0 throughout: every shoe's ``after`` order is a uniformly random
permutation of its ``before`` order, independently across shoes (a Fisher–Yates shuffle).

Card identity, rank or game value
---------------------------------
Each docstring says which one a test uses. Tests on ``perm`` need card *identity*: with a
single deck, or serialised multi-deck test decks (``QH#3``), identity is unique and the exact
null laws below apply. In a multi-deck shoe without serials a card's identity is ambiguous; the
k-th copy of a card after the shuffle is then matched to the k-th copy before it, and because
that matching changes the null law the battery switches those tests to Monte Carlo p-values
under the same matching (:mod:`rngcert.battery.shuffle`).

Nothing here does I/O; randomness (Monte Carlo) comes only from the ``rng`` argument.

Modules, by family: :mod:`.core` (inputs, sums over shoes), :mod:`.laws` (exact null laws),
:mod:`.order` (rising sequences, adjacent pairs, displacement, rank correlation),
:mod:`.position`, :mod:`.guessing`, :mod:`.faces` (tests on faces or identity, orientation),
:mod:`.riffle` (the GSR model), :mod:`.plotdata` (numbers for the report's plots).
"""

# names outside ``__all__`` (imported "as" themselves) that other modules use: the battery's table of the order tests and their
# Monte Carlo versions, the successions' law (the shuffle pipeline's power statement) and the
# guesser's quadratic reference (its test)
from rngcert.stats.shuffle.core import card_permutation
from rngcert.stats.shuffle.faces import adjacency_share, fixed_points, orientation_rank, orientation_share, position_correlation, shuffle_moments
from rngcert.stats.shuffle.guessing import _guess_count_quadratic as _guess_count_quadratic
from rngcert.stats.shuffle.guessing import guess_count, guessing_test
from rngcert.stats.shuffle.laws import _succession_law as _succession_law
from rngcert.stats.shuffle.laws import eulerian_numbers, guessing_law, riffle_tv_distance, riffle_tv_table, rising_sequence_law
from rngcert.stats.shuffle.laws import succession_law as succession_law
from rngcert.stats.shuffle.order import _PERM_TESTS as _PERM_TESTS
from rngcert.stats.shuffle.order import _mc_perm_tests as _mc_perm_tests
from rngcert.stats.shuffle.order import adjacent_pairs, displacement, rank_correlation, rising_sequences
from rngcert.stats.shuffle.plotdata import shuffle_plot_data
from rngcert.stats.shuffle.position import position_chisquare, position_rank_chisquare
from rngcert.stats.shuffle.riffle import gsr_equivalent_riffles, gsr_law_check, riffle_fit

__all__ = [
    "card_permutation", "eulerian_numbers", "rising_sequence_law", "riffle_tv_distance", "riffle_tv_table",
    "rising_sequences", "adjacent_pairs", "displacement", "position_chisquare", "rank_correlation",
    "position_rank_chisquare", "guessing_test", "guess_count", "guessing_law",
    "shuffle_plot_data", "riffle_fit", "gsr_equivalent_riffles", "gsr_law_check", "fixed_points", "position_correlation",
    "orientation_share", "orientation_rank", "adjacency_share", "shuffle_moments",
]
