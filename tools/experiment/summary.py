"""The summary table of a results folder, for the top README: per application, profit,
throughput, latency, jitter and exits per request, nom vs Linux vs OSv, mean ± sample standard
deviation across runs; raw figures and, where the run was on the exit-cost QEMU, the
KVM-equivalent ones beside them (tools/experiment/kvmmodel.py, "dilated").

    python3 tools/experiment/run.py --report-only DIR                       # DIR/summary.md
    python3 tools/experiment/run.py --report-only DIR --update-readme README.md

The README's section lies between the two MARKERS lines; everything between them is replaced.
"""
import os

from profit import KINDS

from .analysis import stats
from .report import Report, fmt, fmt_stat
from . import resume
from .resume import missing

MARKERS = ("<!-- experiment-summary:begin (run.py --report-only DIR --update-readme README.md) -->",
           "<!-- experiment-summary:end -->")
# (title, phase, derived figure, KVM-equivalent figure or None)
ROWS = (("throughput, many (ops/s)", "many", "ops_s", "ops_s_kvm"),
        ("latency, single (us)", "single", "latency_us", "latency_kvm_us"),
        ("jitter, single (us)", "single", "jitter_us", None),
        ("exits/request, many", "many", "exits_per_req", None))


def _columns(report):
    """[label] of every guest column any application has: "nom" (whichever variant stands for
    it, Report.columns), then Linux's variants, then OSv."""
    labels = ["nom"]
    for guest in ("linux", "osv"):
        for app in report.apps:
            for g, _, label in report.columns(app)[1:]:
                if g == guest and label not in labels:
                    labels.append(label)
    return labels


def _dilation(report, key="dilation"):
    """(mean, sd, n) of D ("dilation": the pass's; "d_window": each phase's measured one) over
    every phase of every run that had one."""
    return stats([d.get(key) for r in report.a.ok for d in r["derived"].values()])


def _valuation(report, kvm, d):
    """The sentence that says how the KVM-equivalent figures were valued: by the pass's D (d:
    its _dilation), or on the instruction clock by each phase's own d_window
    (kvmmodel.valuation_d)."""
    if not d[2]:
        return " Stock QEMU: raw TCG figures only, no KVM-equivalent ones."
    if report.insn_clock:
        w = _dilation(report, "d_window")
        return (f" Exit-cost model **{kvm}** on the instruction clock: KVM-equivalent = raw "
                f"throughput × d_window, raw latency / d_window, each phase's own (its wall over "
                f"its guest time; {fmt(w[0])} ± {fmt(w[1], 2)}, n={w[2]} phases); the pass's "
                f"D = {fmt(d[0])} paced only halts and charged exits.")
    return (f" Exit-cost model **{kvm}**, D = {fmt(d[0])} ± {fmt(d[1], 2)} (n={d[2]} "
            "phases): KVM-equivalent = raw throughput × D, raw latency / D.")


def table(folder):
    """The Markdown lines of the summary of the results folder."""
    rep = Report(folder)
    m, plan = rep.machine, rep.plan
    d = _dilation(rep)  # no phase with a D: no cost model, no KVM-equivalent figures
    kvm = plan.get("kvmcost", "off")
    lines = [f"From `{_shown(folder)}`: accelerator **{m['accel'].upper()}** ({m['cpu_model']}, "
             f"{m['cpus']} CPUs; {m['qemu']}), measured {m['date_utc'][:10]} at commit "
             f"{m['commit']}{' (work tree modified)' if m['dirty'] else ''}; "
             f"{plan['runs']} run(s) of {fmt(plan['duration_s'])} s per cell, load *many* then "
             f"*single*, price {plan['schedule_text']} $/Gbit."
             + _valuation(rep, kvm, d)
             + " Values: mean ± sample SD (n = runs when not all). nom is its adaptive "
             "variant (each profit row: the run that adapted for that utility function) unless "
             "the app's label says otherwise. Full report: its `report.md`.", ""]
    gaps = missing(rep.res, plan)
    if gaps is None:
        lines += ["(Whether runs are missing is not checked: this folder's plan.json predates "
                  "`run.py --resume`.)", ""]
    elif gaps:
        runs = sum(len(v) for v in gaps.values())
        lines += [f"**Incomplete:** {runs} planned run(s) of {len(gaps)} cell(s) are not in "
                  "the folder (`run.py --resume` continues it); see its report.", ""]
    labels = _columns(rep)
    lines += ["| app | figure | " + " | ".join(labels) + " |",
              "|---|---|" + "---|" * len(labels)]
    for app in rep.apps:
        cols = rep.columns(app)
        app_label = app if cols[0][1] == "adaptive" else f"{app} (nom {cols[0][1]})"
        for title, phase, name, kvm_name in ROWS:
            lines.append(_row(rep, app_label, title, cols, labels,
                              lambda g, v: rep.stat(app, g, v, phase, name)))
            if kvm_name and d[2]:
                lines.append(_row(rep, app_label, title.replace(" (", ", KVM-equivalent ("),
                                  cols, labels,
                                  lambda g, v: rep.stat(app, g, v, phase, kvm_name)))
        for kind in KINDS:  # analysis.Analysis says in which units a pass values profit
            lines.append(_row(rep, app_label, f"profit, {kind} ($/run"
                              + (", KVM-equivalent)" if rep.a.kvm else ")"), cols, labels,
                              lambda g, v: fmt_stat(rep.a.profit(app, g, v, kind))))
            if rep.a.kvm:
                lines.append(_row(rep, app_label, f"profit, {kind} ($/run, raw TCG)", cols,
                                  labels,
                                  lambda g, v: fmt_stat(rep.a.profit(app, g, v, kind, raw=True))))
    return lines + [""] + _not_ok(rep)


def _not_ok(rep):
    """A line per cell with runs that failed or did not run, its first reason shortened."""
    seen = {}
    for r in rep.a.not_ok:
        if resume.is_complete(r) or r["status"] == "not run":
            key = (r["app"], f"{r['guest']}-{r['variant']['name']}", r["status"])
            seen.setdefault(key, " ".join(r.get("reason", "").split()))
    if not seen:
        return []
    return (["Cells with runs that failed or did not run (their reasons in full: the report):",
             ""] + [f"- {app} {key}: {status}: {reason[:160]}{'...' if len(reason) > 160 else ''}"
                    for (app, key, status), reason in sorted(seen.items())] + [""])


def _shown(folder):
    """folder relative to the repository when inside it (results/NAME), else as given."""
    from .machine import TOP
    path = os.path.abspath(folder)
    return os.path.relpath(path, TOP) if path.startswith(TOP + os.sep) else folder


def _row(rep, app, title, cols, labels, cell):
    by_label = {("nom" if i == 0 else label): cell(g, v) for i, (g, v, label) in enumerate(cols)}
    return (f"| {app} | {title} | "
            + " | ".join(by_label.get(label, "-") for label in labels) + " |")


def write(folder):
    """Writes folder/summary.md; returns its lines."""
    lines = table(folder)
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def replace_between_markers(text, lines):
    """text with everything between the MARKERS lines replaced by lines; ValueError when the
    markers are not both there, in order."""
    begin, end = (text.find(m) for m in MARKERS)
    if begin < 0 or end < begin:
        raise ValueError(f"no section between {MARKERS[0]!r} and {MARKERS[1]!r}")
    head = text[:begin + len(MARKERS[0])]
    return head + "\n" + "\n".join(lines) + "\n" + text[end:]


def update_readme(path, lines):
    with open(path) as f:
        text = f.read()
    new = replace_between_markers(text, lines)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)
