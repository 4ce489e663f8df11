"""run.py --resume on a fake driver: a session cut off keeps its complete runs, the next session
runs only what is missing (the interrupted run again, from nothing), refuses another plan, and
the report and the summary table say what is missing until nothing is."""
import json
import os

import pytest

from experiment import runner
from experiment.driver import GuestDriver, HostBusy
from experiment.resume import is_complete, plan_from_json

pytestmark = pytest.mark.unit

PLAN_ARGS = ["--apps", "memcached", "--guests", "linux,nom", "--w", "0",
             "--adaptive-modes", "online", "--no-adaptive", "--runs", "2", "--duration", "2",
             "--kvmcost", "off", "--budget-hours", "0"]
MACHINE = {"date_utc": "2026-11-25T22:00:00+00:00", "accel_reason": "fake", "cpu_model": "cpu",
           "cpus": 2, "qemu": "QEMU", "host_kernel": "6", "commit": "abc", "dirty": False}
SOURCES = {"kernel": "1111", "net": "2222"}  # what machine.measured_sources would say
RUNS = 4  # 2 cells (linux-default, nom-w=0) x 2 runs


class FakeDriver(GuestDriver):
    """Serves fixed figures at once; the load call number `cut_at` (counted over every driver)
    raises KeyboardInterrupt, as Ctrl-C in the middle of a phase does."""
    calls = []
    cut_at = None

    def __init__(self, name):
        self.name = name

    def unavailable(self, app, variant):
        return None

    def start(self, app, variant, workdir, on_network=None):
        FakeDriver.calls.append(("start", self.name, variant["name"]))
        with open(os.path.join(workdir, "serial.log"), "w") as f:
            f.write("booted\n")
        on_network()
        return {}

    def service_address(self):
        return "127.0.0.1"

    def load(self, phase, seconds):
        FakeDriver.calls.append(("load", self.name, phase))
        if len([c for c in FakeDriver.calls if c[0] == "load"]) == FakeDriver.cut_at:
            raise KeyboardInterrupt
        return {"ops": 100, "seconds": seconds, "bytes_out": 10000,
                "latency_us": {"mean": 500.0, "p50": 450.0, "p99": 900.0, "stddev": 50.0}}

    def stop(self):
        pass


class NoProvider:
    def send_signal(self, sig):
        pass


@pytest.fixture
def fake(monkeypatch):
    FakeDriver.calls, FakeDriver.cut_at = [], None
    monkeypatch.setattr(runner.drivers, "load",
                        lambda guests, **kw: {g: FakeDriver(g) for g in guests})
    monkeypatch.setattr(runner, "start_provider", lambda *a, **kw: NoProvider())
    monkeypatch.setattr(runner, "stop_provider", lambda proc: None)
    monkeypatch.setattr(runner, "expected_to_run", lambda osv_image: lambda cell, kvmcost="off": True)
    monkeypatch.setattr(runner, "choose_accel", lambda: ("tcg", "fake"))
    monkeypatch.setattr(runner, "describe", lambda accel, reason: dict(MACHINE, accel=accel))
    monkeypatch.setattr(runner, "measured_sources", lambda: dict(SOURCES))
    return FakeDriver


def records(folder):
    out = {}
    for root, _, files in os.walk(os.path.join(folder, "raw")):
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(root, name)) as f:
                    out[os.path.relpath(os.path.join(root, name), folder)] = json.load(f)
    return out


def starts(fake):
    return [c for c in fake.calls if c[0] == "start"]


