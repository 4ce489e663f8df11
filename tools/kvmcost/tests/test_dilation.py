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


REF = {"native_ticks": 1000, "tcg_ticks": 5000}


@pytest.mark.unit
def test_only_a_side_slower_than_its_tolerance_counts_as_a_busy_host():
    assert dilation.slower_than({"native_ticks": 1010, "tcg_ticks": 4800}, REF) is None
    assert dilation.slower_than({"native_ticks": 900, "tcg_ticks": 5150}, REF) is None
    why = dilation.slower_than({"native_ticks": 1000, "tcg_ticks": 8600}, REF)
    assert "tcg mix took +72%" in why and "native" not in why
    assert "native mix took +21%" in dilation.slower_than(
        {"native_ticks": 1208, "tcg_ticks": 5000}, REF)


@pytest.mark.unit
def test_a_boot_runs_at_the_mixes_ratio_and_never_faster_than_the_host():
    assert dilation.boot_d(REF) == 5.0
    assert dilation.boot_d({"native_ticks": 1000, "tcg_ticks": 800}) == 1.0


def fake_mixes(monkeypatch, native, tcg):
    """calibrate() on fixed sequences of fastest ticks, without building or booting."""
    native, tcg, sleeps = list(native), list(tcg), []
    line = {"rounds": 2, "reps": 7, "check": 9}
    monkeypatch.setattr(dilation, "build", lambda: None)
    monkeypatch.setattr(dilation, "run_native", lambda: dict(line, min_ticks=native.pop(0)))
    monkeypatch.setattr(dilation, "run_guest", lambda qemu: dict(line, min_ticks=tcg.pop(0)))
    return sleeps


@pytest.mark.unit
def test_a_disturbed_calibration_is_taken_again_and_each_side_keeps_its_fastest(monkeypatch):
    sleeps = fake_mixes(monkeypatch, [1000, 1300], [8000, 5100])
    d = dilation.calibrate(reference=REF, sleep=sleeps.append)
    assert (d["native_ticks"], d["tcg_ticks"], d["d_mix"]) == (1000, 5100, 5.1)
    assert len(d["attempts"]) == 2 and d["disturbed"] is None
    assert sleeps == [dilation.RETRY_PAUSE_S]


@pytest.mark.unit
def test_a_host_busy_through_every_attempt_is_reported(monkeypatch):
    sleeps = fake_mixes(monkeypatch, [1000] * 3, [8000, 7000, 9000])
    d = dilation.calibrate(reference=REF, sleep=sleeps.append)
    assert d["tcg_ticks"] == 7000 and len(d["attempts"]) == dilation.ATTEMPTS
    assert "tcg mix took +40%" in d["disturbed"]


@pytest.mark.unit
def test_without_a_reference_one_calibration_is_taken_as_it_is(monkeypatch):
    fake_mixes(monkeypatch, [1000], [8000])
    d = dilation.calibrate()
    assert d["d_mix"] == 8.0 and "disturbed" not in d
