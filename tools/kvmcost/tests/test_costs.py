"""Does a bad cost file (or a missing source package) stop with a message naming the fix, does
QEMU take each shipped cost file as written, and do the Python helpers read what QEMU writes?"""
import json
import os
import subprocess

import pytest

import kvmcost


def file_costs(path):
    """{kind: ns} of a cost file, read the simple way (the test's own oracle)."""
    costs = {}
    for line in open(path):
        line = line.split("#")[0].strip()
        if line:
            name, value = (w.strip() for w in line.split("="))
            costs[name] = int(value)
    return costs


def start_qemu(qemu, tmp_path, cost_text=None, cost_file=None, extra=()):
    """Runs the patched QEMU with a cost file until it stops; (status, stderr)."""
    if cost_file is None:
        cost_file = tmp_path / "costs.conf"
        if cost_text is not None:
            cost_file.write_text(cost_text)
    args = [qemu, "-machine", "q35", "-accel", "tcg", "-m", "32", "-display", "none",
            "-nodefaults", "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            *kvmcost.args_for(str(cost_file), str(tmp_path / "ledger.json")), *extra]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr


GOOD = "".join(f"{k} = {100 + i}\n" for i, k in enumerate(kvmcost.COST_KINDS))


def start_with_option(qemu, tmp_path, option, machine=("-accel", "tcg")):
    """Starts the patched QEMU with GOOD as its cost file and `option` appended to -kvmcost's
    value, on `machine`'s arguments; the finished process (the tests expect it to refuse)."""
    (tmp_path / "costs.conf").write_text(GOOD)
    value = f"costs={tmp_path / 'costs.conf'},ledger={tmp_path / 'ledger.json'},{option}"
    return subprocess.run([qemu, "-machine", "q35", *machine, "-display", "none", "-nodefaults",
                           "-kvmcost", value], capture_output=True, text=True, timeout=120)


@pytest.mark.boot
@pytest.mark.parametrize("text, message", [
    (None, "cannot read the cost file"),
    (GOOD + "kick 5\n", ":13: expected 'KIND = NANOSECONDS'"),
    (GOOD.replace("pio = 102", "pio = -102"), ":3: the cost of pio must be a whole number"),
    (GOOD.replace("hlt = 111", "hlt = 1.5"), ":12: the cost of hlt must be a whole number"),
    (GOOD + "kicks = 5\n", ":13: unknown kind 'kicks'"),
    (GOOD.replace("irq_ipi = 109\n", ""), "no cost for irq_ipi"),
    (GOOD + "kick = 7\n", ":13: a second cost for kick"),
    (GOOD + "dilation = 0\n", ":13: dilation '0' is not a number from 1 to 1000"),
    (GOOD + "hpet = 0\n", ":13: hpet is counted but never charged"),
    (GOOD + "pause = 0\n", ":13: pause is counted but never charged"),
], ids=["missing", "no-equals", "negative", "fraction", "unknown", "absent-kind", "twice",
        "zero-dilation", "hpet-priced", "pause-priced"])
def test_a_bad_cost_file_stops_qemu_at_start_with_the_reason(kvmcost_qemu, tmp_path, text,
                                                              message):
    status, stderr = start_qemu(kvmcost_qemu, tmp_path, text)
    assert status == 1 and message in stderr, stderr
    assert not (tmp_path / "ledger.json").exists()


@pytest.mark.boot
@pytest.mark.parametrize("option, message", [
    ("dilation=0.5", "dilation '0.5' is not a number from 1 to 1000"),
    ("dilation=nan", "dilation 'nan' is not a number from 1 to 1000"),
    ("dilation=", "dilation '' is not a number from 1 to 1000"),
    ("dilation=4x", "dilation '4x' is not a number from 1 to 1000"),
    ("dilation=1001", "dilation '1001' is not a number from 1 to 1000"),
    ("clock=dilated", "clock=dilated needs dilation=D"),
    ("clock=cpu", "clock=cpu needs dilation=D"),
    ("clock=insn", "clock=insn needs dilation=D"),
    ("dilation=4,clock=fast", "clock 'fast' is none of 'dilated', 'cpu', 'insn', 'wall'"),
    ("dilation=4,clock=insn,insn_ps=0", "insn_ps '0' is not a whole number from 1 to 1000000"),
    ("dilation=4,clock=insn,insn_ps=1.5", "insn_ps '1.5' is not a whole number from 1 to 1000000"),
    ("dilation=4,insn_ps=400", "insn_ps is the instruction clock's (clock=insn)"),
], ids=["below-1", "nan", "empty", "junk", "too-large", "clock-without-dilation",
        "cpu-clock-without-dilation", "insn-clock-without-dilation", "bad-clock",
        "insn-ps-zero", "insn-ps-fraction", "insn-ps-without-insn-clock"])
def test_a_bad_dilation_or_clock_option_stops_qemu_with_the_reason(kvmcost_qemu, tmp_path, option,
                                                                   message):
    r = start_with_option(kvmcost_qemu, tmp_path, option)
    assert r.returncode == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "ledger.json").exists()


@pytest.mark.boot
@pytest.mark.parametrize("machine, message", [
    (["-smp", "2"], "clock=cpu follows one vCPU's time"),
    (["-accel", "tcg,thread=single"], "clock=cpu needs multi-threaded TCG"),
], ids=["two-vcpus", "round-robin-tcg"])
def test_the_cpu_clock_refuses_a_machine_whose_vcpu_time_is_not_one_thread_s(kvmcost_qemu, tmp_path,
                                                                             machine, message):
    accel = [] if "-accel" in machine else ["-accel", "tcg"]
    r = start_with_option(kvmcost_qemu, tmp_path, "dilation=4,clock=cpu", [*accel, *machine])
    assert r.returncode == 1 and message in r.stderr, r.stderr


