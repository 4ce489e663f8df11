"""Where the tree and its build are: the nom kernel the host tools boot by default."""
import os

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
