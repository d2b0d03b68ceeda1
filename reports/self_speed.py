"""The words of the harness's own speed, as `./backendcheck bench --self`
measured it (cli/selfbench.py): BENCHMARKS.md's row of one measurement and
the report's line of it (its environment section)."""

from __future__ import annotations


def _seconds(result: dict, key: str) -> str:
    if key not in result:
        return "not measured"
    rc = result.get(key.replace("_s", "_rc"), 0)
    return f"{result[key]:g} s" + (f" (exit {rc})" if rc else "")


def _overhead(result: dict) -> str:
    o = result.get("overhead")
    if o is None:
        return "not measured"
    if o.get("median_s") is None:
        return "no case ran"
    return f"{o['median_s']:g} s ({o['cases']} cases{', in batches' if o.get('batched') else ''})"


def row(result: dict) -> str:
    """The BENCHMARKS.md table row of one measurement."""
    commit = result.get("commit") or "?"
    if result.get("test_commit"):
        commit += f" (test: {result['test_commit']})"
    return (f"| {result['date']} | {commit} | {result['machine']} | "
            f"{_seconds(result, 'cold_run_s')} | {_seconds(result, 'warm_run_s')} | {_overhead(result)} | "
            f"{_seconds(result, 'test_s')} |\n")


def summary(result: dict) -> str:
    """The report's line of it (environment section)."""
    return (f"cold run {_seconds(result, 'cold_run_s')}, warm run {_seconds(result, 'warm_run_s')}, per-case "
            f"overhead of the evidence tests {_overhead(result)} (median), test {_seconds(result, 'test_s')}; "
            f"measured {result['date']} on a fresh clone of {result.get('commit') or '?'}, {result['machine']}")
