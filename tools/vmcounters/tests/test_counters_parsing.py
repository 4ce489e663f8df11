"""Do the counter readers parse what QEMU, /proc and QMP give them?"""
import json
import os
import socket
import threading

import pytest

import vmcounters

pytestmark = pytest.mark.unit


def test_insn_file_lines_parse_and_bad_sums_are_rejected():
    s = vmcounters.parse_insn_file("10 30 2 10 20\nfinal 20 31 2 11 20\n")
    assert [x.total for x in s] == [30, 31] and s[1].final and s[0].per_vcpu == [10, 20]
    with pytest.raises(ValueError):
        vmcounters.parse_insn_file("10 31 2 10 20\n")


def test_insn_file_idle_figures_parse_and_older_lines_mean_none():
    new, old = vmcounters.parse_insn_file("10 30 2 10 20 7 3\n20 31 2 11 20\n")
    assert (new.idle, new.spins, new.total) == (7, 3, 30) and (old.idle, old.spins) == (0, 0)
    with pytest.raises(ValueError):
        vmcounters.parse_insn_file("10 30 2 10 20 7\n")


def test_per_request_takes_idle_polling_out_of_work():
    a = {"mono_ns": 0, "trace": {}, "insns": 1000, "idle_insns": 100, "idle_spins": 1}
    b = {"mono_ns": 10**9, "trace": {}, "insns": 5000, "idle_insns": 1100, "idle_spins": 11}
    r = vmcounters.per_request(a, b, 10)
    assert (r["insns_per_req"], r["idle_insns_per_req"], r["work_insns_per_req"],
            r["idle_spins_per_req"]) == (400, 100, 300, 1)


def test_trace_lines_are_counted_by_event_name():
    lines = [b"virtio_queue_notify vdev 0x55 n 0 vq 0x56",  # first line, no timestamp
             b"1234@1700000000.000001:virtio_queue_notify vdev 0x55 n 1 vq 0x56",
             b"1234@1700000000.000002:virtio_notify vdev 0x55 vq 0x56",
             b"virtio_notify_irqfd vdev 0x55 vq 0x56",
             b"1234@1700000000.000003:virtio_queue_notify_vq other",
             b"1234@1700000000.000004:apic_deliver_irq dest 0 ..."]
    c = vmcounters.count_trace_events(b"\n".join(lines) + b"\n")
    assert c == {"virtio_queue_notify": 2, "virtio_notify": 1, "virtio_notify_irqfd": 1,
                 "apic_deliver_irq": 1}
    assert vmcounters.notifications(c) == 2 and vmcounters.interrupts(c) == 2


def test_trace_counter_counts_lines_split_across_reads(tmp_path):
    t = vmcounters.TraceCounter(str(tmp_path)).start()
    line = b"99@1.000001:virtio_notify vdev 0x1 vq 0x2\n"
    blob = line * 20000  # 860 kB, written in 1000-byte pieces: lines cut anywhere
    with open(t.fifo, "wb", buffering=0) as w:
        for i in range(0, len(blob), 1000):
            w.write(blob[i:i + 1000])
    assert t.stop()["virtio_notify"] == 20000


def test_task_stat_with_spaces_in_the_name():
    line = ("4242 (CPU 0/TCG) R 1 2 3 0 -1 4194368 10 0 0 0 150 25 0 0 20 0 4 0 100 "
            "1000 100 18446744073709551615")
    assert vmcounters.read_task_stat(line) == ("CPU 0/TCG", 175)


def test_utilization_of_two_samples():
    tck = vmcounters.threads.CLK_TCK
    a = {"mono_ns": 0, "threads": {"CPU 0/TCG": 0}}
    b = {"mono_ns": 2_000_000_000, "threads": {"CPU 0/TCG": tck}}
    assert vmcounters.utilization(a, b) == {"CPU 0/TCG": 0.5}


def test_vcpu_threads_of_this_process_are_none():
    assert vmcounters.sample_vcpu_threads(os.getpid())["threads"] == {}


def test_per_request_figures():
    a = {"mono_ns": 0, "insns": 1000, "threads": None,
         "trace": {"virtio_queue_notify": 10, "virtio_notify": 5}}
    b = {"mono_ns": 10**9, "insns": 11000, "threads": None,
         "trace": {"virtio_queue_notify": 30, "virtio_notify": 15}}
    f = vmcounters.per_request(a, b, 10)
    assert f["insns_per_req"] == 1000 and f["notifies_per_req"] == 2
    assert f["irqs_per_req"] == 1 and f["exit_equiv_per_req"] == 3 and f["seconds"] == 1


