"""Does the instruction-counting plugin count what a guest with a known count executes?"""
import os
import subprocess
import tempfile

import pytest

import vmcounters
from vmcounters import guestprofile

pytestmark = pytest.mark.boot

OUT = os.path.dirname(vmcounters.PLUGIN)


@pytest.fixture(scope="module")
def built():
    vmcounters.build()
    with open(os.path.join(OUT, "loop-counts")) as f:
        return dict((k, int(v)) for k, v in (line.split() for line in f))


def run_loop_guest(name, interval_ms=20, profile=None, elf=None):
    """Runs build/vmcounters/loop-NAME.elf (or elf) to its isa-debug-exit; returns its samples.
    profile: a list that receives the profile's rows (guestprofile.parse_profile)."""
    with tempfile.TemporaryDirectory(prefix="insn-") as work:
        counter = vmcounters.InsnCounter(work, interval_ms=interval_ms,
                                         profile=profile is not None)
        args = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max",
                "-m", "32", "-display", "none", "-nodefaults", "-no-reboot",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
                "-kernel", os.path.join(OUT, elf or f"loop-{name}.elf")] + counter.qemu_args()
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert result.returncode == 1, result.stderr  # (0 << 1) | 1: the guest's own exit
        if profile is not None:
            profile += guestprofile.read_profile(counter.profile_path)
        return counter.samples()


def test_loop_instructions_are_counted_exactly_up_to_firmware_noise(built):
    small, large = run_loop_guest("small"), run_loop_guest("large")
    extra = large[-1].total - small[-1].total
    expected = 2 * (built["large"] - built["small"])  # dec + jnz per iteration
    # The firmware's own count varies by some thousands between boots (it polls timers).
    assert abs(extra - expected) < expected * 0.002, (extra, expected)


def test_final_line_and_periodic_dumps_agree(built):
    samples = run_loop_guest("large", interval_ms=10)
    assert samples[-1].final and not any(s.final for s in samples[:-1])
    assert len(samples) >= 2
    totals = [s.total for s in samples]
    assert totals == sorted(totals)
    assert [s.mono_ns for s in samples] == sorted(s.mono_ns for s in samples)
    assert samples[-1].per_vcpu == [samples[-1].total]


def test_marked_idle_polling_is_counted_apart_exactly(built):
    """Does the plugin count the instructions between the guest's idle marks (7 per turn in
    tests/idle_guest.S) and the turns, and nothing of the turns without an end mark?"""
    final = run_loop_guest("idle", elf="idle-guest.elf")[-1]
    assert final.spins == built["idle"]
    assert final.idle == 7 * built["idle"]
    assert final.total > final.idle + 4 * built["work"]


def test_idle_turns_marked_back_to_back_are_idle_from_first_begin_to_last_end(built):
    """libnom's idle loop ends a turn and begins the next with adjacent marks (sched.c), so that
    the loop's own instructions between turns are idle too: does the plugin count every
    instruction from the first begin mark to the last end mark (10 x IDLE - 1 in
    tests/idle_b2b_guest.S), once, in IDLE spins?"""
    final = run_loop_guest("idle-b2b", elf="idle-b2b-guest.elf")[-1]
    assert final.spins == built["idle"]
    assert final.idle == 10 * built["idle"] - 1


def test_missing_plugin_is_reported(tmp_path):
    counter = vmcounters.InsnCounter(str(tmp_path), plugin=str(tmp_path / "none.so"))
    with pytest.raises(FileNotFoundError):
        counter.qemu_args()


def test_profile_puts_the_loop_in_start_and_sums_to_the_count(built):
    """Does the profile account for every counted instruction, and attribute the loop's
    2 x LOOPS instructions to the guest's _start?"""
    rows = []
    samples = run_loop_guest("large", profile=rows)
    assert sum(n * execs for _, n, execs, _ in rows) == samples[-1].total
    assert sum(idle for *_, idle in rows) == 0  # the loop guest has no idle marks
    totals = guestprofile.by_function(rows, guestprofile.Symbols([os.path.join(OUT, "loop-large.elf")]))
    assert totals.most_common(1)[0][0] == "_start"
    assert abs(totals["_start"] - 2 * built["large"]) < 100
    assert totals[guestprofile.BELOW_SYMBOLS] > 0  # the firmware ran below the guest at 1 MiB
    part, frac = guestprofile.share(totals, r"^_start$")
    assert part == totals["_start"] and 0.9 < frac < 1.0


def test_profile_tells_idle_turns_from_work(built):
    """Does the profile count as idle the blocks begun inside the turns that reached their end
    mark, and none of the turns that found work (no end mark)? An idle turn of idle_guest.S is
    two blocks: the begin mark's (begin, nop, nop, jmp) counts as work, the next (nop, nop,
    end, dec, jnz) as idle; insn_count.c says why."""
    rows = []
    final = run_loop_guest("idle", elf="idle-guest.elf", profile=rows)[-1]
    assert sum(n * idle for _, n, _, idle in rows) == 5 * built["idle"]
    assert sum(n * execs for _, n, execs, _ in rows) == final.total
