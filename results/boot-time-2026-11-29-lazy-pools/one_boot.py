"""One boot of nom serving nhttpd, with the tree's own tools and build: prints one JSON line,
the milestones of tools/bench/boot_time.py (seconds from QEMU's start) and the kernel's own
boot-step line.

    python3 one_boot.py TREE LABEL
"""
import json
import os
import re
import sys
import tempfile

tree, label = sys.argv[1], sys.argv[2]
os.environ["BUILD"] = os.path.join(tree, "build")
sys.path[:0] = [os.path.join(tree, "tools", "bench"), os.path.join(tree, "tools")]
import boot_time  # noqa: E402  (after the path: the tree's own)

steps = {}
start_nom = boot_time.start_nom


def start_nom_keeping_steps(workdir, memory_mb, grub_dir=None, **how):
    vm, port, stop = start_nom(workdir, memory_mb, grub_dir, **how)

    def stop_after_reading():
        m = re.search(r"nom: kernel boot.*", vm.log())
        steps["line"] = m.group(0) if m else None
        stop()
    return vm, port, stop_after_reading


boot_time.start_nom = start_nom_keeping_steps
with tempfile.TemporaryDirectory() as d:
    seen = boot_time.one_boot("nom", d, None, 120)
print(json.dumps({"label": label, "tree": tree, **{k: round(v, 4) for k, v in seen.items()},
                  "kernel_steps": steps.get("line")}), flush=True)
