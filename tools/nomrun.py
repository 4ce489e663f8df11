"""`make run`: boots the default nom image with its applications reachable on 127.0.0.1.

Each application owns one virtio-net NIC (QEMU user networking); the host ports forwarded to
each NIC are listed in DEFAULT_NICS, in the order of apps/default-image.txt. It also starts the
price provider on the host for the image's priced (PRICE_PORT). Ctrl-C (or SIGTERM) stops the
VM and the provider, each by the PID nomrun started.

With --port-shift the provider moves too (PRICE_PORT + shift). The image's priced asks the host
at 10.0.2.2:PRICE_PORT, which QEMU user networking maps to 127.0.0.1 with the same port, so with
--kernel and --modules (what `make run` passes) nomrun boots an image of its own whose priced asks
the shifted port; without them it boots --iso as it is, and priced finds nothing on 7070.
"""
import argparse
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from nomvm import VM, Nic, make_iso, read_module_list
from priceprovider import process as provider_process

# (mac, [(host port, guest port)]) for NIC 0, 1, 2 ... (DESIGN.md "Running it").
DEFAULT_NICS = [
    ("52:54:00:12:34:01", [(8080, 80)]),     # nhttpd
    ("52:54:00:12:34:02", [(11211, 11211)]),  # memcached
    ("52:54:00:12:34:03", [(5002, 5002)]),   # NetPIPE
    ("52:54:00:12:34:04", []),               # priced: reaches the host's provider at 10.0.2.2
]
# The host's price provider (tools/priceprovider, default schedule) that priced polls: the
# image's priced asks 10.0.2.2:7070, which QEMU user networking connects to 127.0.0.1:7070.
PRICE_PORT = 7070
# Every host port `make run` listens on; --port-shift moves them together.
HOST_PORTS = [h for _, fwd in DEFAULT_NICS for h, _ in fwd] + [PRICE_PORT]


def die_with_parent():
    """In the child: SIGTERM when nomrun dies, even by SIGKILL (prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)


def start_price_provider(port, log_path):
    """tools/priceprovider on 127.0.0.1:port with its default schedule, output in log_path, in
    its own session (Ctrl-C reaches nomrun, which stops it by PID); None if it did not start."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(provider_process.command("127.0.0.1", port),
                                cwd=provider_process.TOOLS, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=die_with_parent)
    try:
        line = provider_process.wait_listening(proc, log_path)
    except provider_process.ProviderDidNotStart as e:
        print(f"nomrun: the price provider did not start: {e}")
        provider_process.stop(proc)
        return None
    print(f"nomrun: {line} (pid {proc.pid}); the image's priced polls it")
    return proc


def shifted_image(kernel, module_list, shift, folder):
    """The default image rebuilt in folder with priced's provider URL moved by shift."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    old, new = f"10.0.2.2:{PRICE_PORT}/", f"10.0.2.2:{PRICE_PORT + shift}/"
    modules = [(elf, cmdline.replace(old, new)) for elf, cmdline in read_module_list(module_list, top)]
    return make_iso(kernel, modules, os.path.join(folder, "nom.iso"))


def print_qemu_messages(vm):
    """QEMU's own error (a host port already taken, a missing file) goes to its stderr file,
    not to the serial console shown above: show it, or the user sees only an exit code."""
    path = os.path.join(vm.workdir, "qemu.stderr")
    text = open(path, errors="replace").read().strip() if os.path.exists(path) else ""
    for line in text.splitlines():
        print(f"nomrun: qemu: {line}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iso", required=True)
    p.add_argument("--smp", type=int, default=2)
    p.add_argument("--memory-mb", type=int, default=256)
    p.add_argument("--port-shift", type=int, default=0,
                   help="add this to every forwarded host port (to run beside another nom)")
    p.add_argument("--kernel", help="nom.elf, to rebuild the image for a shifted provider port")
    p.add_argument("--modules", help="the image's module list (apps/default-image.txt), likewise")
    a = p.parse_args()
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    if (a.kernel is None) != (a.modules is None):
        p.error("--kernel and --modules go together")
    iso, own_folder = a.iso, None
    if a.port_shift and a.kernel:
        own_folder = tempfile.mkdtemp(prefix="nomrun-image-")
        iso = shifted_image(a.kernel, a.modules, a.port_shift, own_folder)
        print(f"nomrun: image with priced asking port {PRICE_PORT + a.port_shift}: {iso}")
    nics = [Nic(mac=mac, hostfwd=[(h + a.port_shift, g) for h, g in fwd]) for mac, fwd in DEFAULT_NICS]
    vm = VM(iso=iso, smp=a.smp, memory_mb=a.memory_mb, nics=nics)
    print(f"nomrun: accelerator {vm.accel} ({vm.accel_reason})")
    for nic in nics:
        for h, g in nic.hostfwd:
            print(f"nomrun: 127.0.0.1:{h} -> guest port {g} (NIC {nic.mac})")
    print(f"nomrun: serial console below (also in {vm.serial_path}); Ctrl-C stops the VM")
    # SIGTERM (e.g. from `timeout`) ends the VM too, like Ctrl-C: no orphaned QEMU.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    price_provider = start_price_provider(PRICE_PORT + a.port_shift,
                                          os.path.join(vm.workdir, "priceprovider.log"))
    vm.start()
    shown = 0
    try:
        while vm.proc.poll() is None:
            text = vm.log()
            sys.stdout.write(text[shown:])
            sys.stdout.flush()
            shown = len(text)
            time.sleep(0.2)
        sys.stdout.write(vm.log()[shown:])
        print(f"nomrun: QEMU exited with {vm.proc.returncode}")
        print_qemu_messages(vm)
        status = vm.proc.returncode
    except KeyboardInterrupt:
        print("\nnomrun: stopping the VM")
        status = 0
    finally:
        vm.stop()
        provider_process.stop(price_provider)
        if own_folder:
            shutil.rmtree(own_folder, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
