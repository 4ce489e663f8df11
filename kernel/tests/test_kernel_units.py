"""Host unit tests of the kernel's pure parts: the frame allocator, the ELF parser (on a real
application image and thousands of corrupted ones, under AddressSanitizer) and the bulletin
board's seqlock. Each C program prints one PASS/FAIL line per named case (nomvm.hostcases)."""
import os

import pytest

from nomvm import TOP, hostcases

pytestmark = pytest.mark.unit

KERNEL = os.path.join(TOP, "kernel")
OUT = os.path.join(TOP, "build", "kernel", "host-tests")
CFLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
          "-fno-sanitize-recover=all", f"-I{KERNEL}", f"-I{KERNEL}/include"]


@pytest.mark.parametrize("name,sources,args,libs,min_cases", [
    ("frame", ["tests/host/test_frame.c", "frame.c"], (), (), 8),
    ("elf", ["tests/host/test_elf.c", "elf.c"],
     (os.path.join(TOP, "build", "apps", "tests", "kernel", "hello.elf"),), (), 20),
    ("seqlock", ["tests/host/test_seqlock.c"], (), ("-lpthread",), 2),
])
def test_host_unit(name, sources, args, libs, min_cases):
    exe = hostcases.compile_program(os.path.join(OUT, name),
                                    [os.path.join(KERNEL, s) for s in sources], CFLAGS, libs)
    hostcases.run_all(exe, args, min_cases)
