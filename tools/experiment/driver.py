"""The guest driver protocol: what the experiment runner needs from each guest (nom, Linux, OSv).

A driver runs one guest with one application in an isolated network (DESIGN.md "Running it": a
namespace of its own with a tap device, QEMU and the load generators inside), puts load on it
and measures it. The runner calls, for each cell (app, guest, variant) of each run:

    reason = driver.unavailable(app, variant)   # None, or why this cell cannot run ("not run")
    info = driver.start(app, variant, workdir, on_network=f)
                                                # makes the guest's network, calls f() (the
                                                # runner starts the price provider there),
                                                # boots, returns once the app serves; dict
    proc = driver.spawn(argv)                   # a host process inside the guest's network
    addr = driver.service_address()             # the address such a process listens on so
                                                # that the guest reaches it
    figures = driver.load(phase, seconds)       # phase "many" then "single"; dict, below
    driver.stop()                               # always, also after an exception; idempotent

start() and load() raise GuestError with a message for the report when the guest fails; the
runner then records the cell as failed with that message and goes on. stop() must end every
process the driver started (QEMU survives `ip netns del`, issue 5) and remove its namespace.

variant: {"name": "default"} for Linux and OSv; for nom {"name": "adaptive"} or
{"name": "w=N", "w_us": N}: the batching delay fixed at N microseconds (paper 6.5).

figures (load's result; every number measured, None when the guest or tool cannot give it):
    ops               operations completed (requests, or NetPIPE round trips / messages)
    seconds           wall time of the measurement
    bytes_out         bytes the guest sent (Ethernet frames on its tap): the billed traffic
    latency_us        {"mean", "p50", "p99", "stddev"} per operation, microseconds
    latency_tool      which client measured latency ("nomlat", "memaslap -S", ...)
    counters          vmcounters.per_request() of the phase: insns_per_req, notifies_per_req,
                      irqs_per_req, exit_equiv_per_req, vcpu_util, kvm_* under KVM
    samples           optional [{"t_s", "ops", "bytes_out", "latency_mean_us",
                      "latency_stddev_us"}], consecutive intervals (t_s: interval end since
                      the phase began) for the profit integral; else the phase is one interval
    nom               optional {"w_us": batching delay(s) the app ran with, "profit_rate": ...}
    raw               {name: path} of raw tool outputs to keep with the results
"""


class GuestError(RuntimeError):
    """A guest or its load failed; the message goes into the report."""


class HostBusy(GuestError):
    """The host was not quiet enough to measure on (the calibration of D stayed slower than the
    experiment's reference): the run is recorded failed with "redo": true, and --resume runs
    it again."""


class BuildChanged(RuntimeError):
    """The ELFs a run would boot are not the ones the folder's runs booted (someone rebuilt
    build/ under the experiment, or resumed it from another build): the run is recorded failed
    with "redo": true and the session stops, before anything is measured."""


class GuestDriver:
    """Base class of the drivers; subclasses override every method."""
    name = "guest"
    # {ELF path under BUILD: sha256} the folder's runs booted; a driver that boots ELFs of the
    # project's build checks each boot against it (nom_driver.py), None: not checked
    # (run.py --mixed-builds). The runner sets it (runner.booted_elfs).
    expected_elfs = None

    def unavailable(self, app, variant):
        raise NotImplementedError

    def start(self, app, variant, workdir, on_network=None):
        raise NotImplementedError

    def service_address(self):
        raise NotImplementedError

    def spawn(self, argv, **popen_kwargs):
        raise NotImplementedError

    def load(self, phase, seconds):
        raise NotImplementedError

    def stop(self):
        raise NotImplementedError


class MissingDriver(GuestDriver):
    """Stands for a guest whose driver cannot be built here; every cell reports why."""

    def __init__(self, name, reason):
        self.name, self.reason = name, reason

    def unavailable(self, app, variant):
        return self.reason

    def stop(self):
        pass


REQUIRED_FIGURES = ("ops", "seconds", "bytes_out", "latency_us")


def check_figures(figures):
    """Raises GuestError if a driver's figures lack a required key (a driver bug, reported)."""
    missing = [k for k in REQUIRED_FIGURES if k not in figures]
    if missing:
        raise GuestError(f"driver returned no {', '.join(missing)}")
    return figures
