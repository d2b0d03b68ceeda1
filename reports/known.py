"""Known findings: what is expected of a claim on a kind of platform,
declared once in the repository (catalog/known_findings.toml) and keyed by a
condition over the parts the platform already names, as LLVM lit's
`XFAIL:` expressions and OpInfo's `DecorateInfo(active_if=...)` are:

    [[finding]]
    claim = "cublas-config"
    verdict = "refuted"                  # or several: ["supported", "inconclusive"]
    when = 'cuda and torch >= "2.10"'    # left out: on every platform
    reason = "PyTorch 2.10 removed the check ..."
    upstream = "pytorch/pytorch#161749"  # optional
    first_seen = 2026-11-26

A condition is a boolean expression (`and`, `or`, `not`, parentheses) over
  torch, onednn, cudnn, cublas   versions: the torch under test, the oneDNN
                                 inside it, the cuDNN and cuBLAS it loads;
                                 compared as versions ("2.10" > "2.9"),
                                 `==` on the parts written ("2.15" holds for
                                 2.15.1); always in quotes
  onednn_isa, gpu, gpu_arch      strings (`==`, `!=`, `in ("a", "b")`);
                                 gpu_arch also as a version ("sm_90" >= "sm_80");
                                 onednn_isa is what the install's oneDNN
                                 reports (avx512_core_fp16, avx10_2_512, ...)
  cpu_vendor, cpu_model          the CPU: "intel", "amd", ...; its model name
  blas, blas_version             the BLAS the torch's float32 GEMM calls
                                 ("mkl", "openblas") and its version
  blas_branch, blas_cnr          what that BLAS reports of itself: oneMKL's
                                 code branch ("avx512", "generic") and CNR
                                 mode ("off", "auto,strict"); OpenBLAS's
                                 kernel set ("haswell"); "" where the run
                                 did not ask it
  threads                        the OpenMP thread count (an integer)
  cuda                           a usable CUDA device
  avx2, avx512_bf16, amx_bf16,   the CPU's features, as the environment
  amx_fp16, ...                  record lists them (any sse4_2, avx*, amx*,
                                 fma or f16c name)
A name the platform lacks (no GPU, say) makes every comparison with it false.

A run is held to them per claim and platform (`judge`): a verdict that an
entry whose condition holds expects is known; one it does not expect is
unexpected ("known finding no longer seen" where it expected a refutation);
a refuted guarantee with no entry is unexpected. A claim not evaluated here
(or timed on a busy machine) is held to nothing. Folklore and advice without
an entry are held to nothing: an entry is what makes their verdict expected.

Several files (`sources`, `load_all`): the repository's
catalog/known_findings.toml first, then the files BACKENDCHECK_KNOWN lists
(absolute paths, `:`-separated, as PATH), then each `--known FILE` in the
order given; a file named twice counts once, where it first comes. So a team
keeps its own findings without editing the repository. Where entries of two
files both apply to a claim on a platform and expect different verdicts, the
later file's entry stands, and the verdict names the entry that decided
(`where`, FILE:LINE: the repository's files relative to its root, others as
given) and the entries it stood in place of. Two entries of one file that
both apply and disagree are bad input (SpecError at the second).

A new machine says what to add (reports/new_findings.py): each unexpected
verdict carries the [[finding]] entry that makes it known on its platform,
keyed by the narrowest condition the platform's facts support, ready to
paste into a file of the team's or to append with `--write-findings FILE`.
"""

from __future__ import annotations

import ast
import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inputs.errors import SpecError, load_toml
from inputs.locate import LineIndex

from .catalog import WORKLOAD_KIND
from .evidence import Evidence, cpu_vendor, platform_fact, torch_of
from .ruling import VERDICTS, Ruling
from .verdicts import Verdict

