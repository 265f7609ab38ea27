"""Pay tables and exact house edges.

A pay table is packaged data (TOML, ``rngcert/equipment/paytables/*.toml``) or a lab's own file.
Four games are understood:

``game = "roulette"``
    ``wheel`` (a wheel id), ``zero`` (labels of the zero pockets), ``zero_rule`` (``"half-back"``:
    rule 3.3 b of 003_099d15f6604b638d.txt, half of each even-money wager returned when a zero
    wins; ``"lose"``: all wagers not covering the zero lose), and ``[[bets]]`` with ``name``,
    ``odds = "a:b"`` (pays a for every b staked, plus the stake) and ``numbers`` (one placement of
    the bet), ``even_money = true`` for the rule-3.3 b bets.
``game = "money-wheel"``
    ``wheel`` and ``[[bets]]`` with ``name``, ``symbol`` and ``odds``.
``game = "roulette-rage"``
    ``wheel`` (single-zero), ``min_run``, ``max_run`` and an ``[odds]`` table keyed by the run
    length after the establishing spin (rules 3.18-3.31).
``game = "baccarat"``
    ``outcomes`` and ``[[bets]]`` with ``wins_on``, ``odds`` and optional ``push_on``; outcome
    probabilities are supplied by the caller.

Every bet is reduced to a map *outcome → net return per unit staked* (``fractions.Fraction``), and
the house edge is ``-sum_o P(o) * net(o)``, exact when the probabilities are fractions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

from rngcert.equipment import check_keys
from rngcert.equipment.packaged import Packaged
from rngcert.errors import EquipmentError, InputError

__all__ = [
    "Bet",
    "PayTable",
    "packaged_paytables",
    "PAYTABLES",
    "load_paytable",
    "paytable_from_dict",
    "parse_odds",
    "rage_run_length_law",
    "outcome_probabilities",
    "house_edges",
    "default_paytable_id",
    "paytable_fits",
    "GAMES",
    "seed_checks",
    "MONEY_WHEEL_OPTIONS",
    "RAGE_MINIMUM_ODDS",
]

GAMES = ("roulette", "money-wheel", "roulette-rage", "baccarat")

#: Packaged pay table ids per game (for ``rngcert house-edge GAME``); the first is the default.
GAME_PAYTABLES = {
    "roulette": ("roulette-single-zero", "roulette-double-zero"),
    "european": ("roulette-single-zero",),
    "american": ("roulette-double-zero",),
    "money-wheel": ("money-wheel-option-one", "money-wheel-option-two", "money-wheel-option-three"),
    "roulette-rage": ("roulette-rage-minimum-odds", "roulette-rage-pay-table-1", "roulette-rage-pay-table-2"),
    "baccarat": ("baccarat",),
}


@dataclass(frozen=True)
class Bet:
    """One wager: its net return per unit staked on each outcome.

    Attributes
    ----------
    name : str
        Bet name (``"straight-up"``, ``"A"``, ``"banker"``, ``"rage"``).
    odds : Fraction
        Winnings per unit staked on a win (35 for 35 to 1, 19/20 for 1 to 1 less 5%).
    net : mapping of str to Fraction
        Net return per unit staked for each outcome label that is not a plain loss; every other
        outcome returns -1.
    covers : tuple of str
        Outcome labels on which the bet wins.
    """

    name: str
    odds: Fraction
    net: Mapping[str, Fraction]
    covers: tuple[str, ...] = ()

    def net_return(self, outcome: str) -> Fraction:
        """Net return per unit staked when ``outcome`` occurs."""
        return self.net.get(outcome, Fraction(-1))


@dataclass(frozen=True)
class PayTable:
    """A validated pay table (see the module docstring for the file format)."""

    id: str
    name: str
    game: str
    source: str
    wheel: str | None
    bets: tuple[Bet, ...]
    outcomes: tuple[str, ...] = ()
    params: Mapping[str, object] = field(default_factory=dict)
    path: str = ""
    sha256: str = ""  #: of a lab's pay table file as read (empty for a packaged one)

    def bet(self, name: str) -> Bet:
        for b in self.bets:
            if b.name == name:
                return b
        raise InputError(f"pay table {self.id!r} has no bet {name!r}; bets: {', '.join(b.name for b in self.bets)}")

    def describe(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "game": self.game,
            "source": self.source,
            "wheel": self.wheel,
            "bets": {b.name: f"{b.odds.numerator}:{b.odds.denominator}" for b in self.bets},
            "file": self.path,
        } | ({"sha256": self.sha256} if self.sha256 else {})


_ODDS = re.compile(r"^\s*(\d+)\s*(?::|to)\s*(\d+)\s*$")


def parse_odds(text, where: str = "odds") -> Fraction:
    """Parse ``"35:1"`` / ``"35 to 1"`` / ``35`` into winnings per unit staked (a Fraction).

    Raises
    ------
    EquipmentError
        Malformed odds or a zero denominator.
    """
    if isinstance(text, bool):
        raise EquipmentError(f"{where}: odds must be 'a:b' or an integer, got {text!r}")
    if isinstance(text, int):
        if text <= 0:
            raise EquipmentError(f"{where}: odds must be positive, got {text!r}")
        return Fraction(text)
    m = _ODDS.match(str(text))
    if not m or int(m.group(2)) == 0 or int(m.group(1)) == 0:
        raise EquipmentError(f"{where}: odds must look like '35:1' or '1 to 2' with positive numbers, got {text!r}")
    return Fraction(int(m.group(1)), int(m.group(2)))


# ----------------------------------------------------------------------------- loading
def packaged_paytables() -> list[str]:
    """Ids of the pay tables shipped with rngcert (:data:`PAYTABLES`: one TOML file each)."""
    return PAYTABLES.names()


def load_paytable(spec: str | Path) -> PayTable:
    """Load a pay table by packaged id (see :func:`packaged_paytables`) or from a TOML file.

    Raises
    ------
    EquipmentError
        Unknown id, unreadable file, or a table that does not validate.
    """
    return PAYTABLES.load(spec)


def _get(doc, key, where, typ):
    if key not in doc:
        raise EquipmentError(f"{where}: missing key {key!r}")
    v = doc[key]
    if not isinstance(v, typ) or isinstance(v, bool):
        raise EquipmentError(f"{where}: key {key!r} must be {getattr(typ, '__name__', typ)}, got {v!r}")
    return v


MAX_BETS = 100_000  #: bets a pay table may list (checked before any bet is read)


def _roulette_bets(doc: dict, where: str, params: dict) -> list[Bet]:
    """The bets of a roulette pay table (and its zero and zero_rule into ``params``)."""
    bets: list[Bet] = []
    zero = tuple(str(z) for z in _get(doc, "zero", where, list))
    rule = doc.get("zero_rule", "lose")
    if rule not in ("lose", "half-back"):
        raise EquipmentError(f"{where}: zero_rule must be 'lose' or 'half-back', got {rule!r}")
    params.update(zero=zero, zero_rule=rule)
    for i, b in enumerate(_get(doc, "bets", where, list)):
        w = f"{where}: bets[{i}]"
        bname = _get(b, "name", w, str)
        odds = parse_odds(_get(b, "odds", w, (str, int)), f"{w} ({bname})")
        nums = tuple(str(x) for x in _get(b, "numbers", w, list))
        if not nums or len(set(nums)) != len(nums):
            raise EquipmentError(f"{w} ({bname}): numbers must be a non-empty list without repeats, got {list(nums)}")
        even = b.get("even_money", False)
        if not isinstance(even, bool):
            raise EquipmentError(f"{w} ({bname}): even_money must be true or false, got {even!r}")
        net = {x: odds for x in nums}
        if even and rule == "half-back":
            for z in zero:
                if z not in net:
                    net[z] = Fraction(-1, 2)  # rule 3.3 b
        bets.append(Bet(bname, odds, net, nums))
    return bets


def _money_wheel_bets(doc: dict, where: str) -> list[Bet]:
    """The bets of a money-wheel pay table (one per symbol)."""
    bets: list[Bet] = []
    for i, b in enumerate(_get(doc, "bets", where, list)):
        w = f"{where}: bets[{i}]"
        bname = _get(b, "name", w, str)
        sym = str(_get(b, "symbol", w, str))
        odds = parse_odds(_get(b, "odds", w, (str, int)), f"{w} ({bname})")
        bets.append(Bet(bname, odds, {sym: odds}, (sym,)))
    return bets


def _rage_bets(doc: dict, where: str, params: dict) -> tuple[list[Bet], tuple[str, ...]]:
    """The one bet and the outcomes of a Roulette Rage pay table (its run lengths into ``params``)."""
    bets: list[Bet] = []
    lo = _get(doc, "min_run", where, int)
    hi = _get(doc, "max_run", where, int)
    if not 1 <= lo <= hi:
        raise EquipmentError(f"{where}: need 1 <= min_run <= max_run, got {lo}, {hi}")
    table = _get(doc, "odds", where, dict)
    keys = {str(j) for j in range(lo, hi + 1)}
    if set(table) != keys:
        raise EquipmentError(f"{where}: [odds] must have keys {lo}..{hi}, got {sorted(table, key=lambda s: int(s) if s.isdigit() else -1)}")
    net = {str(j): parse_odds(table[str(j)], f"{where}: odds[{j}]") for j in range(lo, hi + 1)}
    params.update(min_run=lo, max_run=hi)
    outcomes = tuple(str(j) for j in range(hi + 1))
    bets.append(Bet("rage", net[str(lo)], net, tuple(net)))
    return bets, outcomes


def _baccarat_bets(doc: dict, where: str) -> tuple[list[Bet], tuple[str, ...]]:
    """The bets and the outcomes of a baccarat pay table."""
    bets: list[Bet] = []
    outcomes = tuple(str(x) for x in _get(doc, "outcomes", where, list))
    if len(set(outcomes)) != len(outcomes):
        raise EquipmentError(f"{where}: outcomes {list(outcomes)} name an outcome twice")
    for i, b in enumerate(_get(doc, "bets", where, list)):
        w = f"{where}: bets[{i}]"
        bname = _get(b, "name", w, str)
        win = _get(b, "wins_on", w, str)
        odds = parse_odds(_get(b, "odds", w, (str, int)), f"{w} ({bname})")
        push = [str(x) for x in b.get("push_on", [])]
        bad = sorted(set([win] + push) - set(outcomes))
        if win in push:  # (the bet would never win: its winning outcome pushes)
            raise EquipmentError(f"{w} ({bname}): push_on {push} holds the outcome it wins on, {win!r}")
        if bad:
            raise EquipmentError(f"{w} ({bname}): outcomes {bad} are not in outcomes {list(outcomes)}")
        net = {win: odds}
        net.update({p: Fraction(0) for p in push})
        bets.append(Bet(bname, odds, net, (win,)))
    return bets, outcomes


#: The keys a pay table of each game may have, and those of one of its ``[[bets]]`` (any other is a misspelling, refused).
_KEYS = {"roulette": {"zero", "zero_rule", "bets"}, "money-wheel": {"bets"}, "roulette-rage": {"min_run", "max_run", "odds"},
         "baccarat": {"outcomes", "bets"}}
_BET_KEYS = {"roulette": {"name", "odds", "numbers", "even_money"}, "money-wheel": {"name", "symbol", "odds"},
             "baccarat": {"name", "wins_on", "odds", "push_on"}}


def _check_paytable_keys(doc: dict, game: str, where: str) -> None:
    """Every key of the table and of each bet is one the game reads; each bet is a table."""
    check_keys(doc, _KEYS[game] | {"id", "name", "game", "source", "wheel"}, where)
    bets = doc.get("bets", [])
    for i, b in enumerate(bets if isinstance(bets, list) else []):
        if not isinstance(b, dict):
            raise EquipmentError(f"{where}: bets[{i}] must be a table ([[bets]] with name, odds, …), got {b!r}")
        check_keys(b, _BET_KEYS[game], where, f"bets[{i}]: ")


def _no_repeated_bet(bets, where: str) -> None:
    """Bets are named by their name (house edges, reports): two bets of one name are refused."""
    seen: set[str] = set()
    for i, b in enumerate(bets):
        if b.name in seen:
            raise EquipmentError(f"{where}: bets[{i}]: a bet named {b.name!r} is listed already; give each bet its own name")
        seen.add(b.name)


def paytable_from_dict(doc: dict, where: str = "<dict>") -> PayTable:
    """Validate a parsed TOML document and build a :class:`PayTable`."""
    if isinstance(doc.get("bets"), list) and len(doc["bets"]) > MAX_BETS:
        raise EquipmentError(f"{where}: {len(doc['bets']):,} bets; a pay table may list at most {MAX_BETS:,}")
    pid = _get(doc, "id", where, str)
    game = _get(doc, "game", where, str)
    if game not in GAMES:
        raise EquipmentError(f"{where}: game {game!r} is not one of {', '.join(GAMES)}")
    _check_paytable_keys(doc, game, where)
    name = str(doc.get("name", pid))
    source = str(doc.get("source", ""))
    wheel = doc.get("wheel")
    params: dict[str, object] = {}
    outcomes: tuple[str, ...] = ()
    if game == "roulette":
        bets = _roulette_bets(doc, where, params)
    elif game == "money-wheel":
        bets = _money_wheel_bets(doc, where)
    elif game == "roulette-rage":
        bets, outcomes = _rage_bets(doc, where, params)
    else:  # baccarat
        bets, outcomes = _baccarat_bets(doc, where)
    if not bets:
        raise EquipmentError(f"{where}: no bets")
    _no_repeated_bet(bets, where)
    return PayTable(pid, name, game, source, None if wheel is None else str(wheel), tuple(bets), outcomes, params, where)


# ----------------------------------------------------------------------------- probabilities
def rage_run_length_law(p_same, max_run: int = 14) -> list:
    r"""Exact law of the Roulette Rage run length after the establishing spin.

    Parameters
    ----------
    p_same : Fraction or float
        Probability that a spin shows the establishing colour (18/37 on a fair single-zero wheel;
        zero and the other colour both break the run, rules 3.17 and 3.24).
    max_run : int
        Cap on the counted run length after the establishing spin: 14 (rule 3.27, at most 15
        including the establishing spin).

    Returns
    -------
    list, length ``max_run + 1``
        ``law[j] = P(L = j)``, of the same type as ``p_same`` (exact with a Fraction).

    Notes
    -----
    Spins are independent with probability p of the establishing colour, so the number L of
    further spins of that colour before the first other colour or zero is geometric:
    :math:`P(L = j) = p^j (1 - p)` for :math:`j < m` and, with the cap m of rule 3.27,
    :math:`P(L = m) = p^m` (all longer runs are paid as m).
    """
    if isinstance(max_run, bool) or int(max_run) != max_run or max_run < 1:
        raise InputError(f"max_run must be a positive integer, got {max_run!r}")
    if not 0 <= p_same <= 1:
        raise InputError(f"p_same must be in [0, 1], got {p_same!r}")
    q = 1 - p_same
    law = [p_same**j * q for j in range(max_run)]
    law.append(p_same**max_run)
    return law


def outcome_probabilities(paytable: PayTable, wheel=None, probs: Mapping[str, object] | None = None) -> dict[str, object]:
    """Exact null probability of each outcome label the pay table's bets refer to.

    Parameters
    ----------
    paytable : PayTable
    wheel : rngcert.equipment.wheel.Wheel, optional
        The fair wheel (default: ``paytable.wheel`` loaded from the packaged wheels). Roulette:
        1/k per pocket; money wheel: sections/k per symbol; Rage: the run-length law with
        ``p = red pockets / k``.
    probs : mapping, optional
        Baccarat (required): probabilities of ``banker``, ``player``, ``tie``. For the other
        games, overrides the wheel-derived probabilities (e.g. a biased wheel); for Rage give
        ``{"p_same": p}``.

    Returns
    -------
    dict of str to Fraction (or float when float probabilities were given)
    """
    if paytable.game == "baccarat":
        if probs is None:
            raise InputError("baccarat house edges need the outcome probabilities (banker, player, tie)")
        missing = sorted(set(paytable.outcomes) - set(probs))
        if missing:
            raise EquipmentError(f"{paytable.path or paytable.id}: outcomes {missing[:20]} have no probability (given: {', '.join(sorted(probs))})")
        return {o: probs[o] for o in paytable.outcomes}
    if paytable.game == "roulette-rage" and probs is not None and "p_same" in probs:
        law = rage_run_length_law(probs["p_same"], int(paytable.params["max_run"]))
        return {str(j): v for j, v in enumerate(law)}
    if probs is not None:
        return dict(probs)
    if wheel is None:
        from rngcert.equipment.wheel import load_wheel

        if paytable.wheel is None:
            raise InputError(f"pay table {paytable.id!r} names no wheel; pass wheel=")
        wheel = load_wheel(paytable.wheel)
    _check_wheel_kind(paytable, wheel)
    k = wheel.k
    if paytable.game == "roulette":
        return {lab: Fraction(1, k) for lab in wheel.labels}
    if paytable.game == "money-wheel":
        return {s: Fraction(c, k) for s, c in zip(wheel.symbols, wheel.symbol_counts)}
    # roulette-rage: same-colour probability of a fair wheel (red and black have equal counts)
    p = Fraction(sum(c == "red" for c in wheel.colours), k)
    law = rage_run_length_law(p, int(paytable.params["max_run"]))
    return {str(j): v for j, v in enumerate(law)}


def _check_wheel_kind(paytable: PayTable, wheel) -> None:
    """Refuse a pay table priced on a wheel of another kind, and Roulette Rage on a wheel whose red and black
    counts differ (its run-length law takes one same-colour probability for runs of either colour).

    Raises
    ------
    EquipmentError
        Naming the pay table, the wheel and the reason.
    """
    want = "money-wheel" if paytable.game == "money-wheel" else "roulette"
    if wheel.kind != want:
        raise EquipmentError(f"{paytable.path or paytable.id}: a {paytable.game} pay table needs a {want} wheel; "
                             f"wheel {wheel.id!r} is a {wheel.kind} wheel")
    if paytable.game == "roulette-rage":
        red, black = (sum(c == colour for c in wheel.colours) for colour in ("red", "black"))
        if red != black:
            raise EquipmentError(f"{paytable.path or paytable.id}: Roulette Rage on wheel {wheel.id!r} with {red} red and {black} black "
                                 "numbers: its run-length law assumes as many red as black numbers (003 rule 3.5)")


def house_edges(paytable: PayTable, wheel=None, probs: Mapping[str, object] | None = None) -> dict[str, object]:
    r"""House edge of every bet of a pay table.

    Parameters
    ----------
    paytable : PayTable
    wheel, probs
        As in :func:`outcome_probabilities`.

    Returns
    -------
    dict of str to Fraction (float if float probabilities were given)
        Bet name → house edge, the expected loss per unit staked.

    Notes
    -----
    :math:`\text{edge} = -\sum_o P(o)\, r(o)` where :math:`r(o)` is the bet's net return per unit
    staked on outcome o (odds on a win, 0 on a push, -1/2 for an even-money bet when a zero wins
    under rule 3.3 b, -1 otherwise). Pushes count as resolved hands (edge per hand, the usual
    convention for baccarat).

    Raises
    ------
    InputError
        A bet refers to an outcome that has no probability, or probabilities do not sum to 1.

    Examples
    --------
    >>> from rngcert.equipment.paytables import house_edges, load_paytable
    >>> house_edges(load_paytable("roulette-single-zero"))["red"]
    Fraction(1, 74)
    >>> round(float(house_edges(load_paytable("roulette-rage-minimum-odds"))["rage"]), 6)
    0.170011

    Rule 3.30 of the UK roulette rules quotes 17.0% for the Roulette Rage minimum odds.
    """
    if paytable.game == "roulette" and probs is None:
        _check_zero_pockets(paytable, wheel)
    pr = outcome_probabilities(paytable, wheel, probs)
    total = sum(pr.values())
    if abs(float(total) - 1.0) > 1e-9:
        raise InputError(f"outcome probabilities sum to {float(total)!r}, not 1")
    out: dict[str, object] = {}
    for b in paytable.bets:
        unknown = sorted(set(b.net) - set(pr))
        if unknown:
            raise EquipmentError(f"{paytable.path or paytable.id}: bet {b.name!r} refers to outcomes {unknown[:20]} not on the wheel/game "
                                 f"{getattr(wheel, 'id', None) or paytable.wheel or paytable.game!r}")
        ev = sum(pr[o] * b.net_return(o) for o in pr)
        out[b.name] = -ev
    return out


def _check_zero_pockets(paytable: PayTable, wheel=None) -> None:
    """Refuse a roulette pay table whose ``zero`` names a pocket that is not a green zero of the wheel it
    is priced on (rule 3.3 b returns half of an even-money wager when *zero* wins: on a numbered pocket
    it would misprice every even-money bet).

    Raises
    ------
    EquipmentError
        Naming the pay table's file, the key ``zero``, the pockets and the wheel's zeros.
    """
    if wheel is None:
        if paytable.wheel is None:
            return  # outcome_probabilities says that a wheel is needed
        from rngcert.equipment.wheel import load_wheel

        wheel = load_wheel(paytable.wheel)
    if wheel.kind != "roulette":
        return  # the bets' pockets are not on it: house_edges says so
    green = [lab for lab, c in zip(wheel.labels, wheel.colours) if c == "green"]
    bad = [z for z in paytable.params.get("zero", ()) if z not in green]
    if bad:
        raise EquipmentError(f"{paytable.path or paytable.id}: zero = {list(paytable.params['zero'])}: {bad} "
                             f"{'is not a' if len(bad) == 1 else 'are not'} green zero pocket(s) of wheel {wheel.id!r} "
                             f"(its zeros: {green}); list the wheel's zero(s)")


def default_paytable_id(wheel) -> str | None:
    """Packaged pay table for a wheel: single/double-zero roulette by zero count, money-wheel
    option one for a 52-section A-G wheel; None when nothing fits, or when the table does not fit
    the wheel's pockets (:func:`paytable_fits`: a 13-pocket lab wheel with one zero is not paid
    35:1 on a straight-up)."""
    pid = None
    if wheel.kind == "roulette":
        zeros = sum(c == "green" for c in wheel.colours)
        pid = {1: "roulette-single-zero", 2: "roulette-double-zero"}.get(zeros)
    elif wheel.kind == "money-wheel" and set(wheel.symbols) <= set("ABCDEFG") and wheel.k == 52:
        pid = "money-wheel-option-one"
    return pid if pid is not None and paytable_fits(pid, wheel) else None


def paytable_fits(pid: str, wheel) -> bool:
    """True when every bet of the packaged pay table ``pid`` is defined on ``wheel`` and none returns
    a fair ``wheel`` more than it takes (every house edge >= 0). A table written for another wheel
    (35:1 on one of 13 pockets) would show a fair wheel as beatable: it is not that wheel's."""
    key = (pid, wheel.id, wheel.kind, tuple(wheel.labels), tuple(wheel.colours), tuple(wheel.symbols))
    if key not in _FITS:
        try:
            _FITS[key] = all(e >= 0 for e in house_edges(load_paytable(pid), wheel).values())
        except InputError:
            _FITS[key] = False
    return _FITS[key]


