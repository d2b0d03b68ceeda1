"""Seeded mutation fuzzing of the two readers of untrusted files: the spec
loader (with the expansion) and the evidence reader (with the verdicts, the
report data and, for one accepted input in RENDER_EVERY, the rendered HTML
page).
Evidence is mutated as bytes and, in valid JSON, by type: a field's value
replaced by one of another type, a deep nesting or a huge number. Every
input must end in a result or in one `FILE:LINE: message` error line;
anything else (an exception that is not the loader's error, a multi-line
message, a crash) is a finding.

    python3 -m ci.fuzz [--seed S] [--count N]

The same seed gives the same inputs; a finding prints the seed and index that
reproduce it, and the mutated inputs are kept in a new temporary directory.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from generators.expand import expand
from inputs.flags import load_flags
from generators.spec import load_spec
from inputs.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
SPEC_SEED = ROOT / "catalog" / "matrices" / "cpu.toml"
EVIDENCE_SEEDS = sorted((ROOT / "reports" / "tests" / "data" / "recorded").glob("*.jsonl"))
TOKENS = [b"[[suite]]", b"[suite.axes]", b"[[suite.exclude]]", b"=", b'"', b"[", b"]", b"{", b"}", b",", b"\n",
          b"-1", b"0", b"99999999999999999999", b"1e308", b"nan", b"true", b'"cudnn.benchmark"', b"shape",
          b"schedule", b"mb0", b"ih4294967296", b"matmul:m1n1k1", b"\xff\xfe", b"\x00", b"\\u0000", b"{}",
          b'"kind":"case"', b'"kind":"result"', b'"kind":"environment"', b'"outcome":"passed"', b"null",
          b'"digest":', b'"times_ns":[', b'"checks":[{"name":"bitwise"}]', b"<script>alert(1)</script>"]
_ONE_LINE = re.compile(r"^[^\n]+:\d+: [^\n]+$")
RENDER_EVERY = 10
# Values of every JSON type, and the hostile ones: deep nesting, a number of
# more digits than Python converts, one past 64 bits.
WRONG_VALUES: list[object] = ["text", "", 0, -1, 1.5, True, None, [], ["x", 1], {}, {"a": []},
                              10 ** 19, "<script>alert(1)</script>"]


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def mutate_types(data: bytes, rng: random.Random) -> bytes:
    """Changes the type of one field (at any depth) in one to three lines."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        try:
            record = json.loads(lines[i])
        except (ValueError, RecursionError):  # a line an earlier mutation made unreadable
            continue
        slots: list[tuple[object, object]] = []  # (container, key) pairs
        todo = [record]
        while todo:
            node = todo.pop()
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
            for key, value in items:
                slots.append((node, key))
                if isinstance(value, (dict, list)):
                    todo.append(value)
        if not slots:
            continue
        node, key = rng.choice(slots)
        kind = rng.randrange(4)
        if kind == 0:  # a deep nesting, written as text
            marker = "@@DEEP@@"
            node[key] = marker  # type: ignore[index]
            lines[i] = json.dumps(record).replace(json.dumps(marker), _deep(rng.choice((50, 500, 5000)))).encode()
            continue
        if kind == 1:  # a number of thousands of digits, written as text
            marker = "@@HUGE@@"
            node[key] = marker  # type: ignore[index]
            lines[i] = json.dumps(record).replace(json.dumps(marker), "9" * rng.choice((30, 5000))).encode()
            continue
        node[key] = rng.choice(WRONG_VALUES)  # type: ignore[index]
        lines[i] = json.dumps(record).encode()
    return b"\n".join(lines)


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        at = rng.randrange(len(out) + 1)
        if op == 0 and out:  # flip a byte
            out[min(at, len(out) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:  # delete a range
            del out[at:at + rng.randint(1, 64)]
        elif op == 2:  # duplicate a range
            out[at:at] = out[at:at + rng.randint(1, 200)]
        elif op == 3:  # insert a token
            out[at:at] = rng.choice(TOKENS)
        elif op == 4:  # random bytes
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:  # swap, drop or repeat a line
            lines = bytes(out).split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 5:
                lines[i], lines[j] = lines[j], lines[i]
            elif rng.random() < 0.5:
                del lines[i]
            else:
                lines.insert(i, lines[j])
            out = bytearray(b"\n".join(lines))
    return bytes(out)


def fuzz_specs(seed: int, count: int, work: Path) -> list[str]:
    flags = load_flags()
    base = SPEC_SEED.read_bytes()
    findings, errors = [], 0
    for i in range(count):
        rng = random.Random(f"spec-{seed}-{i}")
        path = work / f"spec-{i}.toml"
        path.write_bytes(mutate(base, rng))
        try:
            expand([load_spec(path, flags)], flags, "nightly")
        except SpecError as e:
            errors += 1
            if not _ONE_LINE.match(str(e)) or not str(e).startswith(f"{path}:"):
                findings.append(f"spec seed {seed} index {i}: malformed error {str(e)!r}")
                continue
        except Exception:  # noqa: BLE001 - any other exception is the finding
            findings.append(f"spec seed {seed} index {i}: {traceback.format_exc(limit=3)}")
            continue
        path.unlink()
    print(f"fuzz: {count} mutated specs, {errors} refused with one line, {count - errors} accepted, "
          f"{len(findings)} finding(s)")
    return findings


def fuzz_evidence(seed: int, count: int, work: Path) -> list[str]:
    from reports.catalog import load_catalog
    from reports.evidence import read_evidence
    from reports.pipeline import Report
    from reports.page.render import to_json, write_report
    from reports.verdicts import judge_all

    claims = load_catalog(ROOT / "catalog" / "claims.toml")
    findings, problems, refused, rendered = [], 0, 0, 0
    for i in range(count):
        rng = random.Random(f"evidence-{seed}-{i}")
        d = work / f"evidence-{i}"
        d.mkdir()
        target = rng.randrange(len(EVIDENCE_SEEDS))  # one file mutated, by bytes or by type
        by_type = rng.random() < 0.5
        for k, source in enumerate(EVIDENCE_SEEDS):
            data = source.read_bytes()
            if k == target:
                data = mutate_types(data, rng) if by_type else mutate(data, rng)
            (d / source.name).write_bytes(data)
        try:
            ev = read_evidence([d])
            lines = ev.problems + ev.refused
            bad = [p for p in lines if not _ONE_LINE.match(p) or not p.startswith(str(d))]
            problems += len(ev.problems)
            refused += bool(ev.refused)
            if bad:
                findings.append(f"evidence seed {seed} index {i}: malformed problem {bad[0]!r}")
                continue
            if not ev.refused:  # what the report would go on to judge and render
                verdicts = judge_all(claims, [], ev, partial=True)
                if rendered * RENDER_EVERY <= i:
                    write_report(work / f"report-{i}", Report.of(verdicts, [], ev))
                    shutil.rmtree(work / f"report-{i}")
                    rendered += 1
                else:
                    to_json(Report.of(verdicts, [], ev))
        except Exception:  # noqa: BLE001
            findings.append(f"evidence seed {seed} index {i}: {traceback.format_exc(limit=3)}")
            continue
        shutil.rmtree(d)
    print(f"fuzz: {count} mutated evidence directories, {refused} refused with FILE:LINE, {problems} unreadable "
          f"records skipped with FILE:LINE, {rendered} rendered as HTML, {len(findings)} finding(s)")
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ci.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--count", type=int, default=1000, help="inputs per reader")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="backendcheck-fuzz-"))
    findings = fuzz_specs(args.seed, args.count, work) + fuzz_evidence(args.seed, args.count, work)
    for f in findings[:20]:
        print(f"FINDING {f}")
    if not findings:
        shutil.rmtree(work)
    else:
        print(f"fuzz: the inputs of the findings are in {work}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
