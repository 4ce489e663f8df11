"""figures.csv and profit.csv: every derived figure and profit of every run, one row each."""
import csv
import os

from profit import KINDS

from .analysis import Analysis
from .results import Results

FIGURE_COLUMNS = ("ops_s", "gbps", "latency_us", "p50_us", "p99_us", "jitter_us",
                  "insns_per_req", "exits_per_req", "irqs_per_req", "exits_s", "irqs_s",
                  "all_irqs_per_req", "all_irqs_s", "cpu_util", "dilation", "d_insn", "ops_s_kvm",
                  "latency_kvm_us", "exit_ns_per_req", "projected_us_per_req",
                  "exit_share")


def write_tables(folder):
    res = Results(folder)
    a = Analysis(res.records(), res.read_json("plan.json"))
    key = ("app", "guest", "variant", "run")
    with open(os.path.join(res.path, "figures.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(key + ("phase", "ops", "seconds", "bytes_out") + FIGURE_COLUMNS)
        for r in a.ok:
            for phase, fig in r["phases"].items():
                d = r["derived"][phase]
                w.writerow((r["app"], r["guest"], r["variant"]["name"], r["run"], phase,
                            fig["ops"], fig["seconds"], fig["bytes_out"])
                           + tuple(d[c] for c in FIGURE_COLUMNS))
    with open(os.path.join(res.path, "profit.csv"), "w", newline="") as f:
        w = csv.writer(f)
        raw = tuple(f"{k}_raw" for k in KINDS) if a.kvm else ()  # analysis.Analysis: units
        # *_fast: at the run's fast-host rates (analysis.fast_pieces), empty without them
        w.writerow(key + KINDS + raw + tuple(f"{k}_fast" for k in KINDS))
        for r in a.ok:
            p, p_raw, p_fast = r["profit"] or {}, r["profit_raw"] or {}, r["profit_fast"] or {}
            w.writerow((r["app"], r["guest"], r["variant"]["name"], r["run"])
                       + tuple(p.get(k) for k in KINDS)
                       + (tuple(p_raw.get(k) for k in KINDS) if a.kvm else ())
                       + tuple(p_fast.get(k) for k in KINDS))
