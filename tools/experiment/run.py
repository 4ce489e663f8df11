#!/usr/bin/env python3
"""`make experiment`: nom vs Linux vs OSv, paper section 6 (README.md beside this file)."""
import sys

from experiment.runner import main

if __name__ == "__main__":
    sys.exit(main())
