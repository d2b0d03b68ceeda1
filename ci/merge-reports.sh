#!/usr/bin/env bash
# The merge job: one report from the nightly artifacts of every machine.
#
#   ci/merge-reports.sh --in DIR --out REPORT_DIR [--baseline OLD/report.json] [--fail-on-change]
#                       [--expect-platform NAME]... [--expect-platforms FILE]
#                       [--known FILE]... [--write-findings FILE] [--dry-run]
#
# DIR holds one folder per machine, as ci/nightly-gpu.sh writes them
# (evidence/, cases.json, report/). The first machine's manifest names the
# cases; each machine's evidence is judged as its own platform, and the
# cross-platform claims on all of them, held to catalog/known_findings.toml,
# then to BACKENDCHECK_KNOWN's files and each --known FILE (a later file's
# entry stands); --write-findings FILE appends the entries that would make
# the unexpected verdicts known. --baseline OLD/report.json (the last merged
# report) compares each claim on each platform with it; each --expect-platform
# NAME (a MACHINE-torchVERSION folder name, a machine, or a platform's name)
# and each line of --expect-platforms FILE should have reported: one that did
# not, like a platform of the baseline that did not, is shown as missing;
# --fail-on-change makes a moved verdict or a missing platform exit 6.
# Needs python3, python3-jinja2 and python3-jsonschema only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IN="" OUT="" DRY=0 BASELINE=() KNOWN=() SINCE=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --in) IN="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --baseline) BASELINE=(--baseline "${2:?}"); shift 2 ;;
    --fail-on-change) SINCE+=("$1"); shift ;;
    --expect-platform|--expect-platforms) SINCE+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --known|--write-findings) KNOWN+=("$1" "${2:?$1 needs a file}"); shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "merge-reports: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$IN" && -n "$OUT" ]] ||
  { echo "usage: ci/merge-reports.sh --in DIR --out REPORT_DIR [--baseline OLD/report.json] [--fail-on-change] [--expect-platform NAME]... [--expect-platforms FILE] [--known FILE]... [--write-findings FILE] [--dry-run]" >&2; exit 2; }

evidence=() manifest=""
for machine in "$IN"/*/; do
  [[ -d "$machine/evidence" ]] || continue
  evidence+=("${machine%/}/evidence")
  [[ -n "$manifest" || ! -f "$machine/cases.json" ]] || manifest="$machine/cases.json"
done
if [[ $DRY -eq 1 && ${#evidence[@]} -eq 0 ]]; then evidence=("$IN/MACHINE/evidence"); manifest="$IN/MACHINE/cases.json"; fi
[[ ${#evidence[@]} -gt 0 ]] || { echo "merge-reports: no MACHINE/evidence folder under $IN" >&2; exit 1; }
[[ -n "$manifest" ]] || { echo "merge-reports: no MACHINE/cases.json under $IN" >&2; exit 1; }

cmd=(python3 -m reports --claims catalog/claims.toml --manifest "$manifest" --known catalog/known_findings.toml
     "${KNOWN[@]}" "${BASELINE[@]}" "${SINCE[@]}" --out "$OUT" "${evidence[@]}")
echo "+ ${cmd[*]}"
[[ $DRY -eq 1 ]] && exit 0
PYTHONPATH="$PWD" exec "${cmd[@]}"
