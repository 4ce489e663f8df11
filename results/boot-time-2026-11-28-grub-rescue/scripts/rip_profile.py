import subprocess, time, os, sys, tempfile, socket, json, re, collections
iso = sys.argv[1]
d = tempfile.mkdtemp(); ser = os.path.join(d, "s.log"); qmp = os.path.join(d, "qmp.sock")
open(ser,"w").close()
args = ["qemu-system-x86_64","-machine","q35","-m","128","-smp","1","-display","none","-no-reboot","-nodefaults",
        "-serial",f"file:{ser}","-accel","tcg","-cpu","max","-cdrom",iso,"-boot","d",
        "-qmp",f"unix:{qmp},server=on,wait=off",
        "-netdev","user,id=n0","-device","virtio-net-pci,netdev=n0,disable-legacy=on,disable-modern=off,romfile="]
t0 = time.monotonic(); p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not os.path.exists(qmp): time.sleep(0.001)
s = socket.socket(socket.AF_UNIX); s.connect(qmp); f = s.makefile("rw")
f.readline(); f.write(json.dumps({"execute":"qmp_capabilities"})+"\n"); f.flush(); f.readline()
samples = []
while time.monotonic() - t0 < 3:
    f.write(json.dumps({"execute":"human-monitor-command","arguments":{"command-line":"info registers"}})+"\n"); f.flush()
    r = json.loads(f.readline())["return"]
    rip = re.search(r"RIP=([0-9a-f]+)", r) or re.search(r"EIP=([0-9a-f]+)", r)
    cs = re.search(r"CS =([0-9a-f]+)", r)
    pe = re.search(r"CR0=([0-9a-f]+)", r)
    samples.append((time.monotonic()-t0, rip.group(1) if rip else "?", cs.group(1) if cs else "?", int(pe.group(1),16)&1 if pe else -1))
    if "nom: booting" in open(ser).read(): break
p.kill(); p.wait()
for t, rip, cs, pe in samples[::max(1,len(samples)//60)]:
    print(f"{t:.3f} cs={cs} rip={rip} pe={pe}")
c = collections.Counter()
for t, rip, cs, pe in samples:
    lin = (int(cs,16)<<4)+int(rip,16) if not pe else int(rip,16)
    c[(pe, lin >> 12)] += 1
print(len(samples), "samples")
for k, v in c.most_common(15): print(k[0], hex(k[1]<<12), v)
import bisect
syms = []
for line in subprocess.run(["nm","-n","/usr/lib/grub/i386-pc/kernel.exec"],capture_output=True,text=True).stdout.splitlines():
    a = line.split()
    if len(a) == 3 and a[1] in "tTwW": syms.append((int(a[0],16), a[2]))
addrs = [a for a,_ in syms]
fc = collections.Counter()
for t, rip, cs, pe in samples:
    lin = (int(cs,16)<<4)+int(rip,16) if not pe else int(rip,16)
    if 0x9000 <= lin < 0x20000:
        i = bisect.bisect_right(addrs, lin) - 1
        fc[syms[i][1] if i >= 0 else "?"] += 1
    elif lin >= 0xe0000 and lin < 0x100000 or lin >= 0xfff00000: fc["seabios"] += 1
    elif 0x8000 <= lin < 0x9000: fc["lzma/startup"] += 1
    else: fc[f"other {hex(lin>>16)}"] += 1
print(fc.most_common(25))
rc = collections.Counter()
for t, rip, cs, pe in samples:
    lin = (int(cs,16)<<4)+int(rip,16) if not pe else int(rip,16)
    rc[(pe, hex(lin))] += 1
print(rc.most_common(20))
# timeline of phases
