"""Host unit tests of libnom's pure parts: the run queue, the timer heap, the bulletin-board
seqlock reader, the descriptor table, epoll's interest and ready lists, the online learner and
the controller's online mode. Each C program (tests/host/) is built with the host gcc under
AddressSanitizer/UBSan and prints one PASS/FAIL line per named case; each program is one pytest
case here (nomvm.hostcases)."""
import os

import pytest

from nomvm import TOP, hostcases

pytestmark = pytest.mark.unit

LIBNOM = os.path.join(TOP, "libnom")
OUT = os.path.join(TOP, "build", "libnom", "host-tests")
CFLAGS = ["-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
          f"-I{LIBNOM}/src", f"-I{TOP}/kernel/include",
          f"-I{LIBNOM}/tests/host"]


def nom_headers_only():
    """An include directory with only the nom/ headers of libnom/include: its POSIX headers
    are for the guest, not glibc."""
    nom_only = os.path.join(OUT, "include")
    os.makedirs(nom_only, exist_ok=True)
    link = os.path.join(nom_only, "nom")
    if not os.path.islink(link):
        os.symlink(os.path.join(LIBNOM, "include", "nom"), link)
    return nom_only


@pytest.mark.parametrize("name,sources,libs", [
    ("runq", ["tests/host/test_runq.c"], ()),
    ("timerheap", ["tests/host/test_timerheap.c", "src/timerheap.c"], ()),
    ("seqlock", ["tests/host/test_seqlock.c", "src/bb.c"], ("-lpthread",)),
    ("fdtable", ["tests/host/test_fdtable.c", "src/fdtable.c"], ()),
    ("epset", ["tests/host/test_epset.c", "src/epset.c"], ()),
    ("learn", ["tests/host/test_learn.c", "src/profit/learn.c", "src/profit/profile.c",
               "src/profit/utility.c", "src/profit/load_meter.c"], ("-lm",)),
    ("online", ["tests/host/test_online.c", "src/profit/online.c", "src/profit/learn.c",
                "src/profit/profile.c", "src/profit/utility.c", "src/profit/load_meter.c"],
     ("-lm",)),
])
def test_host_unit(name, sources, libs):
    exe = hostcases.compile_program(os.path.join(OUT, name),
                                    [os.path.join(LIBNOM, s) for s in sources],
                                    CFLAGS + [f"-I{nom_headers_only()}"], libs)
    hostcases.run_all(exe)
