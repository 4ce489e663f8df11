"""Does the exit-cost model's setting reach the guest's W and the analysis as documented
(tools/kvmcost/README.md, "Time dilation D")? No QEMU is started."""
import pytest

from experiment import analysis, kvmmodel
from experiment.labdriver import LabDriver

pytestmark = pytest.mark.unit


def test_w_is_given_to_the_guest_as_it_is_since_its_clock_is_dilated():
    d = LabDriver("tcg")
    assert d.guest_us(10) == 10
    d.kvmcost = {"dilation": 5.4}
    assert d.guest_us(10) == 10 and d.guest_us(0) == 0


def test_kvm_equivalent_figures_are_the_documented_model():
    assert kvmmodel.dilated(1000.0, 500.0, 5.0) == {"ops_s": 5000.0, "latency_us": 100.0}
    assert kvmmodel.dilated(1000.0, 500.0, None) == {"ops_s": None, "latency_us": None}
    # 1,900 instructions at CPI 1 and 1.9 GHz is 1 us, plus 2,500 ns of charged exits.
    assert kvmmodel.project_ledger_us(1900, 2500) == pytest.approx(3.5)


def test_phase_figures_carry_d_and_the_modelled_figures():
    fig = {"seconds": 2.0, "ops": 2000, "bytes_out": 0, "latency_us": {"mean": 400.0},
           "counters": {"insns_per_req": 1900, "exit_ns_per_req": 2500, "d_insn": 20.0,
                        "exit_equiv_per_req": 3.0},
           "kvmcost": {"name": "skylake", "dilation": 4.0}}
    out = analysis.phase_figures(fig)
    assert out["dilation"] == 4.0 and out["d_insn"] == 20.0
    assert out["ops_s_kvm"] == 4000.0 and out["latency_kvm_us"] == 100.0
    assert out["projected_us_per_req"] == pytest.approx(3.5)
    # 4,000 requests per second of the hardware's time: 250 us each, 2.5 of them in exits.
    assert out["exit_share"] == pytest.approx(0.01)
    plain = analysis.phase_figures(dict(fig, kvmcost=None))
    assert plain["dilation"] is None and plain["ops_s_kvm"] is None
    assert plain["exit_share"] is None


def test_on_the_instruction_clock_a_phase_is_valued_at_its_window_s_measured_dilation():
    """No D set beforehand describes a window on the instruction clock (the guest's time is its
    instructions): the figures take the window's wall over guest time (d_window), never the
    pass's D; on the dilated clock the pass's D still rules."""
    fig = {"seconds": 2.0, "ops": 2000, "bytes_out": 0, "latency_us": {"mean": 400.0},
           "counters": {}, "kvmcost": {"name": "skylake", "dilation": 4.0, "clock": "insn",
                                       "d_window": 8.0}}
    out = analysis.phase_figures(fig, value_d=5.0)
    assert out["ops_s_kvm"] == 8000.0 and out["latency_kvm_us"] == 50.0
    assert out["dilation"] == 4.0 and out["d_window"] == 8.0
    assert kvmmodel.valuation_d(dict(fig["kvmcost"], clock="dilated"), 5.0) == 5.0
    assert kvmmodel.valuation_d(dict(fig["kvmcost"], clock="dilated")) == 4.0
    # A ledger without the guest's clock (before patches/0011) cannot value such a phase.
    assert kvmmodel.valuation_d(dict(fig["kvmcost"], d_window=None), 5.0) is None
    assert kvmmodel.valuation_d(None, 5.0) is None
