#!/bin/bash
# A/B of the uncommitted data-path change (drivers/virtio-net/datapath.c, net/netif_virtio.c):
# holds.py with and without it, alternately, with the cost model and without.
set -e
cd /work/main
out=/work/holds-ab; mkdir -p $out
git diff -- drivers/virtio-net/datapath.c net/netif_virtio.c > $out/change.patch
for round in 1 2; do
  for side in before after; do
    if [ $side = before ]; then git apply -R $out/change.patch; fi
    make -s all >/dev/null 2>&1
    for cm in skylake off; do
      python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost $cm --output $out/$side-$cm-$round.json > $out/$side-$cm-$round.txt 2>&1 || echo "FAILED $side $cm $round"
      tail -6 $out/$side-$cm-$round.txt
    done
    if [ $side = before ]; then git apply $out/change.patch; fi
  done
done
make -s all >/dev/null 2>&1
echo done
