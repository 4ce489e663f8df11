#!/bin/bash
# Issue 11 item 4: where QEMU runs on the host, alternating; memcached "many", holds per W.
# usage: ab.sh OUTDIR MODEL ROUNDS SIDES...   (sides: unpinned vcpu-alone whole-qemu)
set -e
out=$1; model=$2; rounds=$3; shift 3
cd /work/main
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for side in "$@"; do
    flag=""; whole=""
    [ $side != unpinned ] && flag="--pin-vcpu"
    [ $side = whole-qemu ] && whole=1  # NOM_PIN_* were experiment-only switches, not committed
    boost=""; [ $side = boosted ] && boost=1
    NOM_PIN_WHOLE_QEMU=$whole NOM_PIN_BOOST_QEMU=$boost python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 \
      --kvmcost "$model" $flag --output "$out/$side-$model-$r.json" > "$out/$side-$model-$r.txt" 2>&1
    echo "== $side $model round $r"; cat "$out/$side-$model-$r.txt"
  done
done
