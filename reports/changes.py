"""What changed between torch versions: the same machine, two torch installs.

Platforms that differ only in the torch install under test (the machine,
oneDNN's ISA, the threads and the GPU alike) are paired, each with the next
in version order. For every pair this lists, by comparing the evidence alone
(no list of known differences):

  verdict      a claim judged differently;
  observed     what a probe of PyTorch saw (an attribute present or absent, a
               default, an alert's text), key by key of its `observed` record;
  outcome      a test that passed on one and failed, skipped or erred on the
               other (a fact without an `observed` record);
  bits         the digest of the same case;
  kernel       the implementation chosen for the same case (PyTorch's kernel
               class and oneDNN kernel, or the model's algorithm);
  speed        a ratio claim's comparison (B/A of paired reps) whose interval
               moved beyond the other version's by the ratio rule's margin
               (reports.statistics.ratio_moved); listed, but set aside as
               run-to-run noise: one run per install cannot tell it from
               the moves between runs of one install
               (statistics.BETWEEN_RUNS_FACTOR);
  documented   an entry of use_deterministic_algorithms's own list added,
               removed or judged differently (reports.documented).

Each change names the claim (or the test) and both versions, with both
observations, the evidence records behind them (test names and FILE:LINE
where the reader kept them) and a repro command for each side.
"""

from __future__ import annotations

import re
from typing import Any

from inputs.repro import split_repro

from . import census, documented, invariance
from .evidence import Evidence, platform_of, rerun as repro, torch_of
from .ruling import Ruling
from .statistics import BETWEEN_RUNS_FACTOR, LEVEL, ratio_moved

# Values shown in a change are cut to this many characters.
MAX_SHOWN = 300


def _version_key(version: str) -> tuple:
    """1.13.0a0 < 2.7.1+cu126 < 2.15.0+cu132: numbers compared as numbers."""
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+]|(?<=\d)(?=[a-z])", version) if x)


def pairs(evidence: Evidence) -> list[tuple[str, str]]:
    """(older platform, newer platform) for each pair of platforms that differ
    only in their torch install and the libraries that come with it (the
    cuDNN of a CUDA wheel), consecutive in version order."""
    groups: dict[str, list[str]] = {}
    for name, env in evidence.platform_env.items():
        if not torch_of(env):
            continue
        machine = str(env.get("machine", "unknown"))
        signature = platform_of(env, machine_only=True)[1]
        groups.setdefault(f"{machine} ({signature})", []).append(name)
    out = []
    for names in groups.values():
        names.sort(key=lambda n: _version_key(torch_of(evidence.platform_env[n])))
        out += list(zip(names, names[1:]))
    return out


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def _observed(record: dict[str, Any]) -> dict[str, Any] | None:
    for check in record.get("checks", []):
        if isinstance(check.get("observed"), dict):
            return check["observed"]
    return None


def _outcome(ev: Evidence, test: str) -> str:
    result = ev.results.get(test)
    return str(result.get("outcome")) if result else ev.ctest.get(test, "not run")


def _side(version: str, shown: Any, env: dict[str, Any], test: str, record: dict[str, Any] | None) -> dict[str, Any]:
    where = (record or {}).get("where", "")
    return {"torch": version, "observed": _cut(shown), "repro": repro(env, test, record),
            "evidence": [test + (f" ({where})" if where else "")]}