KEYS = ("claim", "verdict", "when", "reason", "upstream", "first_seen")
VERSIONS = ("torch", "onednn", "cudnn", "cublas", "blas_version")
STRINGS = ("onednn_isa", "gpu", "gpu_arch", "cpu_vendor", "cpu_model", "blas", "blas_branch", "blas_cnr")
NUMBERS = ("threads",)
FLAGS = ("cuda",)
# The CPU features the environment record lists (harness/environment.cc IsaFlags).
CPU_FEATURE = re.compile(r"^(sse4_2|avx|avx2|fma|f16c|avx512\w*|amx\w*)$")
ROOT = Path(__file__).resolve().parents[1]
REPOSITORY_FILE = ROOT / "catalog" / "known_findings.toml"
ENVIRONMENT = "BACKENDCHECK_KNOWN"  # more files, `:`-separated, after the repository's
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def version_key(text: str) -> tuple[int, ...] | None:
    """The release numbers of a version ("2.15.0+cu132" -> (2, 15, 0),
    "1.13.0a0" -> (1, 13, 0), "sm_90" -> (90,)); None without any."""
    m = re.search(r"\d+(?:\.\d+)*", text)
    return tuple(int(x) for x in m.group(0).split(".")) if m else None


def _cudnn_number(n: str) -> str:
    """torch.backends.cudnn.version()'s number as a version: 91900 -> 9.19.0, 8902 -> 8.9.2."""
    v = int(n)
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v >= 90000 else f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def platform_values(env: dict[str, Any]) -> dict[str, Any]:
    """What a condition can name, read off a platform's environment record."""
    torch = env.get("torch") if isinstance(env.get("torch"), dict) else {}
    gpu = env.get("gpu") if isinstance(env.get("gpu"), dict) else {}
    versions = env.get("versions") if isinstance(env.get("versions"), dict) else {}
    cudnn = versions.get("cudnn") or (_cudnn_number(torch["cudnn"]) if str(torch.get("cudnn", "")).isdigit() else "")
    values: dict[str, Any] = {
        "torch": torch_of(env), "onednn": torch.get("onednn", ""), "cudnn": cudnn,
        "cublas": versions.get("cublas", ""), "onednn_isa": platform_fact(env, "onednn_isa") or "",
        "gpu": gpu.get("name", ""), "gpu_arch": gpu.get("arch", ""), "threads": env.get("omp_max_threads"),
        "cuda": bool(gpu.get("count")), "cpu_vendor": cpu_vendor(env), "cpu_model": str(env.get("cpu_model") or ""),
    }
    install = env.get("install") if isinstance(env.get("install"), dict) else {}
    values.update({key: str(install.get(key) or "") for key in ("blas", "blas_version", "blas_branch", "blas_cnr")})
    values["features"] = {str(f) for f in env.get("cpu_isa_flags", [])}
    return values


class Condition:
    """A `when` expression, checked when it is read (every name known, every
    version in quotes) and evaluated on a platform's values."""

    def __init__(self, text: str) -> None:
        self.text = text.strip()
        try:
            self.tree = ast.parse(self.text, mode="eval").body if self.text else ast.Constant(True)
        except SyntaxError as e:
            raise ValueError(f"not an expression: {e.msg}") from None
        self._check(self.tree)

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                self._check(v)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._check(node.operand)
        elif isinstance(node, ast.Name):
            self._name(node.id)
        elif isinstance(node, ast.Compare):
            names = [n for n in [node.left, *node.comparators] if isinstance(n, ast.Name)]
            if len(names) != 1:
                raise ValueError("a comparison names one of the platform's parts and a value in quotes")
            name = self._name(names[0].id)
            for op, value in zip(node.ops, [n for n in [node.left, *node.comparators] if n is not names[0]]):
                self._value(name, op, value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            pass
        else:
            raise ValueError(f"'{ast.unparse(node)}' is not a condition (use and, or, not, comparisons and names)")

    @staticmethod
    def _name(name: str) -> str:
        if name in VERSIONS + STRINGS + NUMBERS + FLAGS or CPU_FEATURE.match(name):
            return name
        raise ValueError(f"unknown name '{name}' (known: {', '.join(VERSIONS + STRINGS + NUMBERS + FLAGS)}, "
                         "and CPU features such as avx512_bf16, amx_bf16, amx_fp16)")

    @staticmethod
    def _value(name: str, op: ast.cmpop, value: ast.AST) -> None:
        if name in FLAGS or CPU_FEATURE.match(name):
            raise ValueError(f"'{name}' is true or false: use it alone or with not")
        if isinstance(op, (ast.In, ast.NotIn)):
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [None]
            if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
                raise ValueError(f"'{name} in ...' takes a list of strings in quotes")
            return
        if not isinstance(op, (ast.Eq, ast.NotEq) + _ORDER):
            raise ValueError(f"unknown comparison {type(op).__name__}")
        if name in NUMBERS:
            if not (isinstance(value, ast.Constant) and type(value.value) is int):
                raise ValueError(f"'{name}' is compared with a whole number")
            return
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            raise ValueError(f"write the value compared with '{name}' in quotes, as \"2.10\" (2.10 as a number "
                             "is 2.1)")
        if isinstance(op, _ORDER) and name not in VERSIONS + ("gpu_arch",):
            raise ValueError(f"'{name}' is a name, not a version: compare it with == or in")
        if (name in VERSIONS or isinstance(op, _ORDER)) and version_key(value.value) is None:
            raise ValueError(f"'{value.value}' is not a version")

    def holds(self, values: dict[str, Any]) -> bool:
        return bool(self._eval(self.tree, values))

    def _eval(self, node: ast.AST, values: dict[str, Any]) -> bool:
        if isinstance(node, ast.BoolOp):
            results = (self._eval(v, values) for v in node.values)
            return all(results) if isinstance(node.op, ast.And) else any(results)
        if isinstance(node, ast.UnaryOp):
            return not self._eval(node.operand, values)
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.Name):
            return node.id in values["features"] if CPU_FEATURE.match(node.id) else bool(values.get(node.id))
        assert isinstance(node, ast.Compare)
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if not _compare(op, left, right, values):
                return False
        return True


