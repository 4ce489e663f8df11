"""The README's summary table, made from a results folder: fixtures/quick-kvmcost holds the
records (JSON only: the tools' raw outputs, serial logs and timelines left out) of the quick
proof run `make experiment EXPERIMENT_ARGS="--quick --guests linux,nom,osv --kvmcost skylake
--raw-runs 1"` of 2026-11-25 (TCG), its exit-cost pass, interrupted once and resumed
(sessions.json). Does each application get every
figure, raw and KVM-equivalent, nom vs Linux vs OSv, mean ± SD of the runs; does the README
section between the markers, and only it, change; does a folder with runs missing say so?"""
import glob
import json
import os
import shutil
import statistics

import pytest

from experiment import summary
from experiment.analysis import valuation_dilation
from experiment.report import fmt, fmt_stat
from experiment.runner import main

pytestmark = pytest.mark.unit

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "quick-kvmcost")
FIGURES = ("throughput, many (ops/s)", "throughput, many, KVM-equivalent (ops/s)",
           "latency, single (us)", "latency, single, KVM-equivalent (us)",
           "jitter, single (us)", "exits/request, many") + tuple(
    f"profit, {kind} ($/run, {units})" for kind in ("penalty", "refund", "bonus")
    for units in ("KVM-equivalent", "raw TCG"))


@pytest.fixture
def folder(tmp_path):
    dest = tmp_path / "quick"
    shutil.copytree(FIXTURE, dest)
    return str(dest)


def record(folder, app, key, run=1):
    with open(os.path.join(folder, "raw", app, key, f"run{run}.json")) as f:
        return json.load(f)


def row(lines, app, figure):
    return next(line for line in lines if line.startswith(f"| {app} | {figure} |"))


def cells(line):
    return [c.strip() for c in line.strip("|").split("|")][2:]


def test_each_app_has_every_figure_raw_and_kvm_equivalent_for_each_guest(folder):
    lines = summary.table(folder)
    header = next(line for line in lines if line.startswith("| app | figure |"))
    assert cells(header) == ["nom", "Linux", "Linux nginx", "OSv"]
    for app in ("memcached", "nhttpd", "netpipe"):
        for figure in FIGURES:
            assert len(cells(row(lines, app, figure))) == 4
    assert "accelerator **TCG**" in lines[0] and "Exit-cost model **skylake**" in lines[0]
    # this run's nom NetPIPE cells failed (the guest faulted at start): said, never a number
    assert cells(row(lines, "netpipe", FIGURES[0]))[0] == "not run"
    assert any(line.startswith("- netpipe nom-w=0: failed: nom's netpipe does not listen")
               for line in lines)


def test_a_value_is_the_mean_and_sample_sd_of_the_runs(folder):
    one = record(folder, "memcached", "linux-default")
    two = json.loads(json.dumps(one))
    two["run"] = 2
    two["phases"]["many"]["ops"] = int(one["phases"]["many"]["ops"] * 1.25)
    with open(os.path.join(folder, "raw", "memcached", "linux-default", "run2.json"), "w") as f:
        json.dump(two, f)
    rates = [r["phases"]["many"]["ops"] / r["phases"]["many"]["seconds"] for r in (one, two)]
    want = fmt_stat((statistics.fmean(rates), statistics.stdev(rates), 2))
    linux = cells(row(summary.table(folder), "memcached", FIGURES[0]))[1]
    assert linux == want and "±" in want and "(n=2)" in want


def test_kvm_equivalent_throughput_is_raw_times_the_pass_valuation_d(folder):
    # one D for every run of the pass, its reference calibration's (analysis.valuation_dilation)
    r = record(folder, "memcached", "nom-adaptive")
    many = r["phases"]["many"]
    records = [json.load(open(p)) for p in glob.glob(os.path.join(folder, "raw", "*", "*",
                                                                   "run*.json"))]
    d = valuation_dilation([x for x in records if x["status"] == "ok"])
    assert d and d != many["kvmcost"]["dilation"]
    lines = summary.table(folder)
    assert cells(row(lines, "memcached", FIGURES[1]))[0] == fmt(many["ops"] / many["seconds"] * d)
    assert cells(row(lines, "memcached", FIGURES[0]))[0] == fmt(many["ops"] / many["seconds"])


def test_on_the_instruction_clock_each_phase_is_valued_at_its_own_d_window(folder):
    # kvmmodel.valuation_d: the window's measured wall over guest time, not the pass's D; the
    # table's first line says so (it said "x D" with the pass's D, which valued nothing there).
    plan_path = os.path.join(folder, "plan.json")
    plan = json.load(open(plan_path))
    json.dump(dict(plan, guest_clock="insn"), open(plan_path, "w"))
    for i, path in enumerate(sorted(glob.glob(os.path.join(folder, "raw", "*", "*", "run*.json")))):
        rec = json.load(open(path))
        for phase in (rec.get("phases") or {}).values():
            if phase.get("kvmcost"):
                phase["kvmcost"].update(clock="insn", d_window=6.0 + i % 3)
        json.dump(rec, open(path, "w"))
    many = record(folder, "memcached", "nom-adaptive")["phases"]["many"]
    lines = summary.table(folder)
    assert "on the instruction clock: KVM-equivalent = raw throughput × d_window" in lines[0]
    assert cells(row(lines, "memcached", FIGURES[1]))[0] == fmt(
        many["ops"] / many["seconds"] * many["kvmcost"]["d_window"])


def test_a_folder_with_runs_missing_says_so(folder):
    assert not any("Incomplete" in line for line in summary.table(folder))
    os.remove(os.path.join(folder, "raw", "nhttpd", "linux-nginx", "run1.json"))
    lines = summary.table(folder)
    assert any(line.startswith("**Incomplete:** 1 planned run(s) of 1 cell(s)") for line in lines)
    assert cells(row(lines, "nhttpd", FIGURES[0]))[2] == "not run"


def test_readme_section_between_the_markers_and_only_it_is_replaced(tmp_path):
    begin, end = summary.MARKERS
    text = f"# top\n\nbefore\n{begin}\nold table\n{end}\nafter\n"
    new = summary.replace_between_markers(text, ["| a | b |", "|---|---|"])
    assert new == f"# top\n\nbefore\n{begin}\n| a | b |\n|---|---|\n{end}\nafter\n"
    assert summary.replace_between_markers(new, ["| a | b |", "|---|---|"]) == new
    with pytest.raises(ValueError):
        summary.replace_between_markers("# no markers\n", ["x"])
    with pytest.raises(ValueError):
        summary.replace_between_markers(f"{end}\n{begin}\n", ["x"])


def test_report_only_prints_the_table_and_updates_the_readme(folder, tmp_path, capsys):
    readme = tmp_path / "README.md"
    begin, end = summary.MARKERS
    readme.write_text(f"# nom\n\n{begin}\n{end}\n\n## Layout\n")
    assert main(["--report-only", folder, "--update-readme", str(readme)]) == 0
    out = capsys.readouterr().out
    table = open(os.path.join(folder, "summary.md")).read()
    assert table.strip() in out
    assert readme.read_text() == f"# nom\n\n{begin}\n{table}{end}\n\n## Layout\n"
    assert os.path.isfile(os.path.join(folder, "report.md"))
    readme.write_text("# nom without markers\n")
    assert main(["--report-only", folder, "--update-readme", str(readme)]) == 1
