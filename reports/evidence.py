"""Reading evidence: JSON Lines files of test processes, ctest's JUnit XML and
the generator's manifest.

A truncated last line (what a killed process leaves) is reported with its
file and line and skipped. A record that does not fit the evidence's shape
(reports/records.py: an unknown kind or schema, a field of the wrong type)
is refused: the report names it (FILE:LINE) and is not written. Several
result records of one test are named; when they disagree, the test's fact
is mistrusted and decides nothing. Only regular files are read, each up to
MAX_FILE_BYTES."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any

from inputs import onednn_isa
from inputs.engines import engines
from inputs.errors import SpecError, read_regular
from inputs.repro import split_repro

from . import records as schema
from .benchmarks import BenchmarkError
from .benchmarks import load as load_benchmarks

MAX_FILE_BYTES = 256 << 20


@dataclass
class Evidence:
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)  # machine -> record
    results: dict[str, dict[str, Any]] = field(default_factory=dict)       # test -> result record
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # test -> case records
    ctest: dict[str, str] = field(default_factory=dict)                    # test -> junit status
    ctest_seconds: dict[str, float] = field(default_factory=dict)          # test -> junit time
    timeouts: dict[str, float] = field(default_factory=dict)               # test -> its ctest TIMEOUT
    registered: set[str] = field(default_factory=set)                      # every test ctest knows
    labels: dict[str, list[str]] = field(default_factory=dict)             # test -> its ctest labels
    problems: list[str] = field(default_factory=list)                      # FILE:LINE: what
    refused: list[str] = field(default_factory=list)                       # FILE:LINE: why, fatal
    seen: dict[str, list[str]] = field(default_factory=dict)               # test -> "FILE:LINE outcome"
    files: int = 0
    # Merged evidence only: each platform's own evidence, and the environment
    # record that names it.
    platforms: dict[str, Evidence] = field(default_factory=dict)
    platform_env: dict[str, dict[str, Any]] = field(default_factory=dict)
    # platform -> the summary of its run's benchmarks.json (reports.benchmarks)
    benchmarks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # evidence directory (as given) -> the platform its run was judged on
    run_platform: dict[str, str] = field(default_factory=dict)

    def merge(self, other: Evidence, platform: str) -> None:
        for test, records in other.cases.items():
            for r in records:
                r["platform"] = platform
            self.cases.setdefault(test, []).extend(records)
        for test, r in other.results.items():
            r["platform"] = platform
        self.results.update(other.results)
        self.environments.update(other.environments)
        self.ctest.update(other.ctest)
        self.ctest_seconds.update(other.ctest_seconds)
        self.timeouts.update(other.timeouts)
        self.registered |= other.registered
        self.files += other.files
        for test, where in other.seen.items():
            self.seen.setdefault(test, []).extend(where)

    def conflicts(self) -> dict[str, list[str]]:
        """Tests with result records that disagree on the outcome."""
        return {t: w for t, w in self.seen.items() if len(_outcomes(w)) > 1}


def _outcomes(where: list[str]) -> set[str]:
    """The outcomes of a test's "FILE:LINE outcome" entries in Evidence.seen."""
    return {x.rsplit(" ", 1)[1] for x in where}


# What `./backendcheck bench` (and the benchmarks.smoke test) leaves in a run's evidence directory.
BENCHMARKS_FILE = "benchmarks.json"

def platform_fact(env: dict[str, Any], key: str) -> Any:
    """One of the facts of the machine that an engine states (the environment
    record's "platform", from Engine::platform: onednn_isa), or None; records
    written before "platform" existed keep them at the top level."""
    platform = env.get("platform")
    if isinstance(platform, dict) and key in platform:
        return platform[key]
    return env.get(key)


