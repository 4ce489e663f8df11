"""Do the host tools and the tests find each other through the one import path, tools/ (put on
Python's path by bootstrap's nom-tools.pth, pytest.ini's pythonpath and the top Makefile),
never by editing sys.path, and does a tool run directly, from anywhere, find its imports?"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TOP = Path(__file__).resolve().parents[2]
FOLDERS = ("kernel", "libnom", "drivers", "net", "apps", "tools")  # pytest.ini's testpaths
PATH_EDIT = re.compile(r"\bsys\.path\s*(\.(insert|append|extend)\s*\(|\[[^\]]*\]\s*=|\+=)")


def test_no_file_edits_sys_path():
    edits = [f"{path.relative_to(TOP)}:{n}: {line.strip()}"
             for folder in FOLDERS for path in sorted((TOP / folder).rglob("*.py"))
             if path != Path(__file__).resolve()  # its examples below
             and path != TOP / "tools" / "nom_tools_site.py"  # the one place that does it
             for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
             if PATH_EDIT.search(line)]
    assert not edits, "import through tools/ instead (tools/README.md):\n" + "\n".join(edits)


def test_the_check_sees_each_kind_of_edit():
    for line in ("sys.path.insert(0, HERE)", "sys.path[:0] = [a, b]", "sys.path.append(x)",
                 "sys.path += [x]"):
        assert PATH_EDIT.search(line), line
    assert not PATH_EDIT.search("print(sys.path)")


def test_a_tool_run_directly_from_elsewhere_finds_tools():
    """Without PYTHONPATH (as a user types it), only bootstrap's nom-tools.pth puts tools/ on
    the path; rerun tools/bootstrap.sh if this fails."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(TOP / "tools" / "bench" / "run.py"), "--help"],
                       capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("usage:"), r.stderr[-2000:]


def test_a_tool_run_directly_imports_its_own_checkout(tmp_path):
    """A second checkout's script, run from elsewhere, imports that checkout's packages, not
    the bootstrapped one's (nom_tools_site.py; rerun tools/bootstrap.sh if this fails)."""
    other = tmp_path / "other-checkout" / "tools"
    (other / "nomvm").mkdir(parents=True)
    (other / "nomvm" / "__init__.py").write_text("")
    (other / "probe.py").write_text("import nomvm\nprint(nomvm.__file__)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(other / "probe.py")], capture_output=True,
                       text=True, env=env, cwd="/", timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == str(other / "nomvm" / "__init__.py"), \
        r.stdout + r.stderr[-2000:]