def test_a_cut_off_session_is_continued_with_only_what_is_missing(fake, tmp_path, capsys):
    out = str(tmp_path / "run")
    fake.cut_at = 5  # the third run's "many": two runs complete, the third interrupted
    assert runner.main(PLAN_ARGS + ["--output", out]) == 130
    recs = records(out)
    assert sum(is_complete(r) for r in recs.values()) == 2
    cut = [r for r in recs.values() if not is_complete(r)]
    assert len(cut) == 1 and cut[0]["interrupted"] and "start" in cut[0]["loadavg"]
    assert all(r["wall_s"] >= 0 and r["started_utc"] for r in recs.values())
    report = open(os.path.join(out, "report.md")).read()
    assert "2 planned run(s) are not in this folder" in report
    assert "**Incomplete:** 2 planned run(s)" in open(os.path.join(out, "summary.md")).read()

    # A second session killed outright in the middle of the same run leaves raw outputs and
    # no record: that run too starts again from nothing.
    run_dir = os.path.join(out, "raw", "memcached", f"{cut[0]['guest']}-"
                           f"{cut[0]['variant']['name']}", f"run{cut[0]['run']}")
    os.remove(run_dir + ".json")
    with open(os.path.join(run_dir, "partial.txt"), "w") as f:
        f.write("left by a killed session\n")

    fake.calls, fake.cut_at = [], None
    capsys.readouterr()
    assert runner.main(["--resume", out]) == 0
    assert "resuming: 2 runs left" in capsys.readouterr().err
    assert len(starts(fake)) == 2  # the cut run and the one never started, nothing else
    recs = records(out)
    assert len(recs) == RUNS and all(r["status"] == "ok" for r in recs.values())
    assert not os.path.exists(os.path.join(run_dir, "partial.txt"))
    assert "planned run(s) are not in this folder" not in open(
        os.path.join(out, "report.md")).read()
    with open(os.path.join(out, "sessions.json")) as f:
        sessions = json.load(f)
    assert [s["resumed"] for s in sessions] == [False, True]
    assert [s["end"] for s in sessions] == ["interrupted", "complete"]

    fake.calls = []
    assert runner.main(["--resume", out]) == 0 and starts(fake) == []  # nothing left


def test_resume_refuses_another_plan_and_accepts_the_same_flags(fake, tmp_path, capsys):
    out = str(tmp_path / "run")
    fake.cut_at = 1
    assert runner.main(PLAN_ARGS + ["--output", out]) == 130
    capsys.readouterr()
    other = [a if a != "2" else "3" for a in PLAN_ARGS]  # --runs 3 (and --duration 3)
    assert runner.main(other + ["--resume", out]) == 2
    err = capsys.readouterr().err
    assert "another plan" in err and "runs: the folder's 2, not 3" in err
    fake.calls, fake.cut_at = [], None
    assert runner.main(PLAN_ARGS + ["--resume", out]) == 0
    assert len(starts(fake)) == RUNS


def test_a_pinned_plan_pins_every_run_and_its_resume(fake, tmp_path, capsys, monkeypatch):
    confined = []
    monkeypatch.setattr(runner.placement, "HOST_CPUS", [0, 1])
    monkeypatch.setattr(runner.placement, "confine_self", confined.append)
    pinned_runs = []
    start = FakeDriver.start

    def start_pinned(self, *args, **kwargs):
        pinned_runs.append(self.pin_vcpu)  # what run_pass told the driver
        return start(self, *args, **kwargs)
    monkeypatch.setattr(FakeDriver, "start", start_pinned)
    out = str(tmp_path / "run")
    fake.cut_at = 5
    assert runner.main(PLAN_ARGS + ["--pin-vcpu", "--output", out]) == 130
    assert confined == [[0]] and set(pinned_runs) == {True}
    with open(os.path.join(out, "plan.json")) as f:
        assert json.load(f)["pin_vcpu"] is True
    assert "a host CPU of its own" in open(os.path.join(out, "report.md")).read()
    fake.cut_at = None
    assert runner.main(["--resume", out]) == 0  # the folder's plan: pinned again
    assert confined == [[0], [0]] and set(pinned_runs) == {True}


def test_an_unpinned_folder_is_not_resumed_pinned(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner.placement, "confine_self", lambda cpus: None)
    out = str(tmp_path / "run")
    fake.cut_at = 1
    assert runner.main(PLAN_ARGS + ["--output", out]) == 130
    capsys.readouterr()
    assert runner.main(PLAN_ARGS + ["--pin-vcpu", "--resume", out]) == 2
    assert "pin_vcpu: the folder's False, not True" in capsys.readouterr().err


def test_the_guest_clock_is_part_of_the_plan_and_older_folders_ran_dilated():
    on_skylake = [a if a != "off" else "skylake" for a in PLAN_ARGS]
    plan = runner.plan_of(runner.parse_args(on_skylake + ["--guest-clock", "insn"]))
    assert plan.guest_clock == "insn" and plan.to_json()["guest_clock"] == "insn"
    stored = plan.to_json()
    del stored["guest_clock"]  # a plan.json from before the option
    assert plan_from_json(stored).guest_clock == "dilated"


