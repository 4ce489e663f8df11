"""`PYTHONPATH=tools python3 -m priceprovider [--help]` runs the price service."""
import sys

from .server import main

sys.exit(main())
