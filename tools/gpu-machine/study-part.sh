#!/usr/bin/env bash
# On the GPU machine, once pack.sh's payload is assembled (the wheels, the GGUF file and study.tgz, a `git archive` of
# the study commit): run some cells of a study matrix and their evaluation, detached, in /tmp/st, the archive
# unpacked, so that the results record the study commit, clean, whatever the tree this call carried.
#   bash tools/gpu-machine/study-part.sh COMMIT MATRIX ID...   (then: bash tools/gpu-machine/study-wait.sh MATRIX SECONDS)
# Cells that study-restore.sh put back in /tmp/st in an earlier call of this session (their pieces carried with
# results/ set aside: a cell's 35 MB of pieces beside the whole tree is over what a call carries) are evaluated here,
# not trained again.
# BASELINES=FOLDER (in the carried tree): the untrained model's scores an earlier part made at the same commit
# (results/*/evaluations/baselines/ is ignored by git, so they are kept under results/benchmarks/), put where the
# evaluate stage looks, so that this part does not score the untrained model again.
# EVALUATED=FOLDER (in the carried tree, holding ID/TASK.json): tasks of restored cells an earlier session scored at
# the same commit; the evaluate stage keeps a task whose file holds this adapter's score and runs only the others.
set -u
commit=${1:?usage: study-part.sh COMMIT MATRIX ID...}; matrix=${2:?}; shift 2
[ -f /tmp/payload/study.tgz ] || { echo "no payload: ship the chunks first"; exit 1; }
[ -f /tmp/site/.stamp ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site /tmp/payload/.whl/*.whl && echo done > /tmp/site/.stamp; }
export PATH=/tmp/site/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export UNSLOTH_DISABLE_STATISTICS=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 VRAMLAB_CACHE=/tmp/vc
export VRAMLAB_GIT_COMMIT=$commit VRAMLAB_GIT_DIRTY=0
mkdir -p /tmp/vc/packages
for f in /tmp/payload/*.gguf; do [ -e "$f" ] && mv -n "$f" /tmp/vc/packages/; done
# the archive's own file, not the folder: restored cells may have made /tmp/st before the archive was unpacked
[ -f /tmp/st/Snakefile ] || { mkdir -p /tmp/st && tar xzf /tmp/payload/study.tgz -C /tmp/st; }
if [ -n "${BASELINES:-}" ]; then
  ls "$BASELINES"/*.json > /dev/null || { echo "BASELINES=$BASELINES holds no .json file"; exit 1; }
  mkdir -p /tmp/st/results/"$matrix"/evaluations/baselines
  cp -n "$BASELINES"/*.json /tmp/st/results/"$matrix"/evaluations/baselines/
  echo "$(ls /tmp/st/results/"$matrix"/evaluations/baselines | wc -l) untrained scores from $BASELINES"
fi
if [ -n "${EVALUATED:-}" ]; then
  ls "$EVALUATED"/*/*.json > /dev/null || { echo "EVALUATED=$EVALUATED holds no ID/TASK.json"; exit 1; }
  for d in "$EVALUATED"/*/; do
    id=$(basename "$d"); mkdir -p /tmp/st/results/"$matrix"/evaluations/"$id"
    cp -n "$d"*.json /tmp/st/results/"$matrix"/evaluations/"$id"/ && echo "$id: $(ls "$d" | wc -l) tasks scored earlier"
  done
fi
cd /tmp/st
targets=""; for id in "$@"; do targets="$targets results/$matrix/evaluations/$id/workload_recall.json"; done
# the targets go before --config, which would take every word after it as a key=value pair
PYTHONPATH=/tmp/site:/tmp/st VRAMLAB_LEASES=/tmp/leases-st setsid nohup snakemake $targets --keep-going --cores 8 \
  --config matrix="$matrix" > /tmp/st.log 2>&1 < /dev/null &
sleep 8; pgrep -f "^/opt/torch/.venv/bin/python3 /tmp/site/bin/snakemake" | head -1 > /tmp/st.pid
echo "snakemake pid $(cat /tmp/st.pid), log /tmp/st.log"; tail -3 /tmp/st.log