#: :func:`paytable_fits` by pay table and wheel (a few Fraction sums; asked once a table and a run).
_FITS: dict[tuple, bool] = {}


def paytables_for_wheel(wheel, *, rage: bool = True):
    """The pay tables an exploitability analysis of ``wheel`` uses by default.

    Parameters
    ----------
    wheel : Wheel
        The certified wheel.
    rage : bool
        Include the Roulette Rage side wager (pay table 1, the most generous permitted, rule 3.31)
        on single-zero roulette wheels.

    Returns
    -------
    paytable : PayTable or None
        :func:`default_paytable_id`'s table, None when nothing fits.
    rage_paytable : PayTable or None
    """
    pid = default_paytable_id(wheel)
    single_zero = wheel.kind == "roulette" and sum(c == "green" for c in wheel.colours) == 1
    rage_id = "roulette-rage-pay-table-1"
    rage_fits = rage and single_zero and pid is not None and paytable_fits(rage_id, wheel)
    return (load_paytable(pid) if pid else None), (load_paytable(rage_id) if rage_fits else None)


def paytables_for_game(game: str) -> Sequence[str]:
    """Packaged pay table ids for ``rngcert house-edge GAME`` (first = default)."""
    if game not in GAME_PAYTABLES:
        raise InputError(f"unknown game {game!r}; known: {', '.join(GAME_PAYTABLES)}")
    return GAME_PAYTABLES[game]