def _gpu_pieces(env: dict[str, Any]) -> list[str]:
    """The GPU's name and architecture and the cuDNN version, when cuDNN is
    usable: the engine that plays cuDNN's role in the model (engines.def),
    and the version of the library it wraps."""
    gpu = env.get("gpu")
    cudnn = next((e for e in engines().values() if e.role == "cudnn"), None)
    if not (gpu and cudnn and env.get("backends", {}).get(cudnn.name, {}).get("available")):
        return []
    library = cudnn.library.lower()
    return [gpu["name"], gpu["arch"], library + env.get("versions", {}).get(library, "")]


@dataclass(frozen=True)
class PlatformPart:
    """One part of a platform. `name` is how no-cross-arch's statement names
    what may differ; `pieces` are its words in the platform's signature;
    `value` is what two platforms are compared on; `torch` says it comes with
    the torch install (its env keys are left out to compare machines)."""
    name: str
    pieces: Callable[[dict[str, Any]], list[str]]
    value: Callable[[dict[str, Any]], Any]
    torch: tuple[str, ...] = ()


# The CPU's vector features, most capable first: the first the CPU lists
# names its level in a platform's signature ("avx512_fp16"), in the words
# the CPU itself uses (its /proc/cpuinfo flags), not a library's.
CPU_LEVELS = ("amx_fp16", "amx_bf16", "avx512_fp16", "avx512_bf16", "avx512_vnni", "avx512f", "avx2", "avx",
              "sse4_2")
# The vendor_id a CPU reports, and the word a model name uses, by vendor.
_VENDORS = {"GenuineIntel": "intel", "AuthenticAMD": "amd", "HygonGenuine": "hygon", "CentaurHauls": "centaur"}


def cpu_vendor(env: dict[str, Any]) -> str:
    """"intel", "amd", ... from the CPU's vendor_id; records written before
    it was kept name it in their model ("Intel(R) Xeon(R)", "AMD EPYC");
    "" where neither says."""
    said = str(env.get("cpu_vendor") or "")
    if said:
        return _VENDORS.get(said, said.lower())
    model = str(env.get("cpu_model") or "")
    return next((v for word, v in (("Intel", "intel"), ("AMD", "amd"), ("Hygon", "hygon")) if word in model), "")


def _cpu_pieces(env: dict[str, Any]) -> list[str]:
    """The machine's CPU in a signature: its vendor and its most capable
    vector feature; a record without the CPU's flags (a constructed one) is
    named by its oneDNN ISA."""
    flags = set(env.get("cpu_isa_flags") or [])
    level = next((f for f in CPU_LEVELS if f in flags), "")
    if not level:
        return [str(platform_fact(env, "onednn_isa") or "unknown-isa")]
    return [p for p in (cpu_vendor(env), level) if p]


# The CPU_LEVELS and vendors in the words of a CPU's data sheet.
_LEVEL_WORDS = {"amx_fp16": "AMX FP16", "amx_bf16": "AMX BF16", "avx512_fp16": "AVX-512 FP16",
                "avx512_bf16": "AVX-512 BF16", "avx512_vnni": "AVX-512 VNNI", "avx512f": "AVX-512", "avx2": "AVX2",
                "avx": "AVX", "sse4_2": "SSE4.2"}
_VENDOR_WORDS = {"intel": "Intel", "amd": "AMD", "hygon": "Hygon", "centaur": "Centaur"}


def platform_title(env: dict[str, Any]) -> str:
    """A platform as its heading says it: "AMD AVX-512 BF16, 2 threads", with
    the GPU and cuDNN where cuDNN is usable ("..., NVIDIA H100 (sm_90), cuDNN
    9.19.0"); the torch install is the heading's to add."""
    flags = set(env.get("cpu_isa_flags") or [])
    level = next((f for f in CPU_LEVELS if f in flags), "")
    vendor = cpu_vendor(env)
    cpu = " ".join(w for w in (_VENDOR_WORDS.get(vendor, vendor.capitalize()),
                               _LEVEL_WORDS.get(level, "") if level else
                               str(platform_fact(env, "onednn_isa") or "")) if w) or "unknown CPU"
    threads = env.get("omp_max_threads")
    pieces = [cpu] + ([f"{threads} thread{'s' if threads != 1 else ''}"] if isinstance(threads, int) else [])
    gpu = _gpu_pieces(env)
    if gpu:
        library = next((e.library for e in engines().values() if e.role == "cudnn"), "cuDNN")
        pieces.append(f"{gpu[0]} ({gpu[1]}), {library} {env.get('versions', {}).get(library.lower(), '')}".strip())
    return ", ".join(pieces)


