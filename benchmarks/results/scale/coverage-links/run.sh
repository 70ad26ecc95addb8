#!/usr/bin/env bash
# alternate the session's starting code (b06bb13, worktree /tmp/wt_old) and the new code
# (d078ba4, /tmp/wt_new) on the same 10k index, each run in a fresh process
set -u
for r in ${ROUNDS:-1 2 3}; do
  for v in old new; do
    WT=/tmp/wt_$v
    PYTHONPATH=$WT/shared:$WT ${REPO:-/work/main}/.venv/bin/python $WT/benchmarks/scale/bench_scale.py --one 10000 --smallest 1000 \
      --reuse --out /tmp/s10k > ${OUT:-/tmp/ab2}/q-$v-$r.log 2>&1
    cp /tmp/s10k/scale-10000.json ${OUT:-/tmp/ab2}/ab-$v-$r.json
  done
done
