"""The report, made from a recorded real run (fixtures/linux-quick: the JSON records of
`run.py --apps memcached,nhttpd,netpipe --guests linux,nom,osv --runs 2 --duration 6
--w 0,20` on this machine, raw tool outputs left out) and from a live short run of the
Linux guest."""
import csv
import glob
import json
import os
import shutil
import statistics

import pytest

from experiment.analysis import valuation_dilation
from experiment.report import fmt, write_report
from experiment.runner import main
from experiment.tables import write_tables


HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "linux-quick")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report") / "r"
    shutil.copytree(FIXTURE, folder)
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        return str(folder), f.read()


def records(folder, app, key):
    out = []
    for run in (1, 2):
        path = os.path.join(folder, "raw", app, key, f"run{run}.json")
        with open(path) as f:
            out.append(json.load(f))
    return out


@pytest.mark.unit
def test_first_line_names_the_accelerator(made):
    _, text = made
    assert text.splitlines()[0].startswith("# nom vs Linux vs OSv: accelerator TCG")


@pytest.mark.unit
def test_report_says_its_pass_and_what_the_budget_cut(tmp_path):
    folder = tmp_path / "cut"
    shutil.copytree(FIXTURE, folder)
    plan = json.loads((folder / "plan.json").read_text())
    plan.update(pass_name="kvmcost-skylake", kvmcost="skylake",
                cuts=["raw-TCG-only pass: 0 repetitions instead of 5"])
    (folder / "plan.json").write_text(json.dumps(plan))
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        text = f.read()
    assert "Pass: kvmcost-skylake (the exit-cost QEMU, model skylake" in text
    assert "**Cut to fit the time budget:** raw-TCG-only pass: 0 repetitions instead of 5." in text


