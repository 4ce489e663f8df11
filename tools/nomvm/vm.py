"""Runs one QEMU guest (nom, or a comparison guest) and reads its serial console.

The serial console goes to a file; wait_for() polls it for a regular expression. The guest can
end itself through isa-debug-exit (port 0xf4): QEMU then exits with (value << 1) | 1.
Every VM is stopped by its own PID on stop() or when the Python object is closed, and its
QEMU gets SIGKILL when the Python process that started it dies, however it dies (a killed
pytest leaves no QEMU behind): see _spawn().
"""
import ctypes
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

from .accel import choose_accel
from .paths import BUILD

# Preloaded into a QEMU that forwards host ports (listen_backlog/listen_backlog.c says why: its
# user networking listens with a backlog of one, and simultaneous connects wait a second).
LISTEN_BACKLOG_LIB = os.path.join(BUILD, "nomvm", "liblistenbacklog.so")


def listen_backlog_lib():
    """LISTEN_BACKLOG_LIB; FileNotFoundError naming the fix if it is not built."""
    if not os.path.exists(LISTEN_BACKLOG_LIB):
        raise FileNotFoundError(f"{LISTEN_BACKLOG_LIB} is missing: `make all` builds it "
                                "(make -C tools/nomvm/listen_backlog)")
    return LISTEN_BACKLOG_LIB


@dataclass
class Nic:
    """One virtio-net NIC. backend 'user' forwards host ports (hostfwd) on 127.0.0.1;
    'tap' attaches to an existing tap device; 'none' leaves it unplugged (no netdev traffic)."""
    mac: str
    backend: str = "user"
    hostfwd: list = field(default_factory=list)  # [(host_port, guest_port)] tcp
    udp_hostfwd: list = field(default_factory=list)
    tap: str = ""
    transitional: bool = False  # False: modern-only virtio 1.x (1af4:1041)


def smp_option(smp, accel):
    """QEMU's -smp value. Under TCG a machine that can only ever have one vCPU is translated
    without CF_PARALLEL, and then TCG drops every guest memory barrier (tcg_gen_mb emits nothing;
    QEMU 7.2 accel/tcg/tcg-accel-ops-mttcg.c passes `max_cpus > 1`). The device models run on
    QEMU's I/O thread at the same time as the vCPU thread, so virtio's event-index handshake
    (the guest stores avail->idx then loads avail_event, the device stores avail_event then
    loads avail->idx, spec 2.6.7/2.6.8) loses a notification now and then on the host's
    store-load reordering: the device waits for a kick the guest saw no need for, and the guest
    stops receiving. Allowing a second, absent vCPU (maxcpus=2, marked not enabled in the ACPI
    MADT) makes TCG honour the barriers, as KVM always does. Every guest gets the same option."""
    if accel == "tcg" and smp < 2:
        return f"{smp},maxcpus=2"
    return str(smp)


