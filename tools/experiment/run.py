#!/usr/bin/env python3
"""`make experiment`: nom vs Linux vs OSv, paper section 6 (README.md beside this file)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiment.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
