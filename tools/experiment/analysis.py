"""From records to the paper's numbers: per-phase figures, profit per run, means and deviations.

Throughput T for profit is the guest's outbound traffic in Gbit/s (bytes on its tap, profit
module docstring); throughput in the figures is operations/s, as in the paper. Latency and
jitter are the mean and standard deviation of per-operation latency (paper 3.6). Exits/s under
TCG are exit equivalents: guest notifications + interrupts delivered (vmcounters), under KVM
KVM's own exit count. Every mean across runs comes with its sample standard deviation and n.
"""
import math
import statistics

from kvmcost import dilation
from priceprovider import Schedule
from profit import KINDS, Measurement, UtilityParams, run_profit

from . import calibration, hostspeed, kvmmodel
from .plan import ADAPTIVE_MODES, adaptive_variant



def phase_figures(fig, value_d=None):
    """Derived per-phase numbers of one run: a flat dict (None where not measured). value_d:
    the D the KVM-equivalent figures are valued at (valuation_dilation), else the phase's own
    (on the instruction clock always the window's measured d_window: kvmmodel.valuation_d);
    "dilation" is always the phase's own, the D its guest ran at."""
    secs = fig["seconds"]
    lat = fig.get("latency_us") or {}
    c = fig.get("counters") or {}
    ops_s = fig["ops"] / secs if secs else None
    out = {
        "ops_s": ops_s,
        "gbps": fig["bytes_out"] * 8 / 1e9 / secs if secs and fig.get("bytes_out") is not None
        else None,
        "latency_us": lat.get("mean"), "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
        "jitter_us": lat.get("stddev"),
        "insns_per_req": c.get("insns_per_req"),
        "exits_per_req": c.get("kvm_exits_per_req", c.get("exit_equiv_per_req")),
        "irqs_per_req": c.get("kvm_injections_per_req",
                              c.get("ledger_irqs_per_req", c.get("irqs_per_req"))),
        "all_irqs_per_req": c.get("all_irqs_per_req"),
        "cpu_util": c.get("vcpu_util"),
        "cpu_pct": c["vcpu_util"] * 100 if c.get("vcpu_util") is not None else None,
    }
    for per_req, per_s in (("exits_per_req", "exits_s"), ("irqs_per_req", "irqs_s"),
                           ("all_irqs_per_req", "all_irqs_s")):
        out[per_s] = out[per_req] * ops_s if out[per_req] is not None and ops_s else None
    # Under the exit-cost model (tools/kvmcost): D, the charged exit cost and the modelled
    # KVM-equivalent figures (kvmmodel.py says how); None without it.
    dilation = (fig.get("kvmcost") or {}).get("dilation")
    kvm = kvmmodel.dilated(ops_s, out["latency_us"], kvmmodel.valuation_d(fig.get("kvmcost"),
                                                                          value_d))
    out.update(dilation=dilation, d_window=(fig.get("kvmcost") or {}).get("d_window"),
               d_insn=c.get("d_insn"), exit_ns_per_req=c.get("exit_ns_per_req"),
               ops_s_kvm=kvm["ops_s"], latency_kvm_us=kvm["latency_us"],
               projected_us_per_req=kvmmodel.project_ledger_us(out["insns_per_req"],
                                                               c.get("exit_ns_per_req")),
               exit_share=kvmmodel.exit_share(c.get("exit_ns_per_req"), kvm["ops_s"]))
    return out


# A phase's fast-host valuation needs at least this share of it measured on a fast host: the
# rate over less is mostly the state the controller happened to be in at those moments.
MIN_FAST_SHARE = 0.2


