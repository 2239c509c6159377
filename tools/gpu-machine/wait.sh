#!/usr/bin/env bash
# On the GPU machine: wait for the run start.sh started in COPY, at most SECONDS.
#   bash tools/gpu-machine/wait.sh COPY SECONDS
copy=${1:?usage: wait.sh COPY SECONDS}; limit=${2:?}
t0=$(date +%s)
while kill -0 "$(cat /tmp/$copy.pid)" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do sleep 5; done
kill -0 "$(cat /tmp/$copy.pid)" 2>/dev/null && echo "still running after $limit s" || echo "finished after $(( $(date +%s) - t0 )) s"
tail -3 /tmp/$copy.log
