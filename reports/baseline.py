"""What changed since the last run: the run a report records, the verdicts
that moved since a baseline, per claim and platform, and the platforms that
should have reported and did not.

A report.json records its run (`this_run`): the commit of the repository
when it is a git checkout, the CI run's id and URL where the CI gives them
(GitHub Actions: GITHUB_RUN_ID, with GITHUB_SERVER_URL/GITHUB_REPOSITORY/
actions/runs/ID; GitLab CI: CI_PIPELINE_ID and CI_PIPELINE_URL), and the
time it was written.

`--baseline OLD/report.json` (`read`) is compared claim by claim and
platform by platform (`compare`): a verdict on a platform that differs from
the baseline's is a move; a claim the baseline lacks is new (shown, not a
move); a platform the baseline has and this run lacks is missing. So is an
expected platform (`--expect-platform NAME`, `--expect-platforms FILE`) that
left no evidence. With `--fail-on-change`, a move or a missing platform
fails the run with EXIT_CHANGED, one line each naming the claim, the
platform, the old and the new verdict.

An expected NAME is present when a platform of this run is named NAME, or
runs on a machine named NAME, or NAME is MACHINE-torchVERSION (the folder
ci/nightly-gpu.sh writes) and a platform runs on MACHINE with a torch whose
version starts with VERSION.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inputs.errors import SpecError, read_regular

from .evidence import MAX_FILE_BYTES, torch_of

# A verdict moved on a platform since the baseline, or a platform the
# baseline or the expected list names left no evidence (--fail-on-change).
EXIT_CHANGED = 6
ROOT = Path(__file__).resolve().parents[1]
NEW_CLAIM = "(new claim)"  # the old verdict of a claim the baseline lacks


def this_run(environ: dict[str, str] | None = None, root: Path = ROOT) -> dict[str, str]:
    """The run a report records: commit ("" outside a git checkout), CI
    system, run id and URL ("" where the CI gives none), and the time."""
    env = os.environ if environ is None else environ
    run = {"commit": _commit(root), "ci": "", "ci_run_id": "", "ci_run_url": "",
           "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if env.get("GITHUB_RUN_ID"):
        server, repository = env.get("GITHUB_SERVER_URL", ""), env.get("GITHUB_REPOSITORY", "")
        run.update(ci="github", ci_run_id=env["GITHUB_RUN_ID"],
                   ci_run_url=f"{server}/{repository}/actions/runs/{env['GITHUB_RUN_ID']}"
                   if server and repository else "")
    elif env.get("CI_PIPELINE_ID"):
        run.update(ci="gitlab", ci_run_id=env["CI_PIPELINE_ID"], ci_run_url=env.get("CI_PIPELINE_URL", ""))
    return run


def _commit(root: Path) -> str:
    """The checkout's HEAD; "" where `root` is no git checkout or git is missing."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"], capture_output=True,
                              text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) else ""


@dataclass
class Baseline:
    """An earlier report.json: each claim's verdict, overall and per platform."""
    path: str
    claims: dict[str, dict[str, Any]]
    platforms: list[str]
    generated: str = ""
    run: dict[str, Any] = field(default_factory=dict)


def read(path: Path) -> Baseline:
    """The baseline a report.json holds; SpecError when it is none."""
    try:
        data = json.loads(read_regular(path, "the baseline", MAX_FILE_BYTES))
    except (ValueError, RecursionError) as e:
        raise SpecError(str(path), 1, f"cannot read the baseline: {str(e)[:100]}") from None
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not all(isinstance(c, dict) and isinstance(c.get("id"), str) and
                                               isinstance(c.get("verdict", ""), str) and
                                               isinstance(c.get("platforms", {}), dict) for c in claims):
        raise SpecError(str(path), 1, "cannot read the baseline: not a backendcheck report.json "
                                      "(no 'claims' list of id, verdict, platforms)")
    listed = data.get("platforms")
    platforms = list(listed) if isinstance(listed, dict) else []
    for c in claims:
        platforms += [p for p in c.get("platforms", {}) if p not in platforms]
    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    return Baseline(str(path), {c["id"]: {"verdict": c.get("verdict", ""), "platforms": c.get("platforms", {})}
                                for c in claims}, platforms, str(data.get("generated", "")), run)


def read_expected(names: list[str], files: list[Path]) -> list[str]:
    """The expected platforms: each --expect-platform NAME, then each file's
    lines (one name a line; blank lines and `#` comments left out), once each."""
    out = list(names)
    for path in files:
        text = read_regular(path, "the expected platforms", 1 << 20).decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            name = line.split("#", 1)[0].strip()
            if name and any(c.isspace() for c in name) and "(" not in name:
                raise SpecError(str(path), number, f"platform: {name!r} is not one name (one a line)")
            if name:
                out.append(name)
    return list(dict.fromkeys(out))


def present(name: str, platform_env: dict[str, dict[str, Any]]) -> bool:
    """Whether an expected NAME is among this run's platforms (the module's text)."""
    for platform, env in platform_env.items():
        machine = str(env.get("machine", ""))
        if name in (platform, machine):
            return True
        release = name.removeprefix(f"{machine}-torch") if machine else name
        if release != name and release and torch_of(env).startswith(release):
            return True
    return False


def compare(baseline: Baseline | None, verdicts: list[Any], platform_env: dict[str, dict[str, Any]],
            expected: list[str]) -> dict[str, Any]:
    """The moves since the baseline, per claim and platform ({claim,
    platform, old, new}; where the baseline has no verdict per platform,
    the claim's overall verdict, with platform ""; a new claim with old
    "(new claim)"), and the missing platforms ({platform, why})."""
    changed: list[dict[str, str]] = []
    missing: list[dict[str, str]] = []
    if baseline is not None:
        for v in verdicts:
            old = baseline.claims.get(v.claim.id)
            if old is None:
                changed.append({"claim": v.claim.id, "platform": "", "old": NEW_CLAIM, "new": v.verdict})
                continue
            if not old["platforms"]:
                if old["verdict"] != v.verdict:
                    changed.append({"claim": v.claim.id, "platform": "", "old": old["verdict"], "new": v.verdict})
                continue
            for platform, was in old["platforms"].items():
                now = v.platforms.get(platform)
                if platform in platform_env and now is not None and now.verdict != was:
                    changed.append({"claim": v.claim.id, "platform": platform, "old": str(was), "new": now.verdict})
        when = f" ({baseline.generated})" if baseline.generated else ""
        missing += [{"platform": p, "why": f"in the baseline{when}, and no evidence of it in this run"}
                    for p in baseline.platforms if p not in platform_env]
    named = {m["platform"] for m in missing}
    missing += [{"platform": name, "why": "expected, and no evidence of it in this run"}
                for name in expected if name not in named and not present(name, platform_env)]
    return {"changed": changed, "missing": missing}


def moves(since: dict[str, Any]) -> list[dict[str, str]]:
    """The moves that --fail-on-change fails on (a new claim is not one)."""
    return [c for c in since["changed"] if c["old"] != NEW_CLAIM]


def lines(since: dict[str, Any]) -> list[str]:
    """One line per move and per missing platform."""
    return ([f"CHANGED {c['claim']} on {c['platform'] or 'all platforms'}: {c['old']} -> {c['new']}"
             for c in moves(since)] +
            [f"MISSING PLATFORM {m['platform']}: {m['why']}" for m in since["missing"]])


def failed(since: dict[str, Any]) -> bool:
    return bool(moves(since) or since["missing"])