def test_trace_counter_reads_a_fifo_writer(tmp_path):
    t = vmcounters.TraceCounter(str(tmp_path)).start()
    with open(t.fifo, "w") as w:
        w.write("1@1.0:virtio_queue_notify x\n" * 3 + "1@1.0:virtio_notify y\n")
    snap = t.stop()
    assert snap["virtio_queue_notify"] == 3 and snap["virtio_notify"] == 1


def test_trace_counter_stops_when_qemu_never_opened(tmp_path):
    t = vmcounters.TraceCounter(str(tmp_path)).start()
    assert t.stop()["virtio_queue_notify"] == 0


def fake_qmp_server(path, reply):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        f = conn.makefile("rw")
        f.write(json.dumps({"QMP": {"version": {}, "capabilities": []}}) + "\n")
        f.flush()
        for line in f:
            cmd = json.loads(line)["execute"]
            out = {"return": {}} if cmd == "qmp_capabilities" else {"return": reply}
            f.write(json.dumps({"event": "NOISE"}) + "\n" + json.dumps(out) + "\n")
            f.flush()
        conn.close()
        srv.close()
    threading.Thread(target=serve, daemon=True).start()


def test_kvm_stats_are_summed_over_vcpus(tmp_path):
    reply = [{"provider": "kvm", "qom-path": "/machine/unattached/device[0]",
              "stats": [{"name": "exits", "value": 100}, {"name": "irq_injections", "value": 7},
                        {"name": "halt_poll_success_hist", "value": [1, 2]}]},
             {"provider": "kvm", "qom-path": "/machine/unattached/device[1]",
              "stats": [{"name": "exits", "value": 50}]}]
    path = str(tmp_path / "qmp.sock")
    # QEMU creates its socket a moment after it starts: the client waits for it
    threading.Timer(0.3, fake_qmp_server, (path, reply)).start()
    qmp = vmcounters.Qmp(path)
    try:
        assert vmcounters.read_kvm_stats(qmp) == {"exits": 150, "irq_injections": 7}
    finally:
        qmp.close()


def test_under_kvm_exits_come_from_kvm_not_the_trace():
    a = {"mono_ns": 0, "insns": None, "threads": None, "accel": "kvm",
         "trace": {"virtio_queue_notify": 0, "virtio_notify": 5}, "kvm": {"exits": 100}}
    b = {"mono_ns": 10**9, "insns": None, "threads": None, "accel": "kvm",
         "trace": {"virtio_queue_notify": 0, "virtio_notify": 15},
         "kvm": {"exits": 400, "irq_injections": 20}}
    f = vmcounters.per_request(a, b, 10)
    assert f["notifies_per_req"] is None and f["exit_equiv_per_req"] is None
    assert f["irqs_per_req"] == 1 and f["kvm_exits_per_req"] == 30
    assert f["kvm_injections_per_req"] == 2 and f["insns_per_req"] is None


def test_profile_difference_keeps_only_what_ran_between():
    """Does the difference of two profile snapshots count each block's executions between
    them, including blocks translated in between, and drop blocks that did not run?"""
    from vmcounters import guestprofile
    earlier = guestprofile.parse_profile("1000 4 10 2\n2000 2 5 0\n")
    later = guestprofile.parse_profile("1000 4 25 3\n2000 2 5 0\n3000 3 7 7\n1000 4 1 0\n")
    assert sorted(guestprofile.difference(later, earlier)) == [(0x1000, 4, 16, 1),
                                                               (0x3000, 3, 7, 7)]
    with pytest.raises(ValueError):
        guestprofile.parse_profile("1000 4\n")


def test_profile_of_three_columns_reads_as_all_work():
    """Profiles written before the plugin told idle executions apart (three columns, as in
    the committed results) still read: none of their executions is idle."""
    from vmcounters import guestprofile
    assert guestprofile.parse_profile("1000 4 10\n") == [(0x1000, 4, 10, 0)]


def test_profile_by_function_splits_work_from_idle_polling():
    from vmcounters import guestprofile

    class TwoFunctions:
        def name_of(self, vaddr):
            return "poll" if vaddr < 0x2000 else "serve"
    rows = guestprofile.parse_profile("1000 4 10 6\n1800 2 3 3\n2000 5 2 0\n")
    parts = {p: guestprofile.by_function(rows, TwoFunctions(), p) for p in guestprofile.PARTS}
    assert parts["all"] == {"poll": 46, "serve": 10}
    assert parts["idle"] == {"poll": 30, "serve": 0}
    assert parts["work"] == {"poll": 16, "serve": 10}
