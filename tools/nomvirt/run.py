"""`make libvirt-run`: boots a nom image as a libvirt domain, as `make run` boots it under QEMU.

It defines a domain (tools/nomvirt/domain.py's XML) under the connection tools/nomvirt/
libvirtd.py picks, starts it, starts the price provider for the image's priced as nomrun does,
and prints the serial console; Ctrl-C (or SIGTERM) destroys and undefines the domain. The ISO
is copied into a folder of the run's own (libvirt hands it to the libvirt-qemu user).

    python3 tools/nomvirt/run.py --iso build/nom.iso [--name nom] [--port-shift N]
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

import nomrun
from nomvirt import domain
from nomvirt.libvirtd import Libvirt
from nomvirt.nomdomain import NomDomain
from priceprovider import process as provider_process


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iso", required=True, help="the nom image (build/nom.iso)")
    p.add_argument("--name", default="nom", help="the domain's name (default nom)")
    p.add_argument("--port-shift", type=int, default=0,
                   help="add this to every forwarded host port, the provider's too")
    p.add_argument("--kernel", help="nom.elf, to rebuild the image for a shifted provider port")
    p.add_argument("--modules", help="the image's module list (apps/default-image.txt), likewise")
    a = p.parse_args(argv)
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    if (a.kernel is None) != (a.modules is None):
        p.error("--kernel and --modules go together")
    iso, own = a.iso, tempfile.mkdtemp(prefix="nom-libvirt-image-")
    if a.port_shift and a.kernel:
        iso = nomrun.shifted_image(a.kernel, a.modules, a.port_shift, own)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    provider = nomrun.start_price_provider(nomrun.PRICE_PORT + a.port_shift,
                                           os.path.join(own, "priceprovider.log"))
    try:
        with Libvirt() as lv, NomDomain(lv, iso, a.name, a.port_shift) as dom:
            print(f"libvirt-run: domain {a.name} on {lv.uri}, accelerator {dom.accel}")
            for nic in domain.nics_for(a.port_shift):
                for h, g in nic.hostfwd:
                    print(f"libvirt-run: 127.0.0.1:{h} -> guest port {g} (NIC {nic.mac})")
            print(f"libvirt-run: serial console below ({dom.serial_path}); Ctrl-C destroys "
                  "and undefines the domain")
            shown = 0
            while dom.running():
                text = dom.log()
                sys.stdout.write(text[shown:])
                sys.stdout.flush()
                shown = len(text)
                time.sleep(0.5)
            print("libvirt-run: the domain stopped")
    except KeyboardInterrupt:
        print("\nlibvirt-run: destroying the domain")
    finally:
        provider_process.stop(provider)
        shutil.rmtree(own, ignore_errors=True)


if __name__ == "__main__":
    main()