def _compare(op: ast.cmpop, left: ast.AST, right: ast.AST, values: dict[str, Any]) -> bool:
    name, value, flipped = (left.id, right, False) if isinstance(left, ast.Name) else (right.id, left, True)  # type: ignore[attr-defined]
    have = values.get(name)
    if have in (None, ""):
        return False  # the platform has no such part
    if isinstance(op, (ast.In, ast.NotIn)):
        inside = str(have) in [e.value for e in value.elts]  # type: ignore[attr-defined]
        return inside == isinstance(op, ast.In)
    want = value.value  # type: ignore[attr-defined]
    if name in NUMBERS:
        a, b = int(have), int(want)
    elif name in VERSIONS or isinstance(op, _ORDER):
        a, b = version_key(str(have)), version_key(str(want))
        if a is None or b is None:
            return False
        if isinstance(op, (ast.Eq, ast.NotEq)):  # "2.15" holds for 2.15.1
            a = a[:len(b)]
        width = max(len(a), len(b))
        a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    else:
        a, b = str(have), str(want)
    if flipped:
        a, b = b, a
    return {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b,
            ast.GtE: a >= b}[type(op)]


@dataclass
class Finding:
    claim: str
    verdicts: tuple[str, ...]
    when: Condition
    reason: str
    first_seen: str
    upstream: str = ""
    where: str = ""  # FILE:LINE

    @property
    def file(self) -> str:
        """The file the entry is in, as `where` names it."""
        return self.where.rsplit(":", 1)[0]


def display(path: Path) -> str:
    """A findings file as the report names it: relative to the repository's
    root when inside it (catalog/known_findings.toml), else as given."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def sources(given: list[Path], environment: str = "") -> list[Path]:
    """The findings files in the order they are read: the repository's own
    (where given), then `environment`'s (BACKENDCHECK_KNOWN's value), then
    the others given, in order; each file once. SpecError for a relative
    path in `environment` (the report may run in another directory)."""
    listed = []
    for number, part in enumerate(environment.split(":"), start=1):
        if part and not Path(part).is_absolute():
            raise SpecError(ENVIRONMENT, number, f"'{part}' is not an absolute path (give each file from /)")
        if part:
            listed.append(Path(part))
    repository = [p for p in given if p.resolve() == REPOSITORY_FILE]
    ordered = repository + listed + [p for p in given if p.resolve() != REPOSITORY_FILE]
    unique: dict[Path, Path] = {}
    for p in ordered:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def load_all(paths: list[Path], claims: set[str]) -> list[Finding]:
    """Every file's entries, file after file (`sources` gives the order)."""
    return [f for path in paths for f in load(path, claims)]


