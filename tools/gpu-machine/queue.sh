#!/usr/bin/env bash
# On the GPU machine, after start.sh's install (or the same exports): measure a list of cells and ceiling probes
# again, N at once on the one device, each `vramlab run-cell --shared-device` (peaks stay measurements, speed does
# not) into OUTDIR/<matrix>/<id>.json, for benchmarks/peaks_to_the_byte.py to set beside the published results.
# A line of JOBS is "MATRIX CELL CONTEXT ID": CONTEXT '-' for the cell itself, else the probe at that context, whose
# own id ID names the file (`run-cell --out` takes only a path ending in the id). Cells start in the order of the
# file, so heavy ones (host memory pinned by offloaded checkpointing) are spread out by where they are written.
#   setsid -w nohup bash tools/gpu-machine/queue.sh JOBS N OUTDIR > /tmp/q.log 2>&1 & echo $! > /tmp/q.pid
set -u
jobs=${1:?usage: queue.sh JOBS N OUTDIR}; n=${2:?}; outdir=${3:?}
mkdir -p "$outdir/logs"
one() {
  local matrix=$1 cell=$2 context=$3 id=$4 extra=()
  [ "$context" = - ] || extra=(--context "$context")
  mkdir -p "$outdir/$matrix"
  echo "$(date +%T) start $matrix $cell $context"
  python3 -m harness run-cell --matrix "$matrix" --cell "$cell" "${extra[@]}" --shared-device --device-slots 8 \
    --out "$outdir/$matrix/$id.json" --log "$outdir/logs/$matrix-$id.log"
  local rc=$?; echo "$(date +%T) end $matrix $cell $context rc=$rc"
}
export -f one; export outdir
grep -v '^#' "$jobs" | xargs -P "$n" -L 1 bash -c 'one "$@"' _
echo "$(date +%T) queue done"
