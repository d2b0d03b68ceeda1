"""A new machine says what to add: for each verdict that is not what is
known for its platform (reports/known.py), the [[finding]] entry that would
make it known, ready to paste into a TOML file of the team's, and
`--write-findings FILE`, which appends them.

An entry names the claim, the verdict got, the platform's own reason in one
line, today's date, and as `when` the narrowest condition the platform's
facts support (`condition_of`): for every name of the condition language
that platform_values gives a value (versions to major.minor, as
`torch == "2.15"`; names and numbers with `==`; `cuda` or `not cuda`), then
the CPU features that decide kernels: the AVX-512 and AMX features present,
and those of ABSENT_FEATURES absent, as `not amx_bf16`. A name the language
gains flows in with no change here. Read after the files the run was held
to (`--known FILE` last, or in BACKENDCHECK_KNOWN), the entry makes that
verdict known on that platform and on no platform that differs in any of
those facts. Where an entry of an earlier file expected otherwise, the new
one stands in its place there, and the comment above it says how to narrow
that entry instead (`when = '(its condition) and not (this platform's)'`).
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from inputs.errors import SpecError

from .evidence import Evidence
from .known import CPU_FEATURE, ENVIRONMENT, FLAGS, NUMBERS, VERSIONS, Condition, Held, display, platform_values, \
    version_key

# The features that decide which kernels run (bf16, fp16, AMX and the
# AVX-512 family): an entry names those present, and those of
# ABSENT_FEATURES the platform lacks as `not ...`.
DECIDING_FEATURE = re.compile(r"^(avx512\w*|amx\w*)$")
ABSENT_FEATURES = ("amx_tile", "amx_bf16", "amx_int8", "amx_fp16", "amx_complex", "avx512_bf16", "avx512_fp16")


def suggest(held: list[Held], evidence: Evidence, today: datetime.date | None = None) -> None:
    """Sets `suggested` on each unexpected verdict of `held`: its entry,
    first seen `today` (default: today's date)."""
    today = today or datetime.date.today()
    values = {p: platform_values(env) for p, env in evidence.platform_env.items()}
    for h in held:
        if h.status == "unexpected":
            h.suggested = entry(h, values.get(h.platform, platform_values({})), today,
                                {p: v for p, v in values.items() if p != h.platform})


def condition_of(values: dict[str, Any]) -> str:
    """The narrowest condition a platform's values support: for each name
    of platform_values that the language knows and that has a value here, a
    comparison that holds (versions to major.minor, as `torch == "2.15"`;
    numbers and names with ==; a flag alone or with not); then the
    AVX-512 and AMX features present, and ABSENT_FEATURES absent as `not`."""
    clauses = []
    for name, value in values.items():
        try:
            Condition(name)  # a name of the language ("features" is not)
            clause = _clause(name, value)
            if clause and Condition(clause).holds(values):
                clauses.append(clause)
        except ValueError:
            continue  # not a name of the language, or a value it cannot write
    features = {str(f) for f in values.get("features", ())}
    clauses += sorted(f for f in features if DECIDING_FEATURE.match(f) and CPU_FEATURE.match(f))
    clauses += [f"not {f}" for f in ABSENT_FEATURES if f not in features]
    return " and ".join(clauses)


def _clause(name: str, value: Any) -> str:
    """`name` compared with the platform's `value`; "" where it has none."""
    if name in FLAGS:
        return name if value else f"not {name}"
    if value is None or value == "" or isinstance(value, bool) or not isinstance(value, (str, int)):
        return ""
    if name in NUMBERS:
        return f"{name} == {value}" if isinstance(value, int) else ""
    if name in VERSIONS:
        key = version_key(str(value))
        return f"{name} == {_quoted('.'.join(str(n) for n in key[:2]))}" if key else ""
    return f"{name} == {_quoted(str(value))}"


def _quoted(text: str) -> str:
    """A string literal of the condition language (a Python one), in double quotes."""
    return json.dumps(text, ensure_ascii=False)


def toml_string(text: str) -> str:
    """`text` as a TOML string: a literal one ('...') where it holds double
    quotes and can be one, else a basic one, with JSON's escapes (TOML's
    basic strings share them)."""
    if '"' in text and "'" not in text and not any(ord(c) < 32 or ord(c) == 127 for c in text):
        return f"'{text}'"
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def entry(h: Held, values: dict[str, Any], today: datetime.date,
          others: dict[str, dict[str, Any]] | None = None) -> str:
    """The [[finding]] entry that makes `h`'s verdict known on its platform
    (whose platform_values are `values`), after a comment naming the
    platform: ready to paste, or to append with --write-findings. Where an
    entry expected otherwise, a comment says that the new one belongs in a
    file read after that entry's, or how to narrow that entry instead;
    where the condition also holds on one of `others` (platform ->
    platform_values: the other platforms of the report, whose facts are the
    same), a comment names it."""
    when = condition_of(values)
    lines = [f"# {h.claim} on {h.platform}: {h.got}, first seen {today.isoformat()}"]
    same = [p for p, v in (others or {}).items() if Condition(when).holds(v)]
    if same:
        lines.append(f"# its facts are also those of {', '.join(same)}: the entry applies there too")
    if h.finding is not None:
        narrowed = f"({h.finding.when.text}) and not ({when})" if h.finding.when.text else f"not ({when})"
        lines.append(f"# in a file read after {h.finding.file}"
                     + (f"; or narrow the entry at {h.finding.where} instead: when = {toml_string(narrowed)}"
                        if when else ""))
    lines += ["[[finding]]", f"claim = {toml_string(h.claim)}", f"verdict = {toml_string(h.got)}",
              f"when = {toml_string(when)}",
              f"reason = {toml_string(h.said or f'{h.got} on {h.platform}')}",
              f"first_seen = {today.isoformat()}"]
    return "\n".join(lines) + "\n"


def write(path: Path, unexpected: list[Held], files: list[Path]) -> list[str]:
    """Appends to `path` (created if missing) the entry suggested for each
    unexpected verdict, each after its comment; `files` are the findings
    files read, in order. An entry that `path` could not make known (an
    entry of `path` itself, or of a file read after it, decides the verdict)
    is not written. Returns what was done, one line each; SpecError when
    `path` cannot be written."""
    names = [display(p) for p in files]
    at = names.index(display(path)) if display(path) in names else None
    said, chunks = [], []
    for h in unexpected:
        if h.finding is not None and at is not None and names.index(h.finding.file) >= at:
            said.append(f"{display(path)}: not written for {h.claim} on {h.platform}: the entry at "
                        f"{h.finding.where} decides it and is read after this file or in it; narrow that entry")
            continue
        chunks.append(h.suggested)
    if not chunks:
        return said + [f"{display(path)}: no entry to add"]
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        with path.open("a", encoding="utf-8") as out:
            out.write(("\n" if old and not old.endswith("\n") else "") + ("\n" if old.strip() else "")
                      + "\n".join(chunks))
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(display(path), 1, f"cannot write the findings: {getattr(e, 'strerror', None) or e}") from None
    return said + [f"{display(path)}: {len(chunks)} entry(ies) added; pass it as --known {path} (or in "
                   f"{ENVIRONMENT}) to hold the next run to them"]