def test_a_guest_clock_without_an_exit_cost_model_is_a_usage_error(capsys):
    for flags in (["--kvmcost", "off"], ["--quick"]):
        with pytest.raises(SystemExit) as e:
            runner.parse_args(flags + ["--guest-clock", "insn"])
        assert e.value.code == 2
        assert "--guest-clock insn needs an exit-cost model" in capsys.readouterr().err


def test_pinning_on_a_host_of_one_cpu_is_refused(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner.placement, "HOST_CPUS", [0])
    assert runner.main(PLAN_ARGS + ["--pin-vcpu", "--output", str(tmp_path / "run")]) == 2
    assert "1 host CPU(s) cannot give 1 vCPU(s) a CPU each" in capsys.readouterr().err
    assert starts(fake) == []


def test_stop_after_starts_no_run_that_would_end_too_late(fake, tmp_path, capsys):
    out = str(tmp_path / "run")
    # each session starts one run however short --stop-after is (else it would never end)
    assert runner.main(PLAN_ARGS + ["--output", out, "--stop-after", "0.0001"]) == 3
    assert len(starts(fake)) == 1 and "--resume" in capsys.readouterr().err
    assert runner.main(["--plan", "--resume", out]) == 0
    assert f"resume {out}: {RUNS - 1} of {RUNS} runs left" in capsys.readouterr().out
    assert runner.main(["--resume", out]) == 0 and len(starts(fake)) == RUNS


def test_plan_splits_what_is_left_into_sessions(fake, tmp_path, capsys):
    """--plan --stop-after H: how many runs each session of H hours starts (estimates: 2 s +
    the guest's overhead a run), then --resume for the next."""
    assert runner.main(PLAN_ARGS + ["--plan", "--stop-after", "0.05"]) == 0  # 180 s
    out = capsys.readouterr().out
    # linux 2 + 35 s, nom 2 + 15 s: runs of 37, 17, 37, 17 s fit in one 180 s session
    assert "session 1 (--stop-after 0.05): 4 runs, ~1m48s" in out
    assert runner.main(PLAN_ARGS + ["--plan", "--stop-after", "0.01"]) == 0  # 36 s
    out = capsys.readouterr().out
    assert "session 1 (--stop-after 0.01): 1 runs" in out
    assert "session 4 (--stop-after 0.01, then --resume): 1 runs, ~0m17s" in out


class CalibratedDriver(FakeDriver):
    """A FakeDriver whose runs carry a calibration of D (TCG ticks from `tcg`, one per start;
    None: the host stays busy and start() raises HostBusy, as LabDriver does)."""
    tcg = []
    references = []

    def start(self, app, variant, workdir, on_network=None):
        CalibratedDriver.references.append(self.calibration_reference)
        ticks = CalibratedDriver.tcg.pop(0)
        if ticks is None:
            raise HostBusy("host busy while D was calibrated (the tcg mix took +60%)")
        super().start(app, variant, workdir, on_network)
        return {"kvmcost": {"calibration": {"native_ticks": 1000, "tcg_ticks": ticks,
                                            "d_mix": ticks / 1000}}}


def test_runs_measured_on_a_busy_host_are_set_aside_and_run_again(fake, tmp_path, monkeypatch,
                                                                   capsys):
    """A run whose D was calibrated on a busy host is another cost model: --resume moves it
    to disturbed/ (kept, with the reason) and runs it again, like a run that found the host
    busy and measured nothing."""
    monkeypatch.setattr(runner.drivers, "load",
                        lambda guests, **kw: {g: CalibratedDriver(g) for g in guests})
    ref = {"native_ticks": 1000, "tcg_ticks": 5000}
    monkeypatch.setattr(runner.calibration, "measure_reference", lambda name: ref)
    # The session's own tries again (test_runner) would take the busy run: leave it to --resume.
    monkeypatch.setattr(runner, "BUSY_ROUNDS", 0)
    args = [a if a != "off" else "skylake" for a in PLAN_ARGS] + ["--raw-runs", "0"]
    out = str(tmp_path / "run")
    CalibratedDriver.tcg, CalibratedDriver.references = [5000, 8600, None, 4990], []
    assert runner.main(args + ["--output", out]) == 0
    assert CalibratedDriver.references == [ref] * RUNS
    busy = [r for r in records(out).values() if r["status"] == "failed"]
    assert len(busy) == 1 and busy[0]["redo"] and not is_complete(busy[0])

    fake.calls, CalibratedDriver.tcg = [], [5020, 4980]
    capsys.readouterr()
    assert runner.main(["--resume", out]) == 0
    err = capsys.readouterr().err
    assert "set aside (calibration of D on a busy host)" in err and "+72%" in err
    assert "resuming: 2 runs left" in err and len(starts(fake)) == 2
    recs = records(out)
    assert len(recs) == RUNS and all(r["status"] == "ok" for r in recs.values())
    assert max(r["info"]["kvmcost"]["calibration"]["tcg_ticks"] for r in recs.values()) == 5020
    aside = tmp_path / "run" / "disturbed"
    [kept] = list(aside.glob("memcached/*/run*.json"))
    assert json.loads(kept.read_text())["info"]["kvmcost"]["calibration"]["tcg_ticks"] == 8600
    assert (kept.parent / kept.stem / "serial.log").exists()
    assert "| 8.60 | the tcg mix took +72%" in (aside / "README.md").read_text()


