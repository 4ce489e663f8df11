"""Does the dilation calibration (dilation.py) run the same mix natively and under TCG, and
compute D from what it read? No figure of the machine's speed is asserted."""
import pytest

from kvmcost import dilation


@pytest.mark.boot
def test_native_and_guest_mixes_compute_the_same_result():
    d = dilation.calibrate()
    assert d["check"] != 0
    assert d["d_mix"] == d["tcg_ticks"] / d["native_ticks"]
    assert d["native_ticks"] > 0 and d["tcg_ticks"] > 0


@pytest.mark.unit
def test_report_line_is_parsed_and_a_nondeterministic_mix_refused():
    assert dilation.parse_line("x\ncalib rounds=2 reps=7 min_ticks=40 check=9\n") == {
        "rounds": 2, "reps": 7, "min_ticks": 40, "check": 9}
    with pytest.raises(dilation.CalibrationError, match="disagree"):
        dilation.parse_line("calib rounds=2 reps=7 min_ticks=40 check=0")
    with pytest.raises(dilation.CalibrationError, match="no calibration line"):
        dilation.parse_line("SeaBIOS")


@pytest.mark.unit
def test_instruction_estimate_is_native_rate_over_tcg_rate():
    # 2e9 instructions/s natively (2 GHz, CPI 1) over 1e8 under TCG: D = 20.
    assert dilation.from_instructions(5e7, 0.5, 2e9) == pytest.approx(20.0)
    assert dilation.from_instructions(5e7, 0.5, 2e9, cpi=2.0) == pytest.approx(10.0)
    assert dilation.from_instructions(0, 0.5, 2e9) is None
    assert dilation.from_instructions(5e7, 0.5, None) is None


@pytest.mark.unit
def test_host_clock_is_read_from_cpuinfo(tmp_path):
    p = tmp_path / "cpuinfo"
    p.write_text("processor\t: 0\ncpu MHz\t\t: 2596.142\n")
    assert dilation.host_clock_hz(str(p)) == pytest.approx(2596.142e6)
    p.write_text("processor\t: 0\n")
    assert dilation.host_clock_hz(str(p)) is None
