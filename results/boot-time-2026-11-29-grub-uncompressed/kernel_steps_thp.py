import re, sys, tempfile
sys.path.insert(0, "/work/main/tools/bench"); sys.path.insert(0, "/work/main/tools")
import boot_time
def thp():
    v = dict(l.split() for l in open("/proc/vmstat"))
    return int(v["thp_fault_alloc"]), int(v["thp_fault_fallback"])
orig = boot_time.start_nom
def start_nom(workdir, memory_mb, grub_dir=None):
    vm, port, stop = orig(workdir, memory_mb, grub_dir)
    def stop2():
        m = re.search(r"apps (\d+)", vm.log())
        print("apps_us", m.group(1) if m else None, end=" ", flush=True)
        stop()
    return vm, port, stop2
boot_time.start_nom = start_nom
for i in range(int(sys.argv[1])):
    a0 = thp()
    with tempfile.TemporaryDirectory() as d:
        boot_time.one_boot("nom", d, None, 60)
    a1 = thp()
    print("thp_fault_alloc +%d fallback +%d" % (a1[0] - a0[0], a1[1] - a0[1]), flush=True)
