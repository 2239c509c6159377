#!/usr/bin/env bash
# On the GPU machine, in a copy of the tree (never the checkout that travels): move cells' results and evaluations
# to /tmp/set-aside so that Snakemake trains and evaluates them again, e.g. cells whose adapters are gone.
#   bash tools/gpu-machine/set-aside.sh MATRIX CELL_ID...
set -eu
matrix=${1:?usage: set-aside.sh MATRIX CELL_ID...}; shift
r=results/$matrix
for id in "$@"; do
  mkdir -p "/tmp/set-aside/$matrix/$id"
  if [ -e "$r/$id.json" ]; then mv "$r/$id.json" "/tmp/set-aside/$matrix/$id/"; fi
  if [ -d "$r/evaluations/$id" ]; then mv "$r/evaluations/$id" "/tmp/set-aside/$matrix/$id/evaluations"; fi
done
echo "set aside: $# cells of $matrix"
