"""Load generation for the comparison (paper section 6): our client nomload (C, per-request
latency), the stock tools (memaslap, wrk, NPtcp) and parsers of their outputs.

API (all run inside a netlab.NetLab):
    loadgen.build()                                   # make -C tools/loadgen
    loadgen.run_phase(app, phase, seconds, lab, workdir, host=None, preload=True,
                      client="nomload" | "paper") -> figures (phase.py: which tool for what)
    loadgen.preload_memcached(lab, workdir)           # once, before the counters' snapshots
    loadgen.nomload / memaslap / wrk / nptcp_bidir / nptcp_pingpong[_for](lab, ...)
    loadgen.parse_wrk / parse_memaslap / parse_nptcp_stdout / parse_nptcp_out / parse_nomload
    loadgen.apps: ports, the page, NPtcp receiver options every guest must use.
"""
from . import apps
from .parsers import (ParseError, parse_memaslap, parse_nomload, parse_nptcp_out,
                      parse_nptcp_stdout, parse_wrk)
from .phase import APPS, CLIENTS, WEB_APPS, preload_memcached, run_phase
from .runners import (LoadError, MANY_CONNS, NOMLOAD, NPTCP, build, memaslap, memaslap_config,
                      nomload, nptcp_pingpong, nptcp_pingpong_for, nptcp_bidir, wrk)

__all__ = ["apps", "ParseError", "parse_memaslap", "parse_nomload", "parse_nptcp_out",
           "parse_nptcp_stdout", "parse_wrk", "APPS", "CLIENTS", "WEB_APPS", "preload_memcached",
           "run_phase", "LoadError", "MANY_CONNS", "NOMLOAD", "NPTCP", "build", "memaslap",
           "memaslap_config", "nomload", "nptcp_pingpong", "nptcp_pingpong_for", "nptcp_bidir",
           "wrk"]
