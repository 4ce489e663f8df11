import subprocess, time, os, sys, tempfile
iso = sys.argv[1]
d = tempfile.mkdtemp(); ser = os.path.join(d, "s.log"); dbg = os.path.join(d, "dbg.log")
open(ser,"w").close(); open(dbg,"w").close()
args = ["qemu-system-x86_64","-machine","q35","-m","128","-smp","1","-display","none","-no-reboot","-nodefaults",
        "-serial",f"file:{ser}","-accel","tcg","-cpu","max","-cdrom",iso,"-boot","d",
        "-chardev",f"file,id=dbg,path={dbg}","-device","isa-debugcon,iobase=0x402,chardev=dbg",
        "-netdev","user,id=n0","-device","virtio-net-pci,netdev=n0,disable-legacy=on,disable-modern=off,romfile="]
t0 = time.monotonic(); p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seen = 0; lines = []
while time.monotonic() - t0 < 5:
    s = open(dbg, errors="replace").read()
    if len(s) > seen:
        now = time.monotonic() - t0
        for l in s[seen:].splitlines():
            lines.append((now, l))
        seen = len(s)
    if "nom: booting" in open(ser).read():
        lines.append((time.monotonic()-t0, "<<nom: booting>>")); break
    time.sleep(0.001)
p.kill(); p.wait()
last = -1
for t, l in lines:
    if t - last > 0.004 or "nom" in l: print(f"{t:.3f} {l[:100]}")
    last = t
