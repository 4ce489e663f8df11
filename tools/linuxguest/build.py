"""Builds the Linux comparison guest from Debian packages: a kernel and an initramfs.

Kernel and busybox: Debian's packages pinned in tools/deps/linuxguest-debs.txt, which
tools/bootstrap.sh downloads and unpacks into build/linuxguest/debs/NAME (never installed on
the host). Initramfs
(newc cpio, gzip): busybox-static, the virtio-net driver modules of that kernel with their
dependencies (Debian builds them as modules, so init must load them, issue 5), the
applications with the shared libraries ldd finds, /etc/protocols (NPtcp needs it), nginx's
configuration and the 175-byte page, and rootfs/init. Built once into build/linuxguest/ and
reused while its inputs (this folder, package versions, binaries) are unchanged.
"""
import argparse
import gzip
import hashlib
import os
import re
import shlex
import shutil
import stat
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
TOP = os.path.dirname(TOOLS)
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
OUT = os.path.join(BUILD, "linuxguest")
from loadgen import apps  # one definition of ports and NPtcp options

NHTTPD_LINUX = os.path.join(BUILD, "apps", "nhttpd", "nhttpd-linux")
NHTTPD_ARGS = os.environ.get("NHTTPD_LINUX_ARGS", f"--port={apps.HTTP_PORT} --root=/srv/www")
NHTTPD_INDEXES = (os.path.join(BUILD, "apps", "nhttpd", "www", "index.html"),
                  os.path.join(TOP, "apps", "nhttpd", "www", "index.html"))
PATCHED_NPTCP = os.path.join(BUILD, "loadgen", "NPtcp")
DRIVER_MODULES = ("virtio_pci", "virtio_net")
DEBS = os.path.join(OUT, "debs")  # the unpacked packages (tools/bootstrap.sh)
BUSYBOX = os.path.join(DEBS, "busybox-static", "bin", "busybox")
FETCH_HINT = "tools/bootstrap.sh fetches and unpacks it (tools/deps/linuxguest-debs.txt)"


class BuildError(RuntimeError):
    """The guest cannot be built (a package or binary is missing); the message says which."""


def _run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def kernel_package(debs=DEBS):
    """(package folder, release) of the unpacked kernel package under debs: the one whose
    boot/ holds a vmlinuz (e.g. .../linux-image-6.1.0-56-amd64, 6.1.0-56-amd64)."""
    found = sorted((os.path.join(debs, d), n[len("vmlinuz-"):])
                   for d in (os.listdir(debs) if os.path.isdir(debs) else ())
                   if d.startswith("linux-image-") and os.path.isdir(os.path.join(debs, d, "boot"))
                   for n in os.listdir(os.path.join(debs, d, "boot")) if n.startswith("vmlinuz-"))
    if len(found) != 1:
        raise BuildError(f"want one unpacked kernel package in {debs}, found "
                         f"{[r for _, r in found] or 'none'}: {FETCH_HINT}")
    return found[0]


def kernel_release():
    """The release (e.g. 6.1.0-56-amd64) of the guest's kernel package."""
    return kernel_package()[1]


def unpacked_versions(debs=DEBS):
    """{package: version} of every package unpacked under debs (bootstrap.sh's .version)."""
    out = {}
    for name in sorted(os.listdir(debs) if os.path.isdir(debs) else ()):
        try:
            with open(os.path.join(debs, name, ".version")) as f:
                out[name] = f.read().strip()
        except OSError:
            continue
    return out


def module_order(release, names, modules_dir=None):
    """Module files (relative paths) to insmod in order: dependencies first (modules.dep)."""
    modules_dir = modules_dir or os.path.join(kernel_package()[0], "lib", "modules")
    deps = {}
    with open(os.path.join(modules_dir, release, "modules.dep")) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
    by_name = {os.path.basename(m).split(".ko")[0].replace("-", "_"): m for m in deps}
    order = []

    def visit(mod):
        for d in reversed(deps[mod]):  # modules.dep lists the nearest dependency first
            visit(d)
        if mod not in order:
            order.append(mod)
    for name in names:
        if name not in by_name:
            raise BuildError(f"module {name} not in {release}'s modules.dep")
        visit(by_name[name])
    return order


def applications():
    """[(path in guest, path on host)] of the application binaries; nhttpd only if built."""
    nptcp = PATCHED_NPTCP if os.path.isfile(PATCHED_NPTCP) else "/usr/bin/NPtcp"
    apps_ = [("/usr/bin/memcached", "/usr/bin/memcached"), ("/usr/sbin/nginx", "/usr/sbin/nginx"),
             ("/usr/bin/NPtcp", nptcp)]
    if os.path.isfile(NHTTPD_LINUX):
        apps_.append(("/usr/bin/nhttpd-linux", NHTTPD_LINUX))
    for _, host in apps_:
        if not os.access(host, os.X_OK):
            raise BuildError(f"{host} missing (tools/bootstrap.sh installs the packages; "
                             f"make -C tools/loadgen builds NPtcp)")
    return apps_


def shared_libraries(binary):
    """Absolute paths of the shared libraries (and loader) ldd lists for binary."""
    r = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if "not a dynamic executable" in r.stdout + r.stderr:
        return []
    if r.returncode != 0:
        raise BuildError(f"ldd {binary}: {r.stderr.strip()}")
    libs = []
    for line in r.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1:
            path = words[words.index("=>") + 1]
        elif words and words[0].startswith("/"):
            path = words[0]
        else:
            continue
        if path.startswith("/"):
            libs.append(path)
    return libs


