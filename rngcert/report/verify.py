"""Tamper evidence for reports: canonical hashing, Ed25519 signatures and verification.

The **canonical content** of a report is its JSON without the ``integrity`` field, serialised
with sorted keys, separators ``,`` and ``:``, UTF-8 and no NaN (:func:`canonical_bytes`); its
SHA-256 is the report's content hash and its first 16 hex digits the **report id** printed in
every page footer. ``integrity`` (written by :func:`seal`) holds::

    {"algorithm": "sha256", "canonical": "<the rule above>", "report_sha256": "<hex>",
     "report_id": "<16 hex>", "files": {"report.html": "<hex>", "rejects.csv": "<hex>", ...},
     "signature": {"algorithm": "Ed25519", "public_key": "<base64 raw 32 bytes>",
                   "key_fingerprint": "<hex SHA-256 of the raw key>", "value": "<base64>"}}

The signature covers the canonical JSON of ``{"report_sha256", "files"}``, so it binds the
content, the HTML, the PDF and rejects.csv at once. ``report.json`` itself is written in one
deterministic layout (:func:`serialise`), so :func:`verify_report` also catches an edit that
leaves the JSON's meaning unchanged (a space, a line end).

Key files are PEM (PKCS#8 private, SubjectPublicKeyInfo public), as written by
:func:`generate_key` or by ``openssl genpkey -algorithm ed25519``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rngcert.errors import InputError
from rngcert.report.schema import sha256_file

CANONICAL = "JSON without the integrity field; keys sorted; separators ',' and ':'; UTF-8; no NaN"
#: What a signature signs, as its ``signed`` field says.
SIGNED = "canonical JSON of {report_sha256, files}"


def canonical_bytes(report: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a report's content (everything but ``integrity``)."""
    body = {k: v for k, v in report.items() if k != "integrity"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def content_sha256(report: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of :func:`canonical_bytes`."""
    return hashlib.sha256(canonical_bytes(report)).hexdigest()


def serialise(report: Mapping[str, Any]) -> str:
    """report.json's text: the one layout rngcert writes (indent 1, ASCII, trailing newline)."""
    return json.dumps(report, indent=1, allow_nan=False) + "\n"


def _signed_payload(report_sha256: str, files: Mapping[str, str]) -> bytes:
    return json.dumps({"files": dict(files), "report_sha256": report_sha256}, sort_keys=True, separators=(",", ":")).encode("utf-8")


# ------------------------------------------------------------------------------------ keys
def _crypto():
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:  # pragma: no cover - cryptography is a dependency
        raise InputError("signatures need the 'cryptography' package: pip install cryptography") from exc
    return serialization, ed25519


def generate_key(private_path: str | Path, public_path: str | Path | None = None) -> tuple[Path, Path]:
    """Write a new Ed25519 key pair as PEM files (private key readable by the owner only).

    Returns
    -------
    (private path, public path)
    """
    serialization, ed25519 = _crypto()
    private_path = Path(private_path)
    public_path = Path(public_path) if public_path else private_path.with_suffix(".pub")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    _write_private(private_path, pem)
    public_path.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private_path, public_path


def _write_private(path: Path, data: bytes) -> None:
    """Write a private key readable by its owner only from the moment the file exists (a file written first and
    chmod-ed after is readable by everyone in between; an existing file keeps no wider mode)."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file (keygen --force) keeps its mode through O_CREAT
        os.write(fd, data)
    finally:
        os.close(fd)


def load_private_key(path: str | Path):
    """An Ed25519 private key from a PEM file (InputError naming the file otherwise)."""
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"{path}: not a readable unencrypted PEM private key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise InputError(f"{path}: the key is {type(key).__name__}, not Ed25519")
    return key


def load_public_key(path: str | Path):
    """An Ed25519 public key from a PEM file (InputError naming the file otherwise)."""
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"{path}: not a readable PEM public key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise InputError(f"{path}: the key is {type(key).__name__}, not Ed25519")
    return key


def _raw(public_key) -> bytes:
    serialization, _ = _crypto()
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public_key) -> str:
    """SHA-256 (hex) of the raw 32-byte public key."""
    return hashlib.sha256(_raw(public_key)).hexdigest()


# ------------------------------------------------------------------------------------ seal
def seal(report: Mapping[str, Any], files: Mapping[str, str | Path], key=None, *, content: str | None = None) -> dict:
    """The ``integrity`` block of a report whose other fields are final.

    Parameters
    ----------
    report : mapping
        The JSON-able report (its own ``integrity`` is ignored).
    files : mapping
        Files written with the report (any name -> path); hashed by file name.
    key : Ed25519PrivateKey, optional
        Signs the content hash and the file hashes.
    content : str, optional
        :func:`content_sha256` of ``report``, when the caller has it already (the writer computed it for the
        HTML's report id): not computed again.
    """
    content = content or content_sha256(report)
    hashes = {Path(p).name: sha256_file(p) for p in files.values()}
    out: dict[str, Any] = {"algorithm": "sha256", "canonical": CANONICAL, "report_sha256": content, "report_id": content[:16], "files": hashes}
    if key is not None:
        sig = key.sign(_signed_payload(content, hashes))
        pub = key.public_key()
        out["signature"] = {
            "algorithm": "Ed25519",
            "signed": SIGNED,
            "public_key": base64.b64encode(_raw(pub)).decode("ascii"),
            "key_fingerprint": fingerprint(pub),
            "value": base64.b64encode(sig).decode("ascii"),
        }
    return out


# ------------------------------------------------------------------------------------ verify
@dataclass
class Check:
    """One verification step: ``status`` is "ok", "FAILED" or "not checked"."""

    item: str
    status: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.status:<11} {self.item}" + (f": {self.detail}" if self.detail else "")


@dataclass
class Verification:
    """Every check of one report folder."""

    folder: Path
    report: dict | None
    checks: list[Check] = field(default_factory=list)

    #: "yes", "no", or "" (not looked at: the report could not be read)
    signed: str = ""
    #: one line on the signature: absent, by which key, trusted or not
    signed_line: str = ""
    #: True when a trusted key (``--key``, ``--keyring`` or ``RNGCERT_TRUSTED_KEYS``) verified the signature
    authenticated: bool = False

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "FAILED"]

    @property
    def unchecked(self) -> list[Check]:
        return [c for c in self.checks if c.status == "not checked"]

    @property
    def result(self) -> str:
        """The verification level (see :data:`LEVELS`): NOT VERIFIED (something failed), INCOMPLETE
        (something could not be checked), VERIFIED (every check passed and a trusted key verified the
        signature) or INTACT (every check passed, but no trusted key vouches for who wrote it)."""
        if self.failed:
            return "NOT VERIFIED"
        if self.unchecked:
            return "INCOMPLETE"
        return "VERIFIED" if self.authenticated else "INTACT"

    @property
    def meaning(self) -> str:
        """What :attr:`result` proves (:data:`LEVELS`; an INTACT report whose rerun agreed says so)."""
        if self.result == "INTACT" and any(c.item == "rerun" and c.status == "ok" for c in self.checks):
            return REPRODUCED_INTACT
        return LEVELS[self.result]

    def add(self, item: str, ok: bool | None, detail: str = "") -> None:
        self.checks.append(Check(item, "not checked" if ok is None else ("ok" if ok else "FAILED"), detail))

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "result": self.result, "meaning": self.meaning, "signed": self.signed,
                "signature": self.signed_line, "authenticated": self.authenticated, "checks": [c.__dict__ for c in self.checks]}


#: What each result of :func:`verify_report` proves (printed by ``rngcert verify`` and in the README).
LEVELS = {
    "VERIFIED": "every hash matches and the signature verifies with a trusted key: the report is intact and was signed by the holder "
                "of that key",
    "INTACT": "every hash matches, but no trusted key vouches for who wrote it: this proves only that the files agree with each other, "
              "not who made them nor that the verdict follows from the data (anyone with rngcert can re-seal an edited report; "
              "--rerun recomputes the verdict, a pinned key authenticates it)",
    "INCOMPLETE": "nothing failed, but something could not be checked (an input not found, nothing to rerun, a file the report "
                  "recorded missing from the folder, or a file in the folder that no hash covers)",
    "NOT VERIFIED": "a hash, the signature, the signing policy or a recomputed statistic differs: do not rely on the report",
}
#: INTACT after a --rerun that agreed.
REPRODUCED_INTACT = ("every hash matches and --rerun recomputed every statistic and verdict from the inputs given, so the content follows "
                     "from those files, except what no rerun recomputes (the lab's description of the unit, --subject; the command line, "
                     "time and versions); but no trusted key vouches for who wrote the report, nor that these inputs are the data the lab "
                     "collected (sign reports and pin the lab's key to authenticate)")


def _find_report_json(folder: Path) -> Path:
    folder = Path(folder)
    p = folder / "report.json" if folder.is_dir() else folder
    if not p.is_file():
        raise InputError(f"{folder}: no report.json there (give the report folder rngcert wrote)")
    return p


def verify_report(folder: str | Path, logs: Sequence[str | Path] = (), *, public_key=None, trusted_keys: Sequence = (),
                  require_signature: bool = True) -> Verification:
    """Check a report folder: the content hash of report.json, its layout, the files written with
    it, every input's SHA-256 (against ``logs`` or the recorded paths) and the signature.

    Parameters
    ----------
    folder : path
        The report folder (or its report.json).
    logs : sequence of path
        Input files to check (matched by SHA-256, then by file name); inputs not given are looked
        for at their recorded path.
    public_key : Ed25519PublicKey, optional
        The lab's key: the signature must exist and verify with it (the same as one trusted key).
    trusted_keys : sequence of Ed25519PublicKey
        The pinned keys (a keyring): the signature must verify with one of them. Without any
        trusted key, the best result is INTACT, never VERIFIED.
    require_signature : bool
        With trusted keys, an unsigned report FAILS (a removed signature is caught); False accepts
        it as INTACT at most.

    Raises
    ------
    InputError
        No report.json in ``folder``.
    """
    p = _find_report_json(folder)
    v = Verification(p.parent, None)
    raw = p.read_bytes()
    rep = _read_report(v, raw)
    if rep is None:
        return v
    v.report = rep
    integ = rep.get("integrity")
    if not isinstance(integ, dict) or "report_sha256" not in integ:
        if not {"report_format", "kind"} & rep.keys():
            raise InputError(f"{p}: not a report (neither report_format nor kind): give the folder of a report rngcert wrote "
                             "(an audit's group statement, audit-group-*.json, is not sealed and cannot be verified)")
        v.add("report.json content hash", False, "the report carries no integrity block (written by rngcert before 0.2, or removed)")
        return v
    try:
        actual = content_sha256(rep)
    except (TypeError, ValueError) as exc:
        v.add("report.json content hash", False, f"cannot be serialised canonically ({exc})")
        return v
    v.add("report.json content hash", actual == integ["report_sha256"], f"recorded {str(integ['report_sha256'])[:16]}…, computed {actual[:16]}…" if actual != integ["report_sha256"] else f"SHA-256 {actual}")
    _check_integrity_fields(v, integ)
    same_layout = raw.decode("utf-8") == serialise(rep)
    kept = " (an edit that keeps the meaning)" if actual == integ["report_sha256"] else ""  # else the content changed too
    v.add("report.json layout", same_layout, "" if same_layout else f"the file's bytes differ from what rngcert writes for this content{kept}")
    _check_unrecorded(v, integ)
    for name, want in (integ.get("files") if isinstance(integ.get("files"), dict) else {}).items():
        f = v.folder / name
        if name not in WRITTEN:  # named by the integrity block's own check
            continue
        if not f.is_file():
            v.add(name, None, "missing from the folder")
            continue
        got = sha256_file(f)
        v.add(name, got == want, f"SHA-256 {got[:16]}… recorded {want[:16]}…" if got != want else "SHA-256 matches")
    html = v.folder / "report.html"
    if html.is_file() and "report.html" in (integ.get("files") or {}):
        rid = actual[:16]  # the id of the content as it is now, whatever the integrity block says
        names = f"report {rid}" in html.read_text(encoding="utf-8", errors="replace")
        v.add("report.html names this report", names, f"report id {rid}" if names else f"report.html does not carry report id {rid}: it was made from other content")
    _check_inputs(v, rep, logs)
    trusted = list(trusted_keys) + ([public_key] if public_key is not None else [])
    _check_signature(v, integ, trusted, require_signature)
    return v


def _read_report(v: Verification, raw: bytes) -> dict | None:
    """report.json's object, or None after a FAILED check: not JSON, not an object, or fields of another type than
    rngcert writes (the checks read them: an edit of their type is a finding, not a crash of verify)."""
    try:
        rep = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        v.add("report.json", False, f"not valid JSON any more ({str(exc)[:120]})")
        return None
    if not isinstance(rep, dict):
        v.add("report.json", False, "not a report (a JSON object was expected)")
        return None
    shape = shape_problems(rep)
    if shape:
        v.add("report.json structure", False, "; ".join(shape[:5]) + ": not what rngcert writes")
        return None
    return rep


def shape_problems(rep: Mapping[str, Any]) -> list[str]:
    """The fields ``verify`` and ``--rerun`` read that are not of the type rngcert writes (empty: none): ``integrity``,
    ``inputs`` (objects with a text ``path`` and ``sha256``), ``standard``, the ``rerun`` recipe and ``tables`` (objects
    with a ``battery`` object whose ``tests`` are objects). A hostile report.json may hold anything."""
    out = []

    def is_obj_list(x) -> bool:
        return isinstance(x, list) and all(isinstance(i, dict) for i in x)

    for k in ("integrity", "standard", "rerun"):
        if k in rep and not isinstance(rep[k], dict):
            out.append(f"{k} is not an object")
    if isinstance(rep.get("rerun"), dict) and not isinstance(rep["rerun"].get("pipeline"), str):
        out.append("rerun has no pipeline name")
    if not is_obj_list(rep.get("inputs", [])):
        out.append("inputs is not a list of objects")
    elif any(not isinstance(i.get("path", ""), str) or not isinstance(i.get("sha256"), (str, type(None))) for i in rep.get("inputs", [])):
        out.append("an input's path or sha256 is not a text")
    if not is_obj_list(rep.get("tables", [])):
        out.append("tables is not a list of objects")
    elif any(not isinstance(t.get("battery", {}), dict) or not is_obj_list(t.get("battery", {}).get("tests", [])) for t in rep["tables"]):
        out.append("a table's battery or its tests are not objects")
    return out


def _check_integrity_fields(v: Verification, integ: dict) -> None:
    """The integrity block's fields that neither the content hash nor the signature cover must be what rngcert writes for
    recorded content hash: the report id printed in every footer (its first 16 hex digits), the algorithm and
    the canonical rule; a field replaced FAILS (one named check each)."""
    want = {"report_id": str(integ.get("report_sha256"))[:16], "algorithm": "sha256", "canonical": CANONICAL}
    for name, value in want.items():
        got = integ.get(name)
        if got != value:
            v.add(f"integrity {name}", False, f"recorded {str(got)[:80]!r}, but rngcert writes {value!r} for this content: the integrity block was edited")
    _check_keys(v, "integrity", integ, {"algorithm", "canonical", "report_sha256", "report_id", "files"}, {"signature"})
    files = integ.get("files")
    if not isinstance(files, dict) or any(k not in WRITTEN or not isinstance(h, str) or not re.fullmatch(r"[0-9a-f]{64}", h)
                                          for k, h in files.items()):
        v.add("integrity files", False, f"recorded {str(files)[:120]!r}, but rngcert records only {', '.join(WRITTEN)}, each with "
                                        "a SHA-256 in hex: the integrity block was edited")


def _check_keys(v: Verification, where: str, block: Mapping[str, Any], required: set[str], optional: set[str] = frozenset()) -> None:
    """A block of the integrity field holds exactly the keys rngcert writes: no hash and no signature covers the block's
    other keys, so an added one (a forged note of approval) or a removed one is an edit of report.json that nothing else
    would catch."""
    keys = set(block)
    extra, missing = sorted(keys - required - set(optional)), sorted(required - keys)
    if extra or missing:
        v.add(where, False, "; ".join(([f"keys rngcert does not write: {', '.join(repr(k[:40]) for k in extra)}"] if extra else [])
                                      + ([f"keys missing: {', '.join(missing)}"] if missing else [])) + ": the integrity block was edited")


def _b64(text: Any) -> bytes:
    """The bytes of a base64 field as rngcert writes it: the standard alphabet, padded, nothing else (ValueError
    otherwise; a lenient decoder skips other characters, so an edited field would still decode to the same bytes)."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a base64 text")
    raw = base64.b64decode(text, validate=True)
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{text[:60]!r} is not in the base64 form rngcert writes")
    return raw


#: The files rngcert writes into a report folder besides report.json (:func:`rngcert.report.writer.write_report`).
WRITTEN = ("report.html", "report.pdf", "rejects.csv")


def _check_unrecorded(v: Verification, integ: dict) -> None:
    """Files in the folder that the integrity block does not record: one named as a file rngcert writes
    (a report.pdf beside a report written without one) FAILS; any other is covered by no hash and no
    signature, so the folder is not checked as a whole (INCOMPLETE at best)."""
    recorded = set(integ.get("files") if isinstance(integ.get("files"), dict) else {}) | {"report.json"}
    for f in sorted(v.folder.iterdir()):
        if f.name in recorded:
            continue
        if f.name in WRITTEN:
            v.add(f.name, False, "in the folder, but not written with this report (its hash is not recorded): added or replaced")
        else:
            v.add(f.name, None, "an extra file in the folder: no hash or signature of this report covers it")


def _check_inputs(v: Verification, rep: dict, logs: Sequence[str | Path]) -> None:
    given = [Path(x) for x in logs]
    hashes = {}
    for g in given:
        if not g.is_file():
            v.add(f"log {g}", False, "not a readable file")
            continue
        hashes[g] = sha256_file(g)
    used = set()
    std = rep.get("standard") if isinstance(rep.get("standard"), dict) else {}
    eq = rep.get("equipment") if isinstance(rep.get("equipment"), dict) else {}
    for g, h in hashes.items():  # a lab's standard or wheel file given for --rerun: the report carries its SHA-256
        if std.get("sha256") and h == std["sha256"] and not std.get("packaged", True):
            used.add(g)
            v.add(f"standard {g.name}", True, f"{g}: SHA-256 matches the report's standard {std.get('id')!r}")
        elif eq.get("sha256") and h == eq["sha256"]:
            used.add(g)
            v.add(f"equipment {g.name}", True, f"{g}: SHA-256 matches the report's equipment {eq.get('id')!r}")
    for inp in rep.get("inputs", []):
        want = inp.get("sha256")
        path = inp.get("path", "")
        if not want:
            v.add(f"input {path}", None, "no file (a named generator or simulation): nothing to hash")
            continue
        match = next((g for g, h in hashes.items() if h == want), None)
        if match is not None:
            used.add(match)
            v.add(f"input {Path(path).name}", True, f"{match}: SHA-256 matches")
            continue
        same_name = next((g for g in hashes if g.name == Path(path).name), None)
        if same_name is not None:
            used.add(same_name)
            v.add(f"input {Path(path).name}", False, f"{same_name}: SHA-256 {hashes[same_name][:16]}…, the report recorded {want[:16]}…")
            continue
        if path and Path(path).is_file():
            got = sha256_file(path)
            v.add(f"input {Path(path).name}", got == want, f"{path}: SHA-256 matches" if got == want else f"{path}: SHA-256 {got[:16]}…, the report recorded {want[:16]}…")
            continue
        v.add(f"input {Path(path).name}", None, f"not found at {path}; give the file as LOG to check it")
    for g in given:
        if g in hashes and g not in used:
            v.add(f"log {g}", False, "is not an input of this report (its SHA-256 matches none recorded)")


def _check_signature(v: Verification, integ: dict, trusted: Sequence, require: bool) -> None:
    """The signature against the trusted keys (none: checked only against the key it carries)."""
    sig = integ.get("signature")
    if not sig:
        v.signed = "no"
        v.signed_line = "no: the report carries no signature, so nothing vouches for who wrote it"
        if trusted and require:
            v.add("signature", False, "the report is not signed, but the pinned keys require a signature (removed, or never signed; "
                                      "--allow-unsigned accepts unsigned reports as INTACT at most)")
        return
    v.signed = "yes"
    _, ed25519 = _crypto()
    if not isinstance(sig, dict):
        v.signed_line = "yes, but the signature block is malformed"
        v.add("signature", False, f"malformed ({str(sig)[:80]!r} is not a signature block)")
        return
    _check_keys(v, "integrity signature", sig, {"algorithm", "signed", "public_key", "key_fingerprint", "value"})
    for name, value in (("algorithm", "Ed25519"), ("signed", SIGNED)):
        if sig.get(name) != value:
            v.add(f"integrity signature {name}", False, f"recorded {str(sig.get(name))[:80]!r}, but rngcert writes {value!r}: "
                                                        "the integrity block was edited")
    for name in ("public_key", "value"):
        try:
            _b64(sig.get(name))
        except ValueError as exc:
            v.add(f"integrity signature {name}", False, f"{exc}: the integrity block was edited")
    try:
        embedded = ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(sig["public_key"]))
        value = base64.b64decode(sig["value"])
    except (KeyError, ValueError, TypeError) as exc:
        v.signed_line = "yes, but the signature block is malformed"
        v.add("signature", False, f"malformed ({exc})")
        return
    from cryptography.exceptions import InvalidSignature

    if sig.get("key_fingerprint") != fingerprint(embedded):  # shown to readers of report.json; covered by no hash
        v.add("integrity signature key_fingerprint", False, f"recorded {str(sig.get('key_fingerprint'))[:80]!r}, but the key the report "
                                                            f"carries has fingerprint {fingerprint(embedded)}: the integrity block was edited")
    payload = _signed_payload(integ["report_sha256"], integ.get("files") if isinstance(integ.get("files"), dict) else {})

    def verifies(key) -> bool:
        try:
            key.verify(value, payload)
            return True
        except InvalidSignature:
            return False

    _signature_outcome(v, verifies, embedded, trusted)


def _signature_outcome(v: Verification, verifies, embedded, trusted: Sequence) -> None:
    """The line and the check of a well-formed signature: ``verifies(key)`` says whether it verifies with ``key``;
    ``embedded`` is the key the report carries (never trusted for itself), ``trusted`` the pinned keys."""
    fp = fingerprint(embedded)
    if not trusted:
        ok = verifies(embedded)
        v.signed_line = f"yes, Ed25519 key {fp[:16]}… (the key inside the report; not a trusted key: pin the lab's key to authenticate)"
        v.add("signature", ok, f"Ed25519 by the key in the report, fingerprint {fp[:16]}…: " + (
            "consistent, but anyone can sign with a key of their own; give --key PUB or pin the lab's keys (--keyring, "
            "RNGCERT_TRUSTED_KEYS) to check it is the lab's key" if ok else "does NOT verify (the report or a file changed)"))
        return
    # the key field inside the report is not trusted: every pinned key is tried on the value
    good = next((k for k in trusted if verifies(k)), None)
    if good is not None:
        gfp = fingerprint(good)
        if gfp != fp:  # the value is the trusted key's, the key the report shows its readers is another one
            v.add("integrity signature public_key", False, f"the report carries key {fp[:16]}…, but its signature was made with the trusted "
                                                           f"key {gfp[:16]}…: the integrity block was edited")
        v.authenticated = True
        v.signed_line = f"yes, Ed25519 key {gfp[:16]}…, a trusted key"
        v.add("signature", True, f"Ed25519 with the trusted key {gfp[:16]}…")
        return
    pinned = ", ".join(f"{fingerprint(k)[:16]}…" for k in trusted)
    v.signed_line = f"yes, Ed25519 key {fp[:16]}…, which is NOT a trusted key"
    if verifies(embedded):
        v.add("signature", False, f"signed by key {fp[:16]}…, which is not a trusted key ({pinned}): "
                                  "a key not pinned here signed it (re-signed by someone else, or signed with a key of the lab's not in the keyring)")
    else:
        v.add("signature", False, f"does NOT verify with the trusted key(s) {pinned} (wrong key, or the report or a file changed)")


# ------------------------------------------------------------------------------------ keyring
#: Environment variable naming the lab's keyring file(s) (os.pathsep-separated): pinned public keys.
TRUSTED_KEYS_ENV = "RNGCERT_TRUSTED_KEYS"


def load_keyring(path: str | Path) -> list:
    """The trusted Ed25519 public keys of a keyring file.

    A keyring holds one or more PEM public keys (``-----BEGIN PUBLIC KEY-----`` blocks, as written by
    ``rngcert keygen`` or OpenSSL, simply concatenated) and/or lines with a raw key in base64 (the
    ``public_key`` field of a report's signature). Lines starting with ``#`` are comments.

    Raises
    ------
    InputError
        The file cannot be read, holds no key, or holds something that is not an Ed25519 key.
    """
    serialization, ed25519 = _crypto()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the keyring ({exc})") from None
    keys = []
    pems = re.findall(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", text, flags=re.S)
    for i, block in enumerate(pems, 1):
        try:
            key = serialization.load_pem_public_key(block.encode("ascii"))
        except (ValueError, TypeError) as exc:
            raise InputError(f"{path}: PEM key {i} is not readable ({exc})") from None
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise InputError(f"{path}: PEM key {i} is {type(key).__name__}, not Ed25519")
        keys.append(key)
    rest = re.sub(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", "", text, flags=re.S)
    for n, line in enumerate(rest.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            keys.append(ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(line.split()[0], validate=True)))
        except (ValueError, TypeError):
            raise InputError(f"{path}: {line[:40]!r} is neither a PEM block nor a base64 Ed25519 public key (32 bytes)") from None
    if not keys:
        raise InputError(f"{path}: the keyring holds no public key")
    return keys


def trusted_keys_from_env(environ: Mapping[str, str] | None = None) -> tuple[list, list[str]]:
    """The keys pinned by ``RNGCERT_TRUSTED_KEYS`` (keyring files separated by os.pathsep) and the files read."""
    import os

    value = (os.environ if environ is None else environ).get(TRUSTED_KEYS_ENV, "")
    files = [f for f in value.split(os.pathsep) if f.strip()]
    keys = []
    for f in files:
        keys += load_keyring(f)
    return keys, files


# ------------------------------------------------------------------------------------ rerun
_COMPARED = ("statistic", "df", "pvalue", "pvalue_holm", "n", "applicable")


def _close(a, b, rel: float) -> bool:
    if a is None or b is None or isinstance(a, (str, bool)) or isinstance(b, (str, bool)):
        return a == b
    a, b = float(a), float(b)
    return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b)))


