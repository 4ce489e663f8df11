"""The experiment runner: every cell of the plan through its guest driver, records, report.

One cell of one run (paper 6.1): the driver boots the guest with the application; the price
provider, started held inside the guest's network before the guest boots, is released (SIGUSR1)
the moment the "many" load starts and moved to its next price (SIGUSR2) the moment the
"single" load starts, so that the price change falls exactly on the load change; the driver
stops the guest whatever happened. A cell that cannot run is recorded as "not run" with the
driver's reason, a cell that fails as "failed" with the error. Ctrl-C or SIGTERM stop the
current cell cleanly, keep what was recorded and still write the report.
"""
import argparse
import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import asdict

import kvmcost
from nomvm import choose_accel
from priceprovider import process as provider_process
from profit import DEFAULT_PARAMS
import toolflags

from . import drivers, kvmmodel
from .driver import GuestError, check_figures
from .machine import default_output, describe
from . import plan as plan_module
from .plan import ADAPTIVE_MODES, APPS, DEFAULT_W, GUESTS, PHASES, Plan, quick_plan
from .progress import Progress, fmt_duration
from .report import write_report
from .results import Results
from .tables import write_tables


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="run.py", description="nom vs Linux vs OSv, paper "
                                 "section 6 (tools/experiment/README.md)")
    ap.add_argument("--apps", default=",".join(APPS), help="comma-separated: " + ", ".join(APPS))
    ap.add_argument("--guests", default=",".join(GUESTS),
                    help="comma-separated: " + ", ".join(GUESTS))
    ap.add_argument("--runs", type=int, default=5, help="repetitions of the main pass")
    ap.add_argument("--raw-runs", type=int, help="repetitions of the raw-TCG-only pass on the "
                    "stock QEMU beside an exit-cost pass (default: --runs; 0: none)")
    ap.add_argument("--budget-hours", type=float, default=plan_module.BUDGET_S / 3600,
                    help="cut repetitions (raw-TCG-only pass first) until the estimate fits "
                    "(default 6; 0: never cut)")
    ap.add_argument("--adaptive-modes", default=",".join(ADAPTIVE_MODES),
                    help="nom adaptive's controller modes, a cell each: "
                    + ", ".join(ADAPTIVE_MODES))
    ap.add_argument("--plan", "--dry-run", dest="dry_run", action="store_true",
                    help="print every run and the estimated time, run nothing")
    ap.add_argument("--duration", type=float, default=120.0, help="seconds per run of a cell")
    ap.add_argument("--change-at", type=float, help="seconds until load and price change "
                    "(default: half the duration)")
    toolflags.add_w_list(ap, DEFAULT_W, what="nom's fixed batching delays (empty: none)")
    ap.add_argument("--no-adaptive", action="store_true", help="skip nom adaptive")
    ap.add_argument("--prices", default="1,10", help="LOW,HIGH $/Gbit before/after the change")
    ap.add_argument("--quick", action="store_true",
                    help="under 20 minutes: 2 x 10 s phases, 1 run, Linux and nom, the stock "
                    "QEMU (flags override)")
    ap.add_argument("--osv-image", default=os.environ.get("NOM_OSV_IMAGE"),
                    help="OSv image to run (also NOM_OSV_IMAGE); without it OSv is not run")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="skylake",
                    help="the main pass runs every guest under the patched QEMU charging "
                    "hardware-KVM exit costs (tools/kvmcost: skylake, apicv), D measured per "
                    "run, then a raw-TCG-only pass on the stock QEMU (--raw-runs); off: the "
                    "stock QEMU only (default skylake; --quick: off)")
    ap.add_argument("--output", help="results folder (default results/<date>-<commit>)")
    ap.add_argument("--report-only", metavar="DIR", help="only regenerate DIR's report")
    args = ap.parse_args(argv)
    args.explicit = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:])
                     if a.startswith("--")}
    return args


def plan_of(args):
    """The Plan the arguments ask for; --quick sets defaults that explicit flags override."""
    low, high = (float(x) for x in args.prices.split(","))
    given = {
        "--apps": ("apps", tuple(a for a in args.apps.split(",") if a)),
        "--guests": ("guests", tuple(g for g in args.guests.split(",") if g)),
        "--runs": ("runs", args.runs),
        "--duration": ("duration_s", args.duration),
        "--w": ("w_values", tuple(float(w) for w in args.w)),
        "--adaptive-modes": ("adaptive_modes",
                             tuple(m for m in args.adaptive_modes.split(",") if m)),
        "--kvmcost": ("kvmcost", args.kvmcost),
        "--raw-runs": ("raw_runs", args.runs if args.raw_runs is None else args.raw_runs),
    }
    fields = {"adaptive": not args.no_adaptive, "low_price": low, "high_price": high}
    for flag, (name, value) in given.items():
        if not args.quick or flag in args.explicit:
            fields[name] = value
    base = quick_plan() if args.quick else Plan()
    duration = fields.get("duration_s", base.duration_s)
    fields["change_at_s"] = args.change_at if args.change_at is not None else duration / 2
    return Plan(**dict(asdict(base), **fields))


