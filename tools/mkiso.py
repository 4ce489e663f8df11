"""Builds a bootable nom ISO: `mkiso.py --kernel nom.elf --modules LIST --output nom.iso`.

LIST has one application per line: `ELF-PATH COMMAND-LINE` (paths relative to the repo top).
"""
import argparse
import os
import sys

from nomvm import make_iso, read_module_list


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--kernel", required=True)
    p.add_argument("--modules", required=True, help="module list file")
    p.add_argument("--output", required=True)
    a = p.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    make_iso(a.kernel, read_module_list(a.modules, top), a.output)
    print(f"mkiso: wrote {a.output}")


if __name__ == "__main__":
    sys.exit(main())
