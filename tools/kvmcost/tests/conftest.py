"""The exit guest (exit_guest.c), built once for the tests that boot it."""
import os
import subprocess

import pytest

import kvmcost


@pytest.fixture(scope="session")
def guest():
    subprocess.run(["make", "-s", "-C", kvmcost.HERE], check=True,
                   env=dict(os.environ, TOP=kvmcost.TOP, BUILD=kvmcost.BUILD))
    return os.path.join(kvmcost.BUILD, "kvmcost", "exit-guest.elf")
