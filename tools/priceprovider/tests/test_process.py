"""The provider as another tool's child (priceprovider/process.py): started, seen listening,
answering, stopped by PID; a provider that cannot start is reported with its own words."""
import json
import socket
import subprocess
import urllib.request

import pytest

from nomvm import free_port
from priceprovider import process

pytestmark = pytest.mark.unit


def start(tmp_path, *args, **kwargs):
    log_path = tmp_path / "provider.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(process.command("127.0.0.1", *args, **kwargs),
                                cwd=process.TOOLS, stdout=log, stderr=subprocess.STDOUT)
    return proc, log_path


def test_started_listening_answering_and_stopped(tmp_path):
    port = free_port()
    proc, log_path = start(tmp_path, port, schedule="0:3, 60:7", hold=True)
    try:
        line = process.wait_listening(proc, log_path)
        assert f"127.0.0.1:{port}" in line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/price", timeout=10) as r:
            assert json.load(r)["price"] == 3.0
    finally:
        process.stop(proc)
    assert proc.poll() is not None
    process.stop(proc)  # stopping an ended provider is harmless


def test_a_provider_that_cannot_start_says_why(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc, log_path = start(tmp_path, taken.getsockname()[1])
        try:
            with pytest.raises(process.ProviderDidNotStart) as e:
                process.wait_listening(proc, log_path, timeout_s=30)
        finally:
            process.stop(proc)
    assert str(e.value), "the provider's own explanation"
