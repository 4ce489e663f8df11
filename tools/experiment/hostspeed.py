"""How fast the host ran while a phase was measured: the native calibration mix
(tools/kvmcost/calib, the native side of D) timed every INTERVAL_S seconds in a thread beside
the load, each sample against the run's reference.

Why: a run checks the host once, before its guest boots (calibration.py), but a host can change
speed during the run. The 2-CPU Xeon host of 2026-11-26 flipped between two states 2x apart
every 20-40 s: a run that passed its check could spend half its phases on a host twice as slow,
which under the exit-cost model is another machine (guest work takes twice as long against the
same exit stalls; tools/kvmcost/dilation.py). The samples do not correct anything; they say how
much of each phase ran on a slow host, so that a reader (and the report) can tell.

Cost: one sample is one run of the native mix, about 20 ms of one core; every 2 s that is 1 %
of one of the two cores, once per phase.

The samples run beside the experiment's own processes, which keep both cores busy; they run at
a real-time priority (sample_argv) so that they measure how fast the cores run, not how they
are shared. Samples of the first session with the sampler (2026-11-27 00:00 UTC) ran at the
normal priority, where the mix's fastest of 7 repetitions mostly dodges the sharing anyway:
beside two busy loops on the 2-CPU host it read 5.8-6.8 M ticks against 5.4-6.1 M at
real-time priority in the same minute, while the host's own slow state reads 4.5-6.4 M
against the quiet 2.9-3.3 M.
"""
import os
import shutil
import statistics
import subprocess
import threading
import time

from kvmcost import dilation

INTERVAL_S = 2.0
SLOW_RATIO = 1.25  # a sample this much slower than the reference counts as a slow host: the
# quiet state's own spread on the Xeon host was about +-8 %, its slow state +40 % .. +100 %


def sample_argv():
    """The native mix, at a real-time priority when we may set one (root, chrt): then it runs
    ahead of the experiment's own processes (QEMU, the load tools, busy on both cores) and
    measures the cores' speed, not their sharing. Each sample's repetitions take ~3 ms."""
    if os.geteuid() == 0 and shutil.which("chrt"):
        return ["chrt", "-f", "50", dilation.NATIVE]
    return [dilation.NATIVE]


def native_ticks():
    """One sample: the native mix's fastest repetition, in TSC ticks."""
    r = subprocess.run(sample_argv(), capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise dilation.CalibrationError(f"{' '.join(sample_argv())} exited {r.returncode}: "
                                        f"{r.stderr.strip()[-200:]}")
    return dilation.parse_line(r.stdout)["min_ticks"]


class Monitor:
    """Samples the host's speed from start() to stop(); stop() returns the summary."""

    def __init__(self, reference_ticks=None, interval_s=INTERVAL_S, sample=native_ticks):
        self.reference = reference_ticks
        self.interval_s = interval_s
        self.sample = sample
        self.samples = []
        self.times = []  # each sample's start, seconds after start()
        self.errors = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hostspeed", daemon=True)

    def start(self):
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def _run(self):
        while not self._stopping.is_set():
            try:
                t = time.monotonic() - self._t0
                self.samples.append(self.sample())
                self.times.append(t)
            except (OSError, subprocess.SubprocessError, dilation.CalibrationError) as e:
                self.errors.append(str(e))
            self._stopping.wait(self.interval_s)

    def stop(self):
        self._stopping.set()
        self._thread.join(timeout=60)
        return summarize(self.samples, self.reference, self.errors, self.interval_s,
                         self.times)


def summarize(samples, reference=None, errors=(), interval_s=INTERVAL_S, times=None):
    """{"samples", "reference_ticks", "reference", "median_ratio", "max_ratio",
    "slow_fraction", "slow_ratio", "interval_s", "errors", "series"?}: each sample's ticks over
    the reference (the run's calibration reference; without one, the window's fastest sample,
    so that only changes within the window show). series (with times): [[seconds after the
    monitor started, ratio], ...], which fast_spans() reads."""
    out = {"samples": len(samples), "interval_s": interval_s, "slow_ratio": SLOW_RATIO,
           "priority": "fifo" if sample_argv()[0] == "chrt" else "normal",
           "errors": list(errors)[:3]}
    if not samples:
        return dict(out, reference_ticks=reference, reference=None, median_ratio=None,
                    max_ratio=None, slow_fraction=None)
    ref, how = (reference, "calibration") if reference else (min(samples), "fastest sample")
    ratios = [s / ref for s in samples]
    if times is not None and len(times) == len(ratios):
        out["series"] = [[round(t, 2), round(r, 3)] for t, r in zip(times, ratios)]
    return dict(out, reference_ticks=ref, reference=how,
                median_ratio=round(statistics.median(ratios), 3),
                max_ratio=round(max(ratios), 3),
                slow_fraction=round(sum(r > SLOW_RATIO for r in ratios) / len(ratios), 3))


def is_fast(host_speed, start_s, end_s):
    """Did the host run at its reference speed from start_s to end_s (seconds after the
    monitor started; the load tool starts with it, within a fraction of a second)? Each sample
    stands for the interval from its start to the next (the host's states last 20-40 s, a
    sample's own run 3 ms): True when every sample standing for part of the span is at most
    SLOW_RATIO and there is one; None when the phase has no series (recorded before
    2026-11-27 03:00 UTC)."""
    series = (host_speed or {}).get("series")
    if not series:
        return None
    interval = host_speed.get("interval_s", INTERVAL_S)
    near = [r for t, r in series if t < end_s and t + interval > start_s]
    return bool(near) and all(r <= host_speed.get("slow_ratio", SLOW_RATIO) for r in near)
