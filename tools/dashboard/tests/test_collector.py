"""Does the collector turn the guest's readings into the right rows, and the plot into a
well-formed SVG? Pure data: the board's and the applications' documents as they send them."""
import xml.etree.ElementTree as ET

import pytest

from dashboard import collector, plot

pytestmark = pytest.mark.unit

BOARD = {"generation": 8, "ncpus": 2, "mem_total_bytes": 1 << 28, "mem_free_bytes": 1 << 27,
         "prices": {"0": {"resource": 1, "unit": 1, "price_micro": 10_000_000,
                          "timestamp_ns": 0, "sequence": 2}},
         "apps": {"2": {"name": "memcached", "state": 1, "cores": 1, "mem_pages": 512,
                        "cpu_ns": 3_000_000_000, "batching_delay_ns": 40_000,
                        "price_seen_micro": 10_000_000, "profit_rate_micro": -85909},
                  "1": {"name": "nhttpd", "state": 2, "cores": 0, "mem_pages": 256,
                        "cpu_ns": 0, "batching_delay_ns": 0, "price_seen_micro": 1_000_000,
                        "profit_rate_micro": 106582}}}


def test_board_rows_are_per_application_in_board_order():
    rows = collector.board_rows(BOARD)
    assert list(rows) == ["nhttpd", "memcached"]
    m = rows["memcached"]
    assert (m["w_us"], m["price"], m["profit"], m["mem_mib"]) == (40.0, 10.0, -85909.0, 2.0)
    assert rows["nhttpd"]["state"] == "exited"


def test_published_price_is_the_bandwidth_slot():
    assert collector.published_price(BOARD) == (10.0, 2)
    assert collector.published_price({"prices": {}}) == (None, None)
    assert collector.published_price(None) == (None, None)


def test_rates_are_growth_per_second_and_none_after_a_restart():
    r = collector.Rates()
    assert r.rate("x", 10.0, 100) is None
    assert r.rate("x", 12.0, 160) == 30.0
    assert r.rate("x", 13.0, 5) is None  # the counter went back: the application restarted
    assert r.rate("x", 14.0, 15) == 10.0


def test_plot_is_svg_with_a_line_per_application_and_gaps_for_unknowns():
    series = {"nhttpd": [(0.0, 0.0), (1.0, 40.0), (2.0, None), (3.0, 40.0), (4.0, 40.0)],
              "memcached": [(0.0, 1.0)]}
    root = ET.fromstring(plot.svg("batching delay W", "us", series))
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 2  # nhttpd's two runs around the gap
    assert len(root.findall(f"{ns}circle")) == 1  # memcached's single point
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "40" in texts and "nhttpd" in texts and "memcached" in texts


def test_plot_of_nothing_is_still_an_image():
    ET.fromstring(plot.svg("price", "$/Gbit", {}))