def test_resume_refuses_a_build_from_other_sources_unless_told(fake, tmp_path, capsys,
                                                               monkeypatch):
    """Does --resume refuse to add runs of a build whose measured sources (nom's stack here)
    differ from the folder's first session's, naming the folder that changed, run with
    --mixed-builds, and record that in the session?"""
    out = str(tmp_path / "run")
    fake.cut_at = 1
    assert runner.main(PLAN_ARGS + ["--output", out]) == 130
    with open(os.path.join(out, "sources.json")) as f:
        assert json.load(f) == SOURCES
    monkeypatch.setattr(runner, "measured_sources", lambda: dict(SOURCES, net="3333"))
    capsys.readouterr()
    fake.calls, fake.cut_at = [], None
    assert runner.main(["--resume", out]) == 2
    err = capsys.readouterr().err
    assert "other sources" in err and "net: 2222 then, 3333 now" in err and "kernel" not in err
    assert starts(fake) == []
    assert runner.main(["--resume", out, "--mixed-builds"]) == 0
    assert len(starts(fake)) == RUNS
    with open(os.path.join(out, "sessions.json")) as f:
        last = json.load(f)[-1]
    assert last["mixed_builds"] and last["sources"]["net"] == "3333"


def test_resume_refuses_another_host_unless_told(fake, tmp_path, capsys, monkeypatch):
    """A folder's reference of D is its host's: does --resume on a machine with another CPU
    refuse, naming what differs, before any guest starts, and run with --mixed-hosts?"""
    out = str(tmp_path / "run")
    fake.cut_at = 1
    assert runner.main(PLAN_ARGS + ["--output", out]) == 130
    monkeypatch.setattr(runner, "describe",
                        lambda accel, reason: dict(MACHINE, accel=accel, cpu_model="other cpu"))
    capsys.readouterr()
    fake.calls, fake.cut_at = [], None
    assert runner.main(["--resume", out]) == 2
    err = capsys.readouterr().err
    assert "another host" in err and "cpu_model: 'cpu' then, 'other cpu' now" in err
    assert "cpus" not in err.split("another host")[1].split(")")[0]
    assert starts(fake) == []
    assert runner.main(["--resume", out, "--mixed-hosts"]) == 0
    assert len(starts(fake)) == RUNS
    with open(os.path.join(out, "sessions.json")) as f:
        assert json.load(f)[-1]["mixed_hosts"]


def test_measured_sources_are_tree_ids_or_modified(tmp_path):
    """machine.measured_sources on a real git checkout: a folder's tree id at HEAD, "modified"
    once a tracked file in it changes (and then it matches nothing, itself included)."""
    from experiment.machine import measured_sources, sources_differ
    import subprocess
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], check=True)
    for folder in ("kernel", "net"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.c").write_text(folder)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "x"], check=True)
    clean = measured_sources(str(tmp_path), ("kernel", "net"))
    assert set(clean) == {"kernel", "net"} and len(set(clean.values())) == 2
    assert sources_differ(clean, clean) == []
    (tmp_path / "net" / "a.c").write_text("changed")
    dirty = measured_sources(str(tmp_path), ("kernel", "net"))
    assert dirty == dict(clean, net="modified")
    assert [d.split(":")[0] for d in sources_differ(clean, dirty)] == ["net"]
    assert [d.split(":")[0] for d in sources_differ(dirty, dirty)] == ["net"]
    assert measured_sources(str(tmp_path), ("kernel", "absent")) is None
