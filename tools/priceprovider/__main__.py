"""`python3 -m priceprovider [--help]` runs the price service (tools/ is on the import path)."""
import sys

from .server import main

sys.exit(main())
