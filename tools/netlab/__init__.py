"""A private network for one benchmark run: a network namespace with a tap device in it.

DESIGN.md: benchmark traffic goes only to loopback or to a namespace the tool created. A NetLab
creates a namespace with a unique name, a tap device in it (host side address HOST_IP), starts
the guest's QEMU and the load generators inside it, and on every exit path (normal end,
exception, Ctrl-C, SIGTERM) kills each process it started, by PID, then deletes the namespace.
The kill matters: a QEMU still holding the tap survives `ip netns del`.

    with netlab.NetLab() as lab:
        vm = nomvm.VM(..., nics=[nomvm.Nic(mac=..., backend="tap", tap=lab.tap)])
        lab.start_vm(vm)                       # QEMU runs inside the namespace
        lab.run(["wrk", ..., f"http://{lab.guest_ip}/"])  # so does the load

Every address lives inside the namespace; nothing on the host's own interfaces changes.
A tool killed with SIGKILL cannot clean up: the next NetLab's set-up removes such stale
namespaces (named after a PID that no longer runs) and what still runs in them.
"""
import atexit
import itertools
import os
import signal
import subprocess
import threading
import time

HOST_IP = "10.77.0.1"
GUEST_IP = "10.77.0.2"
PREFIX_LEN = 24
TAP = "tap0"

_serial = itertools.count()


class NetLabError(RuntimeError):
    """A set-up step failed (its command and output are in the message)."""


def _ip(*args):
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise NetLabError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def namespaces():
    """Names of the network namespaces that exist now."""
    return [line.split()[0] for line in _ip("netns", "list").splitlines() if line.strip()]


def _owner_alive(ns):
    """Whether the process that named namespace nomlab-PID-N still runs (True if not ours)."""
    parts = ns.split("-")
    if len(parts) != 3 or parts[0] != "nomlab" or not parts[1].isdigit():
        return True
    return os.path.exists(f"/proc/{parts[1]}")


def remove_stale():
    """Removes the namespaces of NetLabs whose tool was killed outright (SIGKILL leaves no
    chance to clean up): kills what still runs inside each (an orphaned QEMU survives
    `ip netns del`), then deletes it. Returns their names. Namespaces of live tools, and
    any not named by NetLab, are left alone."""
    removed = []
    for ns in namespaces():
        if _owner_alive(ns):
            continue
        lab = NetLab(name=ns)
        lab.created = True
        lab.teardown()
        removed.append(ns)
    return removed


class NetLab:
    """One namespace + tap; a context manager. Attributes: ns, tap, host_ip, guest_ip."""

    def __init__(self, name=None, host_ip=HOST_IP, guest_ip=GUEST_IP, prefix_len=PREFIX_LEN):
        self.ns = name or f"nomlab-{os.getpid()}-{next(_serial)}"
        self.tap, self.host_ip, self.guest_ip, self.prefix_len = TAP, host_ip, guest_ip, prefix_len
        self.procs = []
        self.created = False
        self._old_handlers = {}

    # -- set-up ---------------------------------------------------------------------------
    def setup(self):
        """Creates the namespace, its loopback and the tap with host_ip; on failure removes
        whatever was made and raises NetLabError."""
        remove_stale()
        try:
            _ip("netns", "add", self.ns)
            self.created = True
            atexit.register(self.teardown)
            _ip("-n", self.ns, "link", "set", "lo", "up")
            _ip("-n", self.ns, "tuntap", "add", "dev", self.tap, "mode", "tap")
            _ip("-n", self.ns, "addr", "add", f"{self.host_ip}/{self.prefix_len}",
                "dev", self.tap)
            _ip("-n", self.ns, "link", "set", self.tap, "up")
        except BaseException:
            self.teardown()
            raise
        return self

    def __enter__(self):
        self._install_signal_handlers()
        try:
            return self.setup()
        except BaseException:
            self._restore_signal_handlers()
            raise

    def __exit__(self, *exc):
        try:
            self.teardown()
        finally:
            self._restore_signal_handlers()

    # SIGTERM (and SIGHUP) become an exception so that __exit__ runs; Ctrl-C already is one.
    def _install_signal_handlers(self):
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, _raise_interrupt)

    def _restore_signal_handlers(self):
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)
        self._old_handlers = {}

    # -- processes inside ----------------------------------------------------------------
    def wrap(self, args):
        """The command line that runs args inside the namespace (ip netns exec execs it, so
        the PID is the program's own)."""
        return ["ip", "netns", "exec", self.ns, *args]

    def popen(self, args, **kwargs):
        """Starts args inside the namespace in a session of its own; killed at teardown."""
        if not self.created:
            raise NetLabError("NetLab not set up")
        proc = subprocess.Popen(self.wrap(args), start_new_session=True, **kwargs)
        self.procs.append(proc)
        return proc

    def run(self, args, timeout=None, **kwargs):
        """Runs args inside the namespace to its end; returns CompletedProcess (text output).
        On timeout the process is killed and subprocess.TimeoutExpired raised, with what it
        printed until then as its output and stderr (a hung client's last lines say where)."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        if kwargs.pop("capture_output"):
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        proc = self.popen(args, **kwargs)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            _kill(proc)
            try:  # what it printed; a child of its own session may still hold the pipes
                e.output, e.stderr = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                e.output = e.stderr = None  # not the first wait's bytes beside text elsewhere
            raise
        finally:
            if proc.poll() is not None and proc in self.procs:
                self.procs.remove(proc)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def start_vm(self, vm):
        """Starts a nomvm.VM inside the namespace; its QEMU is killed at teardown."""
        if not self.created:
            raise NetLabError("NetLab not set up")
        if vm.args[:3] != ["ip", "netns", "exec"]:
            vm.args = self.wrap(vm.args)
        vm.start()
        self.procs.append(vm.proc)
        return vm

    # -- tear-down -----------------------------------------------------------------------
    def teardown(self):
        """Kills every process started here (by PID), any left in the namespace, then deletes
        the namespace. Idempotent; safe after a partial set-up."""
        for proc in reversed(self.procs):
            _kill(proc)
        self.procs = []
        if not self.created:
            return
        for pid in self._pids_inside():  # children of ours that a program started
            _kill_pid(pid)
        for _ in range(50):
            try:
                _ip("netns", "del", self.ns)
                break
            except NetLabError:
                if self.ns not in namespaces():
                    break
                time.sleep(0.1)
        self.created = False
        atexit.unregister(self.teardown)

    def _pids_inside(self):
        try:
            return [int(p) for p in _ip("netns", "pids", self.ns).split()]
        except NetLabError:
            return []


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _kill(proc):
    """SIGTERM then SIGKILL to proc's own session (it was started with start_new_session)."""
    if proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _kill_pid(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass

