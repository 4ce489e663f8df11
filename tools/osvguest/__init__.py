"""The OSv comparison guest: runs the OSv images build.py makes (or any the user supplies).

The repository holds no OSv code. build.py builds the images from an OSv source tree into
build/osv/ (DEFAULT_IMAGES), where every function here looks when no image is given. An image
is given as a path: either one image file, or a directory with one image per application
(memcached.qcow2, nginx.qcow2, ...; see IMAGE_NAMES), optionally with OSv's kernel.elf beside
them to boot it directly with our command line. Without an image for an application,
unavailable() says why and the experiment reports that guest's rows as "not run". Same shape
as tools/linuxguest:

    reason = osvguest.unavailable(image, "memcached")       # None when it can run
    vm = osvguest.make_vm("memcached", nic, image, extra_args=counters.qemu_args())
    lab.start_vm(vm); osvguest.wait_ready(vm)               # inside a netlab.NetLab

Same NIC as every guest (virtio-net-pci on the lab's tap), 1 vCPU, 128 MiB (paper section 6).
The image is opened with snapshot=on: a run never changes the image file.
"""
import os
import subprocess
import time

from nomvm import VM
import netlab
from loadgen import apps

MEMORY_MB = 128
DEFAULT_IMAGES = os.path.join(os.environ.get("BUILD") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build"), "osv")
# The experiment's application slots, the image names that serve each (OSv runs lighttpd as
# its web server, issue 5), and the port that says it is ready.
IMAGE_NAMES = {"memcached": ("memcached",), "nhttpd": ("lighttpd", "nginx"),
               "netpipe": ("netpipe",)}
APPS = tuple(IMAGE_NAMES)
APP_PORTS = {"memcached": apps.MEMCACHED_PORT, "nhttpd": apps.HTTP_PORT,
             "netpipe": apps.NETPIPE_PINGPONG_PORT}
IMAGE_SUFFIXES = (".qcow2", ".img", ".raw")
NETMASK = "255.255.255.0"


def find_image(image, app, default=DEFAULT_IMAGES):
    """The image file for app: image itself if it is a file, else the first IMAGE_NAMES[app]
    + suffix in the directory image (default when image is None); None if there is none."""
    image = image or default
    if not image:
        return None
    if os.path.isfile(image):
        return image
    for name in IMAGE_NAMES.get(app, ()):
        for suffix in IMAGE_SUFFIXES:
            candidate = os.path.join(image, name + suffix)
            if os.path.isfile(candidate):
                return candidate
    return None


def unavailable(image, app, default=DEFAULT_IMAGES):
    """None if app can run on OSv here, else the reason ("not run: ..."); image None means
    the images build.py made in default."""
    if app not in APPS:
        return f"not run: no OSv set-up for {app} (known: {', '.join(APPS)})"
    if not image and not find_image(None, app, default):
        return (f"not run: no OSv image given nor built in {default} "
                "(python3 tools/osvguest/build.py --osv-src OSV_TREE builds them)")
    if not find_image(image, app, default):
        names = "/".join(IMAGE_NAMES[app])
        return f"not run: no OSv image for {app} ({names}.qcow2/.img/.raw) in {image}"
    return None


def boot_args(app, image, guest_ip=netlab.GUEST_IP, cmdline=None):
    """QEMU arguments that boot app's image. With OSv's kernel.elf beside the image and a
    cmdline given, OSv's kernel boots directly with -append "--ip=eth0,ADDR,MASK CMDLINE";
    otherwise the image boots with its own command line, which must set the address
    (README.md). Raises FileNotFoundError when there is no image for app."""
    path = find_image(image, app)
    if not path:
        raise FileNotFoundError(unavailable(image, app))
    fmt = "qcow2" if path.endswith(".qcow2") else "raw"
    args = ["-drive", f"file={path},if=virtio,format={fmt},snapshot=on,cache=unsafe"]
    kernel = os.path.join(os.path.dirname(path), "kernel.elf")
    if cmdline and os.path.isfile(kernel):
        args += ["-kernel", kernel, "-append", f"--ip=eth0,{guest_ip},{NETMASK} {cmdline}"]
    return args


class OsvVM(VM):
    """A nomvm.VM that knows which application it serves and where (OSv prints no common
    ready line, so readiness is the application's port accepting a connection)."""

    def __init__(self, app, guest_ip, **kwargs):
        super().__init__(**kwargs)
        self.app, self.guest_ip = app, guest_ip

    def namespace(self):
        """The network namespace netlab.NetLab.start_vm put QEMU in, or None."""
        return self.args[3] if self.args[:3] == ["ip", "netns", "exec"] else None


def make_vm(app, nic, image, extra_args=(), workdir=None, accel=None, cmdline=None,
            guest_ip=netlab.GUEST_IP, memory_mb=MEMORY_MB):
    """An OsvVM (not started) running app's OSv image with nic (a nomvm.Nic). Raises
    FileNotFoundError when there is no image for app."""
    return OsvVM(app, guest_ip, smp=1, memory_mb=memory_mb, nics=[nic], accel=accel,
                 workdir=workdir, name="osv",
                 extra_args=boot_args(app, image, guest_ip, cmdline) + list(extra_args))


def ready_probe(app, guest_ip):
    """The command that succeeds once app's guest is ready: a TCP connection to its port
    (bash's /dev/tcp), except for NetPIPE, whose NPtcp receiver would take a probe
    connection as a transmitter (a session that ends at once): there the guest answering ping
    says the network is up, and the NPtcp client retries until the receiver listens."""
    if app == "netpipe":
        return ["ping", "-c", "1", "-W", "2", guest_ip]
    return ["bash", "-c", f"exec 3<>/dev/tcp/{guest_ip}/{APP_PORTS[app]}"]


def halted(console):
    """Whether OSv's console says it stopped for good (its halt(): "Halting.", e.g. after
    "Neither paravirtual clock nor HPET is available."; abort(): "Aborted"). QEMU goes on
    running a halted OSv, so only its console tells."""
    return any(line.strip() in ("Halting.", "Aborted") or line.startswith("Aborted")
               for line in console.splitlines())


def wait_ready(vm, timeout=300.0):
    """Waits until vm's application is ready (ready_probe), probing from the VM's namespace;
    raises TimeoutError with the console's tail, also when QEMU ends first or OSv halts."""
    ns = vm.namespace()
    probe = ready_probe(vm.app, vm.guest_ip)
    if ns:
        probe = ["ip", "netns", "exec", ns] + probe
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if vm.proc and vm.proc.poll() is not None:
            raise TimeoutError(f"QEMU exited ({vm.proc.returncode}):\n{vm.tail(30)}")
        if halted(vm.log()):
            raise TimeoutError(f"OSv halted while booting:\n{vm.tail(30)}")
        if subprocess.run(probe, capture_output=True, timeout=30).returncode == 0:
            return
        time.sleep(0.5)
    raise TimeoutError(f"{vm.app} on OSv was not ready within {timeout} s:\n{vm.tail(30)}")
