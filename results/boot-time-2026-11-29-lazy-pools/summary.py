"""Medians (and min / max) per label of a boots.jsonl made by ab.sh; the kernel's apps step
from its boot-step line, and how many boots had a slow one (> 20 ms).

    python3 summary.py boots.jsonl
"""
import json
import re
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    m = re.search(r" apps (\d+)", r.get("kernel_steps") or "")
    r["apps_ms"] = int(m.group(1)) / 1000 if m else None
    rows[r["label"]].append(r)
cols = ["kernel", "app", "listen", "answer"]
print("| label | boots | " + " | ".join(f"{c} (s) min / median / max" for c in cols)
      + " | apps step (ms) median | slow apps steps (> 20 ms) |")
print("|---" * (len(cols) + 4) + "|")
for label, rs in rows.items():
    cells = []
    for c in cols:
        v = [r[c] for r in rs if c in r]
        cells.append(f"{min(v):.3f} / {statistics.median(v):.3f} / {max(v):.3f}")
    apps = [r["apps_ms"] for r in rs if r["apps_ms"] is not None]
    slow = sum(a > 20 for a in apps)
    print(f"| {label} | {len(rs)} | " + " | ".join(cells)
          + f" | {statistics.median(apps):.1f} | {slow} of {len(apps)} |")
