"""The description of the machine and software a result was measured on (machine.json)."""
import datetime
import os
import platform
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Debian packages installed on the host whose versions decide the comparison (guests' binaries,
# load tools, emulator). The Linux guest's kernel and busybox are not installed: their
# versions come from the packages unpacked under build/linuxguest/debs (guest_packages).
PACKAGES = ("qemu-system-x86", "memcached", "libmemcached-tools", "wrk", "netpipe-tcp",
            "nginx-light")


def _run(argv, cwd=None):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def cpu_model(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# The folders whose sources decide what an experiment measures: the guests' code (nom's kernel,
# libnom, stack, driver and applications; the Linux and OSv guests' build scripts), the load
# generators and the exit-cost QEMU's patches and costs. Not the analysis (tools/experiment):
# a report may be made again by newer code from the same records.
MEASURED_SOURCES = ("kernel", "libnom", "net", "drivers", "apps", "linker", "tools/kvmcost",
                    "tools/linuxguest", "tools/osvguest", "tools/loadgen")


def measured_sources(top=TOP, folders=MEASURED_SOURCES):
    """{folder: git tree id at HEAD, or "modified" where the work tree differs from it}, or
    None outside git: what the runs of a session were built from (runner.py compares a
    resumed session's with its folder's first, so that one experiment never mixes builds)."""
    trees = {}
    for folder in folders:
        tree = _run(["git", "rev-parse", f"HEAD:{folder}"], cwd=top)
        if tree is None:
            return None
        changed = _run(["git", "status", "--porcelain", "--untracked-files=no", "--", folder],
                       cwd=top)
        trees[folder] = "modified" if changed else tree
    return trees


def sources_differ(stored, now):
    """["folder: ..."] for each folder whose sources differ between stored and now (both
    measured_sources results); a folder modified in either never matches."""
    out = []
    for folder in sorted(set(stored) | set(now)):
        a, b = stored.get(folder), now.get(folder)
        if a != b or a == "modified":
            out.append(f"{folder}: {a or 'absent'} then, {b or 'absent'} now")
    return out


# What a host is, for the runs of one results folder: its calibration reference of D
# (calibration.py) and its host-speed samples (hostspeed.py) are this host's, so a run
# measured on another CPU would be judged against a foreign reference. The kernel and the
# date may change between sessions on one host; these may not.
HOST_FIELDS = ("cpu_model", "cpus", "accel")


def hosts_differ(stored, now):
    """["field: ... then, ... now"] for each HOST_FIELDS entry where the machine.json stored
    and now's describe() differ."""
    return [f"{k}: {stored.get(k)!r} then, {now.get(k)!r} now" for k in HOST_FIELDS
            if stored.get(k) != now.get(k)]


def git_commit(top=TOP):
    """(short commit, dirty?) of the work tree, ("unknown", False) outside git."""
    commit = _run(["git", "rev-parse", "--short=10", "HEAD"], cwd=top) or "unknown"
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=top)
    return commit, bool(status)


def package_versions(names=PACKAGES):
    out = {}
    for name in names:
        out[name] = _run(["dpkg-query", "-W", "-f=${Version}", name]) or "not installed"
    return out


def guest_packages():
    """{package: version} of the Linux guest's unpacked packages (tools/linuxguest)."""
    try:
        import linuxguest
        return linuxguest.unpacked_versions() or {"none": "not fetched (tools/bootstrap.sh)"}
    except ImportError as e:
        return {"none": f"tools/linuxguest cannot load: {e}"}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def describe(accel, accel_reason):
    commit, dirty = git_commit()
    qemu = _run(["qemu-system-x86_64", "--version"])
    return {
        "date_utc": utc_now(),
        "accel": accel,
        "accel_reason": accel_reason,
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "host_kernel": platform.release(),
        "qemu": qemu.splitlines()[0] if qemu else "not found",
        "packages": package_versions(),
        "guest_packages": guest_packages(),
        "python": platform.python_version(),
        "commit": commit,
        "dirty": dirty,
    }


def stamped_output(kind, top=TOP):
    """results/<kind>-<UTC minute>-<commit>[-dirty]: where a bench tool writes by default."""
    commit, dirty = git_commit(top)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%MZ")
    return os.path.join(top, "results", f"{kind}-{stamp}-{commit}{'-dirty' if dirty else ''}")


def default_output(top=TOP):
    """results/<UTC date>-<commit>[-dirty]: the folder a run writes into by default."""
    commit, dirty = git_commit(top)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return os.path.join(top, "results", f"{date}-{commit}{'-dirty' if dirty else ''}")
