#!/bin/bash
# Issue 11 item 4: the hold timer (NETLOOP_HOLD_TIMER=1, /tmp/ht) against HEAD (/work/main),
# alternating; memcached "many", holds per W, vCPU pinned.
# usage: ht-ab.sh OUTDIR MODEL ROUNDS
set -e
out=$1; model=$2; rounds=$3
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for side in head holdtimer; do
    tree=/work/main; [ $side = holdtimer ] && tree=/tmp/ht
    (cd $tree && python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost "$model" --pin-vcpu \
      --output "$out/$side-$model-$r.json" > "$out/$side-$model-$r.txt" 2>&1)
    echo "== $side $model round $r"; cat "$out/$side-$model-$r.txt"
  done
done
