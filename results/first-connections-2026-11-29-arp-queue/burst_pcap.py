"""first_burst.py with a capture: boots TREE's memcached BOOTS times, runs memcslap
--concurrency=4 on each fresh boot, and for a run over 1 s prints the capture's ARP frames,
SYNs and SYN-ACKs (and any frame after a pause over 0.5 s). `python3 burst_pcap.py TREE BOOTS`"""
import os,sys,subprocess,tempfile,time
os.environ["BUILD"]=sys.argv[1]+"/build"
sys.path.insert(0, sys.argv[1] + "/tools")
from nomvm import Guest
for b in range(int(sys.argv[2])):
    d=tempfile.mkdtemp(); cap=d+"/g.pcap"
    g=Guest([(sys.argv[1]+"/build/apps/memcached/memcached.elf","memcached -p 11211 -U 0 -t 1 -m 64")],d,tcp=[11211],extra_args=["-object",f"filter-dump,id=dump,netdev=n0,file={cap}"])
    with g:
        t=time.monotonic(); r=subprocess.run(["memcslap",f"--servers=127.0.0.1:{g.host_port(11211)}","--concurrency=4","--execute-number=100"],capture_output=True,text=True); el=time.monotonic()-t
    out=subprocess.run(["python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pcap_dump.py"), cap],capture_output=True,text=True).stdout.splitlines()
    print(f"boot {b}: memcslap {el:.2f} s")
    if el>1:
        prev=None
        for l in out:
            t=float(l.split()[0])
            if "ARP" in l or " S len" in l or " SA len" in l or (prev and t-prev>0.5): print("   ",l)
            prev=t
