"""Shuffle procedures as data: TOML files listing steps with parameters (schema and validation only).

A procedure file (see ``procedures/*.toml``, packaged with rngcert) looks like::

    id = "baccarat-004"
    name = "Baccarat shuffle of 004_e56c47cd813c1f96.txt §2 rule 3.2-3.3"
    source = "..."
    game = "baccarat"            # or "blackjack", or "none"
    kind = "manual"              # "manual" (dealer's hands) or "machine"; default from the steps
    decks = 8
    cut_card_from_back = 7       # cards behind the cutting card (0: deal the whole shoe)

    [deal]                       # the deal and pickup producing the next shuffle's start order
    pickup = "banker-first"      # baccarat: banker-first | player-first
    undealt = "top"              # baccarat: top | bottom
    # blackjack: players = 7, rule = "S17" | "H17"

    [rules]                      # blackjack game rules (house edge, trackers); see RULE_KEYS
    allowed_dealer = ["S17"]
    allowed_dealer_source = "004 §3 rule 4.4 ii"

    [[steps]]
    op = "wash"
    intensity = 0.1              # travel: s.d. of a clump's move, as a share of the stack
    clump = 4
    note = "rule 3.2.1: mixed by a wash or chemmy shuffle"

    [[parameters]]               # what is known about each value (default: assumed)
    name = "steps[1].intensity"  # or "decks", "cut_card_from_back", "deal.pickup", "rules.double", ...
    status = "measured"          # "measured" (interval and source required), "rule", "assumed"
    interval = [0.12, 0.18]
    source = "fit to 500 recorded shoes of table T1 (report ...)"

Each step's ``op`` names a shuffler function of the same name in :mod:`rngcert.simulate.shufflers`
and its other keys are that shuffler's parameters (``note`` is free text). Adding a step is one
entry in :data:`STEPS` plus the shuffler function; execution lives in
:mod:`rngcert.simulate.procedure` (equipment never runs a simulation). Every problem is reported
as an :class:`~rngcert.errors.EquipmentError` naming the file, the step number (1-based) and the
parameter, with the value found and what is allowed.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rngcert.equipment import parse_toml, read_equipment_file
from rngcert.equipment.cards import HOLE_CARD_RULES, MAX_DECKS, _ShoeGeometry
from rngcert.equipment.games import GAMES
from rngcert.errors import EquipmentError

PROCEDURE_DIR = Path(__file__).with_name("procedures")

_INF = float("inf")
_N = 52 * MAX_DECKS
#: op -> (kind, {param: (type, minimum, maximum, default)}); type in {"int", "float", "bool"}.
#: kind "machine": an algorithm or a device that can be exact; "manual": a dealer's hands.
STEPS: dict[str, tuple[str, dict[str, tuple[str, float, float, Any]]]] = {
    "fisher_yates": ("machine", {}),
    "sattolo": ("machine", {}),
    "naive_swap": ("machine", {}),
    "riffle": ("manual", {"switch": ("float", 1e-9, 1.0, 0.5), "times": ("int", 1, 1000, 1)}),
    "grab_riffle": ("manual", {"grab": ("int", 2, _N, 52), "times": ("int", 1, 100, 1)}),
    "overhand": ("manual", {"p": ("float", 1e-9, 1.0, 0.1)}),
    "strip": ("manual", {"packet": ("float", 1.0, _INF, 8.0)}),
    "box": ("manual", {"packet": ("int", 1, _N, 52)}),
    "cut": ("manual", {"lo": ("int", 0, _N, 1), "hi": ("int", -_N, _N, -1)}),
    "wash": ("manual", {"intensity": ("float", 0.0, 100.0, 0.5), "clump": ("float", 1.0, 1000.0, 1.0),
                        "rotate": ("float", 0.0, 1.0, 0.0)}),
    "pile": ("manual", {"piles": ("int", 2, _N, 7), "random_order": ("bool", 0, 1, False)}),
    "shelf": ("machine", {"shelves": ("int", 1, 1000, 10), "p_top": ("float", 0.0, 1.0, 0.5)}),
    "csm": ("machine", {"compartments": ("int", 1, 1000, 38)}),
}
#: Human names of step parameters in reports.
PARAM_LABELS = {"intensity": "travel (s.d. of a clump's move, share of the stack)", "clump": "mean clump size (cards)",
                "rotate": "share of clumps turned end for end", "times": "repetitions", "grab": "cards per grab",
                "switch": "drop switch probability", "lo": "smallest cut", "hi": "largest cut (negative: from the back)"}


def _deal_keys(game: str) -> dict:
    """The [deal] keys a procedure of ``game`` may set (:attr:`rngcert.equipment.games.Game.deal_keys`)."""
    return GAMES[game].deal_keys if game in GAMES else {}

#: Blackjack game rules: key -> (allowed values or type, default, meaning).
RULE_KEYS: dict[str, tuple[Any, Any, str]] = {
    "allowed_dealer": (("S17", "H17"), ["S17", "H17"], "dealer rules the game's rules permit"),
    "allowed_dealer_source": (str, "", "rule that fixes the permitted dealer rules"),
    "hole_card": (HOLE_CARD_RULES, "none", "dealer's hole card and peek"),
    "double": (("any", "9-11", "10-11"), "any", "first-two-card totals a player may double"),
    "double_after_split": (bool, False, "doubling after a split"),
    "split_hands": (int, 2, "most hands a player may split to (1: no split)"),
    "split_aces_one_card": (bool, True, "split aces receive one card each"),
    "blackjack_pays": (float, 1.5, "a player's blackjack pays this to 1"),
    "insurance_pays": (float, 2.0, "insurance pays this to 1"),
    "enhc_takes_all": (bool, True, "without a peek, a dealer blackjack takes doubled and split bets too"),
}
_TOP_KEYS = {"id", "name", "source", "game", "kind", "decks", "cut_card_from_back", "deal", "rules", "steps",
             "parameters", "notes"}
STATUSES = ("measured", "rule", "assumed")


@dataclass(frozen=True)
class Step:
    """One step: the shuffler name, its validated parameters and a free-text note."""

    op: str
    params: dict
    note: str = ""

    @property
    def kind(self) -> str:
        return STEPS[self.op][0]

    def full_params(self) -> dict:
        """Parameters with the shuffler's defaults filled in."""
        return {k: self.params.get(k, spec[3]) for k, spec in STEPS[self.op][1].items()}