def between_versions(verdicts: list[Any], evidence: Evidence, listed: dict[str, dict[str, Any]],
                     grids: dict[str, dict[str, Any]] | None = None,
                     censuses: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every change between paired torch versions (see the module's text);
    `listed` is documented.judge(evidence), `grids` invariance.judge(evidence)
    and `censuses` census.judge(evidence) (their cells and findings replace
    the raw records of their tests)."""
    grids, censuses = grids or {}, censuses or {}
    judged = {invariance.TEST: grids, census.TEST: censuses}
    changes: list[dict[str, Any]] = []
    for older, newer in pairs(evidence):
        env_a, env_b = evidence.platform_env[older], evidence.platform_env[newer]
        va, vb = torch_of(env_a), torch_of(env_b)
        base = {"platforms": [older, newer], "versions": [va, vb]}

        for v in verdicts:
            changes += _speed(v, older, newer, base, env_a, env_b)
            a, b = v.platforms.get(older), v.platforms.get(newer)
            # An error is the harness's, said as such: no change of PyTorch's.
            if a is None or b is None or a.verdict == b.verdict or Ruling.ERROR in (a.verdict, b.verdict):
                continue
            # Evaluated on one install only (a setting the other lacks): what
            # the upgrade added or removed, not a verdict that changed.
            scope = Ruling.NOT_EVALUATED in (a.verdict, b.verdict)
            changes.append({**base, "kind": "verdict", "claim": v.claim.id, "what": f"claim {v.claim.id}",
                            **({"section": ADDED} if scope else {}),
                            "sides": [{"torch": va, "observed": f"{a.verdict}: {_cut(a.reason)}",
                                       "evidence": [f.test for f in a.facts][:20]},
                                      {"torch": vb, "observed": f"{b.verdict}: {_cut(b.reason)}",
                                       "evidence": [f.test for f in b.facts][:20]}]})

        # The judged sections: each lists its own changes (id, older, newer),
        # shown with the section's evidence on both sides.
        for kind, what, section, differ in (("documented", "documented entry {}", listed, documented.changes),
                                           ("invariance", "invariance of {}", grids, invariance.changes),
                                           ("census", "OpInfo census: {}", censuses, census.changes)):
            ja, jb = section.get(older, {}), section.get(newer, {})
            if "evidence" not in ja or "evidence" not in jb:
                continue
            # A section may say why a change of its is run-to-run noise.
            for item, shown_a, shown_b, *noise in differ(ja, jb):
                changes.append({**base, "kind": kind, "what": what.format(item), "noise": noise[0] if noise else "",
                                "sides": [{"torch": va, "observed": _cut(shown_a), "evidence": [ja["evidence"]]},
                                          {"torch": vb, "observed": _cut(shown_b), "evidence": [jb["evidence"]]}]})

        ev_a, ev_b = evidence.platforms[older], evidence.platforms[newer]
        # Each test's last case record (a fact's, or a case's).
        rec_a = {test: records[-1] for test, records in ev_a.cases.items() if records}
        rec_b = {test: records[-1] for test, records in ev_b.cases.items() if records}
        for test in sorted(set(rec_a) | set(rec_b) | set(ev_a.results) | set(ev_b.results)):
            if older in judged.get(test, {}) and newer in judged.get(test, {}):
                continue
            ra, rb = rec_a.get(test), rec_b.get(test)
            oa, ob = (_observed(ra) if ra else None), (_observed(rb) if rb else None)
            if oa is not None or ob is not None:
                oa, ob = oa or {}, ob or {}
                for key in sorted(set(oa) | set(ob)):
                    if oa.get(key, "absent") != ob.get(key, "absent"):
                        added = "absent" in (oa.get(key, "absent"), ob.get(key, "absent"))
                        changes.append({**base, "kind": "observed", "test": test, "what": f"{test}: {key}",
                                        **({"section": ADDED} if added else {}),
                                        "sides": [_side(va, oa.get(key, "absent"), env_a, test, ra),
                                                  _side(vb, ob.get(key, "absent"), env_b, test, rb)]})
                continue
            out_a, out_b = _outcome(ev_a, test), _outcome(ev_b, test)
            if out_a != out_b and "not run" not in (out_a, out_b):
                why_a = (ev_a.results.get(test) or {}).get("message", "")
                why_b = (ev_b.results.get(test) or {}).get("message", "")
                changes.append({**base, "kind": "outcome", "test": test, "what": test,
                                "sides": [_side(va, out_a + (f": {why_a}" if why_a else ""), env_a, test, ra),
                                          _side(vb, out_b + (f": {why_b}" if why_b else ""), env_b, test, rb)]})
            if ra is None or rb is None:
                continue
            if _models(ra):
                continue  # the harness's own model: what it predicts is no change of the installs'
            cause, libraries, noise = _cause(ra, rb, env_a, env_b)
            ka, kb = _kernel(ra), _kernel(rb)
            if ra.get("digest") and rb.get("digest") and ra.get("digest") != rb.get("digest"):
                # One row a case: its bits, with the kernel each side ran.
                shown = lambda r, k: f"{r['digest']}" + (f" ({k})" if k else "")
                changes.append({**base, "kind": "bits", "test": test, "what": f"{test}: digest", "cause": cause,
                                "libraries": libraries, "noise": noise, "kernels": [ka, kb] if ka != kb else [],
                                "sides": [_side(va, shown(ra, ka), env_a, test, ra),
                                          _side(vb, shown(rb, kb), env_b, test, rb)]})
            elif ka and kb and ka != kb:
                changes.append({**base, "kind": "kernel", "test": test, "what": f"{test}: kernel", "cause": cause,
                                "libraries": libraries, "noise": noise if noise and "its own runs" not in noise else "",
                                "sides": [_side(va, ka, env_a, test, ra), _side(vb, kb, env_b, test, rb)]})
    for c in changes:
        if "cause" not in c:
            c["cause"] = CAUSES[c["kind"]]
        c.setdefault("noise", "")
    return changes


# The cause of a change that is not a case's bits or kernel, by its kind.
CAUSES = {"verdict": "a claim's verdict", "documented": "an entry of use_deterministic_algorithms's own list",
          "observed": "what a probe of PyTorch read (a setting, a flag, a default, the build)",
          "outcome": "a test's outcome (a setting one version lacks, mostly)", "speed": "a speed ratio",
          "invariance": "a cell of the invariance grid", "census": "a finding of the OpInfo census"}


def _noise(record: dict[str, Any]) -> str:
    """Why a case's bits or kernel may differ between two runs of one
    install: a positive control (it varies by design), runs of its own that
    gave several results, or an algorithm chosen by timing."""
    if any(c.get("positive_control") for c in record.get("checks", [])):
        return "a positive control, which varies by design"
    if int(record.get("distinct_digests") or 1) > 1:
        return f"its own runs gave {record['distinct_digests']} results"
    if (record.get("selection") or {}).get("time_ns"):
        return "its algorithm is chosen by timing (benchmark mode), which differs run to run"
    return ""


def _pytorchs(record: dict[str, Any]) -> bool:
    """A case PyTorch ran (as its record, or its repro, says)."""
    return "pytorch" in (record.get("engine"), record.get("system"),
                         split_repro(str(record.get("repro", "")))[1].get("engine"))


def _models(record: dict[str, Any]) -> bool:
    """A case of the harness's model of PyTorch (records that name no system
    are the model's unless PyTorch ran them)."""
    return not _pytorchs(record) and record.get("system") in (None, "model")


# The BLAS a torch build names (its BLAS_INFO), in a reader's words.
BLAS_NAMES = {"mkl": "oneMKL", "openblas": "OpenBLAS", "blis": "BLIS", "accelerate": "Accelerate", "armpl": "Arm PL",
              "eigen": "Eigen", "flexi": "FlexiBLAS", "generic": "the reference BLAS"}


def blas_of(env: dict[str, Any]) -> str:
    """"oneMKL 2024.2", "OpenBLAS": the BLAS a torch install calls, as its
    build says (the install facts a report reads, reports.evidence); "" when
    it does not say."""
    install = env.get("install") if isinstance(env.get("install"), dict) else {}
    blas = str(install.get("blas") or "")
    return f"{BLAS_NAMES.get(blas, blas)} {install.get('blas_version') or ''}".strip() if blas else ""


def _cause(ra: dict[str, Any], rb: dict[str, Any], env_a: dict[str, Any],
           env_b: dict[str, Any]) -> tuple[str, str, str]:
    """What a case of PyTorch's changed its bits or kernel with between two
    installs: the cause's words, the libraries on each side ("OpenBLAS →
    oneMKL 2024.2"), and why it is run-to-run noise rather than a change (""
    when it is not)."""
    noise = _noise(ra) or _noise(rb)
    torch_a, torch_b = (env.get("torch") if isinstance(env.get("torch"), dict) else {} for env in (env_a, env_b))
    if not _pytorchs(ra):
        # A library's own case (its claims decided by the library): the
        # library beside each install.
        system = str(ra.get("system"))
        versions = [str(((env.get("backends") or {}).get(system) or {}).get("version", "?")).split(" ")[0]
                    for env in (env_a, env_b)]
        name = {"onednn": "oneDNN", "cudnn": "cuDNN", "blas": "the BLAS"}.get(system, system)
        libraries = f"{versions[0]} \u2192 {versions[1]}"
        return f"{name} itself, beside each install: {libraries}", f"{name} {libraries}", noise
    ka, kb = _kernel(ra).lower(), _kernel(rb).lower()
    if "mkldnn" in ka or "mkldnn" in kb:
        libraries = f"oneDNN {torch_a.get('onednn', '?')} \u2192 {torch_b.get('onednn', '?')}"
        return f"oneDNN inside PyTorch: {libraries}", libraries, noise
    blas = [blas_of(env) or "a BLAS it does not name" for env in (env_a, env_b)]
    libraries = f"{blas[0]} \u2192 {blas[1]}" if blas[0] != blas[1] else f"{blas[0]} on both"
    return (f"PyTorch's native path and the BLAS it calls: {libraries} (torch {torch_of(env_a)} \u2192 "
            f"{torch_of(env_b)})"), libraries, noise


# What an upgrade changed, in the order a reader asks: the verdicts, the
# defaults and documented behaviour, the bits and kernels, then the settings
# and tests one version has and the other lacks (a kind -> its section).
SECTIONS = ("verdicts that changed", "defaults and documented behaviour that changed",
            "bits and kernels that changed", "settings added or removed, and tests' outcomes")
ADDED = 3  # SECTIONS' index of what one install has and the other lacks
_SECTION = {"verdict": 0, "observed": 1, "documented": 1, "bits": 2, "kernel": 2, "invariance": 2, "census": 2,
            "outcome": 3, "speed": 3}


def grouped(changes: list[dict[str, Any]]) -> dict[str, Any]:
    """The changes by cause, in SECTIONS' order, the largest group of a
    section first, each with its count and first example; those set aside
    as run-to-run noise; and for each pair of installs the upgrade's answer
    in one sentence."""
    real = [c for c in changes if not c.get("noise")]
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for c in real:
        groups.setdefault((section_of(c), c["cause"]), []).append(c)
    return {"real": len(real), "noise": len(changes) - len(real),
            "groups": [{"cause": cause, "section": SECTIONS[section], "count": len(items), "example": items[0],
                        "changes": items}
                       for (section, cause), items in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]),
                                                                                           kv[0][1]))],
            "set_aside": [c for c in changes if c.get("noise")],
            "upgrades": upgrades(real)}


