"""Profit of a run: the integral over time of U(T(t), L(t), sigma(t), P(t)) (paper section 6.4).

A run is measured as consecutive intervals, each with its own throughput, latency and jitter
(an experiment phase, or a one-second sample of one); the price comes from the provider's
schedule, so an interval that spans a price change is split at the change. Between interval
boundaries every figure is taken as constant, so the integral is a sum of U x duration, in $.
"""
from dataclasses import dataclass

from .utility import DEFAULT_PARAMS, utility


@dataclass(frozen=True)
class Measurement:
    """What a guest did from start_s to end_s (seconds since the run started)."""
    start_s: float
    end_s: float
    t_gbps: float
    latency_us: float
    jitter_us: float


def priced_pieces(measurements, schedule):
    """Splits measurements at the schedule's price changes: [(measurement piece, price)].
    schedule: an object with change_times() and price_at(t_s) (priceprovider.Schedule)."""
    pieces = []
    for m in measurements:
        if m.end_s < m.start_s:
            raise ValueError(f"interval ends before it starts: {m}")
        cuts = [t for t in schedule.change_times() if m.start_s < t < m.end_s]
        bounds = [m.start_s] + cuts + [m.end_s]
        for a, b in zip(bounds, bounds[1:]):
            piece = Measurement(a, b, m.t_gbps, m.latency_us, m.jitter_us)
            pieces.append((piece, schedule.price_at(a)))
    return pieces


def run_profit(measurements, schedule, kind, params=DEFAULT_PARAMS):
    """Profit in $ of a run under utility function kind ('penalty', 'refund', 'bonus')."""
    return sum(utility(kind, m.t_gbps, m.latency_us, m.jitter_us, price, params)
               * (m.end_s - m.start_s)
               for m, price in priced_pieces(measurements, schedule))
