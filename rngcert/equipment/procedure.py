"""Shuffle procedures as data: TOML files listing steps with parameters.

A procedure file (see ``procedures/*.toml``, packaged with rngcert) looks like::

    id = "baccarat-004"
    name = "Baccarat shuffle of 004_e56c47cd813c1f96.txt §2 rule 3.2-3.3"
    source = "..."
    game = "baccarat"            # or "blackjack", or "none"
    decks = 8
    cut_card_from_back = 7       # cards behind the cutting card (0: deal the whole shoe)

    [deal]                       # the deal and pickup producing the next shuffle's start order
    pickup = "banker-first"      # baccarat: banker-first | player-first
    undealt = "top"              # baccarat: top | bottom
    # blackjack: players = 7, rule = "S17" | "H17"

    [[steps]]
    op = "wash"
    intensity = 0.1
    clump = 4
    note = "rule 3.2.1: mixed by a wash or chemmy shuffle"

Each step's ``op`` names a shuffler of :mod:`rngcert.simulate.shufflers`; its other keys are that
shuffler's parameters (``note`` is free text). Every problem is reported as an
:class:`~rngcert.errors.EquipmentError` naming the file, the step number (1-based) and the
parameter, with the value found and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rngcert.equipment import parse_toml, read_equipment_file
from rngcert.equipment.cards import MAX_DECKS, new_shoe
from rngcert.errors import EquipmentError
from rngcert.simulate import shufflers as sh

PROCEDURE_DIR = Path(__file__).with_name("procedures")

# op -> (function, {param: (kind, minimum, maximum, default)}) ; kind in {"int", "float", "bool"}
_INF = float("inf")
STEPS: dict[str, tuple[Callable, dict[str, tuple[str, float, float, Any]]]] = {
    "fisher_yates": (sh.fisher_yates, {}),
    "riffle": (sh.riffle, {"switch": ("float", 1e-9, 1.0, 0.5), "times": ("int", 1, 1000, 1)}),
    "grab_riffle": (sh.grab_riffle, {"grab": ("int", 2, 52 * MAX_DECKS, 52)}),
    "overhand": (sh.overhand, {"p": ("float", 1e-9, 1.0, 0.1)}),
    "strip": (sh.strip, {"packet": ("float", 1.0, _INF, 8.0)}),
    "box": (sh.box, {"packet": ("int", 1, 52 * MAX_DECKS, 52)}),
    "cut": (sh.cut, {"lo": ("int", 0, 52 * MAX_DECKS, 1), "hi": ("int", 0, 52 * MAX_DECKS, None)}),
    "wash": (sh.wash, {"intensity": ("float", 0.0, _INF, 0.5), "clump": ("float", 1.0, _INF, 1.0)}),
    "pile": (sh.pile, {"piles": ("int", 2, 52 * MAX_DECKS, 7), "random_order": ("bool", 0, 1, False)}),
    "shelf": (sh.shelf, {"shelves": ("int", 1, 1000, 10), "p_top": ("float", 0.0, 1.0, 0.5)}),
    "csm": (sh.csm, {"compartments": ("int", 1, 1000, 38)}),
}
_DEAL = {
    "baccarat": {"pickup": ("banker-first", "player-first"), "undealt": ("top", "bottom")},
    "blackjack": {"players": (1, 7), "rule": ("S17", "H17")},
}
_TOP_KEYS = {"id", "name", "source", "game", "decks", "cut_card_from_back", "deal", "steps", "notes"}


@dataclass(frozen=True)
class Step:
    """One step: the shuffler name, its validated parameters and a free-text note."""

    op: str
    params: dict
    note: str = ""

    def apply(self, shoes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        fn = STEPS[self.op][0]
        return fn(shoes, rng, **self.params)


@dataclass(frozen=True)
class Procedure:
    """A validated shuffle procedure.

    Attributes
    ----------
    id, name, source : str
    game : {"baccarat", "blackjack", "none"}
    decks : int
    cut_card_from_back : int
        Cards behind the cutting card.
    steps : tuple of Step
    deal : dict
        Deal/pickup parameters of the game.
    path : str
        File it was read from (for messages and reports).
    """

    id: str
    name: str
    source: str
    game: str
    decks: int
    cut_card_from_back: int
    steps: tuple
    deal: dict = field(default_factory=dict)
    path: str = ""

    @property
    def n_cards(self) -> int:
        return 52 * self.decks

    @property
    def cut_position(self) -> int:
        """Cards in front of the cutting card (always dealt)."""
        return self.n_cards - self.cut_card_from_back

    def shuffle(self, shoes, rng: np.random.Generator) -> np.ndarray:
        """Apply the steps, in order, to shoes of shape (n_shoes, 52·decks); returns a new array."""
        out = np.asarray(shoes)
        if out.ndim != 2 or out.shape[1] != self.n_cards:
            raise EquipmentError(f"{self.path}: procedure is for {self.decks} decks ({self.n_cards} cards), got shoes of shape {out.shape}")
        for st in self.steps:
            out = st.apply(out, rng)
        return out

    def deal_pickup(self, shoes) -> np.ndarray:
        """Deal the shoes to the cutting card and pick up: the next shuffle's starting order."""
        if self.game == "baccarat":
            return sh.deal_pickup_baccarat(shoes, cut_position=min(self.cut_position, self.n_cards - 6), **self.deal)[0]
        if self.game == "blackjack":
            return sh.deal_pickup_blackjack(shoes, cut_position=self.cut_position, **self.deal)[0]
        return np.asarray(shoes).copy()

    def simulate(self, n_shoes: int, rng: np.random.Generator, *, start: str = "pickup") -> tuple[np.ndarray, np.ndarray]:
        """Simulate ``n_shoes`` independent tables through one shuffle.

        Parameters
        ----------
        n_shoes : int >= 1
        rng : numpy.random.Generator
        start : {"pickup", "new-deck"}
            "new-deck": the shuffle starts from decks in new-deck order. "pickup" (default):
            new decks are shuffled once, dealt to the cutting card and picked up (004 §2 3.4/3.6,
            §3 3.4/3.6); the shuffle under test starts from that discard order, as at a live
            table between shoes.

        Returns
        -------
        before, after : (n_shoes, 52·decks) ndarray of int16
            Card codes (with deck serials) before and after the shuffle under test.
        """
        if isinstance(n_shoes, bool) or not isinstance(n_shoes, (int, np.integer)) or n_shoes < 1:
            raise EquipmentError(f"n_shoes must be an integer >= 1, got {n_shoes!r}")
        if start not in ("pickup", "new-deck"):
            raise EquipmentError(f"start must be 'pickup' or 'new-deck', got {start!r}")
        fresh = np.tile(new_shoe(self.decks), (int(n_shoes), 1))
        before = fresh if start == "new-deck" else self.deal_pickup(self.shuffle(fresh, rng))
        return before, self.shuffle(before, rng)

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "source": self.source, "game": self.game, "decks": self.decks,
                "cut_card_from_back": self.cut_card_from_back, "deal": dict(self.deal), "path": self.path,
                "steps": [{"op": s.op, **s.params, "note": s.note} for s in self.steps]}


