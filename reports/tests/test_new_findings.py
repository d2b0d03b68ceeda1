"""The entry a new machine should add (reports/new_findings.py): printed
after each UNEXPECTED line, written by --write-findings, and with that file
given as --known, the same report passes; on the recorded runs mutated to a
new refutation (reports/tests/test_known_files.py's), and on the
condition's parts."""

from __future__ import annotations

import datetime
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from reports import known, new_findings
from reports.catalog import load_catalog
from reports.tests.recorded import ZEN5_STATUS
from reports.tests.test_known_files import ROOT, TORCH_113, TORCH_215, MutatedRuns, OneClaimCatalog, Ran, entry


class NewRefutationTest(MutatedRuns, unittest.TestCase):
    def control(self) -> Ran:
        """The mutated runs held to the repository's file alone (the control
        of every test here: exit 3), writing the entries to add to WRITTEN."""
        cls = type(self)
        if not hasattr(cls, "_control"):
            cls.written = cls.runs.root / "new" / "findings.toml"
            cls.written.parent.mkdir()
            cls.today = {datetime.date.today().isoformat()}
            cls._control = self.run_report(more=("--write-findings", str(cls.written)))
            cls.today.add(datetime.date.today().isoformat())
        return cls._control

    def test_a_new_refutation_prints_the_entry_to_add_and_writes_it_and_then_passes(self) -> None:
        first, written = self.control(), self.written
        self.assertEqual(first.status, 3, "the control: a guarantee refuted with no known finding")
        lines = first.stderr.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("UNEXPECTED "))
        self.assertTrue(lines[at].startswith(f"UNEXPECTED openmp-available on {TORCH_113}: a guarantee refuted"))
        self.assertEqual(lines[at + 1].split(":")[0], f"# openmp-available on {TORCH_113}")
        self.assertEqual(lines[at + 2:at + 5], ["[[finding]]", 'claim = "openmp-available"', 'verdict = "refuted"'])
        self.assertEqual(sum(line.startswith("UNEXPECTED") for line in lines), 1)

        # What was printed is what was written, and it reads back as one entry.
        text = written.read_text()
        self.assertIn("\n".join(lines[at + 1:at + 8]), text)
        self.assertTrue(text.startswith(f"# openmp-available on {TORCH_113}: refuted"), "a comment names the platform")
        from reports.catalog import load_catalog
        (f,) = known.load(written, {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml")})
        self.assertEqual((f.claim, f.verdicts, f.where), ("openmp-available", ("refuted",), f"{written}:2"))
        self.assertIn(f.first_seen, self.today)
        self.assertIn("TorchPython.OpenmpIsAvailable", f.reason, "the platform's own reason")
        for needed in ('torch == "1.13"', 'onednn == "2.6"', 'onednn_isa == "avx512_core_bf16"', "threads == 2",
                       "not cuda", "avx512_bf16", "avx512f", "not amx_bf16", "not amx_tile", "not avx512_fp16"):
            self.assertIn(needed, f.when.text.split(" and "))
        # The condition holds on that platform and on no other of the report.
        envs = {p: known.platform_values(e) for p, e in first.json["platform_env"].items()}
        self.assertEqual({p for p, v in envs.items() if f.when.holds(v)}, {TORCH_113})

        # The same report, with the written file given last, passes; only that verdict became known.
        second = self.run_report(written)
        self.assertEqual(second.status, ZEN5_STATUS, second.stderr)
        was, now = first.held(), second.held()
        newly = {k for k in now if now[k]["status"] == "known" and was.get(k, {}).get("status") != "known"}
        self.assertEqual(newly, {("openmp-available", TORCH_113)})
        self.assertEqual({k: h["status"] for k, h in now.items() if k not in newly},
                         {k: h["status"] for k, h in was.items() if k not in newly})
        self.assertEqual(now[("openmp-available", TORCH_113)]["where"], f"{written}:2")
        self.assertIn(f"refuted, known: openmp-available on {TORCH_113} (since {f.first_seen}) by {written}:2",
                      second.stdout)

    def test_a_known_finding_no_longer_seen_gets_an_entry_and_the_narrowing_of_its_own(self) -> None:
        ev = self.runs.cpu["2.15.0"] / "evidence"
        self.runs.edit(ev, "TorchPython.MkldnnConvBf16Precision", '"outcome":"failed"', '"outcome":"passed"', 2)
        self.addCleanup(self.runs.edit, ev, "TorchPython.MkldnnConvBf16Precision", '"outcome":"passed"',
                        '"outcome":"failed"', 2)
        openmp = self.team_file(entry("openmp-available", "refuted", 'torch < "2.0"'))
        written = self.runs.root / "narrow.toml"
        first = self.run_report(openmp, more=("--write-findings", str(written)))
        self.assertEqual(first.status, 4, first.stderr)
        (h,) = [h for h in first.json["known"]["held"] if h["status"] == "unexpected"]
        self.assertIn("known finding no longer seen", h["why"])
        suggested = h["suggested"]
        self.assertIn('verdict = "supported"', suggested)
        # The entry's own condition, as the repository's file has it.
        claims = {c.id for c in load_catalog(ROOT / "catalog" / "claims.toml")}
        ours = next(f for f in known.load(ROOT / "catalog" / "known_findings.toml", claims)
                     if f.claim == "mkldnn-conv-bf16")
        self.assertIn(f"# in a file read after catalog/known_findings.toml; or narrow the entry at {h['where']} "
                      f"instead: when = '({ours.when.text}) and not (torch == \"2.15\"", suggested)
        # The narrowed condition leaves the entry on every other platform as it was.
        narrowed = known.Condition(suggested.split("instead: when = '", 1)[1].split("'\n", 1)[0])
        old = ours.when
        for p, env in first.json["platform_env"].items():
            values = known.platform_values(env)
            self.assertEqual(narrowed.holds(values), old.holds(values) and p != TORCH_215, p)
        second = self.run_report(openmp, written)
        self.assertEqual(second.status, ZEN5_STATUS, second.stderr)
        h = second.held()[("mkldnn-conv-bf16", TORCH_215)]
        self.assertEqual((h["status"], h["got"], h["where"]), ("known", "supported", f"{written}:3"))
        self.assertEqual(h["overrides"], [first.held()[("mkldnn-conv-bf16", TORCH_215)]["where"]])


class WriteFindingsTest(OneClaimCatalog, unittest.TestCase):
    """--write-findings on a one-claim catalog."""

    def test_write_findings_does_not_write_where_its_file_decides_the_verdict(self) -> None:
        own = self.t / "own.toml"
        own.write_text(entry("g", "supported", "not cuda"))
        ran = self.run_report("--known", str(own), "--write-findings", str(own))
        self.assertEqual(ran.status, 3)
        self.assertIn(f"{own}: not written for g on unknown (unknown): the entry at {own}:1 decides it", ran.stderr)
        self.assertEqual(own.read_text(), entry("g", "supported", "not cuda"), "left as it was")
        later = self.t / "later.toml"
        ran = self.run_report("--known", str(own), "--write-findings", str(later))
        self.assertIn(f"{later}: 1 entry(ies) added", ran.stderr)
        self.assertEqual(self.run_report("--known", str(own), "--known", str(later)).status, 0)
        unwritable = self.t / "no-such-dir" / "f.toml"
        ran = self.run_report("--write-findings", str(unwritable))
        self.assertEqual((ran.status, ran.stderr.splitlines()[-1]),
                         (1, f"{unwritable}:1: cannot write the findings: No such file or directory"))


class ConditionOfTest(unittest.TestCase):
    def test_a_name_the_language_gains_flows_into_the_condition(self) -> None:
        """condition_of iterates over platform_values and the language's
        tuples: a new string name (here added for the test) comes in."""
        values = {"torch": "2.15.0+cu132", "fleet_zone": "east", "threads": 4, "cuda": False,
                  "gpu": "", "features": {"avx2", "avx512f", "amx_tile", "fma"}}
        self.assertEqual(new_findings.condition_of(values),
                         'torch == "2.15" and threads == 4 and not cuda and amx_tile and avx512f and not amx_bf16 and '
                         'not amx_int8 and not amx_fp16 and not amx_complex and not avx512_bf16 and not avx512_fp16')
        with mock.patch.object(known, "STRINGS", known.STRINGS + ("fleet_zone",)):
            when = new_findings.condition_of(values)
            self.assertIn('fleet_zone == "east"', when)
            self.assertTrue(known.Condition(when).holds(values))
            self.assertFalse(known.Condition(when).holds({**values, "fleet_zone": "west"}))

    def test_an_entry_names_the_other_platforms_whose_facts_are_the_same(self) -> None:
        values = {"torch": "2.15.0", "cuda": False, "features": {"avx512f"}}
        h = known.Held("c", "p1", "guarantee", "refuted", "unexpected", said="seen")
        text = new_findings.entry(h, values, datetime.date(2026, 11, 28),
                                  {"p2": {**values, "torch": "2.15.1"}, "p3": {**values, "torch": "2.16.0"}})
        self.assertEqual(text.splitlines()[:2], ["# c on p1: refuted, first seen 2026-11-28",
                                                 "# its facts are also those of p2: the entry applies there too"])
        self.assertNotIn("p3", text)

    def test_a_long_reason_is_cut_after_a_whole_word(self) -> None:
        from reports.catalog import Claim
        from reports.evidence import Evidence
        from reports.verdicts import Verdict
        said = "across the thread count, " + "addmm: 87.6% of elements differ; " * 20
        v = Verdict(Claim("g", "s", "s", "guarantee", {}, "fact"), "refuted", said, [])
        ev = Evidence(platform_env={"p": {"omp_max_threads": 2}})
        (h,) = known.judge([], [v], ev, partial=False)
        new_findings.suggest([h], ev, datetime.date(2026, 11, 28))
        reason = next(line for line in h.suggested.splitlines() if line.startswith("reason = "))
        self.assertEqual(reason, f"reason = {json.dumps(h.said, ensure_ascii=False)}")
        self.assertTrue(h.said.endswith("…") and len(h.said) <= 300, h.said)
        self.assertEqual(said[len(h.said) - 1], " ", "cut where a word ends")
        self.assertTrue(said.startswith(h.said[:-1]))
        self.assertIn("threads == 2", h.suggested)

    def test_quotes_in_a_value_or_a_reason_still_read_back(self) -> None:
        for text in ("plain", 'say "x"', "it's", "both ' and \"", "tab\there"):
            with self.subTest(text=text):
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "k.toml"
                    path.write_text(f"[[finding]]\nclaim = \"c\"\nverdict = \"refuted\"\n"
                                    f"when = {new_findings.toml_string('gpu == ' + json.dumps(text))}\n"
                                    f"reason = {new_findings.toml_string(text)}\nfirst_seen = 2026-11-28\n")
                    (f,) = known.load(path, {"c"})
                    self.assertEqual(f.reason, text.strip())
                    self.assertTrue(f.when.holds({"gpu": text, "features": set()}))


if __name__ == "__main__":
    unittest.main()
