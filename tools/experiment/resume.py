"""Resuming an experiment cut off before its end (`run.py --resume DIR`), and what a results
folder still lacks.

The plan of a results folder is the one its plan.json stored (after the budget's cuts), never
computed again: a resumed run finishes exactly what was started. Flags that shape the plan may
be given again only to check it; any difference is refused, naming each field.

A run of a cell is complete when its record (raw/APP/GUEST-VARIANT/runN.json, which
Results.write_record writes atomically once the cell ended and its raw outputs are in the
folder) is "ok", or "failed" for a reason of its own. The others run again: a cell without a
record (the session was killed mid-cell; its raw folder may hold partial outputs, removed
first), one whose record says it was interrupted (Ctrl-C, SIGTERM, the session's end) or asks
to be redone (the host was busy when D was calibrated: nothing was measured), and one "not run"
(asking the driver again costs nothing, and OSv's images may exist now). Before that, runs
measured with a calibration of D taken on a busy host are set aside (calibration.py).
"""
import dataclasses
import json
import os

from .plan import RAW_PASS, Plan

# Plan fields that decide which runs there are and what each measures (not price_port, a
# free port, nor boot_estimate_s, a first guess of the progress line).
PLAN_FIELDS = ("apps", "guests", "w_values", "adaptive", "adaptive_utilities",
               "adaptive_modes", "runs", "raw_runs", "duration_s", "change_at_s", "low_price",
               "high_price", "kvmcost", "phase_clock", "pin_vcpu")
# Fields later plans added, with the value every folder from before them had
# (apps_without_profile is not a flag, so not in PLAN_FIELDS: a folder keeps its own).
PLAN_FIELD_DEFAULTS = {"phase_clock": "wall", "pin_vcpu": False, "guest_clock": "dilated",
                       "apps_without_profile": ("netpipe",)}


class ResumeError(ValueError):
    """The folder cannot be resumed, or not with these flags; the message says why."""


def plan_from_json(stored):
    """The Plan a plan.json describes (its main pass's; JSON lists back to tuples)."""
    names = {f.name for f in dataclasses.fields(Plan)}
    fields = {k: tuple(v) if isinstance(v, list) else v
              for k, v in dict(PLAN_FIELD_DEFAULTS, **stored).items() if k in names}
    return Plan(**fields)


def differences(stored, plan):
    """["field: FOLDER's value, not the flags' value"] where plan differs from plan.json."""
    mine = dataclasses.asdict(plan)
    out = []
    for k in PLAN_FIELDS:
        theirs = stored.get(k, PLAN_FIELD_DEFAULTS.get(k))
        theirs = tuple(theirs) if isinstance(theirs, list) else theirs
        if theirs != mine[k]:
            out.append(f"{k}: the folder's {theirs!r}, not {mine[k]!r}")
    return out


def stored_plan(folder, asked=None):
    """(Plan, cuts) of the folder's experiment; with asked (the Plan the flags make), raises
    ResumeError unless it is the same plan."""
    path = os.path.join(folder, "plan.json")
    try:
        with open(path) as f:
            stored = json.load(f)
    except (OSError, ValueError) as e:
        raise ResumeError(f"{path}: {e}") from None
    parent = os.path.dirname(os.path.abspath(folder))
    if os.path.basename(os.path.abspath(folder)) == RAW_PASS and os.path.isfile(
            os.path.join(parent, "plan.json")):
        raise ResumeError(f"{folder} is the raw-TCG-only pass of {parent}: resume that folder")
    diff = differences(stored, asked) if asked is not None else []
    if diff:
        raise ResumeError("the flags ask for another plan than the folder holds ("
                          + "; ".join(diff) + "): give --resume alone, or the same flags")
    return plan_from_json(stored), list(stored.get("cuts") or [])


def is_complete(record):
    """Whether a run's record stands (above): ok, or failed for a reason of its own."""
    if record.get("interrupted") or record.get("redo"):
        return False
    return record.get("status") == "ok" or (record.get("status") == "failed"
                                            and record.get("reason") != "interrupted")


def planned_runs(plan_json):
    """[(run, cell)] a pass's plan.json asks for (its own runs: each pass stores its count)."""
    return plan_from_json(plan_json).schedule(plan_json["runs"])


def todo(res, schedule):
    """The (run, cell) of schedule whose run is not complete in the Results res."""
    return [(run, cell) for run, cell in schedule
            if not is_complete(res.read_record(cell, run) or {})]


def missing(res, plan_json):
    """{(app, cell key): [runs]} planned by plan_json but not complete in res, in plan order;
    None when plan_json predates this check (it lacks a field of PLAN_FIELDS: its plan
    cannot be known)."""
    if any(k not in plan_json and k not in PLAN_FIELD_DEFAULTS for k in PLAN_FIELDS):
        return None
    out = {}
    for run, cell in todo(res, planned_runs(plan_json)):
        out.setdefault((cell.app, cell.key), []).append(run)
    return out
