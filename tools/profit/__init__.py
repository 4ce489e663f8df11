"""Profit of an application: the utility functions of paper eq. 2-4, their integral over a run."""
from .run import Measurement, priced_pieces, run_profit
from .utility import (DEFAULT_PARAMS, KINDS, UtilityParams, gbps_of_ops,
                      slo_violation_probability, utility, utility_bonus, utility_penalty,
                      utility_refund)

__all__ = ["Measurement", "priced_pieces", "run_profit", "DEFAULT_PARAMS", "KINDS",
           "UtilityParams", "gbps_of_ops", "slo_violation_probability", "utility",
           "utility_bonus", "utility_penalty", "utility_refund"]
