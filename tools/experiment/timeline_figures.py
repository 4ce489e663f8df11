"""The report's figures over time: for each application, W, price, load class, profit rate,
throughput, outbound traffic and exits against time in nom's adaptive runs (one repetition
each: the first with a timeline), drawn by the live dashboard's own plot
(tools/dashboard/plot.py) as SVG, the load and price change marked.

Each adaptive variant is one line; its samples come from timeline.py (timeline.csv beside the
run's other raw outputs).
"""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from dashboard import plot  # noqa: E402

from . import timeline  # noqa: E402

COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")

# (column, title, unit); load class as a number so that it plots: 1 single, 2 many.
PLOTS = (("price", "price the application acts on", "$/Gbit"),
         ("w_us", "batching delay W", "us"),
         ("load_class", "load class seen (1 single, 2 many)", "class"),
         ("profit", "expected profit rate", "u$/s"),
         ("throughput", "throughput", "operations/s"),
         ("out_mbit_s", "outbound traffic (billed)", "Mbit/s"),
         ("exits_per_s", "exits (kicks + interrupts)", "/s"))
LOAD_CLASS = {"single": 1.0, "many": 2.0}


def first_timelines(folder, records, app):
    """{variant name: (run, rows, meta, variant)} of app's adaptive nom runs, each the
    lowest-numbered run that has a timeline."""
    out = {}
    for r in sorted(records, key=lambda r: r["run"]):
        name = r["variant"]["name"]
        if (r["app"] != app or r["guest"] != "nom" or not name.startswith("adaptive")
                or name in out):
            continue
        found = timeline.read_series(os.path.join(folder, "raw", app, f"nom-{name}",
                                                  f"run{r['run']}"))
        if found and found[0]:
            out[name] = (r["run"], *found, r["variant"])
    return out


def label(variant):
    """A legend short enough for the dashboard plot's margin: the utility function, and
    "online" for the online controller (variant names as plan.py makes them)."""
    v = variant or {}
    return v.get("utility", "penalty") + (" online" if v.get("mode") == "online" else "")


def _value(row, column):
    v = row.get(column)
    return LOAD_CLASS.get(v) if column == "load_class" else v


def marks(meta, plan):
    """The start of each later load phase (the runner's moment, after the first phase's load
    tools finished) and the price change: at that same moment when the runner changes the
    price with the load (plan.json's price_changes_with_load, since 9573d28), else on the
    provider's clock at the plan's change_at_s (it starts with the *many* load)."""
    starts = sorted(meta.get("phase_starts_s", {}).items(), key=lambda kv: kv[1])
    loads = [(t, f"load {phase}") for phase, t in starts[1:]]
    if plan.get("high_price") is None:
        return loads
    price = f"price {plan['high_price']:g} $/Gbit"
    if plan.get("price_changes_with_load"):
        return [(t, f"{price}, {text}") for t, text in loads]
    if plan.get("change_at_s") is None:
        return loads
    return [(plan["change_at_s"], price)] + loads


def png(folder, app, panels, at):
    """fig-timeline-APP.png: every panel [(title, unit, {label: [(t, v)]})] stacked over one
    time axis, the marks at (t, text) dashed; returns its name."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 1.7 * len(panels) + 0.6),
                             sharex=True, squeeze=False)
    for ax, (title, unit, series) in zip(axes[:, 0], panels):
        for i, (name, pts) in enumerate(series.items()):
            pts = [(t, v) for t, v in pts if v is not None]
            ax.plot([t for t, _ in pts], [v for _, v in pts], label=name,
                    color=COLORS[i % len(COLORS)], linewidth=1.2)
        for t, _ in at:
            ax.axvline(t, color="black", linestyle="--", linewidth=0.7)
        ax.set_title(f"{title} ({unit})", fontsize=9, loc="left")
        ax.tick_params(labelsize=8)
    axes[0, 0].legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("seconds since the many load began; dashed: "
                           + "; ".join(f"{text} at {t:.1f} s" for t, text in at), fontsize=8)
    fig.tight_layout()
    name = f"fig-timeline-{app}.png"
    fig.savefig(os.path.join(folder, name), dpi=100)
    plt.close(fig)
    return name


def write(folder, records, app, plan):
    """Writes fig-timeline-APP.png (every series) and fig-timeline-APP-*.svg (one a series,
    the live dashboard's plot) into folder; returns the report's Markdown lines (none when no
    adaptive run of app has a timeline)."""
    runs = first_timelines(folder, records, app)
    if not runs:
        return []
    first_meta = next(iter(runs.values()))[2]
    names = {name: label(variant) for name, (_, _, _, variant) in runs.items()}
    lines = [f"{app} on nom, adaptive, over time (t = 0 when the *many* load and the price "
             "clock began; dashed lines: the price change and the start of the *single* load, "
             "the runner's moment after the *many* load's tools ended). One reading a second "
             "from inside the guest's network: one `stats` request (memcached) or GET "
             "/nom/stats (nhttpd) on the application's own port, counted in its throughput "
             "and billed bytes like the load's; NetPIPE exposes no stats port, so its W, load "
             "class, price and profit rate come from the controller's console lines. Runs: "
             + ", ".join(f"{names[name]}: `raw/{app}/nom-{name}/run{run}/timeline.csv`"
                         for name, (run, _, _, _) in runs.items()) + ".", ""]
    panels, svgs, absent = [], [], []
    for column, title, unit in PLOTS:
        series = {names[name]: [(row["t_s"], _value(row, column)) for row in rows]
                  for name, (_, rows, _, _) in runs.items()}
        if not any(v is not None for pts in series.values() for _, v in pts):
            absent.append(title)
            continue
        panels.append((title, unit, series))
        name = f"fig-timeline-{app}-{column.replace('_', '-')}.svg"
        with open(os.path.join(folder, name), "w") as f:
            f.write(plot.svg(f"{app}: {title}", unit, series, since_start=True,
                             marks=marks(first_meta, plan)))
        svgs.append(f"[{title}]({name})")
    lines += [f"![{app} on nom, adaptive, over time]({png(folder, app, panels, marks(first_meta, plan))})",
              "", "Each series alone (SVG, the live dashboard's plot): " + ", ".join(svgs) + ".",
              ""]
    return lines + [f"- {app} {title}: not reported by the application." for title in absent] \
        + ([""] if absent else [])
