"""tools/grub: the GRUB every image boots with is built from Debian's grub2 source with our
patches (build.sh); without its source package the build names the fix; Debian's unpatched
GRUB still boots the same image, which tools/bench/boot_time.py compares it with."""
import os
import subprocess

import pytest

from nomvm import boot_apps
from nomvm.image import DEBIAN_GRUB_PC_DIR, GRUB_PC_DIR, make_iso, mkimage_for, read_boot_image
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


def moddeps(grub_dir):
    with open(os.path.join(grub_dir, "moddep.lst")) as f:
        return {m: deps.split() for m, _, deps in (line.partition(":") for line in f)}


def closure(deps, module):
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += deps.get(m, [])
    return seen


@pytest.mark.unit
def test_multiboot2_no_longer_pulls_in_normal_linux_or_net():
    """Patches 0004 and 0005: `insmod multiboot2` loaded 20 modules (297 KB) from the ISO through
    the firmware, normal.mod (107 KB) and net.mod among them; Debian's still does."""
    ours, debians = closure(moddeps(GRUB_PC_DIR), "multiboot2"), \
        closure(moddeps(DEBIAN_GRUB_PC_DIR), "multiboot2")
    assert {"normal", "linux", "net"} <= debians
    assert not {"normal", "linux", "net"} & ours
    assert {"loader_cmdline", "relocator", "acpi", "mmap", "vbe"} <= ours


@pytest.mark.unit
def test_our_core_image_is_uncompressed_and_debians_is_not(tmp_path):
    """Patch 0003: our grub-mkimage leaves the core image as it is in the El Torito image (no
    LZMA decoding at boot): the modules embedded in it (iso9660.mod) appear there verbatim.
    Debian's compresses it."""
    for grub_dir, verbatim in [(GRUB_PC_DIR, True), (DEBIAN_GRUB_PC_DIR, False)]:
        iso = make_iso(KERNEL, [], str(tmp_path / "a.iso"), grub_dir=grub_dir)
        with open(os.path.join(grub_dir, "iso9660.mod"), "rb") as f:
            module = f.read()
        assert (module in read_boot_image(iso)) == verbatim, grub_dir


@pytest.mark.unit
def test_mkimage_goes_with_its_grub_directory(tmp_path):
    assert mkimage_for(DEBIAN_GRUB_PC_DIR) == ["grub-mkimage"]
    assert mkimage_for(GRUB_PC_DIR)[1:] == ["-C", "none"]
    lonely = tmp_path / "i386-pc"
    lonely.mkdir()
    (lonely / "none_decompress.img").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="make grub"):
        mkimage_for(str(lonely))
