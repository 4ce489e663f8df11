#!/bin/bash
# alternating holds.py on main's guest: QEMU with 0009 ("new": /tmp/sw/build/kvmcost bound over
# main's build/kvmcost in a mount namespace of its own) vs without ("old": main's); $1 rounds, $2 tag
R=$1; TAG=$2; shift 2
for r in $(seq 1 $R); do
  for side in new old; do
    cmd="cd /work/main && timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost skylake --dilation 5 $* --output /tmp/hab9/$TAG-$side-$r.json > /tmp/hab9/$TAG-$side-$r.txt 2>&1"
    if [ $side = new ]; then
      unshare -m bash -c "mount --bind /tmp/sw/build/kvmcost /work/main/build/kvmcost && $cmd"
    else
      bash -c "$cmd"
    fi
  done
done
