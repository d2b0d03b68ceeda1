"""The evidence records' shape, checked on load.

A record that does not fit (an unknown kind, another schema number, a field
of the wrong type, an outcome outside its set) is refused with the reason;
the caller names its file and line. Fields not listed here are kept
unchecked: the report reads only the ones that are.
"""

from __future__ import annotations

from typing import Any

SCHEMA = 1  # harness/evidence.h kEvidenceSchema
KINDS = ("environment", "case", "result")
RESULT_OUTCOMES = ("passed", "failed", "skipped")
CHECK_OUTCOMES = ("passed", "failed", "caught", "missed", "varied", "stable", "mistrusted", "not_applicable",
                  "misconfigured")


def _is(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "dict":
        return isinstance(value, dict)
    if kind.startswith("list[") and kind.endswith("]"):
        return isinstance(value, list) and all(_is(v, kind[5:-1]) for v in value)
    if kind.startswith("map["):  # map[T]: a dict of str -> T
        return isinstance(value, dict) and all(_is(v, kind[4:-1]) for v in value.values())
    raise ValueError(kind)


_STEP = {"test": "str", "repro": "str", "device": "str", "engine": "str", "algorithm": "str",
         "implementation": "str", "digest": "str", "digests": "list[str]", "distinct_digests": "int",
         "times_ns": "list[num]", "step_ns": "num", "rss_peak_bytes": "num", "workspace_bytes": "num",
         "device_peak_bytes": "num", "selection": "dict", "error": "map[num]", "gflop": "num", "threads": "int",
         "skip_reason": "str", "degenerate": "bool", "shape": "str", "op": "str", "direction": "str",
         "dtype": "str", "flags": "map[str]", "runs": "int", "runs_to_distinct": "int"}
FIELDS: dict[str, dict[str, str]] = {
    "environment": {"machine": "str", "onednn_isa": "str", "omp_max_threads": "int", "hardware_threads": "int",
                    "cpu_model": "str", "cpu_isa_flags": "list[str]", "compiler": "str", "backends": "map[dict]",
                    "default_flags": "list[str]", "gtest_filter": "str"},
    "case": {**_STEP, "case_id": "str", "checks": "list[dict]", "steps": "list[dict]", "compare": "dict",
             "processes": "list[dict]", "choice_distribution": "map[int]", "digest_distribution": "map[int]",
             "distinct_choices": "int", "searches": "int", "schedule_steps": "int"},
    "result": {"test": "str", "outcome": "str", "message": "str", "elapsed_ms": "num"},
}
_BACKEND = {"built": "bool", "available": "bool", "reason": "str", "version": "str"}
_CHECK = {"name": "str", "outcome": "str", "detail": "str"}


def _fields(record: dict[str, Any], fields: dict[str, str], where: str, required: bool = False) -> str | None:
    """A field of the wrong type (or, when `required`, a missing one)."""
    if not isinstance(record, dict):
        return f"{where.rstrip('.')} must be an object, not {type(record).__name__}"
    for name, kind in fields.items():
        if required and name not in record:
            return f"{where}'{name}' is missing"
        if name in record and not _is(record[name], kind):
            return f"{where}'{name}' must be {kind.replace('num', 'number')}, not {type(record[name]).__name__}"
    return None


def problem(record: Any) -> str | None:
    """Why the record is refused, or None when it fits."""
    if not isinstance(record, dict):
        return f"a record must be a JSON object, not {type(record).__name__}"
    kind = record.get("kind")
    if kind not in KINDS:
        return f"unknown record kind {kind!r} (known: {', '.join(KINDS)})"
    schema = record.get("schema")
    if schema != SCHEMA:
        return f"evidence schema {schema!r}, this report reads schema {SCHEMA}"
    if (why := _fields(record, FIELDS[kind], "")) is not None:
        return why
    if kind == "result" and record.get("outcome") not in RESULT_OUTCOMES:
        return f"unknown result outcome {record.get('outcome')!r} (known: {', '.join(RESULT_OUTCOMES)})"
    if kind == "result" and "test" not in record:
        return "a result record needs 'test'"
    if kind == "environment":
        for name, backend in record.get("backends", {}).items():
            if (why := _fields(backend, _BACKEND, f"backends.{name}.", required=True)) is not None:
                return why
    if kind == "case":
        for i, check in enumerate(record.get("checks", [])):
            if (why := _fields(check, {k: v for k, v in _CHECK.items() if k != "detail"}, f"checks[{i}].",
                               required=True) or _fields(check, _CHECK, f"checks[{i}].")) is not None:
                return why
            if check.get("outcome") not in CHECK_OUTCOMES:
                return f"checks[{i}]: unknown outcome {check.get('outcome')!r} (known: {', '.join(CHECK_OUTCOMES)})"
        for i, step in enumerate(record.get("steps", [])):
            if (why := _fields(step, _STEP, f"steps[{i}].")) is not None:
                return why
        for i, proc in enumerate(record.get("processes", [])):
            if (why := _fields(proc, _STEP, f"processes[{i}].")) is not None:
                return why
        compare = record.get("compare")
        if compare is not None:
            for side in ("a", "b"):
                if not isinstance(compare.get(side), dict):
                    return f"compare.{side} must be an object"
                for name, value in compare[side].items():
                    metric = name.endswith(("_ns", "_bytes"))
                    if metric and not _is(value, "list[num]"):
                        return f"compare.{side}.{name} must be a list of numbers"
                    if name == "repro" and not isinstance(value, str):
                        return f"compare.{side}.repro must be str"
    return None
