"""Host ports on 127.0.0.1 for guests and host servers: one that is free now."""
import socket


def free_port(kind=socket.SOCK_STREAM):
    """A port free on 127.0.0.1 now (TCP, or UDP with kind=socket.SOCK_DGRAM), for QEMU's
    hostfwd or a server on the host. Another process may take it before it is bound again:
    good enough for tests and tools that start at once."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
