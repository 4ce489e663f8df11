"""A libvirt connection for nom's domains: the machine's own daemon where one runs, else a
private libvirtd (and virtlogd) that this process starts and stops by PID.

Which URI: a user other than root gets qemu:///session (virsh starts the per-user daemon
itself). For root libvirt maps qemu:///session to the system daemon, so root gets
qemu:///system: the running one at /run/libvirt/libvirt-sock if it answers, else a private
libvirtd in privileged mode whose sockets sit in a temporary folder
(qemu:///system?socket=...). That is the case on a Debian machine without systemd (these
containers, CI): the package installs the daemon but nothing starts it. The private daemon
keeps QEMU's state in libvirt's usual /run/libvirt/qemu and runs QEMU as libvirt-qemu
(libvirt-daemon-system creates that user), so the files a domain uses must be readable by it:
callers copy the ISO into a folder of their own (libvirt chowns it and does not give it back).
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

SYSTEM_SOCKET = "/run/libvirt/libvirt-sock"
VIRTLOGD_SOCKET = "/run/libvirt/virtlogd-sock"


class LibvirtUnavailable(RuntimeError):
    """libvirt cannot run here at all (not installed, or its daemon does not start)."""


def _answers(uri):
    r = subprocess.run(["virsh", "-c", uri, "version"], capture_output=True, text=True,
                       timeout=60)
    return r.returncode == 0


class Libvirt:
    """with Libvirt() as lv: lv.virsh("define", path) ... ; lv.uri names the connection."""

    def __init__(self):
        self.uri, self.workdir, self._procs = None, None, []

    def __enter__(self):
        if shutil.which("virsh") is None or shutil.which("libvirtd") is None:
            raise LibvirtUnavailable("virsh or libvirtd not installed (tools/deps: "
                                     "libvirt-daemon-system, libvirt-clients)")
        if os.geteuid() != 0:
            self.uri = "qemu:///session"
        elif os.path.exists(SYSTEM_SOCKET) and _answers("qemu:///system"):
            self.uri = "qemu:///system"
        else:
            self._start_private()
        return self

    def _spawn(self, argv, log_name):
        log = open(os.path.join(self.workdir, log_name), "w")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self._procs.append(proc)
        return proc

    def _start_private(self):
        self.workdir = tempfile.mkdtemp(prefix="nom-libvirtd-")
        conf = os.path.join(self.workdir, "libvirtd.conf")
        with open(conf, "w") as f:
            f.write(f'unix_sock_dir = "{self.workdir}"\n')
        # virtlogd keeps QEMU's log for the privileged daemon; its socket path is fixed.
        if not os.path.exists(VIRTLOGD_SOCKET) or not self._virtlogd_answers():
            self._spawn(["virtlogd", "-p", os.path.join(self.workdir, "virtlogd.pid")],
                        "virtlogd.log")
        daemon = self._spawn(["libvirtd", "-f", conf, "-p",
                              os.path.join(self.workdir, "libvirtd.pid")], "libvirtd.log")
        self.uri = f"qemu:///system?socket={self.workdir}/libvirt-sock"
        deadline = time.monotonic() + 60
        while not (os.path.exists(f"{self.workdir}/libvirt-sock") and _answers(self.uri)):
            if daemon.poll() is not None or time.monotonic() > deadline:
                log = self.log("libvirtd.log")
                self.__exit__(None, None, None)
                raise LibvirtUnavailable(f"libvirtd did not start:\n{log[-2000:]}")
            time.sleep(0.2)

    @staticmethod
    def _virtlogd_answers():
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(VIRTLOGD_SOCKET)
                return True
            except OSError:
                return False

    def log(self, name="libvirtd.log"):
        """A private daemon's log ('' for the machine's own daemon)."""
        if not self.workdir:
            return ""
        try:
            with open(os.path.join(self.workdir, name), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def virsh(self, *args, check=True, timeout=120):
        """virsh -c URI ARGS; its CompletedProcess (text). check: raise on failure, with stderr."""
        r = subprocess.run(["virsh", "-c", self.uri, *args], capture_output=True, text=True,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"virsh {' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
        return r

    def __exit__(self, *exc):
        for proc in reversed(self._procs):  # libvirtd first, then the virtlogd it used
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._procs = []
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