def load(path: Path, claims: set[str]) -> list[Finding]:
    """The file's entries; SpecError naming the file, line and field of the
    first that is malformed."""
    name = display(path)
    try:
        text, doc = load_toml(path, "known findings file")
    except SpecError as e:
        raise SpecError(name, e.line, e.message) from None
    index = LineIndex(text)
    for key in doc:
        if key != "finding":
            raise SpecError(name, index.line((key,)), f"unknown key '{key}' (expected [[finding]] tables)")
    raw = doc.get("finding", [])
    if not isinstance(raw, list):
        raise SpecError(name, index.line(("finding",)), "finding must be [[finding]] tables")
    out: list[Finding] = []
    for i, entry in enumerate(raw):
        def error(key: str, message: str) -> SpecError:
            return SpecError(name, index.line(("finding", i, key)), f"{key}: {message}")

        for key in entry:
            if key not in KEYS:
                raise error(key, f"unknown field (known: {', '.join(KEYS)})")
        for key in ("claim", "verdict", "reason", "first_seen"):
            if key not in entry:
                raise SpecError(name, index.line(("finding", i)), f"{key}: missing")
        if entry["claim"] not in claims:
            raise error("claim", f"no claim '{entry['claim']}' in the catalog")
        verdicts = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
        wrong = [v for v in verdicts if v not in VERDICTS or v in (Ruling.NOT_EVALUATED, Ruling.ERROR)]
        if not verdicts or wrong:
            raise error("verdict", f"{wrong[0] if wrong else 'none'!r} is not a verdict to expect (supported, "
                                   "refuted, inconclusive)")
        if not isinstance(entry["reason"], str) or not entry["reason"].strip():
            raise error("reason", "say what is known, in the user's terms")
        seen = entry["first_seen"]
        if isinstance(seen, str):
            try:
                seen = datetime.date.fromisoformat(seen)
            except ValueError:
                raise error("first_seen", f"{seen!r} is not a date (YYYY-MM-DD)") from None
        if not isinstance(seen, datetime.date) or isinstance(seen, datetime.datetime):
            raise error("first_seen", "a date, as 2026-11-26")
        if not isinstance(entry.get("upstream", ""), str) or not isinstance(entry.get("when", ""), str):
            raise error("upstream" if not isinstance(entry.get("upstream", ""), str) else "when", "a string")
        try:
            when = Condition(entry.get("when", ""))
        except ValueError as e:
            raise error("when", str(e)) from None
        out.append(Finding(entry["claim"], tuple(verdicts), when, entry["reason"].strip(), seen.isoformat(),
                           entry.get("upstream", ""), f"{name}:{index.line(('finding', i))}"))
    return out


@dataclass
class Held:
    """One claim on one platform, held to what is known.
    status: known (the verdict an entry expects), unexpected, or not seen
    (an entry applies but the claim was not evaluated here). `finding` is
    the entry that decided, `overrides` the entries of earlier files it
    stood in place of (FILE:LINE), `said` the platform's own reason in one
    line, and `suggested`, for the unexpected, the entry that would make
    the verdict known (reports/new_findings.py)."""
    claim: str
    platform: str
    kind: str
    got: str
    status: str
    expected: tuple[str, ...] = ()
    finding: Finding | None = None
    why: str = ""
    said: str = ""
    overrides: tuple[str, ...] = ()
    suggested: str = ""
    snippet: str = ""  # the verdict's counter-example, as Python to run

    def line(self) -> str:
        """One line naming the claim, the platform, what was expected and why."""
        return f"UNEXPECTED {self.claim} on {self.platform}: {self.why}" + (
            " (the counter-example follows)" if self.snippet else "")

    def lines(self) -> list[str]:
        """The UNEXPECTED line, then the counter-example's lines, if any."""
        return [self.line(), *self.snippet.splitlines()]

    def as_json(self) -> dict[str, Any]:
        f = self.finding
        return {"claim": self.claim, "platform": self.platform, "got": self.got, "status": self.status,
                "expected": list(self.expected), "why": self.why,
                **({"reason": f.reason, "first_seen": f.first_seen, "upstream": f.upstream, "where": f.where,
                    "overrides": list(self.overrides)} if f else {}),
                **({"suggested": self.suggested} if self.suggested else {})}


