"""nomvm.Guest without booting it: does it name what is not built, and forward a distinct free
host port to each guest port it was given (QEMU's -netdev line)? Its boots are the boot
tests' (net/tests/test_net_qemu.py, apps/memcached's, apps/tests/adapt's ...)."""
import socket

import pytest

from nomvm import Guest, free_port

pytestmark = pytest.mark.unit


def test_what_is_not_built_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.elf"):
        Guest([(tmp_path / "absent.elf", "absent")], tmp_path, kernel=tmp_path / "nom.elf")


def test_each_guest_port_gets_its_own_host_port(tmp_path):
    (tmp_path / "nom.elf").write_bytes(b"not booted")
    (tmp_path / "app.elf").write_bytes(b"not booted")
    guest = Guest([(tmp_path / "app.elf", "app")], tmp_path, tcp=[80, 11211], udp=[7],
                  kernel=tmp_path / "nom.elf")
    ports = [guest.host_port(80), guest.host_port(11211), guest.host_port(7, "udp")]
    assert len(set(ports)) == 3
    netdev = guest.vm.args[guest.vm.args.index("-netdev") + 1]
    for host, kind, port in zip(ports, ("tcp", "tcp", "udp"), (80, 11211, 7)):
        assert f"hostfwd={kind}:127.0.0.1:{host}-:{port}" in netdev, netdev


def test_free_port_can_be_bound(tmp_path):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", free_port(kind)))