def section_of(change: dict[str, Any]) -> int:
    """SECTIONS' index of a change."""
    return int(change.get("section", _SECTION.get(change["kind"], ADDED)))


def upgrades(real: list[dict[str, Any]]) -> list[str]:
    """"Upgrading 1.13.0a0 → 2.15.0 on this machine changes 1 verdict, 3
    defaults or documented entries and the bits of 63 operations (OpenBLAS
    → oneMKL 2024.2)": one sentence for each pair of installs."""
    out = []
    for versions in dict.fromkeys(tuple(c["versions"]) for c in real):
        mine = [c for c in real if tuple(c["versions"]) == versions]
        claims = {c["claim"] for c in mine if section_of(c) == 0}
        defaults = [c for c in mine if section_of(c) == 1]
        bits = {c["test"] for c in mine if c["kind"] == "bits"}
        libraries = sorted({c["libraries"] for c in mine if c["kind"] == "bits" and c.get("libraries")})
        parts = [f"{len(claims)} claim verdict{'s' if len(claims) != 1 else ''}",
                 f"{len(defaults)} default{'s' if len(defaults) != 1 else ''} or documented entr"
                 f"{'ies' if len(defaults) != 1 else 'y'}",
                 f"the bits of {len(bits)} operation{'s' if len(bits) != 1 else ''}"
                 + (f" ({'; '.join(libraries)})" if libraries else "")]
        out.append(f"Upgrading torch {versions[0]} \u2192 {versions[1]} on this machine changes "
                   f"{', '.join(parts[:-1])} and {parts[-1]}.")
    return out


