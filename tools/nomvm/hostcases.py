"""Host C unit-test programs of named cases, run from pytest (kernel, libnom, drivers, net).

A program prints one verdict line per case, "PASS name ..." or "FAIL name ...", and exits
non-zero when a case failed (sanitizer reports go to stderr). Two shapes exist: a program that
runs every case in one go (one pytest case per program: run_all), and one that lists its cases
with `--list` and runs the case named on its command line (one pytest case per C case:
run_case, names from cases_in at collection time and checked against list_cases). Every
failure is an AssertionError whose message holds the command, its exit status and its output.
"""
import os
import re
import subprocess

from .paths import BUILD, TOP

_VERDICT = re.compile(r"^(PASS|FAIL) ([^\s:]+)", re.M)


def _output(cmd, r):
    return (f"$ {' '.join(map(str, cmd))}\nexit {r.returncode}\n"
            f"--- stdout\n{r.stdout[-6000:]}--- stderr\n{r.stderr[-6000:]}")


def _run(cmd, timeout, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def compile_program(exe, sources, cflags, libs=(), cc="gcc"):
    """Builds exe from sources with the host compiler; returns exe. Fails (AssertionError
    with the compiler's output) when it does not compile."""
    os.makedirs(os.path.dirname(str(exe)), exist_ok=True)
    cmd = [cc, *cflags, "-o", exe, *sources, *libs]
    r = _run(cmd, 600)
    assert r.returncode == 0, "does not compile:\n" + _output(cmd, r)
    return exe


def make(directory, target="all", jobs=1):
    """`make -s -C directory target` with TOP and BUILD set as the top Makefile sets them.
    Fails (AssertionError with make's output) when the build fails."""
    cmd = ["make", "-s", f"-j{jobs}", "-C", directory, target]
    r = _run(cmd, 1800, env=dict(os.environ, TOP=str(TOP), BUILD=BUILD))
    assert r.returncode == 0, f"make {target} fails:\n" + _output(cmd, r)


def verdicts(stdout):
    """{case name: "PASS" or "FAIL"} of a program's verdict lines; a case with any FAIL line
    is "FAIL"."""
    out = {}
    for verdict, name in _VERDICT.findall(stdout):
        if out.get(name) != "FAIL":
            out[name] = verdict
    return out


def cases_in(source, pattern):
    """The case names a C source declares: each first group of the regular expression
    pattern (multi-line mode), read at collection time, before anything is built."""
    with open(source) as f:
        return re.findall(pattern, f.read(), re.M)


def list_cases(exe):
    """The case names `exe --list` prints, in its order. Fails if it cannot list them."""
    cmd = [exe, "--list"]
    r = _run(cmd, 60)
    assert r.returncode == 0, "cannot list the cases:\n" + _output(cmd, r)
    return r.stdout.split()


def run_case(exe, case, args=(), timeout=300):
    """Runs the one case named `case` (`exe [args] case`); fails unless the program exits 0
    and says PASS for it. Returns the CompletedProcess."""
    cmd = [exe, *args, case]
    r = _run(cmd, timeout)
    got = verdicts(r.stdout).get(case)
    assert r.returncode == 0 and got == "PASS", \
        f"case {case}: {got or 'no verdict'}\n" + _output(cmd, r)
    return r


def run_all(exe, args=(), min_cases=1, timeout=300):
    """Runs every case of exe in one go; fails if the program exits non-zero, a case says
    FAIL, or fewer than min_cases verdict lines came. Returns {case: verdict}."""
    cmd = [exe, *args]
    r = _run(cmd, timeout)
    lines = _VERDICT.findall(r.stdout)
    failed = [name for verdict, name in lines if verdict == "FAIL"]
    assert r.returncode == 0 and not failed, \
        f"failed cases: {', '.join(failed) or 'none said FAIL'}\n" + _output(cmd, r)
    assert len(lines) >= min_cases, \
        f"{len(lines)} verdicts, at least {min_cases} expected\n" + _output(cmd, r)
    return verdicts(r.stdout)
