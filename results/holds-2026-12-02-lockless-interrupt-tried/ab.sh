#!/bin/bash
# Alternating holds.py on main's guest: "new" runs with BIND_SRC bound over BIND_DST in a mount
# namespace of its own, "old" with main as it is. $1 rounds, $2 tag; the rest goes to holds.py.
#   this folder:  BIND_SRC=/tmp/sw/build/kvmcost BIND_DST=/work/main/build/kvmcost OUT=/tmp/hab9
#   (the QEMU with 0009)
#   ../holds-2026-12-02-inline-insn-count:  BIND_SRC=/tmp/plugnew/libinsncount.so
#   BIND_DST=/work/main/build/vmcounters/libinsncount.so OUT=/tmp/habp (the new counting plugin)
R=$1; TAG=$2; shift 2
: "${BIND_SRC:?}" "${BIND_DST:?}" "${OUT:?}"
mkdir -p "$OUT"
for r in $(seq 1 $R); do
  for side in new old; do
    cmd="cd /work/main && timeout 900 python3 tools/bench/holds.py --w 0,10,20,40 --seconds 5 --kvmcost skylake --dilation 5 $* --output $OUT/$TAG-$side-$r.json > $OUT/$TAG-$side-$r.txt 2>&1"
    if [ $side = new ]; then
      unshare -m bash -c "mount --bind $BIND_SRC $BIND_DST && $cmd"
    else
      bash -c "$cmd"
    fi
  done
done
