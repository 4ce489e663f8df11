"""Do the parsers read the real outputs of memaslap, wrk, NPtcp and nomload (fixtures/)?"""
import os

import pytest

import loadgen

pytestmark = pytest.mark.unit

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_memaslap_without_stats_has_throughput_but_no_latency():
    r = loadgen.parse_memaslap(fixture("memaslap-many.txt"))
    assert (r["ops"], r["tps"], r["seconds"]) == (5953, 1187, 5.0)
    assert (r["cmd_get"], r["cmd_set"], r["get_misses"]) == (5343, 610, 0)
    assert r["latency_us"] is None


def test_memaslap_with_S_gives_latency_of_all_commands():
    r = loadgen.parse_memaslap(fixture("memaslap-single-S.txt"))
    assert (r["ops"], r["tps"]) == (3273, 655)
    assert r["latency_us"] == {"mean": 1525.0, "stddev": 3650.84, "min": 225.0, "max": 117211.0}
    assert r["latency_events"] == 3272


def test_memaslap_S_periods_are_intervals_of_their_own():
    # -S 1s prints each second's "Total Statistics": the Period row is that second's alone
    r = loadgen.parse_memaslap(fixture("memaslap-single-S.txt"))
    assert [i["t_s"] for i in r["intervals"]] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [i["ops"] for i in r["intervals"]] == [371, 735, 659, 1069, 437]
    assert r["intervals"][3] == {"t_s": 4.0, "ops": 1069, "mean_us": 932.0, "stddev_us": 1110.01}
    assert loadgen.parse_memaslap(fixture("memaslap-many.txt"))["intervals"] == []


def test_wrk_many_units_and_percentiles():
    r = loadgen.parse_wrk(fixture("wrk-many.txt"))
    assert r["requests"] == 2400 and r["rps"] == 471.72 and r["seconds"] == 5.09
    assert r["latency_us"]["mean"] == pytest.approx(79480)
    assert r["latency_us"]["p99"] == pytest.approx(542420)
    assert r["errors"] == 0


def test_wrk_single():
    r = loadgen.parse_wrk(fixture("wrk-single.txt"))
    assert r["requests"] == 2300 and r["latency_us"]["p50"] == pytest.approx(1810)


def test_nptcp_stream_and_pingpong():
    s = loadgen.parse_nptcp_stdout(fixture("nptcp-stream.stdout"))
    assert s == [{"n": 0, "bytes": 32768, "times": 50, "mbps": 419.46, "usec": 596.01}]
    p = loadgen.parse_nptcp_stdout(fixture("nptcp-pingpong.stdout"))
    assert p[0]["bytes"] == 1024 and p[0]["usec"] == 244.34
    assert loadgen.parse_nptcp_out(fixture("nptcp-stream.out"))[0]["seconds"] == 0.00059601


def test_nomload_result_and_intervals():
    r = loadgen.parse_nomload(fixture("nomload-netpipe.txt"))
    assert r["requests"] == 3540 and r["latency_us"]["p99"] == 15568.067
    assert [i["requests"] for i in r["intervals"]] == [338, 750, 1052, 1796, 2206, 3273]
    assert r["intervals"][0] == {"t_s": 1.033, "requests": 338, "mean_us": 1404.102,
                                 "stddev_us": 6194.765}
    m = loadgen.parse_nomload(fixture("nomload-memcached-single.txt"))
    assert m["gets"] == m["get_hits"] == 2807 and m["mode"] == "single"


@pytest.mark.parametrize("parser", [loadgen.parse_wrk, loadgen.parse_memaslap,
                                    loadgen.parse_nptcp_stdout, loadgen.parse_nomload])
def test_a_failed_run_is_a_parse_error(parser):
    with pytest.raises(loadgen.ParseError):
        parser("connect: Connection refused\n")


def test_wrk_latency_in_seconds_with_trailing_blank():
    r = loadgen.parse_wrk(fixture("wrk-many-seconds.txt"))
    assert r["latency_us"]["max"] == pytest.approx(1.01e6)
    assert r["latency_us"]["p99"] == pytest.approx(1.01e6)  # "99%    1.01s " (wrk pads it)
    assert r["requests"] == 597 and r["seconds"] == 5.07
