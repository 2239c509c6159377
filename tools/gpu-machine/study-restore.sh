#!/usr/bin/env bash
# Put back, under ROOT/results/MATRIX, the cells that study-adapters.sh brought back in pieces (result and trained
# adapter), so that Snakemake there runs their evaluation alone: one call per piece folder, carrying it with results/
# and reports/ set aside (35 MB of pieces beside the whole tree is over what a call carries), then study-part.sh.
#   bash tools/gpu-machine/study-restore.sh MATRIX FOLDER [ROOT]   (ROOT: /tmp/st)
set -u
matrix=${1:?usage: study-restore.sh MATRIX FOLDER [ROOT]}; folder=${2:?}; root=${3:-/tmp/st}
found=0
for first in "$folder"/cell-"$matrix"-*.tar.part00; do
  [ -e "$first" ] || break
  mkdir -p "$root/results/$matrix"
  cat "${first%00}"* | tar xf - -C "$root/results/$matrix" || { echo "$first: its pieces make no archive"; exit 1; }
  found=$((found + 1)); echo "restored $(basename "${first%.tar.part00}")"
done
[ "$found" -gt 0 ] || { echo "$folder holds no cell-$matrix-*.tar.part00"; exit 1; }
