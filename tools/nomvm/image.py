"""Builds a GRUB 2 (multiboot2) bootable ISO: the nom kernel plus application modules.

Each module is an application ELF with its command line (see kernel/include/nom/abi.h,
struct nom_start_info, for how the kernel reads it).

GRUB runs without its normal mode (issue 16's boot time): the El Torito image
(`grub-mkimage -O i386-pc-eltorito` of GRUB_PC_DIR, tools/grub/README.md) carries the boot
commands as its embedded configuration, which GRUB's rescue parser runs at once: load the
kernel and the modules, boot. grub-mkrescue's image first loaded normal.mod and the nine modules
it needs (crypto, gettext, terminal, ...) from the ISO through the firmware's disk calls, then
read grub.cfg and drew a menu. Under TCG on the EPYC host, nhttpd alone, medians of 10 boots
each, interleaved: QEMU start to the kernel's first line 0.344 -> 0.296 s, to the first HTTP
answer 0.431 -> 0.357 s (results/boot-time-2026-11-28-grub-rescue/README.md).
The multiboot2 loader and the modules it needs are in the El Torito image too
(EMBEDDED_MODULES), so GRUB opens no module file and the ISO holds none: `insmod multiboot2`
read 11 (98 KB) from the ISO9660 tree through the firmware, a lookup and a read each, 56 ms of
a boot at the paired median under TCG (results/boot-time-2026-11-29-embedded-loader).
(Debian's multiboot2.mod still needed normal.mod, through linux.mod, and net.mod: tools/grub's
patches 0004 and 0005 cut both, and 0003 leaves the core image uncompressed.)
The words of a command line are GRUB's, as they were in grub.cfg: split at blanks, quotes and
backslashes taken out, `$name` expanded (to nothing), the rest joined by single blanks. GRUB
writes nothing to the serial log (DESIGN.md).

The ELFs go into the image without their debug sections (`strip --strip-debug` on the copies;
build/ keeps the originals, which the host's tools symbolize with): GRUB reads every byte of
each file through the firmware's disk calls, slowly under TCG, and half of an application's
file is DWARF that nothing in the guest reads (issue 16's boot time).
"""
import os
import shutil
import subprocess
import tempfile

from .paths import BUILD


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


# GRUB's BIOS platform (kernel.img, modules, boot images): Debian's grub2 source with
# tools/grub/patches, built by tools/grub/build.sh (`make grub`, which `make all` runs). Debian's
# grub-pc-bin, the same GRUB without our patches, is DEBIAN_GRUB_PC_DIR (tools/grub/README.md:
# what the patches save).
GRUB_PC_DIR = os.path.join(BUILD, "grub", "i386-pc")
DEBIAN_GRUB_PC_DIR = "/usr/lib/grub/i386-pc"


# What the El Torito image carries besides GRUB's kernel: the CD's driver and file system, and
# the loader (grub-mkimage adds what each needs, moddep.lst).
EMBEDDED_MODULES = ["biosdisk", "iso9660", "multiboot2"]


def mkimage_for(grub_dir):
    """grub-mkimage's words for grub_dir: a directory with none_decompress.img (our build) comes
    with its own grub-mkimage in ../bin, which leaves the core image uncompressed (tools/grub
    patch 0003: GRUB's LZMA decoder took ~27 ms of a boot under TCG); Debian's directory goes
    with Debian's grub-mkimage, which always compresses it."""
    if os.path.isfile(os.path.join(grub_dir, "none_decompress.img")):
        own = os.path.join(os.path.dirname(os.path.abspath(grub_dir)), "bin", "grub-mkimage")
        if not os.path.isfile(own):
            raise FileNotFoundError(f"{own} is missing beside {grub_dir}: `make grub` builds it "
                                    "(tools/grub/build.sh)")
        return [own, "-C", "none"]
    return ["grub-mkimage"]


def _run(args, what):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{result.stderr}")


def boot_commands(kernel, kernel_cmdline, modules):
    """GRUB's commands that boot kernel (its path in the image) with kernel_cmdline and the
    modules [(path in the image, cmdline)], one per line (the embedded configuration)."""
    lines = []
    for command, path, cmdline in [("multiboot2", kernel, kernel_cmdline)] + \
            [("module2", path, cmdline) for path, cmdline in modules]:
        if "\n" in cmdline or "\r" in cmdline:
            raise ValueError(f"{path}: a command line is one line: {cmdline!r}")
        lines.append(f"{command} {path} {cmdline}".rstrip())
    return lines + ["boot"]


# Where make_iso puts GRUB's El Torito image (core image, embedded modules and commands).
BOOT_IMAGE = "/boot/grub/eltorito.img"


def read_boot_image(iso):
    """The bytes of an image's El Torito boot image (BOOT_IMAGE), as GRUB's boot reads them."""
    with tempfile.TemporaryDirectory(prefix="nom-iso-") as d:
        out = os.path.join(d, "eltorito.img")
        _run(["xorriso", "-osirrox", "on", "-indev", iso, "-extract", BOOT_IMAGE, out],
             "xorriso")
        with open(out, "rb") as f:
            return f.read()


def make_iso(kernel, modules, output, kernel_cmdline="", grub_dir=None):
    """kernel: path of nom.elf; modules: [(elf_path, cmdline)]; kernel_cmdline: words for the
    kernel (e.g. "exit-when-idle"); grub_dir: GRUB's i386-pc directory (default GRUB_PC_DIR);
    writes output; returns it."""
    grub_dir = grub_dir or GRUB_PC_DIR
    if not os.path.isfile(os.path.join(grub_dir, "kernel.img")):
        raise FileNotFoundError(f"{grub_dir} holds no GRUB: `make grub` builds it "
                                "(tools/grub/build.sh)")
    with tempfile.TemporaryDirectory(prefix="nom-iso-") as tree:
        boot = os.path.join(tree, "boot")
        os.makedirs(os.path.dirname(os.path.join(tree, BOOT_IMAGE[1:])))
        copy_stripped(kernel, os.path.join(boot, "nom.elf"))
        files = []
        for i, (elf, cmdline) in enumerate(modules):
            if not os.path.isfile(elf):
                raise FileNotFoundError(f"module {elf} does not exist (not built?)")
            files.append((f"/boot/m{i}-{os.path.basename(elf)}", cmdline))
            copy_stripped(elf, os.path.join(tree, files[-1][0][1:]))
        config = os.path.join(tree, "embedded.cfg")
        with open(config, "w") as f:
            f.write("\n".join(boot_commands("/boot/nom.elf", kernel_cmdline, files)) + "\n")
        _run(mkimage_for(grub_dir) + ["-O", "i386-pc-eltorito", "-d", grub_dir, "-p",
                                      "/boot/grub", "-c", config, "-o",
                                      os.path.join(tree, BOOT_IMAGE[1:])] + EMBEDDED_MODULES,
             "grub-mkimage")
        os.remove(config)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        _run(["xorriso", "-as", "mkisofs", "-quiet", "-R", "-b", BOOT_IMAGE[1:],
              "-no-emul-boot", "-boot-load-size", "4", "-boot-info-table", "-o", output, tree],
             "xorriso")
    return output