# The provider's own clock never changes the price: every change comes from the runner's
# SIGUSR2 at the load change. A change timed by the provider's clock at change_at_s came ~2 s
# before the load's, because the "many" tools end later than asked (warm-up, set-up, teardown).
SIGNAL_ONLY_S = 1e9


def provider_schedule(plan):
    """The provider's schedule for one run: the plan's prices, the change far beyond any run so
    that only SIGUSR2 (the load change) makes it."""
    return f"0:{plan.low_price:g}, {SIGNAL_ONLY_S:g}:{plan.high_price:g}"


def start_provider(driver, plan, workdir, timeout_s=30.0):
    """The price provider, held, inside the guest's network (its log beside the raw data);
    returns once it listens, so that SIGUSR1 finds its handler installed."""
    path = os.path.join(workdir, "priceprovider.log")
    log = open(path, "w")
    argv = provider_process.command(driver.service_address(), plan.price_port,
                            schedule=provider_schedule(plan), hold=True)
    proc = driver.spawn(argv, cwd=provider_process.TOOLS, stdout=log, stderr=subprocess.STDOUT)
    proc.log = log
    try:
        provider_process.wait_listening(proc, path, timeout_s)
    except provider_process.ProviderDidNotStart as e:
        stop_provider(proc)
        raise GuestError(f"the price provider did not start: {e}") from None
    return proc


def stop_provider(proc):
    if proc is not None:
        provider_process.stop(proc)
        proc.log.close()


def run_cell(driver, cell, run, plan, res, progress):
    """Runs one cell once and writes its record; returns the record's status. A failure of
    the cell, whatever it is, is recorded and the experiment goes on; Ctrl-C is not caught."""
    label = f"{cell.app} on {cell.guest} {cell.variant_name}, run {run}/{plan.runs}"
    try:
        reason = driver.unavailable(cell.app, cell.variant)
    except Exception as e:  # a guest tool's bug must not end hours of experiment
        reason = f"the driver could not tell: {_describe(e)}"
    if reason:
        progress.label = f"{label}: not run"
        res.write_record(cell, run, {"status": "not run", "reason": reason})
        progress.cell_done()
        return "not run"
    workdir = res.cell_dir(cell, run)
    secs = plan.phase_seconds()
    provider = None
    record = {"status": "failed", "reason": "interrupted"}

    def network_ready():
        nonlocal provider
        provider = start_provider(driver, plan, workdir)

    try:
        progress.step(f"{label}: booting", plan.boot_estimate_s, plan.duration_s)
        t0 = time.monotonic()
        info = driver.start(cell.app, cell.variant, workdir, on_network=network_ready)
        progress.boot_took(time.monotonic() - t0)
        if provider is None:
            network_ready()
        phases = {}
        for i, phase in enumerate(PHASES):
            progress.step(f"{label}: {phase}", secs[phase],
                          sum(secs[p] for p in PHASES[i + 1:]))
            # The price clock starts with the load and changes with it (paper 6.1), exactly,
            # whatever the load tools' set-up took.
            provider.send_signal(signal.SIGUSR1 if i == 0 else signal.SIGUSR2)
            phases[phase] = check_figures(driver.load(phase, secs[phase]))
        record = {"status": "ok", "info": info, "phases": phases}
    except GuestError as e:
        record = {"status": "failed", "reason": str(e)}
    except Exception as e:  # as above: recorded with its traceback, the run goes on
        record = {"status": "failed", "reason": _describe(e),
                  "traceback": traceback.format_exc()}
    finally:
        try:
            driver.stop()
        finally:
            stop_provider(provider)
            res.write_record(cell, run, record)
            progress.cell_done()
    return record["status"]


def _can_run(driver, cell):
    """For the time estimate only: whether the driver expects to run cell."""
    try:
        return driver.unavailable(cell.app, cell.variant) is None
    except Exception:  # run_cell records it as not run
        return False


def _describe(e):
    return f"{type(e).__name__}: {e}"


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def expected_to_run(osv_image):
    """For estimates and the plan listing, without starting a driver: whether a cell will run.
    OSv's need its image; nom adaptive's need their controller mode wired."""
    def runnable(cell):
        if cell.guest == "nom":
            from .nom_driver import ADAPTIVE_MODE_ARGS
            return cell.variant.get("mode", "offline-profile") in ADAPTIVE_MODE_ARGS
        if cell.guest != "osv":
            return True
        try:
            import osvguest
            return osvguest.unavailable(osv_image, cell.app) is None
        except Exception:  # the OSv tool cannot tell: its cells will say why, costing nothing
            return False
    return runnable


