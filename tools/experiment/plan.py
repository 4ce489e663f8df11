"""The experiment plan: which cells (application x guest x variant) run, how long, how often.

Paper 6.1 and 6.5: every application on every guest for `duration` seconds, load "many" then
"single" after `change_at` seconds, the price changing at the same moment; nom adaptive (one
cell per adaptive mode and utility function it adapts for) and nom with the batching delay
fixed at each W of `w_values` (from which the best-throughput and best-latency W of figures
8-13 are picked; a fixed-W run's one trace is priced under every utility function, so it needs
no run per utility); `runs` repetitions, interleaved so that a slow drift of the machine
spreads over every cell alike.

Passes: with an exit-cost model (`kvmcost`, tools/kvmcost) the main pass runs every guest on
the exit-cost QEMU and reports raw and KVM-equivalent figures from the same runs; a second,
raw-TCG-only pass (the stock QEMU) repeats the plan `raw_runs` times. `fit()` cuts repetitions
until the estimated wall time fits the budget: the raw-TCG-only pass's first, then the main
pass's (never below one), and says what it cut.
"""
from dataclasses import asdict, dataclass, field, replace

from kvmcost import DEFAULT_GUEST_CLOCK, GUEST_CLOCKS
from priceprovider import DEFAULT_PORT

APPS = ("memcached", "nhttpd", "netpipe")
GUESTS = ("linux", "osv", "nom")
PHASES = ("many", "single")
DEFAULT_W = (0, 10, 20, 30, 40)
# Variants of the comparison guests: Linux serves the web load with our nhttpd built for Linux
# (the same application, paper 6.2) and with nginx (the server a Linux user would pick).
GUEST_VARIANTS = {("linux", "nhttpd"): ("default", "nginx")}
# nom adaptive adapts for one utility function (libnom's controller, --utility=): "adaptive" for penalty,
# "adaptive-KIND" for the others, so that each utility's profit is that of a run maximizing it
# (paper 6.5).
ADAPTIVE_UTILITIES = ("penalty", "refund", "bonus")
# How the controller knows W's effect (issue 12): "offline-profile" reads the profile measured
# by tools/profile (the paper's way); "online" learns it at run time. Each is a run of its own;
# a new mode is one more name here (and its arguments in nom_driver.ADAPTIVE_MODE_ARGS).
ADAPTIVE_MODES = ("offline-profile", "online")
PHASE_CLOCKS = ("wall", "undilated")  # Plan.phase_clock
# D for time estimates of undilated phases before a pass's calibration is known: the D the
# exit-cost passes of 2026-11 measured were 4.4-4.8 (AMD EPYC) and 6.2 (Intel Xeon).
ESTIMATE_D = 6.0
# The raw-TCG-only pass's name: its results go to <output>/tcg-raw/ when a main pass exists.
RAW_PASS = "tcg-raw"
# Wall time of a cell beyond its measured `duration`, by guest (the progress line learns the
# boots as they come): the lab, D's calibration under the exit-cost model (1.6 s), the boot
# until the application serves, the two 1 s warm-ups, the price provider, the teardown.
# Measured under TCG at host load average 8-10 (run.py --quick, 13 cells: Linux 21-34 s, nom
# 3-11 s; --kvmcost skylake --duration 4, 5 cells: Linux 22-45 s with the first cell's
# start-up, nom 9-14 s; OSv on the stock QEMU, one cell: 13 s with the start-up), rounded up.
OVERHEAD_S = {"linux": 35.0, "osv": 20.0, "nom": 15.0}
BUDGET_S = 6 * 3600.0  # the whole experiment on this 2-core machine (issue 13)


def adaptive_variant(utility, mode="offline-profile"):
    """The variant of nom that adapts for utility with the controller's mode."""
    name = "adaptive" if mode == "offline-profile" else f"adaptive-{mode}"
    if utility != "penalty":
        name += f"-{utility}"
    return {"name": name, "utility": utility, "mode": mode}


@dataclass(frozen=True)
class Cell:
    app: str
    guest: str
    variant: dict = field(hash=False, compare=False)

    @property
    def variant_name(self):
        return self.variant["name"]

    @property
    def key(self):
        """The cell's folder name under raw/<app>/: GUEST-VARIANT."""
        return f"{self.guest}-{self.variant_name}"


@dataclass(frozen=True)
class Pass:
    """One pass over the plan's cells: its name, the exit-cost model ("off": stock QEMU), how
    many repetitions and the folder under the output ("" for the output itself)."""
    name: str
    kvmcost: str
    runs: int
    subdir: str


