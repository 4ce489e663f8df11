"""From records to figures and profit: hand-computed cases (records written by hand here test
the arithmetic only; the report test uses a real run)."""
import pytest

from experiment.analysis import Analysis, fast_share, measurements, phase_figures, stats
from experiment.plan import Plan

pytestmark = pytest.mark.unit

# The stock QEMU's units (raw figures); test_profit_under_the_exit_cost_model has the other.
PLAN = dict(Plan(duration_s=120, change_at_s=60, kvmcost="off").to_json())


def fig(ops, seconds, bytes_out, mean, sd, exits=None, insns=None):
    return {"ops": ops, "seconds": seconds, "bytes_out": bytes_out,
            "latency_us": {"mean": mean, "p50": mean, "p99": mean, "stddev": sd},
            "counters": {"exit_equiv_per_req": exits, "irqs_per_req": exits,
                         "insns_per_req": insns, "vcpu_util": 0.5}}


def record(guest, variant, run, many, single):
    return {"app": "memcached", "guest": guest, "variant": variant, "run": run,
            "status": "ok", "phases": {"many": many, "single": single}}


def test_phase_figures_derive_rates():
    # 600,000 ops in 60 s = 10,000 ops/s; 7.5e9 bytes in 60 s = 1 Gbit/s; 3 exits/op
    d = phase_figures(fig(600_000, 60, 7.5e9, 400, 50, exits=3, insns=20_000))
    assert d["ops_s"] == 10_000 and d["gbps"] == pytest.approx(1.0)
    assert d["exits_s"] == 30_000 and d["insns_per_req"] == 20_000
    assert d["latency_us"] == 400 and d["jitter_us"] == 50


def test_run_profit_from_phases():
    # many: 1 Gbit/s, 400 us, sigma 0 at 1 $/Gbit; single: 0.5 Gbit/s, 100 us at 10 $/Gbit;
    # penalty: 60 x 1 x 19 + 60 x 0.5 x 10 = 1440 (as in tools/profit/tests)
    r = record("linux", {"name": "default"}, 1, fig(1, 60, 7.5e9, 400, 0),
               fig(1, 60, 3.75e9, 100, 0))
    a = Analysis([r], PLAN)
    assert a.profit("memcached", "linux", "default", "penalty") == (pytest.approx(1440.0), 0.0, 1)
    assert [(m.start_s, m.end_s) for m in measurements(r, 60)] == [(0, 60), (60, 120)]


def test_profit_under_the_exit_cost_model_is_valued_in_kvm_equivalent_figures():
    # The same run measured with D = 4 in both phases: valued as 4 Gbit/s at 100 us (many)
    # and 2 Gbit/s at 25 us (single) over the same wall-clock phases; penalty:
    # 60 x 4 x 19 + 60 x 2 x 10 = 5760. The raw figures' profit (1440) is kept beside it.
    many, single = fig(1, 60, 7.5e9, 400, 0), fig(1, 60, 3.75e9, 100, 0)
    for phase in (many, single):
        phase["kvmcost"] = {"dilation": 4.0}
    r = record("linux", {"name": "default"}, 1, many, single)
    a = Analysis([r], dict(PLAN, kvmcost="skylake"))
    assert a.profit("memcached", "linux", "default", "penalty")[0] == pytest.approx(5760.0)
    assert a.profit("memcached", "linux", "default", "penalty", raw=True)[0] == \
        pytest.approx(1440.0)
    # a phase without D cannot be valued in KVM-equivalent figures: no profit, not a raw one
    del single["kvmcost"]
    a = Analysis([r], dict(PLAN, kvmcost="skylake"))
    assert a.profit("memcached", "linux", "default", "penalty") == (None, None, 0)


def test_samples_are_integrated_piecewise():
    # "many": 60 s, 3,000 ops, 7.5e9 bytes (2.5e6 B/op); samples: 1,500 ops in 0-30 s at
    # 100 us, 1,000 ops in 30-50 s at 900 us (sigma 0); the last 10 s hold the other 500 ops
    # at the phase's 200 us. T: 1 Gbit/s, 1 Gbit/s, 1 Gbit/s. Price 1 $/Gbit.
    # penalty: 30 x 19 + 20 x (0 - 1) + 10 x 19 = 740; "single" earns nothing (0 ops).
    many = fig(3000, 60, 7.5e9, 200, 0)
    many["samples"] = [{"t_s": 30, "ops": 1500, "latency_mean_us": 100},
                       {"t_s": 50, "ops": 1000, "latency_mean_us": 900,
                        "latency_stddev_us": 0}]
    r = record("linux", {"name": "default"}, 1, many, fig(0, 60, 0, 100, 0))
    assert Analysis([r], PLAN).profit("memcached", "linux", "default", "penalty")[0] == \
        pytest.approx(740.0)


