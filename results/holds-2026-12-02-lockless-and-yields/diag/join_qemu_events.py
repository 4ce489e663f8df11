import sys, collections, bisect
recf, diagf = sys.argv[1], sys.argv[2]
T = {0: 'bql_wait', 1: 'bql_hold', 2: 'charge', 3: 'translate', 4: 'tlbflush', 5: 'outside'}
ev = []
for l in open(diagf):
    t, a, b, site = l.split()
    ev.append((int(a), int(b), T[int(t)], site))
ev.sort()
starts = [e[0] for e in ev]
recs = [l.split()[1:] for l in open(recf) if l.startswith('R ')]
for kind in ('0', '1'):
    rs = [r for r in recs if r[0] == kind]
    tot = collections.Counter(); cnt = collections.Counter(); span = 0; covered_any = 0
    for r in rs:
        p0, now = int(r[7]), int(r[8])
        span += now - p0
        i = bisect.bisect_left(starts, p0 - 10_000_000)
        cov = 0
        while i < len(ev) and ev[i][0] < now:
            a, b, t, site = ev[i]
            o = min(b, now) - max(a, p0)
            if o > 0:
                key = t + ' ' + (site if t in ('bql_wait', 'bql_hold', 'charge') else '')
                tot[key] += o; cnt[key] += 1; cov += o
            i += 1
        covered_any += cov
    print(f"{'tx' if kind == '1' else 'rx'}: {len(rs)} late, gap+cur wall total {span/1e3:.0f} us, covered by events {100*covered_any/max(1,span):.0f}%")
    for k, v in tot.most_common(12):
        print(f"   {100*v/span:5.1f}%  {v/len(rs)/1e3:7.1f} us/late  n={cnt[k]:6d}  {k}")
