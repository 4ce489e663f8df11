"""Paired differences of two labels of an ab.sh file (each round boots both, one after the
other): per milestone, the median of (B - A) and its quartiles, and in how many rounds B came
first. A round's two boots share the host's minute, which the medians of each side do not.

    python3 paired.py FILE A B
"""
import json
import statistics
import sys

path, a, b = sys.argv[1:4]
rows = [json.loads(line) for line in open(path)]
rounds = [rows[i:i + 2] for i in range(0, len(rows) - 1, 2)]
for milestone in ("kernel", "app", "listen", "answer"):
    d = sorted(next(r[milestone] for r in pair if r["label"] == b)
               - next(r[milestone] for r in pair if r["label"] == a) for pair in rounds)
    q = len(d) // 4
    print(f"{milestone}: {b} - {a} median {statistics.median(d) * 1000:+.1f} ms "
          f"(quartiles {d[q] * 1000:+.1f} / {d[-q - 1] * 1000:+.1f}), {b} sooner in "
          f"{sum(x < 0 for x in d)} of {len(d)} rounds")
