"""Ad-hoc: QEMU start -> 'nom: booting' / kernel line / listening / first HTTP answer."""
import subprocess, time, os, sys, tempfile, socket, re, statistics, json
sys.path.insert(0, "/work/main/tools")
from nomvm.ports import free_port
def answered(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n"); return s.recv(16).startswith(b"HTTP/")
    except OSError: return False
def boot(iso, romfile, smp=1):
    d = tempfile.mkdtemp(); ser = os.path.join(d, "s.log"); open(ser, "w").close()
    port = free_port()
    nic = "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:01,disable-legacy=on,disable-modern=off" + (",romfile=" if romfile else "")
    args = ["qemu-system-x86_64","-machine","q35","-m","128","-smp",str(SMP),"-display","none","-no-reboot","-nodefaults",
            "-serial",f"file:{ser}","-accel","tcg","-cpu","max","-cdrom",iso,"-boot","d",
            "-netdev",f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:80","-device",nic]
    t0 = time.monotonic(); p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = {}; kline = ""
    while time.monotonic() - t0 < 30:
        s = open(ser, errors="replace").read()
        for k, pat in (("kernel","nom: booting"),("app","started"),("listen","nhttpd: listening")):
            if k not in t and pat in s: t[k] = time.monotonic()-t0
        m = re.search(r"nom: kernel boot .*", s)
        if m: kline = m.group(0)
        if "listen" in t and answered(port):
            t["answer"] = time.monotonic()-t0; break
        time.sleep(0.003)
    p.kill(); p.wait()
    return t, kline
SMP = int(os.environ.get("SMP", "1"))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
res = {}
for i in range(n):
    for name in sys.argv[2:]:
        iso, rom = name.split(":")
        t, k = boot(f"/tmp/iso-{iso}.iso", rom == "norom")
        res.setdefault(name, []).append(t)
        print(name, {a: round(b,3) for a,b in t.items()}, k, flush=True)
for name, ts in res.items():
    print(name, {k: round(statistics.median(x[k] for x in ts if k in x),3) for k in ts[0]})