def compare_statistics(recorded: Mapping[str, Any], recomputed: Mapping[str, Any], *, rel: float = 1e-9) -> tuple[int, list[str]]:
    """Compare every test of two reports (statistic, df, p-value, Holm p, n) and every verdict.

    Returns
    -------
    (number of values compared, list of differences in words)
    """
    diffs: list[str] = []
    count = 0
    if recorded.get("verdict") != recomputed.get("verdict"):
        diffs.append(f"verdict: recorded {recorded.get('verdict')}, recomputed {recomputed.get('verdict')}")
    count += 1
    sa, sb = (recorded.get("standard") or {}).get("sha256"), (recomputed.get("standard") or {}).get("sha256")
    if sa and sb:  # the rule that turned the statistics into the verdict: a lab's file edited since is another standard
        count += 1
        if sa != sb:
            diffs.append(f"standard {recorded['standard'].get('id')} ({recorded['standard'].get('source')}): SHA-256 recorded {sa[:16]}…, "
                         f"the file read now {sb[:16]}…: the standard changed since the report")
    a_tabs = {t["table"]: t for t in recorded.get("tables", [])}
    b_tabs = {t["table"]: t for t in recomputed.get("tables", [])}
    for name in sorted(set(a_tabs) | set(b_tabs)):
        if name not in a_tabs or name not in b_tabs:
            diffs.append(f"table {name}: only in the {'recorded' if name in a_tabs else 'recomputed'} report")
            continue
        ta, tb = a_tabs[name], b_tabs[name]
        count += 2
        if ta.get("n") != tb.get("n"):
            diffs.append(f"table {name}: n recorded {ta.get('n')}, recomputed {tb.get('n')}")
        if ta["battery"]["verdict"] != tb["battery"]["verdict"]:
            diffs.append(f"table {name}: verdict recorded {ta['battery']['verdict']}, recomputed {tb['battery']['verdict']}")
        xa = {x["name"]: x for x in ta["battery"].get("tests", [])}
        xb = {x["name"]: x for x in tb["battery"].get("tests", [])}
        for tn in list(xa) + [k for k in xb if k not in xa]:
            if tn not in xa or tn not in xb:
                diffs.append(f"table {name}, {tn}: only in the {'recorded' if tn in xa else 'recomputed'} report")
                continue
            for k in _COMPARED:
                va, vb = xa[tn].get(k), xb[tn].get(k)
                count += 1
                if not _close(va, vb, rel):
                    diffs.append(f"table {name}, {tn}, {k}: recorded {va}, recomputed {vb}")
    return count, diffs