def _substitutions():
    return {"@MEMCACHED_PORT@": str(apps.MEMCACHED_PORT), "@HTTP_PORT@": str(apps.HTTP_PORT),
            "@NETPIPE_PINGPONG_PORT@": str(apps.NETPIPE_PINGPONG_PORT),
            "@NETPIPE_PINGPONG_ARGS@": shlex.join(apps.NETPIPE_PINGPONG_ARGS),
            "@NETPIPE_BIDIR_ARGS@": shlex.join(apps.NETPIPE_BIDIR_ARGS),
            "@NHTTPD_ARGS@": NHTTPD_ARGS}


def _template(path):
    with open(path) as f:
        text = f.read()
    for key, value in _substitutions().items():
        text = text.replace(key, value)
    return text.encode()


def index_page():
    """The 175-byte page: nhttpd's own when it exists, so both web servers serve one file."""
    found = [p for p in NHTTPD_INDEXES if os.path.isfile(p)]
    path = found[0] if found else os.path.join(HERE, "rootfs", "index.html")
    with open(path, "rb") as f:
        return f.read()


def file_list(release):
    """{guest path: (mode, bytes or host path)}: everything the initramfs holds."""
    files = {"/init": (0o755, _template(os.path.join(HERE, "rootfs", "init"))),
             "/etc/nginx/nginx.conf": (0o644, _template(os.path.join(HERE, "rootfs",
                                                                     "nginx.conf"))),
             "/srv/www/index.html": (0o644, index_page()),
             "/etc/protocols": (0o644, "/etc/protocols"),
             "/etc/passwd": (0o644, b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n"),
             "/etc/group": (0o644, b"root:x:0:\nnogroup:x:65534:\n"),
             "/bin/busybox": (0o755, BUSYBOX)}
    if not os.path.isfile(BUSYBOX):
        raise BuildError(f"{BUSYBOX} missing: {FETCH_HINT}")
    kernel_root = kernel_package()[0]
    modules = module_order(release, DRIVER_MODULES)
    files["/etc/modules-order"] = (0o644, "".join(f"/lib/modules/{release}/{m}\n"
                                                  for m in modules).encode())
    for m in modules:
        files[f"/lib/modules/{release}/{m}"] = (0o644, os.path.join(kernel_root, "lib",
                                                                    "modules", release, m))
    for guest, host in applications():
        files[guest] = (0o755, host)
        for lib in shared_libraries(host):
            files[lib] = (0o755, lib)
    return files


# ---- newc cpio (the kernel's initramfs format, Documentation/driver-api/early-userspace) ----
def _cpio_entry(name, mode, data, ino):
    header = "070701" + "".join(f"{v:08X}" for v in (
        ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0))
    out = header.encode() + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4) + data
    return out + b"\0" * (-len(out) % 4)


def write_cpio(files, path):
    """Writes files ({guest path: (mode, bytes)}) with their parent directories as gzip'd newc."""
    dirs = sorted({p[:i] for p in files for i in range(1, len(p)) if p[i] == "/"}
                  | {"/dev", "/proc", "/sys", "/tmp", "/run"})
    entries, ino = [], 1
    for d in dirs:
        entries.append(_cpio_entry(d.lstrip("/"), stat.S_IFDIR | 0o755, b"", ino))
        ino += 1
    for p in sorted(files):
        mode, data = files[p]
        entries.append(_cpio_entry(p.lstrip("/"), stat.S_IFREG | mode, data, ino))
        ino += 1
    entries.append(_cpio_entry("TRAILER!!!", 0, b"", 0))
    with gzip.GzipFile(path, "wb", compresslevel=6, mtime=0) as f:
        f.write(b"".join(entries))


def _read(source):
    if isinstance(source, bytes):
        return source
    with open(source, "rb") as f:
        return f.read()


def _input_key(release, files):
    h = hashlib.sha256(release.encode())
    for root, _, names in sorted(os.walk(HERE)):
        for n in sorted(names):
            if n.endswith((".py", "init", ".conf", ".html")) and "__pycache__" not in root:
                h.update(n.encode() + _read(os.path.join(root, n)))
    for p, (mode, data) in sorted(files.items()):
        h.update(p.encode() + str(mode).encode())
        if isinstance(data, bytes):
            h.update(data)
        else:
            st = os.stat(data)
            h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def build(out=OUT, force=False):
    """Builds (or reuses) the guest; returns {"kernel", "initrd", "release", "apps",
    "packages" (the unpacked packages' versions)}.
    Raises BuildError if a package or binary is missing."""
    kernel_root, release = kernel_package()
    kernel = os.path.join(kernel_root, "boot", f"vmlinuz-{release}")
    files = file_list(release)
    key = _input_key(release, files)
    initrd = os.path.join(out, "initrd.gz")
    stamp = os.path.join(out, "inputs.sha256")
    os.makedirs(out, exist_ok=True)
    served = ["memcached", "nginx", "netpipe"] + (
        ["nhttpd"] if "/usr/bin/nhttpd-linux" in files else [])
    if not force and os.path.isfile(initrd) and os.path.isfile(stamp):
        with open(stamp) as f:
            if f.read().strip() == key:
                return {"kernel": kernel, "initrd": initrd, "release": release, "apps": served,
                        "packages": unpacked_versions()}
    tmp = f"{initrd}.{os.getpid()}.tmp"  # concurrent builders must not share the temporary file
    write_cpio({p: (mode, _read(src)) for p, (mode, src) in files.items()}, tmp)
    os.replace(tmp, initrd)
    with open(stamp, "w") as f:
        f.write(key + "\n")
    return {"kernel": kernel, "initrd": initrd, "release": release, "apps": served,
            "packages": unpacked_versions()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--force", action="store_true", help="rebuild even if the inputs are unchanged")
    print(build(force=p.parse_args(argv).force))


if __name__ == "__main__":
    main()
