"""Does `python3 -m dashboard` behave like the other tools: --help only prints, a bad flag exits
2 saying what is wrong?"""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit


def run(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "dashboard", *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)


def test_help_only_prints(tmp_path):
    r = run(tmp_path, "--help")
    assert r.returncode == 0 and "--port" in r.stdout and "--boot" in r.stdout
    assert list(tmp_path.iterdir()) == []


def test_unknown_flag_exits_2(tmp_path):
    r = run(tmp_path, "--no-such-flag")
    assert r.returncode == 2 and "--no-such-flag" in r.stderr


def test_schedule_without_boot_exits_2(tmp_path):
    r = run(tmp_path, "--schedule", "0:1, 60:10")
    assert r.returncode == 2 and "--schedule needs --boot" in r.stderr


def test_bad_port_exits_2(tmp_path):
    r = run(tmp_path, "--port", "70000")
    assert r.returncode == 2 and "--port must be" in r.stderr
