"""The load detector on traces recorded in QEMU (traces/*.txt, tools/profile/loadtrace.py:
memcached's controller printing each 500 ms sample's signals while the host ran labelled
loads): does it say the class each load is, within a bounded lag after each change, and never
flap inside a phase? Built with the host gcc from src/profit (load_trace.c reads the trace)."""
import os
import subprocess
from pathlib import Path

import pytest

from nomvm import TOP, hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
PROFIT = Path(TOP) / "libnom" / "src" / "profit"
OUT = Path(TOP) / "build" / "libnom" / "profit-test"
TRACES = sorted((HERE / "traces").glob("*.txt"))
# What each recorded load is (loadtrace.py's phases).
TRUTH = {"many": "many", "single": "single", "idle8": "single", "reconnect": "single",
         "idle": "single"}
# Samples after a change that may still show the old class: the first straddles the change,
# then NOM_ADAPT_VOTES (2) consecutive votes.
LAG = 3


@pytest.fixture(scope="module")
def detector():
    inc = OUT / "include"
    inc.mkdir(parents=True, exist_ok=True)
    if not (inc / "nom").is_symlink():  # libnom's nom/ headers only, not its POSIX ones
        (inc / "nom").symlink_to(Path(TOP) / "libnom" / "include" / "nom")
    return hostcases.compile_program(
        str(OUT / "load_trace"),
        [str(HERE / "load_trace.c")] + [str(PROFIT / f) for f in
                                        ("learn.c", "load_meter.c", "utility.c", "profile.c")],
        ["-std=c11", "-D_DEFAULT_SOURCE", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
         f"-I{inc}", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"], ("-lm",))


def read_trace(path):
    rows = [l.split() for l in path.read_text().splitlines() if l and not l.startswith("#")]
    return [r[0] for r in rows], "\n".join(" ".join(r[1:4]) for r in rows) + "\n"


def classes(detector, trace, *flags):
    r = subprocess.run([detector, *flags], input=trace, capture_output=True, text=True,
                       check=True, timeout=30)
    return r.stdout.split()


def errors(phases, seen):
    """Samples where the class is not the load's, beyond LAG samples after a change."""
    out, since, truth = [], LAG, "single"  # the meter starts "single"
    for i, (phase, cls) in enumerate(zip(phases, seen)):
        since = 0 if TRUTH[phase] != truth else since + 1
        truth = TRUTH[phase]
        if cls != truth and since >= LAG:
            out.append((i, phase, cls))
    return out


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_detector_follows_the_recorded_load(detector, path):
    phases, trace = read_trace(path)
    assert set(phases) <= set(TRUTH) and len(phases) >= 40
    seen = classes(detector, trace)
    assert len(seen) == len(phases)
    assert errors(phases, seen) == []


def test_idle_connections_fooled_the_connection_count(detector):
    """The same traces with the connection count alone (the detector before requests in
    flight): one user with 8 more connections open read as "many" (their handshakes are
    segments received) in the first trace; the counted requests do not."""
    phases, trace = read_trace(TRACES[0])
    wrong = errors(phases, classes(detector, trace, "--connections-only"))
    assert any(phase == "idle8" and cls == "many" for _, phase, cls in wrong)


def test_traces_say_how_they_were_recorded():
    for path in TRACES:
        head = path.read_text().splitlines()[0]
        assert head.startswith("# loadtrace.py") and "host load" in head
