import sys, collections
sys.path.insert(0, '/work/main/tools')
from vmcounters.guestprofile import Symbols
f, build = sys.argv[1], sys.argv[2]
sym = Symbols([f'{build}/kernel/nom.elf', f'{build}/apps/memcached/memcached.elf'], ['kernel:', ''])
MHZ = 2596.0
for kind in (0, 1):
    c = collections.Counter(); n = 0
    for l in open(f):
        if not l.startswith('R '): continue
        w = l.split()[1:]
        k, pw, pi, cw, ci, step = map(int, w[:6]); b, a = sym.name_of(int(w[6], 16)), sym.name_of(int(w[7], 16))
        if k != kind: continue
        n += 1
        if step / MHZ >= 20 and 'sched_reprogram_timer' in b: cat = 'timer write (LAPIC MMIO)'
        elif step / MHZ >= 20 and 'bar_write' in b: cat = 'kick'
        elif pi >= 30000: cat = 'guest work >= 30K insns'
        elif step / MHZ >= 20 and b == a: cat = 'stall mid-function (interrupt/host)'
        elif step / MHZ >= 20: cat = f'stall other'
        else: cat = 'other'
        c[cat] += 1
    print(('tx' if kind else 'rx'), n, {k: f"{v} ({100*v/n:.0f}%)" for k, v in c.most_common()})
