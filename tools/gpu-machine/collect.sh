#!/usr/bin/env bash
# On the GPU machine: pack a copy's results and reports of one matrix into $OUT (trained adapters left out).
#   bash tools/gpu-machine/collect.sh COPY MATRIX
copy=${1:?usage: collect.sh COPY MATRIX}; matrix=${2:?}
cd /tmp/$copy || exit 1
tar czf "$OUT/$copy-$matrix.tgz" --exclude=adapters $(ls -d "results/$matrix" "reports/$matrix" 2>/dev/null)
tail -c 200000 /tmp/$copy.log > "$OUT/$copy.log"
grep -E "vramlab: cell" /tmp/$copy.log | tail -20
