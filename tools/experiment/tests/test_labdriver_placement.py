"""A lab guest asked to run pinned (LabDriver.pin_vcpu) on a host that cannot give its vCPU a
CPU of its own fails at once, with the reason, before it calibrates or boots anything."""
import pytest

from experiment.driver import GuestError
from experiment.labdriver import LabDriver
from nomvm import placement

pytestmark = pytest.mark.unit


def test_a_pinned_guest_on_one_host_cpu_is_refused_before_anything_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(placement, "HOST_CPUS", [0])
    confined = []
    monkeypatch.setattr(placement, "confine_self", confined.append)
    driver = LabDriver("tcg")
    driver.pin_vcpu = True
    with pytest.raises(GuestError, match="1 host CPU.*cannot give 1 vCPU"):
        driver.start("memcached", {"name": "w=0"}, str(tmp_path))
    assert confined == [] and driver.lab is None and driver.vm is None


def test_an_unpinned_guest_leaves_the_harness_where_it_is(monkeypatch):
    confined = []
    monkeypatch.setattr(placement, "confine_self", confined.append)
    assert LabDriver("tcg")._confine_harness() is None and confined == []
