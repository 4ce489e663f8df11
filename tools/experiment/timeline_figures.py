"""The report's figures over time: for each application, W, price, load class, profit rate,
throughput, outbound traffic and exits against time in nom's adaptive runs (one repetition
each: the first with a timeline), drawn by the live dashboard's own plot
(tools/dashboard/plot.py) as SVG, the load and price change marked.

Each adaptive variant is one line; its samples come from timeline.py (timeline.csv beside the
run's other raw outputs).
"""
import os

from dashboard import plot

from . import timeline

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
    """The price change (the provider's clock starts with the *many* load, so at the plan's
    change_at_s) and the start of each later load phase (the runner's moment, after the first
    phase's load tools finished: it can come later than the price)."""
    out = []
    if plan.get("change_at_s") is not None and plan.get("high_price") is not None:
        out.append((plan["change_at_s"], f"price {plan['high_price']:g} $/Gbit"))
    starts = sorted(meta.get("phase_starts_s", {}).items(), key=lambda kv: kv[1])
    return out + [(t, f"load {phase}") for phase, t in starts[1:]]


def write(folder, records, app, plan):
    """Writes fig-timeline-APP-*.svg into folder; returns the report's Markdown lines (none
    when no adaptive run of app has a timeline)."""
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
    for column, title, unit in PLOTS:
        series = {names[name]: [(row["t_s"], _value(row, column)) for row in rows]
                  for name, (_, rows, _, _) in runs.items()}
        if not any(v is not None for pts in series.values() for _, v in pts):
            lines += [f"- {app} {title}: not reported by the application.", ""]
            continue
        name = f"fig-timeline-{app}-{column.replace('_', '-')}.svg"
        with open(os.path.join(folder, name), "w") as f:
            f.write(plot.svg(f"{app}: {title}", unit, series, since_start=True,
                             marks=marks(first_meta, plan)))
        lines += [f"![{app} {title} over time]({name})", ""]
    return lines
