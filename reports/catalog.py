"""Loading the claim catalog (suites/claims.toml), with FILE:LINE errors."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.errors import SpecError
from generators.locate import LineIndex

KINDS = ("guarantee", "folklore", "advice", "out-of-scope")
RULES = ("fact", "out-of-scope")
POLARITIES = ("supports", "refutes")
CLAIM_KEYS = {"id", "statement", "source", "kind", "scope", "evidence"}
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass
class Claim:
    id: str
    statement: str
    source: str
    kind: str
    scope: dict[str, str]
    rule: str
    polarity: str = "supports"
    tests: list[str] = field(default_factory=list)
    cases: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


def load_catalog(path: Path) -> list[Claim]:
    text = path.read_text(encoding="utf-8")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        raise SpecError(str(path), int(m.group(1)) if m else 1, f"not valid TOML: {e}") from None
    index = LineIndex(text)

    def error(where: tuple[str | int, ...], message: str) -> SpecError:
        return SpecError(str(path), index.line(where), message)

    raw_claims = doc.get("claim")
    if not isinstance(raw_claims, list) or not raw_claims:
        raise error(("claim",), "the catalog defines no [[claim]]")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_claims):
        here = ("claim", i)
        for key in raw:
            if key not in CLAIM_KEYS:
                raise error(here + (key,), f"unknown claim key '{key}'")
        for key in ("id", "statement", "source", "kind", "evidence"):
            if key not in raw:
                raise error(here, f"claim is missing '{key}'")
        cid = raw["id"]
        if not isinstance(cid, str) or not _ID.match(cid):
            raise error(here + ("id",), "claim id must be lowercase letters, digits and '-'")
        if cid in seen:
            raise error(here + ("id",), f"duplicate claim id '{cid}'")
        seen.add(cid)
        if raw["kind"] not in KINDS:
            raise error(here + ("kind",), f"unknown kind '{raw['kind']}' (known: {', '.join(KINDS)})")
        ev = raw["evidence"]
        rule = ev.get("rule")
        if rule not in RULES:
            raise error(here + ("evidence", "rule"), f"unknown rule {rule!r} (known: {', '.join(RULES)})")
        claim = Claim(id=cid, statement=raw["statement"], source=raw["source"], kind=raw["kind"],
                      scope=dict(raw.get("scope", {})), rule=rule)
        if rule == "out-of-scope":
            claim.reason = ev.get("reason", "")
            if not claim.reason:
                raise error(here + ("evidence",), "an out-of-scope claim needs a reason")
        else:
            claim.polarity = ev.get("polarity", "supports")
            if claim.polarity not in POLARITIES:
                raise error(here + ("evidence", "polarity"), f"polarity must be one of {', '.join(POLARITIES)}")
            claim.tests = list(ev.get("tests", []))
            claim.cases = dict(ev.get("cases", {}))
            if not claim.tests and not claim.cases:
                raise error(here + ("evidence",), "a fact rule needs 'tests' or 'cases'")
        claims.append(claim)
    return claims