#: How the notes that ``rngcert certify`` adds before the pipeline's begin (the only notes a rerun does not recompute).
COMMAND_NOTES = ("no log given: certifying the bundled default log", "equipment check (warning):")

#: Fields of a report that a rerun does not recompute: when, how and with which libraries it was run, its recipe, the lab's
#: description of the unit, the figures (a rerun draws none), the files written beside it and the integrity block.
_NOT_RECOMPUTED = {"command", "generated_utc", "integrity", "rejects_file", "unit_under_test", "software", "seed.how", "rerun"}
_NOT_RECOMPUTED_ANYWHERE = {"figures"}


def _leaf_diffs(a, b, where: str, paths: Mapping[str, str], rel: float, diffs: list[str]) -> int:
    """Compare two JSON values recursively (numbers with :func:`_close`); append differences; return the leaves compared."""
    if isinstance(a, dict) and isinstance(b, dict):
        n = 0
        for k in list(a) + [k for k in b if k not in a]:
            at = f"{where}.{k}" if where else str(k)
            if at in _NOT_RECOMPUTED or k in _NOT_RECOMPUTED_ANYWHERE:
                continue
            if k not in b:  # not recomputed, and not one of the fields no rerun recomputes: added to the report
                diffs.append(f"{at}: in the report, but no rerun computes it (added): {str(a[k])[:80]}")
                n += 1
                continue
            if k not in a:  # recomputed, and not in the report: deleted from it
                diffs.append(f"{at}: not in the report, recomputed {str(b[k])[:80]}")
                n += 1
                continue
            n += _leaf_diffs(a[k], b[k], at, paths, rel, diffs)
        return n
    if isinstance(a, list) and isinstance(b, list):
        if where == "notes" and len(a) > len(b) and all(str(x).startswith(COMMAND_NOTES) for x in a[:len(a) - len(b)]):
            # the command's own notes come first (the bundled default log, an equipment check's warning): not recomputed;
            # any other note before the recomputed ones was added
            a = a[len(a) - len(b):]
        if len(a) != len(b):
            diffs.append(f"{where}: {len(a)} items recorded, {len(b)} recomputed")
            return 1
        return sum(_leaf_diffs(x, y, f"{where}[{i}]", paths, rel, diffs) for i, (x, y) in enumerate(zip(a, b)))
    if isinstance(b, str):
        for used, recorded in sorted(paths.items(), key=lambda kv: -len(kv[0])):  # an input read from where it is now
            b = b.replace(used, recorded)
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)) or not _close(a, b, rel):
        ra, rb = _around_difference(str(a), str(b)) if isinstance(a, str) and isinstance(b, str) else (str(a)[:80], str(b)[:80])
        diffs.append(f"{where}: recorded {ra}, recomputed {rb}")
    return 1


