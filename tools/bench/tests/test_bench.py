"""make bench: the quick mode on real boots (nom at two W, Linux, rawecho, memcached's round
trip), and its outputs."""
import json
import os
import subprocess
import sys
import time

import pytest

from bench import report
from bench.run import FULL, QUICK, failures, parse_args

pytestmark = pytest.mark.boot

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(os.path.dirname(HERE), "run.py")
CLIENT = os.path.join(os.path.dirname(HERE), "memcached_rtt_client.py")
PHASE_KEYS = {"conns", "seconds", "requests", "requests_per_s", "errors", "latency_us",
              "latency_tool", "nomload", "wrk_latency_us", "per_request", "server", "raw"}


def test_quick_defaults_yield_to_explicit_flags():
    """Does --quick set its defaults only where no flag was given?"""
    a = parse_args(["--quick", "--seconds", "3"])
    assert (a.w_values, a.seconds, a.echoes) == ([0, 20], 3, QUICK["echoes"])
    b = parse_args([])
    assert (b.w_values, b.seconds) == ([0, 5, 10, 20, 40], FULL["seconds"])


def test_failed_cells_are_counted_and_shown_not_filled_in():
    """Does a guest that failed to boot appear as failed in the table, with no number?"""
    result = {"machine": {"accel": "tcg", "accel_reason": "test", "date_utc": "d", "commit": "c",
                          "dirty": False, "cpu_model": "cpu", "cpus": 2, "qemu": "q"},
              "settings": {"seconds": 1, "quick": True},
              "nhttpd": [{"guest": "nom", "w_us": 0, "error": "GuestError: no boot"},
                         {"guest": "linux", "w_us": None, "many": {"error": "LoadError: x"},
                          "single": {"error": "LoadError: y"}}],
              "rawecho": {"error": "not run"}}
    text = report.markdown(result)
    assert failures(result) == 4
    assert "failed: GuestError: no boot" in text and "rawecho not measured" in text
    assert text.splitlines()[0].startswith("# nom data-path benchmark, TCG")


