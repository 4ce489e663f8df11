import bisect, collections, re, sys
samples = []
for l in open('/tmp/gapprof/perf.cyc.txt'):
    m = re.match(r'\s*(\d+\.\d+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$', l)
    if not m: continue
    t = int(round(float(m.group(1)) * 1e9)); sym = m.group(3); dso = m.group(4)
    if 'perf-' in dso: sym = 'JIT (guest code)'
    elif 'kernel' in dso: sym = 'host kernel: ' + sym
    samples.append((t, re.sub(r'\+0x.*', '', sym)))
samples.sort(); ts = [s[0] for s in samples]
recs = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith('R ')]
allc = collections.Counter(s[1] for s in samples); ta = sum(allc.values())
for shift in (0, 1_000_000, -3_000_000):
    inl = collections.Counter()
    for r in recs:
        p0, now = int(r[7]) + shift, int(r[8]) + shift
        i = bisect.bisect_left(ts, p0); j = bisect.bisect_left(ts, now)
        for s in samples[i:j]: inl[s[1]] += 1
    ti = sum(inl.values())
    print('shift', shift, 'samples', ti, ' '.join(f"{k.split(':')[-1].strip()[:20]}={100*inl[k]/max(1,ti):.1f}%({100*allc[k]/ta:.1f})" for k in ('JIT (guest code)', 'helper_lookup_tb_ptr', 'host kernel: finish_task_switch.isra.0', 'helper_atomic_cmpxchgq_le', 'host kernel: irqentry_exit_to_user_mode')))
