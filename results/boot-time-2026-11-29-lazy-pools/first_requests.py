import os, sys, tempfile, time
tree = sys.argv[1]
os.environ["BUILD"] = os.path.join(tree, "build")
sys.path[:0] = [os.path.join(tree, "tools", "bench"), os.path.join(tree, "tools")]
import boot_time
for b in range(3):
    with tempfile.TemporaryDirectory() as d:
        vm, port, stop = boot_time.start_nom(d, None)
        vm.start()
        while "nhttpd: listening" not in vm.log(): time.sleep(0.001)
        ts = []
        for i in range(6):
            t = time.monotonic(); ok = boot_time.answered(port); ts.append((time.monotonic() - t) * 1000)
            if i == 3: time.sleep(0.05)
        stop()
        print("ms per request:", " ".join(f"{x:.1f}" for x in ts))
