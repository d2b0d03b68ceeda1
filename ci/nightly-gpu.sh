#!/usr/bin/env bash
# One GPU machine's nightly run: the nightly tier of the default matrix, then
# its evidence, manifest, ctest results and report copied to OUT/NAME for the
# CI system to upload. The merge job combines the OUT/* of every machine
# (ci/merge-reports.sh).
#
#   ci/nightly-gpu.sh --name NAME --out DIR [--torch TORCH] [--tier T] [--require DEVICE] [--dry-run]
#
# NAME is the machine (the GPU type): it keys the platform in the merged
# report, so runs of several torch versions on one GPU type are paired there
# ("Changed between versions"). --torch TORCH is ./backendcheck's, with the
# same values (read by python3 -m cli.torch_spec): torch==VERSION tests that
# PyTorch release from PyPI and writes to OUT/NAME-torchVERSION; an
# interpreter or pinned writes to OUT/NAME, as does no --torch (the torch is
# then BACKENDCHECK_TORCH_PYTHON's, or the pinned release).
#
# --require cuda (the default) checks the driver first and fails when every GPU
# test skipped; --require cpu runs on a machine without a GPU (a CPU node of
# the Slurm recipe, ci/slurm/). Several runs may share one checkout: each keeps
# its evidence, log and report in build/nightly/FOLDER (FOLDER: NAME or
# NAME-torchVERSION), and takes the manifest from the build its own run named.
#
# On a multi-GPU host, ctest runs one GPU test per GPU when
# CTEST_PARALLEL_LEVEL is set: the resource spec comes from nvidia-smi.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NAME="" OUT="" TIER=nightly DRY=0 SPEC="" TORCH=() DEVICE=cuda
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --tier) TIER="${2:?}"; shift 2 ;;
    --torch) SPEC="${2:?}"; shift 2 ;;
    --require) DEVICE="${2:?}"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "nightly-gpu: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$NAME" && -n "$OUT" ]] || { echo "usage: ci/nightly-gpu.sh --name NAME --out DIR [--torch TORCH] [--tier T] [--require DEVICE] [--dry-run]" >&2; exit 2; }
[[ "$DEVICE" == cpu || "$DEVICE" == cuda ]] || { echo "nightly-gpu: --require $DEVICE: cpu or cuda" >&2; exit 2; }
[[ "$NAME" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "nightly-gpu: NAME must be letters, digits, '.', '_' or '-'" >&2; exit 2; }
dest="$OUT/$NAME"
if [[ -n "$SPEC" ]]; then
  SPEC=$(PYTHONPATH="$PWD" python3 -m cli.torch_spec "$SPEC" 2>&1) || { echo "nightly-gpu: $SPEC" >&2; exit 2; }
  [[ "$SPEC" != torch==* ]] || dest="$OUT/$NAME-torch${SPEC#torch==}"
  TORCH=(--torch "$SPEC")
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
# This run's evidence, log and report in places of their own, whatever the
# build tree (build/default/torchPYTHON) is called.
own="build/nightly/$(basename "$dest")"
step mkdir -p "$own"
export BACKENDCHECK_EVIDENCE_DIR="$PWD/$own/evidence"
# A driver too old for the build's CUDA runtime would make every GPU test skip:
# fail here with that reason instead.
if [[ "$DEVICE" == cuda ]]; then
  step python3 ci/cuda-driver-check.py || { echo "nightly-gpu: $NAME: the driver cannot run this build's CUDA" >&2; exit 1; }
fi
# The machine name keys this run's platform in the merged report.
export BACKENDCHECK_MACHINE="$NAME"
# A GPU run in which every GPU test skipped fails, with the first skip's reason
# (a CPU run: every CPU test).
run=(./backendcheck run "${TORCH[@]}" --tier "$TIER" --require "$DEVICE" --out "$own/report")
echo "+ ${run[*]}"
[[ $DRY -eq 1 ]] || { "${run[@]}" 2>&1 | tee "$own/run.log" || rc=$?; }
# The run's own evidence directory ($own/evidence/latest) becomes NAME/evidence.
if ours "$own/evidence/latest"; then step cp -rL "$own/evidence/latest" "$dest/evidence"
else
  echo "nightly-gpu: $NAME: this run wrote no evidence ($own/evidence/latest is missing or older); none uploaded" >&2
  [[ $rc -ne 0 ]] || rc=1
fi
# The build directory the run's log names (another run may have built since);
# its ctest JUnit is this run's, its manifest may be older (an up-to-date
# build does not rewrite it).
bdir=$(sed -n 's/^==> configuring (.*) in //p' "$own/run.log" 2>/dev/null | tail -n 1 || true)
if [[ $DRY -eq 1 ]] || { [[ -n "$bdir" ]] && ours "$bdir/ctest-junit.xml"; }; then
  step cp "${bdir:-build/default/torchPYTHON}/generated/cases.json" "${bdir:-build/default/torchPYTHON}/ctest-junit.xml" "$dest/"
else
  echo "nightly-gpu: $NAME: no build's ctest JUnit was written by this run; no manifest uploaded" >&2
fi
if ours "$own/report"; then step cp -r "$own/report" "$dest/"
elif [[ -e "$own/report" ]]; then echo "nightly-gpu: $NAME: $own/report was not written by this run; not uploaded" >&2; fi
if ours "$own/run.log"; then step cp "$own/run.log" "$dest/"; fi
echo "nightly-gpu: $NAME finished with exit $rc; artifacts in $dest"
exit $rc