@pytest.mark.unit
def test_spread_of_a_cell_splits_into_d_insn_busy_share_and_work(tmp_path):
    """Two runs of one cell whose counters gave D_insn 10 and 20: the section names the cell's
    range and the coefficients of variation; a cell whose counters gave no D_insn has no row."""
    folder = tmp_path / "spread"
    shutil.copytree(FIXTURE, folder)
    for run, d_insn in ((1, 10.0), (2, 20.0)):
        path = folder / "raw" / "memcached" / "linux-default" / f"run{run}.json"
        rec = json.loads(path.read_text())
        rec["phases"]["many"]["counters"]["d_insn"] = d_insn
        path.write_text(json.dumps(rec))
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        text = f.read()
    assert "## Why the runs of one cell differ" in text
    row = next(line for line in text.splitlines()
               if line.startswith("| memcached | Linux | default | many | 2 |"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[8] == "10.00-20.00" and cells[9] == "47.1%"
    section = text.split("## Why the runs of one cell differ")[1].split("\n## ")[0]
    assert [line for line in section.splitlines() if line.startswith("| ") and
            not line.startswith(("| app ", "|---"))] == [row]
    with open(folder / "figures.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["app"] == "memcached"
                and r["variant"] == "default" and r["phase"] == "many"]
    assert sorted(float(r["d_insn"]) for r in rows) == [10.0, 20.0]


@pytest.mark.unit
def test_plots_exist_for_what_ran(made):
    folder, text = made
    for png in ("fig02-memcached-performance.png", "fig03-nhttpd-performance.png",
                "fig05-memcached-profit.png", "fig06-nhttpd-profit.png"):
        assert os.path.getsize(os.path.join(folder, png)) > 1000
        assert f"]({png})" in text


@pytest.mark.unit
def test_summary_throughput_is_the_mean_of_the_runs(made):
    folder, text = made
    rates = [r["phases"]["many"]["ops"] / r["phases"]["many"]["seconds"]
             for r in records(folder, "memcached", "linux-default") if r["status"] == "ok"]
    row = next(line for line in text.splitlines()
               if line.startswith("| memcached | throughput (ops/s) |"))
    assert fmt(statistics.fmean(rates)) in row


@pytest.mark.unit
def test_guests_that_did_not_run_show_reasons_never_numbers(made):
    _, text = made
    for line in text.splitlines():
        if line.startswith("| memcached | throughput"):
            cells = [c.strip() for c in line.split("|")]
            assert cells[3] == "not run"  # nom
    assert "| memcached | nom | adaptive | not run (run 1, 2) |" in text
    assert "| memcached | OSv | default | not run (run 1, 2) |" in text
    assert "Figure 11: memcached throughput and latency vs W: not run (" in text
    assert "Figure 14: memcached Pareto frontier: not run." in text


@pytest.mark.unit
def test_nom_fixed_w_runs_make_the_batching_figures(made):
    folder, text = made
    for png in ("fig09-nhttpd-static-vs-adaptive.png", "fig12-nhttpd-batching-delay.png",
                "fig15-nhttpd-pareto.png"):
        assert os.path.exists(os.path.join(folder, png)) and f"]({png})" in text
    assert "| nhttpd | nom w=" in text  # table 2 and the projection name the fixed W used


@pytest.mark.unit
def test_tables_hold_every_run_and_phase(made):
    folder, _ = made
    with open(os.path.join(folder, "figures.csv")) as f:
        rows = list(csv.DictReader(f))
    ok = [r for r in rows if r["app"] == "nhttpd" and r["guest"] == "linux"]
    assert {(r["variant"], r["phase"]) for r in ok} >= {("default", "many"), ("nginx", "single")}
    assert all(float(r["ops_s"]) > 0 for r in ok)


@pytest.mark.boot
def test_live_short_run_of_the_linux_guest(tmp_path):
    import linuxguest
    try:
        linuxguest.build()
    except linuxguest.BuildError as e:
        pytest.skip(f"the Linux guest cannot be built here: {e}")
    out = tmp_path / "live"
    no_osv = tmp_path / "no-osv-images"
    no_osv.mkdir()
    assert main(["--apps", "memcached", "--guests", "linux,osv", "--runs", "1",
                 "--duration", "4", "--kvmcost", "off", "--osv-image", str(no_osv),
                 "--output", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert (out / "fig02-memcached-performance.png").exists()
    row = next(line for line in text.splitlines() if line.startswith("| many | Linux |"))
    assert "not run" not in row
    assert "no OSv image for memcached" in text
    assert json.loads((out / "machine.json").read_text())["accel"] in ("tcg", "kvm")


@pytest.mark.boot
def test_quick_mode_compares_linux_and_nom(tmp_path):
    """`make experiment EXPERIMENT_ARGS=--quick` for one application: nhttpd on the Linux guest
    and on nom (adaptive, fixed W = 0 and 40), one short run, a full report."""
    import linuxguest
    try:
        linuxguest.build()
    except linuxguest.BuildError as e:
        pytest.skip(f"the Linux guest cannot be built here: {e}")
    out = tmp_path / "quick"
    assert main(["--quick", "--apps", "nhttpd", "--output", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert text.splitlines()[0].lower().count("tcg") + text.splitlines()[0].lower().count("kvm") >= 1
    with open(out / "figures.csv") as f:
        rows = list(csv.DictReader(f))
    for guest in ("linux", "nom"):
        served = [r for r in rows if r["app"] == "nhttpd" and r["guest"] == guest
                  and float(r["ops_s"] or 0) > 0]
        assert served, f"{guest} served nothing in quick mode:\n{text[:3000]}"
    # nom adaptive's run sampled once a second (timeline.py) and drawn over time
    assert (out / "raw" / "nhttpd" / "nom-adaptive" / "run1" / "timeline.csv").exists()
    assert "(fig-timeline-nhttpd-w-us.svg)" in text


@pytest.mark.unit
def test_what_w_can_buy_is_the_exits_share_of_a_request_s_kvm_time(tmp_path):
    """fixtures/quick-kvmcost (test_summary.py says what it is): for each fixed W, the charged
    exit ns per request over the request's KVM-equivalent time, 1 / (raw rate x the pass's D)."""
    folder = tmp_path / "quick"
    shutil.copytree(os.path.join(HERE, "fixtures", "quick-kvmcost"), folder)
    write_tables(str(folder))
    with open(write_report(str(folder))) as f:
        lines = f.read().splitlines()
    assert '### What W can buy under "many" in the exit-cost model' in lines
    ok = [json.load(open(p)) for p in glob.glob(str(folder / "raw" / "*" / "*" / "run*.json"))]
    d = valuation_dilation([r for r in ok if r["status"] == "ok"])
    for w in (0, 40):
        with open(folder / "raw" / "memcached" / f"nom-w={w}" / "run1.json") as f:
            many = json.load(f)["phases"]["many"]
        req_ns = 1e9 / (many["ops"] / many["seconds"] * d)
        share = many["counters"]["exit_ns_per_req"] / req_ns * 100
        row = next(line for line in lines if line.startswith(f"| memcached | {w} | "))
        assert row.endswith(f"| {fmt(share, 2)} % |"), row
    # NetPIPE's fixed-W runs failed in this fixture: no row, never a number.
    assert not any(line.startswith("| netpipe | 0 | ") for line in lines)
