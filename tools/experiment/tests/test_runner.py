"""The runner's mechanics with a scripted driver and the real price provider on 127.0.0.1:
the price change falls on the load change, failures and Ctrl-C still stop the guest and the
provider, and every cell leaves a record."""
import io
import json
import subprocess
import urllib.request

import pytest

from experiment.driver import GuestDriver, GuestError, MissingDriver
from experiment.plan import Cell, Plan
from experiment.progress import Progress
from experiment.results import Results
from experiment.runner import run_cell
from nomvm import free_port

pytestmark = pytest.mark.unit


class ScriptedDriver(GuestDriver):
    """Reads the provider's price at the start and end of each phase instead of loading."""
    name = "scripted"

    def __init__(self, port, fail_in=None):
        self.crash = fail_in == "crash"
        self.port, self.fail_in = port, fail_in
        self.seen, self.procs, self.stopped, self.network_made = {}, [], 0, False

    def unavailable(self, app, variant):
        return None

    def start(self, app, variant, workdir, on_network=None):
        if self.fail_in == "start":
            raise GuestError("guest did not boot")
        self.network_made = True
        on_network()
        return {"booted": True}

    def service_address(self):
        return "127.0.0.1"

    def spawn(self, argv, **kw):
        proc = subprocess.Popen(argv, **kw)
        self.procs.append(proc)
        return proc

    def price(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/price", timeout=10) as r:
            return json.loads(r.read())

    def load(self, phase, seconds):
        if self.fail_in == phase:
            raise KeyboardInterrupt
        if self.crash:
            raise OSError("a tool crashed")
        first = self._wait_price()
        import time
        time.sleep(seconds)
        self.seen[phase] = (first, self.price())
        return {"ops": 10, "seconds": seconds, "bytes_out": 1000,
                "latency_us": {"mean": 100.0, "p50": 90.0, "p99": 200.0, "stddev": 10.0}}

    def _wait_price(self):
        for _ in range(200):
            try:
                return self.price()
            except OSError:
                import time
                time.sleep(0.05)
        raise GuestError("provider never answered")

    def stop(self):
        self.stopped += 1


@pytest.fixture
def setup(tmp_path):
    port = free_port()
    plan = Plan(apps=("nhttpd",), guests=("linux",), runs=1, duration_s=3.0, change_at_s=1.5,
                price_port=port)
    return plan, Results(tmp_path), Progress(1, 3.0, 1.0, stream=io.StringIO()), port


CELL = Cell("nhttpd", "linux", {"name": "default"})


def test_price_changes_with_the_load(setup):
    plan, res, progress, port = setup
    d = ScriptedDriver(port)
    assert run_cell(d, CELL, 1, plan, res, progress) == "ok"
    (many0, many1), (single0, single1) = d.seen["many"], d.seen["single"]
    assert many0["running"] and many0["price"] == 1.0
    assert single1["price"] == 10.0 and single1["sequence"] == many0["sequence"] + 1
    assert d.stopped == 1 and all(p.poll() is not None for p in d.procs)
    rec = res.records()[0]
    assert rec["status"] == "ok" and set(rec["phases"]) == {"many", "single"}


def test_failed_boot_is_recorded_and_cleaned_up(setup):
    plan, res, progress, port = setup
    d = ScriptedDriver(port, fail_in="start")
    assert run_cell(d, CELL, 1, plan, res, progress) == "failed"
    assert d.stopped == 1
    assert res.records()[0]["reason"] == "guest did not boot"


def test_unexpected_error_is_recorded_and_the_guest_stopped(setup):
    plan, res, progress, port = setup
    d = ScriptedDriver(port, fail_in="crash")
    assert run_cell(d, CELL, 1, plan, res, progress) == "failed"
    assert d.stopped == 1 and all(p.poll() is not None for p in d.procs)
    rec = res.records()[0]
    assert rec["reason"] == "OSError: a tool crashed" and "Traceback" in rec["traceback"]


def test_ctrl_c_stops_guest_and_provider_and_keeps_a_record(setup):
    plan, res, progress, port = setup
    d = ScriptedDriver(port, fail_in="single")
    with pytest.raises(KeyboardInterrupt):
        run_cell(d, CELL, 1, plan, res, progress)
    assert d.stopped == 1 and d.procs and all(p.poll() is not None for p in d.procs)
    assert res.records()[0]["status"] == "failed"


def test_unavailable_guest_is_not_run_with_its_reason(setup):
    plan, res, progress, _ = setup
    assert run_cell(MissingDriver("osv", "no OSv image given"), CELL, 1, plan, res,
                    progress) == "not run"
    rec = res.records()[0]
    assert (rec["status"], rec["reason"]) == ("not run", "no OSv image given")


class TimedDriver(ScriptedDriver):
    """Records the wall seconds each phase was asked for, without waiting them."""

    def __init__(self, port, kvmcost_name, reference):
        super().__init__(port)
        self.kvmcost_name, self.calibration_reference = kvmcost_name, reference
        self.asked = {}

    def load(self, phase, seconds):
        self.asked[phase] = seconds
        return {"ops": 10, "seconds": seconds, "bytes_out": 1000,
                "latency_us": {"mean": 100.0, "p50": 90.0, "p99": 200.0, "stddev": 10.0}}


@pytest.mark.parametrize("clock, kvmcost, scale", [("undilated", "skylake", 2.5),
                                                   ("wall", "skylake", 1.0),
                                                   ("undilated", "off", 1.0)])
def test_undilated_phases_last_d_times_longer_on_the_wall(tmp_path, clock, kvmcost, scale):
    port = free_port()
    plan = Plan(apps=("nhttpd",), guests=("linux",), runs=1, duration_s=0.4, change_at_s=0.1,
                price_port=port, phase_clock=clock)
    d = TimedDriver(port, kvmcost, {"native_ticks": 100, "tcg_ticks": 250})  # D = 2.5
    res = Results(tmp_path)
    assert run_cell(d, CELL, 1, plan, res, Progress(1, 1.0, 1.0, stream=io.StringIO())) == "ok"
    assert d.asked == pytest.approx({"many": 0.1 * scale, "single": 0.3 * scale})
    assert res.records()[0]["phase_scale"] == scale


def test_a_boot_of_other_elfs_stops_the_session_before_measuring(setup):
    # nom_driver.check_build on the ELFs each boot would boot, against what the folder's
    # earlier runs booted (runner.booted_elfs): the first boot of a fresh folder sets them.
    from experiment.driver import BuildChanged
    from experiment.nom_driver import check_build
    from experiment.runner import booted_elfs, run_pass
    plan, res, progress, port = setup
    expected = {}
    check_build({"kernel/nom.elf": "k1", "apps/memcached/memcached.elf": "m1"}, expected)
    check_build({"kernel/nom.elf": "k1", "apps/nhttpd/nhttpd.elf": "h1"}, expected)
    assert expected == {"kernel/nom.elf": "k1", "apps/memcached/memcached.elf": "m1",
                        "apps/nhttpd/nhttpd.elf": "h1"}
    with pytest.raises(BuildChanged, match="apps/memcached/memcached.elf"):
        check_build({"kernel/nom.elf": "k1", "apps/memcached/memcached.elf": "m2"}, expected)
    check_build({"kernel/nom.elf": "k2"}, None)  # --mixed-builds: not checked

    class RebuiltDriver(ScriptedDriver):
        def start(self, app, variant, workdir, on_network=None):
            check_build({"kernel/nom.elf": "k2"}, self.expected_elfs)
            return super().start(app, variant, workdir, on_network)

    cell2 = Cell("nhttpd", "linux", {"name": "other"})
    res.write_record(cell2, 1, {"status": "ok", "phases": {},
                                "info": {"image": {"elf_sha256": {"kernel/nom.elf": "k1"}}}})
    assert booted_elfs(res) == {"kernel/nom.elf": "k1"}
    d = RebuiltDriver(port)
    with pytest.raises(BuildChanged):
        run_pass([(1, CELL), (2, CELL)], plan.passes()[0], plan, {"linux": d}, res, progress)
    rec = res.read_record(CELL, 1)
    assert rec["status"] == "failed" and rec["redo"] and "kernel/nom.elf" in rec["reason"]
    assert res.read_record(CELL, 2) is None and d.stopped == 1  # the session stopped there
    # with --mixed-builds the same boot runs
    assert run_pass([(1, CELL)], plan.passes()[0], plan, {"linux": RebuiltDriver(port)}, res,
                    progress, mixed_builds=True) is None
    assert res.read_record(CELL, 1)["status"] == "ok"


class BusyDriver(TimedDriver):
    """Finds the host busy at the first `busy` calibrations of CELL's runs (labdriver.HostBusy),
    never at other cells'."""

    def __init__(self, port, busy):
        super().__init__(port, "off", None)
        self.busy, self.starts, self.cell_starts = busy, 0, 0

    def start(self, app, variant, workdir, on_network=None):
        from experiment.driver import HostBusy
        self.starts += 1
        if variant == CELL.variant:
            self.cell_starts += 1
        if variant == CELL.variant and self.cell_starts <= self.busy:
            raise HostBusy("host busy while D was calibrated (the tcg mix took +50%)")
        return super().start(app, variant, workdir, on_network)


@pytest.mark.parametrize("busy, status, sleeps", [(0, "ok", 0), (2, "ok", 2),
                                                  (99, "failed", None)])
def test_runs_that_found_the_host_busy_are_tried_again_later(setup, monkeypatch, busy,
                                                             status, sleeps):
    from experiment import runner
    plan, res, progress, port = setup
    slept = []
    monkeypatch.setattr(runner, "_sleep", slept.append)
    d = BusyDriver(port, busy)
    other = Cell("nhttpd", "linux", {"name": "other"})
    runner.run_pass([(1, CELL), (1, other)], plan.passes()[0], plan, {"linux": d}, res,
                    progress)
    sleeps = runner.BUSY_ROUNDS if sleeps is None else sleeps
    assert slept == [runner.BUSY_WAIT_S] * sleeps
    assert d.starts == 2 + sleeps  # the other cell ran once, at its turn
    rec = res.read_record(CELL, 1)
    assert rec["status"] == status and runner.found_host_busy(rec) == (status != "ok")
    assert res.read_record(other, 1)["status"] == "ok"
    assert progress.total == 1 + sleeps  # the fixture's one cell, and each try again


def test_a_busy_run_is_not_tried_again_past_stop_after(setup, monkeypatch):
    import time
    from experiment import runner
    plan, res, progress, port = setup
    slept = []
    monkeypatch.setattr(runner, "_sleep", slept.append)
    with pytest.raises(runner.StopAfter):
        runner.run_pass([(1, CELL)], plan.passes()[0], plan, {"linux": BusyDriver(port, 99)},
                        res, progress, deadline=time.monotonic() + runner.BUSY_WAIT_S)
    assert slept == [] and runner.found_host_busy(res.read_record(CELL, 1))
