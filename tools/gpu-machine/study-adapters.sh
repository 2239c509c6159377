#!/usr/bin/env bash
# On the GPU machine: wait (at most SECONDS) until study-part.sh's cells have trained, then bring back each cell's
# result and trained adapter as 15 MB pieces in $OUT (a call brings back about 64 MB: one 0.5B cell a call), so
# that a machine taken back later in this session costs the evaluation only, not the training (study-restore.sh puts
# them back on the next machine). Kept in an ignored folder, they may outlive the session or not: a new session found
# none of the ignored files on 7 December, afternoon, and all of them that evening.
#   bash tools/gpu-machine/study-adapters.sh MATRIX SECONDS ID...   (ST: the run's folder, /tmp/st)
matrix=${1:?usage: study-adapters.sh MATRIX SECONDS ID...}; limit=${2:?}; shift 2; t0=$(date +%s)
st=${ST:-/tmp/st}; cd "$st/results/$matrix" || exit 1; missing=0
for id in "$@"; do
  while [ ! -f "$id.json" ] && kill -0 "$(cat "$st.pid" 2>/dev/null)" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do
    sleep 5; done
  [ -f "$id.json" ] && [ -d "adapters/$id" ] || {
    echo "$id: not trained ($(( $(date +%s) - t0 )) s)"; missing=$((missing + 1)); continue; }
  sleep 2  # the result file is written last; let its writer close it
  tar cf - "$id.json" "adapters/$id" | split -b 15000000 -d - "$OUT/cell-$matrix-$id.tar.part"
  echo "$id: trained; $(ls "$OUT"/cell-"$matrix"-"$id".tar.part* | wc -l) pieces, $(du -sh "adapters/$id" | cut -f1)"
done
if [ -f "$st.log" ]; then tail -c 100000 "$st.log" > "$OUT/st.log"; grep -E "^vramlab: " "$st.log" | tail -4; fi
[ "$missing" -eq 0 ]
