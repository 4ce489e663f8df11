"""The price change falls on the load change (paper 6.1; issue 12 item 3): the provider's
schedule changes only on the runner's SIGUSR2, never on its own clock, however long the "many"
tools run past change_at_s. Before, the provider changed at change_at_s on its own clock and
memcached's "many" tools ended ~2 s later, so the end of "many" was priced high."""
import io

import pytest

from experiment.plan import Cell, Plan
from experiment.progress import Progress
from experiment.results import Results
from experiment.runner import provider_schedule, run_cell
from experiment.tests.test_runner import ScriptedDriver
from nomvm import free_port
from priceprovider.schedule import Schedule
from priceprovider.server import PriceClock

pytestmark = pytest.mark.unit


class FakeClock:
    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


def test_the_provider_clock_never_changes_the_price_only_the_load_change_does():
    plan = Plan(duration_s=120.0, change_at_s=60.0, low_price=1.0, high_price=10.0)
    clock = FakeClock(1000.0)
    prices = PriceClock(Schedule.parse(provider_schedule(plan)), hold=True, clock=clock)
    prices.start()  # SIGUSR1: the "many" load starts
    for late in (0.0, 59.9, 60.0, 62.0, 600.0):  # the "many" tools still running
        clock.t = 1000.0 + late
        assert prices.quote()["price"] == 1.0
    prices.advance()  # SIGUSR2: the "single" load starts, at 1600 s
    quote = prices.quote()
    assert quote["price"] == 10.0 and abs(quote["timestamp"] - 1600.0) < 0.1
    clock.t += 3600.0
    assert prices.quote()["price"] == 10.0


class OverrunDriver(ScriptedDriver):
    """Its "many" load runs a second past change_at_s, as memcached's tools do."""

    def load(self, phase, seconds):
        return super().load(phase, seconds + (1.0 if phase == "many" else 0.0))


def test_a_many_phase_that_overruns_is_priced_low_to_its_end(tmp_path):
    port = free_port()
    plan = Plan(apps=("nhttpd",), guests=("linux",), runs=1, duration_s=3.0, change_at_s=1.5,
                price_port=port)
    d = OverrunDriver(port)
    progress = Progress(1, 3.0, 1.0, stream=io.StringIO())
    assert run_cell(d, Cell("nhttpd", "linux", {"name": "default"}), 1, plan, Results(tmp_path),
                    progress) == "ok"
    (many0, many1), (single0, _) = d.seen["many"], d.seen["single"]
    assert many0["price"] == 1.0 and many1["price"] == 1.0
    assert single0["price"] == 10.0 and single0["sequence"] == many1["sequence"] + 1