def read_console(path):
    """A serial console file's text so far; "" before the guest has written it."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def match_complete_lines(rx, text):
    r"""rx's first match in text's complete lines. A line still being written is not searched:
    `nic .*` or `W=(\d+)` would match whatever part of it had arrived (rawecho's banner was
    once read cut short)."""
    return rx.search(text, 0, text.rfind("\n") + 1)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls it


def _die_with_parent(parent_pid):
    """A preexec_fn (it runs in the forked child before exec): SIGKILL when the parent dies.
    The setting survives exec (also through `ip netns exec`, which execs QEMU in place) and
    fires if the parent died even before it was made (getppid no longer the parent)."""
    def set_death_signal():
        if _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGKILL)
    return set_death_signal


class _Spawner:
    """The one thread that forks every QEMU. Linux sends the death signal when the *thread*
    that forked the child ends, not its process (prctl(2)): a VM started from a short-lived
    thread (a helper thread, an executor's worker) would die as that thread returns. This
    daemon thread lives as long as the process, so QEMU dies exactly with the process."""
    _lock = threading.Lock()
    _thread = None
    _requests = queue.Queue()

    @classmethod
    def popen(cls, args, **kwargs):
        """subprocess.Popen(args, **kwargs) forked by the spawner thread, its exception
        re-raised here."""
        with cls._lock:
            if cls._thread is None or not cls._thread.is_alive():  # also after a fork
                cls._requests = queue.Queue()
                cls._thread = threading.Thread(target=cls._serve, args=(cls._requests,),
                                               name="nomvm-spawner", daemon=True)
                cls._thread.start()
            done = queue.Queue(1)
            cls._requests.put((args, kwargs, done))
        ok, value = done.get()
        if not ok:
            raise value
        return value

    @staticmethod
    def _serve(requests):
        while True:
            args, kwargs, done = requests.get()
            try:
                done.put((True, subprocess.Popen(args, **kwargs)))
            except BaseException as e:  # handed to the caller, who raises it
                done.put((False, e))


def _spawn(args, **kwargs):
    """Starts QEMU (args) so that it gets SIGKILL when this Python process dies."""
    return _Spawner.popen(args, preexec_fn=_die_with_parent(os.getpid()), **kwargs)


class VM:
    def __init__(self, iso=None, kernel=None, initrd=None, append=None, smp=1, memory_mb=128,
                 nics=(), accel=None, extra_args=(), workdir=None, name="nom",
                 qemu="qemu-system-x86_64"):
        """qemu: the QEMU binary; the stock one unless e.g. tools/kvmcost's is given."""
        self.accel, self.accel_reason = (accel, "given") if accel else choose_accel()
        self.smp = smp
        self.workdir = workdir or tempfile.mkdtemp(prefix=f"{name}-vm-")
        self.serial_path = os.path.join(self.workdir, "serial.log")
        self.args = [qemu, "-machine", "q35", "-m", str(memory_mb),
                     "-smp", smp_option(smp, self.accel), "-display", "none", "-no-reboot",
                     "-nodefaults",
                     "-serial", f"file:{self.serial_path}",
                     "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
        if self.accel == "kvm":
            self.args += ["-accel", "kvm", "-cpu", "host"]
        else:
            # max: every feature TCG emulates, including invariant TSC and x2APIC bits.
            self.args += ["-accel", "tcg", "-cpu", "max"]
        if iso:
            self.args += ["-cdrom", iso, "-boot", "d"]
        if kernel:
            self.args += ["-kernel", kernel]
            if initrd:
                self.args += ["-initrd", initrd]
            if append:
                self.args += ["-append", append]
        self.nics = list(nics)
        for i, nic in enumerate(self.nics):
            self.args += self._nic_args(i, nic)
        self.args += list(extra_args)
        self.proc = None

    @staticmethod
    def _nic_args(i, nic):
        if nic.backend == "user":
            fwd = "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in nic.hostfwd)
            fwd += "".join(f",hostfwd=udp:127.0.0.1:{h}-:{g}" for h, g in nic.udp_hostfwd)
            netdev = f"user,id=n{i}{fwd}"
        elif nic.backend == "tap":
            netdev = f"tap,id=n{i},ifname={nic.tap},script=no,downscript=no"
        elif nic.backend == "none":
            netdev = f"socket,id=n{i},udp=127.0.0.1:1,localaddr=127.0.0.1:0"
        else:
            raise ValueError(f"unknown NIC backend {nic.backend}")
        modern = "" if nic.transitional else ",disable-legacy=on,disable-modern=off"
        # romfile=: no iPXE option ROM, which the firmware would otherwise load and run for
        # every NIC at each boot (no guest here boots from the network; issue 16's boot time).
        return ["-netdev", netdev,
                "-device", f"virtio-net-pci,netdev=n{i},mac={nic.mac}{modern},romfile="]

    def environment(self):
        """QEMU's environment: this process's, plus the listen-backlog library preloaded when a
        NIC forwards host ports. Raises FileNotFoundError naming the fix if it is not built."""
        env = dict(os.environ)
        if not any(n.backend == "user" and (n.hostfwd or n.udp_hostfwd) for n in self.nics):
            return env
        env["LD_PRELOAD"] = " ".join(filter(None, [listen_backlog_lib(), env.get("LD_PRELOAD")]))
        return env

    def start(self):
        env = self.environment()
        open(self.serial_path, "w").close()
        self.stderr = open(os.path.join(self.workdir, "qemu.stderr"), "w")
        self.proc = _spawn(self.args, stdin=subprocess.DEVNULL, stdout=self.stderr,
                           stderr=subprocess.STDOUT, start_new_session=True, env=env)
        return self

    def log(self):
        return read_console(self.serial_path)

    def wait_for(self, pattern, timeout=120.0):
        """Waits until the serial log's complete lines match pattern (match_complete_lines);
        returns the match. Raises TimeoutError (with the log) on timeout or if QEMU ended first."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            log = self.log()
            m = match_complete_lines(rx, log)
            if m:
                return m
            if self.proc.poll() is not None:
                raise TimeoutError(f"QEMU exited ({self.proc.returncode}) before /{pattern}/:\n"
                                   + self.tail())
            if time.monotonic() > deadline:
                raise TimeoutError(f"no /{pattern}/ within {timeout}s:\n" + self.tail())
            time.sleep(0.1)

    def wait_exit(self, timeout=120.0):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"QEMU still running after {timeout}s:\n" + self.tail())

    def tail(self, n=60):
        lines = self.log().splitlines()
        return "\n".join(lines[-n:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if getattr(self, "stderr", None):
            self.stderr.close()
            self.stderr = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