def judge(findings: list[Finding], verdicts: list[Verdict], evidence: Evidence, partial: bool) -> list[Held]:
    """Every claim on every platform that an entry applies to, or that is a
    refuted guarantee: known, unexpected or not seen. Of the entries that
    apply, the last file's decide; SpecError when two entries of one file
    that disagree both apply."""
    by_claim: dict[str, list[Finding]] = {}
    for f in findings:
        by_claim.setdefault(f.claim, []).append(f)
    held: list[Held] = []
    for platform, env in evidence.platform_env.items():
        values = platform_values(env)
        for v in verdicts:
            pv = v.on(platform)
            finding, overrides = _deciding([f for f in by_claim.get(v.claim.id, []) if f.when.holds(values)],
                                           v.claim.id, platform)
            if pv.verdict == Ruling.ERROR:  # the harness's failure, never a finding known or not seen (exit 1)
                continue
            if pv.verdict == Ruling.NOT_EVALUATED or pv.withheld:
                if finding is not None and not (partial and pv.verdict == Ruling.NOT_EVALUATED):
                    held.append(Held(v.claim.id, platform, v.claim.kind, pv.verdict, "not seen", finding.verdicts,
                                     finding, f"{pv.verdict} here: {pv.reason[:200]}", overrides=overrides))
                continue
            said = one_line(pv.reason)
            if finding is not None and pv.verdict in finding.verdicts:
                held.append(Held(v.claim.id, platform, v.claim.kind, pv.verdict, "known", finding.verdicts, finding,
                                 f"{pv.verdict}, known since {finding.first_seen}: {finding.reason} ({finding.where}"
                                 + (f", in place of {', '.join(overrides)}" if overrides else "") + ")",
                                 said, overrides))
                continue
            if finding is not None:
                no_longer = Ruling.REFUTED in finding.verdicts and pv.verdict != Ruling.REFUTED
                h = Held(v.claim.id, platform, v.claim.kind, pv.verdict, "unexpected", finding.verdicts, finding,
                         (f"known finding no longer seen; narrow or remove the entry ({finding.where}): "
                          if no_longer else f"the {v.claim.kind} verdict moved ({finding.where}): ")
                         + f"expected {' or '.join(finding.verdicts)}, got {pv.verdict}: {said}", said, overrides)
            elif v.claim.kind in ("guarantee", WORKLOAD_KIND) and pv.verdict == Ruling.REFUTED:
                # A documented promise, or a team's own workload: what it
                # holds to is what fails its CI when it does not hold.
                h = Held(v.claim.id, platform, v.claim.kind, pv.verdict, "unexpected", (Ruling.SUPPORTED,), None,
                         f"a {v.claim.kind} refuted with no known finding: expected supported, got refuted: {said}",
                         said)
            else:
                continue
            h.snippet = pv.snippet
            held.append(h)
    return held


def _deciding(applies: list[Finding], claim: str, platform: str) -> tuple[Finding | None, tuple[str, ...]]:
    """Of the entries that apply (in the order their files are read), the
    one that decides: the last file's; and the entries of earlier files
    that expected otherwise. SpecError where two of one file disagree."""
    by_file: dict[str, list[Finding]] = {}
    for f in applies:
        by_file.setdefault(f.file, []).append(f)
    for entries in by_file.values():
        if len({f.verdicts for f in entries}) > 1:
            second = next(f for f in entries if f.verdicts != entries[0].verdicts)
            raise SpecError(second.file, int(second.where.rsplit(":", 1)[1]),
                            f"when: this entry and the one at {entries[0].where} both apply to {claim} on "
                            f"{platform} and expect different verdicts: narrow one of them")
    if not applies:
        return None, ()
    decides = list(by_file.values())[-1][0]
    return decides, tuple(f.where for f in applies if f.file != decides.file and f.verdicts != decides.verdicts)


def one_line(reason: str, most: int = 300) -> str:
    """The platform's own reason, on one line of at most `most` characters,
    cut after a whole word."""
    line = " ".join(reason.split())
    return line if len(line) <= most else line[:most - 1].rsplit(" ", 1)[0] + "…"
