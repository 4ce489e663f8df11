"""Issue 12's verdict on hand-made records whose profits are known: with the penalty function at
1 then 10 $/Gbit, a run serving T Gbit/s under "many" and T/2 under "single" (latency under the
SLO, no jitter) earns 60 x T x 19 + 60 x T/2 x 10 = 1440 T (test_analysis's arithmetic)."""
import math

import pytest

from experiment.analysis import Analysis
from experiment.plan import Plan
from experiment.verdict import pooled_sd, verdicts

pytestmark = pytest.mark.unit

PLAN = dict(Plan(duration_s=120, change_at_s=60, kvmcost="off").to_json())


def phase(t_gbps):
    return {"ops": 1000, "seconds": 60, "bytes_out": t_gbps * 7.5e9,
            "latency_us": {"mean": 100, "p50": 100, "p99": 100, "stddev": 0},
            "counters": {}}


def runs(guest, variant, ts):
    return [{"app": "memcached", "guest": guest, "variant": variant, "run": i + 1,
             "status": "ok", "phases": {"many": phase(t), "single": phase(t / 2)}}
            for i, t in enumerate(ts)]


OFFLINE = {"name": "adaptive", "utility": "penalty", "mode": "offline-profile"}
ONLINE = {"name": "adaptive-online", "utility": "penalty", "mode": "online"}


def penalty_rows(records):
    rows = verdicts(Analysis(records, PLAN), "memcached")
    return {r["mode"]: r for r in rows if r["utility"] == "penalty"}


def test_pooled_sd_of_two_samples():
    assert pooled_sd((0, 3.0, 3), (0, 4.0, 3)) == pytest.approx(math.sqrt(12.5))
    assert pooled_sd((0, 2.0, 2), (0, 0.0, 1)) == pytest.approx(2.0)  # (1 x 4 + 0) / 1
    assert pooled_sd((0, 0.0, 1), (0, 0.0, 1)) is None  # one run each: no spread to pool


def test_adaptive_within_one_pooled_sd_reaches_the_bar_and_one_below_misses():
    records = (runs("nom", {"name": "w=0", "w_us": 0}, [1.0, 1.1, 0.9])    # 1440 +- 144
               + runs("nom", {"name": "w=10", "w_us": 10}, [0.5, 0.5, 0.5])  # 720
               + runs("nom", OFFLINE, [0.95, 0.95, 0.95])                  # 1368
               + runs("nom", ONLINE, [0.8, 0.8, 0.8])                      # 1152
               + runs("linux", {"name": "default"}, [0.3, 0.3, 0.3]))      # 432
    rows = penalty_rows(records)
    sd = math.sqrt(2 * 144.0 ** 2 / 4)
    off = rows["offline-profile"]
    assert off["best_w"] == 0 and off["best"][0] == pytest.approx(1440)
    assert off["pooled_sd"] == pytest.approx(sd) and off["bar"] == pytest.approx(1440 - sd)
    assert off["adaptive"][0] == pytest.approx(1368) and off["meets_bar"] is True
    assert rows["online"]["meets_bar"] is False
    assert [(r["guest"], r["beaten"]) for r in off["rivals"]] == [("linux", True)]
    assert set(rows) == {"offline-profile", "online"}  # no refund/bonus adaptive runs: no rows


def test_one_run_each_leaves_the_verdict_undefined_not_passed():
    records = (runs("nom", {"name": "w=0", "w_us": 0}, [1.0])
               + runs("nom", OFFLINE, [0.5])
               + runs("osv", {"name": "default"}, [0.6]))
    off = penalty_rows(records)["offline-profile"]
    assert off["pooled_sd"] is None and off["bar"] is None and off["meets_bar"] is None
    assert [(r["guest"], r["beaten"]) for r in off["rivals"]] == [("osv", False)]


def test_no_fixed_w_runs_gives_no_bar():
    off = penalty_rows(runs("nom", OFFLINE, [1.0, 1.0]))["offline-profile"]
    assert off["best"] is None and off["meets_bar"] is None and off["rivals"] == []
