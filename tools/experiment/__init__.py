"""The paper's section-6 experiment: runner, guest driver protocol, analysis and report."""
