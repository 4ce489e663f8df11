"""Profit of a run: hand-computed integrals over the paper's 1 -> 10 $/Gbit schedule."""
import pytest

from priceprovider import Schedule
from profit import Measurement, priced_pieces, run_profit

pytestmark = pytest.mark.unit

PAPER = Schedule.parse("0:1, 60:10")
# many users for 60 s (1 Gbit/s, 400 us), then a single user for 60 s (0.5 Gbit/s, 100 us)
RUN = [Measurement(0, 60, 1.0, 400.0, 0.0), Measurement(60, 120, 0.5, 100.0, 0.0)]


def test_penalty_profit_of_two_phases():
    # 60 * 1 * (20 - 1) + 60 * 0.5 * (20 - 10) = 1140 + 300
    assert run_profit(RUN, PAPER, "penalty") == pytest.approx(1440.0)


def test_refund_profit_of_two_phases():
    # 60 * 1 * (20 - 4 - 1) + 60 * 0.5 * (20 - 1 - 10) = 900 + 270
    assert run_profit(RUN, PAPER, "refund") == pytest.approx(1170.0)


def test_bonus_profit_of_two_phases():
    # 60 * 1 * (20 + 25 - 1) + 60 * 0.5 * (20 + 100 - 10) = 2640 + 3300
    assert run_profit(RUN, PAPER, "bonus") == pytest.approx(5940.0)


def test_interval_spanning_the_price_change_is_split():
    m = Measurement(30, 90, 1.0, 100.0, 0.0)
    pieces = priced_pieces([m], PAPER)
    assert [(p.start_s, p.end_s, price) for p, price in pieces] == [(30, 60, 1.0), (60, 90, 10.0)]
    # 30 * 19 + 30 * 10
    assert run_profit([m], PAPER, "penalty") == pytest.approx(870.0)


def test_backwards_interval_is_an_error():
    with pytest.raises(ValueError):
        run_profit([Measurement(5, 4, 1.0, 1.0, 0.0)], PAPER, "penalty")
