"""The experiment plan: which cells (application x guest x variant) run, how long, how often.

Paper 6.1 and 6.5: every application on every guest for `duration` seconds, load "many" then
"single" after `change_at` seconds, the price changing at the same moment; nom adaptive (one cell per
utility function it adapts for) and nom with the batching delay fixed at each W of `w_values` (from which the best-throughput and
best-latency W of figures 8-13 are picked); `runs` repetitions, interleaved so that a slow
drift of the machine spreads over every cell alike.
"""
from dataclasses import asdict, dataclass, field

from priceprovider import DEFAULT_PORT

APPS = ("memcached", "nhttpd", "netpipe")
GUESTS = ("linux", "osv", "nom")
PHASES = ("many", "single")
DEFAULT_W = (0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40)
# Variants of the comparison guests: Linux serves the web load with our nhttpd built for Linux
# (the same application, paper 6.2) and with nginx (the server a Linux user would pick).
GUEST_VARIANTS = {("linux", "nhttpd"): ("default", "nginx")}
# nom adaptive adapts for one utility function (net/adapt's --utility=): "adaptive" for penalty,
# "adaptive-KIND" for the others, so that each utility's profit is that of a run maximizing it
# (paper 6.5). NetPIPE has no controller (apps/netpipe/README.md): one "adaptive" cell, W = 0.
ADAPTIVE_UTILITIES = ("penalty", "refund", "bonus")
APPS_WITH_CONTROLLER = ("memcached", "nhttpd")


def adaptive_variant(utility):
    """The variant of nom that adapts for utility."""
    name = "adaptive" if utility == "penalty" else f"adaptive-{utility}"
    return {"name": name, "utility": utility}


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


@dataclass
class Plan:
    apps: tuple = APPS
    guests: tuple = GUESTS
    w_values: tuple = DEFAULT_W
    adaptive: bool = True
    adaptive_utilities: tuple = ADAPTIVE_UTILITIES  # one nom cell adapting for each
    runs: int = 5
    duration_s: float = 120.0
    change_at_s: float = 60.0
    low_price: float = 1.0
    high_price: float = 10.0
    price_port: int = DEFAULT_PORT  # the provider's port on the driver's service_address()
    boot_estimate_s: float = 40.0  # until measured: TCG boots of the three guests take 5-40 s

    def __post_init__(self):
        if not 0 < self.change_at_s < self.duration_s:
            raise ValueError("the change must fall inside the run (0 < change_at < duration)")
        if self.runs < 1:
            raise ValueError("runs must be >= 1")
        for a in self.apps:
            if a not in APPS:
                raise ValueError(f"unknown application {a!r} (one of {', '.join(APPS)})")
        for g in self.guests:
            if g not in GUESTS:
                raise ValueError(f"unknown guest {g!r} (one of {', '.join(GUESTS)})")

    def schedule_text(self):
        """The price provider's schedule for one run (priceprovider.Schedule syntax)."""
        return f"0:{self.low_price:g}, {self.change_at_s:g}:{self.high_price:g}"

    def phase_seconds(self):
        return {"many": self.change_at_s, "single": self.duration_s - self.change_at_s}

    def cells(self):
        out = []
        for app in self.apps:
            for guest in self.guests:
                if guest != "nom":
                    out.extend(Cell(app, guest, {"name": v})
                               for v in GUEST_VARIANTS.get((guest, app), ("default",)))
                    continue
                if self.adaptive:
                    kinds = (self.adaptive_utilities if app in APPS_WITH_CONTROLLER
                             else ("penalty",))
                    out.extend(Cell(app, guest, adaptive_variant(k)) for k in kinds)
                for w in self.w_values:
                    out.append(Cell(app, guest, {"name": f"w={w:g}", "w_us": w}))
        return out

    def schedule(self):
        """[(run, cell)] in the order they run: every cell once per run."""
        return [(run, cell) for run in range(1, self.runs + 1) for cell in self.cells()]

    def to_json(self):
        d = asdict(self)
        d["schedule_text"] = self.schedule_text()
        return d


def quick_plan(**overrides):
    """CI's short mode: 2 x 5 s phases, 1 run, Linux and nom with one application, nom adaptive
    for the penalty function only."""
    base = dict(apps=("nhttpd",), guests=("linux", "nom"), w_values=(0, 20), runs=1,
                duration_s=10.0, change_at_s=5.0, adaptive_utilities=("penalty",))
    base.update(overrides)
    return Plan(**base)
