#!/usr/bin/env bash
# The cluster recipe: one Slurm job array per partition (and device) of the
# task list, each array task one machine's run of one torch (ci/slurm/task.sh,
# which runs ci/nightly-gpu.sh), then a merge job that starts when every array
# has ended, however it ended (--dependency=afterany), and merges what the
# tasks wrote (ci/slurm/merge.sh, which runs ci/merge-reports.sh).
#
#   ci/slurm/submit.sh --out DIR [--tasks FILE] [--tier T] [--throttle N]
#                      [--merge-partition P] [--sbatch-arg ARG]...
#                      [--baseline OLD/report.json] [--known FILE]... [--dry-run]
#
# DIR is a folder every node sees: each task writes DIR/NAME (or
# DIR/NAME-torchVERSION), the jobs' logs go to DIR/logs, the merged report to
# DIR/merged-report. FILE is the task list (ci/slurm/tasks.txt, its format in
# ci/slurm/tasks.py); T the tier (nightly, or smoke for a quick check).
# The tasks run in this checkout: tasks of one torch share its build
# directory, in which one run at a time may run, so on a shared checkout give
# --throttle 1 (at most N tasks of an array at once) or one checkout per
# partition. --sbatch-arg passes an option to every sbatch (--account=...,
# --time=..., --cpus-per-task=...). Prints each job's id.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

OUT="" TASKS=ci/slurm/tasks.txt TIER=nightly THROTTLE="" MERGE_PARTITION="" DRY=0 EXTRA=() MERGE_ARGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="${2:?}"; shift 2 ;;
    --tasks) TASKS="${2:?}"; shift 2 ;;
    --tier) TIER="${2:?}"; shift 2 ;;
    --throttle) THROTTLE="${2:?}"; shift 2 ;;
    --merge-partition) MERGE_PARTITION="${2:?}"; shift 2 ;;
    --sbatch-arg) EXTRA+=("${2:?}"); shift 2 ;;
    --baseline|--known) MERGE_ARGS+=("$1" "$(realpath -m -- "${2:?$1 needs a file}")"); shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "slurm-submit: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$OUT" ]] || { echo "usage: ci/slurm/submit.sh --out DIR [--tasks FILE] [--tier T] [--throttle N] [--merge-partition P] [--sbatch-arg ARG]... [--baseline OLD/report.json] [--known FILE]... [--dry-run]" >&2; exit 2; }
case "$TIER" in smoke|ci|nightly) ;; *) echo "slurm-submit: --tier $TIER: smoke, ci or nightly" >&2; exit 2 ;; esac
[[ -z "$THROTTLE" || "$THROTTLE" =~ ^[1-9][0-9]*$ ]] || { echo "slurm-submit: --throttle $THROTTLE: a number of tasks" >&2; exit 2; }
OUT=$(realpath -m -- "$OUT")
TASKS=$(realpath -m -- "$TASKS")
groups=$(python3 -m ci.slurm.tasks groups "$TASKS")  # bad input: FILE:LINE: field: message
[[ $DRY -eq 1 ]] || mkdir -p "$OUT/logs"

submit() {  # submit NAME SBATCH_ARGS...: the job's id (--dry-run: its name)
  local name=$1
  shift
  if [[ $DRY -eq 1 ]]; then echo "+ sbatch --job-name=$name $*" >&2; echo "$name"; return; fi
  sbatch --parsable --job-name="$name" "$@" | cut -d';' -f1
}

arrays=()
while read -r partition device count; do
  gres=()
  [[ "$device" == cpu ]] || gres=(--gres=gpu:1)
  id=$(submit "backendcheck-$partition" --partition="$partition" "${gres[@]}" \
    --array="0-$((count - 1))${THROTTLE:+%$THROTTLE}" --chdir="$ROOT" --output="$OUT/logs/%x-%A_%a.out" \
    "${EXTRA[@]}" ci/slurm/task.sh "$TASKS" "$OUT" "$partition" "$device" "$TIER")
  echo "slurm-submit: array job $id: $count task(s) on partition $partition ($device)"
  arrays+=("$id")
done <<<"$groups"

dependency=$(IFS=:; echo "afterany:${arrays[*]}")
id=$(submit backendcheck-merge ${MERGE_PARTITION:+--partition="$MERGE_PARTITION"} \
  --dependency="$dependency" --chdir="$ROOT" --output="$OUT/logs/%x-%j.out" \
  "${EXTRA[@]}" ci/slurm/merge.sh "$TASKS" "$OUT" "${MERGE_ARGS[@]}")
echo "slurm-submit: merge job $id after ${arrays[*]}; the report: $OUT/merged-report"
