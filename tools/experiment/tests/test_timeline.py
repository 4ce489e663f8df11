"""Does the experiment's sampler turn what nom's applications said during a run into the right
series over time, store them, and read them back? On readings recorded from real runs
(fixtures/timeline: six memcached readings across the price change of `run.py --apps
memcached --guests nom --runs 1 --raw-runs 0 --duration 30 --change-at 15 --kvmcost off`,
two nhttpd GET /nom/stats answers, that memcached run's serial console) and the sampler itself
as a process."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from experiment import timeline

pytestmark = pytest.mark.unit

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "timeline")
TOOLS = os.path.dirname(os.path.dirname(HERE))


def fixture(name):
    return os.path.join(FIXTURES, name)


def memcached_readings():
    return timeline.load_readings(fixture("memcached-readings.jsonl"))


def test_memcached_readings_become_w_price_load_class_profit_and_rates():
    readings = memcached_readings()
    t0 = readings[0]["t"] - 5.0
    rows = timeline.series("memcached", readings, t0)
    assert len(rows) == len(readings) == 6
    for prev, r, row in zip([None] + readings, readings, rows):
        s = r["stats"]
        assert row["t_s"] == pytest.approx(r["t"] - t0)
        assert row["w_us"] == float(s["batching_delay_us"])
        assert row["price"] == float(s["bandwidth_price_usd_per_gbit"])
        assert row["load_class"] == s["load_class"]
        assert row["profit"] == pytest.approx(float(s["profit_rate_usd_per_s"]) * 1e6)
        if prev is None:  # a rate needs two readings
            assert row["throughput"] is None and row["out_mbit_s"] is None
            continue
        dt = r["t"] - prev["t"]
        ops = sum(int(s[k]) - int(prev["stats"][k]) for k in ("cmd_get", "cmd_set"))
        assert row["throughput"] == pytest.approx(ops / dt)
        assert row["out_mbit_s"] == pytest.approx(
            (r["tap_rx_bytes"] - prev["tap_rx_bytes"]) * 8 / 1e6 / dt)
        assert row["exits_per_s"] > 0
    # The run's own story: the price went 1 -> 10 $/Gbit, then the load many -> single.
    assert [row["price"] for row in rows] == [1, 1, 10, 10, 10, 10]
    assert [row["load_class"] for row in rows][-1] == "single"


def test_nhttpd_stats_give_w_load_class_profit_and_request_rate():
    with open(fixture("nhttpd-stats-many.json")) as f:
        many = json.load(f)
    with open(fixture("nhttpd-stats-single.json")) as f:
        single = json.load(f)
    readings = [{"t": 100.0, "stats": many}, {"t": 102.0, "stats": single}]
    rows = timeline.series("nhttpd", readings, 100.0)
    for row, doc in zip(rows, (many, single)):
        assert row["w_us"] == doc["batching_delay_us"]
        assert row["load_class"] == doc["adapt"]["load_class"]
        assert row["profit"] == doc["adapt"]["expected_profit_micro_usd_per_s"]
        assert row["price"] == doc["bandwidth_price_usd_per_gbit"]
    grown = single["total"]["requests"] - many["total"]["requests"]
    assert rows[1]["throughput"] == pytest.approx(grown / 2.0)


def test_console_lines_alone_give_the_series_and_hold_until_the_next_decision():
    """NetPIPE exposes no stats port: the controller's console lines are the series."""
    tail = timeline.ConsoleTail(fixture("serial.log"))
    lines = tail.new_lines()
    assert len(lines) == 7 and all(line.startswith("adapt: W=") for line in lines)
    readings = [{"t": 0.0, "stats": None, "console": []},
                {"t": 1.0, "stats": None, "console": lines[:2]},
                {"t": 2.0, "stats": None, "console": []},
                {"t": 3.0, "stats": None, "console": lines[-1:]}]
    rows = timeline.series("netpipe", readings, 0.0)
    assert rows[0]["w_us"] is None
    # lines[1]: "adapt: W=40 us (learn: load single, ..., price 1000000 u$/Gbit, ...
    # expected -952 u$/s)"
    for row in rows[1:3]:
        assert (row["w_us"], row["load_class"], row["price"], row["profit"]) == (
            40.0, "single", 1.0, -952.0)
    assert (rows[3]["w_us"], rows[3]["load_class"], rows[3]["profit"]) == (10.0, "many", -12106)


