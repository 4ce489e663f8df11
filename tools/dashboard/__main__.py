"""`make dashboard`: a live page of nom's applications on http://127.0.0.1:8090/.

It attaches to a running `make run` (its ports, or --port-shift N as given to make run) and
reads nhttpd's /nom/board and /nom/stats and memcached's `stats` every --interval seconds.
With --boot it boots nom itself first, as `make run` does (the image from --kernel and
--modules, the price provider with --schedule), and stops both when it ends (Ctrl-C, SIGTERM).

    python3 -m dashboard                          # beside `make run`
    python3 -m dashboard --boot --schedule "0:1, 60:10" --port 9000
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import nomrun
from dashboard.collector import Collector
from dashboard.server import make_server
from nomvm import VM, Nic
from priceprovider import process as provider_process

DEFAULT_PORT = 8090
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NHTTPD_PORT, MEMCACHED_PORT = 8080, 11211  # tools/nomrun.py DEFAULT_NICS


def parse_args(argv):
    p = argparse.ArgumentParser(prog="dashboard", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"the page's port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--port-shift", type=int, default=0,
                   help="nom's forwarded ports are make run's plus this (make run's --port-shift)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls (1)")
    p.add_argument("--boot", action="store_true", help="boot nom and the price provider too")
    p.add_argument("--kernel", default=os.path.join(TOP, "build", "kernel", "nom.elf"),
                   help="with --boot: the kernel (build/kernel/nom.elf)")
    p.add_argument("--modules", default=os.path.join(TOP, "apps", "default-image.txt"),
                   help="with --boot: the image's module list (apps/default-image.txt)")
    p.add_argument("--schedule", help="with --boot: the provider's price schedule, e.g. "
                   "'0:1, 60:10' (default: the provider's own, 1 then 10 $/Gbit at 60 s)")
    a = p.parse_args(argv)
    if not 0 <= a.port < 65536:
        p.error("--port must be in [0, 65536)")
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    if not a.interval > 0:
        p.error("--interval must be positive")
    if a.schedule and not a.boot:
        p.error("--schedule needs --boot (an attached dashboard reads the provider make run "
                "started)")
    return a


def start_provider(port, schedule, log_path):
    """tools/priceprovider on 127.0.0.1:port with schedule; stopped by the caller by PID, and
    by the kernel if the dashboard dies first (as make run's, nomrun.die_with_parent)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(provider_process.command("127.0.0.1", port, schedule),
                                cwd=provider_process.TOOLS, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=nomrun.die_with_parent)
    try:
        print(f"dashboard: {provider_process.wait_listening(proc, log_path)}", flush=True)
    except provider_process.ProviderDidNotStart:
        provider_process.stop(proc)
        raise
    return proc


def boot(a, workdir):
    """nom as make run boots it, with the provider: (vm, provider)."""
    iso = nomrun.shifted_image(a.kernel, a.modules, a.port_shift, workdir)
    provider = start_provider(nomrun.PRICE_PORT + a.port_shift, a.schedule,
                              os.path.join(workdir, "priceprovider.log"))
    nics = [Nic(mac=mac, hostfwd=[(h + a.port_shift, g) for h, g in fwd])
            for mac, fwd in nomrun.DEFAULT_NICS]
    vm = VM(iso=iso, smp=2, memory_mb=256, nics=nics, workdir=workdir).start()
    print(f"dashboard: booted nom ({vm.accel}), console in {vm.serial_path}", flush=True)
    return vm, provider


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    vm = provider = server = workdir = None
    collector = Collector("127.0.0.1", NHTTPD_PORT + a.port_shift, MEMCACHED_PORT + a.port_shift,
                          a.interval)
    try:
        if a.boot:
            workdir = tempfile.mkdtemp(prefix="nom-dashboard-")
            vm, provider = boot(a, workdir)
        server = make_server(collector, a.port)
        collector.start()
        print(f"dashboard: http://127.0.0.1:{server.server_address[1]}/ reading nhttpd on "
              f"127.0.0.1:{collector.nhttpd_port}, memcached on 127.0.0.1:"
              f"{collector.memcached_port}; Ctrl-C stops it", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("\ndashboard: stopping", flush=True)
    finally:
        collector.stop()
        if server:
            server.server_close()
        if vm:
            vm.stop()
        provider_process.stop(provider)
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)  # the image (18 MB) and the console


if __name__ == "__main__":
    main()
