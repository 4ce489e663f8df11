"""A/B for the GRUB patches 0003-0005: boot_time.py's nom-debian-grub guest pointed at the
previous build (patches 0001-0002 only, Debian's grub-mkimage) for this run."""
import sys
sys.path.insert(0, "/work/main/tools/bench")
sys.path.insert(0, "/work/main/tools")
import boot_time
boot_time.DEBIAN_GRUB_PC_DIR = "/var/cache/nom-grub/dbd4967a1924939d/i386-pc"
boot_time.main(sys.argv[1:])