def fast_pieces(fig, pieces):
    """The pieces of one phase (phase_measurements) that ran on a fast host
    (hostspeed.is_fast), laid end to end and stretched to cover the phase: the phase valued at
    its fast-host rate. None when the phase has no host-speed series or less than
    MIN_FAST_SHARE of it ran fast. Why: the Xeon host of 2026-11 spends 40-75 % of a phase in a
    state about 1.8x slower, and which runs land there is luck (the undilated pilot's adaptive
    run had 70 % slow samples, its W = 0 run 41-52 %): comparing variants on the intervals
    where each ran at the reference speed takes that luck out. It is a view beside the whole
    run's profit, never instead of it."""
    flags = _fast_flags(fig, pieces)
    if not pieces or flags is None:
        return None
    fast = [p for p, ok in zip(pieces, flags) if ok]
    fast_s = sum(b - a for a, b, *_ in fast)
    if fast_s < MIN_FAST_SHARE * fig["seconds"]:
        return None
    stretch, at, out = fig["seconds"] / fast_s, 0.0, []
    for a, b, *rest in fast:
        out.append((at, at + (b - a) * stretch, *rest))
        at += (b - a) * stretch
    return out


def _fast_flags(fig, pieces):
    """Whether each piece ran on a fast host (hostspeed.is_fast); None without a series."""
    flags = [hostspeed.is_fast(fig.get("host_speed"), a, b) for a, b, *_ in pieces]
    return None if None in flags else flags


def fast_share(fig):
    """The share of a phase's measured seconds that ran on a fast host, or None (no series)."""
    pieces = phase_measurements(fig)
    flags = _fast_flags(fig, pieces) if pieces else None
    if flags is None:
        return None
    return sum(b - a for (a, b, *_), ok in zip(pieces, flags) if ok) / fig["seconds"]


def measurements(record, change_at_s, kvm=False, value_d=None, fast_only=False):
    """The run as profit.Measurement intervals, or None without throughput or latency.
    kvm: in KVM-equivalent units (the dilated model of kvmmodel.py: Gbit/s x D, latency and
    jitter / D, D being kvmmodel.valuation_d's), None for a phase without D. The
    intervals are in the plan's seconds: the run's wall-clock phases, or for phases run in
    undilated time (Plan.phase_clock, the record's phase_scale: wall seconds per plan second)
    those divided by it. Either way each run is valued as the plan's 120 s of a hardware host
    serving at its measured KVM-equivalent rates, whatever its D. fast_only: each phase at its
    fast-host rate (fast_pieces), None where a phase has none."""
    out = []
    scale = record.get("phase_scale") or 1.0
    for phase, offset in (("many", 0.0), ("single", change_at_s)):
        fig = record["phases"].get(phase)
        if not fig:
            continue
        pieces = phase_measurements(fig)
        if pieces and fast_only:
            pieces = fast_pieces(fig, pieces)
            if pieces is None:
                return None
        if pieces and scale != 1.0:
            pieces = [(a / scale, b / scale, t, lat, sd) for a, b, t, lat, sd in pieces]
        if pieces and kvm:
            d = kvmmodel.valuation_d(fig.get("kvmcost"), value_d)
            if not d:
                return None
            pieces = [(a, b, t * d, lat / d, sd / d) for a, b, t, lat, sd in pieces]
        if pieces is None:
            return None
        out += [Measurement(offset + a, offset + b, t, lat, sd) for a, b, t, lat, sd in pieces]
    return out


def phase_measurements(fig):
    """[(start_s, end_s, Gbit/s, latency_us, jitter_us)] of one phase: one piece per sample of
    the load tool when it gave samples, the phase's figures for the rest of the phase (the
    tool's last interval is usually partial). Bytes are only counted per phase (on the tap),
    so a sample's share is its share of the operations."""
    d = phase_figures(fig)
    secs, ops = fig["seconds"], fig["ops"]
    if not ops:
        return []  # nothing served, no useful throughput: U = 0 under every function
    if d["gbps"] is None or d["latency_us"] is None:
        return None
    bytes_per_op = fig["bytes_out"] / ops if ops else 0.0
    pieces, start, done = [], 0.0, 0
    for s in fig.get("samples") or []:
        end = min(s["t_s"], secs)
        if end <= start:
            continue
        if s.get("latency_mean_us") is not None and s["ops"] > 0:
            gbps = s["ops"] * bytes_per_op * 8 / 1e9 / (end - start)
            pieces.append((start, end, gbps, s["latency_mean_us"],
                           s.get("latency_stddev_us") or 0.0))
        start, done = end, done + s["ops"]
    if secs > start:
        rest = max(0, ops - done)
        gbps = rest * bytes_per_op * 8 / 1e9 / (secs - start)
        pieces.append((start, secs, gbps, d["latency_us"], d["jitter_us"] or 0.0))
    return pieces