def osv_line(plan, osv_image, runnable):
    """The one line that says OSv is not run and why, or None when it runs (or is not asked)."""
    cells = [c for c in plan.cells() if c.guest == "osv"]
    if not cells or any(runnable(c) for c in cells):
        return None
    try:
        import osvguest
        reason = osvguest.unavailable(osv_image, cells[0].app)
    except Exception as e:  # the OSv tool itself cannot load
        reason = f"tools/osvguest cannot load: {e}"
    return f"experiment: OSv {reason or 'not run'}"


def plan_listing(plan, cuts, runnable, budget_s):
    """The lines --plan prints: every pass and run, each cell with its estimate, the total."""
    lines = []
    for p in plan.passes():
        where = f"<output>/{p.subdir}" if p.subdir else "<output>"
        lines.append(f"pass {p.name} (QEMU {'stock' if p.kvmcost == 'off' else 'exit-cost ' + p.kvmcost}"
                     f"), {p.runs} run(s), into {where}:")
        for run, cell in plan.schedule(p.runs):
            note = "" if runnable(cell) else "  (will not run: costs nothing)"
            lines.append(f"  run {run}  {cell.app:9} {cell.key:28} "
                         f"~{fmt_duration(plan.cell_estimate_s(cell))}{note}")
    total = sum(len(plan.schedule(p.runs)) for p in plan.passes())
    lines.append(f"{total} runs of {plan.duration_s:g} s (change at {plan.change_at_s:g} s), "
                 f"estimated {fmt_duration(plan.estimate_s(runnable))}"
                 + (f" of a {fmt_duration(budget_s)} budget" if budget_s else ""))
    lines += [f"cut to fit: {c}" for c in cuts]
    return lines


def run_pass(p, plan, guests, res, progress):
    """Runs one pass's schedule into res; its own machine description, plan and report."""
    for driver in guests.values():
        driver.kvmcost_name = p.kvmcost  # LabDriver's; a MissingDriver ignores it
    for run, cell in plan.schedule(p.runs):
        run_cell(guests[cell.guest], cell, run, plan, res, progress)


def _write_pass_header(p, plan, res, accel, reason, cuts):
    res.write_json("machine.json", describe(accel, reason))
    res.write_json("plan.json", dict(plan.to_json(), runs=p.runs, kvmcost=p.kvmcost,
                                     pass_name=p.name, cuts=cuts,
                                     utility_params=asdict(DEFAULT_PARAMS),
                                     kvm_model=asdict(kvmmodel.DEFAULT)))


def main(argv=None):
    args = parse_args(argv)
    if args.report_only:
        write_tables(args.report_only)
        print(write_report(args.report_only))
        return 0
    try:
        plan = plan_of(args)
    except ValueError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    runnable = expected_to_run(args.osv_image)
    budget_s = args.budget_hours * 3600
    cuts = []
    if budget_s > 0:
        plan, cuts = plan.fit(budget_s, runnable)
    osv = osv_line(plan, args.osv_image, runnable)
    if args.dry_run:
        print("\n".join(plan_listing(plan, cuts, runnable, budget_s) + ([osv] if osv else [])))
        return 0
    accel, reason = choose_accel()
    out = args.output or default_output()
    passes = [(p, Results(os.path.join(out, p.subdir))) for p in plan.passes()]
    for p, res in passes:
        _write_pass_header(p, plan, res, accel, reason, cuts)
    print(f"experiment: accelerator {accel.upper()} ({reason}); results in {out}; "
          f"estimated {fmt_duration(plan.estimate_s(runnable))}", file=sys.stderr)
    for c in cuts:
        print(f"experiment: cut to fit {budget_s / 3600:g} h: {c}", file=sys.stderr)
    guests = drivers.load(plan.guests, accel=accel, osv_image=args.osv_image,
                          price_port=plan.price_port)
    if osv:
        print(osv, file=sys.stderr)
    total = sum(len(plan.schedule(p.runs)) for p, _ in passes)
    runnable_runs = sum(1 for p, _ in passes for _, cell in plan.schedule(p.runs)
                        if _can_run(guests[cell.guest], cell))
    signal.signal(signal.SIGTERM, _interrupt)
    interrupted = False
    try:
        with Progress(total, plan.duration_s, plan.boot_estimate_s,
                      runnable_cells=runnable_runs) as progress:
            for p, res in passes:
                run_pass(p, plan, guests, res, progress)
    except KeyboardInterrupt:
        interrupted = True
        print("experiment: interrupted; writing the report of what ran", file=sys.stderr)
    for _, res in passes:
        write_tables(res.path)
        print(write_report(res.path))
    return 130 if interrupted else 0
