"""The plan: cells, order, passes, the time budget and what is cut to meet it, the quick mode,
the flags that override it, and the --plan listing."""
import json
from dataclasses import replace

import pytest

from experiment.plan import ADAPTIVE_MODES, OVERHEAD_S, Plan, quick_plan
from experiment.resume import plan_from_json
from experiment.nom_driver import ADAPTIVE_MODE_ARGS
from experiment.osv_driver import exit_cost_reason
from experiment.runner import expected_to_run, main, parse_args, plan_of

pytestmark = pytest.mark.unit


def test_full_plan_has_every_app_guest_and_nom_variant():
    p = Plan()
    names = {(c.app, c.key) for c in p.cells()}
    assert ("memcached", "linux-default") in names and ("netpipe", "osv-default") in names
    assert ("nhttpd", "nom-adaptive") in names and ("nhttpd", "nom-w=40") in names
    assert ("memcached", "nom-adaptive-refund") in names and ("nhttpd", "nom-adaptive-bonus") in names
    assert ("memcached", "nom-adaptive-online") in names
    assert ("nhttpd", "nom-adaptive-online-refund") in names
    assert ("netpipe", "nom-adaptive-online-bonus") in names  # it learns online
    assert ("netpipe", "nom-adaptive") in names  # and reads its profile
    assert ("nhttpd", "linux-nginx") in names
    assert {c.variant["w_us"] for c in p.cells() if "w_us" in c.variant} == {0, 10, 20, 30, 40}
    # per app: Linux, OSv, 5 fixed W, adaptive: 2 modes x 3 utilities; + nginx
    assert len(p.cells()) == 3 * (2 + 5 + 2 * 3) + 1
    variants = {c.key: c.variant for c in p.cells() if c.app == "memcached"}
    assert variants["nom-adaptive"] == {"name": "adaptive", "utility": "penalty",
                                        "mode": "offline-profile"}
    assert variants["nom-adaptive-online-refund"]["mode"] == "online"
    assert p.schedule_text() == "0:1, 60:10"
    assert p.phase_seconds() == {"many": 60.0, "single": 60.0}


def test_passes_main_exit_cost_then_raw_tcg():
    p = Plan(kvmcost="skylake", runs=5, raw_runs=2)
    assert [(x.name, x.kvmcost, x.runs, x.subdir) for x in p.passes()] == [
        ("kvmcost-skylake", "skylake", 5, ""), ("tcg-raw", "off", 2, "tcg-raw")]
    # without the exit-cost model the stock QEMU's pass is the only one, into the output
    assert [(x.kvmcost, x.runs, x.subdir) for x in Plan(kvmcost="off", runs=3,
                                                        raw_runs=2).passes()] == [("off", 3, "")]
    assert [x.name for x in Plan(kvmcost="apicv", raw_runs=0).passes()] == ["kvmcost-apicv"]


def test_runs_are_interleaved():
    p = Plan(apps=("memcached",), guests=("linux",), runs=3)
    assert [run for run, _ in p.schedule()] == [1, 2, 3]
    assert [run for run, _ in p.schedule(runs=2)] == [1, 2]


def test_estimate_counts_every_pass_and_skips_what_cannot_run():
    p = Plan(apps=("memcached",), guests=("linux", "osv"), runs=2, raw_runs=1,
             kvmcost="skylake")
    cell = 120 + OVERHEAD_S["linux"]
    assert p.estimate_s(lambda c, kvmcost: c.guest != "osv") == 3 * cell
    assert p.estimate_s() == 3 * (cell + 120 + OVERHEAD_S["osv"])


def test_fit_cuts_raw_tcg_repetitions_first():
    p = Plan(apps=("memcached",), guests=("linux",), runs=5, raw_runs=5, kvmcost="skylake")
    cell = p.estimate_s() / 10
    fitted, cuts = p.fit(budget_s=7 * cell)
    assert (fitted.runs, fitted.raw_runs) == (5, 2)
    assert cuts == ["raw-TCG-only pass: 2 repetitions instead of 5"]
    fitted, cuts = p.fit(budget_s=3 * cell)  # the raw pass gone, then the main pass cut
    assert (fitted.runs, fitted.raw_runs) == (3, 0)
    assert cuts == ["raw-TCG-only pass: 0 repetitions instead of 5",
                    "kvmcost-skylake pass: 3 repetitions instead of 5"]
    fitted, cuts = p.fit(budget_s=10 * cell)
    assert (fitted, cuts) == (p, [])
    fitted, cuts = p.fit(budget_s=cell / 2)  # never below one run, and said so
    assert fitted.runs == 1 and "still over the budget" in cuts[-1]


