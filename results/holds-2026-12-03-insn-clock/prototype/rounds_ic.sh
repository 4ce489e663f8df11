#!/bin/bash
# usage: rounds_ic.sh OUT ROUNDS : alternates the icount clock (holds_icount.py, dilated idle) and
# the dilated clock (holds.py), both --kvmcost zero --dilation 5 --pin-vcpu, W 0,10,20,40, 5 s.
out=$1; rounds=$2; here=$(dirname "$0")
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for l in icount dilated; do
    if [ $l = icount ]; then prog="$here/holds_icount.py"; else prog=tools/bench/holds.py; fi
    echo "== round $r $l $(date -u +%H:%M:%S)" | tee -a "$out/log.txt"
    KC_CLOCK=dilated timeout 900 python3 "$prog" --w 0,10,20,40 --seconds 5 --pin-vcpu --kvmcost zero \
        --dilation 5 --output "$out/$l-$r.json" > "$out/$l-$r.txt" 2>&1
    grep -E "^W=|host stalls" "$out/$l-$r.txt" | tee -a "$out/log.txt"
  done
done
