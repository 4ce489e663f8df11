"""The report of a results folder: report.md and PNG plots regenerating paper figures 2-16 and
tables 1-2, the nom/Linux/OSv summary and the KVM projection, from the records alone (and nom
adaptive's W, price, load class and profit rate over time: timeline_figures.py, SVG).

`python3 tools/experiment/run.py --report-only RESULTS_DIR` regenerates it. Every number comes
from a record; a guest, application or variant without records shows "not run" with the
reasons the runner recorded, never a number.
"""
import glob
import os
import statistics

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from kvmcost import dilation  # noqa: E402
from profit import KINDS  # noqa: E402

from . import calibration, hostspeed, kvmmodel, resume, timeline_figures, verdict  # noqa: E402
from .analysis import MIN_FAST_SHARE, Analysis, ratio, stats  # noqa: E402
from .plan import APPS, GUEST_VARIANTS, GUESTS, PHASES, RAW_PASS  # noqa: E402
from .results import Results  # noqa: E402

GUEST_LABEL = {"linux": "Linux", "osv": "OSv", "nom": "nom"}
COLORS = {"nom": "#55a868", "linux": "#4c72b0", "linux nginx": "#8172b3", "osv": "#dd8452"}
FIRST_FIG = {"perf": 2, "profit": 5, "static": 8, "wsweep": 11, "pareto": 14}