def test_console_tail_returns_only_new_whole_lines(tmp_path):
    with open(fixture("serial.log")) as f:
        text = f.read()
    cut = text.index("adapt: W=40") + 20  # mid-line
    log = tmp_path / "serial.log"
    log.write_text(text[:cut])
    tail = timeline.ConsoleTail(str(log))
    first = tail.new_lines()
    with open(log, "a") as f:
        f.write(text[cut:])
    second = tail.new_lines()
    assert len(first) == 1 and len(second) == 6
    assert first + second == timeline.ConsoleTail(fixture("serial.log")).new_lines()
    assert tail.new_lines() == []


def test_written_series_read_back_with_phases_and_a_cut_line_dropped(tmp_path):
    shutil.copy(fixture("memcached-readings.jsonl"), tmp_path / timeline.RAW)
    with open(tmp_path / timeline.RAW, "a") as f:
        f.write('{"t": 17958')  # the sampler stopped mid-line
    readings = memcached_readings()
    starts = {"many": readings[0]["t"] - 0.5, "single": readings[4]["t"] - 0.1}
    path = timeline.write_series(str(tmp_path), "memcached", starts)
    assert path == str(tmp_path / timeline.SERIES)
    rows, meta = timeline.read_series(str(tmp_path))
    assert [r["phase"] for r in rows] == ["many"] * 4 + ["single"] * 2
    assert meta["phase_starts_s"] == pytest.approx({"many": 0.0, "single": 4.4}, abs=1e-3)
    assert rows[0]["t_s"] == pytest.approx(0.5) and rows[0]["throughput"] is None
    assert rows[-1]["w_us"] == 20.0 and rows[-1]["load_class"] == "single"
    assert timeline.read_series(str(tmp_path / "nothing")) is None


def test_raw_readings_are_kept_gzipped_and_still_read(tmp_path):
    shutil.copy(fixture("memcached-readings.jsonl"), tmp_path / timeline.RAW)
    readings = memcached_readings()
    gz = timeline.compress_raw(str(tmp_path))
    assert gz == str(tmp_path / timeline.RAW) + ".gz" and not os.path.exists(tmp_path / timeline.RAW)
    assert timeline.load_readings(gz) == readings
    starts = {"many": readings[0]["t"] - 0.5}
    assert timeline.write_series(str(tmp_path), "memcached", starts)  # from the .gz
    assert timeline.compress_raw(str(tmp_path)) is None  # nothing left to compress


def test_no_readings_no_series(tmp_path):
    assert timeline.write_series(str(tmp_path), "memcached", {"many": 1.0}) is None
    assert not os.path.exists(tmp_path / timeline.SERIES)


def test_the_sampler_process_records_console_decisions_and_ends_on_sigterm(tmp_path):
    serial, out = tmp_path / "serial.log", tmp_path / timeline.RAW
    serial.write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "experiment.timeline", "--app", "netpipe",
                             "--host", "127.0.0.1", "--port", "9", "--out", str(out),
                             "--serial", str(serial), "--interval", "0.1"], cwd=TOOLS)
    try:
        with open(fixture("serial.log")) as f:
            serial.write_text(f.read())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
                out.exists() and any(r["console"] for r in timeline.load_readings(out))):
            time.sleep(0.1)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
    readings = timeline.load_readings(out)
    assert sum(len(r["console"]) for r in readings) == 7
    assert all(r["stats"] is None and r["tap_rx_bytes"] is None for r in readings)
