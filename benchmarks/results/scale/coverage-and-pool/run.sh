#!/usr/bin/env bash
# alternate the session's starting code (a7e7365) and the final code on the same 10k index
set -u
for r in ${ROUNDS:-1 2 3}; do
  for v in old new; do
    WT=/tmp/wt_$v
    PYTHONPATH=$WT/shared:$WT /work/main/.venv/bin/python $WT/benchmarks/scale/bench_scale.py --one 10000 --smallest 1000 \
      --reuse --out /tmp/s10k > /tmp/ab/q-$v-$r.log 2>&1
    cp /tmp/s10k/scale-10000.json /tmp/ab/ab-$v-$r.json
  done
done
