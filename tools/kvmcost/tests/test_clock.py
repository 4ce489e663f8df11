"""Does the dilated guest clock (patches/0003, -kvmcost ...,dilation=D) make a charged exit cost
its cost in the guest's time, and do the guest's clocks agree with each other?

The exit guest's clock check (exit_guest.c, CLOCK) reads its TSC over 10 ms of the PIT and of
the LAPIC timer (both on QEMU's virtual clock) and over CLOCK_KICKS kicks, each charged KICK_NS
(every other kind costs 0 here, so the PIT and LAPIC reads cost nothing). With the clock
dilated the kicks take about CLOCK_KICKS x KICK_NS of guest time; with clock=wall about D times
that. Only ratios of the guest's own clocks are asserted, with bounds far from both outcomes
(a preempted vCPU thread lengthens what it measures by wall time / D at most: the PIT's 10 ms,
which gives the TSC rate, too, hence the low bound 0.7); no timing of the machine."""
import struct
import time

import pytest

import kvmcost
from kvmcost import dilation as dil
from vmcounters import kvmstats

pytestmark = pytest.mark.boot

CLOCK_KICKS = 10
KICK_NS = 5_000_000
D = 8.0
PAUSE_S = 2.0


@pytest.fixture
def kick_costs(tmp_path):
    path = tmp_path / "kick-only.conf"
    path.write_text("".join(f"{k} = {KICK_NS if k == 'kick' else 0}\n" for k in kvmcost.COST_KINDS))
    return str(path)


def clock_check(run_exit_guest, cost_file, clock, **run_args):
    run = run_exit_guest("CLOCK", cost_file, dilation=D, clock=clock, **run_args)
    assert run.status == 1, f"guest exit code {run.status >> 1} (exit_guest.c)\n{run.stderr}"
    pit, lapic, kicks, waited = struct.unpack("<4Q", run.symbol("clock_ticks", 32))
    charged = kvmcost.difference(run.before, run.after)["kick"]
    assert charged == {"count": CLOCK_KICKS, "ns": CLOCK_KICKS * KICK_NS,
                       "stall_ns": int(CLOCK_KICKS * KICK_NS * D)}
    assert run.after["clock"] == clock and run.after["dilation"] == D
    tsc_per_ns = pit / 10e6  # the guest's TSC rate, measured as an OS would: against the PIT
    return {"pit": pit, "lapic": lapic, "ledger": run.after,
            "guest_ns": run.after["guest_ns"] - run.before["guest_ns"],
            "window_d": kvmcost.window_dilation(run.before, run.after),
            "kicks_over_cost": kicks / tsc_per_ns / (CLOCK_KICKS * KICK_NS),
            "waited_s": waited / tsc_per_ns / 1e9}


def test_with_the_dilated_clock_a_charged_exit_takes_its_cost_of_guest_time(run_exit_guest,
                                                                           kick_costs):
    got = clock_check(run_exit_guest, kick_costs, "dilated")
    # Stalled KICK_NS x D wall each = KICK_NS of guest time; with the wall clock it would be D.
    assert 0.7 <= got["kicks_over_cost"] <= 3.0, got
    # The ledgers' guest clock (patches/0011) ran at 1/D of their wall clock, stalls and all.
    assert got["window_d"] == pytest.approx(D, rel=0.01), got
    # The TSC and the virtual clock are dilated alike: the LAPIC timer agrees with the PIT,
    # and an OS calibrating its TSC against the PIT finds the host's clock rate (a guest
    # second holds as many TSC ticks as a host second; it just lasts D times longer).
    assert 0.8 <= got["lapic"] / got["pit"] <= 1.25, got
    host_hz = dil.host_clock_hz()
    if host_hz:
        assert 0.5 <= got["pit"] / (host_hz / 100) <= 2.0, (got, host_hz)


def test_with_the_cpu_clock_a_charged_exit_takes_its_cost_of_guest_time(run_exit_guest,
                                                                       kick_costs):
    """clock=cpu (patches/0009): the same source scaled by D, but the vCPU thread's CPU time
    while it runs; a stall spins on that CPU time, so it is still its cost of guest time, and
    the TSC (the host TSC's rate over the source) agrees with the PIT and the LAPIC timer."""
    got = clock_check(run_exit_guest, kick_costs, "cpu")
    assert 0.7 <= got["kicks_over_cost"] <= 3.0, got
    assert 0.8 <= got["lapic"] / got["pit"] <= 1.25, got
    host_hz = dil.host_clock_hz()
    if host_hz:
        assert 0.5 <= got["pit"] / (host_hz / 100) <= 2.0, (got, host_hz)


