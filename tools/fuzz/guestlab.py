"""What the guest-level fuzz and soak runs (memcached_wire.py, soak.py) share: nom booted with its
applications in a network namespace (tools/netlab), a helper run inside that namespace whose
last line of output is a JSON summary, and the console lines that mean trouble."""
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from nomvm import NET_UP, VM, make_iso  # NET_UP: nom_net_start's line, one per application

TOP = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", TOP / "build"))
KERNEL = BUILD / "kernel" / "nom.elf"
# What must never appear on nom's console while the applications serve (kernel and libnom lines).
TROUBLE = re.compile(r"PANIC|nom: fault|nom: app \S+ (killed|exited)|assert", re.I)
BOOT_TIMEOUT_S = 240


def boot(lab, modules, nics, workdir, name):
    """Boots nom with modules [(elf, cmdline)] and nics inside lab; returns the VM once every
    application's network is up; raises TimeoutError (with the console's tail) otherwise."""
    os.makedirs(workdir, exist_ok=True)
    iso = make_iso(str(KERNEL), [(str(e), c) for e, c in modules], os.path.join(workdir, "nom.iso"))
    vm = VM(iso=iso, memory_mb=128, nics=nics, workdir=workdir, name=name)
    lab.start_vm(vm)
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while len(re.findall(NET_UP, vm.log())) < len(modules):
        if time.monotonic() > deadline or vm.proc.poll() is not None:
            raise TimeoutError("the applications' networks did not come up:\n" + vm.tail(30))
        time.sleep(1)
    return vm


def run_inside(lab, script, args, timeout):
    """Runs python3 script args inside lab; returns (its output, the JSON object on its last
    stdout line, or {} if there is none)."""
    p = lab.run([sys.executable, str(script), *map(str, args)], timeout=timeout)
    lines = p.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else {}
    except ValueError:
        summary = {}
    return p.stdout + p.stderr, summary if isinstance(summary, dict) else {}


@dataclass
class GuestRun:
    """What a run gives back: the inside helper's JSON summary, its output, nom's console."""
    summary: dict = field(default_factory=dict)
    output: str = ""
    log: str = ""
