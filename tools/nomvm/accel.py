"""Which QEMU accelerator to use: KVM only with real hardware virtualization, else TCG.

DESIGN.md: this workplace's /dev/kvm is a nested "PVM" hypervisor without vmx/svm that emulates
every guest ring-0 instruction and kills guests on some of them, so it is never chosen here.
NOM_ACCEL=kvm|tcg overrides the choice.
"""
import os


def _cpu_has_hw_virt(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    return "vmx" in flags or "svm" in flags
    except OSError:
        pass
    return False


def choose_accel(env=None, cpuinfo="/proc/cpuinfo", kvm_dev="/dev/kvm"):
    """Returns (accel, reason) with accel in {"kvm", "tcg"}."""
    env = os.environ if env is None else env
    forced = env.get("NOM_ACCEL", "").strip().lower()
    if forced:
        if forced not in ("kvm", "tcg"):
            raise ValueError(f"NOM_ACCEL must be kvm or tcg, not {forced!r}")
        return forced, f"NOM_ACCEL={forced}"
    if _cpu_has_hw_virt(cpuinfo) and os.access(kvm_dev, os.R_OK | os.W_OK):
        return "kvm", "CPU has vmx/svm and /dev/kvm is usable"
    return "tcg", "no hardware virtualization (no vmx/svm flag): TCG"
