"""`make run`: boots the default nom image with its applications reachable on 127.0.0.1.

Each application owns one virtio-net NIC (QEMU user networking); the host ports forwarded to
each NIC are listed in DEFAULT_NICS, in the order of apps/default-image.txt.
Ctrl-C stops the VM.
"""
import argparse
import signal
import sys
import time

from nomvm import VM, Nic

# (mac, [(host port, guest port)]) for NIC 0, 1, 2 ... (DESIGN.md "Running it").
DEFAULT_NICS = [
    ("52:54:00:12:34:01", [(8080, 80)]),     # nhttpd
    ("52:54:00:12:34:02", [(11211, 11211)]),  # memcached
    ("52:54:00:12:34:03", [(5002, 5002)]),   # NetPIPE
]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iso", required=True)
    p.add_argument("--smp", type=int, default=2)
    p.add_argument("--memory-mb", type=int, default=256)
    p.add_argument("--port-shift", type=int, default=0,
                   help="add this to every forwarded host port (to run beside another nom)")
    a = p.parse_args()
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    nics = [Nic(mac=mac, hostfwd=[(h + a.port_shift, g) for h, g in fwd]) for mac, fwd in DEFAULT_NICS]
    vm = VM(iso=a.iso, smp=a.smp, memory_mb=a.memory_mb, nics=nics)
    print(f"nomrun: accelerator {vm.accel} ({vm.accel_reason})")
    for nic in nics:
        for h, g in nic.hostfwd:
            print(f"nomrun: 127.0.0.1:{h} -> guest port {g} (NIC {nic.mac})")
    print(f"nomrun: serial console below (also in {vm.serial_path}); Ctrl-C stops the VM")
    # SIGTERM (e.g. from `timeout`) ends the VM too, like Ctrl-C: no orphaned QEMU.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
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
    except KeyboardInterrupt:
        print("\nnomrun: stopping the VM")
    finally:
        vm.stop()


if __name__ == "__main__":
    main()
