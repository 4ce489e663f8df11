"""Fixtures shared by tests in more than one top-level folder (pytest.ini's testpaths), and the
import path of the tools the tests start as programs."""
import os

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
