"""holds.py with the gap plugin: python3 run.py OUTDIR MIN_NS -- holds args"""
import os, sys
sys.argv, rest = sys.argv[:3], sys.argv[4:]
out, min_ns = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
import subprocess
def addr(sym):
    o = subprocess.run(["nm", os.environ.get("ELF","/work/main/build/apps/memcached/memcached.elf")], capture_output=True, text=True).stdout
    for l in o.splitlines():
        a, t, n = l.split()[:3] if len(l.split()) == 3 else (None, None, None)
        if n == sym: return a
    raise SystemExit(sym)
rels = [addr(s) for s in os.environ.get("RELS", "netloop_commit,netloop_run.part.0").split(",")]
import vmcounters, loadgen
arm = os.path.join(out, "arm")
count = [0]
orig_q = vmcounters.RunCounters.qemu_args
def qargs(self):
    count[0] += 1
    if os.environ.get("LATE"):
        spec = f"/tmp/gapprof/" + os.environ.get("PLUG","liblate.so") + f",out={out}/late-{count[0]}.txt,arm={arm},markrx={addr('vnet_late_mark_rx')},marktx={addr('vnet_late_mark_tx')}," + ",".join(f"rel={r}" for r in rels)
    else:
        spec = f"/tmp/gapprof/libgap.so,out={out}/gap-{count[0]}.txt,min_ns={min_ns},arm={arm}," + ",".join(f"rel={r}" for r in rels)
    return orig_q(self) + ["-plugin", spec]
vmcounters.RunCounters.qemu_args = qargs
orig_rp = loadgen.run_phase
def rp(app, phase, seconds, lab, workdir, *a, **k):
    meas = not workdir.endswith("warmup")
    if meas: open(arm, "w").close()
    try: return orig_rp(app, phase, seconds, lab, workdir, *a, **k)
    finally:
        if meas and os.path.exists(arm): os.remove(arm)
loadgen.run_phase = rp
import bench.holds as h
h.loadgen.run_phase = rp
sys.exit(h.main(rest))
