"""Fixtures shared by tests in more than one top-level folder (pytest.ini's testpaths), the
import path of the tools the tests start as programs, and the test markers' rules: every test
carries exactly one of unit, boot, slow (pytest.ini), and a unit test never starts QEMU."""
import os
import subprocess

import pytest

import netlab

# Programs the tests start (`python3 tools/x/y.py`, `python3 -c ...`) import this tree's tools,
# as the tests themselves do (pytest.ini's pythonpath), whatever checkout bootstrap registered.
TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [TOOLS] + [p for p in [os.environ.get("PYTHONPATH")] if p])


@pytest.fixture
def lab():
    """A network namespace with a tap (tools/netlab); skipped only where none can be made."""
    lab = netlab.NetLab()
    try:
        lab.__enter__()
    except netlab.NetLabError as e:
        pytest.skip(f"no network namespace here: {e}")
    yield lab
    lab.__exit__(None, None, None)


MARKERS = ("unit", "boot", "slow")
UNMARKED = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Records every collected test whose markers are not exactly one of MARKERS, before -m
    deselects anything; tools/tests/test_markers.py reports them."""
    config.stash[UNMARKED] = [
        f"{item.nodeid}: {names or 'none'}" for item in items
        if len(names := [m.name for m in item.iter_markers() if m.name in MARKERS]) != 1]


def unmarked_tests(config):
    return config.stash.get(UNMARKED, [])


@pytest.fixture(autouse=True)
def _unit_tests_start_no_qemu(request, monkeypatch):
    """A test marked unit that starts QEMU (nomvm.VM, a guest tool, `ip netns exec qemu-...`)
    fails at once, saying so: it belongs under boot."""
    if request.node.get_closest_marker("unit") is None:
        return
    popen_init = subprocess.Popen.__init__

    def refuse_qemu(self, args, *rest, **kwargs):
        words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        if any("qemu-system" in str(w) for w in words):
            raise AssertionError(f"a unit test started QEMU ({words}): mark it boot")
        popen_init(self, args, *rest, **kwargs)
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse_qemu)
