"""Does a NetLab set up a private namespace with a tap, and leave nothing behind on every path?"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import netlab

pytestmark = pytest.mark.unit


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of ours counts as gone
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def host_links():
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.count("\n")


def test_tap_has_its_address_inside_the_namespace_only():
    before = host_links()
    with netlab.NetLab() as lab:
        assert lab.ns in netlab.namespaces()
        out = lab.run(["ip", "-o", "addr", "show", "dev", lab.tap]).stdout
        assert f"{lab.host_ip}/24" in out
        assert host_links() == before  # nothing on the host side
    assert lab.ns not in netlab.namespaces()


def test_processes_and_namespace_are_gone_after_normal_exit():
    with netlab.NetLab() as lab:
        proc = lab.popen(["sleep", "300"])
        grandchild = lab.popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE,
                               text=True)
        inner = int(grandchild.stdout.readline())
    assert not alive(proc.pid) and not alive(inner)
    assert lab.ns not in netlab.namespaces()


def test_everything_is_removed_when_a_step_fails():
    with pytest.raises(ZeroDivisionError):
        with netlab.NetLab() as lab:
            proc = lab.popen(["sleep", "300"])
            1 / 0
    assert not alive(proc.pid)
    assert lab.ns not in netlab.namespaces()


def test_a_failing_setup_step_removes_the_namespace(monkeypatch):
    lab = netlab.NetLab()
    monkeypatch.setattr(netlab, "TAP", "x" * 40)  # too long an interface name: ip refuses
    lab.tap = netlab.TAP
    with pytest.raises(netlab.NetLabError):
        with lab:
            pass
    assert lab.ns not in netlab.namespaces()


def test_timeout_kills_the_process():
    with netlab.NetLab() as lab:
        with pytest.raises(subprocess.TimeoutExpired):
            lab.run(["sleep", "300"], timeout=0.5)
        assert lab.procs == [] or all(p.poll() is not None for p in lab.procs)


def test_a_tool_that_does_not_end_keeps_what_it_printed():
    # The experiment's NPtcp session that hung left no line of its own to say where it stopped.
    with netlab.NetLab() as lab:
        with pytest.raises(subprocess.TimeoutExpired) as e:
            lab.run(["sh", "-c", "echo starting the main loop; echo waiting >&2; sleep 300"],
                    timeout=1)
    assert (e.value.output, e.value.stderr) == ("starting the main loop\n", "waiting\n")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_the_tool_removes_everything(tmp_path, sig):
    script = textwrap.dedent(f"""
        import time
        import netlab
        with netlab.NetLab() as lab:
            p = lab.popen(["sleep", "300"])
            print(lab.ns, p.pid, flush=True)
            time.sleep(300)
    """)
    # A tool started from a background job inherits SIGINT ignored, and Python then installs
    # no KeyboardInterrupt handler: give the tool the default disposition a terminal gives.
    tool = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ns, pid = tool.stdout.readline().split()
    assert ns in netlab.namespaces()
    tool.send_signal(sig)
    tool.wait(30)
    deadline = time.monotonic() + 10
    while alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(int(pid))
    assert ns not in netlab.namespaces()


def test_namespace_of_a_killed_tool_is_removed_with_its_processes():
    dead = subprocess.Popen(["true"])
    dead.wait()  # its PID names the namespace of a "tool" that no longer runs
    ns = f"nomlab-{dead.pid}-0"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    orphan = subprocess.Popen(["ip", "netns", "exec", ns, "sleep", "300"],
                              start_new_session=True)
    time.sleep(0.2)
    assert ns in netlab.remove_stale()
    orphan.wait(10)
    assert ns not in netlab.namespaces()


def test_namespaces_of_live_tools_are_left_alone():
    with netlab.NetLab() as lab:
        assert lab.ns not in netlab.remove_stale()
        assert lab.ns in netlab.namespaces()