def test_nom_adaptive_profit_is_the_run_adapting_for_that_utility():
    # "adaptive" adapted for penalty (1 Gbit/s at 400 us), "adaptive-bonus" for bonus (0.5 Gbit/s
    # at 100 us): the bonus profit of nom adaptive is the second run's, the penalty profit the
    # first's; a utility without a run of its own (refund) falls back to "adaptive".
    slow = record("nom", {"name": "adaptive", "utility": "penalty"}, 1,
                  fig(1, 60, 7.5e9, 400, 0), fig(1, 60, 7.5e9, 400, 0))
    fast = record("nom", {"name": "adaptive-bonus", "utility": "bonus"}, 1,
                  fig(1, 60, 3.75e9, 100, 0), fig(1, 60, 3.75e9, 100, 0))
    a = Analysis([slow, fast], PLAN)
    for kind, own in (("penalty", "adaptive"), ("bonus", "adaptive-bonus"),
                      ("refund", "adaptive")):
        assert a.profit("memcached", "nom", "adaptive", kind) == \
            a.profit("memcached", "nom", own, kind), kind
    penalty_run_only = Analysis([slow], PLAN)
    assert a.profit("memcached", "nom", "adaptive", "bonus")[0] != \
        penalty_run_only.profit("memcached", "nom", "adaptive", "bonus")[0]


def test_mean_and_sample_deviation_across_runs():
    assert stats([1.0, 2.0, 3.0, None]) == (2.0, 1.0, 3)
    assert stats([None]) == (None, None, 0)


def test_best_w_and_pareto_frontier():
    # W=0: 100 ops/s, 50 us; W=10: 150 ops/s, 60 us; W=20: 140 ops/s, 70 us (dominated)
    recs = [record("nom", {"name": f"w={w}", "w_us": w}, 1, fig(t * 60, 60, 1, 999, 0),
                   fig(1, 60, 1, lat, 0)) for w, t, lat in ((0, 100, 50), (10, 150, 60),
                                                             (20, 140, 70))]
    a = Analysis(recs, PLAN)
    assert a.best_w("memcached") == {"tpt": 10, "lat": 0}
    assert [(w, front) for w, _, _, front in a.pareto("memcached")] == [
        (0, True), (10, True), (20, False)]
    assert a.nom_variant("memcached") == "w=10"  # no adaptive run: best throughput stands in


def test_not_run_reasons_are_kept():
    recs = [{"app": "memcached", "guest": "osv", "variant": {"name": "default"}, "run": 1,
             "status": "not run", "reason": "no OSv image"}]
    a = Analysis(recs, PLAN)
    assert a.reasons("memcached", "osv") == ["not run: no OSv image"]
    assert a.figure("memcached", "osv", "default", "many", "ops_s") == (None, None, 0)


def test_a_phase_that_served_nothing_earns_nothing_and_has_no_latency():
    # many: no operation (the driver leaves latency None); single: 0.5 Gbit/s, 100 us, 10 $/Gbit
    many = fig(0, 60, 1e6, None, None)
    r = record("nom", {"name": "w=0", "w_us": 0}, 1, many, fig(1, 60, 3.75e9, 100, 0))
    a = Analysis([r], PLAN)
    assert a.profit("memcached", "nom", "w=0", "penalty")[0] == pytest.approx(300.0)
    assert a.figure("memcached", "nom", "w=0", "many", "latency_us") == (None, None, 0)
    assert a.figure("memcached", "nom", "w=0", "many", "ops_s") == (0.0, 0.0, 1)


def test_nom_stands_as_its_online_adaptive_when_no_offline_profile_ran():
    # A run of online cells only (--adaptive-modes online): its adaptive runs are online ones,
    # and they (not the best fixed W) are nom in the comparison; profit maps to the run adapted for the utility.
    many, single = fig(1, 60, 7.5e9, 400, 0), fig(1, 60, 3.75e9, 100, 0)
    online = record("nom", {"name": "adaptive-online", "utility": "penalty", "mode": "online"},
                    1, many, single)
    fixed = record("nom", {"name": "w=0", "w_us": 0}, 1, many, single)
    a = Analysis([online, fixed], PLAN)
    assert a.nom_variant("memcached") == "adaptive-online"
    assert a.profit("memcached", "nom", "adaptive-online", "penalty")[0] == pytest.approx(1440.0)
    assert Analysis([fixed], PLAN).nom_variant("memcached") == "w=0"


