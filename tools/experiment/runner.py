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
from kvmcost import dilation
from nomvm import choose_accel, placement
from priceprovider import process as provider_process
from profit import DEFAULT_PARAMS
import toolflags

from . import calibration, drivers, kvmmodel, resume, summary
from .driver import BuildChanged, GuestError, HostBusy, check_figures
from .labdriver import LabDriver
from .machine import (default_output, describe, hosts_differ, measured_sources,
                      sources_differ, utc_now)
from . import plan as plan_module
from .plan import (ADAPTIVE_MODES, ADAPTIVE_UTILITIES, APPS, DEFAULT_W, ESTIMATE_D, GUESTS,
                   PHASE_CLOCKS, PHASES, Plan, quick_plan)
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
    ap.add_argument("--phase-clock", choices=PHASE_CLOCKS, default="wall",
                    help="the clock of --duration and --change-at under an exit-cost model: "
                         "wall (the host's) or undilated (the guest's dilated clock: phases "
                         "last D times longer on the wall; plan.py, Plan.phase_clock)")
    toolflags.add_guest_clock(ap, kvmcost.GUEST_CLOCKS)
    toolflags.add_pin_vcpu(ap)
    ap.add_argument("--change-at", type=float, help="seconds until load and price change "
                    "(default: half the duration)")
    toolflags.add_w_list(ap, DEFAULT_W, what="nom's fixed batching delays (empty: none)")
    ap.add_argument("--no-adaptive", action="store_true", help="skip nom adaptive")
    ap.add_argument("--utilities", default=",".join(ADAPTIVE_UTILITIES),
                    help="comma-separated utility functions nom adaptive runs for (one cell "
                         "each per mode): " + ", ".join(ADAPTIVE_UTILITIES))
    ap.add_argument("--prices", default="1,10", help="LOW,HIGH $/Gbit before/after the change")
    ap.add_argument("--quick", action="store_true",
                    help="under 20 minutes: 2 x 10 s phases, 1 run, Linux and nom, the stock "
                    "QEMU (flags override)")
    ap.add_argument("--osv-image", default=os.environ.get("NOM_OSV_IMAGE"),
                    help="OSv image to run (also NOM_OSV_IMAGE); without it OSv is not run")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="skylake",
                    help="the main pass runs every guest under the patched QEMU charging "
                    "hardware-KVM exit costs (tools/kvmcost: skylake, apicv; zero: none, the "
                    "dilated clock alone), D measured per run, then a raw-TCG-only pass on "
                    "the stock QEMU (--raw-runs); off: the stock QEMU only (default skylake; "
                    "--quick: off)")
    ap.add_argument("--output", help="results folder (default results/<date>-<commit>)")
    ap.add_argument("--report-only", metavar="DIR", help="only regenerate DIR's report (and its "
                    "summary table, printed)")
    ap.add_argument("--update-readme", metavar="README", help="with --report-only: put the "
                    "summary table into README between its experiment-summary markers")
    ap.add_argument("--resume", metavar="DIR", help="continue the experiment in DIR: its runs "
                    "that are complete stay, the others run (its stored plan; plan flags given "
                    "again must match it)")
    ap.add_argument("--mixed-builds", action="store_true", help="with --resume: run even if "
                    "the sources of what is measured (machine.MEASURED_SOURCES) differ from "
                    "the folder's first session's (recorded with the session), and even if "
                    "nom's ELFs differ from the ones the folder's runs booted")
    ap.add_argument("--mixed-hosts", action="store_true", help="with --resume: run even if "
                    "this host (CPU model, CPU count, accelerator) is not the one the folder's "
                    "first session ran on (its machine.json)")
    ap.add_argument("--stop-after", type=float, metavar="HOURS", help="start no run that is "
                    "estimated to end more than HOURS after the start; --resume DIR continues")
    args = ap.parse_args(argv)
    args.explicit = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:])
                     if a.startswith("--")}
    stock = args.kvmcost == "off" or (args.quick and "--kvmcost" not in args.explicit)
    if args.guest_clock is not None and stock:
        ap.error(f"--guest-clock {args.guest_clock} needs an exit-cost model (--kvmcost)")
    return args


