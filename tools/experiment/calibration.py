"""The experiment's reference calibration of the time dilation D, and the runs whose own
calibration was taken on a busy host.

Each run measures D before its guest boots (tools/kvmcost/dilation.py) and runs its guest at it:
D sets both the exit stalls and the guest's clock, so a D measured while another process held
a core gives that run another cost model, and its KVM-equivalent figures another scale (raw x D,
raw / D). The reference is the per-side median (native ticks, TCG ticks) of the folder's
recorded calibrations when it has at least MIN_RUNS, else of REFERENCE_RUNS calibrations taken
when the session starts. Against it:

- a run's calibration slower than the reference beyond dilation.py's tolerances is repeated,
  and a run whose host stays busy is not measured (labdriver.py: HostBusy, redone by --resume);
- `--resume` sets aside, into disturbed/ beside raw/, the runs of earlier sessions that were
  measured with such a calibration (set_aside), so that they run again; their files are kept.
"""
import os
import shutil
import statistics

import kvmcost
from kvmcost import dilation
from kvmcost.dilation import SIDES

MIN_RUNS = 3
REFERENCE_RUNS = 3

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
    """The reference from `runs` calibrations taken now on cost model name's QEMU."""
    return reference([model(name)["calibration"] for _ in range(runs)], min_runs=runs)


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
