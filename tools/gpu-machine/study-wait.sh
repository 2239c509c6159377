#!/usr/bin/env bash
# On the GPU machine: wait for study-part.sh's run at most SECONDS, then bring back what it wrote (adapters left out:
# 34 MB each) and the log's tail into $OUT, so that a machine taken back loses only what ran since.
#   bash tools/gpu-machine/study-wait.sh MATRIX SECONDS
matrix=${1:?usage: study-wait.sh MATRIX SECONDS}; limit=${2:?}; t0=$(date +%s); pid=$(cat /tmp/st.pid)
while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do sleep 5; done
kill -0 "$pid" 2>/dev/null && echo "still running after $limit s" || echo "finished after $(( $(date +%s) - t0 )) s"
cd /tmp/st && tar czf "$OUT/st-$matrix.tgz" --exclude=adapters "results/$matrix" 2>/dev/null
tail -c 300000 /tmp/st.log > "$OUT/st.log"; grep -E "^vramlab: " /tmp/st.log | tail -8
for f in results/"$matrix"/logs/*.log; do echo "== $f"; tail -1 "$f"; done 2>/dev/null
