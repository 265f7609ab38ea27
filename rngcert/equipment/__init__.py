"""What is certified: wheels (pockets in wheel order, colours, sections, symbols), cards, shoes."""

from __future__ import annotations

from pathlib import Path

#: the helpers below and the public modules (each imported on first use: ``from rngcert.equipment import wheel``)
__all__ = ["MAX_FILE_BYTES", "check_keys", "parse_toml", "read_equipment_file",
           "cards", "games", "packaged", "paytables", "procedure", "protocol", "scaling", "wheel"]

#: An equipment file (wheel, pay table, procedure) larger than this is refused before it is parsed.
MAX_FILE_BYTES = 8 << 20


def read_equipment_file(path: Path, what: str = "equipment file", digest: list | None = None) -> str:
    """The text of a lab's equipment TOML file, or an :class:`EquipmentError` that says why not
    (missing, not a regular file, too large, not UTF-8, unreadable). The size is checked before
    anything is read.

    ``digest``, when given, gets the SHA-256 of the bytes read appended: the hash a report names is that of the
    very bytes parsed (the file is not read a second time, when it may have changed).
    """
    from rngcert.errors import EquipmentError

    path = Path(path)
    if not path.exists():
        raise EquipmentError(f"{what} {str(path)!r} does not exist")
    if not path.is_file():
        raise EquipmentError(f"{what} {str(path)!r} is not a regular file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise EquipmentError(f"{path}: {size:,} bytes; an {what} may be at most {MAX_FILE_BYTES >> 20} MiB")
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise EquipmentError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise EquipmentError(f"{path}: more than {MAX_FILE_BYTES >> 20} MiB; an {what} may be at most that")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark (Windows editors) changes no key or value
    except UnicodeDecodeError as exc:
        raise EquipmentError(f"{path}: not UTF-8 text (byte {exc.start}); save the {what} as UTF-8") from None
    if digest is not None:
        import hashlib

        digest.append(hashlib.sha256(data).hexdigest())
    return text


def parse_toml(text: str, where: str) -> dict:
    """Parse an equipment TOML document; every way it can fail is an :class:`EquipmentError`
    naming the file (invalid TOML with the parser's line and column, or nesting so deep that
    the parser runs out of stack)."""
    import tomllib

    from rngcert.errors import EquipmentError

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EquipmentError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:
        raise EquipmentError(f"{where}: arrays or tables are nested too deeply to be an equipment definition") from None


def check_keys(doc: dict, allowed, where: str, at: str = "") -> None:
    """Refuse a key of ``doc`` that is not in ``allowed``: a misspelt key (``gren``, ``zero_rules``) would
    otherwise be ignored and its default read in its place. Raises :class:`EquipmentError` naming the
    file (``where``), the table (``at``, e.g. ``"bets[2] "``), the key and the keys allowed there."""
    from rngcert.errors import EquipmentError

    unknown = [k for k in doc if k not in allowed]
    if unknown:
        raise EquipmentError(f"{where}: {at}unknown key {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}")
