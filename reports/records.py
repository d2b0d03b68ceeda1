"""The evidence records' contract, checked on load.

harness/evidence.schema.json is the one statement of it: the kinds, the
schema number, every field, its type and the values an outcome may take. The
C++ writers (runner/records.cc) are held to the same file by the
`evidence.contract` test. A record that does not fit (an unknown kind,
another schema number, an unknown field, a field of the wrong type, an
outcome outside its set) is refused with the reason; the caller names its
file and line.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from inputs.engines import systems

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "harness" / "evidence.schema.json"


@lru_cache(maxsize=1)
def contract() -> dict[str, Any]:
    """The schema, with the systems a record may name taken from
    backends/engines.def (the file leaves them to it)."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    schema["$defs"]["system"]["enum"] = list(systems())
    return schema


SCHEMA: int = contract()["schema_number"]  # harness/evidence.h kEvidenceSchema
KINDS: tuple[str, ...] = tuple(contract()["kinds"])
RESULT_OUTCOMES: tuple[str, ...] = tuple(contract()["$defs"]["result_outcome"]["enum"])
CHECK_OUTCOMES: tuple[str, ...] = tuple(contract()["$defs"]["check_outcome"]["enum"])


@lru_cache(maxsize=None)
def _validator(kind: str) -> Draft202012Validator:
    schema = dict(contract())
    schema["$ref"] = f"#/$defs/{kind}"
    return Draft202012Validator(schema)


def _where(error: ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__)


def _explain(error: ValidationError) -> str:
    where = _where(error)
    if error.validator == "type":
        return f"'{where}' must be {error.validator_value}, not {_type_name(error.instance)}"
    if error.validator == "enum":
        known = ", ".join(str(v) for v in error.validator_value)
        name = "outcome" if where.endswith("outcome") else f"value of '{where}'"
        return f"'{where}': unknown {name} {error.instance!r} (known: {known})"
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"'{where + '.' if where else ''}{missing}' is missing"
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        return f"{'in ' + repr(where) + ': ' if where else ''}{error.message}"
    return f"'{where}': {error.message}" if where else error.message


# Records already checked in this process, by their text: the
# same record read again (another report over the same runs, a file of
# which a test altered one record) is not checked again.
_CHECKED: dict[str, str | None] = {}
_CHECKED_MAX = 200_000


def problem(record: Any, text: str | None = None) -> str | None:
    """Why the record is refused, or None when it fits. `text`: the JSON text
    the record was read from, which then keys the memo (else its canonical
    text)."""
    if text is not None:
        key = text
    else:
        try:
            key = json.dumps(record, sort_keys=True)
        except (TypeError, ValueError):
            return _problem(record)
    if key not in _CHECKED:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = _problem(record)
    return _CHECKED[key]


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return f"a record must be a JSON object, not {_type_name(record)}"
    kind = record.get("kind")
    if kind not in KINDS:
        return f"unknown record kind {kind!r} (known: {', '.join(KINDS)})"
    schema = record.get("schema")
    if schema != SCHEMA:
        return f"evidence schema {schema!r}, this report reads schema {SCHEMA}"
    errors = list(_validator(kind).iter_errors(record))
    # A field that failed its own check is also "unevaluated" to the record:
    # name the field's own error, not that echo of it.
    own = [e for e in errors if e.validator != "unevaluatedProperties"]
    error = best_match(own or errors)
    return None if error is None else _explain(error)


# A directory where the files found to fit are remembered (the claim tests'
# BUILD/claims-cache): each of a run's 72 claim tests reads the whole run,
# and checking every record against the contract is nine tenths of that
# (2.4 s a claim on an 860-file CPU run, 0.5 s once remembered).
CACHE_ENV = "BACKENDCHECK_RECORD_CACHE"


class Validated:
    """The evidence files, by the digest of their bytes, whose every record
    fits this contract: such a file is not checked again. Kept in
    CACHE_ENV's directory, one file per contract (its digest in the name),
    replaced whole; two processes that add at once lose at most the other's
    additions, which are then checked again. No directory: nothing kept."""

    def __init__(self, directory: str | None = None) -> None:
        directory = os.environ.get(CACHE_ENV, "") if directory is None else directory
        digest = hashlib.blake2b(json.dumps(contract(), sort_keys=True).encode(), digest_size=16).hexdigest()
        self.path = Path(directory) / f"validated-{digest}.json" if directory else None
        self.known: set[str] = set()
        self.added: set[str] = set()
        if self.path is not None:
            try:
                listed = json.loads(self.path.read_text(encoding="utf-8"))
                self.known = {d for d in listed if isinstance(d, str)} if isinstance(listed, list) else set()
            except (OSError, ValueError):
                self.known = set()

    @staticmethod
    def digest(data: bytes) -> str:
        return hashlib.blake2b(data, digest_size=20).hexdigest()

    def holds(self, digest: str) -> bool:
        return digest in self.known

    def add(self, digest: str) -> None:
        if digest not in self.known:
            self.added.add(digest)

    def save(self) -> None:
        """Writes the digests found to fit; a cache that cannot be written is
        left as it was (it only saves time)."""
        if self.path is None or not self.added:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, delete=False, suffix=".tmp") as f:
                json.dump(sorted(self.known | self.added), f)
            os.replace(f.name, self.path)
        except OSError:
            return