# ----------------------------------------------------------------------------- checks against the seeds' rules
#: 000_eb087bb97dc5efee.txt rule 2.3: sections per symbol of the 52-section money wheel.
MONEY_WHEEL_SECTIONS = {"A": 24, "B": 12, "C": 8, "D": 4, "E": 2, "F": 1, "G": 1}
#: Rule 3.8: the three permitted payout options (odds to 1 per symbol).
MONEY_WHEEL_OPTIONS = {
    "one": {"A": 1, "B": 3, "C": 5, "D": 11, "E": 23, "F": 47, "G": 47},
    "two": {"A": 1, "B": 3, "C": 5, "D": 10, "E": 20, "F": 47, "G": 47},
    "three": {"A": 1, "B": 3, "C": 5, "D": 10, "E": 20, "F": 45, "G": 45},
}
#: 003_099d15f6604b638d.txt rule 3.28: minimum odds of Roulette Rage by run length after the
#: establishing spin.
RAGE_MINIMUM_ODDS = {4: 5, 5: 8, 6: 15, 7: 20, 8: 40, 9: 60, 10: 100, 11: 200, 12: 400, 13: 1000, 14: 2000}
#: 003 rule 3.2: minimum odds of a roulette bet by the count of numbers it covers.
ROULETTE_MINIMUM_ODDS = {1: Fraction(35), 2: Fraction(17), 3: Fraction(11), 4: Fraction(8), 6: Fraction(5), 12: Fraction(2),
                         18: Fraction(1), 24: Fraction(1, 2)}


