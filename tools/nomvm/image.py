"""Builds a GRUB 2 (multiboot2) bootable ISO: the nom kernel plus application modules.

Each module is an application ELF with its command line (see kernel/include/nom/abi.h,
struct nom_start_info, for how the kernel reads it). grub.cfg has no serial/terminal lines so
that GRUB writes no escape codes to the serial log (DESIGN.md).

The ELFs go into the image without their debug sections (`strip --strip-debug` on the copies;
build/ keeps the originals, which the host's tools symbolize with): GRUB reads every byte of
each file through the firmware's disk calls, slowly under TCG, and half of an application's
file is DWARF that nothing in the guest reads (issue 16's boot time).
"""
import os
import shutil
import subprocess
import tempfile


def read_module_list(path, root):
    """Reads lines `ELF-PATH COMMAND-LINE...` ('#' comments); paths are relative to root."""
    modules = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            elf, _, cmdline = line.partition(" ")
            modules.append((os.path.join(root, elf), cmdline.strip()))
    return modules


def copy_stripped(elf, dest):
    """Copies elf to dest without its debug sections; a file strip cannot read (the kernel's
    tests boot malformed images on purpose) is copied as it is."""
    result = subprocess.run(["strip", "--strip-debug", "-o", dest, elf], capture_output=True)
    if result.returncode != 0:
        shutil.copyfile(elf, dest)


def make_iso(kernel, modules, output, timeout_s=0, kernel_cmdline=""):
    """kernel: path of nom.elf; modules: [(elf_path, cmdline)]; kernel_cmdline: words for the
    kernel (e.g. "exit-when-idle"); writes output; returns it."""
    with tempfile.TemporaryDirectory(prefix="nom-iso-") as tree:
        boot = os.path.join(tree, "boot")
        os.makedirs(os.path.join(boot, "grub"))
        copy_stripped(kernel, os.path.join(boot, "nom.elf"))
        lines = [f"set timeout={timeout_s}", "set default=0", "", 'menuentry "nom" {',
                 f"  multiboot2 /boot/nom.elf {kernel_cmdline}".rstrip()]
        for i, (elf, cmdline) in enumerate(modules):
            if not os.path.isfile(elf):
                raise FileNotFoundError(f"module {elf} does not exist (not built?)")
            name = f"m{i}-{os.path.basename(elf)}"
            copy_stripped(elf, os.path.join(boot, name))
            lines.append(f"  module2 /boot/{name} {cmdline}".rstrip())
        lines += ["  boot", "}", ""]
        with open(os.path.join(boot, "grub", "grub.cfg"), "w") as f:
            f.write("\n".join(lines))
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        result = subprocess.run(["grub-mkrescue", "-o", output, tree],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("grub-mkrescue failed:\n" + result.stderr)
    return output
