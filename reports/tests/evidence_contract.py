"""The writers and the schema agree: every record evidence_samples prints
(one of every kind and outcome, from the real C++ serialisers) fits
harness/evidence.schema.json, and the C++ enums and schema number are the
schema's. Usage: python3 -m reports.tests.evidence_contract EVIDENCE_SAMPLES"""

from __future__ import annotations

import json
import subprocess
import sys

from reports import records


def main(binary: str) -> int:
    names = json.loads(subprocess.run([binary, "--names"], check=True, capture_output=True, text=True).stdout)
    failures = []
    if names["schema"] != records.SCHEMA:
        failures.append(f"kEvidenceSchema {names['schema']} vs the schema's {records.SCHEMA}")
    for enum, schema_values in (("check_outcome", records.CHECK_OUTCOMES), ("result_outcome", records.RESULT_OUTCOMES)):
        if tuple(names[enum]) != schema_values:
            failures.append(f"{enum}: C++ {names[enum]} vs schema {list(schema_values)}")
    systems = set(records.contract()["$defs"]["system"]["enum"])
    if set(names["systems"]) - systems:
        failures.append(f"systems of engines.def missing from the schema: {sorted(set(names['systems']) - systems)}")
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout.splitlines()
    kinds, outcomes = set(), set()
    for number, line in enumerate(out, 1):
        record = json.loads(line)
        if (why := records.problem(record)) is not None:
            failures.append(f"sample {number} ({record.get('kind')}, {record.get('test', '')}): {why}")
        kinds.add(record.get("kind"))
        outcomes.update(("check", c["outcome"]) for c in record.get("checks", []))
        if record.get("kind") == "result":
            outcomes.add(("result", record["outcome"]))
    if kinds != set(records.KINDS):
        failures.append(f"kinds printed {sorted(kinds)}, the schema has {list(records.KINDS)}")
    want = {("check", o) for o in records.CHECK_OUTCOMES} | {("result", o) for o in records.RESULT_OUTCOMES}
    if want - outcomes:
        failures.append(f"outcomes never printed: {sorted(want - outcomes)}")
    # The contract refuses what it should: a wrong type and an unknown outcome.
    case = next(json.loads(x) for x in out if json.loads(x).get("kind") == "case")
    for field, value in (("times_ns", ["x"]), ("threads", "2")):
        if records.problem(dict(case, **{field: value})) is None:
            failures.append(f"a case with {field}={value!r} was accepted")
    if records.problem(dict(case, checks=[{"name": "bitwise", "outcome": "great"}])) is None:
        failures.append("a check outcome 'great' was accepted")
    for f in failures:
        print("evidence.contract:", f, file=sys.stderr)
    print(f"evidence.contract: {len(out)} records, {len(kinds)} kinds, {len(outcomes)} outcomes: "
          f"{'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
