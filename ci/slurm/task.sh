#!/usr/bin/env bash
# One array task of ci/slurm/submit.sh (sbatch runs it in the checkout,
# --chdir): the task SLURM_ARRAY_TASK_ID of PARTITION's tasks runs
# ci/nightly-gpu.sh with its machine name (BACKENDCHECK_MACHINE) and torch,
# into OUT/NAME (or OUT/NAME-torchVERSION).
#
#   ci/slurm/task.sh TASKS OUT PARTITION DEVICE TIER
set -euo pipefail
[[ $# -eq 5 ]] || { echo "usage: ci/slurm/task.sh TASKS OUT PARTITION DEVICE TIER (run by sbatch)" >&2; exit 2; }
TASKS=$1 OUT=$2 PARTITION=$3 DEVICE=$4 TIER=$5
[[ -x ./backendcheck && -x ci/nightly-gpu.sh ]] ||
  { echo "slurm-task: $PWD is not the checkout (sbatch --chdir)" >&2; exit 1; }
index=${SLURM_ARRAY_TASK_ID:?slurm-task: not an array task (no SLURM_ARRAY_TASK_ID)}
task=$(python3 -m ci.slurm.tasks task "$TASKS" "$PARTITION" "$DEVICE" "$index")
name=$(sed -n 1p <<<"$task") torch=$(sed -n 2p <<<"$task")
args=(--name "$name" --out "$OUT" --tier "$TIER" --require "$DEVICE")
case "$torch" in
  pinned) unset BACKENDCHECK_TORCH_PYTHON ;;
  /*) export BACKENDCHECK_TORCH_PYTHON="$torch" ;;
  *) args+=(--torch "torch==$torch") ;;
esac
echo "slurm-task: ${SLURM_ARRAY_JOB_ID:-?}_$index on $(hostname -s): $name, torch $torch, tier $TIER"
exec ci/nightly-gpu.sh "${args[@]}"
