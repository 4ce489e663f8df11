"""What a run ran on, beside its figures: the host-speed sampler (hostspeed.py) and the ELFs
it booted, and what the report says of each."""
import csv
import json
import os
import shutil
import threading

import pytest

from experiment import hostspeed
from experiment.report import write_report
from experiment.tables import write_tables
from kvmcost import dilation


pytestmark = pytest.mark.unit

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "linux-quick")


def test_summary_against_the_reference():
    s = hostspeed.summarize([100, 110, 130, 200], reference=100)
    assert s["samples"] == 4 and s["reference"] == "calibration"
    assert s["median_ratio"] == 1.2 and s["max_ratio"] == 2.0
    assert s["slow_fraction"] == 0.5  # 1.3x and 2.0x are beyond SLOW_RATIO (1.25)


def test_summary_without_reference_is_against_the_fastest_sample():
    s = hostspeed.summarize([300, 150, 160])
    assert s["reference"] == "fastest sample" and s["reference_ticks"] == 150
    assert s["slow_fraction"] == pytest.approx(1 / 3, abs=0.001)


def test_no_sample_says_none_rather_than_quiet():
    s = hostspeed.summarize([], reference=100, errors=["calib-native: not found"])
    assert s["samples"] == 0 and s["slow_fraction"] is None and s["errors"]


def test_monitor_samples_until_stopped_and_keeps_errors():
    calls, enough = [], threading.Event()

    def sample():
        calls.append(1)
        if len(calls) >= 3:
            enough.set()
        if len(calls) == 2:
            raise dilation.CalibrationError("the mix's repetitions disagree")
        return 100 * len(calls)

    m = hostspeed.Monitor(reference_ticks=100, interval_s=0.001, sample=sample).start()
    assert enough.wait(10)
    s = m.stop()
    n = len(calls)
    assert s["samples"] == n - 1 and s["errors"] == ["the mix's repetitions disagree"]
    assert len(calls) == n  # stopped: no sample after stop() returned


def test_the_real_sample_is_a_tick_count():
    dilation.build()
    assert hostspeed.native_ticks() > 0


def test_report_tells_slow_phases(tmp_path):
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    path = folder / "raw" / "memcached" / "linux-default" / "run1.json"
    record = json.loads(path.read_text())
    assert record["status"] == "ok"
    record["phases"]["many"]["host_speed"] = hostspeed.summarize([100, 100, 200, 210], 100)
    record["phases"]["single"]["host_speed"] = hostspeed.summarize([100, 101], 100)
    path.write_text(json.dumps(record))
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        text = f.read()
    line = next(x for x in text.splitlines() if x.startswith("Host speed during"))
    assert "2 phase(s) sampled, 1 with slow samples" in line
    assert "memcached/linux-default/run1 many 50% slow (median 1.50x)" in line
    assert "ran before the sampler existed and were not sampled" in line
    assert os.path.exists(folder / "report.md")
    assert "### The same on a fast host" not in text  # no run has a series


def test_runs_with_a_series_get_a_fast_host_valuation(tmp_path):
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    path = folder / "raw" / "memcached" / "linux-default" / "run1.json"
    record = json.loads(path.read_text())
    for fig in record["phases"].values():
        n = int(fig["seconds"] / 2) + 1
        fig["host_speed"] = hostspeed.summarize([100] * n, 100, times=[2 * i for i in range(n)])
    path.write_text(json.dumps(record))
    write_tables(str(folder))
    with open(folder / "profit.csv") as f:
        rows = {(r["app"], r["variant"], r["run"]): r for r in csv.DictReader(f)}
    fast = rows[("memcached", "default", "1")]
    # all of it ran fast: the fast-host valuation is the run's own profit
    assert float(fast["penalty_fast"]) == pytest.approx(float(fast["penalty"]))
    assert rows[("memcached", "default", "2")]["penalty_fast"] == ""
    with open(write_report(str(folder))) as f:
        assert "### The same on a fast host" in f.read()


def test_report_tells_runs_that_booted_another_build(tmp_path):
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    paths = sorted((folder / "raw").glob("*/*/run*.json"))  # any guest: the fixture's nom
    # memcached did not run, and the report groups whatever records carry ELF hashes
    oks = []
    for path in paths:
        record = json.loads(path.read_text())
        if record["status"] == "ok":
            oks.append((path, record))
    assert len(oks) >= 3
    for i, (path, record) in enumerate(oks):
        other = i == 0
        record["info"].setdefault("image", {})["elf_sha256"] = {
            "kernel/nom.elf": "aa" * 32, "apps/memcached/memcached.elf": ("cc" if other else "bb") * 32}
        path.write_text(json.dumps(record))
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        text = f.read()
    line = next(x for x in text.splitlines() if "Booted builds" in x)
    assert "booted 2 different builds of apps/memcached/memcached.elf" in line
    assert f"{len(oks) - 1} run(s) booted apps/memcached/memcached.elf bbbbbbbbbbbb" in line
    assert line.startswith("**Booted builds")
    assert "1 run(s) booted apps/memcached/memcached.elf cccccccccccc" in line
    assert "kernel/nom.elf" not in line  # one build of it


def test_runs_of_two_applications_booting_their_own_elfs_are_one_build(tmp_path):
    """Each application's runs boot its own ELF: only the ELFs they share (the kernel) must
    agree (the folder of 2026-12-03's pilot was told, wrongly, of 2 different sets)."""
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    oks = [(p, json.loads(p.read_text())) for p in sorted((folder / "raw").glob("*/*/run*.json"))]
    oks = [(p, r) for p, r in oks if r["status"] == "ok"]
    for i, (path, record) in enumerate(oks):
        app = "nhttpd" if i % 2 else "memcached"
        record["info"].setdefault("image", {})["elf_sha256"] = {
            "kernel/nom.elf": "aa" * 32, f"apps/{app}/{app}.elf": ("dd" if i % 2 else "ee") * 32}
        path.write_text(json.dumps(record))
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        line = next(x for x in f.read().splitlines() if "Booted builds" in x)
    assert line.startswith("Booted builds: every one of the") and "3 ELF(s) in all" in line


def test_series_says_when_each_sample_was_taken():
    s = hostspeed.summarize([100, 200, 100], reference=100, times=[0.0, 2.0, 4.01])
    assert s["series"] == [[0.0, 1.0], [2.0, 2.0], [4.01, 1.0]]
    m = hostspeed.Monitor(reference_ticks=100, interval_s=0.001, sample=lambda: 100).start()
    while len(m.samples) < 3:
        pass
    series = m.stop()["series"]
    assert len(series) >= 3 and [t for t, _ in series] == sorted(t for t, _ in series)


def test_a_span_is_fast_when_the_samples_near_it_are():
    hs = hostspeed.summarize([100, 100, 180, 100], reference=100, times=[0, 2, 4, 6])
    assert hostspeed.is_fast(hs, 0, 1) is True       # the sample at 0 stands for 0-2 s
    assert hostspeed.is_fast(hs, 3, 4) is True       # the one at 2 for 2-4 s
    assert hostspeed.is_fast(hs, 3, 5) is False      # the slow one at 4 for 4-6 s
    assert hostspeed.is_fast(hs, 30, 31) is False    # no sample near: not known to be fast
    assert hostspeed.is_fast({"samples": 4}, 0, 1) is None  # recorded without a series
