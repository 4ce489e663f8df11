"""The host-noise probe (calib/hostnoise.c, hostnoise.py): does it report what it saw in a form
the model reads, refuse bad arguments, and does the model turn stalls into the share of late
releases it says? No figure of this host's noise is asserted."""
import subprocess

import pytest

from kvmcost import hostnoise


def record(gaps_ns, seconds=1.0):
    return {"clock": "wall", "seconds": seconds, "reads": 10**6, "gaps_ns": gaps_ns, "cpu": 1}


@pytest.mark.unit
def test_probe_output_is_parsed_and_a_lost_gap_refused():
    text = "hostnoise clock=cpu seconds=2.000 reads=900 gaps=2\ngap 3000\ngap 45000\n"
    assert hostnoise.parse(text) == {"clock": "cpu", "seconds": 2.0, "reads": 900,
                                     "gaps_ns": [3000, 45000]}
    with pytest.raises(hostnoise.ProbeError, match="kept 1 of 2"):
        hostnoise.parse("hostnoise clock=cpu seconds=2.000 reads=900 gaps=2\ngap 3000\n")
    with pytest.raises(hostnoise.ProbeError, match="not the host-noise probe"):
        hostnoise.parse("Segmentation fault")


@pytest.mark.unit
def test_a_stall_makes_late_the_releases_due_in_all_but_its_last_late_us_times_d():
    # At D = 5 a release is 5 us late in the guest if 25 us of wall stall follow its moment:
    # a 30 us stall catches 5 us of due moments, a 100 us one 75 us, a 20 us one none.
    r = record([30_000, 100_000, 20_000], seconds=1.0)
    assert hostnoise.late_share(r, 5.0) == pytest.approx(80_000 / 1e9)
    assert hostnoise.late_share(r, 1.0) == pytest.approx((25_000 + 95_000 + 15_000) / 1e9)
    assert hostnoise.late_share(record([], 1.0), 5.0) == 0


@pytest.mark.unit
def test_summary_counts_stalls_per_second_by_length():
    s = hostnoise.summary(record([12_000, 60_000, 200_000, 3_000], seconds=2.0), 5.0)
    assert s["stalls_ge_10us_per_s"] == 1.5
    assert s["stalls_ge_50us_per_s"] == 1.0
    assert s["stalls_ge_100us_per_s"] == 0.5
    assert s["stalled_share"] == pytest.approx(275_000 / 2e9)
    assert s["predicted_share_late_ge_5us"] == pytest.approx((35_000 + 175_000) / 2e9)


@pytest.mark.unit
@pytest.mark.parametrize("guest_clock", ["dilated", "cpu"])
def test_probe_runs_on_the_cpu_it_is_given_and_keeps_only_gaps_over_its_floor(guest_clock):
    r = hostnoise.probe(0, seconds=0.2, guest_clock=guest_clock, min_gap_ns=1000)
    assert r["cpu"] == 0 and r["clock"] == hostnoise.SOURCE_CLOCKS[guest_clock]
    assert r["reads"] > 0 and r["seconds"] == 0.2
    assert all(g >= 1000 for g in r["gaps_ns"])


@pytest.mark.unit
@pytest.mark.parametrize("argv", [[], ["1", "wall"], ["0", "wall", "2000"], ["1", "tsc", "2000"],
                                  ["1", "cpu", "-5"], ["x", "cpu", "2000"]])
def test_probe_refuses_bad_arguments_with_its_usage(argv):
    hostnoise.dilation.build()
    r = subprocess.run([hostnoise.PROBE] + argv, capture_output=True, text=True)
    assert r.returncode == 2 and "usage: hostnoise" in r.stderr


@pytest.mark.unit
def test_probes_before_and_after_a_run_combine_into_one_record():
    both = hostnoise.combine(record([30_000], 2.0), None, record([100_000, 3_000], 1.0))
    assert both["seconds"] == 3.0 and both["gaps_ns"] == [30_000, 100_000, 3_000]
    assert hostnoise.late_share(both, 5.0) == pytest.approx(80_000 / 3e9)
    assert hostnoise.combine(None, None) is None
