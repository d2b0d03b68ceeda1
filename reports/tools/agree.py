"""Whether several reports of one commit on one machine agree: the same
verdicts, the same card lines and the same real changes between versions.

    python3 -m reports.tools.agree REPORT.json REPORT.json [REPORT.json...]

Compared, each against the first report:

- verdicts: every claim's verdict, per platform, and its prediction's;
- card lines: per platform, what each line of the card says (its goal,
  setting, words and verdict, its claims and theirs, and the claims of its
  figures and costs with their verdicts). The figures' numbers are left out:
  they are measurements (a median of timed reps), whose digits differ run to
  run while what they decide does not;
- real changes between versions: each change's kind, what changed and its
  cause, of those not set aside as run-to-run noise. The observed values are
  left out for the same reason as the figures.

Prints one line per difference and a summary line; exits 1 when any report
differs from the first, 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    """"claim [platform]" -> verdict, the prediction's as "claim (prediction)"."""
    out = {}
    for c in report.get("claims", []):
        out[c["id"]] = c.get("verdict", "")
        for platform, verdict in sorted((c.get("platforms") or {}).items()):
            out[f"{c['id']} [{platform}]"] = verdict if isinstance(verdict, str) else verdict.get("verdict", "")
        prediction = c.get("prediction")
        if isinstance(prediction, dict):
            out[f"{c['id']} (prediction)"] = prediction.get("verdict", "")
    return out


def _claims(items: list[dict[str, Any]]) -> str:
    return ", ".join(f"{x.get('claim') or x.get('id')}: {x.get('verdict', '')}" for x in items)


def card_lines(report: dict[str, Any]) -> set[str]:
    """Every card line, as the words it shows less the measured numbers."""
    out = set()
    for platform, card in (report.get("card") or {}).items():
        for section in card.get("sections", []):
            for line in section.get("lines", []):
                out.add(f"[{platform}] {line.get('heading')}: {line.get('goal')}: {line.get('setting')}: {line.get('says')} "
                        f"({line.get('verdict')}; {_claims(line.get('claims', []))}; figures of "
                        f"{_claims(line.get('figures', []))}; cost of {_claims(line.get('cost', []))}; "
                        f"errors {len(line.get('error', []))})")
        for row in card.get("invariance", []):
            out.add(f"[{platform}] invariance: {row.get('level')}: {row.get('says')}: {row.get('ops')}")
        for group in card.get("not_evaluated", []):
            out.add(f"[{platform}] not evaluated: {group.get('why')}: {_claims(group.get('claims', []))}")
    return out


def real_changes(report: dict[str, Any]) -> set[str]:
    """The changes not set aside as noise: kind, what and cause."""
    grouped = report.get("changes_grouped") or {}
    return {f"{c.get('kind')}: {c.get('what')} ({c.get('cause', '')})"
            for g in grouped.get("groups", []) for c in g.get("changes", []) if not c.get("noise")}


def reduced(report: dict[str, Any]) -> dict[str, Any]:
    """The parts of a report that this comparison reads, and nothing else:
    a report.json of the same verdicts, card lines and real changes, small
    enough to keep as test data (reports/tests/data/agree/)."""
    def verdict_of(v: Any) -> Any:
        return v if isinstance(v, str) else {"verdict": v.get("verdict", "")} if isinstance(v, dict) else v

    def items(xs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"claim": x.get("claim") or x.get("id"), "verdict": x.get("verdict", "")} for x in xs]
    claims = [{"id": c["id"], "verdict": c.get("verdict", ""),
               "platforms": {p: verdict_of(v) for p, v in (c.get("platforms") or {}).items()},
               **({"prediction": {"verdict": c["prediction"].get("verdict", "")}}
                  if isinstance(c.get("prediction"), dict) else {})} for c in report.get("claims", [])]
    card = {platform: {"sections": [{"lines": [{"heading": line.get("heading"), "goal": line.get("goal"),
                                                 "setting": line.get("setting"),
                                                 "says": line.get("says"), "verdict": line.get("verdict"),
                                                 "claims": items(line.get("claims", [])),
                                                 "figures": items(line.get("figures", [])),
                                                 "cost": items(line.get("cost", [])),
                                                 "error": [None] * len(line.get("error", []))}
                                                for line in section.get("lines", [])]}
                                    for section in c.get("sections", [])],
                       "invariance": [{k: row.get(k) for k in ("level", "says", "ops")}
                                      for row in c.get("invariance", [])],
                       "not_evaluated": [{"why": g.get("why"), "claims": items(g.get("claims", []))}
                                         for g in c.get("not_evaluated", [])]}
            for platform, c in (report.get("card") or {}).items()}
    grouped = report.get("changes_grouped") or {}
    changes = {"groups": [{"changes": [{k: c.get(k) for k in ("kind", "what", "cause", "noise")}
                                       for c in g.get("changes", [])]} for g in grouped.get("groups", [])]}
    return {"run": report.get("run", {}), "claims": claims, "card": card, "changes_grouped": changes}


def differences(first: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """One line per way `other` differs from `first`."""
    lines = []
    va, vb = verdicts(first), verdicts(other)
    for key in sorted(set(va) | set(vb)):
        if va.get(key) != vb.get(key):
            lines.append(f"verdict {key}: {va.get(key, 'absent')} against {vb.get(key, 'absent')}")
    for name, a, b in (("card line", card_lines(first), card_lines(other)),
                       ("real change", real_changes(first), real_changes(other))):
        lines += [f"{name} only in the first: {x}" for x in sorted(a - b)]
        lines += [f"{name} only in this one: {x}" for x in sorted(b - a)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m reports.tools.agree", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if len(args.reports) < 2:
        parser.error("name two reports at least")
    loaded = []
    for path in args.reports:
        try:
            loaded.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            print(f"{path}:1: cannot read the report: {e}", file=sys.stderr)
            return 2
    first = loaded[0]
    differing = 0
    for path, report in zip(args.reports[1:], loaded[1:]):
        found = differences(first, report)
        differing += bool(found)
        for line in found:
            print(f"{path}: {line}")
    print(f"agree: {len(loaded)} reports; {len(verdicts(first))} verdicts, {len(card_lines(first))} card lines, "
          f"{len(real_changes(first))} real changes in the first; "
          + (f"{differing} differ from it" if differing else "all agree with it"))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
