"""On nom the server's own stack (lwIP in the application) answers the network: ICMP echo from
the host side of the tap (issue 4). The Linux targets share the host's stack: nothing to ask."""
import subprocess

import pytest

pytestmark = pytest.mark.boot


def test_ping_from_the_host_side_of_the_tap(nhttpd):
    """Does nom's lwIP answer every ping sent from the namespace the fixture created (the test
    process runs inside it), while nhttpd serves?"""
    if nhttpd.target != "nom":
        pytest.skip("only the nom target has a stack of its own to ask")
    r = subprocess.run(["ping", "-c", "10", "-i", "0.2", "-W", "5", nhttpd.host],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and " 0% packet loss" in r.stdout, r.stdout + r.stderr
    assert nhttpd.get("/").status == 200
