"""The cloud provider's bandwidth price service on the host (paper 3.7) and its price schedule."""
from .schedule import DEFAULT, DEFAULT_TEXT, Schedule
from .server import DEFAULT_PORT, PriceClock, PriceServer

__all__ = ["DEFAULT", "DEFAULT_TEXT", "Schedule", "DEFAULT_PORT", "PriceClock", "PriceServer"]
