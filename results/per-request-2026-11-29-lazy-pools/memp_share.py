"""Instructions per request in lwIP's pool functions (memp_*, lwIP's memp.c before, our
net/lwip_memp.c after) from each run's window profile, symbolized against that side's ELFs.

    python3 memp_share.py SIDE BUILD   # SIDE: a per_request.py output folder
"""
import glob
import gzip
import json
import os
import sys

from vmcounters import guestprofile
from experiment.nom_driver import APPS

side, build = sys.argv[1], sys.argv[2]
for app in ("memcached", "nhttpd", "netpipe"):
    symbols = guestprofile.Symbols([os.path.join(build, "kernel", "nom.elf"),
                                    os.path.join(build, APPS[app][0])], ["kernel:", ""])
    per_req = []
    for run in sorted(glob.glob(f"{side}/{app}/run*")):
        rows = [tuple(int(x, 16) if i == 0 else int(x) for i, x in enumerate(line.split()))
                for line in gzip.open(f"{run}/raw/profile-window.txt.gz", "rt")]
        work = guestprofile.by_function(rows, symbols, "work")
        reqs = json.load(open(f"{side}/{app}/insn-profile.json"))["runs"][len(per_req)]["requests"]
        per_req.append(sum(n for fn, n in work.items() if fn.startswith("memp_")
                           or fn.startswith("do_memp")) / reqs)
    print(app, side, " ".join(f"{x:.0f}" for x in per_req))
