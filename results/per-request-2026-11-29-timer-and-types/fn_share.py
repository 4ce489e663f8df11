"""Instructions per request in named functions, from each per_request.py run's window profile,
symbolized against that side's ELFs.

    python3 fn_share.py BUILD APP FOLDER... -- FUNCTION...
"""
import gzip
import json
import os
import sys

from vmcounters import guestprofile
from experiment.nom_driver import APPS

build, app = sys.argv[1], sys.argv[2]
folders = sys.argv[3:sys.argv.index("--")]
names = sys.argv[sys.argv.index("--") + 1:]
symbols = guestprofile.Symbols([os.path.join(build, "kernel", "nom.elf"),
                                os.path.join(build, APPS[app][0])], ["kernel:", ""])
print("folder", "total", *names)
for folder in folders:
    with gzip.open(f"{folder}/{app}/raw/profile-window.txt.gz", "rt") as f:
        rows = [tuple(int(x, 16) if i == 0 else int(x) for i, x in enumerate(line.split()))
                for line in f]
    work = guestprofile.by_function(rows, symbols, "work")
    reqs = json.load(open(f"{folder}/{app}/insn-profile.json"))["runs"][0]["requests"]
    per = [work.get(n, 0) / reqs for n in names]
    print(os.path.basename(folder), f"{sum(per):.0f}", *(f"{x:.0f}" for x in per))
