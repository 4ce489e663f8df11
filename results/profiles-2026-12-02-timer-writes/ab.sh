#!/bin/bash
# usage: ab.sh OUT label=TREE ...   (before-backstop: old=F3DADBB0_TREE new=MAIN_TREE;
#                                    fix: main=MAIN_TREE fix=FIX_TREE)
out=$1; shift
for r in 1 2; do
  for lt in "$@"; do
    l=${lt%%=*}; t=${lt#*=}
    (cd "$t" && PYTHONPATH="$t/tools" timeout 900 python3 tools/profile/sweep.py --app nhttpd \
        --w 0,20,40 --seconds 10 --repeat 1 --kvmcost skylake --dilation 5 \
        --output "$out/$l-$r.json" --workdir "$out/$l-$r" > "$out/$l-$r.log" 2>&1)
  done
done
