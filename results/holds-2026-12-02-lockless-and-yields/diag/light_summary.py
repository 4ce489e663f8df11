import sys, collections
sys.path.insert(0, '/work/main/tools')
from vmcounters.guestprofile import Symbols
f, build = sys.argv[1], sys.argv[2]
sym = Symbols([f'{build}/kernel/nom.elf', f'{build}/apps/memcached/memcached.elf'], ['kernel:', ''])
recs = [l.split()[1:] for l in open(f) if l.startswith('R ')]
for kind in ('0', '1'):
    rs = [r for r in recs if r[0] == kind]
    if not rs: continue
    q = lambda xs: [round(sorted(xs)[int(len(xs)*p)], 1) for p in (0.1, 0.25, 0.5, 0.75, 0.9)]
    print(('tx' if kind == '1' else 'rx'), len(rs), 'prev wall us', q([int(r[1])/1000 for r in rs]), 'prev insns', q([int(r[2]) for r in rs]),
          'ns/insn', q([int(r[1])/max(1,int(r[2])) for r in rs]), 'cur wall', q([int(r[3])/1000 for r in rs]), 'cur insns', q([int(r[4]) for r in rs]))
    c = collections.Counter()
    for r in rs:
        slow = int(r[1]) / max(1, int(r[2])) > 5  # > 5 ns per insn: mostly not executing
        c[('stall' if slow else 'work') + ' after ' + sym.name_of(int(r[5], 16))] += 1
    print('   ', c.most_common(8))