def plan_of(args):
    """The Plan the arguments ask for; --quick sets defaults that explicit flags override."""
    low, high = (float(x) for x in args.prices.split(","))
    given = {
        "--apps": ("apps", tuple(a for a in args.apps.split(",") if a)),
        "--guests": ("guests", tuple(g for g in args.guests.split(",") if g)),
        "--runs": ("runs", args.runs),
        "--duration": ("duration_s", args.duration),
        "--phase-clock": ("phase_clock", args.phase_clock),
        "--pin-vcpu": ("pin_vcpu", args.pin_vcpu),
        "--guest-clock": ("guest_clock", args.guest_clock or Plan.guest_clock),
        "--w": ("w_values", tuple(float(w) for w in args.w)),
        "--adaptive-modes": ("adaptive_modes",
                             tuple(m for m in args.adaptive_modes.split(",") if m)),
        "--kvmcost": ("kvmcost", args.kvmcost),
        "--utilities": ("adaptive_utilities",
                        tuple(u for u in args.utilities.split(",") if u)),
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


def start_provider(driver, port, schedule, workdir, hold=True, timeout_s=30.0):
    """The price provider inside the guest's network (its log beside the raw data), on port
    with schedule (priceprovider.Schedule syntax); held (hold: its clock starts at SIGUSR1)
    for a run, not for a profile's sweep (tools/profile/sweep.py). Returns once it listens,
    so that SIGUSR1 finds its handler installed."""
    path = os.path.join(workdir, "priceprovider.log")
    log = open(path, "w")
    argv = provider_process.command(driver.service_address(), port, schedule=schedule,
                                    hold=hold)
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


def start_guest(driver, app, variant, workdir, port, schedule, hold=True):
    """Boots the guest with a price provider (start_provider) answering priced from the moment
    the guest's network is up; returns (the driver's info, the provider). If the boot fails,
    the provider is stopped before the error goes on; the caller still stops the driver.
    Shared by a run (run_cell) and a profile's sweep (tools/profile/sweep.py)."""
    provider = []

    def network_ready():
        provider.append(start_provider(driver, port, schedule, workdir, hold=hold))

    try:
        info = driver.start(app, variant, workdir, on_network=network_ready)
        if not provider:
            network_ready()
    except BaseException:
        stop_provider(provider[0] if provider else None)
        raise
    return info, provider[0]


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
    reference = getattr(driver, "calibration_reference", None)
    scale = plan.phase_scale(getattr(driver, "kvmcost_name", "off"),
                             dilation.d_of(reference) if reference else None)
    secs = plan.phase_seconds(scale)
    provider = None
    record = {"status": "failed", "reason": "interrupted", "interrupted": True}
    stop = None
    load_start, t_start, started = os.getloadavg()[0], time.monotonic(), utc_now()
    try:
        progress.step(f"{label}: booting", plan.boot_estimate_s, sum(secs.values()))
        t0 = time.monotonic()
        info, provider = start_guest(driver, cell.app, cell.variant, workdir, plan.price_port,
                                     provider_schedule(plan))
        progress.boot_took(time.monotonic() - t0)
        phases = {}
        for i, phase in enumerate(PHASES):
            progress.step(f"{label}: {phase}", secs[phase],
                          sum(secs[p] for p in PHASES[i + 1:]))
            # The price clock starts with the load and changes with it (paper 6.1), exactly,
            # whatever the load tools' set-up took.
            provider.send_signal(signal.SIGUSR1 if i == 0 else signal.SIGUSR2)
            phases[phase] = check_figures(driver.load(phase, secs[phase]))
        record = {"status": "ok", "info": info, "phases": phases, "phase_scale": scale}
    except HostBusy as e:  # nothing measured: --resume runs it again
        record = {"status": "failed", "reason": str(e), "redo": True, "host_busy": True}
    except BuildChanged as e:  # nothing measured either, and no later run would be: stop
        record = {"status": "failed", "reason": str(e), "redo": True}
        stop = e
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
            res.write_record(cell, run, dict(record, loadavg={"start": load_start,
                                                              "end": os.getloadavg()[0]},
                                             started_utc=started,
                                             wall_s=round(time.monotonic() - t_start, 1)))
            progress.cell_done()
    if stop:
        raise stop
    return record["status"]


def _can_run(driver, cell, kvmcost="off"):
    """For the time estimate only: whether the driver expects to run cell in a pass on
    kvmcost's QEMU."""
    try:
        driver.kvmcost_name = kvmcost  # LabDriver's; a MissingDriver ignores it
        return driver.unavailable(cell.app, cell.variant) is None
    except Exception:  # run_cell records it as not run
        return False


def _describe(e):
    return f"{type(e).__name__}: {e}"


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def expected_to_run(osv_image):
    """For estimates and the plan listing, without starting a driver: whether a cell will run
    in a pass on kvmcost's QEMU ("off": the stock one). OSv's need their image and a QEMU they
    boot on; nom adaptive's need their controller mode wired."""
    def runnable(cell, kvmcost="off"):
        if cell.guest == "nom":
            from .nom_driver import ADAPTIVE_MODE_ARGS
            return cell.variant.get("mode", "offline-profile") in ADAPTIVE_MODE_ARGS
        if cell.guest != "osv":
            return True
        try:
            import osvguest
            from .osv_driver import exit_cost_reason
            return (osvguest.unavailable(osv_image, cell.app) is None
                    and exit_cost_reason(kvmcost) is None)
        except Exception:  # the OSv tool cannot tell: its cells will say why, costing nothing
            return False
    return runnable


def osv_line(plan, osv_image, runnable):
    """The one line that says OSv is not run and why, or None when it runs (or is not asked)."""
    cells = [c for c in plan.cells() if c.guest == "osv"]
    if not cells or any(runnable(c, p.kvmcost) for c in cells for p in plan.passes()):
        return None
    try:
        import osvguest
        from .osv_driver import exit_cost_reason
        reason = osvguest.unavailable(osv_image, cells[0].app) or exit_cost_reason(plan.kvmcost)
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
            note = "" if runnable(cell, p.kvmcost) else "  (will not run: costs nothing)"
            lines.append(f"  run {run}  {cell.app:9} {cell.key:28} "
                         f"~{fmt_duration(plan.cell_estimate_s(cell, p.kvmcost))}{note}")
    total = sum(len(plan.schedule(p.runs)) for p in plan.passes())
    lines.append(f"{total} runs of {plan.duration_s:g} s (change at {plan.change_at_s:g} s"
                 f"{', undilated: x D on the wall' if plan.phase_clock == 'undilated' else ''}), "
                 f"estimated {fmt_duration(plan.estimate_s(runnable))}"
                 + (f" of a {fmt_duration(budget_s)} budget" if budget_s else ""))
    lines += [f"cut to fit: {c}" for c in cuts]
    return lines


class StopAfter(Exception):
    """The next run would end after --stop-after: the session stops, --resume continues."""


def booted_elfs(res):
    """{ELF path: sha256} the folder's nom runs booted (the first run naming each path), what
    every later run must boot (nom_driver.check_build); {} for a folder without one yet."""
    out = {}
    for r in res.records():
        for path, digest in (((r.get("info") or {}).get("image") or {})
                             .get("elf_sha256") or {}).items():
            out.setdefault(path, digest)
    return out


def run_pass(todo, p, plan, guests, res, progress, deadline=None, reference=None,
             mixed_builds=False):
    """Runs todo ([(run, cell)] of pass p) into res. Each run's earlier, unfinished attempt is
    removed first. Raises StopAfter before a run estimated to end after deadline (monotonic),
    but for the session's first. reference: the calibration of D each run's is checked
    against (calibration.py), None: not checked. Every boot must boot the ELFs the folder's
    runs booted (booted_elfs) unless mixed_builds; else BuildChanged ends the session. Runs
    that found the host busy are tried again at the end (BUSY_ROUNDS)."""
    elfs = None if mixed_builds else booted_elfs(res)
    for driver in guests.values():
        driver.kvmcost_name = p.kvmcost  # LabDriver's; a MissingDriver ignores them
        driver.calibration_reference = reference
        driver.pin_vcpu = plan.pin_vcpu
        driver.guest_clock = plan.guest_clock
        driver.expected_elfs = elfs
    d = dilation.d_of(reference) if reference else None
    for round_ in range(BUSY_ROUNDS + 1):
        if round_:
            if (deadline is not None
                    and time.monotonic() + BUSY_WAIT_S + min(
                        plan.cell_estimate_s(cell, p.kvmcost, d) for _, cell in todo) > deadline):
                raise StopAfter()
            print(f"experiment: {len(todo)} run(s) found the host busy: trying again in "
                  f"{BUSY_WAIT_S:g} s", file=sys.stderr)
            progress.add_cells(len(todo))
            _sleep(BUSY_WAIT_S)
        for run, cell in todo:
            # A session starts at least one run (a run longer than --stop-after would stall).
            if (deadline is not None and progress.done and _can_run(guests[cell.guest], cell,
                                                                     p.kvmcost)
                    and time.monotonic() + plan.cell_estimate_s(cell, p.kvmcost, d) > deadline):
                raise StopAfter()
            res.clear_run(cell, run)
            run_cell(guests[cell.guest], cell, run, plan, res, progress)
        todo = [(run, cell) for run, cell in todo if found_host_busy(res.read_record(cell, run))]
        if not todo:
            return


# A run whose calibration found the host busy measured nothing (labdriver.HostBusy); the
# session tries such runs again after the others, BUSY_WAIT_S later, up to BUSY_ROUNDS times
# (the 2-CPU Xeon host of 2026-11-27 was slow for spells of minutes: 12 of 18 tries found it
# busy between 12:06 and 13:10 UTC, and each of those runs ran when tried again minutes
# later). _sleep is the tests' to replace.
BUSY_ROUNDS = 10
BUSY_WAIT_S = 120.0
_sleep = time.sleep


def found_host_busy(record):
    """Whether a run's record says its host was busy at calibration (nothing was measured)."""
    return bool(record and record.get("host_busy"))


def _write_pass_header(p, plan, res, machine, cuts, argv):
    res.write_json("machine.json", machine)
    res.write_json(SOURCES_FILE, measured_sources())
    res.write_json("plan.json", dict(plan.to_json(), runs=p.runs, kvmcost=p.kvmcost,
                                     pass_name=p.name, cuts=cuts, argv=argv,
                                     price_changes_with_load=True,  # provider_schedule()
                                     utility_params=asdict(DEFAULT_PARAMS),
                                     kvm_model=asdict(kvmmodel.DEFAULT)))


# What the folder's first session was built from (machine.measured_sources).
SOURCES_FILE = "sources.json"


def check_sources(passes, now, mixed_builds):
    """Raises ValueError unless every pass folder's recorded sources are now's, or the user
    allows mixed builds; a folder from before the record is let through with a warning."""
    for _, res in passes:
        try:
            stored = res.read_json(SOURCES_FILE)
        except (OSError, ValueError):
            print(f"experiment: {res.path} has no {SOURCES_FILE} (an older folder): cannot "
                  "check that this session measures the same build", file=sys.stderr)
            continue
        if stored is None or now is None:
            raise ValueError(f"{res.path}: the sources of its build or of this one are "
                             "unknown (not a git checkout): give --mixed-builds to run anyway")
        diff = sources_differ(stored, now)
        if diff and not mixed_builds:
            raise ValueError(
                f"{res.path} was measured with other sources than this checkout's, so its "
                "runs and this session's would be of different builds (" + "; ".join(diff)
                + "). Check out the commit its first session names (sessions.json) and resume "
                "from there, or give --mixed-builds to mix them knowingly.")


def check_host(passes, now, mixed_hosts):
    """Raises ValueError unless every pass folder's machine.json names this host, or the user
    allows mixed hosts (a folder without one is let through)."""
    for _, res in passes:
        try:
            stored = res.read_json("machine.json")
        except (OSError, ValueError):
            continue
        diff = hosts_differ(stored or {}, now)
        if diff and not mixed_hosts:
            raise ValueError(
                f"{res.path} was measured on another host than this one (" + "; ".join(diff)
                + "): its calibration reference of D and its host-speed samples are that "
                "host's, so runs taken here would not compare with its runs. Start a new "
                "folder here, resume on that host, or give --mixed-hosts to mix them knowingly.")


def _record_session(res, session, index=None):
    """Appends this session to res's sessions.json, or with index replaces that entry (its end);
    returns its index."""
    try:
        sessions = res.read_json("sessions.json")
    except (OSError, ValueError):
        sessions = []
    if index is None or index >= len(sessions):
        index = len(sessions)
        sessions.append(session)
    sessions[index] = session
    res.write_json("sessions.json", sessions)
    return index


def _resolve_plan(args, argv):
    """(plan, cuts, runnable, out) that the arguments ask for; --resume DIR: DIR's own plan
    (resume.py). Raises ValueError (resume.ResumeError) with the message for the user."""
    runnable = expected_to_run(args.osv_image)
    explicit_plan = args.explicit & PLAN_FLAGS
    if args.resume:
        if args.output:
            raise ValueError("--resume DIR writes into DIR: --output does not go with it")
        asked = None
        if explicit_plan:
            asked = plan_of(args)
            if args.budget_hours > 0:
                asked = asked.fit(args.budget_hours * 3600, runnable)[0]
        plan, cuts = resume.stored_plan(args.resume, asked)
        return plan, cuts, runnable, args.resume
    plan, cuts = plan_of(args), []
    if args.budget_hours > 0:
        plan, cuts = plan.fit(args.budget_hours * 3600, runnable)
    return plan, cuts, runnable, args.output or default_output()


# Flags that shape the plan: --resume takes the folder's plan, and checks these against it.
PLAN_FLAGS = {"--apps", "--guests", "--runs", "--raw-runs", "--budget-hours", "--adaptive-modes",
              "--duration", "--change-at", "--w", "--no-adaptive", "--prices", "--quick",
              "--kvmcost", "--phase-clock", "--pin-vcpu", "--guest-clock"}


def report_only(folder, readme=None):
    """--report-only: tables, report and summary table of folder (and of its raw-TCG-only pass);
    with readme, the summary goes into it too. Returns the exit code."""
    raw_pass = os.path.join(folder, plan_module.RAW_PASS)
    has_raw_pass = os.path.isfile(os.path.join(raw_pass, "plan.json"))
    for path in [folder] + ([raw_pass] if has_raw_pass else []):
        write_tables(path)
        print(write_report(path))
    table = summary.write(folder)
    print("\n".join(table))
    if readme:
        try:
            summary.update_readme(readme, table)
        except (OSError, ValueError) as e:
            print(f"run.py: {readme}: {e}", file=sys.stderr)
            return 1
        print(f"experiment: summary table written into {readme}", file=sys.stderr)
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.report_only:
        return report_only(args.report_only, args.update_readme)
    try:
        plan, cuts, runnable, out = _resolve_plan(args, argv)
    except ValueError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    budget_s = args.budget_hours * 3600
    passes = [(p, Results(os.path.join(out, p.subdir)) if not args.dry_run or args.resume
               else None) for p in plan.passes()]
    if args.resume and not args.dry_run:
        for p, res in passes:
            _set_aside_disturbed(p, res)
    # What is left to run: everything, or with --resume what DIR lacks.
    todo = [(p, res, resume.todo(res, plan.schedule(p.runs)) if args.resume
             else plan.schedule(p.runs)) for p, res in passes]
    osv = osv_line(plan, args.osv_image, runnable)
    left = [(run, cell) for _, _, t in todo for run, cell in t]
    if args.dry_run:
        lines = plan_listing(plan, cuts, runnable, budget_s)
        if args.resume:
            lines.append(f"resume {out}: {len(left)} of "
                         f"{sum(len(plan.schedule(p.runs)) for p in plan.passes())} runs left, "
                         f"estimated {fmt_duration(_estimate(plan, todo, runnable))}")
        if args.stop_after:
            lines += session_split(plan, todo, runnable, args.stop_after * 3600)
        print("\n".join(lines + ([osv] if osv else [])))
        return 0
    sources = measured_sources()
    accel, reason = choose_accel()
    machine = describe(accel, reason)
    if args.resume:
        try:
            check_sources(passes, sources, args.mixed_builds)
            check_host(passes, machine, args.mixed_hosts)
        except ValueError as e:
            print(f"run.py: {e}", file=sys.stderr)
            return 2
    if not args.resume:
        for p, res in passes:
            _write_pass_header(p, plan, res, machine, cuts, argv)
    session = {"started_utc": machine["date_utc"], "argv": argv,
               "resumed": bool(args.resume), "machine": machine, "sources": sources,
               "mixed_builds": bool(args.resume and args.mixed_builds),
               "mixed_hosts": bool(args.resume and args.mixed_hosts),
               "loadavg_start": os.getloadavg()[0], "runs_left_at_start": len(left)}
    indexes = [_record_session(res, session) for _, res in passes]
    print(f"experiment: accelerator {accel.upper()} ({reason}); results in {out}; "
          + (f"resuming: {len(left)} runs left; " if args.resume else "")
          + f"estimated {fmt_duration(_estimate(plan, todo, runnable))}", file=sys.stderr)
    for c in cuts:
        print(f"experiment: cut to fit {budget_s / 3600:g} h: {c}", file=sys.stderr)
    guests = drivers.load(plan.guests, accel=accel, osv_image=args.osv_image,
                          price_port=plan.price_port)
    if osv:
        print(osv, file=sys.stderr)
    runnable_by_pass = {p.name: sum(1 for _, cell in runs
                                    if _can_run(guests[cell.guest], cell, p.kvmcost))
                        for p, _, runs in todo}
    runnable_runs = sum(runnable_by_pass.values())
    deadline = (time.monotonic() + args.stop_after * 3600) if args.stop_after else None
    if plan.pin_vcpu:
        # The reference calibration of D runs where every run's will: off the vCPU's CPU.
        try:
            placement.confine_harness(LabDriver.VCPUS)
        except placement.PlacementError as e:
            print(f"run.py: --pin-vcpu: {e}", file=sys.stderr)
            return 2
    references = {p.name: _reference(p, res) for p, res, _ in todo if runnable_by_pass[p.name]}
    signal.signal(signal.SIGTERM, _interrupt)
    end = "complete"
    try:
        with Progress(len(left), plan.duration_s * plan.phase_scale(plan.kvmcost, ESTIMATE_D),
                      plan.boot_estimate_s,
                      runnable_cells=runnable_runs) as progress:
            for p, res, runs in todo:
                run_pass(runs, p, plan, guests, res, progress, deadline,
                         references.get(p.name), mixed_builds=args.mixed_builds)
    except KeyboardInterrupt:
        end = "interrupted"
        print("experiment: interrupted; writing the report of what ran", file=sys.stderr)
    except StopAfter:
        end = "stop-after"
        print(f"experiment: stopped: the next run would end after --stop-after "
              f"{args.stop_after:g} h", file=sys.stderr)
    except BuildChanged as e:
        end = "build-changed"
        print(f"experiment: stopped: {e}", file=sys.stderr)
    session.update(ended_utc=utc_now(), end=end,
                   loadavg_end=os.getloadavg()[0])
    for (_, res), index in zip(passes, indexes):
        _record_session(res, session, index)
        write_tables(res.path)
        print(write_report(res.path))
    print("\n".join(summary.write(out)))
    if end != "complete":
        print(f"experiment: continue with: python3 tools/experiment/run.py --resume {out}",
              file=sys.stderr)
    return {"complete": 0, "interrupted": 130, "stop-after": 3, "build-changed": 4}[end]


def _set_aside_disturbed(p, res):
    """--resume: moves pass p's runs measured with a calibration of D taken on a busy host
    into res's disturbed/ (calibration.py), so that they run again."""
    ref = calibration.known_reference(res) if p.kvmcost != "off" else None
    for line in calibration.set_aside(res, ref) if ref else []:
        print(f"experiment: set aside (calibration of D on a busy host): {line}",
              file=sys.stderr)


def _reference(p, res):
    """The calibration of D pass p's runs run at and are checked against (calibration.py,
    pass_reference); None for a pass on the stock QEMU, or when it cannot be measured (each
    run then runs at its own calibration's D, and says why in its record if that fails too)."""
    if p.kvmcost == "off":
        return None
    try:
        ref = calibration.pass_reference(res, p.kvmcost)
    except (OSError, RuntimeError, KeyError, subprocess.SubprocessError) as e:
        print(f"experiment: no reference calibration of D ({e}): each run runs at its own "
              "and is not checked for a busy host", file=sys.stderr)
        return None
    print(f"experiment: every run of this pass runs at D = {dilation.d_of(ref):.3f} "
          f"({calibration.REFERENCE_FILE})", file=sys.stderr)
    return ref


def session_split(plan, todo, runnable, session_s):
    """The lines that say how the runs left split into sessions of session_s (--stop-after):
    each session starts runs in plan order while their estimates fit."""
    sessions, used = [[0, 0.0]], 0.0
    for p, _, runs in todo:
        for _, cell in runs:
            cost = plan.cell_estimate_s(cell, p.kvmcost) if runnable(cell, p.kvmcost) else 0.0
            if used + cost > session_s and sessions[-1][0]:
                sessions.append([0, 0.0])
                used = 0.0
            sessions[-1][0] += 1
            sessions[-1][1] += cost
            used += cost
    return [f"session {i} (--stop-after {session_s / 3600:g}"
            f"{'' if i == 1 else ', then --resume'}): {n} runs, ~{fmt_duration(t)}"
            for i, (n, t) in enumerate(sessions, 1)]


def _estimate(plan, todo, runnable):
    """Estimated wall time of the runs left (todo: [(pass, res, [(run, cell)])]) that are
    expected to run."""
    return sum(plan.cell_estimate_s(cell, p.kvmcost) for p, _, runs in todo for _, cell in runs
               if runnable(cell, p.kvmcost))