def test_a_run_on_the_exit_cost_model_says_so_and_what_its_units_are():
    """A modelled run must not read as a plain TCG one: the model, the dilation of its boots,
    and which figures stay wall-clock."""
    result = {"machine": {"accel": "tcg", "accel_reason": "test", "date_utc": "d", "commit": "c",
                          "dirty": False, "cpu_model": "cpu", "cpus": 2, "qemu": "q"},
              "settings": {"seconds": 1, "quick": True, "kvmcost": "skylake"},
              "nhttpd": [{"guest": "nom", "w_us": 0, "error": "GuestError: no boot"},
                         {"guest": "nom", "w_us": 10, "kvmcost": {"dilation": 6.37},
                          "error": "LoadError: x"},
                         {"guest": "nom", "w_us": 20, "kvmcost": {"dilation": 5.1},
                          "error": "LoadError: y"}],
              "rawecho": {"error": "not run"}}
    text = report.markdown(result)
    assert "Exit-cost model `skylake` on" in text and "D 5.10-6.37 per boot" in text
    assert "wall clock under TCG, not KVM-equivalent" in text
    result["settings"]["kvmcost"] = "off"
    assert "Exit-cost model" not in report.markdown(result)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick"
    r = subprocess.run([sys.executable, RUN, "--quick", "--output", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    with open(out / "bench.json") as f:
        return out, json.load(f), r.stdout


def test_quick_mode_writes_json_and_table_naming_the_accelerator(quick):
    """Does the quick run write both files, stating TCG or KVM and the machine?"""
    out, result, _ = quick
    assert result["machine"]["accel"] in ("tcg", "kvm")
    assert result["machine"]["cpu_model"] and result["machine"]["qemu"]
    assert result["failures"] == 0 and not result["interrupted"]
    table = (out / "bench.md").read_text()
    assert result["machine"]["accel"].upper() in table.splitlines()[0]


def test_quick_mode_has_every_guest_and_phase_with_nonzero_counters(quick):
    """Has each nom W and Linux both phases with requests, latencies and non-zero counters?"""
    out, result, stdout = quick
    rows = {(r["guest"], r["w_us"]): r for r in result["nhttpd"]}
    assert set(rows) == {("nom", 0), ("nom", 20), ("linux", None)}, stdout
    for key, row in rows.items():
        for phase in ("many", "single"):
            f = row[phase]
            assert PHASE_KEYS <= set(f), (key, phase, f)
            assert f["requests"] > 0 and f["errors"] == 0, (key, phase, f)
            assert set(f["latency_us"]) == {"mean", "p50", "p99", "stddev"}
            per = f["per_request"]
            if result["machine"]["accel"] == "tcg":
                assert per["insns_per_req"] > 0 and per["notifies_per_req"] > 0, (key, phase)
                # work and idle polling apart: nom marks its idle turns, Linux marks none
                assert per["work_insns_per_req"] + per["idle_insns_per_req"] == \
                    pytest.approx(per["insns_per_req"]), (key, phase, per)
                if key[0] == "linux":
                    assert per["idle_insns_per_req"] == 0, (key, phase, per)
                elif phase == "single":  # one request at a time: the core idles between them
                    assert per["idle_insns_per_req"] > 0, (key, phase, per)
            else:  # under KVM kicks bypass QEMU's trace: KVM's exit counter counts them
                assert per["kvm_exits_per_req"] > 0, (key, phase, per)
            assert os.path.isfile(out / f["raw"]["wrk"])
        if key[0] == "nom":
            assert row["many"]["server"]["batching_delay_us"] == key[1]
    # One request at a time leaves the guest idle between requests: it re-arms the interrupt
    # and blocks (DESIGN.md), so each guest sees interrupts over its single phases.
    for guest in ("nom", "linux"):
        assert sum(r["single"]["per_request"]["irqs_per_req"] for k, r in rows.items()
                   if k[0] == guest) > 0, guest


def test_quick_mode_measures_the_rawecho_floor(quick):
    """Has rawecho's round trip a row per W with non-zero kicks?"""
    _, result, _ = quick
    floor = result["rawecho"]
    assert [r["batching_delay_us"] for r in floor["rows"]] == [0, 20]
    for row in floor["rows"]:
        assert row["single"]["rtt_us_median"] > 0
        assert row["single"]["qemu_per_req"]["notifies_per_req"] > 0


def test_quick_mode_measures_memcached_against_the_floor(quick):
    """Has memcached's round trip its requests, percentiles and its ratio to rawecho's at W=0,
    in the same run, and does the table show it?"""
    out, result, _ = quick
    m = result["memcached_rtt"]
    assert "error" not in m, m
    assert m["requests"] == QUICK["echoes"] and m["w_us"] == 0
    assert 0 < m["rtt_us_median"] <= m["rtt_us_p99"]
    w0 = [r for r in result["rawecho"]["rows"] if r["batching_delay_us"] == 0][0]
    assert m["floor_ratio"] == pytest.approx(m["rtt_us_median"] / w0["single"]["rtt_us_median"])
    assert "memcached round trip against the floor" in (out / "bench.md").read_text()


def test_memcached_rtt_client_times_every_get_of_a_real_memcached(tmp_path):
    """Does the client store its key in a real memcached (the host's), check each answer and
    time each get, and fail clearly when nothing listens?"""
    from nomvm import free_port
    port = free_port()
    as_user = ["-u", "nobody"] if os.geteuid() == 0 else []  # memcached refuses root
    server = subprocess.Popen(["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0",
                               "-m", "8", *as_user])
    try:
        cmd = [sys.executable, CLIENT, "127.0.0.1", str(port), "7", "--warmup", "2"]
        for _ in range(100):
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if r.returncode == 0 or "cannot connect" not in r.stderr:
                break
            time.sleep(0.05)  # memcached still starting
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert len(out["rtts_us"]) == 7 and min(out["rtts_us"]) > 0
        assert out["value_bytes"] == 64
    finally:
        server.terminate()
        server.wait(10)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "cannot connect to 127.0.0.1" in r.stderr, r.stderr
