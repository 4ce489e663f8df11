"""tools/bench/stack_count.py: the network stack's instructions per round trip on the host
(net/bench/pingpong.c under callgrind). No guest is booted."""
import os
import subprocess
import sys

import pytest

from bench import stack_count

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """Two counts of NetPIPE's 1 KiB ping-pong, 300 and 600 round trips."""
    stack_count.build()
    out = {}
    for rounds in (300, 600):
        folder = tmp_path_factory.mktemp(f"count{rounds}")
        funcs = stack_count.count(rounds, 50, 1024, 1024, str(folder / "callgrind.out"))
        out[rounds] = stack_count.summarize(funcs, rounds)
    return out


def test_a_round_trip_costs_the_same_however_many_are_counted(counted):
    """The count is of the rounds alone (not set-up, warm-up or close): twice the round trips
    give the same lwIP and copy instructions per round trip, within lwIP's wall-clock timers'
    share. Not the whole stack's figure: the driving loop, the socket layer's waits and the
    fakes run their idle path once more whenever the next request has not arrived yet, which
    the peer's timing decides (a loaded host moved it 4 %, stack_count.py says)."""
    assert 1000 < counted[300]["stack"] < 20000
    for group in ("lwIP", stack_count.COPIES):
        a, b = counted[300]["groups"][group], counted[600]["groups"][group]
        assert abs(a - b) / a < 0.02, (group, a, b)


def test_the_stack_is_split_from_the_fakes_and_copies_by_caller(counted):
    per = counted[600]
    groups = per["groups"]
    stack = sum(groups[g] for g in stack_count.STACK_GROUPS)
    assert per["stack"] == pytest.approx(stack)
    assert per["total"] == pytest.approx(sum(groups.values()))
    for g in stack_count.STACK_GROUPS:
        assert groups[g] > 0, g
    assert groups["fake driver (net/tests/fake, not the guest's)"] > 0
    names = {f["function"]: f["group"] for f in per["top_functions"]}
    assert names["tcp_input"] == "lwIP" and names["tcpsock_recv_nb"] == "net/: socket layer"
    copies = {fn.split(" <- ")[1]: g for fn, g in names.items() if " <- " in fn}
    # 1 KiB each way: the socket layer copies what it receives, lwIP what it is given to send,
    # and the fake driver the frame to its wire (its own group, not the stack's)
    assert copies["tcpsock_recv_nb"] == copies["tcp_write"] == stack_count.COPIES
    driver = [g for caller, g in copies.items() if caller.startswith("vnet_tx_enqueue")]
    assert driver and all(g.startswith("fake driver") for g in driver)


@pytest.mark.parametrize("flags, says", [(["--req", "0"], "--req out of range"),
                                         (["--warmup", "-1"], "--warmup must be >= 0")])
def test_bad_flags_get_a_clear_error(flags, says):
    r = subprocess.run([sys.executable, stack_count.__file__] + flags, capture_output=True,
                       text=True)
    assert r.returncode == 2 and says in r.stderr


def test_pingpong_refuses_a_bad_argument_by_name():
    stack_count.build()
    r = subprocess.run([stack_count.PINGPONG, "server", "3", "many", "0", "1", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "many: not a number" in r.stderr
    r = subprocess.run([stack_count.PINGPONG, "sever"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: pingpong server|client" in r.stderr
