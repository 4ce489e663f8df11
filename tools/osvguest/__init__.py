"""The OSv comparison guest: runs an OSv image the user supplies (README.md says how to get one).

The repository holds no OSv code and builds none. An image is given as a path: either one image
file, or a directory with one image per application named APP.img, APP.qcow2 or APP.raw
(e.g. memcached.qcow2, lighttpd.qcow2), optionally with OSv's kernel.elf beside them to boot it
directly with our command line. Without an image for an application, unavailable() says why and
the experiment reports that guest's rows as "not run".

    reason = osvguest.unavailable(image_path, "memcached")   # None when it can run
    vm = osvguest.make_vm(image_path, "memcached", nic, extra_args=counters.qemu_args())
    lab.start_vm(vm); osvguest.wait_ready(lab, "memcached")

Same NIC as every guest (virtio-net-pci on the lab's tap), 1 vCPU, 128 MiB (paper section 6).
The image is opened with snapshot=on: a run never changes the user's file.
"""
import os

from nomvm import VM
import netlab
from loadgen import apps

MEMORY_MB = 128
APP_PORTS = {"memcached": apps.MEMCACHED_PORT, "lighttpd": apps.HTTP_PORT,
             "nginx": apps.HTTP_PORT, "netpipe": apps.NETPIPE_PINGPONG_PORT}
IMAGE_SUFFIXES = (".img", ".qcow2", ".raw")
NETMASK = "255.255.255.0"


def find_image(image_path, app):
    """The image file for app under image_path (a file, or a directory of APP.img/.qcow2/.raw),
    or None."""
    if not image_path:
        return None
    if os.path.isfile(image_path):
        return image_path
    for suffix in IMAGE_SUFFIXES:
        candidate = os.path.join(image_path, app + suffix)
        if os.path.isfile(candidate):
            return candidate
    return None


def unavailable(image_path, app):
    """None if app can run on OSv here, else the reason ("not run: ...")."""
    if app not in APP_PORTS:
        return f"not run: no OSv set-up for {app} (known: {', '.join(APP_PORTS)})"
    if not image_path:
        return "not run: no OSv image given (tools/osvguest/README.md says how to make one)"
    if not find_image(image_path, app):
        return f"not run: no OSv image for {app} in {image_path}"
    return None


def boot_args(image_path, app, guest_ip=netlab.GUEST_IP, cmdline=None):
    """QEMU arguments that boot app's image. With OSv's kernel.elf beside the image and a
    cmdline given, OSv's kernel boots directly with -append "--ip=eth0,ADDR,MASK CMDLINE";
    otherwise the image boots with its own command line, which must set the address
    (README.md). Raises FileNotFoundError when there is no image for app."""
    image = find_image(image_path, app)
    if not image:
        raise FileNotFoundError(unavailable(image_path, app))
    fmt = "qcow2" if image.endswith(".qcow2") else "raw"
    args = ["-drive", f"file={image},if=virtio,format={fmt},snapshot=on,cache=unsafe"]
    kernel = os.path.join(os.path.dirname(image), "kernel.elf")
    if cmdline and os.path.isfile(kernel):
        args += ["-kernel", kernel, "-append", f"--ip=eth0,{guest_ip},{NETMASK} {cmdline}"]
    return args


def make_vm(image_path, app, nic, extra_args=(), workdir=None, accel=None, cmdline=None,
            memory_mb=MEMORY_MB):
    """A nomvm.VM (not started) running app's OSv image with nic. Raises FileNotFoundError
    when there is no image for app."""
    return VM(smp=1, memory_mb=memory_mb, nics=[nic], accel=accel, workdir=workdir, name="osv",
              extra_args=boot_args(image_path, app, cmdline=cmdline) + list(extra_args))


def wait_ready(lab, app, timeout=300.0, vm=None):
    """Waits until app accepts TCP connections on the guest's address (OSv prints no common
    ready line); raises TimeoutError (with the console's tail when vm is given)."""
    try:
        netlab.wait_tcp(lab, lab.guest_ip, APP_PORTS[app], timeout)
    except TimeoutError as e:
        raise TimeoutError(f"{e}\n{vm.tail(30) if vm else ''}") from None