@pytest.mark.parametrize("insn_ps", [None, 385], ids=["1ns", "385ps"])
def test_with_the_instruction_clock_a_charged_exit_takes_exactly_its_cost_of_guest_time(
        run_exit_guest, kick_costs, insn_ps):
    """clock=insn (patches/0010, QEMU's icount at 1 ns per instruction): the guest's time is
    its instructions plus each charged cost, so nothing the host does shows in it while the
    guest runs. The PIT, the LAPIC timer and the TSC count the same instructions: the PIT's
    10 ms is 10^7 TSC ticks (a 1 GHz TSC), and the kicks take their cost plus the few hundred
    instructions of the loop around them, whatever the stalls took in wall time."""
    got = clock_check(run_exit_guest, kick_costs, "insn", insn_ps=insn_ps)
    assert 0.999 <= got["kicks_over_cost"] <= 1.01, got
    assert 0.99 <= got["lapic"] / got["pit"] <= 1.01, got
    assert 0.99e7 <= got["pit"] <= 1.01e7, got
    assert got["ledger"]["insn_ps"] == (insn_ps or 1000), got
    # The ledgers' guest clock holds the charges (they are guest time, not wall time x 1/D):
    # at least the kicks' cost passed in it between READY and the end.
    assert got["guest_ns"] >= CLOCK_KICKS * KICK_NS, got


def test_with_the_wall_clock_the_guest_sees_each_charge_dilated(run_exit_guest, kick_costs):
    got = clock_check(run_exit_guest, kick_costs, "wall")
    assert got["kicks_over_cost"] >= D / 2, got
    assert got["window_d"] == pytest.approx(1.0, rel=0.01), got
    assert 0.8 <= got["lapic"] / got["pit"] <= 1.25, got


def test_a_stopped_vm_s_dilated_clock_pauses_and_resumes_without_a_jump(run_exit_guest,
                                                                       kick_costs, tmp_path):
    """QMP stop, PAUSE_S, cont between the guest's READY and the host's word: the guest's
    clock (cpu_disable_ticks/cpu_enable_ticks, offsets in guest units) must leave the pause out
    and go on where it stopped. Checked: the guest's time from READY to the word, times D, is
    less than the host's wall time over the same span less half the pause (were the pause
    counted, or a jump made at cont, it would be more)."""
    qmp_path = str(tmp_path / "qmp.sock")
    span = {}

    def pause(ready_seen):
        qmp = kvmstats.Qmp(qmp_path)
        try:
            qmp.execute("stop")
            time.sleep(PAUSE_S)
            qmp.execute("cont")
        finally:
            qmp.close()
        span["wall_s"] = time.monotonic() - ready_seen

    got = clock_check(run_exit_guest, kick_costs, "dilated", before_word=pause,
                      extra=kvmstats.qmp_args(qmp_path))
    assert 0 < got["waited_s"] * D < span["wall_s"] - PAUSE_S / 2, (got, span)
    assert 0.7 <= got["kicks_over_cost"] <= 3.0, got  # and it runs on as before


def test_a_linux_guest_calibrates_its_tsc_at_the_host_rate_on_the_dilated_clock(kvmcost_qemu,
                                                                               tmp_path):
    """Linux calibrates its TSC against the PIT at boot ("tsc: Detected N MHz"): with both
    dilated alike it finds the host's rate (were only the virtual clock dilated it would find
    D times that; only the TSC, 1/D), and it boots to its ready line on the dilated clock."""
    linuxguest = pytest.importorskip("linuxguest")
    from nomvm import Nic
    try:
        linuxguest.build()
    except linuxguest.BuildError as e:
        pytest.skip(f"the Linux guest cannot be built: {e}")
    host_hz = dil.host_clock_hz()
    if not host_hz:
        pytest.skip("no cpu MHz in /proc/cpuinfo")
    extra = kvmcost.args_for(kvmcost.SKYLAKE, str(tmp_path / "ledger.json"), dilation=D)
    vm = linuxguest.make_vm(["memcached"], Nic(mac="52:54:00:12:34:56", backend="none"),
                            extra_args=extra, workdir=str(tmp_path), accel="tcg")
    vm.args[0] = kvmcost.qemu_binary()
    append = vm.args.index("-append") + 1
    vm.args[append] += " loglevel=7"  # "tsc: Detected" is KERN_INFO
    with vm:
        linuxguest.wait_ready(vm, 600)
        m = vm.wait_for(r"tsc: Detected ([\d.]+) MHz", 10)
    assert 0.8 <= float(m.group(1)) * 1e6 / host_hz <= 1.25, (m.group(0), host_hz)
    assert kvmcost.read_ledger(tmp_path / "ledger.json")["clock"] == "dilated"
