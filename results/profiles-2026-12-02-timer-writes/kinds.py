"""Exit-equivalents per request by kind under nhttpd's "many" phase, from the sweeps' ledger
snapshots kept here (kvmcost-1.json and -2.json bracket the phase). Run from the tree's top:
    python3 results/profiles-2026-12-02-timer-writes/kinds.py FOLDER TAG...
e.g. ... kinds.py results/profiles-2026-12-02-timer-writes/fix main-1 fix-1 main-2 fix-2"""
import json
import sys

sys.path.insert(0, "tools")
import kvmcost  # noqa: E402

root, tags = sys.argv[1], sys.argv[2:]
print("| tree-round | W | ops/s raw | exits/req | kick | lapic_timer | hlt | irq_device | lapic_eoi |")
print("|---|---|---|---|---|---|---|---|---|")
for tag in tags:
    with open(f"{root}/{tag}.json") as f:
        profile = json.load(f)
    for point in profile["classes"]["many"]:
        w = point["w_us"]
        a, b = (kvmcost.read_ledger(f"{root}/{tag}/w{w}/kvmcost-{i}.json") for i in (1, 2))
        diff = kvmcost.difference(a, b)
        seconds = (b["mono_ns"] - a["mono_ns"]) / 1e9
        ops = point["ops_per_s"]
        per = {k: diff[k]["count"] / seconds / ops for k in diff}
        print(f"| {tag} | {w} | {ops:,.0f} | {point['exits_per_req']:.3f} | {per['kick']:.4f} | "
              f"{per['lapic_timer']:.4f} | {per['hlt']:.4f} | {per['irq_device']:.4f} | "
              f"{per['lapic_eoi']:.4f} |")
