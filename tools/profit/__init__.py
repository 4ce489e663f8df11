"""Profit of an application: the paper's utility functions (eq. 2-4) and their integral over a run."""
from .run import Measurement, priced_pieces, run_profit
from .utility import (DEFAULT_PARAMS, KINDS, UtilityParams, gbps_of_ops,
                      slo_violation_probability, utility, utility_bonus, utility_penalty,
                      utility_refund)

__all__ = ["Measurement", "priced_pieces", "run_profit", "DEFAULT_PARAMS", "KINDS",
           "UtilityParams", "gbps_of_ops", "slo_violation_probability", "utility",
           "utility_bonus", "utility_penalty", "utility_refund"]
