"""The utility functions of paper section 4 (eq. 2-4): penalty, refund and bonus.

Units (the one place they are fixed; every caller and the C port in libnom follow them):

- T, throughput: Gbit/s of the guest's outbound traffic, what the provider meters and bills.
  An application that counts operations converts with `gbps_of_ops` (operations/s x bytes sent
  per operation x 8 / 1e9); the experiment measures bytes sent on the guest's tap device.
- P, price, and alpha: $/Gbit. U = T x ($/Gbit) is therefore a profit rate in $/s, and the profit
  of a run, the integral of U over time (profit.run), is in $.
- L0, L (mean latency) and sigma (jitter, the standard deviation of latency): microseconds in every
  argument. The penalty term only uses their ratio, so it has no unit of its own.
- beta (refund) is in $/Gbit per `refund_unit_us` of mean latency, default 1000 us (1 ms):
  beta = 10 refunds 10 $/Gbit per millisecond, the whole payment (alpha = 20) at 2 ms.
- gamma (bonus) is in $/Gbit x `bonus_unit_us`, default 1e6 us (1 s): gamma = 0.01 pays
  0.01 / L[s] $/Gbit, 13.3 $/Gbit at the 750 us SLO, 100 $/Gbit at 100 us; delta caps it.
  The paper gives beta and gamma the units "$ s/Gbit" and "$/(Gbit s)": read literally they do
  not make either term a $/Gbit, and in microseconds the refund is always 100% and the bonus is
  nil. The units above are the ones under which both terms are of the order of alpha at the
  latencies of paper table 1, so that latency moves profit, which is the point of section 6.5.
  Both units are parameters.

Each function is a few lines of arithmetic on doubles with erfc() as the only library call, so
that the C version is a line-by-line port. Invalid arguments raise ValueError (C: return -EINVAL).
"""
import math
from dataclasses import dataclass

KINDS = ("penalty", "refund", "bonus")


@dataclass(frozen=True)
class UtilityParams:
    """Application-specific parameters; defaults are the paper's (section 6.4, DESIGN.md)."""
    alpha: float = 20.0            # $/Gbit: the owner's value of useful bandwidth
    beta: float = 10.0             # $/Gbit per refund_unit_us of mean latency
    gamma: float = 0.01            # $/Gbit x bonus_unit_us
    delta: float = math.inf        # $/Gbit: cap of the bonus
    x: float = 100.0               # penalty factor (GoGrid's 10,000% credit)
    l0_us: float = 750.0           # latency SLO
    refund_unit_us: float = 1000.0
    bonus_unit_us: float = 1e6


DEFAULT_PARAMS = UtilityParams()


def gbps_of_ops(ops_per_s, bytes_per_op):
    """Throughput in Gbit/s of ops_per_s operations each sending bytes_per_op bytes."""
    if ops_per_s < 0 or bytes_per_op < 0:
        raise ValueError("negative throughput")
    return ops_per_s * bytes_per_op * 8.0 / 1e9


def slo_violation_probability(l0_us, mean_us, sigma_us):
    """N(L0, L, sigma) of eq. 2: P(a normal sample of mean L and deviation sigma exceeds L0).
    sigma = 0 is a constant latency: 1 if L > L0 else 0."""
    if sigma_us < 0:
        raise ValueError("negative jitter")
    if sigma_us == 0:
        return 1.0 if mean_us > l0_us else 0.0
    return 0.5 * math.erfc((l0_us - mean_us) / (sigma_us * math.sqrt(2.0)))


def utility_penalty(t_gbps, latency_us, jitter_us, price, p=DEFAULT_PARAMS):
    """Eq. 2: U = T (alpha (1 - min(1, X N(L0, L, sigma))) - P), in $/s."""
    _check(t_gbps, latency_us)
    n = slo_violation_probability(p.l0_us, latency_us, jitter_us)
    return t_gbps * (p.alpha * (1.0 - min(1.0, p.x * n)) - price)


def utility_refund(t_gbps, latency_us, price, p=DEFAULT_PARAMS):
    """Eq. 3: U = T (max(0, alpha - beta L) - P), L in refund_unit_us; in $/s."""
    _check(t_gbps, latency_us)
    return t_gbps * (max(0.0, p.alpha - p.beta * latency_us / p.refund_unit_us) - price)


def utility_bonus(t_gbps, latency_us, price, p=DEFAULT_PARAMS):
    """Eq. 4: U = T (alpha + min(gamma / L, delta) - P), L in bonus_unit_us; in $/s.
    L must be > 0 (the bonus of a zero latency is delta, unbounded by default)."""
    _check(t_gbps, latency_us)
    if latency_us <= 0:
        raise ValueError("bonus needs a positive latency")
    return t_gbps * (p.alpha + min(p.gamma * p.bonus_unit_us / latency_us, p.delta) - price)


def utility(kind, t_gbps, latency_us, jitter_us, price, p=DEFAULT_PARAMS):
    """The utility function named kind (one of KINDS) at one operating point, in $/s."""
    if kind == "penalty":
        return utility_penalty(t_gbps, latency_us, jitter_us, price, p)
    if kind == "refund":
        return utility_refund(t_gbps, latency_us, price, p)
    if kind == "bonus":
        return utility_bonus(t_gbps, latency_us, price, p)
    raise ValueError(f"unknown utility function {kind!r}")


def _check(t_gbps, latency_us):
    if t_gbps < 0 or latency_us < 0 or math.isnan(t_gbps) or math.isnan(latency_us):
        raise ValueError("throughput and latency must be >= 0")
