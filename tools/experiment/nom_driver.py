"""nom's driver: the nom kernel with one application (and priced), 1 vCPU, 128 MiB (paper 6.1).

NIC 0 is the application's, on the lab's tap, with the static address the other guests use.
priced, when built, gets NIC 1 (board index 2), QEMU user networking: from the guest it
reaches the price provider at 10.0.2.2, which QEMU (running inside the lab's namespace) connects
to the namespace's own loopback, where the provider listens (LabDriver.service_address()). Its
traffic never touches the tap, so it is not billed as the application's.

Variants: "adaptive" (the application picks W from price and load, --adapt
--utility=KIND with the variant's "utility", default penalty, and the arguments of its
controller "mode" in ADAPTIVE_MODE_ARGS; needs priced) and "w=N" (the application's
--batching-delay=N, paper 6.5).

While a nom guest serves, timeline.py samples what its application says of itself once a
second, from inside the lab's namespace (its raw readings, then timeline.csv, beside the run's
other raw outputs), for the report's figures over time.
"""
import hashlib
import json
import os
import subprocess
import sys
import time

import netlab
from loadgen import apps
from nomvm import VM, Nic, make_iso

from . import timeline
from .driver import BuildChanged, GuestError
from .labdriver import LabDriver, prepare

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(TOP, "tools")
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
PRICED = os.path.join(BUILD, "apps", "priced", "priced.elf")
PRICE_URL = "http://10.0.2.2:{port}/price.txt"
MEMORY_MB = 128
BOOT_TIMEOUT_S = 180.0
IP = f"--ip={netlab.GUEST_IP}/{netlab.PREFIX_LEN}"

# app: (ELF under BUILD, its command line, its port, whether a probe connection may be made:
# NPtcp's receiver serves one connection, which a probe would use up). nom's NPtcp runs the
# ping-pong and the both-ways receivers at once, each run after run, and --quiet drops
# NetPIPE's own console output as the Linux guest sends it to /dev/null (apps/netpipe/README.md).
APPS = {
    "nhttpd": ("apps/nhttpd/nhttpd.elf", [IP, f"--port={apps.HTTP_PORT}"], apps.HTTP_PORT, True),
    "memcached": ("apps/memcached/memcached.elf",
                  [IP, "-p", str(apps.MEMCACHED_PORT), "-U", "0", "-t", "1", "-m", "64"],
                  apps.MEMCACHED_PORT, True),
    "netpipe": ("apps/netpipe/NPtcp.elf",
                [IP, "--repeat", "--quiet", *apps.NETPIPE_PINGPONG_ARGS,
                 "--and", *apps.NETPIPE_BIDIR_ARGS],
                apps.NETPIPE_PINGPONG_PORT, False),
}
# NPtcp says on the console when each of its receivers listens (apps/netpipe/port/np_run.h).
NPTCP_LISTENING = r"NPtcp: receiver {}: run 1 listening"
NET_UP = r"net: \S+ gw \S+ \((static|dhcp)\)"  # nom_net_start's line (nom/net.h)
ALL_ENDED = r"nom: all applications ended"  # the kernel's last word when nothing runs
# The controller's arguments for each adaptive mode of plan.ADAPTIVE_MODES that nom has; a mode
# missing here is "not run" with NOT_WIRED. Online: W learned while serving (issue 12,
# libnom/src/profit/README.md "Online mode").
ADAPTIVE_MODE_ARGS = {"offline-profile": [], "online": ["--adapt-mode=online"]}
NOT_WIRED = "nom's controller has no {} mode yet (issue 12; nom_driver.ADAPTIVE_MODE_ARGS)"


