"""The claim catalog against the default matrices: a consistency check that
needs both generators/ and reports/, so it lives with neither."""

from __future__ import annotations

import fnmatch
import re
import unittest
from pathlib import Path

from generators.expand import expand
from inputs.flags import load_flags
from inputs.probes import DECLARED, load_declared
from generators.spec import load_spec
from reports.catalog import load_catalog
from reports.verdicts import _case_matches

ROOT = Path(__file__).resolve().parents[2]


class CatalogSelectorsTest(unittest.TestCase):
    """Every claim of the catalog addresses some test of the full (nightly)
    default matrix, some TEST() of the suites or a declared probe's test, so a typo cannot hide behind
    runs that build only part of the matrix."""

    def test_every_claim_selects_something(self) -> None:
        flags = load_flags()
        specs = [load_spec(p, flags) for p in sorted((ROOT / "catalog" / "matrices").glob("*.toml"))]
        cases = [{"test": c.test, "fixture": c.fixture, "suite": c.suite, "binary": c.binary,
                  "positive_control": c.positive_control, "axes": c.axes} for c in expand(specs, flags, "nightly")]
        names = {c["test"] for c in cases}
        for source in (ROOT / "suites").glob("*.cc"):
            for suite, name in re.findall(r"^TEST(?:_F)?\((\w+), (\w+)\)", source.read_text(), re.M):
                names.add(f"{suite}.{name}")
        names |= {p.full_name for p in load_declared(DECLARED)}  # the probes' tests, generated at build time
        for claim in load_catalog(ROOT / "catalog" / "claims.toml"):
            if claim.rule == "out-of-scope":
                continue
            matched = [t for pattern in claim.tests for t in names if fnmatch.fnmatchcase(t, pattern)]
            matched += [c["test"] for c in cases if claim.cases and _case_matches(c, claim.cases)]
            self.assertTrue(matched, f"claim {claim.id} selects no test")
            for pattern in claim.tests:
                self.assertTrue(any(fnmatch.fnmatchcase(t, pattern) for t in names),
                                f"claim {claim.id}: pattern {pattern} matches no test")