def test_cells_expected_to_run(tmp_path):
    """OSv's cells need an image, nom adaptive's their controller mode wired in nom_driver."""
    runnable = expected_to_run(str(tmp_path))  # a folder without OSv images
    cells = {(c.app, c.key): c for c in Plan().cells()}
    assert not runnable(cells[("memcached", "osv-default")])
    assert runnable(cells[("memcached", "nom-adaptive")]) and runnable(cells[("memcached",
                                                                               "linux-default")])
    assert runnable(cells[("nhttpd", "nom-adaptive-online")]) == ("online" in ADAPTIVE_MODE_ARGS)


@pytest.mark.parametrize("online_wired,osv_images", [(False, False), (True, False), (True, True)])
def test_full_experiment_fits_six_hours(online_wired, osv_images):
    """`make experiment` as planned by default, with and without the online mode and OSv's
    images: under 6 h, the raw-TCG-only pass cut first, the main pass kept at 5 runs while it
    fits."""
    p = plan_of(parse_args([]))
    assert (p.kvmcost, p.runs, p.raw_runs, p.adaptive_modes) == ("skylake", 5, 5,
                                                                 ADAPTIVE_MODES)

    def runnable(c, kvmcost="off"):
        return ((osv_images or c.guest != "osv")
                and (online_wired or c.variant.get("mode") != "online"))
    fitted, cuts = p.fit(runnable=runnable)
    assert fitted.estimate_s(runnable) <= 6 * 3600
    assert fitted.raw_runs < p.raw_runs and cuts[0].startswith("raw-TCG-only pass")
    one_run = replace(fitted, runs=1, raw_runs=0).estimate_s(runnable)
    assert fitted.runs == min(5, int(6 * 3600 // one_run))


def test_a_guest_only_the_stock_qemu_runs_keeps_one_raw_tcg_run():
    """OSv (no HPET in the exit-cost QEMU) runs only in the raw-TCG-only pass: that pass keeps
    one repetition and the main pass is cut first, so that OSv is in the comparison at all."""
    p = plan_of(parse_args([]))

    def runnable(c, kvmcost="off"):
        return c.guest != "osv" or kvmcost == "off"
    fitted, cuts = p.fit(runnable=runnable)
    assert fitted.raw_runs == 1 and fitted.estimate_s(runnable) <= 6 * 3600
    assert fitted.runs < p.runs and "osv run only on the stock QEMU" in cuts[0]
    everywhere, _ = p.fit(runnable=lambda c, kvmcost="off": True)
    assert everywhere.raw_runs == 0


def test_osv_is_not_run_on_an_exit_cost_qemu_without_hpet(tmp_path):
    devices = tmp_path / "devices.mak"
    devices.write_text("CONFIG_Q35=y\nCONFIG_VIRTIO_NET=y\n")
    assert exit_cost_reason("off", str(devices)) is None
    assert "HPET" in exit_cost_reason("skylake", str(devices))
    devices.write_text("CONFIG_Q35=y\nCONFIG_HPET=y\n")
    assert exit_cost_reason("skylake", str(devices)) is None


def test_quick_mode_and_overrides():
    p = plan_of(parse_args(["--quick"]))
    assert (p.apps, p.guests, p.runs, p.duration_s, p.change_at_s, p.kvmcost) == (
        ("memcached", "nhttpd", "netpipe"), ("linux", "nom"), 1, 20.0, 10.0, "off")
    assert len(p.passes()) == 1 and p.adaptive_modes == ("offline-profile",)
    assert p.estimate_s() <= 20 * 60  # --quick within 20 minutes
    p = plan_of(parse_args(["--quick", "--apps", "memcached", "--duration", "4",
                            "--kvmcost", "skylake"]))
    assert (p.apps, p.duration_s, p.change_at_s, p.runs, p.kvmcost) == (
        ("memcached",), 4.0, 2.0, 1, "skylake")
    assert quick_plan().schedule_text() == "0:1, 10:10"
    assert plan_of(parse_args(["--raw-runs", "0"])).passes()[-1].name == "kvmcost-skylake"
    assert plan_of(parse_args(["--adaptive-modes", "offline-profile"])).adaptive_modes == (
        "offline-profile",)


def test_plan_flag_lists_every_run_and_the_total(capsys):
    assert main(["--plan", "--apps", "nhttpd", "--guests", "linux,nom", "--w", "0",
                 "--adaptive-modes", "offline-profile", "--runs", "2", "--raw-runs", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    runs = [line for line in out if line.strip().startswith("run ")]
    # (Linux nhttpd and nginx, nom 3 adaptive utilities and W = 0) x (2 + 1 runs)
    assert len(runs) == 6 * 3
    assert out[0].startswith("pass kvmcost-skylake") and any(
        line.startswith("pass tcg-raw") for line in out)
    assert out[-1].startswith("18 runs of 120 s") and "estimated" in out[-1]


def test_plan_says_in_one_line_that_osv_is_not_run(capsys, tmp_path):
    assert main(["--plan", "--apps", "memcached", "--guests", "linux,osv", "--runs", "1",
                 "--raw-runs", "0", "--osv-image", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if "OSv" in line] == [out[-1]]
    assert out[-1].startswith("experiment: OSv not run: ") and str(tmp_path) in out[-1]
    # the OSv cell is listed, and costs nothing: Linux's 120 s + its overhead only
    assert out[-2].startswith("2 runs of 120 s") and "estimated 2m35s" in out[-2]


def test_bad_plans_are_rejected():
    with pytest.raises(ValueError):
        Plan(apps=("redis",))
    with pytest.raises(ValueError):
        Plan(duration_s=10, change_at_s=10)
    with pytest.raises(ValueError):
        Plan(runs=0)
    with pytest.raises(ValueError):
        Plan(adaptive_modes=("guess",))


def test_phase_clock_scales_only_undilated_phases_under_an_exit_cost_model():
    wall, undilated = Plan(), Plan(phase_clock="undilated")
    assert wall.phase_scale("skylake", 6.2) == 1.0
    assert undilated.phase_scale("skylake", 6.2) == 6.2
    assert undilated.phase_scale("off", 6.2) == 1.0  # the stock QEMU has no D
    assert undilated.phase_seconds(2.0) == {"many": 120.0, "single": 120.0}
    cell = undilated.cells()[0]
    assert undilated.cell_estimate_s(cell, "skylake", 2.0) - undilated.cell_estimate_s(cell) \
        == pytest.approx(120.0)
    with pytest.raises(ValueError, match="unknown phase clock"):
        Plan(phase_clock="tsc")


def test_utilities_flag_picks_the_adaptive_cells():
    plan = plan_of(parse_args(["--apps", "memcached", "--guests", "nom", "--utilities", "bonus",
                               "--adaptive-modes", "online", "--w", "0"]))
    assert [c.key for c in plan.cells()] == ["nom-adaptive-online-bonus", "nom-w=0"]
    with pytest.raises(ValueError, match="unknown utility function 'bogus'"):
        Plan(adaptive_utilities=("bogus",))


def test_a_folder_from_before_netpipes_profile_keeps_its_plan():
    # plan.json of a folder made before apps/netpipe/profile/ has no apps_without_profile:
    # its plan is the one it ran (no NetPIPE offline-profile cells), so resume and its report
    # do not call those cells missing; a plan made now has them.
    stored = json.loads(json.dumps(Plan(apps=("netpipe",), guests=("nom",)).to_json()))
    del stored["apps_without_profile"]
    old = {c.key for c in plan_from_json(stored).cells()}
    new = {c.key for c in plan_from_json(dict(stored, apps_without_profile=[])).cells()}
    assert "nom-adaptive-online" in old and "nom-adaptive" not in old
    assert new - old == {"nom-adaptive", "nom-adaptive-refund", "nom-adaptive-bonus"}
