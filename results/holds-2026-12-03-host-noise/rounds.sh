#!/bin/bash
# usage: rounds.sh OUT ROUNDS label:ARGS ...   (ARGS: holds.py's cost-model flags, comma-free, '+' for spaces)
# Each round runs every label once, in order, with holds.py --w 0,10,20,40 --seconds 5 --pin-vcpu.
out=$1; rounds=$2; shift 2
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for la in "$@"; do
    l=${la%%:*}; a=${la#*:}; a=${a//+/ }
    echo "== round $r $l ($a) $(date -u +%H:%M:%S)" | tee -a "$out/log.txt"
    timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --pin-vcpu $a \
        --output "$out/$l-$r.json" > "$out/$l-$r.txt" 2>&1
    grep -E "^W=|host stalls" "$out/$l-$r.txt" | tee -a "$out/log.txt"
  done
done
