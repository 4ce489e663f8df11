"""Fixtures shared by tests in more than one top-level folder (pytest.ini's testpaths)."""
import pytest

import netlab


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
