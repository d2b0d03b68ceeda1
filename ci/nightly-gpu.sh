#!/usr/bin/env bash
# One GPU machine's nightly run: the nightly tier of the default matrix, then
# its evidence, manifest, ctest results and report copied to OUT/NAME for the
# CI system to upload. The merge job combines the OUT/* of every machine
# (ci/merge-reports.sh).
#
#   ci/nightly-gpu.sh --name NAME --out DIR [--tier T] [--dry-run]
#
# On a multi-GPU host, ctest runs one GPU test per GPU when
# CTEST_PARALLEL_LEVEL is set: the resource spec comes from nvidia-smi.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NAME="" OUT="" TIER=nightly DRY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --tier) TIER="${2:?}"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "nightly-gpu: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$NAME" && -n "$OUT" ]] || { echo "usage: ci/nightly-gpu.sh --name NAME --out DIR [--tier T] [--dry-run]" >&2; exit 2; }
[[ "$NAME" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "nightly-gpu: NAME must be letters, digits, '.', '_' or '-'" >&2; exit 2; }

step() {
  echo "+ $*"
  [[ $DRY -eq 1 ]] || "$@"
}

dest="$OUT/$NAME"
step mkdir -p "$dest"
if [[ -n "${CTEST_PARALLEL_LEVEL:-}" ]]; then
  step python3 ci/gpu-resource-spec.py --out build/gpu-resources.json
  export BACKENDCHECK_RESOURCE_SPEC="$PWD/build/gpu-resources.json"
fi
rc=0
# PyTorch under test is the machine's own (a CUDA build), when its Python has
# one: CMake finds that libtorch through Torch_DIR, and the Python probes use
# that interpreter. Otherwise Debian's CPU PyTorch, and the pytorch_cuda cases
# skip with "built without CUDA".
TORCH_PY="${BACKENDCHECK_TORCH_PYTHON:-python3}"
if [[ $DRY -eq 0 ]] && torch_cmake=$("$TORCH_PY" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  export Torch_DIR="$torch_cmake/Torch"
  BACKENDCHECK_TORCH_PYTHON="$(command -v "$TORCH_PY")"
  export BACKENDCHECK_TORCH_PYTHON
  echo "nightly-gpu: PyTorch from $Torch_DIR ($BACKENDCHECK_TORCH_PYTHON)"
fi
# A driver too old for the build's CUDA runtime would make every GPU test skip:
# fail here with that reason instead.
step python3 ci/cuda-driver-check.py || { echo "nightly-gpu: $NAME: the driver cannot run this build's CUDA" >&2; exit 1; }
# The machine name keys this run's platform in the merged report.
export BACKENDCHECK_MACHINE="$NAME"
# A GPU run in which every GPU test skipped fails, with the first skip's reason.
step ./backendcheck run --tier "$TIER" --require cuda || rc=$?
# The run's own evidence directory (build/default/evidence/latest) becomes NAME/evidence.
if [[ $DRY -eq 1 || -e build/default/evidence/latest ]]; then step cp -rL build/default/evidence/latest "$dest/evidence"; fi
for f in build/default/generated/cases.json build/default/ctest-junit.xml build/default/report; do
  if [[ $DRY -eq 1 || -e "$f" ]]; then step cp -r "$f" "$dest/"; fi
done
echo "nightly-gpu: $NAME finished with exit $rc; artifacts in $dest"
exit $rc
