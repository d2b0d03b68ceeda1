"""Prints every skipped test with its reason, from the evidence result
records: what this machine could not evaluate, and why.

    python3 -m reports.skips EVIDENCE_DIR...
"""

from __future__ import annotations

import sys
from pathlib import Path

from .evidence import read_evidence


def main(argv: list[str]) -> int:
    ev = read_evidence([Path(a) for a in argv])
    skipped = sorted((t, r.get("message", "").strip()) for t, r in ev.results.items() if r.get("outcome") == "skipped")
    if skipped:
        print(f"{len(skipped)} test(s) skipped, not evaluated on this machine:")
        for test, reason in skipped:
            print(f"  SKIPPED {test}: {reason or '(no reason given)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