@dataclass(frozen=True)
class Procedure(_ShoeGeometry):
    """A validated shuffle procedure (pure data; run it with :mod:`rngcert.simulate.procedure`).

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
    rules : dict
        Blackjack game rules (:data:`RULE_KEYS`, defaults filled in); empty for other games.
    kind : {"manual", "machine"}
        "machine" when every step is an algorithm or device (then a statistical rejection is a
        FAIL); "manual" otherwise (a FAIL needs a player's edge; see the shuffle battery).
    declared : dict
        Declared status of parameters by name: ``{"status", "interval", "source"}``.
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
    rules: dict = field(default_factory=dict)
    kind: str = "manual"
    declared: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict, compare=False, repr=False)
    sha256: str = field(default="", compare=False)

    @property
    def _behind_cut(self) -> int:
        return self.cut_card_from_back

    @property
    def dealer_rule(self) -> str:
        return str(self.deal.get("rule", "S17"))

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "source": self.source, "game": self.game, "kind": self.kind, "decks": self.decks,
                "cut_card_from_back": self.cut_card_from_back, "penetration": self.penetration, "deal": dict(self.deal),
                "rules": dict(self.rules), "path": self.path,
                "steps": [{"op": s.op, **s.params, "note": s.note} for s in self.steps]} | ({"sha256": self.sha256} if self.sha256 else {})

    # ------------------------------------------------------------------ parameters
    def value(self, name: str):
        """Value of a parameter by name (``"decks"``, ``"deal.rule"``, ``"steps[2].times"``)."""
        kind, a, b = _split_name(name, self)
        if kind == "top":
            return getattr(self, a)
        if kind == "deal":
            return self.deal.get(a)
        if kind == "rules":
            return self.rules.get(a)
        return self.steps[a].full_params()[b]

    def parameters(self) -> list[dict]:
        """Every parameter of the procedure with its status: measured (with its interval and the
        data it came from), rule (with the rule), or assumed (the default).

        Returns
        -------
        list of dict
            ``{"name", "label", "value", "status", "interval", "source"}`` in file order.
        """
        names = ["decks", "cut_card_from_back"] + [f"deal.{k}" for k in self.deal]
        if self.game == "blackjack":
            names += [f"rules.{k}" for k in self.rules if k != "allowed_dealer_source"]
        for i, st in enumerate(self.steps, start=1):
            names += [f"steps[{i}].{k}" for k in STEPS[st.op][1]]
        out = []
        for nm in names:
            d = self.declared.get(nm, {})
            label = nm
            if nm.startswith("steps["):
                i = int(nm[6:nm.index("]")])
                p = nm.split(".", 1)[1]
                label = f"step {i} {self.steps[i - 1].op}: {PARAM_LABELS.get(p, p)}"
            out.append({"name": nm, "label": label, "value": _plain(self.value(nm)), "status": d.get("status", "assumed"),
                        "interval": d.get("interval"), "source": d.get("source", "" if d else "not given by the rules; not measured")})
        return out

    def with_params(self, values: dict, *, status: str | None = None, source: str = "", intervals: dict | None = None) -> "Procedure":
        """A copy with parameters changed (validated as if read from a file).

        Parameters
        ----------
        values : dict
            ``{name: value}``, names as in :meth:`parameters`.
        status : {"measured", "assumed", "rule"}, optional
            Status recorded for the changed parameters (default: left as declared, else assumed).
        source : str
            Where the values come from (a fit, a sensitivity grid point).
        intervals : dict, optional
            ``{name: [lo, hi]}`` for measured values.

        Raises
        ------
        EquipmentError
            Unknown parameter name or a value out of range.
        """
        raw = copy.deepcopy(self.raw)
        for nm, v in values.items():
            kind, a, b = _split_name(nm, self)
            if kind == "top":
                raw[a] = v
            elif kind in ("deal", "rules"):
                raw.setdefault(kind, {})[a] = v
            else:
                raw["steps"][a][b] = v
        if status is not None:
            decl = [p for p in raw.get("parameters", []) if p.get("name") not in values]
            for nm in values:
                entry = {"name": nm, "status": status, "source": source or "changed by rngcert"}
                if intervals and nm in intervals:
                    entry["interval"] = list(intervals[nm])
                decl.append(entry)
            raw["parameters"] = decl
        return parse_procedure(raw, self.path)

    def with_decks(self, decks: int) -> "Procedure":
        """The same procedure for another number of decks (the cutting card stays at the same
        number of cards from the back, e.g. "4 decks from the back" of 004 §3 rule 3.3 i).

        Raises
        ------
        EquipmentError
            The cutting card would not be inside the shoe, or would leave fewer cards in front of it
            than one round of the game needs: the message gives the rule that places it and the
            numbers of decks for which the procedure can be dealt.
        """
        need = GAMES[self.game].min_cards if self.game in GAMES else 1
        if isinstance(decks, int) and not isinstance(decks, bool) and 52 * decks - self.cut_card_from_back < need:
            par = {p["name"]: p for p in self.parameters()}["cut_card_from_back"]
            why = f" ({par['source']})" if par.get("source") else ""
            lo = (self.cut_card_from_back + need + 51) // 52
            ok = f"{lo} to {MAX_DECKS} decks" if lo <= MAX_DECKS else "no number of decks"
            raise EquipmentError(
                f"{self.id} with {decks} deck(s): the cutting card is {self.cut_card_from_back} cards from the back{why}, "
                f"which leaves {max(0, 52 * decks - self.cut_card_from_back)} card(s) in front of it"
                + (f" (a {GAMES[self.game].round_name} needs {need})" if self.game in GAMES else "")
                + f"; this procedure can be dealt with {ok}")
        return self.with_params({"decks": decks})

    def with_game(self, game: str) -> "Procedure":
        """The same shuffle dealing another registered game (``--game`` on a procedure): the steps,
        decks and cutting card are kept; the ``[deal]`` and ``[rules]`` of the old game are dropped
        (the new game's defaults apply) and the procedure's id says which game it deals."""
        if game == self.game:
            return self
        data = copy.deepcopy(self.raw)
        data.pop("deal", None)
        data.pop("rules", None)
        data["parameters"] = [p for p in data.get("parameters", []) if not str(p.get("name", "")).startswith(("deal.", "rules."))]
        data["id"], data["game"] = f"{self.id}+{game}", game
        data["name"] = f"{self.name} (dealing {game})"
        return parse_procedure(data, self.path)


def _plain(v):
    return list(v) if isinstance(v, tuple) else v


def _split_name(name: str, proc: "Procedure | None" = None, n_steps: int | None = None):
    """("top", attr, None) | ("deal"/"rules", key, None) | ("step", index0, param)."""
    nm = str(name)
    if nm in ("decks", "cut_card_from_back"):
        return "top", nm, None
    if nm.startswith("deal.") or nm.startswith("rules."):
        kind, key = nm.split(".", 1)
        return kind, key, None
    if nm.startswith("steps[") and "]." in nm:
        try:
            i = int(nm[6:nm.index("]")])
        except ValueError:
            raise EquipmentError(f"parameter name {name!r}: expected steps[<1-based step number>].<parameter>") from None
        k = n_steps if n_steps is not None else (len(proc.steps) if proc is not None else None)
        if k is not None and not 1 <= i <= k:
            raise EquipmentError(f"parameter name {name!r}: the procedure has {k} step(s)")
        return "step", i - 1, nm.split("].", 1)[1]
    raise EquipmentError(f"unknown parameter name {name!r}: use 'decks', 'cut_card_from_back', 'deal.<key>', 'rules.<key>' "
                         "or 'steps[<n>].<parameter>'")


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
    if value < 0 and lo >= 0:
        raise _err(where, f"parameter {name!r} must not be negative, got {value!r}")
    if not (lo <= value <= hi):
        raise _err(where, f"parameter {name!r} must be in [{lo}, {hi}], got {value!r}")
    return int(value) if kind == "int" else float(value)


def _check_rules(path: str, game: str, rules_in) -> dict:
    if game != "blackjack":
        if rules_in:
            raise _err(path, f"[rules] given but game is {game!r} (only blackjack has rule options)")
        return {}
    if not isinstance(rules_in, dict):
        raise _err(path, "[rules] must be a table")
    out = {}
    for k, v in rules_in.items():
        if k not in RULE_KEYS:
            raise _err(path, f"[rules] unknown key {k!r}; allowed: {sorted(RULE_KEYS)}")
    for k, (allowed, default, _) in RULE_KEYS.items():
        v = rules_in.get(k, default)
        if k == "allowed_dealer":
            if not isinstance(v, list) or not v or any(x not in allowed for x in v):
                raise _err(path, f"[rules] 'allowed_dealer' must be a non-empty list of {list(allowed)}, got {v!r}")
        elif isinstance(allowed, tuple):
            if v not in allowed:
                raise _err(path, f"[rules] {k!r} must be one of {list(allowed)}, got {v!r}")
        elif allowed is bool:
            if not isinstance(v, bool):
                raise _err(path, f"[rules] {k!r} must be true or false, got {v!r}")
        elif allowed is int:
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 4:
                raise _err(path, f"[rules] {k!r} must be an integer in 1..4, got {v!r}")
        elif allowed is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 10:
                raise _err(path, f"[rules] {k!r} must be a number in (0, 10], got {v!r}")
            v = float(v)
        elif allowed is str and not isinstance(v, str):
            raise _err(path, f"[rules] {k!r} must be text, got {v!r}")
        out[k] = v
    return out


def _check_deal(path: str, game: str, deal: dict) -> None:
    """The [deal] parameters, checked against the game's deal keys (none when there is no game)."""
    if game in GAMES:
        spec = _deal_keys(game)
        for k, v in deal.items():
            if k not in spec:
                raise _err(path, f"[deal] unknown parameter {k!r} for {game}; allowed: {sorted(spec)}")
            allowed = spec[k]
            if k in GAMES[game].int_keys:
                if isinstance(v, bool) or not isinstance(v, int) or not allowed[0] <= v <= allowed[1]:
                    raise _err(path, f"[deal] {k!r} must be an integer in {allowed[0]}..{allowed[1]}, got {v!r}")
            elif v not in allowed:
                raise _err(path, f"[deal] {k!r} must be one of {list(allowed)}, got {v!r}")
    elif deal:
        raise _err(path, f"[deal] given but game is {game!r}")


def _check_steps(path: str, steps_in, n: int) -> list:
    """The [[steps]] as :class:`Step`, each parameter checked (``n`` cards in the shoe)."""
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
            hi = params.get("hi", -1)
            hi_abs = n + hi if hi < 0 else hi
            if not 0 <= lo <= hi_abs <= n:
                raise EquipmentError(f"{where} (cut): need 0 <= lo <= hi <= {n} (a negative hi counts from the back), got lo={lo}, hi={hi}")
        if op == "grab_riffle":
            g = params.get("grab", 52)
            if g % 2 or n % g:
                raise EquipmentError(f"{where} (grab_riffle): parameter 'grab' must be even and divide {n}, got {g}")
        if op == "shelf" and 2 * n * params.get("shelves", 10) > 32767:
            raise EquipmentError(f"{where} (shelf): shelves * cards must be <= 16383, got {params.get('shelves', 10)} * {n}")
        steps.append(Step(op, params, str(st.get("note", ""))))
    return steps


def _check_declared(path: str, params_in, steps: list, game: str) -> dict:
    """The [[parameters]] entries (what is measured, fixed by a rule, ...) by name, each checked."""
    declared = {}
    if not isinstance(params_in, list):
        raise _err(path, "'parameters' must be an array of tables ([[parameters]])")
    for j, p in enumerate(params_in, start=1):
        where = f"{path}: parameters entry {j}"
        if not isinstance(p, dict) or "name" not in p or "status" not in p:
            raise EquipmentError(f"{where}: needs 'name' and 'status'")
        extra = set(p) - {"name", "status", "interval", "source"}
        if extra:
            raise EquipmentError(f"{where}: unknown key(s) {sorted(extra)}; allowed: interval, name, source, status")
        try:
            k, a, b = _split_name(p["name"], n_steps=len(steps))
        except EquipmentError as exc:
            raise EquipmentError(f"{where}: {exc}") from None
        if k == "step" and b not in STEPS[steps[a].op][1]:
            raise EquipmentError(f"{where}: step {a + 1} ({steps[a].op}) has no parameter {b!r}")
        if k == "deal" and a not in _deal_keys(game):
            raise EquipmentError(f"{where}: no deal parameter {a!r} for game {game!r}")
        if k == "rules" and a not in RULE_KEYS:
            raise EquipmentError(f"{where}: no rule {a!r}")
        if p["status"] not in STATUSES:
            raise EquipmentError(f"{where}: status must be one of {list(STATUSES)}, got {p['status']!r}")
        entry = {"status": p["status"], "source": str(p.get("source", ""))}
        if p["status"] == "measured":
            iv = p.get("interval")
            if not (isinstance(iv, list) and len(iv) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in iv)
                    and iv[0] <= iv[1]):
                raise EquipmentError(f"{where}: a measured value needs interval = [low, high], got {iv!r}")
            if not entry["source"]:
                raise EquipmentError(f"{where}: a measured value needs a 'source' (the data it came from)")
            entry["interval"] = [float(iv[0]), float(iv[1])]
        elif p["status"] == "rule" and not entry["source"]:
            raise EquipmentError(f"{where}: a value fixed by the rules needs a 'source' (the rule)")
        declared[str(p["name"])] = entry
    return declared


