"""The experiment's reference calibration of the time dilation D, and the runs whose own
calibration was taken on a busy host.

D sets both the exit stalls and the guest's clock (tools/kvmcost/dilation.py), so a run at
another D runs another cost model, and its KVM-equivalent figures have another scale (raw x D,
raw / D). Every run of a pass therefore runs at the pass's reference D. The reference is
each side's fastest (native ticks, TCG ticks) of REFERENCE_RUNS calibrations taken when the
pass's first session starts (measure_reference says why not their median), kept in the pass's folder (REFERENCE_FILE) so that a resumed session
runs at the same D; a folder from before the file (its runs each ran at their own boot's D)
gets the median of its runs' recorded calibrations when it has at least MIN_RUNS.

Why not each run's own D, as before: a calibration is a few seconds' measurement, and it does
not tell how fast the run then goes. Over the 126 nom runs of results/2026-11-26-{b77589b,
nhttpd-c1e938b,memcached-4c69e84} (an AMD EPYC host, D 4.4-4.8) a run's D correlated -0.15 to
0.08 with its raw throughput; on a 2-CPU Xeon host (2026-11-26, evening) the native mix took
2.0-5.5 M ticks from one minute to the next and five runs of one experiment got D = 4.4, 4.7,
6.8, 9.0 and 9.6: the same cell measured at those D is five different machines.

Each run still calibrates before its guest boots, to check the host (against the reference):

- a run's calibration slower than the reference beyond dilation.py's tolerances is repeated,
  and a run whose host stays busy is not measured (labdriver.py: HostBusy, redone by --resume);
- `--resume` sets aside, into disturbed/ beside raw/, the runs of earlier sessions that were
  measured with such a calibration (set_aside), so that they run again; their files are kept.
"""
import json
import os
import shutil
import statistics
import sys

import kvmcost
from kvmcost import dilation
from kvmcost.dilation import SIDES

MIN_RUNS = 3
REFERENCE_RUNS = 5
REFERENCE_FILE = "calibration-reference.json"

README_HEAD = "# Runs set aside\n"
README_SECTION = """
## Calibration of D taken on a busy host (set aside by run.py --resume)

Each run measures D before its guest boots and runs the guest at it (tools/kvmcost/dilation.py),
so a D measured while another process held a core is another cost model. These runs' calibration
was slower than the folder's reference (per-side median of its recorded calibrations: native
{native} ticks, TCG {tcg} ticks) beyond tolerance (native +{ntol:.0%}, TCG +{ttol:.0%}); run.py
--resume ran them again in their place.

| run | D | why |
|---|---|---|
"""


def of_record(record):
    """The calibration of D a run's record carries ({"native_ticks", "tcg_ticks", ...}), or
    None (no exit-cost model, or the run did not start)."""
    cal = ((record.get("info") or {}).get("kvmcost") or {}).get("calibration")
    return cal if cal and all(cal.get(s) for s in SIDES) else None


def reference(calibrations, min_runs=MIN_RUNS):
    """{"native_ticks", "tcg_ticks"}: the median of each side over calibrations (None ones
    skipped), or None when fewer than min_runs are given."""
    cals = [c for c in calibrations if c]
    if len(cals) < min_runs:
        return None
    return {s: statistics.median(c[s] for c in cals) for s in SIDES}


def recorded_reference(res):
    """The reference from the ok runs of the Results res, or None (too few)."""
    return reference([of_record(r) for r in res.records() if r.get("status") == "ok"])


def measure_reference(name, runs=REFERENCE_RUNS, model=kvmcost.model):
    """The reference from `runs` calibrations taken now on cost model name's QEMU: each side's
    fastest, as dilation.calibrate keeps each side's fastest attempt (a disturbance only adds
    time). Not the median: on the Xeon host of 2026-11-26 each side was fast or about twice as
    slow from one calibration to the next, independently, and a median of 5 took native fast
    (2.96 M ticks) with TCG slow (35.7 M): D = 12.1 against 6.3 with both fast."""
    cals = [model(name)["calibration"] for _ in range(runs)]
    return {s: min(c[s] for c in cals) for s in SIDES}


