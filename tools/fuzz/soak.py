#!/usr/bin/env python3
"""The soak of issue 14: nom runs memcached and nhttpd side by side (one vCPU, 128 MiB, each on
its own NIC: memcached's on a tap in a network namespace (tools/netlab), nhttpd's on QEMU user
networking forwarded to the namespace's 127.0.0.1:8080) while memcaslap loads memcached
(GET/SET 90/10, 64-byte keys, 32-byte values, a key set far smaller than memcached's -m 64:
--win_size keys per connection, --verify on a share of its gets) and wrk loads nhttpd, at once.

It asks, and exits 0 only if every answer is yes:
  - memcached evicted nothing (stats `evictions` 0);
  - every get returned what was set: memcaslap's verify_failed 0, and the sentinel keys a
    verifying client (pymemcache) stored before the load read back unchanged after it;
  - the board's free memory (nhttpd's GET /nom/board, mem_free_bytes) at the end is within
    1 MiB of its value after the warm-up;
  - wrk saw no connect, read or write errors and no non-2xx answers; memcaslap ran to its end.
    wrk's timeouts (requests unanswered after 10 s, wrk_timeouts) are reported, not failed on:
    they come with QEMU's user network, which nhttpd uses here (tools/fuzz/README.md "Soak");
  - nothing on the console says PANIC, fault, killed or exited.

    tools/fuzz/soak.py --seconds 600          # the issue's 10 minutes
    tools/fuzz/soak.py --seconds 60 --warmup 15

The load runs inside the namespace: the script re-runs itself there (--inside) and prints a
JSON summary last.
"""
import argparse
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from fuzz import guestlab
from fuzz.guestlab import BUILD, KERNEL, TROUBLE

MEMCACHED = BUILD / "apps" / "memcached" / "memcached.elf"
NHTTPD = BUILD / "apps" / "nhttpd" / "nhttpd.elf"
MC_PORT, WEB_PORT = 11211, 8080
SENTINELS = 2000
TOLERANCE_BYTES = 1 << 20


# -- inside the namespace ---------------------------------------------------------------------
def board_free_bytes():
    # No proxy from the environment: the request stays inside the namespace.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{WEB_PORT}/nom/board", timeout=30) as r:
        return json.load(r)["board"]["mem_free_bytes"]


def sentinel(i):
    return f"soak:sentinel:{i}".encode(), f"value-{i}-{i * 7919 % 100003}".encode() * (1 + i % 5)


def memcached_client(host):
    from pymemcache.client.base import Client
    return Client((host, MC_PORT), connect_timeout=30, timeout=60)


def parse_counts(text, names):
    return {n: int(m.group(1)) for n in names
            for m in [re.search(rf"^{n}: (\d+)", text, re.M)] if m}


