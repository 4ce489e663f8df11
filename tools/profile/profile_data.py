"""A nom application's profile (paper 6.1): per load class and batching delay W, the throughput,
mean latency and jitter it achieves. One JSON file per application, committed under
apps/<app>/profile/profile.json, written by sweep.py and turned into a C table by cgen.py.

    {"app": "nhttpd", "accel": "tcg", "machine": {...}, "command": "python3 tools/profile/...",
     "date_utc": "...", "seconds_per_point": 10,
     "classes": {"many":   [{"w_us": 0, "t_gbps": ..., "ops_per_s": ..., "latency_us": ...,
                             "jitter_us": ...}, ...],
                 "single": [...]}}

Units are tools/profit's: t_gbps is the guest's outbound traffic in Gbit/s, latencies in us.
Both classes list the same W values, strictly increasing, each in [0, MAX_W_US].
"""
import json
import math
import os

CLASSES = ("many", "single")
FIELDS = ("w_us", "t_gbps", "ops_per_s", "latency_us", "jitter_us")
MAX_W_US = 1000000  # net/'s limit for the batching delay (nom/net.h: 1 s)
MAX_POINTS = 64     # libnom's table limit (NOM_ADAPT_MAX_POINTS)


def _check_point(cls, i, p):
    where = f"classes.{cls}[{i}]"
    if not isinstance(p, dict):
        raise ValueError(f"{where}: not an object")
    for f in FIELDS:
        v = p.get(f)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}.{f}: missing or not a finite number ({v!r})")
        if v < 0:
            raise ValueError(f"{where}.{f}: negative ({v!r})")
    if p["w_us"] != int(p["w_us"]) or p["w_us"] > MAX_W_US:
        raise ValueError(f"{where}.w_us: not an integer in 0..{MAX_W_US} ({p['w_us']!r})")
    if p["latency_us"] <= 0:
        raise ValueError(f"{where}.latency_us: must be > 0 (the bonus divides by it)")


def check_profile(profile):
    """Raises ValueError naming the first problem; returns the profile otherwise."""
    if not isinstance(profile, dict) or not isinstance(profile.get("app"), str):
        raise ValueError("profile: not an object with an 'app' name")
    classes = profile.get("classes")
    if not isinstance(classes, dict) or set(classes) != set(CLASSES):
        raise ValueError(f"profile: 'classes' must have exactly {', '.join(CLASSES)}")
    ws = None
    for cls in CLASSES:
        points = classes[cls]
        if not isinstance(points, list) or not 1 <= len(points) <= MAX_POINTS:
            raise ValueError(f"classes.{cls}: a list of 1 to {MAX_POINTS} points")
        for i, p in enumerate(points):
            _check_point(cls, i, p)
        w = [p["w_us"] for p in points]
        if any(a >= b for a, b in zip(w, w[1:])):
            raise ValueError(f"classes.{cls}: W values not strictly increasing ({w})")
        if ws is not None and w != ws:
            raise ValueError(f"classes: 'many' and 'single' list different W values")
        ws = w
    return profile


def kvm_equivalent(profile):
    """The profile in the time of the hardware the exit-cost model stands for: what the
    controller reads (cgen.py) and choices.py shows. A point measured under tools/kvmcost
    carries the dilation D its boot ran with (d_mix: the guest ran D times slower than that
    hardware); its requests/s and T are multiplied by D and its latency and jitter divided by
    D, the dilated model of tools/experiment/kvmmodel.py. Why: the SLO (750 us) and the prices
    are stated for that hardware, and under the exit-cost QEMU's guest clock the
    controller's own measurements are in its time too. Raw TCG latencies (memcached: ~2 ms
    under "many", 0.4 +- 0.7 ms under "single") break the SLO at every W, so the penalty
    utility saw no revenue anywhere and picked the W that serves least (issue 12). A point
    without D (measured on the stock QEMU) stays as measured. On the instruction clock
    (profile "guest_clock": "insn") D is each point's d_window instead, the wall time over the
    guest's time its window measured (tools/experiment/kvmmodel.py valuation_d says why).
    Returns a new profile."""
    out = json.loads(json.dumps(profile))
    d_of = "d_window" if profile.get("guest_clock") == "insn" else "d_mix"
    for cls in CLASSES:
        for p in out["classes"][cls]:
            d = p.get(d_of)
            if isinstance(d, (int, float)) and not isinstance(d, bool) and d > 0:
                p.update(t_gbps=p["t_gbps"] * d, ops_per_s=p["ops_per_s"] * d,
                         latency_us=p["latency_us"] / d, jitter_us=p["jitter_us"] / d)
                out["time_base"] = "kvm-equivalent"
    return out


def load_profile(path):
    with open(path) as f:
        try:
            profile = json.load(f)
        except ValueError as e:
            raise ValueError(f"{path}: not JSON: {e}") from None
    try:
        return check_profile(profile)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def write_profile(profile, path):
    """Checks, then writes under a temporary name and renames: a build reading the profile at
    the same time sees the old file or the new one, never half of one."""
    check_profile(profile)
    with open(path + ".tmp", "w") as f:
        json.dump(profile, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