def _ratio_facts(v: Any) -> dict[str, Any]:
    """test -> fact of a verdict's comparisons that the ratio rule measured,
    the deciding system's and the model's prediction's."""
    facts = list(v.facts) + (list(v.prediction.facts) if v.prediction is not None else [])
    return {f.test: f for f in facts if "ci" in f.figures}


def _speed(v: Any, older: str, newer: str, base: dict[str, Any], env_a: dict[str, Any],
           env_b: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons of one ratio claim whose ratio moved between two
    platforms beyond its noise."""
    a, b = v.platforms.get(older), v.platforms.get(newer)
    if a is None or b is None:
        return []
    fa, fb = _ratio_facts(a), _ratio_facts(b)
    out = []
    for test in sorted(set(fa) & set(fb)):
        x, y = fa[test].figures, fb[test].figures
        moved = ratio_moved(tuple(x["ci"]), tuple(y["ci"]))
        if not moved:
            continue
        # Each install ran once, and one run's interval does not hold what
        # differs between runs (statistics.BETWEEN_RUNS_FACTOR): the move is
        # shown, set aside. The claim's verdict, over all its comparisons,
        # is what is compared between versions.
        noise = (f"each install ran once, and between two runs of one install a speed ratio moved by up to "
                 f"{BETWEEN_RUNS_FACTOR:.2f}x, across 1: one run's move is not told from noise (the claim's "
                 "verdict, over all its comparisons, is compared instead)")
        shown = lambda f: (f"{f['metric']} B/A = {f['ratio']:.3g} [{100 * LEVEL:.0f}% CI {f['ci'][0]:.3g}, "
                           f"{f['ci'][1]:.3g}] over {f['reps']} paired reps")
        ra = next((r for r in fa[test].records if "compare" in r), None)
        rb = next((r for r in fb[test].records if "compare" in r), None)
        out.append({**base, "kind": "speed", "claim": v.claim.id, "test": test, "moved": moved, "noise": noise,
                    "what": f"{test}: {x['metric']} B/A ({x['b']} against {x['a']}) moved {moved}",
                    "sides": [_side(base["versions"][0], shown(x), env_a, test, ra),
                              _side(base["versions"][1], shown(y), env_b, test, rb)]})
    return out


def _kernel(record: dict[str, Any]) -> str:
    """The kernel a case ran: PyTorch's side of a conformance case (its kernel
    class and oneDNN kernel), else the implementation. Version numbers are
    left out: they differ by construction."""
    c = record.get("conformance")
    if isinstance(c, dict) and isinstance(c.get("pytorch"), dict):
        p = c["pytorch"]
        text = f"{p.get('kernel_class', '')} {p.get('onednn_kernel', '')}".strip()
    else:
        text = str(record.get("implementation", ""))
    return re.sub(r"(PyTorch|oneDNN) \d+\.\d+\.\d+\S*:? ?", "", text).strip()
