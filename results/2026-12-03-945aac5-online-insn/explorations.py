"""Where the online controller's runs in this folder spent their time at W > 0.

    python3 results/2026-12-03-945aac5-online-insn/explorations.py

Per run and phase, from raw/*/nom-adaptive-online*/run*/timeline.csv (one row per wall second):
the seconds at W > 0, the mean raw throughput at W = 0 and at W > 0, and the share of the
phase's requests those seconds cost against W = 0's rate (seconds_at_W>0 x (1 - ratio) / all
seconds)."""
import csv
import glob
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def phase_rows(path):
    rows = [r for r in csv.DictReader(open(path)) if r["throughput"]]
    for phase in ("many", "single"):
        yield phase, [(float(r["w_us"]), float(r["throughput"])) for r in rows
                      if r["phase"] == phase]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    print("app | utility | run | phase | s at W>0 / s | raw ops/s W=0 | raw ops/s W>0 | cost")
    for path in sorted(glob.glob(os.path.join(HERE, "raw/*/nom-adaptive-online*/run*/timeline.csv"))):
        app, cell, run = os.path.relpath(path, os.path.join(HERE, "raw")).split(os.sep)[:3]
        utility = cell.removeprefix("nom-adaptive-online").lstrip("-") or "penalty"
        for phase, samples in phase_rows(path):
            at0 = [t for w, t in samples if w == 0]
            above = [t for w, t in samples if w > 0]
            cost = len(above) * (1 - mean(above) / mean(at0)) / len(samples) if above else 0.0
            rate_above = f"{mean(above):,.0f}" if above else "-"
            print(f"{app} | {utility} | {run} | {phase} | {len(above)}/{len(samples)} | "
                  f"{mean(at0):,.0f} | {rate_above} | {100 * cost:.1f} %")


if __name__ == "__main__":
    main()