def fmt(value, digits=3):
    """A number with `digits` significant digits, thousands separated; '-' for None."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:,.{max(0, digits - 1 - int(f'{mag:e}'.split('e')[1]))}f}"


def fmt_stat(s, digits=3):
    mean, sd, n = s
    if n == 0:
        return "not run"
    return fmt(mean, digits) + (f" ± {fmt(sd, 2)}" if n > 1 else "") + (f" (n={n})" if n != 1
                                                                        else "")


def _w(w_us):
    return "-" if w_us is None else f"{w_us:g}"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


def verdict_table(analysis, apps, basis="profit"):
    """The lines of issue 12's verdict (verdict.py) for apps: its explanation and its table
    (basis "profit_fast": at the runs' fast-host rates, analysis.fast_pieces)."""
    lines = ["Per utility function and controller mode: nom adaptive's mean profit against "
             "the bar *best fixed W's mean minus one pooled standard deviation* (the fixed W "
             "with the highest mean profit under that function; pooled over both samples), "
             "and against each other guest's mean. Profit in $ per run, mean ± SD (n). "
             "*undefined*: fewer than three runs between the two samples.", "",
             "| app | utility | mode | adaptive | best fixed | bar | reaches bar | "
             "more than |", "|---|---|---|---|---|---|---|---|"]
    for app in apps:
        for row in verdict.verdicts(analysis, app, basis):
            best = (f"W={row['best_w']:g}: {fmt_stat(row['best'])}" if row["best"]
                    else "no fixed-W run")
            reach = {True: "yes", False: "**no**", None: "undefined"}[row["meets_bar"]]
            rivals = ", ".join(
                f"{GUEST_LABEL[r['guest']]}"
                f"{'' if r['variant'] == 'default' else ' ' + r['variant']} "
                f"({fmt(r['profit'][0])}): "
                f"{ {True: 'yes', False: '**no**', None: '-'}[r['beaten']] }"
                for r in row["rivals"]) or "no other guest ran"
            # ran, but no run has a value on this basis (e.g. none ran fast long enough)
            adaptive = fmt_stat(row["adaptive"]) if row["adaptive"][2] else "no value"
            lines.append(f"| {app} | {row['utility']} | {row['mode']} | "
                         f"{adaptive} | {best} | {fmt(row['bar'])} | {reach} | "
                         f"{rivals} |")
    return lines



# Where the guests ran on the host when the plan pinned them (plan.py, Plan.pin_vcpu).
PINNED_NOTE = ("; every guest's vCPU thread ran on a host CPU of its own, the load generators "
               "and QEMU's other threads on the rest (tools/nomvm/placement.py)")
# What a plan's seconds are when its phases ran in undilated time (plan.py, Plan.phase_clock).
UNDILATED_NOTE = (" (undilated: the guest's clock under the exit-cost model, so each phase ran D "
                  "times as long on the wall; profit is valued over the plan's seconds)")

class Report:
    def __init__(self, folder):
        self.res = Results(folder)
        self.machine = self.res.read_json("machine.json")
        self.plan = self.res.read_json("plan.json")
        self.a = Analysis(self.res.records(), self.plan)
        # Whether the guests' clocks were the instruction clock (plan.py, Plan.guest_clock).
        self.insn_clock = self.plan.get("guest_clock") == "insn"
        self.apps = [a for a in APPS if a in self.plan["apps"]]
        self.guests = [g for g in GUESTS if g in self.plan["guests"]]
        self.lines = []
        self.pngs = []

    # -- output helpers ----------------------------------------------------------------------
    def out(self, *lines):
        self.lines.extend(lines)

    def save(self, fig, name):
        fig.tight_layout()
        fig.savefig(os.path.join(self.res.path, name), dpi=110)
        plt.close(fig)
        self.pngs.append(name)
        return name

    def stat(self, app, guest, variant, phase, name):
        """fmt_stat of a figure; "none measured" when the cell ran but never measured it,
        "failed" when its every run failed (the report's table of cells says why)."""
        s = self.a.figure(app, guest, variant, phase, name)
        if s[2] == 0 and self.a.runs(app, guest, variant):
            return "none measured"
        if s[2] == 0 and any(r.startswith("failed") for r in self.a.reasons(app, guest, variant)):
            return "failed"
        return fmt_stat(s)

    def not_run_text(self, app, guest, variant=None):
        reasons = self.a.reasons(app, guest, variant)
        return "; ".join(reasons) if reasons else "not in this plan"

    def columns(self, app):
        """[(guest, variant, label)] compared for app: nom first, then each variant of the
        comparison guests in the plan (Linux runs the web load with nhttpd and nginx)."""
        cols = []
        for g in ("nom", "linux", "osv"):
            if g not in self.guests and g != "nom":  # nom's column stays, "not run"
                continue
            if g == "nom":
                v = self.a.nom_variant(app)
                cols.append((g, v, "nom" if v == "adaptive" else f"nom {v}"))
                continue
            for v in GUEST_VARIANTS.get((g, app), ("default",)):
                cols.append((g, v, GUEST_LABEL[g] + ("" if v == "default" else f" {v}")))
        return cols

    def every_phase(self):
        """(app, guest, variant, label, phase) of every column of every application."""
        return [(app, g, v, label, phase) for app in self.apps
                for g, v, label in self.columns(app) for phase in PHASES]

    def color(self, guest, variant):
        return COLORS.get(guest if variant in ("default", "adaptive") or guest == "nom"
                          else f"{guest} {variant}", "#937860")

    # -- the report --------------------------------------------------------------------------
    def write(self):
        m = self.machine
        self.out(f"# nom vs Linux vs OSv: accelerator {m['accel'].upper()} ({m['accel_reason']})",
                 "",
                 f"Measured {m['date_utc']} on {m['cpu_model']} ({m['cpus']} CPUs), {m['qemu']}, "
                 f"host kernel {m['host_kernel']}, commit {m['commit']}"
                 f"{' (work tree modified)' if m['dirty'] else ''}.", "",
                 f"Plan: {self.plan['runs']} run(s) of {fmt(self.plan['duration_s'])} s per cell"
                 f"{UNDILATED_NOTE if self.plan.get('phase_clock') == 'undilated' else ''}; "
                 f"load *many* then *single* and price {self.plan['schedule_text']} ($/Gbit, "
                 f"change at {fmt(self.plan['change_at_s'])} s); nom batching delays "
                 f"{', '.join(f'{w:g}' for w in self.plan['w_values'])} us"
                 f"{' and adaptive' if self.plan['adaptive'] else ''}"
                 f"{PINNED_NOTE if self.plan.get('pin_vcpu') else ''}. Values are mean ± sample "
                 "standard deviation across runs (n = runs that measured the value). "
                 "Raw figures: `raw/`, `figures.csv`, `profit.csv`; machine: `machine.json`.", "")
        self.pass_and_cuts()
        self.exit_cost_model()
        self.calibration_check()
        self.host_speed_check()
        self.booted_builds()
        self.sessions()
        self.planned_missing()
        self.summary()
        self.missing()
        self.performance()
        self.table1()
        self.table2()
        self.profits()
        self.static_vs_adaptive()
        self.verdict()
        self.batching()
        self.batching_ceiling()
        self.pareto()
        self.raw_and_kvm()
        self.run_spread()
        self.kvm_projection()
        path = os.path.join(self.res.path, "report.md")
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        return path

    def summary(self):
        others = []
        for g in ("linux", "osv"):  # Linux's variants, then OSv, in every app's order
            for app in self.apps:
                for col in self.columns(app)[1:]:
                    if col[0] == g and col[2] not in others:
                        others.append(col[2])
        self.out("## Summary: nom vs Linux vs OSv", "",
                 "Throughput under *many* load, latency and jitter under *single*, exits/s, "
                 "exits and guest instructions per request (under TCG exits are exit "
                 "equivalents: notifications + interrupts) under *many*, and profit of the "
                 "whole run. nom is its adaptive variant unless marked (its profit under each "
                 "utility function is that of the run adapting for that function). Profit "
                 "ratios are given only where both profits are positive.", "",
                 "| app | metric | nom | " + " | ".join(others) + " | "
                 + " | ".join(f"nom/{o}" for o in others) + " |",
                 "|---|---|---|" + "---|" * (2 * len(others)))
        metrics = [("throughput (ops/s)", "many", "ops_s"), ("latency (us)", "single",
                   "latency_us"), ("jitter (us)", "single", "jitter_us"),
                   ("exits/s", "many", "exits_s"), ("exits/request", "many", "exits_per_req"),
                   ("instructions/request", "many", "insns_per_req")]
        for app in self.apps:
            cols = self.columns(app)
            label = app + ("" if cols[0][1] == "adaptive" else f" (nom {cols[0][1]})")
            for title, phase, name in metrics:
                vals = {c[2]: self.a.figure(app, c[0], c[1], phase, name) for c in cols}
                texts = {c[2]: self.stat(app, c[0], c[1], phase, name) for c in cols}
                self._summary_row(label, title, cols[0][2], vals, others, texts=texts)
            for kind in KINDS:
                vals = {c[2]: self.a.profit(app, c[0], c[1], kind) for c in cols}
                units = ", KVM-equivalent" if self.a.kvm else ""
                self._summary_row(label, f"profit, {kind} (${units})",
                                  cols[0][2], vals, others, positive=True)
        self.out("")

    def _summary_row(self, app, title, nom, vals, others, positive=False, texts=None):
        none = (None, None, 0)
        texts = texts or {k: fmt_stat(v) for k, v in vals.items()}
        cells = [texts[nom]] + [texts[o] if o in vals else "-" for o in others]
        ratios = [fmt_ratio(ratio(vals[nom][0], vals.get(o, none)[0], positive)) for o in others]
        self.out(f"| {app} | {title} | " + " | ".join(cells + ratios) + " |")

    def missing(self):
        rows = {}
        for r in self.a.not_ok:
            if not resume.is_complete(r) and r["status"] != "not run":
                continue  # cut off: planned_missing() lists it
            key = (r["app"], r["guest"], r["variant"]["name"], r["status"], r.get("reason", ""))
            rows.setdefault(key, []).append(r["run"])
        for r in self.a.ok:  # ran, but a phase served nothing
            for phase, fig in r["phases"].items():
                if fig.get("note"):
                    key = (r["app"], r["guest"], r["variant"]["name"], f"ran, {phase}",
                           fig["note"])
                    rows.setdefault(key, []).append(r["run"])
        if not rows:
            return
        self.out("## Cells not run, failed, or with a phase that served nothing", "",
                 "| app | guest | variant | status | reason |", "|---|---|---|---|---|")
        for (app, guest, variant, status, reason), runs in sorted(rows.items()):
            reason = " ".join(reason.replace("|", "/").split())
            if len(reason) > 400:  # the whole text is in the record; a console's end says most
                reason = reason[:120] + " [...] " + reason[-260:]
            self.out(f"| {app} | {GUEST_LABEL[guest]} | {variant} | {status} "
                     f"(run {', '.join(map(str, runs))}) | {reason} |")
        self.out("")

    # -- paper 6.2: figures 2-4, tables 1-2 --------------------------------------------------
    def _bars(self, ax, groups, series, title, ylabel):
        """Grouped bars with error bars: groups (x labels), series {label: ([stat], color)}."""
        width = 0.8 / max(1, len(series))
        for i, (label, (stat_list, color)) in enumerate(series.items()):
            xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(groups))]
            means = [s[0] if s[0] is not None else 0 for s in stat_list]
            errs = [s[1] or 0 for s in stat_list]
            bars = ax.bar(xs, means, width, yerr=errs, capsize=3, label=label, color=color)
            for bar, s in zip(bars, stat_list):
                if s[2] == 0:
                    ax.annotate("not run", (bar.get_x() + bar.get_width() / 2, 0),
                                ha="center", va="bottom", rotation=90, fontsize=7)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)

    def performance(self):
        self.out("## Performance (paper 6.2)", "")
        for i, app in enumerate(self.apps):
            n = FIRST_FIG["perf"] + APPS.index(app)
            cols = self.columns(app)
            if not any(self.a.runs(app, g, v) for g, v, _ in cols):
                self.out(f"Figure {n}: {app} throughput and latency: not run ("
                         + "; ".join(f"{label}: {self.not_run_text(app, g, v)}"
                                     for g, v, label in cols) + ").", "")
                continue
            fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
            for ax, name, title, unit in ((ax1, "ops_s", "throughput", "operations/s"),
                                          (ax2, "latency_us", "latency", "us")):
                series = {label: ([self.a.figure(app, g, v, p, name) for p in PHASES],
                                  self.color(g, v)) for g, v, label in cols}
                self._bars(ax, list(PHASES), series, f"{app} {title}", unit)
            png = self.save(fig, f"fig{n:02d}-{app}-performance.png")
            self.out(f"Figure {n}: {app} throughput and latency", "", f"![figure {n}]({png})", "")
            for g, v, label in cols:
                if not self.a.runs(app, g, v):
                    self.out(f"- {label}: {self.not_run_text(app, g, v)}")
            self.out("")

    def table1(self):
        app = "memcached" if "memcached" in self.apps else (self.apps[0] if self.apps else None)
        if app is None:
            return
        self.out(f"### Table 1: {app} latency and jitter (us)", "",
                 "| scenario | OS | latency | p50 | p99 | jitter |", "|---|---|---|---|---|---|")
        for phase in PHASES:
            for g, v, label in self.columns(app):
                cells = [self.stat(app, g, v, phase, k)
                         for k in ("latency_us", "p50_us", "p99_us", "jitter_us")]
                self.out(f"| {phase} | {label} | " + " | ".join(cells) + " |")
        self.out("")

    def table2(self):
        self.out("### Table 2: exits, interrupt injections and CPU utilization", "",
                 "Under TCG there are no VM exits: *exits* are the events that would be exits "
                 "under KVM (guest notifications + device interrupts delivered), *irq injections* "
                 "the device interrupts delivered, *all interrupts* every interrupt the APIC "
                 "delivered, timers included (the paper's nom row is its timer); instructions "
                 "per request come from our TCG plugin. CPU utilization is the vCPU thread's "
                 "share of a host core.", "",
                 "| app | metric | OS | many | single |", "|---|---|---|---|---|")
        metrics = (("exits/s", "exits_s"), ("irq injections/s", "irqs_s"),
                   ("all interrupts/s (timers too)", "all_irqs_s"),
                   ("CPU utilization (%)", "cpu_pct"), ("exits/request", "exits_per_req"),
                   ("instructions/request", "insns_per_req"))
        for app in self.apps:
            for title, name in metrics:
                for g, v, label in self.columns(app):
                    cells = [self.stat(app, g, v, p, name) for p in PHASES]
                    self.out(f"| {app} | {title} | {label} | " + " | ".join(cells) + " |")
        self.out("")

    # -- paper 6.4-6.5: figures 5-10 ----------------------------------------------------------
    def profits(self):
        self.out("## Profit (paper 6.4)", "",
                 "Profit of a run = integral of U(T, L, sigma, P) over the run, in $, with T in "
                 "Gbit/s of the guest's outbound traffic and the units of tools/profit/utility.py "
                 f"(alpha {self.a.params.alpha:g}, beta {self.a.params.beta:g} per "
                 f"{self.a.params.refund_unit_us:g} us, gamma {self.a.params.gamma:g} x "
                 f"{self.a.params.bonus_unit_us:g} us, X {self.a.params.x:g}, "
                 f"L0 {self.a.params.l0_us:g} us).", "")
        if self.a.kvm:
            d_is = ("each phase's measured wall over guest time, d_window, on the instruction "
                    "clock" if self.insn_clock else "the pass's")
            self.out("Under the exit-cost model a run's profit is valued in KVM-equivalent "
                     "figures (throughput x D, latency and jitter / D: the dilated model of "
                     f"tools/experiment/kvmmodel.py, modelled, not measured; D {d_is}), over "
                     "the run's own wall-clock phases: the units in which every guest's clock, "
                     "nom's controller and the SLO work. The profit of the raw TCG figures "
                     "is in `profit.csv` (`*_raw`) and in the table below each figure.", "")
        elif self.machine["accel"] == "tcg":
            self.out("Under TCG every guest runs tens of times slower than under hardware KVM, "
                     "so latencies are far above the paper's and the SLO (L0) is not scaled to "
                     "them: the penalty function mostly sees SLO violations here. The "
                     "comparison between guests stands; the absolute profits are TCG's.", "")
        for app in self.apps:
            n = FIRST_FIG["profit"] + APPS.index(app)
            series = {label: ([self.a.profit(app, g, v, k) for k in KINDS], self.color(g, v))
                      for g, v, label in self.columns(app)}
            self._profit_figure(n, app, f"{app} profit" + (", KVM-equivalent" if self.a.kvm
                                                           else ""),
                                series, f"fig{n:02d}-{app}-profit.png")
            if self.a.kvm:
                self.out("Raw TCG figures' profit ($ per run):", "",
                         "| utility | " + " | ".join(series) + " |",
                         "|---|" + "---|" * len(series))
                for k in KINDS:
                    self.out(f"| {k} | " + " | ".join(
                        fmt_stat(self.a.profit(app, g, v, k, raw=True))
                        for g, v, _ in self.columns(app)) + " |")
                self.out("")

    def _profit_figure(self, n, app, title, series, png):
        if not any(s[2] for stats, _ in series.values() for s in stats):
            self.out(f"Figure {n}: {title}: not run.", "")
            return
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        self._bars(ax, list(KINDS), series, title, "$ per run")
        ax.axhline(0, color="black", linewidth=0.6)
        self.save(fig, png)
        self.out(f"Figure {n}: {title}", "", f"![figure {n}]({png})", "",
                 "| utility | " + " | ".join(series) + " |",
                 "|---|" + "---|" * len(series))
        for i, k in enumerate(KINDS):
            self.out(f"| {k} | " + " | ".join(fmt_stat(s[i]) for s, _ in series.values()) + " |")
        self.out("")

    def pass_and_cuts(self):
        """Which QEMU this pass ran on and what the time budget cut (plan.Plan.fit)."""
        kvm = self.plan.get("kvmcost", "off")
        if "pass_name" in self.plan:
            self.out(f"Pass: {self.plan['pass_name']} ("
                     + ("the stock QEMU: raw TCG figures only" if kvm == "off" else
                        f"the exit-cost QEMU, model {kvm}: raw and KVM-equivalent figures")
                     + ").", "")
        for cut in self.plan.get("cuts") or []:
            self.out(f"**Cut to fit the time budget:** {cut}.", "")

    def exit_cost_model(self):
        """The exit-cost model and D of this pass (tools/kvmcost), when it had one."""
        ds = stats([d.get("dilation") for r in self.a.ok for d in r["derived"].values()])
        if not ds[2]:
            return
        costs = sorted({(r.get("info") or {}).get("kvmcost", {}).get("cost_file") or "?"
                        for r in self.a.ok if (r.get("info") or {}).get("kvmcost")})
        one_d = ds[1] == 0
        d_text = (f"every run ran at the pass's reference D, {ds[0]:.3f} "
                  f"(`{calibration.REFERENCE_FILE}`; each run's own calibration only checked "
                  "the host: tools/experiment/calibration.py)" if one_d else
                  f"the time dilation D, measured at each boot, was {fmt_stat(ds)} over the "
                  "phases")
        clock = (" Every guest's clock was the instruction clock (`--guest-clock insn`, "
                 "tools/kvmcost README \"The instruction clock\"): its time is its "
                 "instructions at one host cycle each plus each charged cost, and wall time / D "
                 "only while it halts, so TCG's speed on each guest's code (D_insn, which "
                 "differs from one guest to another) and the host's stalls are in no guest's "
                 "time; D paces the stalls and the halts, and each phase is valued at its "
                 "window's measured dilation (d_window, the column below)."
                 if self.insn_clock else "")
        self.out(f"Exit-cost model: {self.plan.get('kvmcost')} (cost file "
                 f"{', '.join(f'`{c}`' for c in costs)}); {d_text}.{clock} Every guest ran "
                 "alike on that QEMU: each exit-equivalent charged its hardware-KVM cost x D. "
                 "Figures are raw (as measured, dilated) unless marked KVM-equivalent "
                 "(throughput x D, latency / D: tools/experiment/kvmmodel.py says what this "
                 "leaves out); the section \"Raw and KVM-equivalent\" puts them side by side. "
                 + ("" if one_d or self.insn_clock else
                    f"KVM-equivalent figures and profit are valued at one D for every run, "
                    f"{self.a.value_d:.3f}, the reference calibration's (below): a boot's own "
                    "D is a few seconds' calibration that does not track how fast its run "
                    "went (tools/experiment/analysis.py, valuation_dilation)."
                    if self.a.value_d else "Each phase is valued at its boot's own D (too "
                    "few calibrated runs for a reference)."), "")

    def calibration_check(self):
        """The runs' calibrations of D against the folder's reference (calibration.py), and the
        runs set aside because theirs was taken on a busy host."""
        stored = calibration.stored_reference(self.res.path)
        ref = stored or calibration.reference([calibration.of_record(r) for r in self.a.ok])
        if ref is None:
            return
        off = calibration.disturbed(self.a.ok, ref)
        aside = len(glob.glob(os.path.join(self.res.path, "disturbed", "*", "*", "run*.json")))
        whose = (f"`{calibration.REFERENCE_FILE}`, the D every run ran at" if stored else
                 "each side's median over these runs")
        text = (f"Calibration of D: the reference ({whose}) is "
                f"{ref['native_ticks']:,.0f} native and {ref['tcg_ticks']:,.0f} TCG ticks; a "
                f"run's own may be at most {dilation.NATIVE_TOLERANCE:.0%} (native) and "
                f"{dilation.TCG_TOLERANCE:.0%} (TCG) slower (tools/kvmcost/dilation.py). ")
        if off:
            text += (f"**{len(off)} run(s) here were calibrated on a busy host** (their D is "
                     "another cost model; `run.py --resume` sets them aside and runs them "
                     "again): " + "; ".join(f"{r['app']}/{r['guest']}-{r['variant']['name']}"
                                            f"/run{r['run']} ({why})" for r, why in off) + ".")
        else:
            text += "Every run here is within it."
        if aside:
            text += (f" {aside} run(s) were set aside and run again (`disturbed/README.md` "
                     "says why).")
        self.out(text, "")

    def booted_builds(self):
        """Whether every nom run booted the same build (nom_driver.py records the sha256 of each
        ELF it boots): a folder is one build's measurement, and a run that booted another is
        not of it. ELF by ELF, as the runner checks (runner.booted_elfs): each application's
        runs boot its own ELF, so runs of two applications share only the kernel's."""
        digests, runs = {}, 0
        for r in self.a.ok:
            elfs = ((r.get("info") or {}).get("image") or {}).get("elf_sha256")
            runs += bool(elfs)
            for path, digest in (elfs or {}).items():
                digests.setdefault(path, {}).setdefault(digest, []).append(
                    f"{r['app']}/{r['guest']}-{r['variant']['name']}/run{r['run']}")
        differ = {path: by for path, by in digests.items() if len(by) > 1}
        if digests and not differ:
            self.out(f"Booted builds: every one of the {runs} nom run(s) that recorded its "
                     f"ELFs' sha256 booted the same build of each of its ELFs "
                     f"({len(digests)} ELF(s) in all).", "")
        for path, by in sorted(differ.items()):
            parts = [f"{len(names)} run(s) booted {path} {digest[:12]}"
                     f" ({'; '.join(names[:4])}{', ...' if len(names) > 4 else ''})"
                     for digest, names in sorted(by.items(), key=lambda kv: -len(kv[1]))]
            self.out(f"**Booted builds: the nom runs booted {len(by)} different builds of "
                     f"{path}** (set the minority aside, disturbed/): " + "; ".join(parts) + ".",
                     "")

    def host_speed_check(self):
        """How much of the measured phases ran on a slow host (hostspeed.py: the calibration
        mix sampled beside the load); phases from before the sampler say they were not."""
        sampled, unsampled = [], 0
        for r in self.a.ok:
            for phase, fig in (r.get("phases") or {}).items():
                hs = fig.get("host_speed")
                if hs and hs.get("slow_fraction") is not None:
                    sampled.append((hs["slow_fraction"], hs["median_ratio"], r, phase))
                else:
                    unsampled += 1
        if not sampled:
            return
        slow = sorted((x for x in sampled if x[0] > 0), key=lambda x: -x[0])
        text = (f"Host speed during the measured phases (tools/experiment/hostspeed.py: the "
                f"native calibration mix every {hostspeed.INTERVAL_S:g} s beside the load, "
                f"against the reference; slow: more than {hostspeed.SLOW_RATIO:.2f}x its ticks): "
                f"{len(sampled)} phase(s) sampled, {len(slow)} with slow samples, median "
                f"slow share {statistics.median(x[0] for x in sampled):.0%}")
        if unsampled:
            text += f"; {unsampled} phase(s) ran before the sampler existed and were not sampled"
        text += "."
        if slow:
            text += " Slowest: " + "; ".join(
                f"{r['app']}/{r['guest']}-{r['variant']['name']}/run{r['run']} {phase} "
                f"{share:.0%} slow (median {ratio:.2f}x)" for share, ratio, r, phase in slow[:5]) + "."
        self.out(text, "")

    def sessions(self):
        """The sessions that ran into this folder (run.py --resume adds one each)."""
        try:
            sessions = self.res.read_json("sessions.json")
        except (OSError, ValueError):
            return
        self.out("Sessions that ran into this folder (host load: 1-minute load average at "
                 "start and end; each run's own is in its record, `loadavg`):", "")
        for s in sessions:
            m = s.get("machine") or {}
            self.out(f"- {s.get('started_utc')} to {s.get('ended_utc', '(no end recorded)')}: "
                     f"{'resumed' if s.get('resumed') else 'started'}, commit "
                     f"{m.get('commit')}{' (modified)' if m.get('dirty') else ''}, "
                     f"{s.get('runs_left_at_start')} runs to go, ended "
                     f"{s.get('end', 'not recorded (still running, or killed)')}, load "
                     f"{fmt(s.get('loadavg_start'))} -> {fmt(s.get('loadavg_end'))}")
        self.out("")

    def planned_missing(self):
        """The runs the plan asks for that this folder lacks (resume.missing)."""
        gaps = resume.missing(self.res, self.plan)
        if not gaps:
            return
        runs = sum(len(v) for v in gaps.values())
        self.out(f"## Incomplete: {runs} planned run(s) are not in this folder", "",
                 "The experiment was cut off before them (or they were interrupted); "
                 f"`python3 tools/experiment/run.py --resume {self._top_folder()}` runs them. "
                 "Every figure below comes from the runs that are here.", "",
                 "| app | cell | runs missing |", "|---|---|---|")
        for (app, key), missing_runs in gaps.items():
            self.out(f"| {app} | {key} | {', '.join(map(str, missing_runs))} |")
        self.out("")

    def _top_folder(self):
        """The folder run.py --resume takes: this one, or its parent for the raw-TCG pass."""
        path = self.res.path
        return os.path.dirname(path) if os.path.basename(path) == RAW_PASS else path

    def raw_and_kvm(self):
        """Raw and KVM-equivalent figures side by side, every guest and phase (exit-cost
        passes only)."""
        if not any(d.get("dilation") for r in self.a.ok for d in r["derived"].values()):
            return
        valued = ("the phase's measured wall over guest time (d_window, the instruction "
                  "clock)" if self.insn_clock else "the pass's valuation D (see the exit-cost "
                  "model above)")
        self.out("## Raw and KVM-equivalent, side by side", "",
                 "Raw: as measured on the exit-cost QEMU (dilated by D, the column: each "
                 "boot's own); KVM-equivalent: throughput x D and latency / D of the same runs, "
                 f"D {valued}; projected: instructions x CPI / f + the ledger's exit cost "
                 "per request (kvmmodel.py).", "",
                 "| app | OS | phase | D | d_window | ops/s raw | ops/s KVM-eq | "
                 "latency us raw | latency us KVM-eq | projected us/req |",
                 "|---|---|---|---|---|---|---|---|---|---|")
        for app, g, v, label, phase in self.every_phase():
            cells = [self.stat(app, g, v, phase, k) for k in
                     ("dilation", "d_window", "ops_s", "ops_s_kvm", "latency_us",
                      "latency_kvm_us", "projected_us_per_req")]
            self.out(f"| {app} | {label} | {phase} | " + " | ".join(cells) + " |")
        self.out("")

    def run_spread(self):
        """Why the runs of one cell differ. A phase's raw throughput is the vCPU's busy share x
        the host clock / (instructions per request x D_insn), D_insn being the host clock over
        the rate TCG ran the guest's instructions while busy (tools/vmcounters, per_request),
        so the runs' spread in throughput splits into the spreads of those three factors. On
        a host whose speed changes under the runs it is D_insn's: the same work per request
        at the same busy share, run faster or slower. Cells with two or more runs whose
        counters gave D_insn."""
        rows = []
        for app, guest, variant in sorted({(r["app"], r["guest"], r["variant"]["name"])
                                           for r in self.a.ok}):
            for phase in PHASES:
                figs = [r["derived"].get(phase) or {} for r in self.a.runs(app, guest, variant)]
                figs = [d for d in figs if d.get("d_insn") and d.get("ops_s")
                        and d.get("cpu_util") and d.get("insns_per_req")]
                if len(figs) >= 2:
                    rows.append((app, guest, variant, phase, figs))
        if not rows:
            return
        self.out("## Why the runs of one cell differ", "",
                 "Raw throughput = vCPU busy share x host clock / (instructions per request x "
                 "D_insn), D_insn = host clock / the rate TCG ran the guest's instructions "
                 "while busy (CPI 1; it includes the exit-cost stalls and QEMU's device work "
                 "in the vCPU thread). So a cell's spread in throughput (coefficient of "
                 "variation across its runs) is the spread of those factors: where D_insn's "
                 "matches the throughput's while the busy share and the instructions per "
                 "request hold, the runs did the same work, on a host that ran it at "
                 "different speeds. Such a spread is the host's, not the variant's.", "",
                 "| app | OS | variant | phase | n | ops/s raw | CV ops/s | D_insn | CV D_insn "
                 "| CV busy share | CV instructions/req |", "|---|---|---|---|---|---|---|---|---|---|---|")
        for app, guest, variant, phase, figs in rows:
            def cv(name):
                vals = [d[name] for d in figs]
                return f"{statistics.stdev(vals) / statistics.fmean(vals):.1%}"
            d_insn = [d["d_insn"] for d in figs]
            self.out(f"| {app} | {GUEST_LABEL[guest]} | {variant} | {phase} | "
                     f"{len(figs)} | {fmt(statistics.fmean(d['ops_s'] for d in figs))} | "
                     f"{cv('ops_s')} | {min(d_insn):.2f}-{max(d_insn):.2f} | {cv('d_insn')} | "
                     f"{cv('cpu_util')} | {cv('insns_per_req')} |")
        self.out("")

    def static_vs_adaptive(self):
        self.out("## Static vs adaptive batching delay (paper 6.5)", "",
                 "tpt: nom fixed at the W with the best mean throughput under *many*; lat: at "
                 "the W with the best mean latency under *single*; adp: nom adaptive with its "
                 "offline profile, the run that adapted for the row's utility function; adp "
                 "online: the same with the online learner.", "")
        for app in self.apps:
            n = FIRST_FIG["static"] + APPS.index(app)
            best = self.a.best_w(app)
            series = {}
            for col, color in (("tpt", "#8172b3"), ("lat", "#c44e52"), ("adp", "#55a868"),
                               ("adp online", "#64b5cd")):
                if col.startswith("adp"):
                    variant = "adaptive" if col == "adp" else "adaptive-online"
                    label = col
                elif col in best:
                    variant, label = f"w={best[col]:g}", f"{col} (W={best[col]:g})"
                else:
                    variant, label = None, f"{col} (no fixed-W run)"
                stats = [self.a.profit(app, "nom", variant, k) if variant else (None, None, 0)
                         for k in KINDS]
                series[label] = (stats, color)
            self._profit_figure(n, app, f"{app} profit: static vs adaptive", series,
                                f"fig{n:02d}-{app}-static-vs-adaptive.png")
            self._nom_self_report(app)
            self.out(*timeline_figures.write(self.res.path, self.a.ok, app, self.plan))

    def verdict(self):
        """Issue 12's criterion, computed (verdict.py)."""
        self.out("## Verdict: adaptive against the best fixed W and the other guests", "",
                 *verdict_table(self.a, self.apps), "")
        if any(r.get("profit_fast") for r in self.a.ok):
            self.out("### The same on a fast host", "",
                     "Each run valued at the rates of the seconds it ran on a fast host "
                     f"(every host-speed sample standing for part of them at most "
                     f"{hostspeed.SLOW_RATIO:.2f}x the reference; each phase's fast seconds "
                     "stretched to the whole phase; runs with less than "
                     f"{MIN_FAST_SHARE:.0%} of a phase fast are left out, so n may "
                     "be smaller). This takes out which run happened to meet the host's slow "
                     "state; it does not replace the verdict above (analysis.fast_pieces).",
                     "", *verdict_table(self.a, self.apps, "profit_fast")[2:], "")

    def _nom_self_report(self, app):
        """What nom's application said of itself at the end of each phase: W and price."""
        rows = []
        for r in self.a.ok:
            if r["app"] != app or r["guest"] != "nom":
                continue
            said = [r["phases"][p].get("nom") or {} for p in PHASES]
            if any(said):
                rows.append(f"| {r['variant']['name']} | {r['run']} | "
                            + " | ".join(f"{_w(d.get('w_us'))} | {fmt(d.get('price'))}"
                                         for d in said) + " |")
        if rows:
            self.out(f"{app} on nom, as the application reported at the end of each phase "
                     "(W in us, price in $/Gbit as read from the bulletin board):", "",
                     "| variant | run | W many | price many | W single | price single |",
                     "|---|---|---|---|---|---|", *rows, "")

    # -- paper 6.6-6.7: figures 11-16 ---------------------------------------------------------
    def batching(self):
        self.out("## Effect of the batching delay (paper 6.6)", "")
        for app in self.apps:
            n = FIRST_FIG["wsweep"] + APPS.index(app)
            ws = self.a.w_values(app)
            if not ws:
                self.out(f"Figure {n}: {app} throughput and latency vs W: not run ("
                         f"{self.not_run_text(app, 'nom')}).", "")
                continue
            tp = [self.a.figure(app, "nom", f"w={w:g}", "many", "ops_s") for w in ws]
            lat = [self.a.figure(app, "nom", f"w={w:g}", "single", "latency_us") for w in ws]
            fig, ax1 = plt.subplots(figsize=(6.5, 3.6))
            ax1.errorbar(ws, [s[0] for s in tp], yerr=[s[1] or 0 for s in tp], marker="o",
                         color="#4c72b0", capsize=3, label="throughput (many)")
            ax1.set_xlabel("batching delay W (us)")
            ax1.set_ylabel("operations/s (many)")
            ax2 = ax1.twinx()
            ax2.errorbar(ws, [s[0] for s in lat], yerr=[s[1] or 0 for s in lat], marker="s",
                         color="#c44e52", capsize=3, label="latency (single)")
            ax2.set_ylabel("latency, us (single)")
            ax1.set_title(f"{app}: throughput and latency vs batching delay")
            fig.legend(loc="upper center", fontsize=8, bbox_to_anchor=(0.5, 0.9))
            png = self.save(fig, f"fig{n:02d}-{app}-batching-delay.png")
            self.out(f"Figure {n}: {app} throughput (many) and latency (single) vs batching "
                     "delay", "", f"![figure {n}]({png})", "",
                     "| W (us) | ops/s (many) | latency us (single) |", "|---|---|---|")
            for w, t, la in zip(ws, tp, lat):
                self.out(f"| {w:g} | {fmt_stat(t)} | {fmt_stat(la)} |")
            self.out("")

    def batching_ceiling(self):
        """Per fixed W under "many": where a request's KVM-equivalent time goes, and the
        exits' share of it, the most any W could add to throughput (kvmmodel.exit_share)."""
        rows = [(app, w, [self.a.figure(app, "nom", f"w={w:g}", "many", k) for k in
                          ("ops_s_kvm", "insns_per_req", "exits_per_req", "exit_ns_per_req",
                           "exit_share")])
                for app in self.apps for w in self.a.w_values(app)]
        rows = [(app, w, figs) for app, w, figs in rows if figs[4][2]]
        if not rows:
            return
        self.out("### What W can buy under \"many\" in the exit-cost model", "",
                 "A request's KVM-equivalent time is 1 / the KVM-equivalent throughput; W "
                 "shortens it only by sparing charged exits (the instruction clock prices every "
                 "instruction alike, so batching's cache locality on a real CPU is not "
                 "modelled). The exits' share of that time is therefore the most any W could "
                 "add to throughput at the same instructions per request "
                 "(tools/experiment/kvmmodel.py, exit_share).", "",
                 "| app | W (us) | ops/s KVM-eq | instructions/req | exits/req | exit ns/req | "
                 "exits' share |", "|---|---|---|---|---|---|---|")
        for app, w, (ops, ins, ex, ns, share) in rows:
            pct = (share[0] * 100, (share[1] or 0) * 100, share[2])
            self.out(f"| {app} | {w:g} | {fmt_stat(ops)} | {fmt_stat(ins)} | {fmt_stat(ex)} | "
                     f"{fmt_stat(ns)} | {fmt_stat(pct, 2)} % |")
        self.out("")

    def pareto(self):
        self.out("## Throughput/latency Pareto frontier (paper 6.7)", "")
        for app in self.apps:
            n = FIRST_FIG["pareto"] + APPS.index(app)
            pts = self.a.pareto(app)
            if not pts:
                self.out(f"Figure {n}: {app} Pareto frontier: not run.", "")
                continue
            fig, ax = plt.subplots(figsize=(6.5, 3.6))
            for w, t, lat, front in pts:
                ax.plot(t, lat, "o", color="#4c72b0" if front else "black")
                ax.annotate(f"{w:g}", (t, lat), textcoords="offset points", xytext=(0, 5),
                            ha="center", fontsize=7)
            front = sorted((t, lat) for _, t, lat, f in pts if f)
            ax.plot([p[0] for p in front], [p[1] for p in front], "-", color="#4c72b0")
            ax.set_xlabel("throughput, operations/s (many)")
            ax.set_ylabel("latency, us (single)")
            ax.set_title(f"{app}: throughput/latency Pareto frontier (labels: W in us)")
            png = self.save(fig, f"fig{n:02d}-{app}-pareto.png")
            on = ", ".join(f"{w:g}" for w, _, _, f in pts if f)
            self.out(f"Figure {n}: {app} throughput/latency Pareto frontier (blue; W on it: "
                     f"{on})", "", f"![figure {n}]({png})", "")

    # -- the KVM projection -------------------------------------------------------------------
    def kvm_projection(self):
        m = kvmmodel.DEFAULT
        self.out("## Projection to a hardware-KVM host", "",
                 "time per request = instructions x CPI / f + exits x C_exit / f, with "
                 f"f = {m.clock_hz / 1e9:g} GHz (the paper's host, i7-3517U), CPI = {m.cpi:g} "
                 f"(assumed; range {m.cpi_range[0]:g}-{m.cpi_range[1]:g}), C_exit = "
                 f"{m.exit_cycles:,.0f} cycles (direct cost of a KVM exit, SplitX, WIOSCA 2011, "
                 f"table 1; high estimate {m.exit_cycles_high:,.0f} with indirect and handling "
                 "costs). Exits are the measured exit equivalents (notifications + interrupts) "
                 "per request. The model leaves out host-side device emulation and queueing, so "
                 "it is a lower bound on per-request time; see tools/experiment/kvmmodel.py.", "",
                 "| app | OS | phase | instructions/req | exits/req | projected us/req "
                 "(low-high) |", "|---|---|---|---|---|---|")
        for app, g, v, label, phase in self.every_phase():
            ins = self.a.figure(app, g, v, phase, "insns_per_req")[0]
            ex = self.a.figure(app, g, v, phase, "exits_per_req")[0]
            p = kvmmodel.project(ins, ex, m)
            proj = "not measured" if p["us"] is None else (
                f"{fmt(p['us'])} ({fmt(p['low'])}-{fmt(p['high'])})")
            self.out(f"| {app} | {label} | {phase} | {fmt(ins)} | {fmt(ex)} | "
                     f"{proj} |")
        self.out("")


def write_report(folder):
    """Writes report.md and the PNGs into folder; returns report.md's path."""
    return Report(folder).write()
