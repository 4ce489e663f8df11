"""tools/bench/holds.py: its reading of the driver's lateness histograms, and its flags (a fixed D
and the CPU-time clock need the cost model). The measurement itself boots nom under load and is
a benchmark, run by hand (results/holds-*)."""
import pytest

from bench.holds import main, percentile_bound, share_at_least

BOUNDS = [1, 2, 5, 10]  # buckets: < 1, < 2, < 5, < 10, >= 10 us late


@pytest.mark.unit
def test_percentiles_are_the_bounds_of_the_buckets_holding_them():
    counts = [90, 5, 3, 1, 1]
    assert percentile_bound(counts, BOUNDS, 0.5) == 1
    assert percentile_bound(counts, BOUNDS, 0.95) == 2
    assert percentile_bound(counts, BOUNDS, 0.99) == 10
    assert percentile_bound(counts, BOUNDS, 1.0) == float("inf")  # the open last bucket
    assert percentile_bound([0] * 5, BOUNDS, 0.99) is None


@pytest.mark.unit
def test_share_held_w_plus_5_counts_buckets_from_5_us_late():
    assert share_at_least([90, 5, 3, 1, 1], BOUNDS, 5) == pytest.approx(0.02)
    assert share_at_least([0] * 5, BOUNDS, 5) is None


@pytest.mark.unit
@pytest.mark.parametrize("argv, message", [
    (["--dilation", "5"], "--dilation needs --kvmcost"),
    (["--kvmcost", "skylake", "--dilation", "0.5"], "--dilation needs --kvmcost"),
    (["--w", "10", "--dilation", "5", "--kvmcost", "off"], "--dilation needs --kvmcost"),
    (["--guest-clock", "cpu"], "--guest-clock cpu needs --kvmcost"),
    (["--kvmcost", "off", "--guest-clock", "cpu"], "--guest-clock cpu needs --kvmcost"),
    (["--guest-clock", "insn"], "--guest-clock insn needs --kvmcost")])
def test_a_fixed_d_or_the_cpu_clock_needs_the_cost_model(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.unit
def test_the_model_carries_the_guest_clock_to_qemu_s_option(monkeypatch):
    import kvmcost
    monkeypatch.setattr(kvmcost, "qemu_binary", lambda: "/nonexistent/qemu")  # no QEMU started
    setting = kvmcost.model("skylake", dilation=5, clock="cpu")
    assert setting["clock"] == "cpu" and setting["dilation"] == 5.0
    assert "insn_ps" not in setting
    setting = kvmcost.model("zero", dilation=5, clock="insn")
    assert setting["clock"] == "insn" and setting["insn_ps"] == kvmcost.insn_ps() > 0
    with pytest.raises(KeyError):
        kvmcost.model("skylake", dilation=5, clock="fast")


class _Driver:
    VCPUS = 1

    def __init__(self, pin_vcpu):
        self.pin_vcpu = pin_vcpu


@pytest.mark.unit
def test_host_noise_is_probed_on_the_vcpu_s_cpu_only_when_it_has_one(monkeypatch):
    from bench import holds
    from nomvm import placement
    probed = []
    monkeypatch.setattr(holds.hostnoise, "probe",
                        lambda cpu, seconds, clock: probed.append((cpu, clock)) or {"cpu": cpu})
    assert holds.host_noise(_Driver(pin_vcpu=False), "cpu") is None
    where = placement.plan(1)
    if where is None:  # a 1-CPU host: nothing to pin, nothing to probe
        assert holds.host_noise(_Driver(pin_vcpu=True), "cpu") is None
        return
    assert holds.host_noise(_Driver(pin_vcpu=True), "cpu") == {"cpu": where["vcpu_cpus"][0]}
    assert probed == [(where["vcpu_cpus"][0], "cpu")]
    # The instruction clock skips the host's stalls while the guest runs: nothing to predict.
    assert holds.host_noise(_Driver(pin_vcpu=True), "insn") is None
    assert len(probed) == 1
