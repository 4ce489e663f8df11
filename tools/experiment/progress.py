"""Progress of a long experiment: which cell runs, and the time remaining, on stderr.

The estimate is the sum of what is left: the phases of the current cell, plus for each
cell still to come that can run (the runner asks the drivers first) its phases and a boot time
learnt from the boots so far; a cell that cannot run costs nothing. On a terminal one
line is redrawn every second; otherwise (CI logs) one line per step.
"""
import sys
import threading
import time


def fmt_duration(seconds):
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


class Progress:
    def __init__(self, total_cells, cell_seconds, boot_estimate_s, stream=sys.stderr,
                 clock=time.monotonic, runnable_cells=None):
        self.total, self.cell_s = total_cells, cell_seconds
        self.runnable = total_cells if runnable_cells is None else runnable_cells
        self.ran = 0
        self.boot_s, self._boots = boot_estimate_s, []
        self.stream, self.clock = stream, clock
        self.done = 0
        self.label = ""
        self._step_end = None   # when the current phase should end (clock time)
        self._after_step = 0.0  # seconds of the current cell left after the current step
        self._live = stream.isatty()
        self._stop = threading.Event()
        self._thread = None

    def remaining_s(self):
        """Seconds the rest of the experiment should take."""
        now = self.clock()
        current = max(0.0, self._step_end - now) + self._after_step if self._step_end else 0.0
        later = self.runnable - self.ran - (1 if self._step_end is not None else 0)
        return current + max(0, later) * (self.cell_s + self.boot_s)

    def boot_took(self, seconds):
        self._boots.append(seconds)
        self.boot_s = sum(self._boots) / len(self._boots)

    def step(self, label, seconds, after_s=0.0):
        """A step of the current cell begins: label, its expected length, what follows it."""
        self.label = label
        self._step_end = self.clock() + seconds
        self._after_step = after_s
        self._show(force=True)

    def add_cells(self, n):
        """n more cells to run (runs tried again), all expected to run."""
        self.total += n
        self.runnable += n

    def cell_done(self):
        """A cell ended; it counts as run if one of its steps began."""
        self.done += 1
        if self._step_end is not None:
            self.ran += 1
        self._step_end = None
        self._show(force=True)

    def line(self):
        return (f"[{self.done + (1 if self._step_end else 0)}/{self.total}] {self.label}"
                f" - about {fmt_duration(self.remaining_s())} left")

    def _show(self, force=False):
        if self._live:
            self.stream.write("\r\033[K" + self.line())
        elif force:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def __enter__(self):
        if self._live:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self):
        while not self._stop.wait(1.0):
            self._show()

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self._live:
            self.stream.write("\n")
        self.stream.flush()