def _wheel_seed_checks(wheel) -> list[str]:
    """The wheel half of :func:`seed_checks` (money wheel 000 rules 2.2, 2.3; roulette 003 rule 3.5, 004 §4 rule 3.3.2)."""
    out: list[str] = []
    if wheel is not None and wheel.kind == "money-wheel" and set(wheel.symbols) <= set(MONEY_WHEEL_SECTIONS):
        counts = dict(zip(wheel.symbols, wheel.symbol_counts))
        if wheel.k != 52:
            out.append(f"wheel {wheel.id}: {wheel.k} sections; 000 rule 2.2 requires 52 equally spaced sections")
        bad = {s: counts.get(s, 0) for s, c in MONEY_WHEEL_SECTIONS.items() if counts.get(s, 0) != c}
        if bad:
            out.append(f"wheel {wheel.id}: sections per symbol " + ", ".join(f"{s} {v} (rule: {MONEY_WHEEL_SECTIONS[s]})" for s, v in bad.items())
                       + "; 000 rule 2.3 requires 24/12/8/4/2/1/1 for A-G")
    if wheel is not None and wheel.kind == "roulette" and wheel.colours:
        k = wheel.k
        zeros = [i for i, c in enumerate(wheel.colours) if c == "green"]
        if k not in (37, 38):
            out.append(f"wheel {wheel.id}: {k} pockets; 003 rule 3.5 requires 37 (0-36), an American wheel 38")
        if len(zeros) != k - 36:
            out.append(f"wheel {wheel.id}: {len(zeros)} green pocket(s) and {k - len(zeros)} numbered ones; 003 rule 3.5 requires "
                       "the 36 numbers 1-36 in red and black and one green zero (two, 0 and 00, on an American wheel)")
        out += _numbers_1_to_36(wheel)
        seq = [c for c in wheel.colours if c != "green"]
        reds = seq.count("red")
        if reds != 18 or seq.count("black") != 18:
            out.append(f"wheel {wheel.id}: {reds} red and {seq.count('black')} black numbers; 004 §4 rule 3.3.2 requires 18 and 18")
        runs = _same_colour_neighbours(wheel.colours)
        if runs:
            out.append(f"wheel {wheel.id}: {len(runs)} pair(s) of neighbouring pockets of the same colour; 003 rule 3.5 requires "
                       "red and black to alternate")
    return out


