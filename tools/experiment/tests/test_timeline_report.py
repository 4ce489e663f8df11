"""Does the report draw nom adaptive's W, price, load class and profit rate over time with the
dashboard's plot, the price and load changes marked? On fixtures/nom-timeline: the records and
timeline.csv/.json of `run.py --apps memcached --guests nom --runs 1 --raw-runs 0 --duration
30 --change-at 15 --kvmcost off --w "" --adaptive-modes online` (TCG, 2026-11-25), the
load tools' raw outputs left out."""
import os
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from experiment.report import write_report
from experiment.tables import write_tables
from experiment.timeline_figures import marks

pytestmark = pytest.mark.unit

HERE = os.path.dirname(os.path.abspath(__file__))
SVG = "{http://www.w3.org/2000/svg}"


def report_of(tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(os.path.join(HERE, "fixtures", name), folder)
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        return folder, f.read()


def test_each_adaptive_run_is_drawn_over_time_with_the_changes_marked(tmp_path):
    folder, text = report_of(tmp_path, "nom-timeline")
    figures = re.findall(r"\((fig-timeline-memcached-[\w-]+\.svg)\)", text)
    assert {"fig-timeline-memcached-w-us.svg", "fig-timeline-memcached-price.svg",
            "fig-timeline-memcached-load-class.svg", "fig-timeline-memcached-profit.svg",
            "fig-timeline-memcached-throughput.svg", "fig-timeline-memcached-out-mbit-s.svg"
            } <= set(figures)
    for name in figures:
        root = ET.parse(folder / name).getroot()
        texts = [t.text for t in root.iter(f"{SVG}text")]
        # one line per adaptive variant, named by its utility function and mode
        assert {"penalty online", "refund online", "bonus online"} <= set(texts)
        assert len(root.findall(f"{SVG}polyline")) >= 3
        # the price change at the plan's 15 s and the single load's start after it
        marks = [line for line in root.findall(f"{SVG}line")
                 if line.get("stroke-dasharray")]
        assert len(marks) == 2
        assert "price 10 $/Gbit" in texts and "load single" in texts
        assert "0 s" in texts  # seconds since the load began, not the live page's "now"
    assert "raw/memcached/nom-adaptive-online/run1/timeline.csv" in text
    # every series in one PNG (matplotlib), embedded in the report
    assert "](fig-timeline-memcached.png)" in text
    assert os.path.getsize(folder / "fig-timeline-memcached.png") > 10000


def test_the_price_change_is_the_load_change_when_the_runner_makes_it():
    meta = {"phase_starts_s": {"many": 0.0, "single": 17.3}}
    plan = {"change_at_s": 15.0, "high_price": 10.0}
    assert marks(meta, plan) == [(15.0, "price 10 $/Gbit"), (17.3, "load single")]
    assert marks(meta, dict(plan, price_changes_with_load=True)) == [
        (17.3, "price 10 $/Gbit, load single")]


def test_a_report_without_timelines_has_no_such_figures(tmp_path):
    folder, text = report_of(tmp_path, "linux-quick")
    assert not [f for f in os.listdir(folder) if f.startswith("fig-timeline")]
    assert "over time" not in text
