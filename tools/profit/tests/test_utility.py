"""Hand-computed cases of the utility functions (paper eq. 2-4) under the default units."""
import math

import pytest

from profit import (UtilityParams, gbps_of_ops, slo_violation_probability, utility,
                    utility_bonus, utility_penalty, utility_refund)

pytestmark = pytest.mark.unit


def test_penalty_without_slo_violation_is_throughput_times_margin():
    # sigma = 0 and L < L0: N = 0, U = T (alpha - P) = 2 (20 - 1)
    assert utility_penalty(2.0, 100.0, 0.0, 1.0) == pytest.approx(38.0)


def test_penalty_with_small_violation_probability():
    # L0 - L = 150 = 3 sigma: N = 0.5 erfc(3 / sqrt 2) = 0.0013498980; X N = 0.1349898
    # U = 2 (20 (1 - 0.1349898) - 1) = 2 (17.300204 - 1) = 32.600408
    assert slo_violation_probability(750, 600, 50) == pytest.approx(0.0013498980, rel=1e-7)
    assert utility_penalty(2.0, 600.0, 50.0, 1.0) == pytest.approx(32.600408, rel=1e-6)


def test_penalty_saturates_to_minus_price_when_latency_at_slo():
    # L = L0: N = 0.5, X N = 50 > 1, U = T (0 - P) = -3 * 10
    assert utility_penalty(3.0, 750.0, 20.0, 10.0) == pytest.approx(-30.0)


def test_penalty_constant_latency_above_slo_is_certain_violation():
    assert slo_violation_probability(750, 751, 0) == 1.0
    assert utility_penalty(1.0, 800.0, 0.0, 1.0) == pytest.approx(-1.0)


def test_refund_grows_with_latency_in_milliseconds():
    # beta L = 10 * 0.4 ms = 4: U = 2 (16 - 1) = 30
    assert utility_refund(2.0, 400.0, 1.0) == pytest.approx(30.0)


def test_refund_is_capped_at_the_whole_payment():
    # beta L = 25 > alpha: max(0, -5) = 0, U = 2 (0 - 10) = -20
    assert utility_refund(2.0, 2500.0, 10.0) == pytest.approx(-20.0)


def test_bonus_is_gamma_over_latency_in_seconds():
    # gamma / L = 0.01 / 0.0005 s = 20: U = 1 (20 + 20 - 10) = 30
    assert utility_bonus(1.0, 500.0, 10.0) == pytest.approx(30.0)


def test_bonus_is_capped_by_delta():
    assert utility_bonus(1.0, 500.0, 10.0, UtilityParams(delta=5.0)) == pytest.approx(15.0)


def test_bonus_rejects_zero_latency():
    with pytest.raises(ValueError):
        utility_bonus(1.0, 0.0, 1.0)


def test_units_are_configurable():
    # L in microseconds for beta: 10 * 400 >> alpha, so the refund is total.
    p = UtilityParams(refund_unit_us=1.0)
    assert utility_refund(1.0, 400.0, 1.0, p) == pytest.approx(-1.0)


def test_zero_throughput_earns_and_costs_nothing():
    for kind in ("penalty", "refund", "bonus"):
        assert utility(kind, 0.0, 300.0, 10.0, 10.0) == 0.0


def test_unknown_kind_and_negative_inputs_are_errors():
    with pytest.raises(ValueError):
        utility("linear", 1.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        utility_penalty(-1.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        utility_penalty(1.0, 1.0, -1.0, 1.0)
    with pytest.raises(ValueError):
        utility_refund(1.0, math.nan, 1.0)


def test_ops_convert_to_gbit_per_second():
    # 100,000 GET/s of 1,250 bytes each = 1.25e8 B/s = 1 Gbit/s
    assert gbps_of_ops(100_000, 1250) == pytest.approx(1.0)


def test_utility_axiom_monotonicity():
    # Paper section 4: at a profitable operating point U weakly increases with T and weakly
    # decreases as price, latency and jitter increase.
    for kind in ("penalty", "refund", "bonus"):
        base = utility(kind, 1.0, 600.0, 40.0, 1.0)
        assert base > 0
        assert utility(kind, 2.0, 600.0, 40.0, 1.0) >= base
        assert utility(kind, 1.0, 600.0, 40.0, 2.0) <= base
        assert utility(kind, 1.0, 620.0, 40.0, 1.0) <= base
        assert utility(kind, 1.0, 600.0, 60.0, 1.0) <= base
