"""Host ports on 127.0.0.1 for guests and host servers: one that is free now."""
import random
import socket


def free_port(kind=socket.SOCK_STREAM):
    """A port free on 127.0.0.1 now (TCP, or UDP with kind=socket.SOCK_DGRAM), for QEMU's
    hostfwd or a server on the host. Another process may take it before it is bound again:
    good enough for tests and tools that start at once."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Linux hands out client ports from 32768 up (net.ipv4.ip_local_port_range): a listening port
# chosen there can be taken by any outgoing connection between the check and QEMU's bind (a CI
# run lost `make run`'s test that way). Shifted ports stay below it.
EPHEMERAL_LOW = 32768


def free_port_shift(ports, low=10000, high=None, tries=100):
    """A shift s in [low, high) under which every port + s is free on 127.0.0.1 now (TCP), for
    tools that move a set of ports together (`make run`'s --port-shift); RuntimeError if none of
    `tries` random shifts is. high defaults to keeping every port below EPHEMERAL_LOW. Not
    reserved, as free_port."""
    if high is None:
        high = EPHEMERAL_LOW - max(ports)
    for _ in range(tries):
        shift = random.randrange(low, high)
        if all(_bindable(p + shift) for p in ports):
            return shift
    raise RuntimeError(f"no shift in [{low}, {high}) frees ports {sorted(ports)}")


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False
