"""Experiment only: holds.py with the guest clock counted in instructions (QEMU -icount)."""
import os, sys
sys.path.insert(0, "/work/main/tools"); sys.path.insert(0, "/work/main/tools/bench")
import kvmcost
SHIFT = os.environ.get("ICOUNT_SHIFT", "0")
_orig = kvmcost.args_for
def args_for(cost_file, ledger_path, interval_ms=100, dilation=None, clock=None):
    return _orig(cost_file, ledger_path, interval_ms, dilation, os.environ.get("KC_CLOCK", "wall")) + \
        ["-icount", f"shift={SHIFT},align=off,sleep=on"]
kvmcost.args_for = args_for
from nomvm import placement
_vi = placement.vcpu_index
def vcpu_index(name):
    return 0 if name.strip() == "ALL CPUs/TCG" else _vi(name)  # round-robin TCG's one thread
placement.vcpu_index = vcpu_index
from vmcounters import threads as _thr
_thr.vcpu_index = vcpu_index
import holds
sys.exit(holds.main())
