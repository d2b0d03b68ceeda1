#!/usr/bin/env bash
# The merge job of ci/slurm/submit.sh (run after every array, however its
# tasks ended): ci/merge-reports.sh over the folders the tasks wrote into
# OUT, the report into OUT/merged-report. Each expected task that wrote no
# evidence is named on one line (its log: OUT/logs/) and listed in
# OUT/missing.txt; the merge still reports on the others, and then exits 1.
#
#   ci/slurm/merge.sh TASKS OUT [--baseline OLD/report.json] [--known FILE]...
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: ci/slurm/merge.sh TASKS OUT [merge-reports options] (run by sbatch)" >&2; exit 2; }
TASKS=$1 OUT=$2
shift 2
expected=$(python3 -m ci.slurm.tasks expected "$TASKS")
missing=()
while read -r folder; do
  [[ -d "$OUT/$folder/evidence" ]] || missing+=("$folder")
done <<<"$expected"
printf '%s\n' "${missing[@]}" | sed '/^$/d' >"$OUT/missing.txt"
for folder in "${missing[@]}"; do
  echo "slurm-merge: the task $folder wrote no evidence in $OUT/$folder (its log is in $OUT/logs/)" >&2
done
rc=0
ci/merge-reports.sh --in "$OUT" --out "$OUT/merged-report" "$@" || rc=$?
[[ ${#missing[@]} -eq 0 || $rc -ne 0 ]] || rc=1
echo "slurm-merge: $(( $(wc -l <<<"$expected") - ${#missing[@]} )) of $(wc -l <<<"$expected") task(s) wrote evidence; merge exit $rc"
exit $rc