def parse_procedure(data: dict, path: str = "<procedure>") -> Procedure:
    """Validate a procedure given as a dict (already parsed TOML); see :func:`load_procedure`."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _err(path, f"unknown top-level key(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    for key in ("id", "decks", "steps"):
        if key not in data:
            raise _err(path, f"missing required key {key!r}")
    if not isinstance(data["id"], str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", data["id"]):  # (it names the report's folder)
        raise _err(path, f"id {data['id']!r} may only hold letters, digits, '_', '.', '+', '-'")
    decks = data["decks"]
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise _err(path, f"'decks' must be an integer in 1..{MAX_DECKS}, got {decks!r}")
    n = 52 * decks
    game = data.get("game", "none")
    if game != "none" and game not in GAMES:
        raise _err(path, f"'game' must be {', '.join(repr(g) for g in GAMES)} or 'none', got {game!r}")
    cut_back = data.get("cut_card_from_back", 0)
    if isinstance(cut_back, bool) or not isinstance(cut_back, int) or not 0 <= cut_back < n:
        raise _err(path, f"'cut_card_from_back' must be an integer in 0..{n - 1} for {decks} deck(s), got {cut_back!r}")
    if game in GAMES and n - cut_back < GAMES[game].min_cards:
        raise _err(path, f"'cut_card_from_back' = {cut_back} leaves {n - cut_back} cards in front of the cutting card; "
                         f"a {GAMES[game].round_name} needs {GAMES[game].min_cards}")
    if not isinstance(data.get("deal", {}), dict):
        raise _err(path, f"[deal] must be a table of the game's deal parameters, got {data['deal']!r}")
    deal = dict(data.get("deal", {}))
    _check_deal(path, game, deal)
    rules = _check_rules(path, game, data.get("rules", {}))
    if game == "blackjack":
        rule = deal.get("rule", "S17")
        if rule not in rules["allowed_dealer"]:
            src = rules.get("allowed_dealer_source") or "the procedure's [rules] allowed_dealer"
            allowed = " or ".join(str(r) for r in rules["allowed_dealer"])
            raise _err(path, f"dealer rule {rule} is not permitted: only {allowed} is allowed by {src}")
    steps = _check_steps(path, data["steps"], n)
    kinds = {STEPS[s.op][0] for s in steps}
    kind = data.get("kind", "machine" if kinds == {"machine"} else "manual")
    if kind not in ("manual", "machine"):
        raise _err(path, f"'kind' must be 'manual' or 'machine', got {kind!r}")
    declared = _check_declared(path, data.get("parameters", []), steps, game)
    return Procedure(
        id=str(data["id"]), name=str(data.get("name", data["id"])), source=str(data.get("source", "")), game=game,
        decks=decks, cut_card_from_back=cut_back, steps=tuple(steps), deal=deal, path=path, rules=rules, kind=kind,
        declared=declared, raw=copy.deepcopy(dict(data)),
    )


MAX_STEPS = 1000  #: steps a procedure may have (each one is simulated for every shoe)


def packaged_procedures() -> dict[str, Path]:
    """Packaged procedures by id (file stem): ``{"baccarat-004": Path, "blackjack-004": Path, ...}``."""
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
        out-of-range parameter (naming the file, the 1-based step number and the parameter), a
        dealer rule the procedure's rules do not permit.
    """
    pk = packaged_procedures()
    p = Path(source)
    if not p.exists() and str(source) in pk:
        p = pk[str(source)]
    if not p.exists():
        raise EquipmentError(f"procedure {str(source)!r} is neither a file nor a packaged procedure {sorted(pk)}")
    digest: list = []
    data = parse_toml(read_equipment_file(p, "procedure file", digest), str(p))
    proc = parse_procedure(data, str(p))
    if p.resolve() in {q.resolve() for q in pk.values()}:
        return proc  # a packaged procedure: named by its id and rngcert's version
    _not_posing_as_packaged(proc, pk)
    return replace(proc, sha256=digest[0])


def _not_posing_as_packaged(proc: Procedure, pk: dict) -> None:
    """A lab's procedure file whose id is a packaged procedure's must be that procedure (its steps, deal,
    rules, decks and declared parameters): a report names the procedure by its id, and an edited
    ``baccarat-004`` would be reported as the packaged one (as a wheel file, :mod:`rngcert.equipment.wheel`)."""
    if proc.id not in pk:
        return
    ref = load_procedure(pk[proc.id])
    mine, theirs = proc.to_dict() | {"path": ""}, ref.to_dict() | {"path": ""}
    if mine != theirs or proc.declared != ref.declared:
        diff = sorted(k for k in mine if mine[k] != theirs.get(k)) or ["declared parameters"]
        raise EquipmentError(f"{proc.path}: id {proc.id!r} is the packaged procedure's, and this file differs from it "
                             f"({', '.join(diff)}): give the lab's procedure its own id")
