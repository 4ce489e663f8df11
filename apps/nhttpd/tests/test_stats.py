"""GET /nom/stats: valid JSON with the batching delay, the price, requests, throughput, latency
(mean, p99, stddev) measured in the server, and on nom the driver's counters (stats.h)."""
import json

import pytest

pytestmark = pytest.mark.boot


def stats(server):
    r = server.get("/nom/stats")
    assert r.status == 200 and r.headers["content-type"] == "application/json"
    assert r.headers["cache-control"] == "no-store"
    return json.loads(r.body)


def test_stats_document_shape(nhttpd):
    """Does the document have every member the experiment reads, with sane values?"""
    s = stats(nhttpd)
    assert s["server"] == "nhttpd"
    assert "batching_delay_us" in s and "bandwidth_price_usd_per_gbit" in s
    for window in ("total", "interval"):
        w = s[window]
        assert set(w["throughput"]) == {"requests_per_s", "mbit_per_s"}
        lat = w["latency_us"]
        assert set(lat) == {"samples", "mean", "p99", "stddev", "max"}
        assert 0 <= lat["mean"] <= lat["max"] and 0 <= lat["p99"] <= lat["max"]
        assert lat["stddev"] >= 0
    if s["platform"] == "nom":
        assert isinstance(s["batching_delay_us"], int)
        assert {"tx_kicks", "interrupts", "rx_packets", "tx_packets"} <= set(s["driver"])
    else:
        assert s["platform"] == "linux" and s["batching_delay_us"] is None
        assert "driver" not in s


def test_stats_counters_move(nhttpd):
    """Do requests, bytes and latency samples grow with traffic, and does each query start a
    new interval?"""
    first = stats(nhttpd)
    for _ in range(10):
        assert nhttpd.get("/index.html").status == 200
    assert nhttpd.get("/missing").status == 404
    second = stats(nhttpd)
    assert second["requests"] >= first["requests"] + 12
    assert second["total"]["bytes_sent"] >= first["total"]["bytes_sent"] + 10 * 175
    assert second["total"]["latency_us"]["samples"] >= first["total"]["latency_us"]["samples"] + 12
    interval = second["interval"]
    assert interval["requests"] >= 12 and interval["responses"]["4xx"] >= 1
    assert interval["requests"] <= second["requests"] - first["requests"] + 1
    assert second["connections"]["accepted"] > first["connections"]["accepted"]


def test_head_of_stats(nhttpd):
    """Does HEAD /nom/stats give the headers only?"""
    r = nhttpd.get("/nom/stats", method="HEAD")
    assert r.status == 200 and int(r.headers["content-length"]) > 0 and r.body == b""
