#!/bin/bash
# alternating holds.py on main: the counting plugin with the inline add ("new": /tmp/plugnew's
# libinsncount.so bound over main's in a mount namespace of its own) vs main's ("old"); $1 rounds, $2 tag
R=$1; TAG=$2; shift 2
for r in $(seq 1 $R); do
  for side in new old; do
    cmd="cd /work/main && timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost skylake --dilation 5 $* --output /tmp/habp/$TAG-$side-$r.json > /tmp/habp/$TAG-$side-$r.txt 2>&1"
    if [ $side = new ]; then
      unshare -m bash -c "mount --bind /tmp/plugnew/libinsncount.so /work/main/build/vmcounters/libinsncount.so && $cmd"
    else
      bash -c "$cmd"
    fi
  done
done
