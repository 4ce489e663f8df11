"""tools/grub: the GRUB every image boots with is built from Debian's grub2 source with our
patches (build.sh); without its source package the build names the fix; Debian's unpatched
GRUB still boots the same image, which tools/bench/boot_time.py compares it with."""
import os
import subprocess

import pytest

from nomvm import boot_apps
from nomvm.image import DEBIAN_GRUB_PC_DIR, GRUB_PC_DIR, make_iso
from nomvm.paths import BUILD, KERNEL, TOP

BUILD_SH = os.path.join(TOP, "tools", "grub", "build.sh")
HELLO = os.path.join(BUILD, "apps", "tests", "kernel", "hello.elf")


@pytest.mark.unit
def test_build_without_the_grub2_source_package_names_the_fix(tmp_path):
    r = subprocess.run([BUILD_SH], capture_output=True, text=True,
                       env=dict(os.environ, BUILD=str(tmp_path), GRUB_CACHE=str(tmp_path / "c")),
                       timeout=60)
    assert r.returncode != 0
    assert "missing Debian source package grub2" in r.stderr and "tools/bootstrap.sh" in r.stderr


@pytest.mark.unit
def test_an_image_wants_a_directory_holding_grub(tmp_path):
    with pytest.raises(FileNotFoundError, match="make grub"):
        make_iso(KERNEL, [], str(tmp_path / "a.iso"), grub_dir=str(tmp_path))


@pytest.mark.boot
@pytest.mark.parametrize("grub_dir", [GRUB_PC_DIR, DEBIAN_GRUB_PC_DIR], ids=["ours", "debian"])
def test_either_grub_boots_the_kernel_with_its_modules(grub_dir):
    r = boot_apps([(HELLO, "GREETING=hi hello one")], grub_dir=grub_dir)
    assert r.all_apps_ok, r.log
    assert "hello: argv[1]=one" in r.log and "hello: env GREETING=hi" in r.log