def _numbers_1_to_36(wheel) -> list[str]:
    """A 37- or 38-pocket wheel whose red and black pockets are not the numbers 1-36 (``37`` in place of ``26``)."""
    nums = {lab for lab, c in zip(wheel.labels, wheel.colours) if c != "green"}
    want = {str(i) for i in range(1, 37)}
    if wheel.k not in (37, 38) or nums == want:
        return []
    extra, missing = sorted(nums - want, key=lambda x: (len(x), x)), sorted(want - nums, key=int)
    return [f"wheel {wheel.id}: red/black pocket(s) {', '.join(extra[:10]) or 'none'} not among the numbers 1-36, and "
            f"{', '.join(missing[:10]) or 'none'} of them missing; 003 rule 3.5 requires the numbers 1-36 in red and black"]


def _paytable_seed_checks(paytable) -> list[str]:
    """The pay-table half of :func:`seed_checks` (000 rule 3.8, 003 rules 3.28 and 3.2)."""
    out: list[str] = []
    if paytable is not None and paytable.game == "money-wheel":
        odds = {b.name: b.odds for b in paytable.bets}
        match = [k for k, opt in MONEY_WHEEL_OPTIONS.items() if all(odds.get(s) == Fraction(v) for s, v in opt.items())]
        if not match:
            best = min(MONEY_WHEEL_OPTIONS, key=lambda k: sum(odds.get(s) != Fraction(v) for s, v in MONEY_WHEEL_OPTIONS[k].items()))
            diff = [f"{s} {odds.get(s)}:1 (option {best}: {v}:1)" for s, v in MONEY_WHEEL_OPTIONS[best].items() if odds.get(s) != Fraction(v)]
            out.append(f"pay table {paytable.id}: not one of the payout options of 000 rule 3.8; differs from option {best} in " + ", ".join(diff))
    if paytable is not None and paytable.game == "roulette-rage":
        net = paytable.bets[0].net
        low = [f"a run of {j} pays {net.get(str(j))}:1 (minimum {m}:1)" for j, m in RAGE_MINIMUM_ODDS.items()
               if str(j) in net and net[str(j)] < m]
        missing = [j for j in RAGE_MINIMUM_ODDS if str(j) not in net]
        if low:
            out.append(f"pay table {paytable.id}: below the minimum odds of 003 rule 3.28: " + ", ".join(low))
        if missing:
            out.append(f"pay table {paytable.id}: no odds for run lengths {missing} (003 rule 3.28 pays 4 to 14)")
    if paytable is not None and paytable.game == "roulette":
        low = []
        for b in paytable.bets:
            n = len(b.covers)
            m = ROULETTE_MINIMUM_ODDS.get(n)
            if m is not None and b.odds < m:
                low.append(f"{b.name} ({n} numbers) {b.odds} to 1, minimum {m} to 1")
        if low:
            out.append(f"pay table {paytable.id}: below the minimum odds of 003 rule 3.2: " + "; ".join(low))
    return out


