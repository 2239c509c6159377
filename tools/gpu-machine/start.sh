#!/usr/bin/env bash
# On the GPU machine, once the payload is assembled (pack.sh): install the wheels into /tmp/site, put the GGUF files
# into the model cache, and start a matrix detached in its own copy of the tree, so that it runs on between calls
# while the machine stays warm. Its PID goes to /tmp/<copy>.pid (wait.sh waits for it; pgrep on the command line
# would also find the calling shell, whose command line holds the same words). `setsid -w`: the shell there runs
# jobs in process groups of their own, so a plain setsid forks, and its PID (the one recorded) ends at once.
#   . tools/gpu-machine/start.sh COPY MATRIX [snakemake args...]
set -u
copy=${1:?usage: start.sh COPY MATRIX [snakemake args...]}; matrix=${2:?}; shift 2
[ -f /tmp/site/.stamp ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site /tmp/payload/.whl/*.whl && echo done > /tmp/site/.stamp; }
export PATH=/tmp/site/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export UNSLOTH_DISABLE_STATISTICS=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 VRAMLAB_CACHE=/tmp/vc
mkdir -p $VRAMLAB_CACHE/packages
for f in /tmp/payload/*.gguf; do [ -e "$f" ] && [ ! -e "$VRAMLAB_CACHE/packages/${f##*/}" ] && cp "$f" $VRAMLAB_CACHE/packages/; done
[ -d /tmp/$copy ] || cp -a "$PWD" /tmp/$copy
# each copy leases the device in its own folder: runs side by side would otherwise wait for each other's slots
(cd /tmp/$copy && PYTHONPATH=/tmp/site:/tmp/$copy VRAMLAB_LEASES=/tmp/leases-$copy setsid -w nohup \
   snakemake --keep-going --config matrix="$matrix" "$@" > /tmp/$copy.log 2>&1 & echo $! > /tmp/$copy.pid)
echo "started $matrix in /tmp/$copy, pid $(cat /tmp/$copy.pid), log /tmp/$copy.log"