@pytest.mark.boot
def test_the_instruction_clock_without_the_instruction_counter_names_the_option(kvmcost_qemu,
                                                                               tmp_path):
    r = start_with_option(kvmcost_qemu, tmp_path, "dilation=4,clock=insn")
    assert r.returncode == 1 and "-icount shift=0,align=off,sleep=on" in r.stderr, r.stderr


@pytest.mark.boot
@pytest.mark.parametrize("cost_file", list(kvmcost.COST_FILES.values()),
                         ids=list(kvmcost.COST_FILES))
def test_qemu_charges_each_shipped_cost_file_as_written(kvmcost_qemu, guest, tmp_path, cost_file):
    # The guest without a virtio-net device ends at once (code 1): enough to read the ledger.
    status, stderr = start_qemu(kvmcost_qemu, tmp_path, cost_file=cost_file,
                                extra=("-kernel", guest))
    assert status == 3, stderr
    ledger = kvmcost.read_ledger(tmp_path / "ledger.json")
    assert ledger["final"] and ledger["cost_file"] == os.path.abspath(cost_file)
    assert {k: v["cost_ns"] for k, v in ledger["kinds"].items()} == dict(
        file_costs(cost_file), hpet=0, pause=0)


@pytest.mark.boot
def test_the_dilation_option_scales_the_stall_and_not_the_cost(kvmcost_qemu, guest, tmp_path):
    ledger_path = tmp_path / "ledger.json"
    args = [kvmcost_qemu, "-machine", "q35", "-accel", "tcg", "-m", "32", "-display", "none",
            "-nodefaults", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", guest,
            *kvmcost.args_for(kvmcost.SKYLAKE, str(ledger_path), dilation=2.5)]
    assert subprocess.run(args, capture_output=True, timeout=120).returncode == 3
    ledger = kvmcost.read_ledger(ledger_path)
    assert ledger["dilation"] == 2.5 and ledger["clock"] == "dilated"
    pio = ledger["kinds"]["pio"]
    assert pio["count"] > 0 and pio["ns"] == pio["count"] * pio["cost_ns"]
    assert pio["stall_ns"] == pio["count"] * int(pio["cost_ns"] * 2.5 + 0.5)


@pytest.mark.unit
def test_build_without_the_qemu_source_package_names_the_fix(tmp_path):
    r = subprocess.run([os.path.join(kvmcost.HERE, "build.sh")], capture_output=True, text=True,
                       env=dict(os.environ, BUILD=str(tmp_path)), timeout=60)
    assert r.returncode != 0
    assert "missing Debian source package qemu" in r.stderr and "tools/bootstrap.sh" in r.stderr


@pytest.mark.unit
def test_args_for_refuses_a_path_qemu_would_split():
    with pytest.raises(ValueError):
        kvmcost.args_for("/tmp/a,b.conf", "/tmp/ledger.json")
    assert kvmcost.args_for("/c.conf", "/l.json", interval_ms=0, dilation=3) == [
        "-kvmcost", "costs=/c.conf,ledger=/l.json,interval_ms=0,dilation=3.0"]
    assert kvmcost.args_for("/c.conf", "/l.json", dilation=3, clock="wall")[1].endswith(
        ",dilation=3.0,clock=wall")


@pytest.mark.unit
def test_difference_is_per_kind_and_read_ledger_wants_every_kind(tmp_path):
    def ledger(n):
        return {"kinds": {k: {"count": n, "ns": 10 * n, "stall_ns": 20 * n, "cost_ns": 10}
                          for k in kvmcost.KINDS}}
    assert kvmcost.difference(ledger(2), ledger(5))["hlt"] == {"count": 3, "ns": 30,
                                                              "stall_ns": 60}
    partial = ledger(1)
    del partial["kinds"]["hlt"]
    (tmp_path / "l.json").write_text(json.dumps(partial))
    with pytest.raises(ValueError):
        kvmcost.read_ledger(tmp_path / "l.json")


@pytest.mark.unit
def test_the_instruction_clock_brings_qemu_s_instruction_counter():
    args = kvmcost.args_for("/c.conf", "/l.json", dilation=5, clock="insn")
    assert args[:2] == ["-kvmcost", "costs=/c.conf,ledger=/l.json,interval_ms=100,dilation=5.0,clock=insn"]
    assert args[2:] == kvmcost.ICOUNT_ARGS == ["-icount", "shift=0,align=off,sleep=on"]
    assert "-icount" not in kvmcost.args_for("/c.conf", "/l.json", dilation=5, clock="cpu")
    assert kvmcost.args_for("/c.conf", "/l.json", dilation=5, clock="insn", insn_ps=385)[1] \
        .endswith(",clock=insn,insn_ps=385")
    # One instruction a cycle of the host's clock; 1 ns when the clock rate is unknown.
    assert kvmcost.insn_ps(2.6e9) == 385 and kvmcost.insn_ps(0) == 1000


@pytest.mark.unit
def test_a_run_s_counters_hand_qemu_the_instruction_clock_of_its_model(tmp_path, monkeypatch):
    import vmcounters
    monkeypatch.setattr(kvmcost, "qemu_binary", lambda: "/nonexistent/qemu")  # no QEMU started
    setting = kvmcost.model("zero", dilation=5, clock="insn")
    args = vmcounters.RunCounters(str(tmp_path), kvmcost=setting).qemu_args()
    option = args[args.index("-kvmcost") + 1]
    assert option.endswith(f",dilation=5.0,clock=insn,insn_ps={setting['insn_ps']}")
    assert args[args.index("-icount") + 1] == "shift=0,align=off,sleep=on"