def _around_difference(a: str, b: str, width: int = 80) -> tuple[str, str]:
    """Excerpts of two texts that differ, from a little before their first differing character: two sentences that
    differ past their first 80 characters were shown by those 80, the same in both, so the change was not seen."""
    if len(a) <= width and len(b) <= width:
        return a, b
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - 30)
    return tuple(("…" if lo else "") + s[lo:lo + width] + ("…" if len(s) > lo + width else "") for s in (a, b))


def compare_content(recorded: Mapping[str, Any], recomputed: Mapping[str, Any], *, paths: Mapping[str, str] | None = None,
                    rel: float = 1e-9) -> tuple[int, list[str]]:
    """Compare every field a rerun recomputes (counts, rows read and rejected, reasons, findings, notes, ...).

    Parameters
    ----------
    recorded, recomputed : mapping
        The report as recorded and as recomputed from its inputs.
    paths : mapping, optional
        Path of each input as read now -> its path recorded in the report (a moved log names itself otherwise).
    rel : float
        Relative tolerance of numbers (as :func:`compare_statistics`).

    Returns
    -------
    (number of values compared, list of differences in words)
        Fields no rerun recomputes (:data:`_NOT_RECOMPUTED`, figures) are left out; any other field only one of the two
        has is a difference (a recomputed field the report does not have was deleted from it; a field of the report that
        the rerun does not compute was added to it).
    """
    diffs: list[str] = []
    count = _leaf_diffs(dict(recorded), dict(recomputed), "", dict(paths or {}), rel, diffs)
    return count, diffs


def iter_lines(v: Verification) -> Iterable[str]:
    for c in v.checks:
        yield "  " + c.line()
