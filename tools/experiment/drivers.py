"""Which driver runs each guest: an adapter module per guest, or a MissingDriver saying why not.

An adapter module `<guest>_driver.py` in this folder exposes make_driver(accel, osv_image,
price_port) and
raises GuestError with the reason when its prerequisites (the guest's tool, netlab, loadgen,
an OSv image) are missing; that reason becomes every one of the guest's cells' "not run".
"""
import importlib

from .driver import GuestError, MissingDriver


def load(guests, accel, osv_image=None, price_port=None):
    """{guest: driver} for every guest of the plan."""
    out = {}
    for guest in guests:
        try:
            module = importlib.import_module(f"{__package__}.{guest}_driver")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{guest}_driver":
                out[guest] = MissingDriver(guest, f"driver cannot load: {e}")
            else:
                out[guest] = MissingDriver(guest, f"no driver for the {guest} guest yet "
                                           f"(tools/experiment/{guest}_driver.py)")
            continue
        try:
            out[guest] = module.make_driver(accel=accel, osv_image=osv_image,
                                            price_port=price_port)
        except GuestError as e:
            out[guest] = MissingDriver(guest, str(e))
    return out