class NomDriver(LabDriver):
    name = "nom"

    def __init__(self, accel, price_port):
        super().__init__(accel)
        self.price_port = price_port
        self.sampler, self.phase_starts = None, {}

    def unavailable(self, app, variant):
        elf = os.path.join(BUILD, APPS[app][0])
        for path, what in ((KERNEL, "the nom kernel"), (elf, f"nom's {app}")):
            if not os.path.isfile(path):
                return f"{what} is not built ({os.path.relpath(path, TOP)})"
        mode = variant.get("mode", "offline-profile")
        if variant["name"].startswith("adaptive") and mode not in ADAPTIVE_MODE_ARGS:
            return NOT_WIRED.format(mode)
        if variant["name"].startswith("adaptive") and not os.path.isfile(PRICED):
            return ("adaptive nom needs priced to see the price, and priced is not built "
                    f"({os.path.relpath(PRICED, TOP)})")
        return None

    def make_vm(self, app, variant, workdir, nic, extra_args):
        elf, args = APPS[app][:2]
        if "w_us" in variant:  # the guest's clock is undilated time (LabDriver.guest_us)
            args = args + [f"--batching-delay={self.guest_us(variant['w_us']):g}"]
        elif variant["name"].startswith("adaptive"):
            # The controller (libnom/include/nom/adapt.h) picks W from the profile, the price and
            # the load; under the utility function the variant names (paper 6.5: penalty).
            # Under the exit-cost model the guest's clock is dilated: the W it picks, its SLO
            # and its windows are undilated time without any scaling.
            args = args + ["--adapt", f"--utility={variant.get('utility', 'penalty')}",
                           *ADAPTIVE_MODE_ARGS[variant.get("mode", "offline-profile")]]
        modules = [(os.path.join(BUILD, elf), " ".join([app] + args))]
        nics = [nic]
        if os.path.isfile(PRICED):
            # nom.price-publisher: without it the kernel refuses priced's prices (abi.h).
            # --nic=2: priced's NIC is the VM's second, QEMU's PCI slot 2 on q35, so
            # bulletin-board index 2 (index 0 is the host bridge, 1 the application's NIC).
            # --period-ms=100: the price changes at the load change (runner, SIGUSR2) and the
            # guest should see it within a fraction of a second. priced's default, 1 s, is
            # guest time, D wall seconds on a dilated clock (tools/kvmcost): 5-9 s of the
            # 60 s phase would have been decided at the old price.
            modules.append((PRICED, f"nom.price-publisher priced --nic=2 --period-ms=100 "
                                    f"--provider={PRICE_URL.format(port=self.price_port)}"))
            nics.append(Nic(mac="52:54:00:12:34:57", backend="user"))
        iso = make_iso(KERNEL, modules, os.path.join(workdir, "vm", "nom.iso"))
        # The ELFs' own hashes: the ISO's differs per run (its dates), these only when the
        # build does, so the report can tell runs that booted another build (report.py).
        elfs = [KERNEL] + [e for e, _ in modules]
        self.image = {"modules": [f"{os.path.relpath(e, BUILD)} {c}" for e, c in modules],
                      "elf_sha256": {os.path.relpath(e, BUILD): _sha256(e) for e in elfs},
                      "iso_sha256": _sha256(iso), "iso": iso}
        check_build(self.image["elf_sha256"], self.expected_elfs)
        return VM(iso=iso, smp=1, memory_mb=MEMORY_MB, nics=nics, accel=self.accel,
                  extra_args=extra_args, workdir=os.path.join(workdir, "vm"), name="nom")

    def wait_ready(self, vm, app):
        """The stack is up (its console line), then the application accepts connections;
        NPtcp, which serves one connection per run, says when its two receivers listen."""
        _, _, port, probe = APPS[app]
        t0 = time.monotonic()
        try:
            m = vm.wait_for(f"{NET_UP}|{ALL_ENDED}", BOOT_TIMEOUT_S)
        except TimeoutError as e:
            raise GuestError(f"nom's network did not come up for {app}: {e}") from None
        if m.group(0).startswith("nom: all"):
            raise GuestError(f"nom's {app} ended before serving:\n{vm.tail(8)}")
        if probe:
            self.wait_port(vm, port, BOOT_TIMEOUT_S - (time.monotonic() - t0))
            return
        for receiver in (1, 2):
            try:
                vm.wait_for(NPTCP_LISTENING.format(receiver),
                            max(1.0, BOOT_TIMEOUT_S - (time.monotonic() - t0)))
            except TimeoutError as e:
                raise GuestError(f"nom's {app} does not listen: {e}") from None

    def start(self, app, variant, workdir, on_network=None):
        info = super().start(app, variant, workdir, on_network)
        self.phase_starts = {}
        self._start_sampler(app, workdir)
        return dict(info, image={k: v for k, v in self.image.items() if k != "iso"})

    def _start_sampler(self, app, workdir):
        """timeline.py's sampler inside the lab, where the guest's address answers."""
        argv = [sys.executable, "-m", "experiment.timeline", "--app", app,
                "--host", self.lab.guest_ip, "--port", str(APPS[app][2]),
                "--out", os.path.join(workdir, timeline.RAW), "--tap", self.lab.tap,
                "--serial", self.vm.serial_path]
        with open(os.path.join(workdir, "timeline.log"), "w") as log:
            self.sampler = self.lab.popen(argv, cwd=TOOLS, stdout=log, stderr=subprocess.STDOUT)

    def _stop_sampler(self):
        """Ends the sampler (the PID it was started with) and writes the run's series."""
        if self.sampler is None:
            return
        self.sampler.terminate()
        try:
            self.sampler.wait(10)
        except subprocess.TimeoutExpired:
            self.sampler.kill()
            self.sampler.wait()
        self.sampler = None
        try:
            timeline.write_series(self.workdir, self.app, self.phase_starts)
            timeline.compress_raw(self.workdir)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            # the series are the report's extra, never worth the run's record: said, not raised
            with open(os.path.join(self.workdir, "timeline.log"), "a") as log:
                log.write(f"timeline.csv not written: {type(e).__name__}: {e}\n")

    def stop(self):
        """Stops the sampler and the guest; the ISO (12 MB a cell) goes, its modules and
        checksum stay in the record."""
        try:
            self._stop_sampler()
        finally:
            try:
                super().stop()
            finally:
                self._remove_iso()

    def _remove_iso(self):
        iso = getattr(self, "image", {}).get("iso")
        if iso and os.path.exists(iso):
            os.unlink(iso)

    def load(self, phase, seconds):
        """LabDriver's figures plus what the application says of itself at the end of the
        phase: the W it runs with and the price it saw (nhttpd's GET /nom/stats). The runner
        moves the price just before it calls this: the timeline's mark of the change."""
        self.phase_starts[phase] = time.time()
        fig = super().load(phase, seconds)
        if self.app == "nhttpd":
            fig["nom"] = self._nhttpd_stats(phase)
            if fig["nom"].get("raw"):
                fig.setdefault("raw", {})["nom_stats"] = fig["nom"].pop("raw")
        return fig

    def _nhttpd_stats(self, phase):
        url = f"http://{self.lab.guest_ip}:{apps.HTTP_PORT}/nom/stats"
        r = self.lab.run(["curl", "-s", "--max-time", "20", url], timeout=60)
        if r.returncode != 0:
            return {"error": f"curl {url}: exit {r.returncode}"}
        path = os.path.join(self.workdir, f"nom-stats-{phase}.json")
        with open(path, "w") as f:
            f.write(r.stdout)
        try:
            stats = json.loads(r.stdout)
        except ValueError:
            return {"error": "GET /nom/stats is not JSON", "raw": path}
        return {"w_us": _find(stats, "batching_delay_us"),
                "price": _find(stats, "bandwidth_price_usd_per_gbit"), "raw": path}


def check_build(booting, expected):
    """Raises BuildChanged if an ELF of booting ({path: sha256}) differs from expected's (the
    folder's, runner.booted_elfs); an ELF expected does not name yet joins it, so the first
    boot of a fresh folder sets what the later ones must boot. expected None: no check."""
    if expected is None:
        return
    changed = sorted(p for p, h in booting.items() if expected.get(p, h) != h)
    if changed:
        raise BuildChanged(
            f"{', '.join(changed)} under {BUILD} differ from what this folder's runs booted "
            "(build/ was rebuilt under the experiment, or this is another build): run the "
            "experiment from a worktree with its own BUILD (tools/experiment/README.md, "
            "'Resuming'), rebuild the folder's commit, or give --resume with --mixed-builds")
    for p, h in booting.items():
        expected.setdefault(p, h)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _find(doc, key):
    """The value of key anywhere in a JSON document (None if absent)."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        values = doc.values()
    elif isinstance(doc, list):
        values = doc
    else:
        return None
    for v in values:
        found = _find(v, key)
        if found is not None:
            return found
    return None


def make_driver(accel, osv_image, price_port):
    prepare()
    return NomDriver(accel, price_port)
