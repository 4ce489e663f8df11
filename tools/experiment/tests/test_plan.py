"""The plan: cells, order, the quick mode and the flags that override it."""
import pytest

from experiment.plan import Plan, quick_plan
from experiment.runner import parse_args, plan_of


def test_full_plan_has_every_app_guest_and_nom_variant():
    p = Plan()
    names = {(c.app, c.key) for c in p.cells()}
    assert ("memcached", "linux-default") in names and ("netpipe", "osv-default") in names
    assert ("nhttpd", "nom-adaptive") in names and ("nhttpd", "nom-w=40") in names
    assert ("memcached", "nom-adaptive-refund") in names and ("nhttpd", "nom-adaptive-bonus") in names
    assert ("netpipe", "nom-adaptive") in names and ("netpipe", "nom-adaptive-bonus") not in names
    assert ("nhttpd", "linux-nginx") in names
    # 3 apps x (Linux, OSv, 11 fixed W) + nginx + adaptive: 3 utilities each for memcached and
    # nhttpd, one for NetPIPE (no controller)
    assert len(p.cells()) == 3 * (2 + 11) + 1 + 3 + 3 + 1
    variants = {c.key: c.variant for c in p.cells() if c.app == "memcached"}
    assert variants["nom-adaptive"]["utility"] == "penalty"
    assert variants["nom-adaptive-refund"]["utility"] == "refund"
    assert p.schedule_text() == "0:1, 60:10"
    assert p.phase_seconds() == {"many": 60.0, "single": 60.0}


def test_runs_are_interleaved():
    p = Plan(apps=("memcached",), guests=("linux",), runs=3)
    assert [run for run, _ in p.schedule()] == [1, 2, 3]


def test_quick_mode_and_overrides():
    p = plan_of(parse_args(["--quick"]))
    assert (p.apps, p.guests, p.runs, p.duration_s, p.change_at_s) == (
        ("nhttpd",), ("linux", "nom"), 1, 10.0, 5.0)
    p = plan_of(parse_args(["--quick", "--apps", "memcached", "--duration", "4"]))
    assert (p.apps, p.duration_s, p.change_at_s, p.runs) == (("memcached",), 4.0, 2.0, 1)
    assert quick_plan().schedule_text() == "0:1, 5:10"


def test_bad_plans_are_rejected():
    with pytest.raises(ValueError):
        Plan(apps=("redis",))
    with pytest.raises(ValueError):
        Plan(duration_s=10, change_at_s=10)
    with pytest.raises(ValueError):
        Plan(runs=0)