def seed_checks(paytable: PayTable | None = None, wheel=None, *, strict: bool = False) -> list[str]:
    """Check lab-supplied equipment against the rules of the seeds it claims.

    Parameters
    ----------
    paytable : PayTable, optional
    wheel : rngcert.equipment.wheel.Wheel, optional
    strict : bool
        Raise instead of returning the warnings.

    Returns
    -------
    list of str
        One plain sentence per violation, citing the rule (empty: nothing to report).

    Raises
    ------
    EquipmentError
        With ``strict``, when there is any violation (all of them in the message).

    Notes
    -----
    * money wheel (000 rules 2.2, 2.3, 3.8): 52 sections, 24/12/8/4/2/1/1 sections for symbols
      A-G, and a pay table equal to one of the three payout options;
    * Roulette Rage (003 rule 3.28): every run length paid at least the minimum odds;
    * roulette wheel (003 rule 3.5, 004 §4 rule 3.3.2): 37 (or 38, American) pockets, the zero(s)
      green, 18 red and 18 black numbers alternating around the wheel;
    * roulette pay table (003 rule 3.2): each bet pays at least the minimum odds for the count of
      numbers it covers.
    """
    out = _wheel_seed_checks(wheel) + _paytable_seed_checks(paytable)
    if strict and out:
        raise EquipmentError("equipment does not meet the seeds' rules (--strict): " + " | ".join(out))
    return out


def _same_colour_neighbours(colours) -> list[int]:
    """Indices ``i`` of the non-green pockets whose next non-green pocket around the wheel has the same
    colour with no green pocket between them (one pass: linear in the number of pockets)."""
    idx = [j for j, c in enumerate(colours) if c != "green"]
    n, k = len(idx), len(colours)
    out = []
    for i in range(n):
        a, b = idx[i], idx[(i + 1) % n]
        gap = b - a if b > a else b + k - a  # a green pocket lies between them when the gap exceeds 1
        if gap == 1 and colours[a] == colours[b]:
            out.append(i)
    return out


#: The packaged pay tables: ``rngcert/equipment/paytables/ID.toml``, one file each.
PAYTABLES = Packaged("paytables", "pay table", "pay tables", "pay table file", paytable_from_dict)
