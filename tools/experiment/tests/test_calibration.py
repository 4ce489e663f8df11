"""The experiment's reference calibration of D (calibration.py): a per-side median of the runs'
own calibrations, never from too few, and which ok runs were calibrated on a busy host."""
import pytest

from experiment import calibration

pytestmark = pytest.mark.unit


def record(tcg, native=1000, status="ok"):
    cal = {"native_ticks": native, "tcg_ticks": tcg} if tcg else None
    return {"status": status, "info": {"kvmcost": {"calibration": cal}} if cal else {}}


def test_the_reference_is_each_sides_median_and_needs_enough_runs():
    cals = [calibration.of_record(record(t, n)) for t, n in
            ((5000, 1000), (33000, 1002), (4900, 1300), (None, 0))]
    assert calibration.reference(cals) == {"native_ticks": 1002, "tcg_ticks": 5000}
    assert calibration.reference(cals[:2]) is None


def test_only_ok_runs_slower_than_the_reference_are_disturbed():
    ref = {"native_ticks": 1000, "tcg_ticks": 5000}
    runs = [record(5100), record(8000), record(8000, status="failed"), record(None),
            record(5000, native=1100)]
    found = calibration.disturbed(runs, ref)
    assert [r for r, _ in found] == [runs[1], runs[4]]
    assert "tcg mix took +60%" in found[0][1] and "native mix took +10%" in found[1][1]


def test_a_pass_keeps_its_reference_and_every_run_runs_at_its_d(tmp_path, monkeypatch):
    """The reference is measured once, kept in the pass's folder and read back by a resumed
    session; a run given it runs at its D whatever its own calibration measured (which only
    checks the host)."""
    import kvmcost
    from experiment.results import Results
    from kvmcost import dilation
    measured = []

    def measure(name):
        measured.append(name)
        return {"native_ticks": 1000.0, "tcg_ticks": 6000.0}
    monkeypatch.setattr(calibration, "measure_reference", measure)
    res = Results(str(tmp_path / "pass"))
    ref = calibration.pass_reference(res, "skylake")
    assert ref == {"native_ticks": 1000.0, "tcg_ticks": 6000.0} and measured == ["skylake"]
    assert calibration.pass_reference(res, "skylake") == ref and measured == ["skylake"]
    assert calibration.stored_reference(res.path) == ref
    # a run calibrated at D = 9 (a fast native mix) runs at the reference's 6
    monkeypatch.setattr(kvmcost, "qemu_binary", lambda: "qemu")
    monkeypatch.setattr(dilation, "calibrate", lambda qemu, reference=None: {
        "d_mix": 9.0, "native_ticks": 700, "tcg_ticks": 6300, "disturbed": None})
    assert kvmcost.model("skylake", reference=ref)["dilation"] == 6.0
    assert kvmcost.model("skylake")["dilation"] == 9.0  # no reference: its own, as before


def test_a_measured_reference_is_each_sides_fastest():
    # each side fast or slow independently (a disturbance only adds time): the reference is
    # the uncontended speed of each, not a median that mixes a fast side with a slow one
    cals = iter([(2960, 35700), (5500, 18600), (3000, 36000), (2950, 19000), (5400, 35000)])

    def model(name):
        n, t = next(cals)
        return {"calibration": {"native_ticks": n, "tcg_ticks": t}}
    ref = calibration.measure_reference("skylake", model=model)
    assert ref == {"native_ticks": 2950, "tcg_ticks": 18600}
