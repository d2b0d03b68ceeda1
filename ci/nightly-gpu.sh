#!/usr/bin/env bash
# One GPU machine's nightly run: the nightly tier of the default matrix, then
# its evidence, manifest, ctest results and report copied to OUT/NAME for the
# CI system to upload. The merge job combines the OUT/* of every machine
# (ci/merge-reports.sh).
#
#   ci/nightly-gpu.sh --name NAME --out DIR [--torch VERSION] [--tier T] [--dry-run]
#
# NAME is the machine (the GPU type): it keys the platform in the merged
# report, so runs of several torch versions on one GPU type are paired there
# ("Changed between versions"). --torch VERSION tests that PyTorch release
# from PyPI (./backendcheck --torch torch==VERSION) and writes to
# OUT/NAME-torchVERSION; without it, the torch is BACKENDCHECK_TORCH_PYTHON's
# or the pinned release, into OUT/NAME.
#
# On a multi-GPU host, ctest runs one GPU test per GPU when
# CTEST_PARALLEL_LEVEL is set: the resource spec comes from nvidia-smi.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NAME="" OUT="" TIER=nightly DRY=0 RELEASE="" TORCH=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --tier) TIER="${2:?}"; shift 2 ;;
    --torch) RELEASE="${2:?}"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "nightly-gpu: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$NAME" && -n "$OUT" ]] || { echo "usage: ci/nightly-gpu.sh --name NAME --out DIR [--torch VERSION] [--tier T] [--dry-run]" >&2; exit 2; }
[[ "$NAME" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "nightly-gpu: NAME must be letters, digits, '.', '_' or '-'" >&2; exit 2; }
dest="$OUT/$NAME"
if [[ -n "$RELEASE" ]]; then
  [[ "$RELEASE" =~ ^[0-9]+(\.[0-9]+)+$ ]] || { echo "nightly-gpu: --torch $RELEASE: not a release number (e.g. 2.11.0)" >&2; exit 2; }
  dest="$OUT/$NAME-torch$RELEASE"
  TORCH=(--torch "torch==$RELEASE")
fi

step() {
  echo "+ $*"
  [[ $DRY -eq 1 ]] || "$@"
}

step mkdir -p "$dest"
# What this run writes is newer than this stamp: an evidence directory, a
# manifest or a report left by an earlier run on this runner is not uploaded.
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
# ours FILE: whether this run wrote FILE (a folder: its report.json or the folder itself).
ours() {
  [[ $DRY -eq 1 ]] && return 0
  local f=$1
  [[ -d "$f" && -f "$f/report.json" ]] && f="$f/report.json"
  [[ -e "$f" && "$f" -nt "$stamp" ]]
}
if [[ -n "${CTEST_PARALLEL_LEVEL:-}" ]]; then
  step python3 ci/gpu-resource-spec.py --out build/gpu-resources.json
  export BACKENDCHECK_RESOURCE_SPEC="$PWD/build/gpu-resources.json"
fi
rc=0
# PyTorch under test: the release --torch names; else the machine's own when
# BACKENDCHECK_TORCH_PYTHON names its interpreter (./backendcheck finds
# libtorch from it); else the release pinned in requirements/torch.txt. A
# release is installed in a managed environment of its own.
[[ ${#TORCH[@]} -gt 0 || -z "${BACKENDCHECK_TORCH_PYTHON:-}" ]] || echo "nightly-gpu: PyTorch of $BACKENDCHECK_TORCH_PYTHON"
# This run's evidence and report in places of their own, whatever the build
# directory (build/default-torch-VERSION) is called.
export BACKENDCHECK_EVIDENCE_DIR="$PWD/build/nightly/evidence"
# A driver too old for the build's CUDA runtime would make every GPU test skip:
# fail here with that reason instead.
step python3 ci/cuda-driver-check.py || { echo "nightly-gpu: $NAME: the driver cannot run this build's CUDA" >&2; exit 1; }
# The machine name keys this run's platform in the merged report.
export BACKENDCHECK_MACHINE="$NAME"
# A GPU run in which every GPU test skipped fails, with the first skip's reason.
step ./backendcheck run "${TORCH[@]}" --tier "$TIER" --require cuda --out build/nightly/report || rc=$?
# The run's own evidence directory (build/nightly/evidence/latest) becomes NAME/evidence.
if ours build/nightly/evidence/latest; then step cp -rL build/nightly/evidence/latest "$dest/evidence"
else
  echo "nightly-gpu: $NAME: this run wrote no evidence (build/nightly/evidence/latest is missing or older); none uploaded" >&2
  [[ $rc -ne 0 ]] || rc=1
fi
# The build this run tested is the one whose ctest JUnit it wrote; its
# manifest may be older (an up-to-date build does not rewrite it).
bdir=""
for d in build/default-torch-*; do
  if [[ $DRY -eq 0 ]] && ours "$d/ctest-junit.xml"; then bdir=$d; fi
done
[[ -n "$bdir" || $DRY -eq 1 ]] || echo "nightly-gpu: $NAME: no build's ctest JUnit was written by this run; no manifest uploaded" >&2
if [[ -n "$bdir" || $DRY -eq 1 ]]; then
  step cp "${bdir:-build/default-torch-VERSION}/generated/cases.json" "${bdir:-build/default-torch-VERSION}/ctest-junit.xml" "$dest/"
fi
if ours build/nightly/report; then step cp -r build/nightly/report "$dest/"
elif [[ -e build/nightly/report ]]; then echo "nightly-gpu: $NAME: build/nightly/report was not written by this run; not uploaded" >&2; fi
echo "nightly-gpu: $NAME finished with exit $rc; artifacts in $dest"
exit $rc
