"""Host tests of net/'s own parts of lwIP, each a program of RUN cases built by net/Makefile's
host target:
- hook_test.c: the IPv4 hook; a segment with a bad TCP checksum or IP lengths that do not fit
  must not end a connection in TIME-WAIT, which the hook used to do because it runs before lwIP
  checks anything (issue 14, item 11).
- memp_test.c: lwIP's pools as lwip_memp.c builds them; memory only as elements are first
  allocated (issue 16: the kernel zeroed 9 MB of pools at every boot), the pool's bound and
  lwIP's statistics unchanged.
- arp_test.c: a burst to an unresolved gateway leaves whole once it answers (lwipopts.h's
  ARP_QUEUE_LEN; lwIP's default of 3 lost a SYN-ACK of a fresh boot's first connections), and
  the header cache in front of ARP (link_cache.c): the frames etharp_output would send, and
  forgetting on every ARP frame and after one ARP timer period."""
import subprocess
from pathlib import Path

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
HOST = HERE.parents[1] / "build" / "net" / "host"
PROGRAMS = ("hook_test", "memp_test", "arp_test")
CASES = [(prog, case) for prog in PROGRAMS
         for case in hostcases.cases_in(HERE / f"{prog}.c", r"^\s*RUN\((\w+)\);$")]


@pytest.fixture(scope="module")
def verdicts():
    hostcases.make(HERE.parent, "host", jobs=2)
    out = {}
    for prog in PROGRAMS:
        r = subprocess.run([HOST / prog], capture_output=True, text=True, timeout=120)
        out[prog] = hostcases.verdicts(r.stdout), r
    return out


@pytest.mark.parametrize("prog,case", CASES)
def test_case(verdicts, prog, case):
    got, r = verdicts[prog]
    assert got.get(case) == "PASS", f"{prog} {case}: {got.get(case)}\n{r.stdout}{r.stderr}"


@pytest.mark.parametrize("prog", PROGRAMS)
def test_cases_are_found(prog):
    assert sum(p == prog for p, _ in CASES) >= 4  # RUN lines found
