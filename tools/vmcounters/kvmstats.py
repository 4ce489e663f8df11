"""KVM's own counters of a guest, read over QMP with query-stats (QEMU >= 7.1).

Used only under hardware KVM (tools/nomvm/accel.py decides): there VM exits and interrupt
injections are real and KVM counts them (paper table 2). The QEMU needs
`-qmp unix:PATH,server=on,wait=off` (qmp_args()). Not testable on TCG-only hosts: the test runs
the client against a fake QMP server with a reply in the documented format.
"""
import json
import socket
import time

# The vCPU statistics that matter for the exit cost model (Linux Documentation/virt/kvm/api.rst,
# "KVM_GET_STATS_FD"; names as KVM exports them).
EXIT_STATS = ("exits", "io_exits", "mmio_exits", "halt_exits", "irq_exits",
              "signal_exits", "request_irq_exits")
INJECTION_STATS = ("irq_injections", "nmi_injections")


def qmp_args(path):
    return ["-qmp", f"unix:{path},server=on,wait=off"]


def _connect_when_listening(path, timeout):
    """Connects to QMP's socket, waiting up to timeout for a QEMU that just started to create
    it; raises the last OSError otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Qmp:
    """A minimal QMP client on a unix socket: execute(cmd, **arguments) -> "return" value.
    Raises RuntimeError with QMP's error, OSError if the socket fails."""

    def __init__(self, path, timeout=10.0):
        self.sock = _connect_when_listening(path, timeout)
        self.sock.settimeout(timeout)
        self.reader = self.sock.makefile("r")
        json.loads(self.reader.readline())  # the greeting
        self.execute("qmp_capabilities")

    def execute(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = json.loads(self.reader.readline())
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise RuntimeError(f"QMP {command}: {reply['error']}")
            # anything else is an asynchronous event: skip it

    def close(self):
        self.reader.close()
        self.sock.close()


def sum_vcpu_stats(query_stats_reply):
    """Sums each named cumulative statistic over every vCPU of a query-stats reply."""
    totals = {}
    for provider in query_stats_reply:
        for stat in provider.get("stats", []):
            value = stat.get("value")
            if isinstance(value, int):
                totals[stat["name"]] = totals.get(stat["name"], 0) + value
    return totals


def read_kvm_stats(qmp):
    """{stat name: total over vCPUs} from KVM through QMP query-stats (target vcpu)."""
    return sum_vcpu_stats(qmp.execute("query-stats", target="vcpu"))
