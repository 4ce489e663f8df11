#!/bin/bash
# alternating holds.py: new (/tmp/gapwt) vs old (/work/main); $1 rounds, $2 extra flags tag
R=$1; TAG=$2; shift 2
for r in $(seq 1 $R); do
  for side in new old; do
    if [ $side = new ]; then d=/tmp/gapwt; else d=/work/main; fi
    (cd $d && PYTHONPATH=$d/tools timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost skylake --dilation 5 "$@" --output /tmp/hab/$TAG-$side-$r.json > /tmp/hab/$TAG-$side-$r.txt 2>&1)
  done
done
