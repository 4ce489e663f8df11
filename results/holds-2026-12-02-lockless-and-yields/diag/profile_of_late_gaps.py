import sys, collections, statistics
sys.path.insert(0, '/work/main/tools')
from vmcounters.guestprofile import Symbols
f, build = sys.argv[1], sys.argv[2]
sym = Symbols([f'{build}/kernel/nom.elf', f'{build}/apps/memcached/memcached.elf'], ['kernel:', ''])
prof = collections.defaultdict(collections.Counter); recs = []
for l in open(f):
    w = l.split()
    if w[0] == 'R': recs.append(tuple(int(x) for x in w[1:6]))
    elif w[0] == 'P': prof[w[1]][sym.name_of(int(w[2], 16))] += int(w[3]) * int(w[4])
for kind in (0, 1):
    rs = [r for r in recs if r[0] == kind]
    if not rs: continue
    print(f"== {'tx' if kind else 'rx'} late marks {len(rs)}: prev gap wall us median {statistics.median(r[1] for r in rs)/1000:.0f}, insns median {statistics.median(r[2] for r in rs):.0f}; cur wall us median {statistics.median(r[3] for r in rs)/1000:.0f}, insns median {statistics.median(r[4] for r in rs):.0f}")
    qs = sorted(r[2] for r in rs); print("   prev insns quartiles", [qs[int(len(qs)*q)] for q in (0.1,0.25,0.5,0.75,0.9)])
    qs = sorted(r[4] for r in rs); print("   cur insns quartiles", [qs[int(len(qs)*q)] for q in (0.1,0.25,0.5,0.75,0.9)])
    for part in ('prev', 'cur'):
        c = prof[('tx' if kind else 'rx') + part]; tot = sum(c.values())
        print(f"  -- {part}: {tot/len(rs):.0f} insns per mark")
        for fn, v in c.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 14):
            print(f"     {v/len(rs):8.0f} {100*v/tot:5.1f}% {fn}")