def test_exit_cost_runs_are_valued_at_the_reference_calibrations_d():
    # Three runs whose boots measured D = 4, 5 and 6 (calibrations 4000/1000, 5000/1000,
    # 6000/1000 ticks): the reference is each side's median, D = 5000 / 1000 = 5, and every
    # run is valued at it, whatever its own (analysis.valuation_dilation says why). Run 1,
    # raw 1 Gbit/s at 400 us in many and 0.5 at 100 us in single: 5 Gbit/s at 80 us and
    # 2.5 at 20 us, penalty 60 x 5 x 19 + 60 x 2.5 x 10 = 7200 (at its own D = 4: 5760).
    runs = []
    for run, d in ((1, 4.0), (2, 5.0), (3, 6.0)):
        many, single = fig(1, 60, 7.5e9, 400, 0), fig(1, 60, 3.75e9, 100, 0)
        for phase in (many, single):
            phase["kvmcost"] = {"dilation": d}
        r = record("nom", {"name": "w=0"}, run, many, single)
        r["info"] = {"kvmcost": {"calibration": {"native_ticks": 1000, "tcg_ticks": d * 1000}}}
        runs.append(r)
    a = Analysis(runs, dict(PLAN, kvmcost="skylake"))
    assert a.value_d == pytest.approx(5.0)
    assert [r["profit"]["penalty"] for r in a.ok] == [pytest.approx(7200.0)] * 3
    assert [r["derived"]["many"]["dilation"] for r in a.ok] == [4.0, 5.0, 6.0]
    assert [r["derived"]["many"]["ops_s_kvm"] for r in a.ok] == [pytest.approx(5 / 60)] * 3
    # fewer than three calibrated runs: each is valued at its own D
    a = Analysis(runs[:2], dict(PLAN, kvmcost="skylake"))
    assert a.value_d is None
    assert a.ok[0]["profit"]["penalty"] == pytest.approx(5760.0)


def test_a_pass_run_at_one_d_is_valued_at_it():
    # every phase ran at D = 5.5 (the pass's reference, calibration.py), whatever the runs'
    # own calibrations (D 4, 5, 6) measured: valued at 5.5
    runs = []
    for run, d in ((1, 4.0), (2, 5.0), (3, 6.0)):
        many, single = fig(1, 60, 7.5e9, 400, 0), fig(1, 60, 3.75e9, 100, 0)
        for phase in (many, single):
            phase["kvmcost"] = {"dilation": 5.5}
        r = record("nom", {"name": "w=0"}, run, many, single)
        r["info"] = {"kvmcost": {"calibration": {"native_ticks": 1000, "tcg_ticks": d * 1000}}}
        runs.append(r)
    assert Analysis(runs, dict(PLAN, kvmcost="skylake")).value_d == 5.5


def test_undilated_phases_are_valued_over_the_plans_seconds():
    # The run above with its phases run in undilated time at D = 4: each lasted 240 s on the
    # wall and moved 4x the bytes at the same rate; valued over the plan's 60 + 60 s it earns
    # what the wall-clock run earned (5760), not 4x that.
    many, single = fig(1, 240, 4 * 7.5e9, 400, 0), fig(1, 240, 4 * 3.75e9, 100, 0)
    for phase in (many, single):
        phase["kvmcost"] = {"dilation": 4.0}
    r = dict(record("linux", {"name": "default"}, 1, many, single), phase_scale=4.0)
    assert [(m.start_s, m.end_s) for m in measurements(r, 60)] == [(0, 60), (60, 120)]
    a = Analysis([r], dict(PLAN, kvmcost="skylake", phase_clock="undilated"))
    assert a.profit("memcached", "linux", "default", "penalty")[0] == pytest.approx(5760.0)


def speed(series, interval_s=2.0):
    """A phase's host_speed with its series of [seconds, ratio] (hostspeed.summarize)."""
    return {"series": [list(p) for p in series], "interval_s": interval_s, "slow_ratio": 1.25}


def test_fast_host_valuation_takes_only_the_seconds_on_a_fast_host():
    # The sample above, its 0-30 s on a fast host (1.0x) and 30-60 s on a slow one (1.8x):
    # valued at the fast rate, 1 Gbit/s at 100 us for all 60 s: penalty 60 x 19 = 1140 (the
    # whole run's 740 is kept as its profit). single: no series, so no fast-host profit.
    many = fig(3000, 60, 7.5e9, 200, 0)
    many["samples"] = [{"t_s": 30, "ops": 1500, "latency_mean_us": 100},
                       {"t_s": 50, "ops": 1000, "latency_mean_us": 900,
                        "latency_stddev_us": 0}]
    many["host_speed"] = speed([(t, 1.0 if t < 30 else 1.8) for t in range(0, 60, 2)])
    single = fig(0, 60, 0, 100, 0)
    single["host_speed"] = speed([(t, 1.0) for t in range(0, 60, 2)])
    r = record("linux", {"name": "default"}, 1, many, single)
    a = Analysis([r], PLAN)
    assert a.profit("memcached", "linux", "default", "penalty")[0] == pytest.approx(740.0)
    assert a.profit("memcached", "linux", "default", "penalty",
                    basis="profit_fast")[0] == pytest.approx(1140.0)
    assert fast_share(many) == pytest.approx(0.5)
    # too little of a phase ran fast: no fast-host figure rather than one from a moment
    many["host_speed"] = speed([(t, 1.0 if t < 6 else 1.8) for t in range(0, 60, 2)])
    assert Analysis([r], PLAN).profit("memcached", "linux", "default", "penalty",
                                      basis="profit_fast") == (None, None, 0)
    # a record from before the series (summary only) has none either
    many["host_speed"] = {"samples": 30, "slow_fraction": 0.5}
    assert fast_share(many) is None
    assert Analysis([r], PLAN).ok[0]["profit_fast"] is None