def _err(where: str, msg: str) -> EquipmentError:
    return EquipmentError(f"{where}: {msg}")


def _check_param(where: str, name: str, value, kind: str, lo, hi):
    if kind == "bool":
        if not isinstance(value, bool):
            raise _err(where, f"parameter {name!r} must be true or false, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err(where, f"parameter {name!r} must be a number, got {value!r}")
    if kind == "int" and not float(value).is_integer():
        raise _err(where, f"parameter {name!r} must be an integer, got {value!r}")
    if value < 0:
        raise _err(where, f"parameter {name!r} must not be negative, got {value!r}")
    if not (lo <= value <= hi):
        raise _err(where, f"parameter {name!r} must be in [{lo}, {hi}], got {value!r}")
    return int(value) if kind == "int" else float(value)


def parse_procedure(data: dict, path: str = "<procedure>") -> Procedure:
    """Validate a procedure given as a dict (already parsed TOML); see :func:`load_procedure`."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _err(path, f"unknown top-level key(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    for key in ("id", "decks", "steps"):
        if key not in data:
            raise _err(path, f"missing required key {key!r}")
    decks = data["decks"]
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise _err(path, f"'decks' must be an integer in 1..{MAX_DECKS}, got {decks!r}")
    n = 52 * decks
    game = data.get("game", "none")
    if game not in ("baccarat", "blackjack", "none"):
        raise _err(path, f"'game' must be 'baccarat', 'blackjack' or 'none', got {game!r}")
    cut_back = data.get("cut_card_from_back", 0)
    if isinstance(cut_back, bool) or not isinstance(cut_back, int) or not 0 <= cut_back < n:
        raise _err(path, f"'cut_card_from_back' must be an integer in 0..{n - 1}, got {cut_back!r}")
    deal = dict(data.get("deal", {}))
    if game in _DEAL:
        spec = _DEAL[game]
        for k, v in deal.items():
            if k not in spec:
                raise _err(path, f"[deal] unknown parameter {k!r} for {game}; allowed: {sorted(spec)}")
            allowed = spec[k]
            if k == "players":
                if isinstance(v, bool) or not isinstance(v, int) or not allowed[0] <= v <= allowed[1]:
                    raise _err(path, f"[deal] 'players' must be an integer in {allowed[0]}..{allowed[1]}, got {v!r}")
            elif v not in allowed:
                raise _err(path, f"[deal] {k!r} must be one of {list(allowed)}, got {v!r}")
    elif deal:
        raise _err(path, f"[deal] given but game is {game!r}")
    if game == "baccarat" and cut_back < 6 and cut_back != 0:
        pass  # a coup may run past the cutting card; deal_pickup handles the shoe end
    steps_in = data["steps"]
    if not isinstance(steps_in, list) or not steps_in:
        raise _err(path, "'steps' must be a non-empty array of tables ([[steps]])")
    if len(steps_in) > MAX_STEPS:
        raise _err(path, f"{len(steps_in):,} steps; a procedure may have at most {MAX_STEPS:,}")
    steps = []
    for i, st in enumerate(steps_in, start=1):
        where = f"{path}: step {i}"
        if not isinstance(st, dict) or "op" not in st:
            raise EquipmentError(f"{where}: each step needs an 'op'")
        op = st["op"]
        if op not in STEPS:
            raise EquipmentError(f"{where}: unknown step {op!r}; known steps: {sorted(STEPS)}")
        spec = STEPS[op][1]
        params = {}
        for k, v in st.items():
            if k in ("op", "note"):
                continue
            if k not in spec:
                raise EquipmentError(f"{where} ({op}): unknown parameter {k!r}; allowed: {sorted(spec) or 'none'}")
            kind, lo, hi, _ = spec[k]
            params[k] = _check_param(f"{where} ({op})", k, v, kind, lo, hi)
        if op == "cut":
            lo = params.get("lo", 1)
            hi = params.get("hi", n - 1)
            if not lo <= hi <= n:
                raise EquipmentError(f"{where} (cut): need 0 <= lo <= hi <= {n}, got lo={lo}, hi={hi}")
        if op in ("grab_riffle",):
            g = params.get("grab", 52)
            if g % 2 or n % g:
                raise EquipmentError(f"{where} (grab_riffle): parameter 'grab' must be even and divide {n}, got {g}")
        if op == "shelf" and 2 * n * params.get("shelves", 10) > 32767:
            raise EquipmentError(f"{where} (shelf): shelves * cards must be <= 16383, got {params.get('shelves', 10)} * {n}")
        steps.append(Step(op, params, str(st.get("note", ""))))
    return Procedure(
        id=str(data["id"]), name=str(data.get("name", data["id"])), source=str(data.get("source", "")), game=game,
        decks=decks, cut_card_from_back=cut_back, steps=tuple(steps), deal=deal, path=path,
    )


MAX_STEPS = 1000  #: steps a procedure may have (each one is simulated for every shoe)


def packaged_procedures() -> dict[str, Path]:
    """Packaged procedures by id (file stem): ``{"baccarat-004": Path, "blackjack-004": Path}``."""
    return {p.stem: p for p in sorted(PROCEDURE_DIR.glob("*.toml"))}


def load_procedure(source: str | Path) -> Procedure:
    """Load and validate a procedure from a TOML file path or a packaged procedure id.

    Parameters
    ----------
    source : str or Path
        A path to a ``.toml`` file, or the id of a packaged procedure (``"baccarat-004"``).

    Returns
    -------
    Procedure

    Raises
    ------
    EquipmentError
        File missing or not TOML (with the parser's line/column), unknown step, unknown or
        out-of-range parameter (naming the file, the 1-based step number and the parameter).
    """
    pk = packaged_procedures()
    p = Path(source)
    if not p.exists() and str(source) in pk:
        p = pk[str(source)]
    if not p.exists():
        raise EquipmentError(f"procedure {str(source)!r} is neither a file nor a packaged procedure {sorted(pk)}")
    data = parse_toml(read_equipment_file(p, "procedure file"), str(p))
    return parse_procedure(data, str(p))
