"""Counts QEMU trace events of a running guest: device notifications from it, interrupts to it.

QEMU (Debian's build uses the "log" trace backend) writes one line per enabled event to the
file given by `-trace file=`; here that file is a FIFO read by a thread of ours that only
counts, so a long run costs no disk. Under hardware KVM each virtio_queue_notify is a VM exit
(an MMIO or PIO write) and each virtio_notify/virtio_notify_irqfd an interrupt injection
(paper table 2); under TCG they are the same events without the exit cost.
"""
import os
import threading
import time

# Guest -> device kicks, and device -> guest interrupts (virtio_notify fires only when the
# guest did not suppress it; irqfd is the KVM path). apic_deliver_irq counts every interrupt
# the emulated APIC delivers (timers included): kept separately, never summed with the others.
NOTIFY_EVENTS = ("virtio_queue_notify",)
IRQ_EVENTS = ("virtio_notify", "virtio_notify_irqfd")
DEFAULT_EVENTS = NOTIFY_EVENTS + IRQ_EVENTS + ("apic_deliver_irq",)



def _patterns(events):
    """Byte patterns of each event at the start of a log-backend line: "PID@SEC.USEC:NAME "
    with timestamps (QEMU's default), "NAME " without."""
    return {e: (b":" + e.encode() + b" ", b"\n" + e.encode() + b" ") for e in events}


def count_trace_events(data, events=DEFAULT_EVENTS):
    """Counts the events named in `events` in complete trace lines (bytes); {name: n}."""
    data = b"\n" + data
    return {e: data.count(a) + data.count(b) for e, (a, b) in _patterns(events).items()}


class TraceCounter:
    """Counts trace events live. Call start() before QEMU starts, pass qemu_args() to it,
    snapshot() whenever, stop() after QEMU ended (or to give up)."""

    def __init__(self, workdir, events=DEFAULT_EVENTS):
        self.events = tuple(events)
        self.fifo = os.path.join(workdir, "trace.fifo")
        self._counts = dict.fromkeys(self.events, 0)
        self._lock = threading.Lock()
        self._thread = None

    def qemu_args(self):
        args = []
        for e in self.events:
            args += ["-trace", f"enable={e}"]
        return args + ["-trace", f"file={self.fifo}"]

    def start(self):
        if os.path.exists(self.fifo):
            os.unlink(self.fifo)
        os.mkfifo(self.fifo, 0o600)
        self._thread = threading.Thread(target=self._read, daemon=True, name="trace-counter")
        self._thread.start()
        return self

    def _read(self):
        """Counts in 1 MiB reads with bytes.count (C speed): QEMU blocks when the FIFO is
        full, so a slow reader would slow the guest it measures."""
        patterns = _patterns(self.events)
        carry = b"\n"
        with open(self.fifo, "rb", buffering=0) as f:  # blocks until QEMU opens it
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return
                data = carry + chunk
                cut = data.rfind(b"\n")
                whole, carry = data[:cut + 1], data[cut:]  # carry: "\n" + a partial line
                counts = {e: whole.count(a) + whole.count(b) for e, (a, b) in patterns.items()}
                with self._lock:
                    for e, n in counts.items():
                        self._counts[e] += n

    def snapshot(self):
        """{event: count so far, "mono_ns": time.monotonic_ns()}."""
        with self._lock:
            snap = dict(self._counts)
        snap["mono_ns"] = time.monotonic_ns()
        return snap

    def stop(self, timeout=5.0):
        """Waits for the reader to see QEMU's end of file (call it after QEMU ended). A reader
        still waiting in open() (QEMU never opened the FIFO) is released by a writer that
        comes and goes; until it has opened, such a writer's open fails, so it is retried."""
        deadline = time.monotonic() + timeout
        while self._thread and self._thread.is_alive() and time.monotonic() < deadline:
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            self._thread.join(0.05)
        if os.path.exists(self.fifo):
            os.unlink(self.fifo)
        return self.snapshot()


def notifications(snap):
    """Guest -> device notifications in a snapshot (or a difference of two)."""
    return sum(snap.get(e, 0) for e in NOTIFY_EVENTS)


def interrupts(snap):
    """Device -> guest virtio interrupts in a snapshot (or a difference of two)."""
    return sum(snap.get(e, 0) for e in IRQ_EVENTS)
