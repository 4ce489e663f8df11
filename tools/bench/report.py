"""The benchmark's outputs: bench.json (every figure) and bench.md (the short table)."""
import json
import os


def _fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def _phase_cells(phase):
    """Table cells of one phase's figures (or of its error)."""
    if phase is None or "error" in phase:
        return ["failed"] + [""] * 10
    lat, per = phase["latency_us"], phase["per_request"]
    errors = phase["errors"] + phase["nomload"]["errors"]
    return [_fmt(phase["requests_per_s"]), _fmt(errors), _fmt(lat["mean"], 1), _fmt(lat["p50"], 1),
            _fmt(lat["p99"], 1), _fmt(lat["stddev"], 1), _fmt(per["insns_per_req"]),
            _fmt(per.get("work_insns_per_req")), _fmt(per.get("idle_insns_per_req")),
            _fmt(per["notifies_per_req"], 2), _fmt(per["irqs_per_req"], 2)]


def _web_table(result):
    head = ["guest", "W µs", "phase", "req/s (wrk)", "errors", "mean µs", "p50 µs", "p99 µs", "stddev µs",
            "insns/req", "of it work", "idle polling", "kicks/req", "irqs/req"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["nhttpd"]:
        w = "-" if row["w_us"] is None else f"{row['w_us']:g}"
        for phase in ("many", "single"):
            cells = ([f"failed: {_short(row['error'])}"] + [""] * 10 if "error" in row
                     else _phase_cells(row.get(phase)))
            lines.append("| " + " | ".join([row["guest"], w, phase] + cells) + " |")
    return lines


def _floor_table(floor):
    if "error" in floor:
        return [f"rawecho not measured: {_short(floor['error'])}"]
    head = ["W µs", "rtt p50 µs", "rtt p99 µs", "rtt mean µs", "insns/req", "kicks/req",
            "irqs/req", "many echoes/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in floor["rows"]:
        s, q = row["single"], row["single"]["qemu_per_req"]
        lines.append("| " + " | ".join([
            f"{row['batching_delay_us']}", _fmt(s["rtt_us_median"], 1), _fmt(s["rtt_us_p99"], 1),
            _fmt(s["rtt_us_mean"], 1), _fmt(q["insns_per_req"]), _fmt(q["notifies_per_req"], 2),
            _fmt(q["irqs_per_req"], 2), _fmt(row["many"]["echoes_per_s"])]) + " |")
    return lines


def _memcached_rtt_lines(m):
    if "error" in m:
        return [f"memcached not measured: {_short(m['error'])}"]
    ratio = m.get("floor_ratio")
    head = ["requests", "rtt p50 µs", "rtt p99 µs", "rtt mean µs", "p50 / rawecho's p50 at W=0"]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            "| " + " | ".join([str(m["requests"]), _fmt(m["rtt_us_median"], 1),
                               _fmt(m["rtt_us_p99"], 1), _fmt(m["rtt_us_mean"], 1),
                               "-" if ratio is None else f"{ratio:.2f}x (target 1.3x)"]) + " |"]


def _short(text, limit=120):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _load(result, when):
    loads = result.get("host_load_avg", {}).get(when)
    return "/".join(f"{x:.1f}" for x in loads) if loads else "-"


def _cost_model_line(result):
    """What the exit-cost model did to this run's figures, or [] without it."""
    model = result["settings"].get("kvmcost")
    if not model or model == "off":
        return []
    ds = sorted(row["kvmcost"]["dilation"] for row in result["nhttpd"]
                if (row.get("kvmcost") or {}).get("dilation"))
    d = (f"D {ds[0]:.2f}" if ds[0] == ds[-1] else f"D {ds[0]:.2f}-{ds[-1]:.2f}") if ds else "D -"
    return [f"**Exit-cost model `{model}` on** (tools/kvmcost's QEMU: every exit-equivalent "
            f"charged, the guest's clock dilated, {d} per boot): W is in the guest's undilated "
            "(KVM-equivalent, **modelled**) microseconds; req/s and latencies are the host's "
            "wall clock under TCG, not KVM-equivalent; kicks and interrupts are counts.", ""]


def markdown(result):
    m = result["machine"]
    lines = [f"# nom data-path benchmark, {m['accel'].upper()} ({m['accel_reason']})", "",
             f"{m['date_utc']}, commit {m['commit']}{' (dirty)' if m['dirty'] else ''}, "
             f"{m['cpu_model']}, {m['cpus']} CPUs, {m['qemu']}; "
             f"{result['settings']['seconds']} s per tool and phase"
             f"{', quick mode' if result['settings']['quick'] else ''}; host load average "
             f"{_load(result, 'start')} at the start, {_load(result, 'end')} at the end.", "",
             *_cost_model_line(result),
             "## nhttpd: wrk requests/s, nomload latency, QEMU counters per wrk request", ""]
    lines += _web_table(result)
    lines += ["", "## rawecho UDP round trip (the floor), one request at a time", ""]
    lines += _floor_table(result["rawecho"])
    if "memcached_rtt" in result:
        lines += ["", "## memcached round trip against the floor, W = 0, one `get` of 64 bytes "
                  "at a time", ""]
        lines += _memcached_rtt_lines(result["memcached_rtt"])
    lines += ["", "Under TCG, time figures measure the emulator as much as the guest: compare "
              "guests within this run, and read instructions, kicks and interrupts per request "
              "(tools/bench/README.md). Idle polling: the instructions of nom's empty idle-poll "
              "turns, which libnom marks for the counting plugin; Linux's idle loop is not "
              "marked (0 here, its idle instructions count as work).", ""]
    return "\n".join(lines)


def write(result, folder):
    """Writes folder/bench.json and folder/bench.md; returns their paths."""
    os.makedirs(folder, exist_ok=True)
    paths = os.path.join(folder, "bench.json"), os.path.join(folder, "bench.md")
    with open(paths[0], "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    with open(paths[1], "w") as f:
        f.write(markdown(result))
    return paths


def write_rows(path, script, argv, machine, rows):
    """One sweep tool's JSON (holds.py, stalls.py): the machine, the command that made it
    (script and its arguments) and its rows."""
    with open(path, "w") as f:
        json.dump({"machine": machine, "command": " ".join(["python3", script] + list(argv)),
                   "rows": rows}, f, indent=1)
