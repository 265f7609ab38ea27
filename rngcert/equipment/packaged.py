"""Registries of packaged TOML definitions: one file per entry in a folder of ``rngcert.equipment``.

A :class:`Packaged` registry lists its folder (adding an entry is adding one ``.toml`` file, no code),
loads an entry by name or a lab's ``.toml`` file by path, validates it with the kind's own
``from_dict`` and keeps each validated packaged entry (they are read once). The wheel-controller
protocols (:data:`rngcert.equipment.protocol.PROTOCOLS`) and the pay tables
(:data:`rngcert.equipment.paytables.PAYTABLES`) are such registries; the card games are one too
(:mod:`rngcert.equipment.games`), as code entries because a game brings its deal and trackers.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Callable, Iterator

from rngcert.equipment import parse_toml, read_equipment_file
from rngcert.errors import EquipmentError

__all__ = ["Packaged"]


class Packaged:
    """The packaged definitions of one kind, read from ``rngcert/equipment/<folder>/*.toml``.

    Parameters
    ----------
    folder : str
        Folder of ``rngcert.equipment`` holding one ``NAME.toml`` per entry.
    what, plural : str
        The kind in messages (``"pay table"``, ``"pay tables"``).
    file_what : str
        A lab's file of this kind in messages (``"pay table file"``).
    from_dict : callable
        ``from_dict(document, where)`` validates a parsed document into the kind's object.
    root : path-like, optional
        Where ``folder`` lies (default: the installed ``rngcert.equipment`` package).
    """

    def __init__(self, folder: str, what: str, plural: str, file_what: str, from_dict: Callable[[dict, str], object], root=None):
        self.folder, self.what, self.plural, self.file_what, self.from_dict = folder, what, plural, file_what, from_dict
        self.root = root
        self._loaded: dict[str, object] = {}

    def _dir(self):
        return (resources.files("rngcert.equipment") if self.root is None else Path(self.root)) / self.folder

    def names(self) -> list[str]:
        """Names of the packaged entries (file stems), sorted."""
        d = self._dir()
        return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".toml"))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str):
        """The validated packaged entry ``name`` (read and validated once)."""
        if name not in self._loaded:
            names = self.names()
            if name not in names:
                raise EquipmentError(f"unknown {self.what} {name!r}; packaged {self.plural}: {', '.join(names)}; or give a .toml file")
            where = f"rngcert/equipment/{self.folder}/{name}.toml"
            text = (self._dir() / f"{name}.toml").read_text(encoding="utf-8")
            self._loaded[name] = self.from_dict(parse_toml(text, where), where)
        return self._loaded[name]

    def items(self) -> Iterator[tuple[str, object]]:
        """``(name, entry)`` of every packaged entry, validated."""
        return ((n, self.get(n)) for n in self.names())

    def _not_posing_as_packaged(self, obj, path: Path) -> None:
        """A lab's file whose id (or name) is a packaged entry's must define that entry: output names it by its
        id, so an edited ``roulette-single-zero`` paying 40:1 would be printed as the packaged table (as a wheel file)."""
        key = getattr(obj, "id", None) or getattr(obj, "name", None)
        if not is_dataclass(obj) or not isinstance(key, str) or key not in self.names():
            return
        ref = self.get(key)
        diff = [f.name for f in fields(obj) if f.name not in ("path", "where", "sha256") and getattr(obj, f.name) != getattr(ref, f.name)]
        if diff:
            raise EquipmentError(f"{path}: {key!r} is the packaged {self.what}'s id, and this file differs from it ({', '.join(diff)}): "
                                 f"give the lab's {self.what} its own id")

    def load(self, spec: str | Path):
        """A packaged entry by name, or a lab's definition from a ``.toml`` file path (read each time)."""
        spec = str(spec)
        path = Path(spec)
        if path.suffix == ".toml" or path.exists():
            digest: list = []
            obj = self.from_dict(parse_toml(read_equipment_file(path, self.file_what, digest), str(path)), str(path))
            self._not_posing_as_packaged(obj, path)
            if is_dataclass(obj) and "sha256" in {f.name for f in fields(obj)}:  # the report names a lab's file by its hash
                obj = replace(obj, sha256=digest[0])
            return obj
        return self.get(spec)