def record_profit(record, plan, params, kvm=False, value_d=None, fast_only=False):
    """{kind: $} of one run, or None if the run lacks throughput or latency (kvm: or D;
    fast_only: or a fast-host rate of each phase)."""
    ms = measurements(record, plan["change_at_s"], kvm, value_d, fast_only)
    if not ms:
        return None
    schedule = Schedule.parse(plan["schedule_text"])
    result = {}
    for kind in KINDS:
        try:
            result[kind] = run_profit(ms, schedule, kind, params)
        except ValueError:  # e.g. a zero latency for the bonus
            result[kind] = None
    return result


def valuation_dilation(records):
    """The D at which a pass's KVM-equivalent figures are valued: the one D every phase ran at
    (a pass run at its reference D, calibration.py), else the D of the reference calibration
    of the runs' own (calibration.reference: each side's median), else None (fewer than
    calibration.MIN_RUNS runs calibrated: each phase is valued at its own D).

    Why one D for every run and not each boot's own: a run's D comes from a calibration of a
    few seconds before its guest boots, and it says nothing about how fast that run then went.
    Over the 126 nom runs of results/2026-11-26-{b77589b,nhttpd-c1e938b,memcached-4c69e84}
    the correlation of a run's D with its raw "many" throughput (each relative to its cell's
    mean) is -0.15 to 0.08 per application, and the KVM-equivalent throughput (raw x own D)
    scatters more than the raw one in 4 of the 5 groups (e.g. memcached at 4c69e84: 3.5% vs
    3.1%): the boot's D adds its calibration noise (1-2%) to the valuation, doubled where
    profit goes with throughput / latency (the bonus). The calibration median is the better
    estimate of the dilation all runs of one pass shared. In such a pass each guest still ran
    at its own boot's D (its clock, its exit charges); passes since run every guest at the
    reference D (calibration.py), and this is that D."""
    ran_at = {(f.get("kvmcost") or {}).get("dilation") for r in records
              for f in r["phases"].values()} - {None}
    if len(ran_at) == 1:
        return ran_at.pop()
    ref = calibration.reference([calibration.of_record(r) for r in records])
    return dilation.d_of(ref) if ref else None


