#!/usr/bin/env python3
"""Issue 12's verdict for the adaptive runs of one results folder against the fixed-W runs and
the other guests of another: a learner changed after a full experiment is judged without
running every fixed W and every guest again.

    python3 tools/experiment/verdict_across.py results/NEW --baseline results/FULL

writes NEW/verdict-against-FULL.md: the verdict table (report.py's) over NEW's nom adaptive
runs and FULL's other runs, and beside it the drift check that makes the mix honest or not:
each fixed W that both folders ran, its profit in each (a data path or host that changed
between the two shows there). Both folders must share the economics (price schedule, load
change, utility constants) and the cost model; otherwise it stops and says what differs.
"""
import argparse
import os
import sys

from profit import KINDS

from experiment.analysis import Analysis
from experiment.plan import APPS
from experiment.report import fmt_stat, verdict_table
from experiment.results import Results

# What both folders' plans must agree on for their profits to be comparable.
SAME_ECONOMICS = ("duration_s", "change_at_s", "schedule_text", "utility_params", "kvmcost",
                  "phase_clock")


def is_adaptive(record):
    return record["guest"] == "nom" and "w_us" not in record["variant"]


def mismatches(plan, baseline_plan):
    """The SAME_ECONOMICS keys whose values differ, with both values."""
    return [f"{k}: {_economic(plan, k)!r} here, {_economic(baseline_plan, k)!r} in the baseline"
            for k in SAME_ECONOMICS if _economic(plan, k) != _economic(baseline_plan, k)]


def _economic(plan, key):
    """plan's value of key; a folder from before Plan.phase_clock ran its phases on the wall."""
    return plan.get(key, "wall" if key == "phase_clock" else None)


def drift_rows(here, baseline, apps):
    """Markdown rows: every fixed W run in both folders, its profit per utility in each."""
    rows = []
    for app in apps:
        for w in sorted(set(here.w_values(app)) & set(baseline.w_values(app))):
            for kind in KINDS:
                a = here.profit(app, "nom", f"w={w:g}", kind)
                b = baseline.profit(app, "nom", f"w={w:g}", kind)
                rows.append(f"| {app} | W={w:g} | {kind} | {fmt_stat(a)} | {fmt_stat(b)} |")
    return rows


def write(folder, baseline_folder):
    new, old = Results(folder), Results(baseline_folder)
    plan, old_plan = new.read_json("plan.json"), old.read_json("plan.json")
    wrong = mismatches(plan, old_plan)
    if wrong:
        raise SystemExit("verdict_across: the two folders' economics differ, their profits do "
                         "not compare:\n  " + "\n  ".join(wrong))
    new_records, old_records = new.records(), old.records()
    mixed = Analysis([r for r in new_records if is_adaptive(r)]
                     + [r for r in old_records if not is_adaptive(r)], plan)
    apps = [a for a in APPS if a in plan["apps"]]
    here_name, base_name = os.path.basename(new.path), os.path.basename(old.path)
    lines = [f"# Verdict of {here_name}'s adaptive runs against {base_name}", "",
             f"Written by `python3 tools/experiment/verdict_across.py {folder} --baseline "
             f"{baseline_folder}`. Adaptive runs: this folder's; fixed-W runs and the other "
             f"guests: {base_name}'s. Same economics and cost model (`{plan.get('kvmcost')}`).",
             "", "## Verdict", "", *verdict_table(mixed, apps), "",
             "## Drift: the fixed W runs of both folders", "",
             "Where these differ by more than their spread, the baseline's runs no longer "
             "stand for this folder's machine and code, and the verdict above does not hold.",
             "", f"| app | W | utility | {here_name} | {base_name} |", "|---|---|---|---|---|",
             *drift_rows(Analysis(new_records, plan), Analysis(old_records, old_plan), apps), ""]
    path = os.path.join(new.path, f"verdict-against-{base_name}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="verdict_across.py", description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="results folder whose nom adaptive runs are judged")
    ap.add_argument("--baseline", required=True,
                    help="results folder whose fixed-W runs and other guests set the bar")
    args = ap.parse_args(argv)
    for f in (args.folder, args.baseline):
        if not os.path.isfile(os.path.join(f, "plan.json")):
            ap.error(f"{f} is not a results folder (no plan.json)")
    print("wrote", write(args.folder, args.baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
