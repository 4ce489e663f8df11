#!/bin/bash
# /tmp/ab_app.sh APP OUT ROUNDS A=TREE B=TREE: alternate insn_profile.py (model on) between trees
app=$1; out=$2; rounds=$3; shift 3
mkdir -p $out
for i in $(seq 1 $rounds); do
  for spec in "$@"; do
    label=${spec%%=*}; tree=${spec#*=}
    (cd $tree && PYTHONPATH=$tree/tools python3 tools/bench/insn_profile.py --app $app --conns 1 --seconds 10 --kvmcost skylake $EXTRA --output $out/$label-$i > $out/$label-$i.log 2>&1)
    ln -sfn . $out/$label-$i/$app
    python3 -c "
import json; r=json.load(open('$out/$label-$i/insn-profile.json')); p=r['per_request']
print('$label-$i work %.0f irq %.3f kicks %.3f req/s %.0f' % (p['work_insns_per_req'], p['irqs_per_req'], p['notifies_per_req'], r['requests_per_s']))" 2>&1 | tail -1
  done
done