def _cpu_value(env: dict[str, Any]) -> Any:
    """What two machines' CPUs are compared on: vendor, model, features
    (the oneDNN ISA where a record has no flags)."""
    flags = env.get("cpu_isa_flags") or []
    if not flags:
        return platform_fact(env, "onednn_isa")
    return (cpu_vendor(env), env.get("cpu_model"), tuple(sorted(map(str, flags))), env.get("hardware_threads"))


# A platform's parts, declared once, in the signature's order: the machine's
# CPU (vendor, model and features: what the machine is, the same whichever
# torch install and oneDNN runs on it), its OpenMP thread count, its GPU
# (with cuDNN), and the torch install under test (its version and build; the
# libraries inside it, and what each install's oneDNN says of the CPU, come
# with it).
PLATFORM_PARTS = (
    PlatformPart("CPU ISAs", _cpu_pieces, _cpu_value),
    PlatformPart("thread counts", lambda env: [f"{env.get('omp_max_threads', '?')}t"],
                 lambda env: env.get("omp_max_threads")),
    PlatformPart("GPU architectures", _gpu_pieces, lambda env: (env.get("gpu") or {}).get("arch")),
    PlatformPart("library versions", lambda env: [f"torch{torch_of(env)}"] if torch_of(env) else [],
                 lambda env: (torch_of(env) or None, env.get("versions"), platform_fact(env, "onednn_isa")),
                 torch=("torch", "versions", "install")),
)


def platform_of(env: dict[str, Any], machine_only: bool = False) -> tuple[str, str]:
    """(name, signature) of the platform an environment record describes: the
    machine and PLATFORM_PARTS. The signature, without the machine, names the
    expectation file of that kind of platform and torch. machine_only: what
    the torch install brings is left out (two torch installs on one machine
    have one such signature)."""
    if machine_only:
        env = {k: v for k, v in env.items() if not any(k in p.torch for p in PLATFORM_PARTS)}
    pieces = [piece for part in PLATFORM_PARTS for piece in part.pieces(env)]
    signature = "-".join(re.sub(r"[^a-z0-9_.]+", "_", p.lower()).strip("_") for p in pieces if p)
    return f"{env.get('machine', 'unknown')} ({signature})", signature