def stored_reference(folder):
    """The reference kept in folder (REFERENCE_FILE), or None."""
    try:
        with open(os.path.join(folder, REFERENCE_FILE)) as f:
            ref = json.load(f)
    except FileNotFoundError:
        return None
    return {s: float(ref[s]) for s in SIDES}


def store_reference(folder, ref, how):
    """Keeps ref in folder (REFERENCE_FILE) with how it was taken and its D."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, REFERENCE_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump({**ref, "d": dilation.d_of(ref), "how": how}, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def known_reference(res):
    """The reference res (a Results) already has: the stored one, else the recorded one (a
    folder from before REFERENCE_FILE), else None."""
    return stored_reference(res.path) or recorded_reference(res)


def pass_reference(res, name):
    """The reference of the pass whose results are res (a Results) on cost model name: the
    known one (known_reference), else measured now; stored in the folder unless it was.
    Raises what measure_reference raises when it cannot be measured."""
    ref = stored_reference(res.path)
    if ref is not None:
        return ref
    ref = recorded_reference(res)
    how = "the per-side median of the folder's recorded calibrations"
    if ref is None:
        print(f"experiment: calibrating D for the reference ({REFERENCE_RUNS} times)",
              file=sys.stderr)
        ref = measure_reference(name)
        how = f"each side's fastest of {REFERENCE_RUNS} calibrations at the first session"
    store_reference(res.path, ref, how)
    return ref


def disturbed(records, ref):
    """[(record, why)] of the ok records whose calibration is slower than ref (dilation
    .slower_than)."""
    out = []
    for r in records:
        cal = of_record(r) if r.get("status") == "ok" else None
        why = dilation.slower_than(cal, ref) if cal else None
        if why:
            out.append((r, why))
    return out


def set_aside(res, ref):
    """Moves the disturbed runs of the Results res (record and raw folder) to
    res.path/disturbed/APP/GUEST-VARIANT/, says why in disturbed/README.md and returns
    ["APP/GUEST-VARIANT/runN: why"]. A run already set aside under the same name keeps its
    place: the newer one gets a suffix."""
    found = disturbed(res.records(), ref)
    if not found:
        return []
    folder = os.path.join(res.path, "disturbed")
    readme = os.path.join(folder, "README.md")
    os.makedirs(folder, exist_ok=True)
    text = open(readme).read() if os.path.exists(readme) else README_HEAD
    if README_SECTION.splitlines()[1] not in text:
        text += README_SECTION.format(native=round(ref["native_ticks"]),
                                      tcg=round(ref["tcg_ticks"]),
                                      ntol=dilation.NATIVE_TOLERANCE,
                                      ttol=dilation.TCG_TOLERANCE)
    lines = []
    for r, why in found:
        key = f"{r['guest']}-{r['variant']['name']}"
        src = os.path.join(res.path, "raw", r["app"], key, f"run{r['run']}")
        dest_dir = os.path.join(folder, r["app"], key)
        os.makedirs(dest_dir, exist_ok=True)
        name = f"run{r['run']}"
        while os.path.exists(os.path.join(dest_dir, name + ".json")):
            name += "-again"
        if os.path.isdir(src):
            shutil.move(src, os.path.join(dest_dir, name))
        shutil.move(src + ".json", os.path.join(dest_dir, name + ".json"))
        line = f"{r['app']}/{key}/run{r['run']}"
        text += f"| {line} | {of_record(r)['d_mix']:.2f} | {why} |\n"
        lines.append(f"{line}: {why}")
    with open(readme + ".tmp", "w") as f:
        f.write(text)
    os.replace(readme + ".tmp", readme)
    return lines
