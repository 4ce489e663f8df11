"""Host unit tests of the kernel's pure parts: the frame allocator, the ELF parser (on a real
application image and thousands of corrupted ones, under AddressSanitizer) and the bulletin
board's seqlock. Each C program prints one PASS/FAIL line per named case."""
import os
import subprocess

import pytest

from nomvm.session import TOP

KERNEL = os.path.join(TOP, "kernel")
OUT = os.path.join(TOP, "build", "kernel", "host-tests")
CFLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
          "-fno-sanitize-recover=all", f"-I{KERNEL}", f"-I{KERNEL}/include"]


def build_and_run(name, sources, args=(), libs=()):
    os.makedirs(OUT, exist_ok=True)
    exe = os.path.join(OUT, name)
    subprocess.run(["gcc", *CFLAGS, "-o", exe, *sources, *libs], check=True)
    out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    return out


def verdicts(out):
    cases = [l for l in out.stdout.splitlines() if l.startswith(("PASS ", "FAIL "))]
    failed = [l for l in cases if l.startswith("FAIL")]
    return cases, failed


@pytest.mark.parametrize("name,sources,args,libs,min_cases", [
    ("frame", ["tests/host/test_frame.c", "frame.c"], (), (), 8),
    ("elf", ["tests/host/test_elf.c", "elf.c"],
     (os.path.join(TOP, "build", "apps", "tests", "kernel", "hello.elf"),), (), 20),
    ("seqlock", ["tests/host/test_seqlock.c"], (), ("-lpthread",), 2),
])
def test_host_unit(name, sources, args, libs, min_cases):
    out = build_and_run(name, [os.path.join(KERNEL, s) for s in sources], args, libs)
    cases, failed = verdicts(out)
    assert out.returncode == 0 and not failed, out.stdout + out.stderr
    assert len(cases) >= min_cases, out.stdout + out.stderr
