#!/bin/bash
# perfshare.sh new|old OUT: perf samples of QEMU during holds.py W=40 (pinned, D=5)
side=$1; out=$2
cmd="cd /work/main && timeout 300 python3 tools/bench/holds.py --w 40 --seconds 10 --kvmcost skylake --dilation 5 --pin-vcpu --output $out.json > $out.txt 2>&1"
if [ $side = new ]; then
  (unshare -m bash -c "mount --bind /tmp/plugnew/libinsncount.so /work/main/build/vmcounters/libinsncount.so && $cmd" &)
else
  (bash -c "$cmd" &)
fi
for i in $(seq 1 60); do Q=$(pgrep -n -f "qemu-system-x86_64"); [ -n "$Q" ] && break; sleep 0.3; done
sleep 6
perf record -q -p $Q -o $out.perf -- sleep 4 2>/dev/null
sleep 10
perf report -i $out.perf --no-children --stdio --sort sym 2>/dev/null | grep -E "^ +[0-9.]+%" | head -12