def differing_parts(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """The parts (PLATFORM_PARTS' names) two platforms' environment records
    differ in; {"machines"} when only the machine's name does."""
    return {part.name for part in PLATFORM_PARTS if part.value(a) != part.value(b)} or {"machines"}


def torch_of(env: dict[str, Any]) -> str:
    """The version of the torch install an environment record names ("" for none)."""
    torch = env.get("torch")
    return str(torch.get("version", "")) if isinstance(torch, dict) else ""


def rerun(env: dict[str, Any], test: str, record: dict[str, Any] | None = None) -> str:
    """A command that shows this side again: the case's own repro on that
    torch, or the one test through ctest in that torch's build."""
    torch = env.get("torch")
    python = str(torch.get("python", "")) if isinstance(torch, dict) else ""
    named = f" --torch {python}" if python else ""
    repro = (record or {}).get("repro", "")
    schedule, settings = split_repro(repro)
    if "device" in settings:
        return f"./backendcheck run{named} --case '{repro}'"
    if schedule == "torch_backends.py" and settings and python:
        return f"{python} probes/torch_backends.py {repro.removeprefix('torch_backends.py ')}"
    return f"./backendcheck test{named} -R '^{re.escape(test)}$'"


# The probe of the torch install's own description (torch.__config__, and
# what its BLAS says of itself: probes/torch_backends.py build_config).
BUILD_TEST = "TorchPython.BuildConfiguration"
# BLAS_INFO's words for a BLAS, where they are not its name.
_BLAS_INFO = {"open": "openblas"}


def install_facts(ev: Evidence) -> dict[str, str]:
    """What one torch install's evidence says of the BLAS its float32 GEMM
    calls: "blas" (mkl, openblas, ...: the build's BLAS_INFO; where that is
    "generic", the library the PyTorch engine found libtorch's sgemm_ in),
    "blas_version", and what the library reported of itself where the probe
    asked it (runs from 2026-11-29 on): "blas_branch" (oneMKL's code branch,
    OpenBLAS's kernel set) and "blas_cnr" (oneMKL's CNR mode). {} without the
    probe's record."""
    observed = next((c["observed"] for r in reversed(ev.cases.get(BUILD_TEST, [])) for c in r.get("checks", [])
                     if isinstance(c.get("observed"), dict)), None)
    if observed is None:
        return {}
    blas = observed.get("blas") if isinstance(observed.get("blas"), dict) else {}
    config = str(observed.get("config", ""))
    info = re.search(r"BLAS_INFO=([^,\s]+)", config)
    name = str(blas.get("name") or (info.group(1) if info else ""))
    name = _BLAS_INFO.get(name, name)
    if name in ("generic", "unknown"):
        libraries = {m.group(1) for rs in ev.cases.values() for r in rs if r.get("engine") == "pytorch"
                     for m in [re.search(r"\(([^()]*)\)\s*$", str(r.get("engine_version", "")))] if m}
        name = next((n for n in ("openblas", "mkl", "blis") for lib in libraries if n in lib), name)
    version = str(blas.get("version") or "")
    if not version and name == "mkl":
        found = re.search(r"Math Kernel Library Version ([\d.]+)", config)
        version = found.group(1) if found else ""
    return {"blas": name, "blas_version": version, "blas_branch": str(blas.get("branch") or ""),
            "blas_cnr": str(blas.get("cnr") or "")}


def read_evidence(dirs: list[Path]) -> Evidence:
    """Every directory (or file) is one run. A run's platform is what most of
    its environment records say (a case that starts its own process with
    ONEDNN_MAX_CPU_ISA set stays part of its run); runs on the same platform
    pool their evidence."""
    merged = Evidence()
    validated = schema.Validated()
    for d in dirs:
        run = Evidence(problems=merged.problems, refused=merged.refused)
        if d.is_dir():
            try:
                paths = sorted(p for p in d.iterdir() if p.name.endswith((".jsonl", ".jsonl.part")))
            except OSError as e:
                merged.refused.append(f"{d}:1: cannot read the evidence directory: {e.strerror or e}")
                continue
        else:
            paths = [d]
        votes: Counter[str] = Counter()
        envs: dict[str, dict[str, Any]] = {}
        for path in paths:
            if path.name.endswith(".part") and not path.exists():
                # A test process closed its file since the listing (it renames
                # X.jsonl.part to X.jsonl): read it under its final name. A
                # claim's test reads the run while other tests still write.
                path = path.with_suffix("")
                if path in paths:
                    continue
            run.files += 1
            env = _read_file(path, run, validated)
            if env is not None:
                name, _ = platform_of(env)
                votes[name] += 1
                envs.setdefault(name, env)
        if not votes:
            if run.files and (run.results or run.cases):
                merged.problems.append(f"{d}:1: no environment record: its platform is unknown")
            name = "unknown (unknown)"
            envs[name] = {}
        else:
            name = votes.most_common(1)[0][0]
        merged.platform_env.setdefault(name, envs[name])
        merged.run_platform[str(d)] = name
        bench = d / BENCHMARKS_FILE if d.is_dir() else None
        if bench is not None and bench.exists():
            try:
                merged.benchmarks[name] = load_benchmarks(bench)
            except BenchmarkError as e:
                merged.problems.append(str(e))
        for test, where in sorted(run.seen.items()):
            if len(where) > 1 and len(_outcomes(where)) == 1:
                merged.problems.append(f"{where[-1].rsplit(' ', 1)[0]}: {len(where)} result records of {test} "
                                       "in one run (counted once): " + ", ".join(where))
        merged.platforms.setdefault(name, Evidence(problems=merged.problems, refused=merged.refused)).merge(run, name)
        merged.merge(run, name)
    for name, platform_evidence in merged.platforms.items():
        merged.platform_env[name]["install"] = install_facts(platform_evidence)
    # Within a platform: two platforms (two torch versions, say) may differ.
    for platform_evidence in merged.platforms.values():
        for test, where in sorted(platform_evidence.conflicts().items()):
            merged.problems.append(f"{where[-1].rsplit(' ', 1)[0]}: conflicting result records of {test}, which "
                                   "therefore decides nothing: " + ", ".join(where))
    validated.save()
    return merged


def _read_text(path: Path, ev: Evidence) -> str | None:
    """The file's text, or None (refused) for what is not a regular file of
    at most MAX_FILE_BYTES."""
    try:
        return read_regular(path, "evidence", MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except SpecError as e:
        ev.refused.append(str(e))
        return None


def _name_isa(env: dict[str, Any]) -> None:
    """Names, in place, the oneDNN ISA that a record written before its value
    had a name carries as a number ("isa_495": oneDNN 3's avx512_core_fp16),
    in the engine's facts and its availability reason."""
    onednn = (env.get("backends") or {}).get("onednn") or {}
    version = str(onednn.get("version", ""))
    holder = env["platform"] if isinstance(env.get("platform"), dict) and "onednn_isa" in env["platform"] else env
    said = holder.get("onednn_isa")
    if not isinstance(said, str) or (named := onednn_isa.name(said, version)) == said:
        return
    holder["onednn_isa"] = named
    if isinstance(onednn.get("reason"), str):
        onednn["reason"] = re.sub(rf"\b{re.escape(said)}\b", named, onednn["reason"])


# A host name that is generated rather than given: 12 hexadecimal digits (a
# container's id, Docker's default host name), or a name whose last
# dash-separated part is 5 characters of the alphabet Kubernetes draws the
# random suffix of a pod's name from (no vowels, no 0, 1 or 3: a pod of a
# ReplicaSet, a Job or a runner scale set). A word never matches.
GENERATED_HOST = re.compile(r"^(?:[0-9a-f]{12}|[a-z0-9][-a-z0-9.]*-[bcdfghjklmnpqrstvwxz2456789]{5})$")


def machine_name(env: dict[str, Any]) -> str:
    """The machine part of a platform's name: BACKENDCHECK_MACHINE where the
    run set it; else the host name, unless it looks generated (GENERATED_HOST),
    where identical runners would each be a platform of their own: then the
    CPU's model ("cpu-amd_epyc_9654_96_core_processor"), as two runners of
    one kind share it. Records that do not say where the name came from
    are read as the host name."""
    machine = str(env.get("machine", "unknown"))
    if env.get("machine_source") == "BACKENDCHECK_MACHINE" or not GENERATED_HOST.match(machine):
        return machine
    model = re.sub(r"[^a-z0-9]+", "_", str(env.get("cpu_model") or "").lower()).strip("_")[:60]
    return f"cpu-{model or cpu_vendor(env) or 'unknown'}"


def _read_file(path: Path, ev: Evidence, validated: schema.Validated | None = None) -> dict[str, Any] | None:
    """Reads one process's records into ev; returns its environment record.
    A file `validated` holds is not checked against the contract again; one
    whose every record fits is added to it."""
    machine = "unknown"
    environment = None
    text = _read_text(path, ev)
    if text is None:
        return None
    digest = schema.Validated.digest(text.encode("utf-8")) if validated is not None else ""
    checked = validated is not None and validated.holds(digest)
    refused = len(ev.refused)
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):  # a process killed mid-write
                ev.problems.append(f"{path}:{number}: unreadable record skipped ({e.msg})")
            else:
                ev.refused.append(f"{path}:{number}: unreadable record ({e.msg})")
            continue
        except (ValueError, RecursionError) as e:  # a number too long, nesting too deep
            ev.refused.append(f"{path}:{number}: unreadable record ({type(e).__name__}: {str(e)[:80]})")
            continue
        why = None if checked else schema.problem(record, line)
        if why is not None:
            ev.refused.append(f"{path}:{number}: record refused: {why}")
            continue
        kind = record["kind"]
        if kind == "environment":
            _name_isa(record)
            machine = machine_name(record)
            if machine != record.get("machine"):
                record["host_name"], record["machine"] = record.get("machine"), machine
            ev.environments.setdefault(machine, record)
            environment = environment or record
        elif kind == "result":
            record["machine"] = machine
            test = str(record.get("test", ""))
            ev.results[test] = record
            ev.seen.setdefault(test, []).append(f"{path}:{number} {record['outcome']}")
        elif kind == "case":
            record["machine"] = machine
            record["where"] = f"{path}:{number}"
            ev.cases.setdefault(str(record.get("test", "")), []).append(record)
    if validated is not None and len(ev.refused) == refused:
        validated.add(digest)
    return environment


def read_junit(path: Path, ev: Evidence) -> None:
    """ctest --output-junit: the status of every test, including those that
    crashed or timed out before writing a result record."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        ev.problems.append(f"{path}:1: cannot read JUnit XML ({e})")
        return
    for tc in root.iter("testcase"):
        name = tc.get("name", "")
        status = tc.get("status", "")
        if tc.find("failure") is not None or tc.find("error") is not None:
            status = status or "fail"
        ev.ctest[name] = status or "run"
        try:
            ev.ctest_seconds[name] = float(tc.get("time", "0"))
        except ValueError:
            pass


def read_registered(path: Path, ev: Evidence) -> None:
    """`ctest --show-only=json-v1`: every registered test, run or not, so that a
    label subset leaves the other claims not evaluated rather than in error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        ev.problems.append(f"{path}:1: cannot read the ctest test list ({e})")
        return
    for t in data.get("tests", []) if isinstance(data, dict) else []:
        if not isinstance(t, dict) or "name" not in t:
            continue
        ev.registered.add(t["name"])
        for prop in t.get("properties", []):
            if isinstance(prop, dict) and prop.get("name") == "LABELS" and isinstance(prop.get("value"), list):
                ev.labels[t["name"]] = [str(v) for v in prop["value"]]
            if isinstance(prop, dict) and prop.get("name") == "TIMEOUT":
                try:
                    ev.timeouts[t["name"]] = float(prop.get("value"))
                except (TypeError, ValueError):
                    pass


def ctest_outcome(ev: Evidence, test: str) -> str | None:
    """What ctest saw of a test that wrote no result record: "timed out"
    (failed at its TIMEOUT), "crashed" (failed otherwise: a signal, an abort,
    an exit before the result), or None."""
    if ev.ctest.get(test) != "fail":
        return None
    timeout = ev.timeouts.get(test)
    if timeout and ev.ctest_seconds.get(test, 0.0) >= 0.98 * timeout:
        return "timed out"
    return "crashed"


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The generator's cases.json; SpecError when it is not one."""
    try:
        data = json.loads(read_regular(path, "the manifest"))
    except (ValueError, RecursionError) as e:
        raise SpecError(str(path), 1, f"cannot read the manifest: {str(e)[:100]}") from None
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) and isinstance(c.get("test"), str) for c in cases):
        raise SpecError(str(path), 1, "not a backendcheck manifest (no 'cases' list of objects with a 'test')")
    return cases
