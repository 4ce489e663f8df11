"""Repro: NPtcp stream sessions against nom's netpipe on the insn clock until one hangs."""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import nom_tools_site  # noqa
from experiment.nom_driver import make_driver
from nomvm import choose_accel
from loadgen import apps, runners

work = sys.argv[1]; max_sessions = int(sys.argv[2]); w = float(sys.argv[3]) if len(sys.argv) > 3 else 0
os.makedirs(work, exist_ok=True)
accel, _ = choose_accel()
d = make_driver(accel, None, 0)
d.kvmcost_name = "skylake"; d.dilation = 5.25; d.pin_vcpu = True; d.guest_clock = "insn"
QMP = os.path.join(work, "qmp.sock")
_orig_make_vm = d.make_vm
def make_vm(*a, **k):
    vm = _orig_make_vm(*a, **k)
    vm.args += ["-qmp", f"unix:{QMP},server=on,wait=off"]
    return vm
d.make_vm = make_vm

def qmp(*cmds):
    import socket
    s = socket.socket(socket.AF_UNIX); s.connect(QMP); f = s.makefile("rw")
    f.readline(); f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n"); f.flush(); f.readline()
    out = []
    for c in cmds:
        f.write(json.dumps(c) + "\n"); f.flush()
        while True:
            line = json.loads(f.readline())
            if "return" in line or "error" in line:
                out.append(line); break
    s.close(); return out

def virtio_state():
    devs = qmp({"execute": "x-query-virtio"})[0].get("return", [])
    res = {"devs": devs}
    for dv in devs:
        for q in range(2):
            res[f"{dv['path']}/q{q}"] = qmp({"execute": "x-query-virtio-queue-status", "arguments": {"path": dv["path"], "queue": q}})[0]
        res[f"{dv['path']}/status"] = qmp({"execute": "x-query-virtio-status", "arguments": {"path": dv["path"]}})[0]
    return res

d.start("netpipe", {"name": f"w={w:g}", "w_us": w}, work)
lab = d.lab
dump = None
if os.path.exists("/usr/bin/tcpdump") or os.path.exists("/usr/sbin/tcpdump"):
    dump = lab.popen(["tcpdump", "-i", lab.tap, "-n", "-s", "96", "-w", os.path.join(work, "tap.pcap"),
                      "-C", "40", "-W", "3"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
t0 = time.monotonic(); hung = None
try:
    for i in range(max_sessions):
        args = [runners.NPTCP, "-h", lab.guest_ip, *apps.NETPIPE_STREAM_ARGS, "-o", os.path.join(work, "s.out")]
        p = lab.popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            hung = i
            print(f"session {i} hung at {time.monotonic()-t0:.1f}s", flush=True)
            st = virtio_state()
            json.dump(st, open(os.path.join(work, "virtio-hung.json"), "w"), indent=1)
            for k, v in st.items():
                if k.endswith("/q0") or k.endswith("/q1"):
                    print(k, json.dumps(v.get("return")), flush=True)
            ss = lab.run(["ss", "-tanoi"], timeout=10)
            open(os.path.join(work, "ss.txt"), "w").write(ss.stdout)
            print(ss.stdout, flush=True)
            p.kill(); out, _ = p.communicate()
            open(os.path.join(work, "hung-session.txt"), "w").write(out)
            print(out[-1500:], flush=True)
            # does the guest still answer on the ping-pong port?
            args2 = [runners.NPTCP, "-h", lab.guest_ip, *apps.NETPIPE_PINGPONG_ARGS, "-o", os.path.join(work, "pp.out")]
            try:
                r = lab.run(args2, timeout=60)
                print("pingpong after hang rc", r.returncode, r.stdout[-300:], flush=True)
            except subprocess.TimeoutExpired:
                print("pingpong after hang: timeout", flush=True)
            try:
                r = lab.run(args, timeout=60)
                print("stream after hang rc", r.returncode, r.stdout[-300:], flush=True)
            except subprocess.TimeoutExpired:
                print("stream after hang: timeout", flush=True)
            break
        if p.returncode != 0:
            print(f"session {i} rc {p.returncode}: {out[-500:]}", flush=True)
        if i % 100 == 0:
            print(f"session {i} ok at {time.monotonic()-t0:.1f}s", flush=True)
finally:
    time.sleep(2)
    if dump: dump.terminate(); dump.wait()
    print("serial tail:\n" + d.vm.tail(30), flush=True)
    d.stop()
print("hung" if hung is not None else "no hang", hung)
