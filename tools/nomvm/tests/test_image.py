"""make_iso (tools/nomvm/image.py): the El Torito image carries GRUB's boot commands (no
grub.cfg, no normal mode), one line per module with its command line; bad input is refused
with the file or line named. Booting such images is what every boot test does."""
import os
import subprocess

import pytest

from nomvm.image import GRUB_PC_DIR, boot_commands, make_iso, read_boot_image
from nomvm.paths import KERNEL


def test_the_commands_boot_the_kernel_and_modules_with_their_command_lines():
    assert boot_commands("/boot/nom.elf", "exit-when-idle",
                         [("/boot/m0-a.elf", "a --x=1"), ("/boot/m1-b.elf", "")]) == [
        "multiboot2 /boot/nom.elf exit-when-idle",
        "module2 /boot/m0-a.elf a --x=1", "module2 /boot/m1-b.elf", "boot"]


def test_the_image_holds_grubs_boot_image_and_modules(tmp_path):
    iso = make_iso(KERNEL, [(KERNEL, "first --x=1")], str(tmp_path / "a.iso"))
    listing = subprocess.run(["xorriso", "-indev", iso, "-find", "/boot"],
                             capture_output=True, text=True).stdout
    for path in ("/boot/grub/eltorito.img", "/boot/nom.elf", "/boot/m0-nom.elf"):
        assert f"'{path}'" in listing, listing
    assert "embedded.cfg" not in listing


def test_the_loader_is_in_the_boot_image_and_no_module_file_is_read(tmp_path):
    """GRUB opens no module file at boot (tools/nomvm/image.py: 56 ms under TCG): multiboot2.mod
    and what it needs are in the El Torito image (ours leaves them verbatim: tools/grub patch
    0003), and the ISO carries no .mod file."""
    iso = make_iso(KERNEL, [], str(tmp_path / "a.iso"))
    listing = subprocess.run(["xorriso", "-indev", iso, "-find", "/"],
                             capture_output=True, text=True).stdout
    assert ".mod'" not in listing, listing
    core = read_boot_image(iso)
    for module in ("multiboot2", "relocator", "loader_cmdline", "iso9660", "biosdisk"):
        with open(os.path.join(GRUB_PC_DIR, f"{module}.mod"), "rb") as f:
            assert f.read() in core, module


def test_a_missing_module_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.elf"):
        make_iso(KERNEL, [(str(tmp_path / "nothere.elf"), "")], str(tmp_path / "b.iso"))
    assert not os.path.exists(tmp_path / "b.iso")


def test_a_command_line_of_two_lines_is_refused(tmp_path):
    """A newline would end GRUB's command there and run the rest as a command of its own."""
    with pytest.raises(ValueError, match="one line"):
        make_iso(KERNEL, [(KERNEL, "app\nboot")], str(tmp_path / "c.iso"))
    with pytest.raises(ValueError, match="one line"):
        make_iso(KERNEL, [], str(tmp_path / "d.iso"), kernel_cmdline="exit-when-idle\nboot")