def inside(a):
    r = {}
    c = memcached_client(a.host)
    for i in range(SENTINELS):
        c.set(*sentinel(i), noreply=False)
    cfg = Path(a.workdir) / "memaslap.cfg"
    cfg.write_text("key\n64 64 1\nvalue\n32 32 1\ncmd\n0 0.1\n1 0.9\n")
    memaslap = subprocess.Popen(
        ["memcaslap", "-s", f"{a.host}:{MC_PORT}", "-T", "2", "-c", "16", "-w", "1k",
         "-t", f"{a.seconds}s", "-F", str(cfg), "--verify=0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wrk = subprocess.Popen(
        ["wrk", "-t2", "-c32", f"-d{a.seconds}s", "--timeout", "10s",
         f"http://127.0.0.1:{WEB_PORT}/index.html"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(a.warmup)
    r["free_after_warmup"] = board_free_bytes()
    mout, _ = memaslap.communicate(timeout=a.seconds * 3 + 120)
    wout, _ = wrk.communicate(timeout=a.seconds * 3 + 120)
    (Path(a.workdir) / "memaslap.txt").write_text(mout)
    (Path(a.workdir) / "wrk.txt").write_text(wout)
    r["memaslap_exit"], r["wrk_exit"] = memaslap.returncode, wrk.returncode
    r["memaslap"] = parse_counts(mout, ["cmd_get", "cmd_set", "get_misses", "verify_misses",
                                        "verify_failed"])
    m = re.search(r"(\d+) requests in", wout)
    r["wrk_requests"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", wout)
    r["wrk_socket_errors"] = sum(map(int, m.groups()[:3])) if m else 0
    r["wrk_timeouts"] = int(m.group(4)) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", wout)
    r["wrk_non_2xx"] = int(m.group(1)) if m else 0
    stats = c.stats()
    r["evictions"] = int(stats[b"evictions"])
    r["curr_items"] = int(stats[b"curr_items"])
    r["limit_maxbytes"] = int(stats[b"limit_maxbytes"])
    r["bytes"] = int(stats[b"bytes"])
    r["sentinels_wrong"] = sum(c.get(k) != v for k, v in map(sentinel, range(SENTINELS)))
    time.sleep(2)  # connections closing
    r["free_at_end"] = board_free_bytes()
    print(json.dumps(r), flush=True)
    return 0


# -- outside: the lab and the guest ------------------------------------------------------------
class Soak(guestlab.GuestRun):
    def failures(self):
        s = self.summary
        if not s:
            return ["no summary: " + self.output[-1500:]]
        checks = {
            "memcaslap ran to its end": s["memaslap_exit"] == 0 and s["memaslap"].get("cmd_get", 0) > 0,
            "wrk ran without errors": s["wrk_exit"] == 0 and s["wrk_requests"] > 0
            and s["wrk_socket_errors"] == 0 and s["wrk_non_2xx"] == 0,
            "evictions 0": s["evictions"] == 0,
            "every get returned what was set": s["memaslap"].get("verify_failed", 1) == 0
            and s["sentinels_wrong"] == 0,
            "free memory within 1 MiB of the warm-up's":
                abs(s["free_at_end"] - s["free_after_warmup"]) <= TOLERANCE_BYTES,
            "nothing on the console": not TROUBLE.search(self.log),
        }
        return [k for k, ok in checks.items() if not ok]


def run(seconds, warmup, workdir):
    import netlab
    from nomvm import Nic
    modules = [
        (MEMCACHED, f"memcached --nic=1 --ip={netlab.GUEST_IP}/{netlab.PREFIX_LEN} "
                    f"-p {MC_PORT} -U 0 -t 1 -m 64"),
        (NHTTPD, "nhttpd --nic=2 --port=80"),
    ]
    with netlab.NetLab() as lab:
        nics = [Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap),
                Nic(mac="52:54:00:12:34:57", hostfwd=[(WEB_PORT, 80)])]
        try:
            vm = guestlab.boot(lab, modules, nics, workdir, "soak")
        except TimeoutError as e:
            return Soak(output=str(e))
        time.sleep(2)  # the listeners open after the stack is up
        output, summary = guestlab.run_inside(
            lab, __file__, ["--inside", lab.guest_ip, "--seconds", seconds, "--warmup", warmup,
                            "--workdir", workdir], timeout=seconds * 4 + 600)
        vm.stop()
        return Soak(summary=summary, output=output, log=vm.log())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--warmup", type=int, help="seconds of load before the first board reading "
                    "(default: a tenth of --seconds)")
    ap.add_argument("--workdir", default=str(BUILD / "fuzz" / "soak"))
    ap.add_argument("--inside", help=argparse.SUPPRESS)  # memcached's address: run the load
    a = ap.parse_args()
    a.warmup = a.warmup if a.warmup is not None else max(5, a.seconds // 10)
    if a.inside:
        a.host = a.inside
        return inside(a)
    s = run(a.seconds, a.warmup, a.workdir)
    print(json.dumps(s.summary, indent=1) if s.summary else s.output)
    bad = s.failures()
    print("soak: " + ("every check passed" if not bad else "FAILED: " + "; ".join(bad)))
    if bad:
        print("console tail:\n" + "\n".join(s.log.splitlines()[-30:]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
