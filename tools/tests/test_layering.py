"""The layering rule (DESIGN.md: kernel <- libnom <- drivers <- net <- apps, tools/ beside)
as a test, through tools/layering.py: does the tree keep it, and does the check really catch
guest code that includes from a layer above or from tools/ (planted in a scratch tree)?"""
import subprocess
import sys
from pathlib import Path

import pytest

import layering

pytestmark = pytest.mark.unit

TOP = Path(__file__).resolve().parents[2]


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def scratch_tree(root):
    """A tree with one header per layer and tools/, and nothing that breaks the rule."""
    write(root, "kernel/include/nom/abi.h", "#define NOM_ABI 1\n")
    write(root, "libnom/include/nom/sched.h", "#include <nom/abi.h>\n")
    write(root, "libnom/include/stdio.h", "/* libnom's, for the guest */\n")
    write(root, "drivers/virtio-net/virtio_net.h", "#include <nom/sched.h>\n")
    write(root, "net/include/nom/net.h", '#include "virtio_net.h"\n')
    write(root, "apps/rawecho/proto.h", "#include <nom/net.h>\n")
    write(root, "tools/fuzz/expect.h", "#define EXPECT(c) (c)\n")
    write(root, "libnom/Makefile",
          "CFLAGS := -I$(TOP)/libnom/include -isystem $(TOP)/kernel/include\n")
    write(root, "kernel/tests/host/test_x.c", "#include <stdio.h>\n")  # glibc's, on the host
    write(root, "drivers/fuzz/fuzz_x.c", '#include "../../tools/fuzz/expect.h"\n')


def test_tree_keeps_the_layering():
    """No guest source or Makefile of this repository includes from above or from tools/."""
    assert layering.violations(str(TOP)) == []


def test_clean_scratch_tree_passes(tmp_path):
    """Downward includes, glibc headers in host tests and tools/ in fuzz harnesses are fine."""
    scratch_tree(tmp_path)
    assert layering.violations(str(tmp_path)) == []


def test_planted_violations_are_named_by_file_and_line(tmp_path):
    """Each planted crossing is reported with its file and line: a layer above through the
    search path (<nom/net.h> in libnom), one through a relative path (drivers reaching into
    apps), tools/ from guest code, and a Makefile putting net's headers on libnom's path."""
    scratch_tree(tmp_path)
    write(tmp_path, "libnom/src/price.c", "#include <errno.h>\n\n#include <nom/net.h>\n")
    write(tmp_path, "drivers/tests/guest/smoke.c", '#include "../../../apps/rawecho/proto.h"\n')
    write(tmp_path, "net/sock.c", '/* x */\n#include "../tools/fuzz/expect.h"\n')
    write(tmp_path, "kernel/main.S", "#include <stdio.h>\n")
    write(tmp_path, "libnom/tests/Makefile",
          "X := $(TOP)/net\nCFLAGS := -I. \\\n  -isystem $(X)/include\n")
    found = layering.violations(str(tmp_path))
    assert any(v.startswith("libnom/src/price.c:3:") and "net/ above libnom/" in v for v in found)
    assert any(v.startswith("drivers/tests/guest/smoke.c:1:") and "apps/ above drivers/" in v
               for v in found)
    assert any(v.startswith("net/sock.c:2:") and "tools/" in v for v in found)
    assert any(v.startswith("kernel/main.S:1:") and "libnom/ above kernel/" in v for v in found)
    assert any(v.startswith("libnom/tests/Makefile:3:") and "net/ above libnom/" in v
               for v in found)
    assert len(found) == 5, found


def test_command_line_exit_status(tmp_path):
    """`python3 tools/layering.py ROOT` prints the violations and exits 1, 0 when clean."""
    scratch_tree(tmp_path)
    script = str(TOP / "tools" / "layering.py")
    clean = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True,
                           text=True)
    assert clean.returncode == 0 and clean.stdout == ""
    write(tmp_path, "kernel/x.c", "#include <nom/sched.h>\n")
    bad = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stdout.startswith("kernel/x.c:1: ")
