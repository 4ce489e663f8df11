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