@dataclass
class Plan:
    apps: tuple = APPS
    guests: tuple = GUESTS
    w_values: tuple = DEFAULT_W
    adaptive: bool = True
    adaptive_utilities: tuple = ADAPTIVE_UTILITIES  # one nom cell adapting for each
    adaptive_modes: tuple = ADAPTIVE_MODES
    runs: int = 5
    duration_s: float = 120.0
    change_at_s: float = 60.0
    low_price: float = 1.0
    high_price: float = 10.0
    price_port: int = DEFAULT_PORT  # the provider's port on the driver's service_address()
    boot_estimate_s: float = 40.0  # until measured: TCG boots of the three guests take 5-40 s
    kvmcost: str = "skylake"  # the main pass's exit-cost model; "off": the stock QEMU only
    raw_runs: int = 5  # repetitions of the raw-TCG-only pass (only with an exit-cost model)
    # The clock duration_s and change_at_s are in (PHASE_CLOCKS). "wall": seconds of the host's
    # clock, as every folder before the option. "undilated": under an exit-cost model, seconds
    # of the guest's dilated clock (the undilated time in which nom's controller, W and the
    # SLO live), so a phase lasts D times longer on the wall and the controller's transients
    # (load detection, exploration) take the share of a phase they would take on a hardware
    # host; with "wall" they take D times that share. The stock-QEMU pass has no D: wall.
    phase_clock: str = "wall"
    # What every guest's clock counts under the exit-cost model (kvmcost.GUEST_CLOCKS, the
    # runner's --guest-clock): "insn" (kvmcost.DEFAULT_GUEST_CLOCK), the guest's instructions
    # while it runs (tools/kvmcost README "The instruction clock"), where the host's stalls pass
    # in no guest's time and each phase is valued at its window's measured dilation
    # (kvmmodel.valuation_d); "dilated" (wall time / D), as every folder before the option.
    guest_clock: str = DEFAULT_GUEST_CLOCK
    # Whether each guest's vCPU thread runs on a host CPU of its own and everything else (the
    # harness, the load generators, QEMU's other threads) on the rest (tools/nomvm/placement.py:
    # the host's scheduler then never stops the guest for them, as on a KVM host with
    # dedicated cores). False in every folder from before the option.
    pin_vcpu: bool = False
    # Applications whose nom build had no offline profile, so no "offline-profile" cells:
    # ("netpipe",) in every folder from before NetPIPE's (apps/netpipe/profile/), none since.
    # Kept in plan.json so that an older folder's plan (resume, its report's missing runs)
    # stays the one it ran.
    apps_without_profile: tuple = ()

    def __post_init__(self):
        if not 0 < self.change_at_s < self.duration_s:
            raise ValueError("the change must fall inside the run (0 < change_at < duration)")
        if self.runs < 1 or self.raw_runs < 0:
            raise ValueError("runs must be >= 1 and raw runs >= 0")
        for a in self.apps + self.apps_without_profile:
            if a not in APPS:
                raise ValueError(f"unknown application {a!r} (one of {', '.join(APPS)})")
        for g in self.guests:
            if g not in GUESTS:
                raise ValueError(f"unknown guest {g!r} (one of {', '.join(GUESTS)})")
        if self.guest_clock not in GUEST_CLOCKS:
            raise ValueError(f"unknown guest clock {self.guest_clock!r} (one of "
                             f"{', '.join(GUEST_CLOCKS)})")
        if self.phase_clock not in PHASE_CLOCKS:
            raise ValueError(f"unknown phase clock {self.phase_clock!r} (one of "
                             f"{', '.join(PHASE_CLOCKS)})")
        for u in self.adaptive_utilities:
            if u not in ADAPTIVE_UTILITIES:
                raise ValueError(f"unknown utility function {u!r} (one of "
                                 f"{', '.join(ADAPTIVE_UTILITIES)})")
        for m in self.adaptive_modes:
            if m not in ADAPTIVE_MODES:
                raise ValueError(f"unknown adaptive mode {m!r} (one of "
                                 f"{', '.join(ADAPTIVE_MODES)})")

    def schedule_text(self):
        """The price provider's schedule for one run (priceprovider.Schedule syntax)."""
        return f"0:{self.low_price:g}, {self.change_at_s:g}:{self.high_price:g}"

    def phase_seconds(self, wall_per_second=1.0):
        """Each phase's length in wall seconds: the plan's seconds x wall_per_second (phase_scale)."""
        return {"many": self.change_at_s * wall_per_second,
                "single": (self.duration_s - self.change_at_s) * wall_per_second}

    def phase_scale(self, kvmcost, d):
        """Wall seconds per second of the plan in a pass on kvmcost's QEMU at dilation d (None:
        not known): d for "undilated" phases under an exit-cost model, else 1."""
        return d if self.phase_clock == "undilated" and kvmcost != "off" and d else 1.0

    def cells(self):
        out = []
        for app in self.apps:
            for guest in self.guests:
                if guest != "nom":
                    out.extend(Cell(app, guest, {"name": v})
                               for v in GUEST_VARIANTS.get((guest, app), ("default",)))
                    continue
                if self.adaptive:
                    modes = [m for m in self.adaptive_modes
                             if m == "online" or app not in self.apps_without_profile]
                    out.extend(Cell(app, guest, adaptive_variant(k, m))
                               for m in modes for k in self.adaptive_utilities)
                for w in self.w_values:
                    out.append(Cell(app, guest, {"name": f"w={w:g}", "w_us": w}))
        return out

    def schedule(self, runs=None):
        """[(run, cell)] in the order they run: every cell once per run."""
        runs = self.runs if runs is None else runs
        return [(run, cell) for run in range(1, runs + 1) for cell in self.cells()]

    def passes(self):
        """The passes in the order they run: the main one, then the raw-TCG-only one."""
        if self.kvmcost == "off":
            return [Pass(RAW_PASS, "off", self.runs, "")]
        out = [Pass(f"kvmcost-{self.kvmcost}", self.kvmcost, self.runs, "")]
        if self.raw_runs:
            out.append(Pass(RAW_PASS, "off", self.raw_runs, RAW_PASS))
        return out

    def cell_estimate_s(self, cell, kvmcost="off", d=None):
        """A run's wall time in a pass on kvmcost's QEMU at D = d (None: ESTIMATE_D)."""
        return self.duration_s * self.phase_scale(kvmcost, d or ESTIMATE_D) + OVERHEAD_S[cell.guest]

    def estimate_s(self, runnable=lambda cell, kvmcost="off": True):
        """Estimated wall time of every pass, counting only cells runnable(cell, pass's
        kvmcost) says run."""
        return sum(p.runs * sum(self.cell_estimate_s(c, p.kvmcost) for c in self.cells()
                                if runnable(c, p.kvmcost)) for p in self.passes())

    def only_on_stock_qemu(self, runnable):
        """The cells that run on the stock QEMU but not on this plan's exit-cost QEMU (OSv
        while that QEMU has no HPET: osv_driver.exit_cost_reason)."""
        if self.kvmcost == "off":
            return []
        return [c for c in self.cells() if runnable(c, "off") and not runnable(c, self.kvmcost)]

    def fit(self, budget_s=BUDGET_S, runnable=lambda cell, kvmcost="off": True):
        """(plan, [what was cut]): this plan with repetitions cut until its estimate fits
        budget_s: first the raw-TCG-only pass's, down to one run when some cells run only
        there (else that guest would be in no pass at all), then the main pass's down to one
        run, then the raw-TCG-only pass's last."""
        plan, cuts = self, []
        raw0, runs0 = self.raw_runs, self.runs
        stock_only = self.only_on_stock_qemu(runnable)
        keep_raw = 1 if stock_only and self.raw_runs > 0 else 0
        while plan.estimate_s(runnable) > budget_s:
            if plan.kvmcost != "off" and plan.raw_runs > keep_raw:
                plan = replace(plan, raw_runs=plan.raw_runs - 1)
            elif plan.runs > 1:
                plan = replace(plan, runs=plan.runs - 1)
            elif plan.kvmcost != "off" and plan.raw_runs > 0:
                plan = replace(plan, raw_runs=plan.raw_runs - 1)
            else:
                break
        if plan.raw_runs != raw0:
            cuts.append(f"raw-TCG-only pass: {plan.raw_runs} repetitions instead of {raw0}"
                        + (f" (kept at one before the main pass was cut: "
                           f"{', '.join(sorted({c.guest for c in stock_only}))} run only on the "
                           "stock QEMU)" if plan.raw_runs == keep_raw == 1 else ""))
        if plan.runs != runs0:
            cuts.append(f"{plan.passes()[0].name} pass: {plan.runs} repetitions instead of "
                        f"{runs0}")
        if plan.estimate_s(runnable) > budget_s:
            cuts.append(f"still over the budget of {budget_s / 3600:g} h at one repetition")
        return plan, cuts

    def to_json(self):
        d = asdict(self)
        d["schedule_text"] = self.schedule_text()
        d["passes"] = [asdict(p) for p in self.passes()]
        return d


def quick_plan(**overrides):
    """The short mode (`--quick`, under 20 minutes): 2 x 10 s phases, 1 run, Linux and nom
    with every application, nom adaptive (offline profile, penalty) and W = 0 and 40, the stock
    QEMU only."""
    base = dict(guests=("linux", "nom"), w_values=(0, 40), runs=1, duration_s=20.0,
                change_at_s=10.0, adaptive_utilities=("penalty",),
                adaptive_modes=("offline-profile",), kvmcost="off", raw_runs=0)
    base.update(overrides)
    return Plan(**base)