def stats(values):
    """(mean, sample stddev, n) of the non-None values; (None, None, 0) if there are none."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return None, None, 0
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return statistics.fmean(vals), sd, len(vals)


def params_of(plan_json):
    p = plan_json.get("utility_params")
    return UtilityParams(**p) if p else UtilityParams()


class Analysis:
    """Everything the report shows, from the records and the plan of one results folder."""

    def __init__(self, records, plan_json):
        self.plan = plan_json
        self.params = params_of(plan_json)
        # Under an exit-cost model a run's profit is valued in KVM-equivalent figures: the
        # units the guests' own clocks (dilated) and nom's controller decide in, and the only
        # ones in which the SLO and the utility's rates mean what the paper means. The profit
        # of the raw TCG figures is kept beside it (profit_raw, profit.csv's *_raw columns).
        self.kvm = plan_json.get("kvmcost", "off") != "off"
        self.ok = [r for r in records if r["status"] == "ok"]
        self.not_ok = [r for r in records if r["status"] != "ok"]
        self.value_d = valuation_dilation(self.ok) if self.kvm else None
        for r in self.ok:
            r["derived"] = {p: phase_figures(f, self.value_d) for p, f in r["phases"].items()}
            r["profit_raw"] = record_profit(r, plan_json, self.params)
            r["profit"] = (record_profit(r, plan_json, self.params, kvm=True,
                                         value_d=self.value_d) if self.kvm
                           else r["profit_raw"])
            # The same valuation over the intervals each run spent on a fast host
            # (fast_pieces): a view that takes the host's changes of speed out.
            r["profit_fast"] = record_profit(r, plan_json, self.params, kvm=self.kvm,
                                             value_d=self.value_d, fast_only=True)

    # -- selection -------------------------------------------------------------------------
    def runs(self, app, guest, variant):
        return [r for r in self.ok if r["app"] == app and r["guest"] == guest
                and r["variant"]["name"] == variant]

    def figure(self, app, guest, variant, phase, name):
        """(mean, stddev, n) of a derived figure across runs."""
        return stats([r["derived"].get(phase, {}).get(name)
                      for r in self.runs(app, guest, variant)])

    def profit(self, app, guest, variant, kind, raw=False, basis="profit"):
        """(mean, stddev, n) of a run's profit under utility kind (raw: from the raw TCG
        figures; else in the pass's verdict units, see __init__; basis "profit_fast": at the
        fast-host rates, fast_pieces). nom "adaptive" stands for the run that adapted for kind
        (plan.adaptive_variant) when that variant ran, and so does "adaptive-online" for the
        online mode's runs."""
        mode = {"adaptive": "offline-profile", "adaptive-online": "online"}.get(variant)
        if guest == "nom" and mode:
            own = adaptive_variant(kind, mode)["name"]
            if self.runs(app, guest, own):
                variant = own
        key = "profit_raw" if raw else basis
        return stats([(r[key] or {}).get(kind) for r in self.runs(app, guest, variant)])

    def reasons(self, app, guest, variant=None):
        """Distinct reasons why (app, guest[, variant]) did not run or failed."""
        seen = []
        for r in self.not_ok:
            if r["app"] == app and r["guest"] == guest and (
                    variant is None or r["variant"]["name"] == variant):
                text = f"{r['status']}: {r.get('reason', '')}"
                if text not in seen:
                    seen.append(text)
        return seen

    # -- nom's batching delay (paper 6.5-6.7) ----------------------------------------------
    def w_values(self, app):
        ws = {r["variant"]["w_us"] for r in self.ok
              if r["app"] == app and r["guest"] == "nom" and "w_us" in r["variant"]}
        return sorted(ws)

    def best_w(self, app):
        """{"tpt": W of the best mean throughput under many, "lat": W of the best mean latency
        under single}; a key is missing when no fixed-W run measured it."""
        best = {}
        ws = self.w_values(app)
        tpt = [(self.figure(app, "nom", f"w={w:g}", "many", "ops_s")[0], w) for w in ws]
        tpt = [(v, w) for v, w in tpt if v is not None]
        if tpt:
            best["tpt"] = max(tpt)[1]
        lat = [(self.figure(app, "nom", f"w={w:g}", "single", "latency_us")[0], w) for w in ws]
        lat = [(v, w) for v, w in lat if v is not None]
        if lat:
            best["lat"] = min(lat, key=lambda vw: (vw[0], vw[1]))[1]
        return best

    def nom_variant(self, app):
        """The nom variant that stands for nom in the OS comparison: adaptive with its offline
        profile if it ran, else adaptive online (a run of online cells only), else the
        best-throughput fixed W (said so in the report)."""
        for mode in ADAPTIVE_MODES:  # offline-profile first
            variant = adaptive_variant("penalty", mode)["name"]
            if self.runs(app, "nom", variant):
                return variant
        best = self.best_w(app)
        return f"w={best['tpt']:g}" if "tpt" in best else "adaptive"

    def pareto(self, app):
        """[(w, many ops/s, single latency, on_frontier)] of the fixed-W runs (paper 6.7)."""
        pts = []
        for w in self.w_values(app):
            t = self.figure(app, "nom", f"w={w:g}", "many", "ops_s")[0]
            lat = self.figure(app, "nom", f"w={w:g}", "single", "latency_us")[0]
            if t is not None and lat is not None:
                pts.append((w, t, lat))
        out = []
        for w, t, lat in pts:
            dominated = any((t2 >= t and l2 <= lat) and (t2 > t or l2 < lat)
                            for _, t2, l2 in pts)
            out.append((w, t, lat, not dominated))
        return out


def ratio(a, b, positive=False):
    """a / b; None if either is missing, b is 0, or (positive) either is not > 0."""
    if a is None or b in (None, 0) or (positive and (a <= 0 or b <= 0)):
        return None
    return a / b

