"""Does a load tool that does not end leave its output and say where it stopped?"""
import subprocess

import pytest

from loadgen import runners

pytestmark = pytest.mark.unit


class HungLab:
    """A lab whose tool printed its banner and then never ended (netlab.NetLab.run's timeout)."""

    def run(self, args, timeout=None):
        raise subprocess.TimeoutExpired(args, timeout, output="Now starting the main loop\n",
                                        stderr="")


def test_a_tool_that_does_not_end_keeps_what_it_printed(tmp_path):
    with pytest.raises(runners.LoadError, match="did not end in 90 s") as e:
        runners._run_tool(HungLab(), ["NPtcp", "-s"], 10, str(tmp_path), "nptcp-last.txt")
    assert "Now starting the main loop" in str(e.value)
    assert (tmp_path / "nptcp-last.txt").read_text() == "Now starting the main loop\n"
