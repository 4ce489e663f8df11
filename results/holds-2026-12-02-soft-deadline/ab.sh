#!/bin/bash
# usage: ab_holds.sh OUT ROUNDS label=TREE ... -- extra holds args
out=$1; rounds=$2; shift 2
trees=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do trees+=("$1"); shift; done
[ "$1" = "--" ] && shift
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for lt in "${trees[@]}"; do
    l=${lt%%=*}; t=${lt#*=}
    echo "== round $r $l ($t) $(date -u +%H:%M:%S)" | tee -a "$out/log.txt"
    (cd "$t" && PYTHONPATH="$t/tools" timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 \
        --kvmcost skylake --dilation 5 --pin-vcpu "$@" --output "$out/$l-$r.json" > "$out/$l-$r.txt" 2>&1)
    grep "^W=" "$out/$l-$r.txt" | tee -a "$out/log.txt"
  done
done
